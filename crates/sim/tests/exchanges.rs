//! The `exchanges` workload: a conversation of distinct turns, each with its
//! own request and response writes and its own think and pause times.

use tinygram_sim::{RunResult, Scenario};

fn run(toml: &str) -> RunResult {
    let sc = Scenario::from_str(toml, "exchanges.toml", &[]).unwrap();
    tinygram_sim::run(&sc)
}

const TURNS: &str = r#"
duration = "10s"
[link]
delay = "5ms"
[client]
send_policy = "nodelay"
[server]
send_policy = "nodelay"
ack_policy = "immediate"
[workload]
type = "exchanges"
exchanges = [
  { request = [200], response = [3000], think = "20ms" },
  { request = [2000, 1000], response = [100], pause = "50ms" },
  { request = [10], response = [10] },
]
"#;

#[test]
fn every_turn_completes_with_its_own_sizes_and_times() {
    let r = run(TURNS);
    assert!(r.integrity_ok, "{:?}", r.integrity_error);
    assert_eq!(r.transactions, 3);
    // Bytes each way: the sum of the turns' writes.
    assert_eq!(r.client.app_bytes_read, 3000 + 100 + 10);
    assert_eq!(r.server.app_bytes_read, 200 + 3000 + 10);
    // The slowest turn is the first: a round trip (10 ms) and 20 ms of think.
    assert!(
        r.completion_ms.max >= 30.0 && r.completion_ms.max < 40.0,
        "{:?}",
        r.completion_ms
    );
    // The client's 50 ms pause is not part of any turn's completion time but
    // does make the run longer than the turns alone.
    assert!(r.sim_time_s > 0.05 + 0.03, "{}", r.sim_time_s);
}

#[test]
fn a_workload_think_applies_where_a_turn_gives_none() {
    let with = |think: &str| {
        run(&TURNS.replace("[workload]", &format!("[workload]\nthink = \"{think}\"")))
            .completion_ms
            .p50
    };
    // The second and third turns take the workload's think time.
    assert!(
        with("40ms") > with("0ms") + 35.0,
        "{} {}",
        with("40ms"),
        with("0ms")
    );
}

#[test]
fn bad_turns_are_named() {
    for (bad, msg) in [
        ("exchanges = []", "at least one exchange"),
        ("exchanges = [1]", "exchange 1: expected a table"),
        (
            "exchanges = [{ request = [1] }]",
            "exchange 1: needs response",
        ),
        (
            "exchanges = [{ request = [1], response = [0] }]",
            "at least 1 byte",
        ),
        (
            "exchanges = [{ request = [1], response = [1], thnk = \"1ms\" }]",
            "unknown field \"thnk\"",
        ),
        (
            "exchanges = [{ request = [1], response = [1], think = 5 }]",
            "expected a duration",
        ),
    ] {
        let text = format!("[workload]\ntype = \"exchanges\"\n{bad}\n");
        let e = Scenario::from_str(&text, "x.toml", &[]).unwrap_err();
        assert!(e.message.contains(msg), "{bad}: {e}");
        assert_eq!(e.line, Some(3), "{bad}: {e}");
    }
    let e = Scenario::from_str("[workload]\nrequests = 3\nexchanges = []\n", "x.toml", &[])
        .unwrap_err();
    assert!(e.message.contains("exchanges"), "{e}");
}
