//! The ACK policies end to end on the test harness. Their why-trace: every
//! delay and every immediate ACK is an event whose text names the rule ("lone segment, timer 200 ms",
//! "interactivity 3 > 2", "right edge moved 2000 B", "out of order"), so the
//! `--explain` printer can quote it beside the send decisions.

mod common;

use common::{Fate, Pair, A, B};
use proptest::prelude::*;
use tinygram_proto::policy::AckReason;
use tinygram_proto::{Config, Duration, State, TraceEvent, WindowUpdate};

const MSS: usize = 1000;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn cfg(ack_policy: &str) -> Config {
    Config {
        mss: MSS as u16,
        send_policy: "nodelay".parse().unwrap(),
        ack_policy: ack_policy.parse().unwrap(),
        trace: true,
        ..Config::default()
    }
}

/// A sends to B (ACK policy `b`), 10 ms one way; the handshake's trace is dropped.
fn pair(b: Config) -> Pair {
    let mut p = Pair::new(cfg("delayed"), b, 100, 900, ms(10));
    p.run_until(ms(100), true, |p| {
        p.conns[A].state() == State::Established && p.conns[B].state() == State::Established
    });
    p.conns[B].drain_trace(&mut Vec::new());
    p.log.clear();
    p
}

fn trace(p: &mut Pair, side: usize) -> (Vec<TraceEvent>, Vec<String>) {
    let mut t = Vec::new();
    p.conns[side].drain_trace(&mut t);
    let text = t.iter().map(|e| e.to_string()).collect();
    (t, text)
}

#[test]
fn delayed_lone_segment_then_timer() {
    let mut p = pair(cfg("delayed"));
    p.write(A, 100);
    p.run(ms(1000));
    let (t, text) = trace(&mut p, B);
    assert!(
        text.iter().any(|s| s.contains("delay ACK of 1 segment(s)")
            && s.ends_with("(lone segment, timer 200 ms)")),
        "{text:#?}"
    );
    let sent = t
        .iter()
        .find_map(|e| match e {
            TraceEvent::AckSent { reason, waited, .. } => Some((*reason, *waited)),
            _ => None,
        })
        .expect("ACK sent");
    assert_eq!(sent, (AckReason::Timer { delay: ms(200) }, ms(200)));
    assert!(text
        .iter()
        .any(|s| s.contains("ACK (timer 200 ms) after 200.000 ms")));

    // Two segments: the second is acknowledged at once.
    p.write(A, 1000);
    p.write(A, 1000);
    p.run(ms(1000));
    let (_, text) = trace(&mut p, B);
    assert!(
        text.iter().any(|s| s.contains("ACK (second segment)")),
        "{text:#?}"
    );
}

#[test]
fn interactivity_reason_names_the_count() {
    let mut p = pair(cfg("interactivity:2"));
    for _ in 0..3 {
        p.write(A, 100);
        p.run(ms(1000));
    }
    let (_, text) = trace(&mut p, B);
    assert!(
        text.iter()
            .any(|s| s.ends_with("(interactivity 2 <= 2, timer 200 ms)")),
        "{text:#?}"
    );
    assert!(
        text.iter().any(|s| s.contains("ACK (interactivity 3 > 2)")),
        "{text:#?}"
    );
    assert_eq!(p.conns[B].counters().acks_interactivity, 1);
}

#[test]
fn fuzzball_reason_names_the_right_edge() {
    // 32 KiB: the SYN's 65535-byte window would leave one byte of a 64 KiB
    // buffer to be announced later, moving the edge 1001 B on the 2nd segment.
    let mut p = pair(Config {
        window_update: WindowUpdate::Delayed,
        rcv_buf: 32 * 1024,
        ..cfg("fuzzball")
    });
    p.write(A, 2000);
    p.run(ms(1000));
    let (_, text) = trace(&mut p, B);
    assert!(
        text.iter()
            .any(|s| s.ends_with("(right edge moved 1000 B, not more than one MSS, timer 200 ms)")),
        "{text:#?}"
    );
    assert!(
        text.iter()
            .any(|s| s.contains("ACK (right edge moved 2000 B)")),
        "{text:#?}"
    );
    assert_eq!(p.conns[B].counters().acks_right_edge, 1);
    assert_eq!(p.conns[B].counters().delack_timer_fired, 0);
}

#[test]
fn out_of_order_is_acknowledged_at_once_for_every_policy() {
    for policy in [
        "delayed",
        "interactivity:4",
        "fuzzball",
        "adaptive",
        "quickack",
    ] {
        let mut p = pair(cfg(policy));
        let mut n = 0;
        p.fate = Box::new(move |side, _, len| {
            if side == A && len > 0 {
                n += 1;
                if n == 1 {
                    return Fate::Drop;
                }
            }
            Fate::Deliver
        });
        p.write(A, 3000);
        p.run(ms(3000));
        p.check_integrity(B);
        let (_, text) = trace(&mut p, B);
        assert!(
            text.iter().any(|s| s.contains("ACK (out of order)")),
            "{policy}: {text:#?}"
        );
        assert!(p.conns[B].counters().acks_out_of_order >= 2, "{policy}");
    }
}

#[test]
fn every_policy_delivers_a_request_response_exchange() {
    for policy in [
        "immediate",
        "delayed",
        "interactivity:1",
        "fuzzball",
        "adaptive",
        "quickack",
    ] {
        for wu in [WindowUpdate::Immediate, WindowUpdate::Delayed] {
            let b = Config {
                window_update: wu,
                rcv_buf: 3 * MSS,
                ..cfg(policy)
            };
            let mut p = pair(b);
            p.write(A, 20_000);
            p.run(ms(20_000));
            p.write(B, 5_000);
            p.run(ms(20_000));
            p.check_integrity(B);
            p.check_integrity(A);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    /// No ACK policy starves the sender, whatever the MSS, the receive buffer
    /// (half the cases under one MSS, down to 1 byte: the receiver's window
    /// updates, RFC 1122 4.2.3.3, and the sender's SWS override timer,
    /// 4.2.3.4, must still move the data), the window-update mode, the write
    /// sizes and gaps.
    #[test]
    fn every_ack_policy_delivers_every_byte(
        policy_ix in 0usize..7,
        delayed_wu in any::<bool>(),
        full_only in any::<bool>(),
        mss in 64u16..1500,
        below_mss in any::<bool>(),
        rcv_draw in 1usize..8000,
        writes in proptest::collection::vec((1usize..3000, 0u64..300), 1..15),
        seed in any::<u32>(),
    ) {
        let names = ["immediate", "delayed", "interactivity:0", "interactivity:3",
                     "fuzzball", "adaptive", "quickack"];
        let mss_b = mss as usize;
        // The receiver's buffer, hence the largest window it ever offers.
        let rcv = if below_mss { 1 + rcv_draw % (mss_b - 1) } else { mss_b + rcv_draw };
        let a = Config { mss, send_policy: "nagle".parse().unwrap(), ..Config::default() };
        let b = Config {
            mss,
            rcv_buf: rcv,
            ack_policy: names[policy_ix].parse().unwrap(),
            window_update: if delayed_wu { WindowUpdate::Delayed } else { WindowUpdate::Immediate },
            delack_count: if full_only { tinygram_proto::DelackCount::Full } else { tinygram_proto::DelackCount::Any },
            ..Config::default()
        };
        prop_assert!(b.validate().is_ok(), "a {rcv}-byte receive buffer is a legal config");
        let mut p = Pair::new(a, b, seed, seed.wrapping_mul(7), ms(2));
        p.run_until(ms(100), true, |p| p.conns[A].state() == State::Established);
        let mut total = 0;
        for (n, gap) in writes {
            total += p.write(A, n);
            let t = p.now + ms(gap);
            p.advance_to(t, true);
        }
        // A tiny window moves at most one window per round trip (or per override
        // timeout): allow a second of virtual time per window's worth of data.
        let limit = Duration::from_secs(120 + (total / rcv) as u64);
        p.run_until(limit, true, |p| p.received[B].len() == total);
        prop_assert_eq!(p.received[B].len(), total, "policy {} mss {} rcv {} wu {:?} full_only {}\n{}",
            names[policy_ix], mss, rcv, if delayed_wu { "delayed" } else { "immediate" }, full_only, p.dump());
        p.check_integrity(B);
    }
}

/// Two segments' worth of data handed over as one packet: as a GRO packet of
/// two `gso_size` pieces it is two segments and draws the second-segment ACK
/// at once; as one plain segment it is one, and the ACK waits.
#[test]
fn gro_packet_counts_as_its_segments() {
    for gro in [true, false] {
        let mut p = pair(cfg("delayed"));
        let now = p.now;
        p.write(A, 2 * MSS);
        let (mut first, mut merged) = (None, Vec::new());
        let mut buf = Vec::new();
        while let Some(r) = p.conns[A].poll_transmit(now, &mut buf) {
            first.get_or_insert(r);
            merged.extend_from_slice(&buf);
            buf.clear();
        }
        let first = first.expect("A sends data");
        assert_eq!(merged.len(), 2 * MSS);
        if gro {
            p.conns[B].handle_gro_segment(now, &first, &merged, MSS);
        } else {
            p.conns[B].handle_segment(now, &first, &merged);
        }
        let ack = p.conns[B].poll_transmit(now, &mut buf);
        assert_eq!(ack.is_some(), gro, "gro {gro}: {ack:?}");
        let (_, text) = trace(&mut p, B);
        let want = if gro {
            "ACK (second segment)"
        } else {
            "delay ACK of 1 segment(s)"
        };
        assert!(text.iter().any(|s| s.contains(want)), "{text:#?}");
    }
}
