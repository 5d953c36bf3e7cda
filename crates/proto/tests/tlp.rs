//! Tail Loss Probe (RFC 8985 7): when the probe timeout is armed and what the probe sends.

mod common;

use common::pass;
use tinygram_proto::{Config, Connection, Instant, IsnSeries, SeqNumber};

fn cfg(tlp: bool) -> Config {
    let mut c = common::eager_config(&["sack"]);
    c.recovery.tlp = tlp;
    c
}

/// Exchanges everything both ends send at `now` until they go quiet.
fn settle(a: &mut Connection, b: &mut Connection, now: Instant) {
    for _ in 0..20 {
        let ab = pass(a, b, now);
        let ba = pass(b, a, now);
        if !ab && !ba {
            return;
        }
    }
}

/// A connection with a 100 ms SRTT, then `segs` segments sent and lost at 1 s.
fn sender_with_tail(tlp: bool, segs: usize) -> (Connection, Instant) {
    let t0 = Instant::ZERO;
    let mut a = Connection::connect(cfg(tlp), 40000, 80, IsnSeries::new(SeqNumber(1)), t0);
    let mut b = Connection::listen(cfg(tlp), 80, IsnSeries::new(SeqNumber(9)));
    let mut p = Vec::new();
    let syn = a.poll_transmit(t0, &mut p).unwrap();
    b.handle_segment(t0, &syn, &p);
    let t1 = Instant::from_millis(100);
    let synack = b.poll_transmit(t0, &mut p).unwrap();
    a.handle_segment(t1, &synack, &p);
    settle(&mut a, &mut b, t1);
    assert!(a.srtt().is_some());
    let now = Instant::from_millis(1000);
    a.write(&vec![5u8; segs * 1460], false).unwrap();
    let mut sent = 0;
    while a.poll_transmit(now, &mut p).is_some() {
        sent += 1;
    }
    assert_eq!(sent, segs);
    (a, now)
}

#[test]
fn pto_is_two_srtt_before_the_rto() {
    let (a, now) = sender_with_tail(true, 2);
    let srtt = a.srtt().unwrap();
    // RFC 8985 7.2: two segments out, PTO = 2 SRTT, earlier than the RTO.
    assert!(now + srtt * 2 < now + a.rto());
    assert_eq!(a.poll_timeout(), Some(now + srtt * 2));
    // Without TLP the next deadline is the RTO.
    let (n, now) = sender_with_tail(false, 2);
    assert_eq!(n.poll_timeout(), Some(now + n.rto()));
}

#[test]
fn probe_resends_the_last_segment_and_keeps_cwnd() {
    let (mut a, _) = sender_with_tail(true, 2);
    let cwnd = a.cwnd();
    let at = a.poll_timeout().unwrap();
    a.handle_timeout(at);
    let mut p = Vec::new();
    let probe = a.poll_transmit(at, &mut p).expect("a probe");
    // The last segment again (RFC 8985 7.3), not the first as an RTO would.
    assert_eq!(probe.seq, a.snd_max() - 1460);
    assert_eq!(p.len(), 1460);
    assert!(a.poll_transmit(at, &mut p).is_none(), "one probe only");
    assert_eq!(a.counters().tlp_probes, 1);
    assert_eq!(a.counters().timeouts, 0);
    assert_eq!(a.cwnd(), cwnd);
    // The RTO is re-armed after the probe, and no second probe is scheduled.
    assert_eq!(a.poll_timeout(), Some(at + a.rto()));
}
