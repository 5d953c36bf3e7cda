//! Ground truth for loss recovery: over generated lossy bulk transfers,
//! `diagnose` must count the retransmission timeouts and the fast-retransmit
//! episodes the simulator's engines counted (`timeouts`, `fast_retransmits`),
//! within a small tolerance. NewReno partial-ACK resends (RFC 6582 3.2 step 5)
//! and the go-back-N resends after a timeout belong to one episode, not to new
//! timeouts.
//!
//! NAK is left out: the engine counts NAK-driven resends apart from fast
//! retransmits (RFC 1106 4.3), while `diagnose` files them under fast recovery.
//!
//! `TINYGRAM_RT_SEED=n` replays one generator seed; `TINYGRAM_RT_RUNS` sets the
//! count; `TINYGRAM_RT_DUMP=dir` writes each run's scenario and pcap there.

use tinygram_analyze::diagnose::Kind;
use tinygram_analyze::{diagnose, read_bytes, Thresholds};
use tinygram_sim::pcap::{write_pcap, Vantage};
use tinygram_sim::scenario::Scenario;
use tinygram_sim::world::Sim;

mod common;
use common::Gen;

/// A lossy bulk transfer and the capture point, for generator seed `seed`.
fn scenario(seed: u64) -> (String, Vantage) {
    let mut g = Gen(seed ^ 0x0005_eed0_f105);
    let rate = *g.pick(&["2Mbps", "10Mbps", "50Mbps"]);
    let delay = *g.pick(&["1ms", "10ms", "40ms"]);
    let queue = *g.pick(&["16KB", "64KB", "256KB"]);
    let loss = *g.pick(&[0.0, 0.005, 0.01, 0.02, 0.05]);
    let dup = *g.pick(&[0.0, 0.0, 0.0, 0.01]);
    let reorder = *g.pick(&[0.0, 0.0, 0.0, 0.01]);
    let options = *g.pick(&[
        "[]",
        "[\"timestamps\"]",
        "[\"sack\"]",
        "[\"sack\", \"timestamps\", \"wscale\"]",
        "[\"wscale\"]",
    ]);
    let rcv = *g.pick(&["64KB", "256KB", "1MiB"]);
    // Linux's RTO rule (RTO >= SRTT + rto_min) with its 200 ms or a 1 s minimum,
    // pinned: the ground truth concerns diagnose's counting, not the RTO.
    let rto_min = *g.pick(&["200ms", "200ms", "1s"]);
    let bytes = *g.pick(&["300KB", "1MB", "2MB"]);
    let mut s = format!(
        "seed = {seed}\nduration = \"120s\"\n[link]\nrate = \"{rate}\"\ndelay = \"{delay}\"\nqueue = \"{queue}\"\n\
         loss = {loss}\nduplicate = {dup}\nreorder = {reorder}\nreorder_delay = \"2ms\"\n"
    );
    for host in ["client", "server"] {
        s += &format!(
            "[{host}]\noptions = {options}\nrcv_buf = \"{rcv}\"\nsnd_buf = \"1MiB\"\nrto_min = \"{rto_min}\"\nrto_floor = \"variance\"\n"
        );
    }
    s += &format!(
        "[workload]\ntype = \"bulk\"\nbytes = \"{bytes}\"\nwrite_size = \"{}\"\n",
        g.pick(&["1KB", "16KiB", "64KiB"])
    );
    let v = if g.next().is_multiple_of(2) {
        Vantage::Client
    } else {
        Vantage::Server
    };
    (s, v)
}

#[test]
fn diagnose_counts_the_recoveries_the_engines_counted() {
    let seeds = common::seeds("TINYGRAM_RT", 200);
    // (engine, diagnose) totals for timeouts and fast retransmits.
    let (mut to, mut fr) = ([0u64; 2], [0u64; 2]);
    // The same for captures at the sender (the client) alone.
    let (mut to_c, mut fr_c) = ([0u64; 2], [0u64; 2]);
    let mut worst = Vec::new();
    for &seed in &seeds {
        let (text, vantage) = scenario(seed);
        let sc = Scenario::from_str(&text, "<generated>", &[])
            .unwrap_or_else(|e| panic!("seed {seed}: {e}\n{text}"));
        let mut sim = Sim::new(&sc);
        sim.enable_capture(false);
        let res = sim.run(&mut |_, _| {});
        let (events, payloads) = sim.capture();
        let mut pcap = Vec::new();
        write_pcap(&mut pcap, events, payloads, vantage).expect("pcap writes");
        if let Some(dir) = std::env::var_os("TINYGRAM_RT_DUMP") {
            let dir = std::path::Path::new(&dir);
            std::fs::write(dir.join(format!("rt-{seed}.toml")), &text).expect("dump");
            std::fs::write(dir.join(format!("rt-{seed}.pcap")), &pcap).expect("dump");
        }
        let cap = read_bytes(&pcap).expect("own pcap reads");
        let (d, _) = diagnose(&cap, &Thresholds::default());
        let count = |k: Kind| -> u64 {
            d.flows
                .iter()
                .flat_map(|f| &f.findings)
                .filter(|x| x.kind == k)
                .map(|x| x.count as u64)
                .sum()
        };
        let truth = [
            res.client.timeouts + res.server.timeouts,
            res.client.fast_retransmits + res.server.fast_retransmits,
        ];
        let found = [count(Kind::TimeoutRecovery), count(Kind::FastRecovery)];
        if seeds.len() == 1 {
            println!("{text}");
            for x in d.flows.iter().flat_map(|f| &f.findings) {
                if matches!(x.kind, Kind::TimeoutRecovery | Kind::FastRecovery) {
                    for e in &x.events {
                        println!("{:?} {:.6} {}", x.kind, e.at_s, e.detail);
                    }
                }
            }
        }
        to[0] += truth[0];
        to[1] += found[0];
        fr[0] += truth[1];
        fr[1] += found[1];
        if vantage == Vantage::Client {
            to_c[0] += truth[0];
            to_c[1] += found[0];
            fr_c[0] += truth[1];
            fr_c[1] += found[1];
        }
        if truth != found {
            worst.push(format!(
                "seed {seed} ({vantage:?}): timeouts engine {} diagnose {}, fast retransmits engine {} diagnose {}",
                truth[0], found[0], truth[1], found[1]
            ));
        }
    }
    println!(
        "recovery ground truth over {} lossy bulk runs: timeouts engine {} diagnose {}; \
         fast retransmits engine {} diagnose {}; {} run(s) differ",
        seeds.len(),
        to[0],
        to[1],
        fr[0],
        fr[1],
        worst.len()
    );
    println!(
        "  captured at the sender: timeouts engine {} diagnose {}; fast retransmits engine {} diagnose {}",
        to_c[0], to_c[1], fr_c[0], fr_c[1]
    );
    for w in &worst {
        println!("  {w}");
    }
    let off = |x: [u64; 2]| x[0].abs_diff(x[1]) as f64 / x[0].max(1) as f64;
    assert!(
        to[0] >= 20 && fr[0] >= 100,
        "too few recoveries to judge: {to:?} {fr:?}"
    );
    assert!(
        off(to) <= 0.05,
        "timeouts: engine {} vs diagnose {}",
        to[0],
        to[1]
    );
    assert!(
        off(fr) <= 0.05,
        "fast retransmits: engine {} vs diagnose {}",
        fr[0],
        fr[1]
    );
}
