//! Segment-level tests of the options and the loss recovery they enable:
//! malformed option bytes, memory caps (RFC 1106 5), NAK (RFC 1106 2) and
//! SACK (RFC 2018, RFC 6675) recovery between two engines.

mod common;

use common::{Fate, Pair, A, B};
use tinygram_proto::wire::WireError;
use tinygram_proto::{
    BufferLimit, Config, Connection, Duration, Instant, IsnSeries, OptionSet, SeqNumber, State,
    TcpRepr, TraceEvent,
};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn with(opts: &[&str]) -> Config {
    let mut options = OptionSet::default();
    for o in opts {
        options.enable(o).unwrap();
    }
    Config {
        options,
        send_policy: "nodelay".parse().unwrap(),
        ..Config::default()
    }
}

/// A SYN's bytes with `opts` as its option bytes (padded by the caller).
fn syn_bytes(opts: &[u8]) -> Vec<u8> {
    let mut b = vec![0u8; 20];
    b[0..2].copy_from_slice(&40000u16.to_be_bytes());
    b[2..4].copy_from_slice(&80u16.to_be_bytes());
    b[4..8].copy_from_slice(&7u32.to_be_bytes());
    b[12] = (((20 + opts.len()) / 4) as u8) << 4;
    b[13] = 0x02; // SYN
    b[14..16].copy_from_slice(&65535u16.to_be_bytes());
    b.extend_from_slice(opts);
    b
}

#[test]
fn malformed_options_are_counted_traced_and_change_nothing() {
    let cfg = Config {
        trace: true,
        ..Config::default()
    };
    let mut c = Connection::listen(cfg, 80, IsnSeries::new(SeqNumber(1)));
    let now = Instant::ZERO;
    let cases: [(&[u8], &str); 4] = [
        (&[2, 0, 0, 0], "zero length"),
        (&[2, 4, 5, 180, 8, 10, 0, 0], "past the header"),
        (&[2, 3, 5, 0], "MSS of the wrong size"),
        (
            &[253, 6, 0x11, 0x06, b'A', 0],
            "RFC 1106 NAK of the wrong size",
        ),
    ];
    for (i, (opts, what)) in cases.iter().enumerate() {
        let e = c.handle_bytes(now, &syn_bytes(opts), None);
        assert!(
            matches!(e, Err(WireError::BadOption { .. })),
            "{what}: {e:?}"
        );
        assert_eq!(c.counters().invalid_segments, i as u64 + 1, "{what}");
        assert_eq!(c.state(), State::Listen, "{what}");
    }
    let mut tr = Vec::new();
    c.drain_trace(&mut tr);
    assert_eq!(
        tr.iter()
            .filter(|e| matches!(e, TraceEvent::InvalidSegment { .. }))
            .count(),
        4
    );
    let mut buf = Vec::new();
    assert!(c.poll_transmit(now, &mut buf).is_none(), "nothing answered");
    // Unknown kinds are skipped, and a well-formed SYN is processed.
    c.handle_bytes(now, &syn_bytes(&[99, 4, 1, 2, 2, 4, 5, 180]), None)
        .unwrap();
    assert_eq!(c.state(), State::SynReceived);
    assert_eq!(c.counters().invalid_segments, 4);
}

#[test]
fn buffer_caps_limit_what_is_offered_and_say_why() {
    let mut cfg = with(&["bigwin"]);
    cfg.rcv_buf = 1 << 20;
    cfg.buffer_cap = 256 * 1024;
    cfg.trace = true;
    let mut c = Connection::connect(
        cfg.clone(),
        40000,
        80,
        IsnSeries::new(SeqNumber(1)),
        Instant::ZERO,
    );
    let mut buf = Vec::new();
    let syn = c.poll_transmit(Instant::ZERO, &mut buf).unwrap();
    assert_eq!(syn.options.big_window_offer, Some(256 * 1024));
    assert_eq!(
        c.rcv_buf_granted(),
        (256 * 1024, Some(BufferLimit::Connection))
    );
    assert_eq!(c.counters().rcv_buf_capped, 1);
    let mut tr = Vec::new();
    c.drain_trace(&mut tr);
    assert!(tr.iter().any(|e| matches!(
        e,
        TraceEvent::BufferCapped {
            granted: 262_144,
            requested: 1_048_576,
            limit: BufferLimit::Connection,
            ..
        }
    )));
    // The host's budget is the tighter limit here.
    cfg.host_budget = Some(100_000);
    let c = Connection::connect(cfg, 40000, 80, IsnSeries::new(SeqNumber(1)), Instant::ZERO);
    assert_eq!(c.rcv_buf_granted(), (100_000, Some(BufferLimit::Host)));
}

/// Drops the data segments from A whose offsets (from A's ISN + 1) are listed, once each.
fn drop_first_send(offsets: &'static [usize]) -> common::FateFn {
    let mut seen = std::collections::HashSet::new();
    Box::new(move |side, r: &TcpRepr, len| {
        let off = r.seq.0.wrapping_sub(1001) as usize;
        if side == A && len > 0 && offsets.contains(&off) && seen.insert(off) {
            Fate::Drop
        } else {
            Fate::Deliver
        }
    })
}

fn bulk(opts: &[&str], drops: &'static [usize]) -> Pair {
    let mut p = Pair::new(with(opts), with(opts), 1000, 5000, ms(50));
    p.fate = drop_first_send(drops);
    p.run_until(ms(1000), true, |p| p.conns[A].state() == State::Established);
    p.write(A, 30 * 1460);
    p.run(ms(20_000));
    p.check_integrity(B);
    p
}

#[test]
fn nak_repairs_a_single_loss_and_a_burst_without_timeout_or_dupacks() {
    let p = bulk(&["nak"], &[2 * 1460, 10 * 1460, 11 * 1460, 12 * 1460]);
    let a = p.conns[A].counters();
    let b = p.conns[B].counters();
    assert!(p.conns[A].nak_enabled());
    assert_eq!(
        b.naks_sent,
        2,
        "one NAK per gap, never repeated\n{}",
        p.dump()
    );
    assert_eq!(a.naks_received, 2);
    assert_eq!(a.nak_retransmits, 4, "{}", p.dump());
    assert_eq!((a.timeouts, a.fast_retransmits), (0, 0), "{}", p.dump());
    assert_eq!(a.retransmits, 4);
}

#[test]
fn sack_recovery_repairs_several_holes_in_one_round_trip() {
    let p = bulk(&["sack"], &[2 * 1460, 5 * 1460, 8 * 1460]);
    let a = p.conns[A].counters();
    assert!(p.conns[A].sack_enabled());
    assert_eq!(a.sack_recoveries, 1, "{}", p.dump());
    assert_eq!(a.sack_retransmits, 3, "{}", p.dump());
    assert_eq!((a.timeouts, a.retransmits), (0, 3), "{}", p.dump());
    // All three holes resent within one round trip (100 ms) of the first.
    let r = rexmit_times(&p);
    assert_eq!(r.len(), 3);
    assert!(r[2] - r[0] <= ms(100), "{r:?}");
}

/// When A resent data it had sent before.
fn rexmit_times(p: &Pair) -> Vec<Instant> {
    p.data_from(A)
        .iter()
        .scan(0usize, |hi, &(t, off, len, _)| {
            let r = off < *hi;
            *hi = (*hi).max(off + len);
            Some((t, r))
        })
        .filter(|&(_, r)| r)
        .map(|(t, _)| t)
        .collect()
}

#[test]
fn newreno_needs_a_round_trip_per_hole() {
    let p = bulk(&[], &[2 * 1460, 5 * 1460, 8 * 1460]);
    let a = p.conns[A].counters();
    assert_eq!(a.retransmits, 3, "{}", p.dump());
    assert_eq!(a.sack_retransmits, 0);
    let r = rexmit_times(&p);
    assert!(r[2] - r[0] >= ms(200), "{r:?}");
}

#[test]
fn timestamps_take_12_bytes_from_the_mss_and_measure_rtt() {
    let p = bulk(&["timestamps"], &[]);
    assert!(p.conns[A].timestamps_enabled());
    assert_eq!(p.conns[A].effective_mss(), 1448);
    assert!(p.data_from(A).iter().all(|&(_, _, len, _)| len <= 1448));
    let srtt = p.conns[A].srtt().unwrap();
    // RTTM sees the path's 100 ms plus any delayed-ACK wait (RFC 7323 4.1).
    assert!(srtt >= ms(100) && srtt < ms(300), "{srtt:?}");
}
