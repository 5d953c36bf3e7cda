//! Many connections over a shared bottleneck: policies competing, queue
//! disciplines, fairness, and per-flow integrity.

use tinygram_sim::flows::{self, FlowSim};
use tinygram_sim::metrics::{FlowsResult, RunEnd};
use tinygram_sim::scenario::Scenario;

fn sc(toml: &str) -> Scenario {
    Scenario::from_str(toml, "<test>", &[]).unwrap_or_else(|e| panic!("{e}"))
}

fn run(toml: &str) -> FlowsResult {
    let s = sc(toml);
    assert!(s.topology.is_some(), "a many-flow scenario");
    flows::run(&s)
}

fn group<'a>(r: &'a FlowsResult, name: &str) -> &'a tinygram_sim::metrics::GroupResult {
    r.groups.iter().find(|g| g.name == name).expect("group")
}

const RR: &str = r#"
duration = "20s"
[bottleneck]
rate = "100Mbps"
delay = "5ms"
[[flows]]
name = "web"
count = 40
client_hosts = ["c1", "c2"]
server_host = "web"
spread = "uniform"
interval = "1ms"
workload = { request = [200], response = [3000], requests = 20 }
"#;

#[test]
fn many_request_response_flows_finish_with_integrity_and_are_reproducible() {
    let r = run(RR);
    assert_eq!(r.ended, RunEnd::Finished, "{:?}", r.integrity_error);
    assert!(r.integrity_ok, "{:?}", r.integrity_error);
    assert_eq!((r.flow_count, r.flows_done), (40, 40));
    assert_eq!(r.transactions, 40 * 20);
    let flows = r.flows.as_ref().expect("40 flows are listed");
    assert!(flows.iter().all(|f| f.transactions == 20 && f.integrity_ok));
    // Flows opened 1 ms apart, alternating client hosts, one server port.
    assert_eq!(flows[0].client, "c1:1024");
    assert_eq!(flows[1].client, "c2:1024");
    assert_eq!(flows[2].client, "c1:1025");
    assert!(flows.iter().all(|f| f.server == "web:7"));
    assert!((flows[39].start_s - 0.039).abs() < 1e-9);
    // A transaction crosses the 5 ms bottleneck twice: at least 10 ms.
    assert!(r.completion_ms.p50 >= 10.0, "{:?}", r.completion_ms);
    assert!(r.completion_ms.p999 >= r.completion_ms.p99);
    let again = run(RR);
    assert_eq!(
        serde_json::to_string(&r).unwrap(),
        serde_json::to_string(&again).unwrap()
    );
    let other_seed =
        flows::run(&Scenario::from_str(RR, "<test>", &["seed=2".to_string()]).unwrap());
    assert_eq!(other_seed.transactions, r.transactions);
}

#[test]
fn exponential_arrivals_follow_the_seed() {
    let text = RR.replace("\"uniform\"", "\"exponential\"");
    let a = run(&text);
    let starts = |r: &FlowsResult| -> Vec<f64> {
        r.flows
            .as_ref()
            .unwrap()
            .iter()
            .map(|f| f.start_s)
            .collect()
    };
    let s = starts(&a);
    assert!(s.windows(2).all(|w| w[0] <= w[1]));
    let gaps: Vec<f64> = s.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(
        gaps.iter().any(|&g| g < 0.0005) && gaps.iter().any(|&g| g > 0.0015),
        "{gaps:?}"
    );
    let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
    assert!((0.0005..0.002).contains(&mean), "mean gap {mean}");
    assert_eq!(s, starts(&run(&text)));
    let b = flows::run(&Scenario::from_str(&text, "<t>", &["seed=9".to_string()]).unwrap());
    assert_ne!(s, starts(&b));
}

/// Cheshire's write-write-read stall, many times over one bottleneck: Nagle
/// flows hold each request's runt until the delayed ACK (200 ms); Doupnik
/// flows sharing the same link and server do not (Doupnik, A new TCP
/// transmission policy, 2.1).
#[test]
fn nagle_and_doupnik_flows_share_a_bottleneck() {
    let r = run(r#"
duration = "30s"
[bottleneck]
rate = "1Gbps"
delay = "1ms"
queue = "2MB"
[client]
mss = 1448
[server]
mss = 1448
delack = "200ms"
[workload]
request = [100000]
response = [1]
requests = 5
[[flows]]
name = "nagle"
count = 10
client.send_policy = "nagle"
[[flows]]
name = "doupnik"
count = 10
client.send_policy = "doupnik"
"#);
    assert!(r.integrity_ok && r.finished, "{:?}", r.integrity_error);
    let (n, d) = (group(&r, "nagle"), group(&r, "doupnik"));
    assert_eq!((n.transactions, d.transactions), (50, 50));
    assert!(
        n.completion_ms.p50 >= 200.0,
        "nagle p50 {:?}",
        n.completion_ms
    );
    assert!(
        d.completion_ms.p50 < 50.0,
        "doupnik p50 {:?}",
        d.completion_ms
    );
    assert!(n.policy_holds > 0);
}

/// Four bulk senders into a 10 Mbps bottleneck with a 1 MB buffer: drop-tail
/// lets a standing queue of hundreds of milliseconds build; CoDel keeps the
/// queueing delay near its 5 ms target (RFC 8289 4).
#[test]
fn codel_keeps_the_standing_queue_near_target_where_drop_tail_does_not() {
    let base = |qdisc: &str| {
        format!(
            r#"
duration = "20s"
[bottleneck]
rate = "10Mbps"
delay = "10ms"
queue = "1MB"
qdisc = "{qdisc}"
[client]
options = ["wscale", "sack"]
rcv_buf = "4MiB"
snd_buf = "4MiB"
[server]
options = ["wscale", "sack"]
rcv_buf = "4MiB"
snd_buf = "4MiB"
[[flows]]
count = 4
workload = {{ type = "bulk", bytes = "4MB" }}
"#
        )
    };
    let fifo = run(&base("drop-tail"));
    let codel = run(&base("codel"));
    for r in [&fifo, &codel] {
        assert!(r.integrity_ok, "{:?}", r.integrity_error);
        assert_eq!(r.flows_done, 4);
    }
    let (qf, qc) = (&fifo.queues[0], &codel.queues[0]);
    assert_eq!((qf.qdisc, qc.qdisc), ("drop-tail", "codel"));
    assert!(
        qf.sojourn_ms.p50 > 100.0,
        "drop-tail median delay {:?}",
        qf.sojourn_ms
    );
    assert!(
        qc.sojourn_ms.p50 < 20.0,
        "codel median delay {:?}",
        qc.sojourn_ms
    );
    assert!(qc.dropped_aqm > 0 && qf.dropped_aqm == 0);
}

/// One bulk flow and twenty request/response flows share a 10 Mbps link:
/// behind a drop-tail FIFO each small transaction waits behind the bulk
/// flow's standing queue; FQ-CoDel serves the sparse flows first (RFC 8290 1).
#[test]
fn fq_codel_isolates_request_response_flows_from_a_bulk_flow() {
    let base = |qdisc: &str| {
        format!(
            r#"
duration = "10s"
[bottleneck]
rate = "10Mbps"
delay = "5ms"
queue = "512KB"
qdisc = "{qdisc}"
[client]
options = ["wscale", "sack"]
snd_buf = "4MiB"
rcv_buf = "4MiB"
[server]
options = ["wscale", "sack"]
snd_buf = "4MiB"
rcv_buf = "4MiB"
[[flows]]
name = "bulk"
client_hosts = "backup"
workload = {{ type = "bulk", bytes = "100MB" }}
[[flows]]
name = "rpc"
count = 20
client.send_policy = "nodelay"
start = "2s"
workload = {{ request = [100], response = [100], requests = 20, think = "10ms" }}
"#
        )
    };
    let fifo = run(&base("drop-tail"));
    let fq = run(&base("fq-codel"));
    let (f, q) = (group(&fifo, "rpc"), group(&fq, "rpc"));
    assert!(fifo.integrity_ok && fq.integrity_ok);
    assert_eq!((f.transactions, q.transactions), (400, 400));
    assert!(
        f.completion_ms.p50 > 100.0,
        "drop-tail rpc p50 {:?}",
        f.completion_ms
    );
    assert!(
        q.completion_ms.p99 < 40.0,
        "fq-codel rpc p99 {:?}",
        q.completion_ms
    );
    // The bulk flow still gets most of the link.
    assert!(group(&fq, "bulk").goodput_bytes_per_s > 0.8e6);
}

#[test]
fn equal_bulk_flows_share_fairly() {
    let r = run(r#"
duration = "60s"
[bottleneck]
rate = "20Mbps"
delay = "5ms"
qdisc = "fq-codel"
[client]
options = ["wscale", "sack"]
[server]
options = ["wscale", "sack"]
[[flows]]
count = 8
workload = { type = "bulk", bytes = "2MB" }
"#);
    assert!(r.integrity_ok && r.finished, "{:?}", r.integrity_error);
    assert!(r.jain_fairness > 0.95, "Jain {}", r.jain_fairness);
    assert!(r.jain_fairness <= 1.0 + 1e-12);
}

#[test]
fn one_broken_byte_fails_the_run_naming_the_flow() {
    let s = sc(RR);
    let mut sim = FlowSim::new(&s);
    sim.corrupt_next_segment(17);
    let r = sim.run(&mut |_, _| {});
    assert!(!r.integrity_ok);
    assert_eq!(r.integrity_failures, 1);
    let e = r.integrity_error.as_deref().unwrap();
    assert!(e.starts_with("flow 17 (web, c2:1032 -> web:7)"), "{e}");
    assert!(e.contains("differ from what was written"), "{e}");
    assert!(!r.worst_flows[0].integrity_ok && r.worst_flows[0].id == 17);
    let flows = r.flows.unwrap();
    assert_eq!(flows.iter().filter(|f| !f.integrity_ok).count(), 1);
}

#[test]
fn large_runs_summarise_flows_instead_of_listing_them() {
    let r = run(r#"
duration = "5s"
[bottleneck]
rate = "1Gbps"
delay = "1ms"
[[flows]]
count = 1500
client_hosts = ["a", "b"]
workload = { request = [100], response = [100], requests = 2 }
"#);
    assert!(r.integrity_ok && r.finished);
    assert!(r.flows.is_none());
    assert_eq!(r.worst_flows.len(), flows::WORST_FLOWS);
    let h = r.goodput_histogram.as_ref().unwrap();
    assert_eq!(h.counts.iter().sum::<u64>(), 1500);
    assert_eq!(r.transactions, 3000);
}

#[test]
fn a_bottleneck_alone_runs_the_files_connection_through_it() {
    let r = run(r#"
[bottleneck]
rate = "10Mbps"
delay = "20ms"
[workload]
requests = 3
"#);
    assert_eq!((r.flow_count, r.transactions), (1, 3));
    // Handshake plus 3 transactions, each a round trip over 2 x 20 ms.
    assert!(
        r.completion_ms.p50 >= 40.0 && r.completion_ms.p50 < 45.0,
        "{:?}",
        r.completion_ms
    );
    assert!(r.integrity_ok);
}

#[test]
fn files_without_flows_keep_the_two_host_world() {
    assert!(sc("[workload]\nrequests = 1\n").topology.is_none());
}

#[test]
fn bad_flow_tables_are_clear_errors() {
    let e = |text: &str| Scenario::from_str(text, "f.toml", &[]).unwrap_err();
    let x = e("[[flows]]\ncount = 2\nclinet_hosts = \"a\"\n");
    assert_eq!((x.key.as_str(), x.line), ("flows[1].clinet_hosts", Some(3)));
    assert!(x.message.contains("client_hosts"), "{x}");
    let x = e("[[flows]]\n[[flows]]\nclient.send_policy = \"nagel\"\n");
    assert_eq!(x.key, "flows[2].client.send_policy");
    assert_eq!(x.line, Some(3));
    let x = e("[[flows]]\ncount = 70000\n");
    assert_eq!(x.key, "flows[1].count");
    assert!(x.message.contains("client_hosts"), "{x}");
    let x = e("[bottleneck]\nqdisc = \"fq-codle\"\n");
    assert!(x.message.contains("fq-codel"), "{x}");
    let x = e("[bottleneck]\nquantum = 3000\n");
    assert!(x.message.contains("only to qdisc fq-codel"), "{x}");
    let x = e("[[flows]]\ninterval = \"1ms\"\n");
    assert!(x.message.contains("spread"), "{x}");
    let x = e("[[flows]]\nserver_host = \"client\"\n");
    assert!(x.message.contains("two hosts"), "{x}");
    let x = e("[[flows]]\nworkload = { type = \"bulk\", request = [1] }\n");
    assert_eq!(x.key, "flows[1].workload.request");
    let x = e("[bottleneck]\necn = 1\nqdisc = \"codel\"\n");
    assert!(x.message.contains("true or false"), "{x}");
}

/// The bottleneck tap sees every packet the bottleneck sends, once, each
/// direction, and watching changes nothing in the run.
#[test]
fn the_bottleneck_tap_sees_every_packet_sent_and_changes_nothing() {
    use std::cell::RefCell;
    use std::rc::Rc;
    let s = sc(RR);
    let plain = flows::run(&s);
    let mut sim = FlowSim::new(&s);
    let hosts = sim.host_names().len() as u32;
    // Packets per direction: from a client host (to the servers) or back.
    let seen = Rc::new(RefCell::new([0u64; 2]));
    let bytes = Rc::new(RefCell::new(0u64));
    let (seen2, bytes2) = (Rc::clone(&seen), Rc::clone(&bytes));
    let server = sim
        .host_names()
        .iter()
        .position(|&h| h == "web")
        .expect("the scenario's server host") as u32;
    sim.set_tap(Box::new(move |f| {
        let (src, dst) = (f.src, f.dst);
        assert!(src < hosts && dst < hosts && src != dst);
        seen2.borrow_mut()[usize::from(src == server)] += 1;
        *bytes2.borrow_mut() += f.payload.len() as u64;
    }));
    let tapped = sim.run(&mut |_, _| {});
    assert_eq!(
        serde_json::to_string(&plain).unwrap(),
        serde_json::to_string(&tapped).unwrap(),
        "the tap changed the run"
    );
    let seen = *seen.borrow();
    assert_eq!(seen[0], tapped.queues[0].dequeued, "{:?}", tapped.queues[0]);
    assert_eq!(seen[1], tapped.queues[1].dequeued, "{:?}", tapped.queues[1]);
    assert!(seen[0] > 0 && seen[1] > 0 && *bytes.borrow() > 0);
}

/// Both worlds are watched the same way: a recorded capture holds one
/// record per frame the tap sees, in the same order, and changes nothing.
#[test]
fn a_capture_records_what_the_tap_sees_in_either_world() {
    use std::cell::RefCell;
    use std::rc::Rc;
    use tinygram_sim::wire::Tap;
    let tapped = || {
        let seen = Rc::new(RefCell::new(Vec::new()));
        let seen2 = Rc::clone(&seen);
        let tap: Box<Tap> = Box::new(move |f| {
            seen2
                .borrow_mut()
                .push((f.at, f.dir, f.repr.seq, f.payload.len()))
        });
        (seen, tap)
    };
    let same = |events: &[tinygram_sim::wire::WireEvent], seen: &[_]| {
        let got: Vec<_> = events
            .iter()
            .map(|e| (e.at, e.dir, e.repr.seq, e.payload_len))
            .collect();
        assert!(!got.is_empty());
        assert_eq!(got, seen);
    };
    let s = sc(RR);
    let plain = serde_json::to_string(&flows::run(&s)).unwrap();
    let mut sim = FlowSim::new(&s);
    let (seen, tap) = tapped();
    sim.set_tap(tap);
    sim.enable_capture(true);
    let r = sim.run(&mut |_, _| {});
    assert_eq!(serde_json::to_string(&r).unwrap(), plain);
    let (events, payloads) = sim.capture();
    same(events, &seen.borrow());
    assert_eq!(payloads.map(|p| p.len()), Some(events.len()));
    assert_eq!(
        events.iter().filter(|e| e.dir == 0).count() as u64,
        r.queues[0].dequeued
    );

    let two = Scenario::from_str(
        "name = \"two\"\nseed = 4\n[workload]\ntype = \"request-response\"\nrequest = [100]\nresponse = [2000]\nrequests = 5\n",
        "<t>",
        &[],
    )
    .unwrap();
    let plain = serde_json::to_string(&tinygram_sim::run(&two)).unwrap();
    let mut sim = tinygram_sim::Sim::new(&two);
    let (seen, tap) = tapped();
    sim.set_tap(tap);
    sim.enable_capture(false);
    let r = sim.run(&mut |_, _| {});
    assert_eq!(serde_json::to_string(&r).unwrap(), plain);
    same(sim.capture().0, &seen.borrow());
    assert_eq!(sim.capture().1.map(|p| p.len()), None);
}

/// With ECN negotiated, a marking CoDel bottleneck marks the flows' ECT
/// packets CE instead of dropping them, and the senders back off on the
/// echoed marks (RFC 3168 5 and 6.1.2): the many-flow world sends ECT from
/// its engines and hands CE to the receiver, as the two-host world does.
#[test]
fn a_marking_bottleneck_marks_negotiated_ecn_flows_instead_of_dropping() {
    let base = |ecn: bool| {
        let opts = if ecn {
            r#"["wscale", "sack", "ecn"]"#
        } else {
            r#"["wscale", "sack"]"#
        };
        format!(
            r#"
duration = "20s"
[bottleneck]
rate = "10Mbps"
delay = "10ms"
queue = "1MB"
qdisc = "codel"
ecn = true
[client]
options = {opts}
rcv_buf = "4MiB"
snd_buf = "4MiB"
[server]
options = {opts}
rcv_buf = "4MiB"
snd_buf = "4MiB"
[[flows]]
count = 4
workload = {{ type = "bulk", bytes = "4MB" }}
"#
        )
    };
    let plain = run(&base(false));
    let ecn = run(&base(true));
    for r in [&plain, &ecn] {
        assert!(r.integrity_ok, "{:?}", r.integrity_error);
        assert_eq!(r.flows_done, 4);
    }
    let (qp, qe) = (&plain.queues[0], &ecn.queues[0]);
    assert!(qp.marked == 0 && qp.dropped_aqm > 0, "{qp:?}");
    assert!(qe.marked > 0 && qe.dropped_aqm == 0, "{qe:?}");
    assert!(
        qe.sojourn_ms.p50 < 20.0,
        "marks keep the queue short: {:?}",
        qe.sojourn_ms
    );
}
