//! Segment-level tests of the send policies, encoding the worked examples of
//! the source documents (Doupnik, A new TCP transmission policy; Davids, TCP -- Either Fast or Efficient; Cheshire, Nagle x delayed ACK).

mod common;

use common::{Pair, A, B};
use proptest::prelude::*;
use tinygram_proto::policy::SendPolicyKind;
use tinygram_proto::{Config, Duration, Instant, State};

const MSS: usize = 1000;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn policy(name: &str) -> Config {
    Config {
        mss: MSS as u16,
        send_policy: name.parse().unwrap(),
        ..Config::default()
    }
}

/// A (sender, policy `name`) connected to B (default: delayed ACKs, 200 ms),
/// one-way delay 10 ms.
fn pair(name: &str, b: Config) -> Pair {
    let mut p = Pair::new(policy(name), b, 100, 900, ms(10));
    p.run_until(ms(100), true, |p| {
        p.conns[A].state() == State::Established && p.conns[B].state() == State::Established
    });
    p.log.clear();
    p
}

fn receiver() -> Config {
    Config {
        mss: MSS as u16,
        ..Config::default()
    }
}

/// Doupnik 1.4, first case: 3.5 MSS written, all allowed.
#[test]
fn doupnik_1_4_all_allowed() {
    for (name, tail_waits) in [
        ("nagle", true),
        ("nagle-liberal", false),
        ("minshall", false),
        ("doupnik", false),
        ("doupnik-liberal", false),
        ("nodelay", false),
    ] {
        let mut p = pair(name, receiver());
        let t0 = p.now;
        p.write(A, 3500);
        p.run(ms(2000));
        let d = p.data_from(A);
        let sizes: Vec<usize> = d.iter().map(|x| x.2).collect();
        assert_eq!(sizes, vec![1000, 1000, 1000, 500], "{name}");
        assert!(
            d[..3].iter().all(|x| x.0 == t0),
            "{name}: full segments at once"
        );
        if tail_waits {
            // Held until *all* preceding data is acknowledged: B ACKs the 2nd
            // segment at once and the 3rd only after its 200 ms delayed-ACK timer.
            assert_eq!(
                d[3].0,
                t0 + ms(10) + ms(200) + ms(10),
                "{name}\n{}",
                p.dump()
            );
        } else {
            assert_eq!(d[3].0, t0, "{name}: tail goes with the full segments");
        }
        p.check_integrity(B);
    }
}

/// Doupnik 1.4 second case and 1.5: the window allows only 2 MSS, so 1.5 MSS
/// waits invisible to the policy; at the next opportunity the tail is a runt
/// behind unacknowledged data.
#[test]
fn doupnik_1_5_window_blocked_remainder() {
    let b = Config {
        rcv_buf: 2 * MSS,
        ..receiver()
    };
    let mut results = Vec::new();
    for name in ["nagle", "nagle-liberal", "minshall", "doupnik"] {
        let mut p = pair(name, b.clone());
        let t0 = p.now;
        p.write(A, 3500);
        p.run(ms(2000));
        let d = p.data_from(A);
        let tail = d.iter().find(|x| x.2 == 500).expect("tail sent");
        results.push((name, tail.0 - t0));
        p.check_integrity(B);
    }
    let at = |n: &str| results.iter().find(|r| r.0 == n).unwrap().1;
    // Two full segments go. B (reading promptly, 2-MSS buffer) answers each
    // with a window update, so at 20 ms two opportunities follow each other:
    // the first lets one more full segment out, the second finds only the
    // 0.5 MSS tail behind unacknowledged data. Doupnik and Minshall send it;
    // both Nagle forms hold it, liberal Nagle too, exactly as 1.5 describes,
    // until the third segment is acknowledged.
    assert_eq!(at("doupnik"), ms(20), "{results:?}");
    assert_eq!(at("minshall"), ms(20), "{results:?}");
    assert!(at("nagle-liberal") > ms(20), "{results:?}");
    assert!(at("nagle") > ms(20), "{results:?}");
}

/// write(small), write(small), read(): the second write waits under Nagle
/// until the first is ACKed; doupnik sends both; Minshall holds the second
/// only while the first runt is unacknowledged.
#[test]
fn two_small_writes() {
    for (name, second_waits) in [
        ("nagle", true),
        ("nagle-liberal", true),
        ("minshall", true),
        ("doupnik", false),
        ("nodelay", false),
    ] {
        let mut p = pair(name, receiver());
        let t0 = p.now;
        p.write(A, 100);
        p.advance_to(t0, true); // each write() runs output, as a socket write does
        p.write(A, 100);
        p.run(ms(1000));
        let d = p.data_from(A);
        assert_eq!(d[0].0, t0, "{name}");
        if second_waits {
            assert_eq!(d.len(), 2, "{name}");
            assert_eq!(
                d[1].0,
                t0 + ms(220),
                "{name}: after the delayed ACK\n{}",
                p.dump()
            );
        } else {
            assert_eq!(d[1].0, t0, "{name}: both at once");
        }
        p.check_integrity(B);
    }
}

/// Minshall's runt rule is about runts only: after a full segment is in
/// flight, a runt goes at once.
#[test]
fn minshall_sends_runt_behind_full_segment() {
    let mut p = pair("minshall", receiver());
    let t0 = p.now;
    p.write(A, 1000);
    p.write(A, 100);
    p.run(ms(1000));
    let d = p.data_from(A);
    assert_eq!((d[1].0, d[1].2), (t0, 100));
}

/// Cheshire: 100,000 bytes with MSS 1448 = 69 full segments and an 88-byte
/// runt. Strict Nagle holds the runt until the last full segment is ACKed,
/// which the receiver delays; Minshall and doupnik send it at once.
#[test]
fn cheshire_runt() {
    for (name, stalls) in [("nagle", true), ("minshall", false), ("doupnik", false)] {
        let cfg = |p: &str| Config {
            mss: 1448,
            send_policy: p.parse().unwrap(),
            // A window the SYN can carry whole: with a larger scaled buffer the
            // first read opens the window by more than 2 MSS, the window update
            // ACKs one segment alone, and the pairing (hence the stall) flips.
            rcv_buf: 65_535,
            initial_window: 100,
            ..Config::default()
        };
        let mut p = Pair::new(cfg(name), cfg("nagle"), 1, 2, ms(1));
        p.run_until(ms(100), true, |p| p.conns[B].state() == State::Established);
        p.log.clear();
        let t0 = p.now;
        p.write(A, 100_000);
        p.run(ms(2000));
        let d = p.data_from(A);
        assert_eq!(d.len(), 70, "{name}");
        assert!(d[..69].iter().all(|x| x.2 == 1448), "{name}");
        assert_eq!(d[69].2, 88);
        // The runt's wait after the last full segment left.
        let wait = d[69].0 - d[68].0;
        if stalls {
            assert!(
                wait >= ms(200),
                "{name}: runt waited {wait:?}\n{}",
                p.dump()
            );
            assert_eq!(p.conns[A].counters().policy_holds, 1);
        } else {
            assert_eq!(wait, Duration::ZERO, "{name}");
            assert_eq!(p.conns[A].counters().policy_holds, 0);
        }
        let _ = t0;
        p.check_integrity(B);
    }
}

/// Doupnik 2.2's "abuse" case: 1-byte writes in a loop. Nagle coalesces while
/// an ACK is outstanding; doupnik sends every write (the documented cost).
#[test]
fn one_byte_writes() {
    let mut counts = Vec::new();
    for name in ["nagle", "doupnik"] {
        let mut p = pair(name, receiver());
        for i in 0..50 {
            p.write(A, 1);
            p.advance_to(p.now + ms(1) * (i > 0) as u32, true);
        }
        p.run(ms(2000));
        counts.push(p.data_from(A).len());
        p.check_integrity(B);
    }
    assert_eq!(counts[1], 50, "doupnik sends each write");
    assert!(counts[0] < 10, "nagle coalesces: {counts:?}");
}

/// MSG_MORE under doupnik holds a partial segment until the next write or a
/// flush, independent of ACKs.
#[test]
fn more_follows_under_doupnik() {
    let mut p = pair("doupnik", receiver());
    let t0 = p.now;
    p.write_more(A, 300, true);
    p.advance_to(t0 + ms(500), true);
    assert!(p.data_from(A).is_empty(), "held while more follows");
    p.write(A, 200);
    p.advance_to(t0 + ms(501), true);
    let d = p.data_from(A);
    assert_eq!((d[0].0, d[0].2), (t0 + ms(500), 500));
    // And a flush releases it too.
    p.write_more(A, 10, true);
    p.advance_to(t0 + ms(700), true);
    assert_eq!(p.data_from(A).len(), 1);
    p.conns[A].flush();
    p.advance_to(t0 + ms(701), true);
    assert_eq!(p.data_from(A).len(), 2);
    p.run(ms(1000));
    p.check_integrity(B);
}

/// Cork holds partial segments until a flush, and at most 200 ms.
#[test]
fn cork_until_flush_or_cap() {
    let mut p = pair("cork", receiver());
    let t0 = p.now;
    p.write(A, 2500);
    p.advance_to(t0 + ms(50), true);
    let d = p.data_from(A);
    assert_eq!(d.len(), 2, "full segments only");
    p.conns[A].flush();
    p.advance_to(t0 + ms(51), true);
    let d = p.data_from(A);
    assert_eq!((d[2].0, d[2].2), (t0 + ms(50), 500));
    // Without a flush, the cap releases it.
    let t1 = p.now + ms(1000);
    p.advance_to(t1, true);
    p.write(A, 300);
    p.run(ms(1000));
    let d = p.data_from(A);
    assert_eq!((d[3].0 - t1, d[3].2), (ms(200), 300));
    p.check_integrity(B);
}

/// An explicit flush pushes what was written under every policy (tcp(7):
/// clearing TCP_CORK sends all queued partial frames), even behind data in flight.
#[test]
fn flush_pushes_under_every_policy() {
    for (name, _) in SendPolicyKind::ALL {
        let name = name.replace(":N", ":30");
        let mut p = pair(&name, receiver());
        let t0 = p.now;
        p.write(A, 1000);
        p.write_more(A, 20, true);
        p.advance_to(t0 + ms(5), true);
        p.conns[A].flush();
        p.advance_to(t0 + ms(6), true);
        let d = p.data_from(A);
        assert_eq!(d.iter().map(|x| x.2).sum::<usize>(), 1020, "{name}: {d:?}");
        assert!(d.iter().all(|x| x.0 <= t0 + ms(5)), "{name}: {d:?}");
        p.run(ms(1000));
        p.check_integrity(B);
    }
}

/// The send policy of a live connection can change (setsockopt TCP_NODELAY
/// or TCP_CORK on Linux): corked data goes as soon as the policy is nodelay.
#[test]
fn send_policy_changes_on_a_live_connection() {
    let mut p = pair("cork", receiver());
    let t0 = p.now;
    p.write(A, 1500);
    p.advance_to(t0 + ms(50), true);
    assert_eq!(p.data_from(A).len(), 1, "cork sends the full segment only");
    let now = p.now;
    p.conns[A].set_send_policy(now, "nodelay".parse().unwrap());
    assert_eq!(p.conns[A].config().send_policy.to_string(), "nodelay");
    p.advance_to(t0 + ms(51), true);
    let d = p.data_from(A);
    assert_eq!((d[1].0, d[1].2), (t0 + ms(50), 500), "{d:?}");
    p.run(ms(1000));
    p.check_integrity(B);
}

/// Cork's 200 ms cap runs from when the socket was corked, not from when an
/// earlier policy began holding the same data.
#[test]
fn cork_cap_counts_from_corking() {
    let mut p = pair("doupnik", receiver());
    let t0 = p.now;
    p.write_more(A, 300, true);
    p.advance_to(t0 + ms(1000), true);
    assert!(
        p.data_from(A).is_empty(),
        "doupnik holds data that is not the end"
    );
    p.conns[A].set_send_policy(t0 + ms(1000), "cork".parse().unwrap());
    p.advance_to(t0 + ms(1199), true);
    assert!(p.data_from(A).is_empty(), "corked for 199 ms only");
    p.advance_to(t0 + ms(1201), true);
    let d = p.data_from(A);
    assert_eq!((d[0].0, d[0].2), (t0 + ms(1200), 300), "{d:?}");
}

/// naglim:30 with 10-byte writes (Davids, trace 5): holds until 30 bytes are
/// ready or the ACK arrives.
#[test]
fn naglim_30() {
    let mut p = pair("naglim:30", receiver());
    let t0 = p.now;
    for i in 0..12u32 {
        p.advance_to(t0 + ms(5) * i, true);
        p.write(A, 10);
    }
    p.run(ms(2000));
    let d = p.data_from(A);
    assert_eq!(d[0].2, 10, "first write goes: nothing unacknowledged");
    // While data is in flight, nothing under 30 bytes goes; only the final
    // remainder, once everything before it is acknowledged.
    assert!(d[1..d.len() - 1].iter().all(|x| x.2 >= 30), "{d:?}");
    assert!(d.len() <= 6, "packets cut from 12 writes: {d:?}");
    // ...without lengthening the send much: all out within one RTT of the last write.
    assert!(d.last().unwrap().0 <= t0 + ms(55) + ms(20), "{d:?}");
    p.check_integrity(B);
}

/// PSH is set on the segment that ends each application write, under every policy.
#[test]
fn psh_at_every_write_end() {
    for (name, _) in SendPolicyKind::ALL {
        let name = name.replace(":N", ":30");
        let mut p = pair(&name, receiver());
        p.write(A, 2500);
        p.conns[A].flush();
        p.run(ms(2000));
        let d = p.data_from(A);
        let last = d.iter().max_by_key(|x| x.1).unwrap();
        assert!(last.3, "{name}: PSH on the last segment {d:?}");
        assert!(
            d.iter().filter(|x| x.1 + x.2 < 2500).all(|x| !x.3),
            "{name}: no PSH before the end {d:?}"
        );
    }
}

/// The why-trace names the rule and the time a hold lasted.
#[test]
fn trace_records_hold_and_release() {
    let mut a = policy("nagle");
    a.trace = true;
    let mut p = Pair::new(a, receiver(), 1, 2, ms(10));
    p.run_until(ms(100), true, |p| p.conns[B].state() == State::Established);
    p.write(A, 3500);
    p.run(ms(2000));
    let mut t = Vec::new();
    p.conns[A].drain_trace(&mut t);
    let text: Vec<String> = t.iter().map(|e| e.to_string()).collect();
    let hold = text
        .iter()
        .find(|s| s.contains("hold 500 B (nagle"))
        .expect("hold");
    assert!(hold.contains("3000 B unacknowledged"), "{hold}");
    assert!(
        text.iter()
            .any(|s| s.contains("release 500 B held 220.000 ms by nagle")),
        "{text:?}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    /// No policy holds data forever, whatever the MSS, the peer's buffer (half
    /// the cases under one MSS, down to 1 byte: RFC 1122 4.2.3.4's sender SWS
    /// rule and its override timer must still move the data), the write sizes
    /// and the gaps: every byte is delivered.
    #[test]
    fn every_policy_delivers_every_byte(
        policy_ix in 0usize..8,
        mss in 64u16..1500,
        below_mss in any::<bool>(),
        rcv_draw in 1usize..8000,
        writes in proptest::collection::vec((1usize..3000, 0u64..30, any::<bool>()), 1..25),
        seed in any::<u32>(),
    ) {
        let names = ["nodelay", "nagle", "nagle-liberal", "minshall", "doupnik",
                     "doupnik-liberal", "naglim:30", "cork"];
        let mss_b = mss as usize;
        // The peer's receive buffer, hence the largest window it ever offers.
        let rcv = if below_mss { 1 + rcv_draw % (mss_b - 1) } else { mss_b + rcv_draw };
        let a = Config { mss, send_policy: names[policy_ix].parse().unwrap(), ..Config::default() };
        let b = Config { mss, rcv_buf: rcv, ..Config::default() };
        prop_assert!(b.validate().is_ok(), "a {rcv}-byte receive buffer is a legal config");
        let mut p = Pair::new(a, b, seed, seed.wrapping_mul(7), ms(2));
        p.run_until(ms(100), true, |p| p.conns[A].state() == State::Established);
        let mut total = 0;
        for (n, gap, more) in writes {
            // The last write never says "more follows": the application ends its data.
            let k = p.write_more(A, n, more);
            total += k;
            let t = p.now + ms(gap);
            p.advance_to(t, true);
        }
        p.conns[A].flush();
        // A tiny window moves at most one window per round trip (or per override
        // timeout): allow a second of virtual time per window's worth of data.
        let limit = Duration::from_secs(120 + (total / rcv) as u64);
        p.run_until(limit, true, |p| p.received[B].len() == total);
        prop_assert_eq!(p.received[B].len(), total, "policy {} mss {} rcv {}\n{}",
            names[policy_ix], mss, rcv, p.dump());
        p.check_integrity(B);
        let _ = Instant::ZERO;
    }
}
