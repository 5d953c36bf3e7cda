//! `whatif` on synthetic captures whose truth is known: simulate a stalling
//! (or not) exchange, capture it, and check that the replay matches the
//! capture and that each fix's predicted effect has the right direction.

use tinygram_lab::whatif::{self, Change, Options};
use tinygram_sim::pcap::{write_pcap, Vantage};
use tinygram_sim::world::Sim;
use tinygram_sim::Scenario;

fn capture(toml: &str, at: Vantage) -> tinygram_analyze::Capture {
    let sc = Scenario::from_str(toml, "truth.toml", &[]).unwrap();
    let mut sim = Sim::new(&sc);
    sim.enable_capture(false);
    let r = sim.run(&mut |_, _| {});
    assert!(r.integrity_ok);
    let mut pcap = Vec::new();
    write_pcap(&mut pcap, sim.capture().0, None, at).unwrap();
    tinygram_analyze::read_bytes(&pcap).unwrap()
}

fn run(toml: &str, at: Vantage) -> whatif::FlowWhatif {
    let opts = Options {
        samples: 4,
        ..Options::default()
    };
    let r = whatif::whatif(&capture(toml, at), "truth", &opts, &|_| {}).unwrap();
    assert_eq!(r.flows.len(), 1, "{:?}", r.skipped);
    r.flows.into_iter().next().unwrap()
}

fn alt<'a>(f: &'a whatif::FlowWhatif, name: &str) -> &'a whatif::Alternative {
    f.alternatives
        .iter()
        .find(|a| a.name == name)
        .unwrap_or_else(|| panic!("no alternative {name:?}"))
}

/// Cheshire's pattern on Linux's rule: the runt of the 2,000-byte write
/// holds the second write back a round trip (Minshall), the server answers
/// 100 bytes after 2 ms.
const MINSHALL: &str = r#"
duration = "10s"
[link]
delay = "10ms"
rate = "100Mbps"
[client]
send_policy = "minshall"
[server]
delack = "40ms"
[workload]
request = [2000, 1000]
response = [100]
requests = 20
think = "2ms"
"#;

#[test]
fn a_runt_held_for_a_round_trip_is_replayed_and_nodelay_removes_it() {
    for at in [Vantage::Client, Vantage::Server] {
        let f = run(MINSHALL, at);
        let b = &f.baseline;
        assert!(b.matches, "{at:?}: median error {}", b.median_rel_error);
        assert!(b.median_rel_error < 0.05, "{at:?}: {}", b.median_rel_error);
        assert_eq!(f.held_side, "client", "{}", f.held_why);
        // The truth: a round trip (20 ms) of hold per exchange, ~42 ms in all.
        let base = b.metrics.p50_ms.p50;
        assert!((38.0..48.0).contains(&base), "{base}");
        let nd = alt(&f, "client nodelay");
        assert_eq!(nd.p50_change, Some(Change::Lower), "{at:?}");
        let m = nd.metrics.as_ref().unwrap().p50_ms.p50;
        assert!(m < base - 15.0, "nodelay {m} vs {base}");
        // Minshall is what the client already does: no change.
        assert_eq!(alt(&f, "client minshall").p50_change, Some(Change::Same));
        // One write per request sends no runt ahead of the rest.
        assert_eq!(
            alt(&f, "each turn in one write").p50_change,
            Some(Change::Lower)
        );
        // The server's ACK policy cannot help: the runt waits for the ACK of
        // the full segment before it, which the server sends at once
        // (every second segment) whatever its timer.
        assert!(
            alt(&f, "server immediate ACKs").p50_ratio.unwrap() > 0.9,
            "{:?}",
            alt(&f, "server immediate ACKs").p50_ratio
        );
        assert!(f.alternatives.iter().any(|a| a.pareto));
        // The scenario it wrote is a scenario `tinygram run` accepts.
        let src = tinygram_lab::Source::text(&f.scenario);
        tinygram_lab::check(&src, &[], None).unwrap();
    }
}

/// Strict Nagle x a 200 ms delayed ACK (Cheshire): with a 1448-byte MSS
/// the request is 69 full segments and an 88-byte runt, and the runt waits
/// for the server's delayed ACK of the odd last full segment.
const NAGLE: &str = r#"
duration = "30s"
[link]
delay = "1ms"
rate = "100Mbps"
[client]
send_policy = "nagle"
mss = 1448
[server]
mss = 1448
delack = "200ms"
[workload]
request = [100000]
response = [1]
requests = 8
"#;

#[test]
fn the_classic_stall_points_at_the_sender_and_the_receivers_timer() {
    let f = run(NAGLE, Vantage::Client);
    assert!(f.baseline.matches, "{}", f.baseline.median_rel_error);
    let base = f.baseline.metrics.p50_ms.p50;
    assert!(base > 150.0, "{base}");
    for fix in [
        "client nodelay",
        "client minshall",
        "client doupnik",
        "server immediate ACKs",
    ] {
        let a = alt(&f, fix);
        assert_eq!(a.p50_change, Some(Change::Lower), "{fix}");
        assert!(a.p50_ratio.unwrap() < 0.5, "{fix}: {:?}", a.p50_ratio);
    }
    let shorter = alt(&f, "server delayed ACK 40ms");
    assert_eq!(shorter.p50_change, Some(Change::Lower));
}

/// The classic stall with a response larger than the request: the held side
/// is the one whose data TCP held (the client), not the one that sent more.
const NAGLE_BIG_RESPONSE: &str = r#"
duration = "10s"
[link]
delay = "1ms"
[server]
delack = "40ms"
[workload]
request = [300, 80]
response = [500]
requests = 12
think = "1ms"
"#;

#[test]
fn the_held_side_is_the_one_tcp_held_not_the_one_that_sent_more() {
    let f = run(NAGLE_BIG_RESPONSE, Vantage::Client);
    assert_eq!(f.held_side, "client", "{}", f.held_why);
    assert!(
        f.held_why.contains("held the client's data"),
        "{}",
        f.held_why
    );
    let a = alt(&f, "client nodelay");
    assert_eq!(a.p50_change, Some(Change::Lower));
    assert_eq!(
        alt(&f, "server immediate ACKs").p50_change,
        Some(Change::Lower)
    );
}

/// Nothing stalls: one write each way, nodelay, immediate ACKs.
const QUICK: &str = r#"
duration = "10s"
[link]
delay = "5ms"
[client]
send_policy = "nodelay"
[server]
send_policy = "nodelay"
ack_policy = "immediate"
[workload]
request = [300]
response = [300]
requests = 10
"#;

#[test]
fn an_exchange_that_does_not_stall_gains_nothing_from_a_send_fix() {
    let f = run(QUICK, Vantage::Client);
    assert!(f.baseline.matches, "{}", f.baseline.median_rel_error);
    for p in ["nodelay", "minshall", "doupnik", "nagle"] {
        let name = format!("{} {p}", f.held_side);
        assert_eq!(alt(&f, &name).p50_change, Some(Change::Same), "{name}");
    }
}

#[test]
fn a_flow_that_is_not_a_conversation_is_named_and_skipped() {
    let bulk = "[workload]\ntype = \"bulk\"\nbytes = \"200KB\"\n";
    let e = whatif::whatif(
        &capture(bulk, Vantage::Client),
        "bulk",
        &Options::default(),
        &|_| {},
    )
    .unwrap_err();
    assert!(e.contains("not a request/response"), "{e}");
    let bad = Options {
        flow: Some(3),
        ..Options::default()
    };
    let e = whatif::whatif(&capture(QUICK, Vantage::Client), "q", &bad, &|_| {}).unwrap_err();
    assert!(e.contains("--flow 3") && e.contains("1 flow"), "{e}");
    let e = whatif::whatif(
        &capture(QUICK, Vantage::Client),
        "q",
        &Options {
            tries: vec!["nonsense".into()],
            ..Options::default()
        },
        &|_| {},
    )
    .unwrap_err();
    assert!(e.contains("--try"), "{e}");
}

#[test]
fn a_try_is_run_like_any_alternative() {
    let opts = Options {
        samples: 2,
        tries: vec!["server.delack=\"1ms\"".into()],
        ..Options::default()
    };
    let r = whatif::whatif(&capture(NAGLE, Vantage::Client), "t", &opts, &|_| {}).unwrap();
    let a = alt(&r.flows[0], "server.delack=\"1ms\"");
    assert_eq!(a.p50_change, Some(Change::Lower), "{:?}", a.error);
}

/// A Linux receiver (quickack) whose delayed ACKs take 48 ms, not Linux's
/// nominal 40 ms (the timer of a real kernel, rounded to its ticks), under a
/// client that writes each request in two parts with Nagle on.
const QUICKACK_48: &str = r#"
duration = "10s"
[link]
delay = "100us"
rate = "1Gbps"
[client]
profile = "linux"
send_policy = "nagle"
[server]
profile = "linux"
ato_min = "48ms"
[workload]
request = [200, 102]
response = [100]
requests = 20
think = "1ms"
"#;

#[test]
fn a_quickack_receivers_timer_is_replayed_as_the_capture_shows_it() {
    let f = run(QUICKACK_48, Vantage::Client);
    assert_eq!(f.inference.sides[1].ack.ack_policy.value, "quickack");
    // The replay takes the timer the capture shows, not the policy's 40 ms.
    assert!(
        f.scenario.contains("\nato_min = \"48ms\""),
        "{}",
        f.scenario
    );
    let b = &f.baseline;
    assert!(b.median_rel_error < 0.05, "{}", b.median_rel_error);
    let base = b.metrics.p50_ms.p50;
    assert!((47.0..55.0).contains(&base), "{base}");
    // Linux's nominal 40 ms timer would be faster, by the 8 ms difference.
    let forty = alt(&f, "server delayed ACK 40ms");
    assert_eq!(forty.p50_change, Some(Change::Lower));
}
