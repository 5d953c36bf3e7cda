//! The receiver as real stacks build it (issue: stack profiles and a faithful
//! receiver): each test here failed on the engine before the change it covers.

use tinygram_sim::scenario::Scenario;
use tinygram_sim::{run, RunResult};

fn run_with(toml: &str, overrides: &[&str]) -> RunResult {
    let o: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    let sc = Scenario::from_str(toml, "<test>", &o).unwrap_or_else(|e| panic!("{e}"));
    run(&sc)
}

/// Doupnik's web pattern (A new TCP transmission policy, 3.0) on a
/// loopback-like path: MSS 65,483, no window scaling, Nagle off on both sides.
const LOOPBACK_WEB: &str = r#"
duration = "2s"
[link]
rate = "unlimited"
delay = "10us"
queue = 0
framing = "raw"
[client]
mss = 65483
send_policy = "nodelay"
rcv_buf = "128KiB"
[server]
mss = 65483
send_policy = "nodelay"
rcv_buf = "128KiB"
[workload]
type = "request-response"
request = [120]
response = [40, 150, "4KiBx25"]
"#;

/// RFC 1122 4.2.3.3's step is min(half the window, MSS); with a buffer above
/// 64 KiB and no window scaling the window is at most 65,535, so a step taken
/// from the buffer (65,483 here) could never be reached and each response
/// crawled through zero-window probes (3.4 req/s). Taken from the window that
/// can be advertised, the right edge moves and the exchange runs at memory speed.
#[test]
fn sws_step_comes_from_the_advertisable_window_not_the_buffer() {
    let r = run_with(LOOPBACK_WEB, &[]);
    assert!(r.integrity_ok);
    assert!(
        r.transactions_per_s > 1000.0,
        "{} req/s (window probes: client {}, server {})",
        r.transactions_per_s,
        r.client.window_probes,
        r.server.window_probes
    );
    // The same exchange with 64 KiB buffers, where buffer and window agree.
    let small = run_with(
        LOOPBACK_WEB,
        &["client.rcv_buf=\"64KiB\"", "server.rcv_buf=\"64KiB\""],
    );
    assert!(
        r.transactions_per_s > small.transactions_per_s / 4.0,
        "{} req/s with 128 KiB buffers vs {} with 64 KiB",
        r.transactions_per_s,
        small.transactions_per_s
    );
}

/// `workload.response_gap` spaces the server's writes of one response, as an
/// application that supplies data slower than the network drains it (Doupnik 3.0).
#[test]
fn response_gap_spaces_the_servers_writes() {
    let base = r#"
duration = "10s"
[link]
rate = "100Mbps"
delay = "20us"
[server]
send_policy = "nodelay"
[workload]
type = "request-response"
request = [120]
response = [40, 150, 2250]
requests = 20
"#;
    let fast = run_with(base, &[]);
    let slow = run_with(base, &["workload.response_gap=\"5ms\""]);
    assert!(fast.finished && slow.finished);
    assert!(
        slow.completion_ms.mean >= 10.0,
        "two 5 ms gaps per response, yet {} ms",
        slow.completion_ms.mean
    );
    assert!(
        fast.completion_ms.mean < 5.0,
        "without gaps: {} ms",
        fast.completion_ms.mean
    );
    assert_eq!(slow.server.app_bytes_written, fast.server.app_bytes_written);
}

/// Davids' 50 writes of 10 bytes (TCP -- Either Fast or Efficient), three
/// messages on one connection, both hosts `linux`, against Linux 6.18 over
/// veth (numbers in the issue): paced 10 ms apart, 47 data packets per
/// message in 490 ms; back to back, 2 per message after a 40-44 ms delayed
/// ACK. Tolerance: 3 packets and 10% of the time. Without tcp_cleanup_rbuf's
/// ACK after reading small pushed segments the paced pattern gave 26 packets
/// in 523 ms: the ACKs waited, so Nagle joined writes.
#[test]
fn linux_profile_acks_as_linux_on_davids_pattern() {
    let davids = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/davids-traces.toml"
    ))
    .unwrap();
    let linux = [
        "client.profile=linux",
        "server.profile=linux",
        "client.rto_min=\"200ms\"",
        "workload.requests=3",
    ];
    let with = |gap: &str| {
        let mut o: Vec<&str> = linux.to_vec();
        o.push(gap);
        run_with(&davids, &o)
    };
    let paced = with("workload.request_gap=\"10ms\"");
    assert!(paced.finished && paced.integrity_ok);
    let per_msg = paced.client.data_segments as f64 / 3.0;
    assert!(
        (per_msg - 47.0).abs() <= 3.0,
        "paced: {per_msg} data packets per message"
    );
    let ms = paced.completion_ms.mean;
    assert!((ms - 490.0).abs() <= 49.0, "paced: {ms} ms per message");

    let b2b = with("workload.request_gap=\"0ms\"");
    assert!(b2b.finished && b2b.integrity_ok);
    assert_eq!(
        b2b.client.data_segments, 6,
        "back to back: 2 data packets per message"
    );
    let slowest = b2b.completion_ms.max;
    assert!(
        (36.0..=48.4).contains(&slowest),
        "back to back: the held tail waits for a 40-44 ms delayed ACK, got {slowest} ms"
    );
}

/// Doupnik (A new TCP transmission policy, 3.0, Table 1): a FreeBSD 3.2 client
/// with a 4 KB window and a UnixWare 7 server with strict Nagle, 2.2 KB file:
/// 5 req/s. BSD's receiver offers all free space on every segment and ACKs a
/// read only once it opens two segments, so the server's held tail waits for
/// the client's 200 ms delayed-ACK tick. Under RFC 1122's held right edge the
/// read "opens" a window and the window update releases the tail: thousands
/// of requests per second, hiding the stall.
#[test]
fn bsd_receiver_keeps_doupniks_held_tail_stall() {
    let web = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/doupnik-web.toml"
    ))
    .unwrap();
    let base = [
        "client.profile=freebsd3",
        "client.rcv_buf=\"4KiB\"",
        "server.profile=uw7",
        "duration=\"10s\"",
    ];
    let bsd = run_with(&web, &base);
    assert!(
        (3.0..=7.0).contains(&bsd.transactions_per_s),
        "freebsd3 client: {} req/s (published: 5)",
        bsd.transactions_per_s
    );
    let mut rfc = base.to_vec();
    rfc.push("client.window_advertise=rfc1122");
    let held_edge = run_with(&web, &rfc);
    assert!(
        held_edge.transactions_per_s > 100.0 * bsd.transactions_per_s,
        "the RFC 1122 rule should hide the stall: {} req/s",
        held_edge.transactions_per_s
    );
}
