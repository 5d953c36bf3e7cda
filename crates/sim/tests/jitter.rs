//! `workload.response_jitter`: the server's pace varies per write, drawn
//! from the run's seed alone.

use tinygram_sim::run;
use tinygram_sim::scenario::Scenario;

const WEB: &str = r#"
duration = "2s"
[link]
rate = "100Mbps"
delay = "20us"
[client]
profile = "freebsd3"
[server]
profile = "uw7"
[workload]
request = [120]
response = [40, 150, "4096x8", 232]
"#;

fn rate(seed: u64, jitter: &str) -> f64 {
    let o = vec![
        format!("seed={seed}"),
        format!("workload.response_jitter=\"{jitter}\""),
    ];
    let sc = Scenario::from_str(WEB, "<test>", &o).unwrap_or_else(|e| panic!("{e}"));
    let r = run(&sc);
    assert!(r.integrity_ok);
    r.transactions_per_s
}

#[test]
fn jitter_is_deterministic_per_seed_and_slows_the_server() {
    let none = rate(1, "0us");
    assert_eq!(rate(2, "0us"), none, "no jitter: the seed does not matter");
    let a = rate(1, "500us");
    assert_eq!(a, rate(1, "500us"), "the same seed, the same pace");
    assert_ne!(a, rate(2, "500us"), "another seed, another pace");
    // A slower, uneven server: some responses' tails now wait for a delayed ACK.
    assert!(a < none, "{none} -> {a}");
}
