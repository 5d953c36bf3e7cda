//! ECN (RFC 3168) between two engines, segment by segment: negotiation, ECT(0)
//! on new data, CE echoed by ECE until CWR, one reduction per window.

mod common;

use tinygram_proto::{
    Config, Connection, Duration, Flags, Instant, IsnSeries, LossIs, SeqNumber, TcpRepr,
};

fn cfg(ecn: bool) -> Config {
    common::eager_config(if ecn { &["ecn"] } else { &[] })
}

/// One segment as sent: header, payload length, ECT(0) or not.
type Sent = (TcpRepr, usize, bool);

/// Everything `c` sends now.
fn drain(c: &mut Connection, now: Instant) -> Vec<(Sent, Vec<u8>)> {
    let mut out = Vec::new();
    loop {
        let mut p = Vec::new();
        let Some(r) = c.poll_transmit(now, &mut p) else {
            return out;
        };
        out.push(((r, p.len(), c.transmit_ect()), p));
    }
}

/// Delivers `segs` to `c`, the ones whose index is in `ce` marked CE.
fn deliver(c: &mut Connection, now: Instant, segs: &[(Sent, Vec<u8>)], ce: &[usize]) {
    for (i, ((r, _, _), p)) in segs.iter().enumerate() {
        if ce.contains(&i) {
            c.note_ce();
        }
        c.handle_segment(now, r, p);
    }
}

/// Opens a connection; returns (client, server, the SYN's flags, the SYN-ACK's flags).
fn open(client_ecn: bool, server_ecn: bool) -> (Connection, Connection, Flags, Flags) {
    let t = Instant::ZERO;
    let mut a = Connection::connect(cfg(client_ecn), 40000, 80, IsnSeries::new(SeqNumber(1)), t);
    let mut b = Connection::listen(cfg(server_ecn), 80, IsnSeries::new(SeqNumber(5000)));
    let syn = drain(&mut a, t);
    deliver(&mut b, t, &syn, &[]);
    let synack = drain(&mut b, t);
    deliver(&mut a, t, &synack, &[]);
    let ack = drain(&mut a, t);
    deliver(&mut b, t, &ack, &[]);
    (a, b, syn[0].0 .0.flags, synack[0].0 .0.flags)
}

#[test]
fn negotiation_needs_both_sides() {
    let (a, b, syn, synack) = open(true, true);
    // RFC 3168 6.1.1: ECN-setup SYN carries ECE and CWR, the SYN-ACK ECE only.
    assert!(syn.contains(Flags::ECE) && syn.contains(Flags::CWR));
    assert!(synack.contains(Flags::ECE) && !synack.contains(Flags::CWR));
    assert!(a.ecn_enabled() && b.ecn_enabled());
    let (a, b, syn, synack) = open(true, false);
    assert!(syn.contains(Flags::ECE));
    assert!(!synack.contains(Flags::ECE));
    assert!(!a.ecn_enabled() && !b.ecn_enabled());
    let (a, b, syn, _) = open(false, true);
    assert!(!syn.contains(Flags::ECE));
    assert!(!a.ecn_enabled() && !b.ecn_enabled());
}

#[test]
fn new_data_is_ect0_and_control_segments_are_not() {
    let (mut a, _b, _, _) = open(true, true);
    let t = Instant::from_millis(1);
    assert_eq!(a.write(&[7u8; 3000], false).unwrap(), 3000);
    let out = drain(&mut a, t);
    assert!(!out.is_empty());
    assert!(out.iter().all(|((_, len, ect), _)| *len > 0 && *ect));
    // Without ECN nothing is ECT.
    let (mut a, _b, _, _) = open(false, false);
    a.write(&[7u8; 3000], false).unwrap();
    assert!(drain(&mut a, t).iter().all(|((_, _, ect), _)| !ect));
}

#[test]
fn ce_is_echoed_until_cwr_and_reduces_once_per_window() {
    let (mut a, mut b, _, _) = open(true, true);
    let mut now = Instant::from_millis(10);
    let step = Duration::from_millis(10);
    a.write(&vec![1u8; 20 * 1460], false).unwrap();
    let burst = drain(&mut a, now);
    assert!(burst.len() >= 4);
    let cwnd_before = a.cwnd();
    // The second segment arrives CE: every ACK from then on carries ECE.
    let mut acks = Vec::new();
    for (i, seg) in burst.iter().enumerate() {
        deliver(
            &mut b,
            now,
            std::slice::from_ref(seg),
            if i == 1 { &[0] } else { &[] },
        );
        acks.extend(drain(&mut b, now));
    }
    assert!(acks.len() >= 3, "{} ACKs", acks.len());
    let ece: Vec<bool> = acks
        .iter()
        .map(|((r, _, _), _)| r.flags.contains(Flags::ECE))
        .collect();
    assert!(!ece[0], "the ACK before the mark has no ECE");
    assert!(ece[1..].iter().all(|e| *e), "{ece:?}");
    assert_eq!(b.counters().ce_received, 1);
    // The sender reduces once for the whole window, however many ECEs.
    now += step;
    deliver(&mut a, now, &acks, &[]);
    assert_eq!(a.counters().ecn_reductions, 1);
    assert!(a.counters().ece_received >= 2);
    assert!(
        a.cwnd() < cwnd_before,
        "cwnd {} -> {}",
        cwnd_before,
        a.cwnd()
    );
    // Its next new data carries CWR, once.
    let next = drain(&mut a, now);
    let cwr: Vec<bool> = next
        .iter()
        .map(|((r, _, _), _)| r.flags.contains(Flags::CWR))
        .collect();
    assert_eq!(cwr.iter().filter(|c| **c).count(), 1, "{cwr:?}");
    assert!(cwr[0]);
    // The CWR stops the receiver's ECE.
    deliver(&mut b, now, &next, &[]);
    let acks = drain(&mut b, now);
    assert!(!acks.is_empty());
    let last = &acks.last().unwrap().0 .0;
    assert!(!last.flags.contains(Flags::ECE));
}

#[test]
fn ecn_only_mode_still_reduces_on_marks() {
    // Experimental loss_is = "ecn-only": the mark reduces, as with "congestion".
    let mut c = cfg(true);
    c.loss_is = LossIs::EcnOnly;
    let t = Instant::ZERO;
    let mut a = Connection::connect(c, 40000, 80, IsnSeries::new(SeqNumber(1)), t);
    let mut b = Connection::listen(cfg(true), 80, IsnSeries::new(SeqNumber(5000)));
    for _ in 0..3 {
        let s = drain(&mut a, t);
        deliver(&mut b, t, &s, &[]);
        let s = drain(&mut b, t);
        deliver(&mut a, t, &s, &[]);
    }
    assert!(a.ecn_enabled());
    a.write(&vec![1u8; 10 * 1460], false).unwrap();
    let now = Instant::from_millis(5);
    let burst = drain(&mut a, now);
    let before = a.cwnd();
    deliver(&mut b, now, &burst, &[0]);
    let acks = drain(&mut b, now);
    deliver(&mut a, now, &acks, &[]);
    assert_eq!(a.counters().ecn_reductions, 1);
    assert!(a.cwnd() < before);
}
