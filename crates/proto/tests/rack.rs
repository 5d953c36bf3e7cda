//! RACK (RFC 8985 6): a segment is lost by time once one sent after it is
//! delivered; reordering inside the window is not a loss.

mod common;

use common::{pass, Pair, A};
use tinygram_proto::{Config, Connection, Duration, Instant, IsnSeries, SeqNumber, State, TcpRepr};

fn cfg(rack: bool) -> Config {
    let mut c = common::eager_config(&["sack"]);
    c.recovery.rack = rack;
    c
}

/// An established pair; at 1 s the sender sends four segments, returned unsent.
fn four_in_flight(rack: bool) -> (Connection, Connection, Vec<(TcpRepr, Vec<u8>)>) {
    let t0 = Instant::ZERO;
    let mut a = Connection::connect(cfg(rack), 40000, 80, IsnSeries::new(SeqNumber(1)), t0);
    let mut b = Connection::listen(cfg(rack), 80, IsnSeries::new(SeqNumber(9)));
    let mut p = Vec::new();
    let syn = a.poll_transmit(t0, &mut p).unwrap();
    b.handle_segment(t0, &syn, &p);
    let t1 = Instant::from_millis(100);
    let synack = b.poll_transmit(t0, &mut p).unwrap();
    a.handle_segment(t1, &synack, &p);
    for _ in 0..5 {
        pass(&mut a, &mut b, t1);
        pass(&mut b, &mut a, t1);
    }
    let now = Instant::from_millis(1000);
    a.write(&vec![5u8; 4 * 1460], false).unwrap();
    let mut segs = Vec::new();
    while let Some(r) = a.poll_transmit(now, &mut p) {
        segs.push((r, std::mem::take(&mut p)));
    }
    assert_eq!(segs.len(), 4);
    (a, b, segs)
}

/// Delivers segment `i` to `b` at `at` and `b`'s ACK back to `a`.
fn deliver(
    a: &mut Connection,
    b: &mut Connection,
    segs: &[(TcpRepr, Vec<u8>)],
    i: usize,
    at: Instant,
) {
    b.handle_segment(at, &segs[i].0, &segs[i].1);
    pass(b, a, at);
}

#[test]
fn one_sack_then_time_marks_the_hole_lost() {
    for rack in [true, false] {
        let (mut a, mut b, segs) = four_in_flight(rack);
        let una = segs[0].0.seq;
        // The first segment is lost; the second arrives and is SACKed 100 ms
        // after it was sent: one duplicate ACK, far below DupThresh.
        deliver(&mut a, &mut b, &segs, 1, Instant::from_millis(1100));
        let mut p = Vec::new();
        assert!(a
            .poll_transmit(Instant::from_millis(1100), &mut p)
            .is_none());
        let at = a.poll_timeout().unwrap();
        if rack {
            // RACK.rtt (100 ms) + min_RTT / 4 (25 ms) after it was sent.
            assert_eq!(at, Instant::from_millis(1125));
        } else {
            assert!(at > Instant::from_millis(1125), "only the RTO is armed");
        }
        a.handle_timeout(at);
        let r = a.poll_transmit(at, &mut p);
        if rack {
            let r = r.expect("the lost segment is resent");
            assert_eq!(r.seq, una);
            assert_eq!(p.len(), 1460);
            assert_eq!(a.counters().rack_losses, 1);
            assert_eq!(a.counters().timeouts, 0);
            assert_eq!(a.counters().sack_recoveries, 1);
        } else {
            // Without RACK the RTO resends it, a go-back-N timeout.
            assert_eq!(r.map(|r| r.seq), Some(una));
            assert_eq!(a.counters().timeouts, 1);
        }
    }
}

#[test]
fn reordering_inside_the_window_is_not_loss() {
    let (mut a, mut b, segs) = four_in_flight(true);
    deliver(&mut a, &mut b, &segs, 1, Instant::from_millis(1100));
    assert_eq!(a.poll_timeout(), Some(Instant::from_millis(1125)));
    // The "missing" segment was only late: it arrives inside the window.
    deliver(&mut a, &mut b, &segs, 0, Instant::from_millis(1110));
    let mut p = Vec::new();
    assert!(a
        .poll_transmit(Instant::from_millis(1110), &mut p)
        .is_none());
    let at = a.poll_timeout().unwrap();
    assert!(
        at > Instant::from_millis(1125),
        "the reordering timer is off"
    );
    a.handle_timeout(Instant::from_millis(1130));
    assert!(a
        .poll_transmit(Instant::from_millis(1130), &mut p)
        .is_none());
    assert_eq!(a.counters().rack_losses, 0);
    assert_eq!(a.counters().sack_recoveries, 0);
    assert_eq!(a.counters().fast_retransmits, 0);
}

#[test]
fn linux_profile_turns_rack_on() {
    let mut c = Config::default();
    tinygram_proto::profile::find("linux")
        .unwrap()
        .apply(&mut c);
    assert!(c.recovery.rack && c.recovery.tlp && c.recovery.prr);
    assert!(!Config::default().recovery.rack);
}

/// With NAKs negotiated RACK detects nothing (RFC 1106 4.3), yet its record
/// of sent segments leaves with the cumulative ACK: a long transfer keeps no
/// more than is in flight, whatever the peer negotiated.
#[test]
fn a_peer_that_negotiates_naks_cannot_grow_rack_s_record() {
    let mut c = common::eager_config(&["sack", "nak"]);
    c.recovery.rack = true;
    let mut p = Pair::new(c.clone(), c, 1, 9, Duration::from_millis(5));
    p.run_until(Duration::from_secs(1), true, |p| {
        p.conns.iter().all(|c| c.state() == State::Established)
    });
    assert!(p.conns[A].nak_enabled() && p.conns[A].sack_enabled());
    let mut left = 400_000;
    let mut most = 0;
    while left > 0 || p.conns[A].snd_una() != p.conns[A].snd_max() {
        left -= p.write(A, left.min(8192));
        if !p.step(true) {
            break;
        }
        let a = &p.conns[A];
        let (out, ..) = a.rack_counts().expect("RACK and SACK are on");
        let flight = a.snd_max().distance_from(a.snd_una());
        assert!(
            out <= flight,
            "{out} segments recorded, {flight} bytes in flight"
        );
        most = most.max(out);
    }
    assert_eq!(left, 0);
    assert!(most > 1, "the transfer had segments in flight");
    assert_eq!(p.conns[A].rack_counts().unwrap().0, 0);
    assert!(p.conns[A].counters().data_segments_sent > 200);
}
