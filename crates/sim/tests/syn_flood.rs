//! A SYN flood (RFC 4987) against a listener with a small backlog: spoofed
//! SYNs fill the backlog with connections whose SYN-ACKs nobody answers;
//! with SYN cookies (RFC 4987 3.6) legitimate clients are still served,
//! without them their SYNs are dropped while the backlog stays full.

use std::time::Duration;
use tinygram_sim::flood::SynFlood;
use tinygram_sim::flows::FlowSim;
use tinygram_sim::metrics::{FlowsResult, RunEnd};
use tinygram_sim::scenario::Scenario;

/// Twenty clients, opening 50 ms apart from 100 ms, each making five
/// request/response exchanges with a server whose backlog holds eight.
fn scenario(syn_cookies: bool) -> Scenario {
    Scenario::from_str(&scenario_text(syn_cookies), "<test>", &[]).unwrap_or_else(|e| panic!("{e}"))
}

fn scenario_text(syn_cookies: bool) -> String {
    format!(
        r#"
name = "syn-flood"
seed = 11
duration = "30s"
[server]
backlog = 8
syn_cookies = {syn_cookies}
[bottleneck]
rate = "100Mbps"
delay = "5ms"
[[flows]]
name = "clients"
count = 20
client_hosts = ["c1", "c2"]
server_host = "web"
start = "100ms"
spread = "uniform"
interval = "50ms"
workload = {{ request = [300], response = [2000], requests = 5 }}
"#
    )
}

/// 5,000 spoofed SYNs, one per millisecond from time zero, from 1,000 sources.
fn flood() -> SynFlood {
    SynFlood {
        server_host: "web".to_string(),
        port: 7,
        start: Duration::ZERO,
        interval: Duration::from_millis(1),
        count: 5000,
        sources: 1000,
    }
}

fn run(syn_cookies: bool, flooded: bool) -> FlowsResult {
    let mut sim = FlowSim::new(&scenario(syn_cookies));
    if flooded {
        sim.syn_flood(flood()).unwrap();
    }
    sim.run(&mut |_, _| {})
}

#[test]
fn with_syn_cookies_legitimate_clients_are_served_through_the_flood() {
    let r = run(true, true);
    assert_eq!(r.ended, RunEnd::Finished, "{:?}", r.integrity_error);
    assert!(r.integrity_ok, "{:?}", r.integrity_error);
    assert_eq!((r.flows_done, r.transactions), (20, 100));
    let l = r
        .listen
        .as_ref()
        .expect("the listener acted past its backlog");
    // The clients are done (and the run ends) while the flood goes on.
    assert!(l.flood_syns > 1000 && l.flood_syns < 5000, "{l:?}");
    assert_eq!(
        l.most_half_open, 8,
        "the backlog bounds the half-open connections"
    );
    // The flood fills the backlog in its first 8 ms; every later SYN, a
    // client's included, gets a cookie, and every client completes with one.
    assert!(l.syn_cookies_sent >= l.flood_syns - 8, "{l:?}");
    assert_eq!(l.syn_cookies_accepted, 20, "{l:?}");
    assert_eq!((l.syn_cookies_rejected, l.syns_dropped), (0, 0));
    // A cookie connection has no window scaling, SACK or timestamps, which
    // these small exchanges do not need: they take as long as unflooded.
    let calm = run(true, false);
    assert!(calm.listen.is_none());
    let slower = r.completion_ms.p99 - calm.completion_ms.p99;
    assert!(
        slower.abs() < 5.0,
        "{:?} vs {:?}",
        r.completion_ms,
        calm.completion_ms
    );
    let again = run(true, true);
    assert_eq!(
        serde_json::to_string(&r).unwrap(),
        serde_json::to_string(&again).unwrap(),
        "a flood run is a function of its scenario and seed"
    );
}

#[test]
fn without_syn_cookies_the_flood_keeps_clients_out() {
    let r = run(false, true);
    let l = r.listen.as_ref().expect("SYNs were dropped");
    assert_eq!(l.syn_cookies_sent, 0);
    assert!(l.syns_dropped > 4000, "{l:?}");
    assert_eq!(l.most_half_open, 8);
    // Each client's SYN and its retransmissions meet a full backlog.
    assert!(r.flows_done < 20, "{} flows done", r.flows_done);
    assert!(r.transactions < 100);
}

#[test]
fn without_a_flood_the_backlog_and_cookies_change_nothing() {
    let plain = {
        let mut sc = scenario(true);
        let g = &mut sc.topology.as_mut().unwrap().groups[0];
        g.server.tcp.backlog = None;
        tinygram_sim::flows::run(&sc)
    };
    let small = run(true, false);
    let off = run(false, false);
    assert!(small.listen.is_none() && plain.listen.is_none());
    assert_eq!(small.transactions, 100);
    for r in [&small, &off] {
        assert_eq!(
            serde_json::to_string(&plain).unwrap(),
            serde_json::to_string(r).unwrap()
        );
    }
}

#[test]
fn a_flood_needs_a_listening_server_host() {
    let mut sim = FlowSim::new(&scenario(true));
    let mut f = flood();
    f.port = 8;
    assert!(sim.syn_flood(f).unwrap_err().contains("port 8"));
    let mut f = flood();
    f.sources = 0;
    assert!(sim.syn_flood(f).unwrap_err().contains("spoofed sources"));
    sim.syn_flood(flood()).unwrap();
    assert!(sim.syn_flood(flood()).is_err(), "one flood per run");
}

/// The same flood from a scenario's `[flood]` table gives the same run.
#[test]
fn a_flood_table_in_the_scenario_is_the_same_flood() {
    let api = run(true, true);
    let text = "[flood]\nserver_host = \"web\"\ncount = 5000\nsources = 1000\ninterval = \"1ms\"\n";
    let sc = Scenario::from_str(&format!("{}{text}", scenario_text(true)), "<test>", &[])
        .unwrap_or_else(|e| panic!("{e}"));
    let from_file = tinygram_sim::flows::run(&sc);
    assert_eq!(
        serde_json::to_string(&api).unwrap(),
        serde_json::to_string(&from_file).unwrap()
    );
}

#[test]
fn a_flood_table_names_what_is_wrong() {
    let e = Scenario::from_str("[flood]\ncount = 10\n", "f.toml", &[]).unwrap_err();
    assert_eq!(e.key, "flood.count");
    assert!(e.message.contains("many-flow"), "{e}");
    let bad_host = format!(
        "{}[flood]\ncount = 10\nserver_host = \"nobody\"\n",
        scenario_text(true)
    );
    let e = Scenario::from_str(&bad_host, "f.toml", &[]).unwrap_err();
    assert_eq!(e.key, "flood.server_host");
    assert!(e.message.contains("\"nobody\""), "{e}");
    let e = Scenario::from_str(
        &format!("{}[flood]\ncount = 10\nsources = 0\n", scenario_text(true)),
        "f.toml",
        &[],
    )
    .unwrap_err();
    assert_eq!(e.key, "flood.sources", "{e}");
}
