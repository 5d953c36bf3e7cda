//! Holds, exchanges and send-rule evidence on captures of simulated runs:
//! each scenario's truth (a send policy, a window, think times) is set in the
//! scenario, and `diagnose` must read it back off the wire.

use tinygram_analyze::diagnose::{FlowReport, Kind};
use tinygram_analyze::{diagnose, read_bytes, SendRule, Shape, Thresholds};
use tinygram_sim::pcap::{write_pcap, Vantage};
use tinygram_sim::scenario::Scenario;
use tinygram_sim::world::Sim;

/// Runs `text` and diagnoses its one flow, captured at `at`.
fn run(text: &str, at: Vantage) -> FlowReport {
    let sc = Scenario::from_str(text, "<test>", &[]).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let mut sim = Sim::new(&sc);
    sim.enable_capture(false);
    sim.run(&mut |_, _| {});
    let (events, payloads) = sim.capture();
    let mut pcap = Vec::new();
    write_pcap(&mut pcap, events, payloads, at).expect("pcap writes");
    let cap = read_bytes(&pcap).expect("own pcap reads");
    let (mut d, _) = diagnose(&cap, &Thresholds::default());
    assert_eq!(d.flows.len(), 1);
    d.flows.remove(0)
}

fn scenario(link: &str, client: &str, server: &str, workload: &str) -> String {
    format!("seed = 1\nduration = \"30s\"\n[link]\n{link}\n[client]\n{client}\n[server]\n{server}\n[workload]\n{workload}\n")
}

fn kinds(r: &FlowReport) -> Vec<(Kind, &'static str)> {
    r.findings.iter().map(|x| (x.kind, x.sender)).collect()
}

fn finding(r: &FlowReport, kind: Kind, sender: &str) -> tinygram_analyze::Finding {
    r.findings
        .iter()
        .find(|x| x.kind == kind && x.sender == sender)
        .unwrap_or_else(|| panic!("no {kind:?} of {sender} data in {:?}", kinds(r)))
        .clone()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn fixes(x: &tinygram_analyze::Finding) -> String {
    x.recommendations
        .iter()
        .map(|r| r.fix.as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Cheshire's Minshall case: 2,000 then 1,000 bytes under Minshall's rule,
/// 20 ms each way: the 1,000-byte runt waits a round trip behind the first
/// write's 540-byte runt, on every exchange, with no delayed ACK involved.
#[test]
fn a_runt_held_behind_an_earlier_runt_costs_a_round_trip_per_exchange() {
    let text = scenario(
        "rate = \"100Mbps\"\ndelay = \"20ms\"",
        "send_policy = \"minshall\"",
        "",
        "type = \"request-response\"\nrequest = [2000, 1000]\nresponse = [100]\nrequests = 20",
    );
    for at in [Vantage::Client, Vantage::Server] {
        let r = run(&text, at);
        let x = finding(&r, Kind::RuntHold, "client");
        assert!(x.count >= 19, "{at:?}: {} runt holds", x.count);
        let typical = median(x.events.iter().map(|e| e.lost_s).collect());
        assert!(
            (typical - 0.040).abs() < 0.003,
            "{at:?}: typical hold {typical}"
        );
        let f = fixes(&x);
        assert!(
            !f.contains("use Minshall"),
            "{at:?}: recommends the sender's own rule:\n{f}"
        );
        assert!(f.contains("doupnik"), "{f}");
        // Each exchange: two round trips at the client, one of them the hold.
        assert_eq!(r.shape, Shape::RequestResponse);
        assert_eq!(r.exchanges.len(), 20);
        for e in &r.exchanges[1..] {
            let c = e.completion_at_client_s.expect("answered");
            assert!((c - 0.080).abs() < 0.003, "{at:?}: exchange took {c}");
            let held: f64 = e
                .held
                .iter()
                .filter(|h| h.kind == Kind::RuntHold)
                .map(|h| h.held_s)
                .sum();
            assert!((held - 0.040).abs() < 0.003, "{at:?}: held {held}");
            let w: Vec<u64> = e.request_writes.value.iter().map(|w| w.bytes).collect();
            assert_eq!(w, [2000, 1000]);
        }
        // The first write's runt left behind its full segment: not strict
        // Nagle; the held runts point at Minshall's rule.
        let client = &r.send_rules[0];
        assert_eq!(client.possible, [SendRule::Minshall, SendRule::NoHold]);
        assert_eq!(client.likely, SendRule::Minshall, "{client:?}");
        assert!(client.runts_held >= 19);
        assert_eq!(client.runts_minshall_sends, 0);
    }
}

/// The server answers in two writes under Minshall's rule: its second runt
/// waits behind the first for the client's delayed ACK. A held tail, and no
/// advice to use the rule the server already follows.
#[test]
fn a_minshall_servers_held_tail_is_not_told_to_use_minshall() {
    let text = scenario(
        "rate = \"100Mbps\"\ndelay = \"20ms\"",
        "ack_policy = \"delayed\"\ndelack = \"40ms\"",
        "send_policy = \"minshall\"",
        "type = \"request-response\"\nrequest = [100]\nresponse = [50, 50]\nrequests = 10",
    );
    let r = run(&text, Vantage::Client);
    let x = finding(&r, Kind::HeldTail, "server");
    assert!(x.count >= 9, "{} held tails", x.count);
    let f = fixes(&x);
    assert!(!f.contains("use Minshall"), "{f}");
    assert!(f.contains("Minshall's rule would not help"), "{f}");
}

/// Strict Nagle and a 200 ms delayed ACK: the classic held tail is still
/// found, and Minshall's rule, which would have sent the runt behind a full
/// segment, is among the fixes.
#[test]
fn strict_nagle_and_delayed_ack_is_still_a_held_tail() {
    let text = scenario(
        "rate = \"100Mbps\"\ndelay = \"5ms\"",
        // The retransmission timer's floor above the delayed ACK, so the
        // two do not race (see ground_truth.rs).
        "send_policy = \"nagle\"\nrto_min = \"500ms\"",
        "ack_policy = \"delayed\"\ndelack = \"200ms\"",
        "type = \"request-response\"\nrequest = [2000]\nresponse = [100]\nrequests = 8",
    );
    let r = run(&text, Vantage::Server);
    let x = finding(&r, Kind::HeldTail, "client");
    assert!(x.count >= 7, "{} held tails", x.count);
    assert!(fixes(&x).contains("use Minshall's rule"), "{}", fixes(&x));
    // Holds only suggest a rule (the application may have written just
    // then); they never rule one out, so strict Nagle is the likely one.
    assert!(r.send_rules[0].runts_minshall_sends >= 7);
    assert_eq!(r.send_rules[0].likely, SendRule::Nagle);
    assert!(r.send_rules[0].consistent(SendRule::Nagle));
    // Each exchange's breakdown carries the held tail.
    let held: Vec<f64> = r.exchanges[1..]
        .iter()
        .map(|e| {
            e.held
                .iter()
                .filter(|h| h.kind == Kind::HeldTail)
                .map(|h| h.held_s)
                .sum()
        })
        .collect();
    assert!(held.iter().all(|&h| h > 0.15), "{held:?}");
}

/// A bulk transfer into an 8 KiB receive window across a 10 ms path: the
/// client waits on the server's window, not on cwnd.
#[test]
fn a_small_peer_window_holds_a_transfer() {
    let text = scenario(
        "rate = \"100Mbps\"\ndelay = \"5ms\"",
        "send_policy = \"nodelay\"",
        "rcv_buf = \"8KiB\"\nack_policy = \"immediate\"",
        "type = \"bulk\"\nbytes = \"400KB\"\nwrite_size = \"64KiB\"",
    );
    let r = run(&text, Vantage::Client);
    let x = finding(&r, Kind::WindowLimited, "client");
    assert!(x.count >= 10, "{} window waits", x.count);
    assert!(
        !kinds(&r).contains(&(Kind::CwndLimited, "client")),
        "{:?}",
        kinds(&r)
    );
    assert_eq!(r.shape, Shape::OneWay);
}

/// Loopback-like request/response, as a Linux client on `lo` gives it: a 64
/// KB MSS against a 64 KiB window, so less than one full segment of window is
/// ever left, and each request's ACK moves the window's right edge just before
/// the answer leaves; the client pauses 20 ms between requests. The server's
/// 200-byte answers fit the window open before each request: it waits for
/// requests, not for window, and nothing is reported as receive-window-limited.
#[test]
fn answers_that_fit_the_open_window_are_not_window_limited() {
    let exchanges = (0..25)
        .map(|_| "{ request = [60, 400], response = [200], pause = \"20ms\" }")
        .collect::<Vec<_>>()
        .join(", ");
    let text = scenario(
        "rate = \"10Gbps\"\ndelay = \"5us\"",
        "profile = \"linux\"\nmss = 65483\nrcv_buf = \"64KiB\"\nsend_policy = \"nodelay\"\nack_policy = \"delayed\"\noptions = [\"wscale\", \"timestamps\", \"sack\"]",
        "mss = 65483\nack_policy = \"quickack\"\noptions = [\"wscale\", \"timestamps\", \"sack\"]",
        &format!("type = \"exchanges\"\nexchanges = [{exchanges}]"),
    );
    let r = run(&text, Vantage::Client);
    assert_eq!(r.exchanges.len(), 25);
    assert!(
        !kinds(&r).iter().any(|k| k.0 == Kind::WindowLimited),
        "{:?}",
        r.findings
    );
}

/// A 100 kB answer on a fresh connection with a 10-segment initial window
/// and a 40 ms round trip: slow start holds it for several round trips.
#[test]
fn slow_start_holds_a_large_answer_on_cwnd() {
    let text = scenario(
        "rate = \"1Gbps\"\ndelay = \"20ms\"",
        "ack_policy = \"immediate\"\nrcv_buf = \"1MiB\"\noptions = [\"wscale\"]",
        "send_policy = \"nodelay\"\ninitial_window = 10\noptions = [\"wscale\"]",
        "type = \"request-response\"\nrequest = [100]\nresponse = [100000]\nrequests = 1",
    );
    let r = run(&text, Vantage::Server);
    let x = finding(&r, Kind::CwndLimited, "server");
    assert!(x.count >= 2, "{} cwnd holds", x.count);
    let e = &r.exchanges[0];
    let held: f64 = e
        .held
        .iter()
        .filter(|h| h.kind == Kind::CwndLimited)
        .map(|h| h.held_s)
        .sum();
    assert!(held > 0.04, "cwnd took {held} of the exchange");
    assert!(
        !kinds(&r).iter().any(|k| k.0 == Kind::WindowLimited),
        "{:?}",
        kinds(&r)
    );
}

/// No Nagle, immediate ACKs: nothing holds anything.
#[test]
fn a_nodelay_exchange_reports_nothing() {
    let text = scenario(
        "rate = \"100Mbps\"\ndelay = \"10ms\"",
        "send_policy = \"nodelay\"\nack_policy = \"immediate\"",
        "send_policy = \"nodelay\"\nack_policy = \"immediate\"",
        "type = \"request-response\"\nrequest = [2000, 1000]\nresponse = [100, 100]\nrequests = 10",
    );
    let r = run(&text, Vantage::Client);
    assert!(r.findings.is_empty(), "{:?}", kinds(&r));
    assert_eq!(r.exchanges.len(), 10);
    assert!(r.exchanges.iter().all(|e| e.held.is_empty()));
}

/// Think times read back from either end of the path: the server thinks
/// 30 ms, the client not at all; 10 ms each way. Serialization of a segment
/// at 1 Gbit/s (12 us) is the tolerance.
#[test]
fn exchanges_give_sizes_and_think_times_net_of_the_capture_point() {
    let text = scenario(
        "rate = \"1Gbps\"\ndelay = \"10ms\"",
        "send_policy = \"nodelay\"",
        "send_policy = \"nodelay\"",
        "type = \"request-response\"\nrequest = [300, 200]\nrequest_gap = \"1ms\"\nresponse = [700]\nthink = \"30ms\"\nrequests = 6",
    );
    let tol = 2e-4;
    for at in [Vantage::Client, Vantage::Server] {
        let r = run(&text, at);
        assert_eq!(r.shape, Shape::RequestResponse, "{at:?}: {}", r.shape_note);
        assert_eq!(r.exchanges.len(), 6);
        for (k, e) in r.exchanges.iter().enumerate() {
            assert_eq!((e.request_bytes, e.response_bytes), (500, 700));
            let w: Vec<u64> = e.request_writes.value.iter().map(|w| w.bytes).collect();
            assert_eq!(w, [300, 200], "{at:?}");
            let st = e.server_think_s.as_ref().expect("answered").value;
            assert!(
                st.lo - tol <= 0.030 && 0.030 <= st.hi + tol,
                "{at:?} exchange {k}: server think {st:?}"
            );
            if k + 1 < r.exchanges.len() {
                let ct = e.client_think_s.as_ref().expect("a next request").value;
                assert!(
                    ct.lo - tol <= 0.0 && 0.0 <= ct.hi + tol,
                    "{at:?}: client think {ct:?}"
                );
            } else {
                assert!(e.client_think_s.is_none());
            }
            // 1 ms between the request's writes, a 20 ms round trip, 30 ms of think.
            let c = e.completion_at_client_s.expect("answered");
            assert!(
                (c - 0.051).abs() < 0.001,
                "{at:?}: completion at the client {c}"
            );
        }
    }
}

/// Two requests in flight: answers overlap later requests, and the flow says
/// it cannot be paired into turns.
#[test]
fn pipelined_requests_are_not_paired() {
    let text = scenario(
        "rate = \"100Mbps\"\ndelay = \"10ms\"",
        "send_policy = \"nodelay\"",
        "send_policy = \"nodelay\"",
        "type = \"request-response\"\nrequest = [300]\nresponse = [700]\noutstanding = 2\nrequests = 10",
    );
    let r = run(&text, Vantage::Client);
    assert_eq!(r.shape, Shape::Pipelined, "{}", r.shape_note);
    assert!(r.exchanges.is_empty());
}

/// A sender that never holds, answering 3000 B then two 100 B writes 1 ms
/// apart: at the client the second write can pass just after an ACK and
/// look held, but holds only suggest a rule; the runts it sent behind full
/// segments and behind each other rule out strict Nagle and Minshall, so
/// the rule that never holds is all that is left, from either end.
#[test]
fn a_sender_that_never_holds_keeps_only_the_no_hold_rule() {
    for policy in ["nodelay", "doupnik"] {
        let text = scenario(
            "rate = \"100Mbps\"\ndelay = \"10ms\"",
            "",
            &format!("send_policy = \"{policy}\""),
            "type = \"request-response\"\nrequest = [100]\nresponse = [3000, 100, 100]\nresponse_gap = \"1ms\"\nrequests = 6",
        );
        for at in [Vantage::Client, Vantage::Server] {
            let r = run(&text, at);
            let server = &r.send_rules[1];
            assert_eq!(
                server.possible,
                [SendRule::NoHold],
                "{policy} {at:?}: {server:?}"
            );
            assert_eq!(server.likely, SendRule::NoHold, "{policy} {at:?}");
        }
    }
}

/// TCP_NODELAY and 2,000 then 1,000 bytes: the first write's runt leaves
/// behind its full segment, which strict Nagle (RFC 896) would have held,
/// though it is the same burst.
#[test]
fn a_runt_in_the_same_burst_as_full_segments_rules_out_strict_nagle() {
    let text = scenario(
        "rate = \"100Mbps\"\ndelay = \"20ms\"",
        "send_policy = \"nodelay\"",
        "",
        "type = \"request-response\"\nrequest = [2000, 1000]\nresponse = [100]\nrequests = 10",
    );
    let r = run(&text, Vantage::Server);
    let client = &r.send_rules[0];
    assert!(!client.consistent(SendRule::Nagle), "{client:?}");
    assert!(client.verdicts[0].witnesses >= 10);
}
