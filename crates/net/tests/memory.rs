//! The TUN host's memory budget on a real wire (issue 31): tinygram serves
//! echo with `memory` set; raw-socket peers in its namespace
//! (`tests/py/zwpeers.py`) push data into it while advertising a zero window,
//! so its echo can send nothing back, and then either fall silent (its
//! zero-window probes go unanswered) or answer every probe with a zero window
//! (kept by RFC 1122 4.2.2.17; only the budget bounds them). A kernel client
//! connected before them echoes throughout, and a new one must get in after.
//!
//! Needs root, /dev/net/tun, `ip` and `python3` (skips otherwise, or fails
//! with `TINYGRAM_REAL_WIRE=require`).

mod common;

use common::{say, Netns, Tinygram};
use serde_json::Value;
use std::time::Duration as StdDuration;
use tinygram_net::{AppSpec, Role};
use tinygram_proto::{Config, Duration};

/// The budget: about twelve peers' worth of echo buffers (256 KiB of send
/// buffer and 64 KiB of receive buffer each), for 36 peers.
const BUDGET: usize = 4 << 20;

#[test]
fn zero_window_peers_stay_within_the_memory_budget() {
    require_real_wire!("zero_window_peers_stay_within_the_memory_budget");
    let _one = common::serial();
    let ns = Netns::new("mem");
    let port = 7;
    let config = Config {
        host_budget: Some(BUDGET),
        // Peers stalled for 2 s (twice rto_max) may be reclaimed for a new
        // client, and silent ones run out of probes (0.2 s doubling to 1 s,
        // eight of them) about 6.4 s after they fall silent.
        rto_max: Duration::from_secs(1),
        max_retries: 8,
        ..Config::default()
    };
    let role = Role::Serve {
        port,
        app: AppSpec::parse("echo").unwrap(),
        conns: None,
    };
    let tg = Tinygram::start(&ns, config, role, 1500, StdDuration::from_secs(90));
    // 24 silent peers and 12 answering ones, 330,000 bytes each, 6 at a time.
    let args = ["7", "24", "12", "330000", "70", "6", "3"].map(String::from);
    let v: Value = ns.python("zwpeers.py", &args, 80).finish();
    // Time for the silent peers' probes to run out (the host serves on).
    let r = tg.finish_within(9);
    say(&format!("zwpeers: {v}\nhost: {:?}", r.host));
    assert_eq!(v["ok"], true, "{v}");

    // The buffers filled and never stayed over the budget.
    let peak = r.host.memory_peak as usize;
    assert!(peak > BUDGET / 2, "the peers filled the buffers ({peak})");
    assert!(peak <= BUDGET, "{peak} bytes over the budget of {BUDGET}");
    // The policy acted: connections aborted, the longest idle first. New
    // connections are refused past two thirds only when a peer's SYN comes
    // while the buffers are that full, which depends on the schedule (one CI
    // run saw 30 aborts and no refusal); host.rs's unit tests pin refusal.
    assert!(r.host.memory_aborts > 0, "{:?}", r.host);
    let (silent, answer) = (&v["silent_peers"], &v["answer_peers"]);
    let pushed =
        silent["pushed_acked"].as_u64().unwrap() + answer["pushed_acked"].as_u64().unwrap();
    assert!(
        pushed as usize > BUDGET,
        "the peers pushed past the budget ({pushed})"
    );
    assert!(
        answer["answers"].as_u64().unwrap() > 0,
        "probes were answered: {v}"
    );
    assert!(
        silent["reset"].as_u64().unwrap() + answer["reset"].as_u64().unwrap() > 0,
        "aborted peers got a RST: {v}"
    );

    // Silent peers the budget left alone ran out of probes; answering ones
    // were kept until the end, when the run aborted what was left.
    let probe_aborts: u64 = r.conns.iter().map(|c| c.counters.window_probe_aborts).sum();
    assert!(
        probe_aborts > 0,
        "silent peers are dropped after max_retries probes"
    );
    assert!(probe_aborts <= silent["synacks"].as_u64().unwrap());

    // Legitimate clients: the one connected before the peers echoed every
    // 100 ms through it all, and a new one got in and echoed.
    let first = &v["first_client"];
    assert_eq!(first["failures"], serde_json::json!([]), "{v}");
    assert!(first["round_trips"].as_u64().unwrap() >= 20, "{v}");
    assert_eq!(v["new_client"]["round_trips"], 5, "{v}");
}
