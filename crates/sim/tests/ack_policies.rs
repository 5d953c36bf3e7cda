//! End-to-end runs of the ACK policies on the seed experiments, asserting the
//! qualitative result (crawl or near link speed, stall or no stall).

use tinygram_sim::metrics::RunResult;
use tinygram_sim::scenario::Scenario;
use tinygram_sim::world::Sim;

fn run(name: &str, toml: &str) -> RunResult {
    let sc = Scenario::from_str(toml, name, &[]).unwrap_or_else(|e| panic!("{name}: {e}"));
    let r = tinygram_sim::run(&sc);
    assert!(r.integrity_ok, "{name}: integrity");
    r
}

/// Westfield ("Improving TCP throughput", 1985): a one-way FTP-like transfer into a Tops-20 JFN
/// receiver that offers a 1456-byte window over a 10 Mb/s Ethernet, with a
/// 250 ms "sociable" delayed ACK that also holds window updates. The sender's
/// RTO floor is RFC 6298's 1 s, so that the 250 ms delay is not mistaken for
/// a loss (see `westfield_delay_beyond_rto_min_disturbs_the_sender`).
fn westfield(ack_policy: &str) -> RunResult {
    westfield_with(ack_policy, "1s", "rto")
}

fn westfield_with(ack_policy: &str, client_rto_min: &str, client_rto_floor: &str) -> RunResult {
    let toml = format!(
        r#"
name = "westfield"
duration = "20s"
[link]
rate = "10Mbps"
delay = "50us"
[client]
rto_min = "{client_rto_min}"
rto_floor = "{client_rto_floor}"
[server]
mss = 1456
rcv_buf = 1456
delack = "250ms"
window_update = "delayed"
ack_policy = "{ack_policy}"
[workload]
type = "bulk"
bytes = "4MB"
direction = "client-to-server"
"#
    );
    run(&format!("westfield-{ack_policy}"), &toml)
}

#[test]
fn westfield_small_window_crawls_with_delayed_ack() {
    let r = westfield("delayed");
    let kbs = r.goodput_bytes_per_s / 1e3;
    eprintln!("westfield delayed: {kbs:.1} KB/s, finished {}", r.finished);
    // One 1456-byte segment per 250 ms timer: a few KB/s.
    assert!(kbs > 3.0 && kbs < 10.0, "{kbs} KB/s");
    assert!(r.server.delack_timer_fired > 50, "{:?}", r.server);
}

#[test]
fn westfield_interactivity_restores_link_speed() {
    let r = westfield("interactivity:2");
    let kbs = r.goodput_bytes_per_s / 1e3;
    eprintln!(
        "westfield interactivity:2: {kbs:.1} KB/s, finished {}",
        r.finished
    );
    assert!(r.finished);
    // 10 Mb/s is 1250 KB/s on the wire; a one-segment window per round trip
    // of about 1.4 ms still gets most of it.
    assert!(kbs > 800.0, "{kbs} KB/s");
    assert!(r.server.delack_timer_fired <= 3, "{:?}", r.server);
}

#[test]
fn westfield_fuzzball_keeps_delaying_in_a_one_segment_window() {
    // Mills' rule as written: the right edge never moves more than one MSS
    // in a 1456-byte window, so every ACK waits for the timer.
    let r = westfield("fuzzball");
    let kbs = r.goodput_bytes_per_s / 1e3;
    eprintln!("westfield fuzzball: {kbs:.1} KB/s");
    assert!(kbs < 10.0, "{kbs} KB/s");
    assert!(r.server.delack_timer_fired > 50, "{:?}", r.server);
}

#[test]
fn westfield_delay_beyond_rto_min_disturbs_the_sender() {
    // Alan Larson's point in Westfield's message: a delayed ACK disturbs the
    // sender's retransmission timing. With a Linux-like 200 ms RTO floor the
    // 250 ms delay makes every segment time out and go twice; the duplicate
    // is acknowledged at once (RFC 5681 4.2), so the crawl is one per RTO.
    let r = westfield_with("delayed", "200ms", "variance");
    assert!(r.client.timeouts > 50, "{:?}", r.client);
    assert!(
        r.client.retransmits * 5 > r.client.data_segments * 2,
        "{:?}",
        r.client
    );
    assert_eq!(r.server.delack_timer_fired, 0, "{:?}", r.server);
    assert!(r.goodput_bytes_per_s < 10e3, "{}", r.goodput_bytes_per_s);
}

#[test]
fn westfield_needs_delayed_window_updates() {
    // With window updates announced at once (BSD, Linux), a promptly reading
    // receiver reopens the one-segment window at once and no slowdown appears.
    let toml = r#"
duration = "20s"
[link]
rate = "10Mbps"
delay = "50us"
[server]
mss = 1456
rcv_buf = 1456
delack = "250ms"
ack_policy = "delayed"
[workload]
type = "bulk"
bytes = "1MB"
"#;
    let r = run("westfield-immediate-window", toml);
    assert_eq!(r.server.delack_timer_fired, 0, "{:?}", r.server);
    assert!(r.goodput_bytes_per_s > 600e3, "{}", r.goodput_bytes_per_s);
}

/// Cheshire (Nagle x delayed ACK): 100,000-byte requests (69 x 1448 + 88) from a Nagle
/// client, a 1-byte application ack from the server.
fn cheshire(server_ack: &str) -> RunResult {
    cheshire_rx(server_ack, "0us")
}

/// As [`cheshire`], with the server's receive coalescing interval.
fn cheshire_rx(server_ack: &str, rx_coalesce: &str) -> RunResult {
    let toml = format!(
        r#"
duration = "30s"
[link]
rate = "1Gbps"
delay = "50us"
[client]
mss = 1448
send_policy = "nagle"
[server]
mss = 1448
ack_policy = "{server_ack}"
rx_coalesce = "{rx_coalesce}"
[workload]
type = "request-response"
request = [100000]
response = [1]
requests = 50
"#
    );
    run(&format!("cheshire-{server_ack}-rx{rx_coalesce}"), &toml)
}

#[test]
fn cheshire_quickack_server() {
    let d = cheshire("delayed");
    let q = cheshire("quickack");
    eprintln!(
        "cheshire delayed: {:.1} tx/s p50 {:.1} ms, timers {}; quickack: {:.1} tx/s p50 {:.1} ms p99 {:.1} ms, timers {}",
        d.transactions_per_s,
        d.completion_ms.p50,
        d.server.delack_timer_fired,
        q.transactions_per_s,
        q.completion_ms.p50,
        q.completion_ms.p99,
        q.server.delack_timer_fired
    );
    // The classic stall: the 69th segment is alone, its ACK waits 200 ms while
    // Nagle holds the 88-byte tail.
    assert!(d.completion_ms.p50 > 190.0, "{:?}", d.completion_ms);
    // The quick-ACK rules alone answer the lone segment after the ACK timeout,
    // which on a LAN is the 40 ms floor (TCP_ATO_MIN), not 200 ms: the stall
    // remains on every block but is five times shorter.
    assert!(
        q.completion_ms.p99 < 50.0 && q.completion_ms.p50 > 35.0,
        "{:?}",
        q.completion_ms
    );
    assert!(q.transactions_per_s > 4.0 * d.transactions_per_s);
}

/// Cheshire's case against a Linux-like receiver: quick-ACK rules plus receive
/// coalescing (interrupt moderation + GRO), so the ACK rule "more than one MSS
/// unacknowledged" sees the burst's last segments together. Measured against
/// Linux 6.18 over TUN (a strict-Nagle tinygram client, a Python server
/// answering one byte per 100,000): 10-12 of 40 blocks stalled about 44 ms,
/// the rest did not. Here no block stalls: the model has no start-up phase.
#[test]
fn cheshire_linux_like_receiver_does_not_stall_on_most_blocks() {
    let q = cheshire_rx("quickack", "50us");
    eprintln!(
        "cheshire quickack + rx_coalesce 50us: {:.1} tx/s p50 {:.2} ms p99 {:.2} ms, timers {}",
        q.transactions_per_s, q.completion_ms.p50, q.completion_ms.p99, q.server.delack_timer_fired
    );
    assert_eq!(q.transactions, 50);
    assert!(q.completion_ms.p50 < 10.0, "{:?}", q.completion_ms);
    assert!(q.server.delack_timer_fired < 25, "{:?}", q.server);
    // Coalescing that merges nothing (under one frame time at 1 Gb/s) changes nothing.
    let tiny = cheshire_rx("quickack", "5us");
    assert!(tiny.completion_ms.p50 > 35.0, "{:?}", tiny.completion_ms);
}

/// A coalesced burst reaches TCP as a GRO packet of its segments: the
/// receiver counts each piece (Linux tcp_segs_in), so its data segments
/// received equal the sender's data segments sent with or without coalescing,
/// and under BSD's "ACK every second segment" a merged pair is answered at
/// once (FreeBSD's DELAY_ACK never delays a segment longer than t_maxseg).
#[test]
fn coalesced_bursts_count_as_their_segments() {
    let run = |rx_coalesce: &str| {
        let toml = format!(
            r#"
duration = "10s"
[link]
rate = "1Gbps"
delay = "1ms"
[server]
ack_policy = "delayed"
rx_coalesce = "{rx_coalesce}"
[workload]
type = "bulk"
bytes = 2000000
"#
        );
        let sc = Scenario::from_str(&toml, "coalesced", &[]).expect("scenario");
        let mut sim = Sim::new(&sc);
        let r = sim.run(&mut |_, _| {});
        assert!(r.integrity_ok, "{r:?}");
        let sent = sim.connection(0).counters().data_segments_sent;
        let got = sim.connection(1).counters().clone();
        (sent, got)
    };
    let (sent, plain) = run("0us");
    let (sent_merged, merged) = run("200us");
    assert_eq!(plain.data_segments_received, sent);
    assert_eq!(merged.data_segments_received, sent_merged);
    // Coalescing merged something, and merged pairs drew every-2nd-segment ACKs.
    assert!(merged.acks_every_nth > 0, "{merged:?}");
    assert!(
        merged.pure_acks_sent < plain.pure_acks_sent,
        "{} vs {}",
        merged.pure_acks_sent,
        plain.pure_acks_sent
    );
}

#[test]
fn cheshire_quickack_server_minshall_client_does_not_stall() {
    let toml = r#"
duration = "30s"
[link]
rate = "1Gbps"
delay = "50us"
[client]
mss = 1448
send_policy = "minshall"
[server]
mss = 1448
ack_policy = "quickack"
[workload]
type = "request-response"
request = [100000]
response = [1]
requests = 50
"#;
    let r = run("cheshire-minshall-quickack", toml);
    assert!(r.completion_ms.p99 < 10.0, "{:?}", r.completion_ms);
    assert_eq!(r.server.delack_timer_fired, 0);
}
