//! Segment-level scenario tests of the engine (RFC 9293 behaviour).

mod common;

use common::{Fate, Pair, A, B};
use tinygram_proto::{Config, ConnError, Duration, Flags, IsnSeries, SeqNumber, State};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn cfg() -> Config {
    Config::default()
}

fn established() -> Pair {
    let mut p = Pair::new(cfg(), cfg(), 1000, 5000, ms(10));
    p.run_until(ms(1000), true, |p| {
        p.conns[A].state() == State::Established && p.conns[B].state() == State::Established
    });
    assert_eq!(p.conns[A].state(), State::Established);
    assert_eq!(p.conns[B].state(), State::Established);
    p
}

#[test]
fn three_way_handshake_segments_and_mss() {
    let mut p = Pair::new(cfg(), cfg(), 1000, 5000, ms(10));
    p.run(ms(100));
    let l = &p.log;
    assert_eq!(l[0].repr.flags, Flags::SYN);
    assert_eq!(l[0].repr.seq, SeqNumber(1000));
    assert_eq!(l[0].repr.options.mss, Some(1460));
    assert_eq!(l[1].repr.flags, Flags::SYN | Flags::ACK);
    assert_eq!(l[1].repr.seq, SeqNumber(5000));
    assert_eq!(l[1].repr.ack, SeqNumber(1001));
    assert_eq!(l[2].repr.flags, Flags::ACK);
    assert_eq!(l[2].repr.ack, SeqNumber(5001));
    assert_eq!(l[2].at, tinygram_proto::Instant::from_millis(20));
    assert_eq!(p.conns[A].state(), State::Established);
    assert_eq!(p.conns[B].state(), State::Established);
    assert_eq!(p.log.len(), 3, "no extra segments: {:?}", p.log);
    assert_eq!(p.conns[A].srtt(), Some(ms(20)));
}

#[test]
fn effective_mss_is_the_smaller_option() {
    let mut cb = cfg();
    cb.mss = 536;
    let mut p = Pair::new(cfg(), cb, 1, 2, ms(1));
    p.run(ms(100));
    assert_eq!(p.conns[A].effective_mss(), 536);
    assert_eq!(p.conns[B].effective_mss(), 536);
    p.write(A, 2000);
    p.run(ms(1000));
    let sizes: Vec<usize> = p
        .sent_by(A)
        .iter()
        .map(|l| l.len)
        .filter(|&n| n > 0)
        .collect();
    assert_eq!(sizes, vec![536, 536, 536, 392]);
    p.check_integrity(B);
}

#[test]
fn syn_retransmitted_with_backoff_then_times_out() {
    let mut c = cfg();
    c.syn_retries = 3;
    let mut p = Pair::new(c, cfg(), 1, 2, ms(10));
    p.fate = Box::new(|_, _, _| Fate::Drop);
    p.run(Duration::from_secs(100));
    let times: Vec<u64> = p
        .sent_by(A)
        .iter()
        .map(|l| l.at.as_nanos() / 1_000_000)
        .collect();
    assert_eq!(times, vec![0, 1000, 3000, 7000]);
    assert_eq!(p.conns[A].state(), State::Closed);
    assert_eq!(p.conns[A].error(), Some(ConnError::TimedOut));
}

/// RFC 9293 3.5, figure 7: both sides send a SYN; each answers the other's
/// with a SYN-ACK from its own ISS, and both reach ESTABLISHED.
#[test]
fn simultaneous_open() {
    use tinygram_proto::{Connection, Instant};
    let a = Connection::connect(
        cfg(),
        40000,
        80,
        IsnSeries::new(SeqNumber(100)),
        Instant::ZERO,
    );
    let b = Connection::connect(
        cfg(),
        80,
        40000,
        IsnSeries::new(SeqNumber(300)),
        Instant::ZERO,
    );
    let mut p = Pair::with(a, b, ms(10));
    let seen = p.states_until(ms(1000), State::Established);
    for side in [A, B] {
        assert_eq!(
            seen[side],
            [State::SynSent, State::SynReceived, State::Established],
            "side {side}: {}",
            p.dump()
        );
    }
    for (side, iss, peer) in [(A, 100, 300), (B, 300, 100)] {
        let sent = p.sent_by(side);
        // Line 2: <SEQ=ISS><CTL=SYN> at time 0.
        assert_eq!(sent[0].repr.flags, Flags::SYN, "{}", p.dump());
        assert_eq!(
            (sent[0].repr.seq, sent[0].at),
            (SeqNumber(iss), Instant::ZERO)
        );
        // Lines 3-4: <SEQ=ISS><ACK=peer ISS+1><CTL=SYN,ACK> when the peer's SYN arrives.
        assert_eq!(sent[1].repr.flags, Flags::SYN | Flags::ACK, "{}", p.dump());
        assert_eq!(sent[1].repr.seq, SeqNumber(iss));
        assert_eq!(sent[1].repr.ack, SeqNumber(peer + 1));
        assert_eq!(sent[1].at, Instant::from_millis(10));
        assert_eq!(p.conns[side].counters().syn_retransmits, 0);
    }
    // Line 5: each SYN-ACK's ACK completes the handshake one trip later.
    assert!(p.now <= Instant::from_millis(30), "{}", p.dump());
    p.write(A, 5000);
    p.write(B, 3000);
    p.run(ms(1000));
    p.check_integrity(A);
    p.check_integrity(B);
}

/// RFC 6298 5.5 and 2.1 applied to the SYN-ACK (RFC 9293 3.8.1): a passive
/// side whose SYN-ACKs are lost sends them again after 1 s, then 2 s, ...
#[test]
fn syn_ack_retransmitted_with_backoff_in_virtual_time() {
    // The client's own SYN timer is long, so only the server retransmits.
    let mut a = cfg();
    a.rto_initial = Duration::from_secs(60);
    let mut p = Pair::new(a, cfg(), 1, 2, ms(10));
    let mut synacks = 0;
    p.fate = Box::new(move |side, r, _| {
        if side == B && r.flags.syn() {
            synacks += 1;
            if synacks <= 2 {
                return Fate::Drop;
            }
        }
        Fate::Deliver
    });
    p.run_until(ms(10_000), true, |p| {
        p.conns[B].state() == State::Established
    });
    let times: Vec<u64> = p
        .sent_by(B)
        .iter()
        .filter(|l| l.repr.flags.syn())
        .map(|l| l.at.as_nanos() / 1_000_000)
        .collect();
    // SYN arrives at 10 ms; RTO 1 s, then doubled (RFC 6298 5.5).
    assert_eq!(times, vec![10, 1010, 3010], "{}", p.dump());
    assert_eq!(p.conns[B].counters().syn_retransmits, 2);
    assert_eq!(p.conns[A].counters().syn_retransmits, 0);
    // The third SYN-ACK gets through: A is established at 3020 ms, B at 3030 ms.
    assert_eq!(p.now, tinygram_proto::Instant::from_millis(3030));
    assert_eq!(p.conns[A].state(), State::Established);

    // All SYN-ACKs lost: after synack_retries retransmissions the server
    // gives up; syn_retries bounds only active opens.
    let mut b = cfg();
    b.synack_retries = 2;
    b.syn_retries = 0;
    let mut a = cfg();
    a.rto_initial = Duration::from_secs(60);
    let mut p = Pair::new(a, b, 1, 2, ms(10));
    p.fate = Box::new(|side, r, _| {
        if side == B && r.flags.syn() {
            Fate::Drop
        } else {
            Fate::Deliver
        }
    });
    p.run_until(ms(20_000), true, |p| p.conns[B].state() == State::Closed);
    let times: Vec<u64> = p
        .sent_by(B)
        .iter()
        .filter(|l| l.repr.flags.syn())
        .map(|l| l.at.as_nanos() / 1_000_000)
        .collect();
    assert_eq!(times, vec![10, 1010, 3010], "{}", p.dump());
    // The last RTO (4 s) expires at 7010 ms.
    assert_eq!(p.now, tinygram_proto::Instant::from_millis(7010));
    assert_eq!(p.conns[B].error(), Some(ConnError::TimedOut));
}

/// RFC 9293 3.4.1 and 3.10.7.2: a listener selects an ISS for each SYN from
/// its injected generator, so after a RST in SYN-RECEIVED sends it back to
/// LISTEN (3.10.7.4), the next connection gets a different ISN.
#[test]
fn listener_draws_a_new_isn_for_each_connection() {
    use tinygram_proto::{rst_reply, Connection, Instant};
    let mut b = Connection::listen(cfg(), 80, IsnSeries::new(SeqNumber(5000)));
    let mut buf = Vec::new();
    let mut synacks = Vec::new();
    for (i, port) in [40000u16, 40001].into_iter().enumerate() {
        let now = Instant::from_millis(10 * i as u64);
        let mut a = Connection::connect(cfg(), port, 80, IsnSeries::new(SeqNumber(100)), now);
        let syn = a.poll_transmit(now, &mut buf).unwrap();
        b.handle_segment(now, &syn, &[]);
        assert_eq!(b.state(), State::SynReceived);
        let synack = b.poll_transmit(now, &mut buf).unwrap();
        assert_eq!(synack.flags, Flags::SYN | Flags::ACK);
        assert_eq!((synack.dst_port, synack.ack), (port, SeqNumber(101)));
        assert_eq!(synack.seq, b.iss());
        synacks.push(synack);
        // The client's end is gone: it resets the half-open connection.
        let rst = rst_reply(&synack, 0).unwrap();
        b.handle_segment(now, &rst, &[]);
        assert_eq!(
            b.state(),
            State::Listen,
            "RST in SYN-RECEIVED returns to LISTEN"
        );
    }
    assert_eq!(synacks[0].seq, SeqNumber(5000));
    assert_ne!(
        synacks[0].seq, synacks[1].seq,
        "a second connection reused the ISN"
    );
    assert_eq!(synacks[1].seq, SeqNumber(5000 + 64_000));
}

#[test]
fn active_close_then_passive_close() {
    let mut p = established();
    p.write(A, 100);
    p.conns[A].close();
    p.run_until(ms(1000), true, |p| p.conns[A].state() == State::FinWait2);
    assert_eq!(p.conns[A].state(), State::FinWait2);
    assert_eq!(p.conns[B].state(), State::CloseWait);
    assert!(p.conns[B].read_closed());
    p.conns[B].close();
    p.run_until(ms(1000), true, |p| p.conns[A].state() == State::TimeWait);
    p.run_until(ms(1000), true, |p| p.conns[B].state() == State::Closed);
    assert_eq!(p.conns[B].state(), State::Closed);
    assert_eq!(p.conns[A].state(), State::TimeWait);
    // TIME-WAIT lasts 2 x MSL.
    let entered = p.now;
    p.run(Duration::from_secs(200));
    assert_eq!(p.conns[A].state(), State::Closed);
    assert!(p.now >= entered + Duration::from_secs(60) - ms(20));
    p.check_integrity(B);
}

/// RFC 9293 3.6, figure 13: both FINs cross, each side goes FIN-WAIT-1 ->
/// CLOSING -> TIME-WAIT.
#[test]
fn simultaneous_close_goes_through_closing() {
    let mut p = established();
    p.conns[A].close();
    p.conns[B].close();
    let seen = p.states_until(ms(1000), State::TimeWait);
    for side in [A, B] {
        assert_eq!(
            seen[side],
            [State::FinWait1, State::Closing, State::TimeWait],
            "side {side}: {}",
            p.dump()
        );
        assert_eq!(p.conns[side].error(), None);
    }
    // Each FIN was sent once and acknowledged once: FIN, then the ACK of the peer's FIN.
    for side in [A, B] {
        let fins = p
            .sent_by(side)
            .iter()
            .filter(|l| l.repr.flags.fin())
            .count();
        assert_eq!(fins, 1, "{}", p.dump());
    }
}

#[test]
fn half_close_lets_data_flow_the_other_way() {
    let mut p = established();
    p.conns[A].close();
    p.run_until(ms(1000), true, |p| p.conns[B].state() == State::CloseWait);
    p.write(B, 50_000);
    p.run_until(ms(5000), true, |p| p.received[A].len() == 50_000);
    p.check_integrity(A);
    assert_eq!(p.conns[A].state(), State::FinWait2);
    assert!(p.conns[A].write(b"x", false).is_err());
}

#[test]
fn abort_sends_rst_and_peer_is_reset() {
    let mut p = established();
    p.conns[A].abort();
    assert_eq!(p.conns[A].state(), State::Closed);
    p.run(ms(1000));
    assert!(p.sent_by(A).last().unwrap().repr.flags.rst());
    assert_eq!(p.conns[B].state(), State::Closed);
    assert_eq!(p.conns[B].error(), Some(ConnError::Reset));
}

#[test]
fn syn_to_closed_port_is_refused() {
    let p = established();
    // What a host with no listener answers (RFC 9293 3.10.7.1), and how the
    // connecting side takes it.
    let syn = p.log[0].repr;
    let rst = tinygram_proto::rst_reply(&syn, 0).unwrap();
    assert_eq!(rst.flags, Flags::RST | Flags::ACK);
    assert_eq!(rst.ack, syn.seq + 1);
    let mut c =
        tinygram_proto::Connection::connect(cfg(), 1, 2, IsnSeries::new(SeqNumber(7)), p.now);
    let mut buf = Vec::new();
    let syn = c.poll_transmit(p.now, &mut buf).unwrap();
    let rst = tinygram_proto::rst_reply(&syn, 0).unwrap();
    c.handle_segment(p.now, &rst, &[]);
    assert_eq!(c.error(), Some(ConnError::Refused));
    assert_eq!(c.state(), State::Closed);
}

#[test]
fn delayed_ack_every_second_segment_and_timer() {
    let mut p = established();
    let base = p.log.len();
    // One small segment: ACKed by the 200 ms timer.
    p.write(A, 100);
    p.run(ms(1000));
    let acks: Vec<_> = p.log[base..].iter().filter(|l| l.from == B).collect();
    assert_eq!(acks.len(), 1);
    let data_at = p.log[base].at;
    assert_eq!(acks[0].at, data_at + ms(10) + ms(200));
    assert_eq!(p.conns[B].counters().delack_timer_fired, 1);
    // Two full segments: ACKed at once on the second.
    let base = p.log.len();
    p.write(A, 2 * 1460);
    p.run(ms(1000));
    let acks: Vec<_> = p.log[base..].iter().filter(|l| l.from == B).collect();
    assert_eq!(acks.len(), 1, "{}", p.dump());
    assert_eq!(acks[0].at, p.log[base].at + ms(10));
}

#[test]
fn rto_backoff_doubles_in_virtual_time() {
    let mut p = established();
    let rto = p.conns[A].rto();
    // RFC 6298 2.3-2.4: max(srtt 20 ms + 4 x 10 ms, rto_min 1 s).
    assert_eq!(rto, ms(1000));
    p.fate = Box::new(|side, _, _| if side == A { Fate::Drop } else { Fate::Deliver });
    let base = p.log.len();
    let t0 = p.now;
    p.write(A, 100);
    p.run(Duration::from_secs(40));
    let times: Vec<u64> = p.log[base..]
        .iter()
        .filter(|l| l.from == A && l.len > 0)
        .take(6)
        .map(|l| (l.at - t0).as_millis() as u64)
        .collect();
    assert_eq!(times, vec![0, 1000, 3000, 7000, 15000, 31000]);
    let sends = p.log[base..]
        .iter()
        .filter(|l| l.from == A && l.len > 0)
        .count();
    assert_eq!(p.conns[A].counters().timeouts as usize, sends - 1);
}

#[test]
fn connection_aborts_after_retry_limit() {
    let mut c = cfg();
    c.max_retries = 3;
    let mut p = Pair::new(c, cfg(), 1, 2, ms(10));
    p.run_until(ms(100), true, |p| p.conns[A].state() == State::Established);
    p.fate = Box::new(|side, _, _| if side == A { Fate::Drop } else { Fate::Deliver });
    p.write(A, 10);
    p.run(Duration::from_secs(100));
    assert_eq!(p.conns[A].state(), State::Closed);
    assert_eq!(p.conns[A].error(), Some(ConnError::TimedOut));
    assert_eq!(p.conns[A].counters().timeouts, 3);
}

/// RFC 5681 3.2: the third duplicate ACK, not the first or second, triggers
/// the fast retransmit. The data segments are spread out on the wire so the
/// duplicate ACKs reach the sender one at a time.
#[test]
fn fast_retransmit_after_three_dupacks() {
    let mut a = cfg();
    a.initial_window = 10;
    let mut p = Pair::new(a, cfg(), 1, 2, ms(10));
    p.run_until(ms(100), true, |p| p.conns[B].state() == State::Established);
    let mut n = 0u64;
    p.fate = Box::new(move |side, _, len| {
        if side == A && len > 0 {
            n += 1;
            if n == 2 {
                return Fate::Drop;
            }
            // Segment n arrives n ms late: one duplicate ACK per millisecond.
            return Fate::Delay(ms(n));
        }
        Fate::Deliver
    });
    p.write(A, 8 * 1460);
    let lost = SeqNumber(2 + 1460);
    let rexmits = |p: &Pair| {
        p.sent_by(A)
            .into_iter()
            .filter(|l| l.len > 0 && l.repr.seq == lost)
            .count()
    };
    let mut dupack_times = Vec::new();
    for k in 1..=3u64 {
        p.run_until(ms(1000), true, |p| {
            p.conns[A].counters().dup_acks_received >= k
        });
        assert_eq!(p.conns[A].counters().dup_acks_received, k, "{}", p.dump());
        dupack_times.push(p.now);
        let c = p.conns[A].counters();
        if k < 3 {
            assert_eq!(c.fast_retransmits, 0, "after {k} dupack(s): {}", p.dump());
            assert_eq!(rexmits(&p), 1, "only the original send after {k} dupack(s)");
        } else {
            assert_eq!(c.fast_retransmits, 1, "{}", p.dump());
            assert_eq!(rexmits(&p), 2, "the 3rd dupack retransmits");
        }
    }
    assert!(
        dupack_times.windows(2).all(|w| w[0] < w[1]),
        "dupacks arrive at distinct instants: {dupack_times:?}"
    );
    // The retransmission leaves the instant the 3rd duplicate ACK arrives.
    let rexmit = p
        .sent_by(A)
        .into_iter()
        .filter(|l| l.len > 0 && l.repr.seq == lost)
        .nth(1)
        .unwrap();
    assert_eq!(rexmit.at, dupack_times[2]);
    p.run(ms(5000));
    let c = p.conns[A].counters();
    assert_eq!(c.fast_retransmits, 1, "{}", p.dump());
    assert_eq!(c.timeouts, 0);
    assert_eq!(c.retransmits, 1);
    p.check_integrity(B);
}

#[test]
fn transfer_across_sequence_wrap() {
    let isn = u32::MAX - 3000;
    let mut p = Pair::new(cfg(), cfg(), isn, u32::MAX - 10, ms(5));
    p.run_until(ms(100), true, |p| p.conns[B].state() == State::Established);
    p.write(A, 200_000);
    p.write(B, 100_000);
    let mut left = 300_000usize;
    while left > 0 {
        let k = p.write(A, left.min(50_000));
        left -= k;
        p.run_until(ms(100), true, |_| false);
    }
    p.run(Duration::from_secs(10));
    p.check_integrity(B);
    p.check_integrity(A);
    assert!(
        p.conns[A].snd_una().0 < 1_000_000,
        "sequence numbers wrapped"
    );
}

#[test]
fn zero_window_probe_and_recovery() {
    let mut b = cfg();
    b.rcv_buf = 8 * 1460;
    let mut p = Pair::new(cfg(), b, 1, 2, ms(10));
    p.run_until(ms(100), true, |p| p.conns[B].state() == State::Established);
    p.write(A, 30_000);
    // B does not read: the window closes.
    p.run_until(Duration::from_secs(5), false, |_| false);
    assert_eq!(p.conns[A].snd_wnd(), 0);
    let probes = p.conns[A].counters().window_probes;
    assert!(probes >= 2, "probes {probes}");
    assert_eq!(p.conns[A].state(), State::Established);
    assert_eq!(p.conns[A].counters().timeouts, 0, "{}", p.dump());
    // Reading reopens the window; everything arrives.
    p.run(Duration::from_secs(30));
    p.check_integrity(B);
}

/// RFC 1122 4.2.2.17: a peer that answers every probe with a zero window
/// is kept however long; one that stops answering is given up after
/// `max_retries` unanswered probes (Linux's tcp_probe_timer), without a RST.
#[test]
fn unanswered_zero_window_probes_are_bounded() {
    let mut a = cfg();
    a.max_retries = 4;
    let mut b = cfg();
    b.rcv_buf = 8 * 1460;
    let mut p = Pair::new(a, b, 1, 2, ms(10));
    p.run_until(ms(100), true, |p| p.conns[B].state() == State::Established);
    p.write(A, 30_000);
    // B never reads but answers: probes go on past the limit, and are answered.
    p.run_until(Duration::from_secs(3600), false, |_| false);
    assert_eq!(p.conns[A].state(), State::Established, "{}", p.dump());
    assert!(p.conns[A].counters().window_probes > 4);
    assert!(
        p.conns[A].probes_out() <= 1,
        "answered probes are not counted"
    );
    // B falls silent: the fifth probe is not sent, the connection is dropped.
    let (probes, pending) = (p.conns[A].counters().window_probes, p.conns[A].probes_out());
    p.fate = Box::new(|side, _, _| if side == B { Fate::Drop } else { Fate::Deliver });
    let mut most = 0;
    p.run_until(Duration::from_secs(7200), false, |p| {
        most = most.max(p.conns[A].probes_out());
        p.conns[A].state() == State::Closed
    });
    assert_eq!(p.conns[A].state(), State::Closed);
    assert_eq!(p.conns[A].error(), Some(ConnError::TimedOut));
    let c = p.conns[A].counters();
    assert_eq!(c.window_probes - probes + u64::from(pending), 4);
    assert_eq!(most, 4);
    assert_eq!(c.window_probe_aborts, 1);
    assert_eq!(c.rsts_sent, 0, "tcp_write_err sends no RST");
}

/// A connection whose peer holds a zero window and then falls silent, its
/// application gone (`release`) or not: the probes it sends before it is
/// dropped, and whether that was the probe limit.
fn probes_until_dropped(a: Config, release: bool) -> (u64, u64) {
    let mut b = cfg();
    b.rcv_buf = 8 * 1460;
    let mut p = Pair::new(a, b, 1, 2, ms(10));
    p.run_until(ms(100), true, |p| p.conns[B].state() == State::Established);
    p.write(A, 30_000);
    if release {
        p.conns[A].release();
    }
    // B falls silent as soon as its window is closed.
    p.run_until(Duration::from_secs(5), false, |p| p.conns[A].snd_wnd() == 0);
    assert_eq!(p.conns[A].snd_wnd(), 0, "the window closed");
    let (probes, pending) = (p.conns[A].counters().window_probes, p.conns[A].probes_out());
    p.fate = Box::new(|side, _, _| if side == B { Fate::Drop } else { Fate::Deliver });
    p.run_until(Duration::from_secs(7200), false, |p| {
        p.conns[A].state() == State::Closed
    });
    assert_eq!(p.conns[A].state(), State::Closed, "{}", p.dump());
    let c = p.conns[A].counters();
    (
        c.window_probes - probes + u64::from(pending),
        c.window_probe_aborts,
    )
}

/// Linux's retransmission timer (tcp_set_rto: SRTT + max(4 x RTTVAR, 200 ms);
/// TCP_RTO_MAX 120 s), which the orphan rules below are stated against.
fn linux_rto() -> Config {
    let mut c = cfg();
    c.rto_min = ms(200);
    c.rto_floor = tinygram_proto::rtt::RtoFloor::Variance;
    c.rto_max = Duration::from_secs(120);
    c
}

/// Linux's tcp_orphan_retries (tcp_probe_timer): a connection the
/// application closed gives up a silent zero window after 8 probes (the
/// default 0, while the probe interval is below rto_max), not max_retries;
/// `orphan_retries` sets the limit, and a connection still held keeps
/// max_retries.
#[test]
fn an_orphan_gives_up_a_silent_zero_window_sooner() {
    let linux = linux_rto();
    assert_eq!(probes_until_dropped(linux.clone(), true), (8, 1));
    assert_eq!(probes_until_dropped(linux.clone(), false), (15, 1));
    let mut three = linux.clone();
    tinygram_proto::settings::set_text(&mut three, "orphan_retries", "3").unwrap();
    assert_eq!(probes_until_dropped(three, true), (3, 1));
    // With rto_max at 10 s the probe interval (0.2 s, doubling) reaches it
    // after six probes: the orphan is no longer alive and is dropped at once.
    let mut short = linux;
    short.rto_max = Duration::from_secs(10);
    assert_eq!(probes_until_dropped(short, true), (6, 1));
}

/// Linux's tcp_write_timeout: an orphan whose data goes unacknowledged is
/// dropped after `orphan_retries` retransmissions (0: 8 while the RTO is
/// below rto_max), a connection still held after max_retries.
#[test]
fn an_orphan_gives_up_unacknowledged_data_sooner() {
    let timeouts = |release: bool| {
        let mut p = Pair::new(linux_rto(), cfg(), 1, 2, ms(10));
        p.run_until(ms(100), true, |p| p.conns[B].state() == State::Established);
        p.fate = Box::new(|side, _, _| if side == B { Fate::Drop } else { Fate::Deliver });
        p.write(A, 1000);
        if release {
            p.conns[A].release();
        }
        p.run_until(Duration::from_secs(7200), false, |p| {
            p.conns[A].state() == State::Closed
        });
        assert_eq!(
            p.conns[A].error(),
            Some(ConnError::TimedOut),
            "{}",
            p.dump()
        );
        p.conns[A].counters().timeouts
    };
    assert_eq!(timeouts(true), 8);
    assert_eq!(timeouts(false), 15);
}

fn lossy_bulk(loss_every: u32, seed: u64) {
    // Deterministic pseudo-random drops of data and ACKs in both directions,
    // with duplication and reordering.
    let mut p = Pair::new(cfg(), cfg(), 77, 99, ms(5));
    let mut x = seed;
    p.fate = Box::new(move |_, _, _| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let r = (x % 1000) as u32;
        if r < loss_every {
            Fate::Drop
        } else if r < loss_every + 20 {
            Fate::Duplicate
        } else if r < loss_every + 40 {
            Fate::Delay(ms(3))
        } else {
            Fate::Deliver
        }
    });
    let total = 300_000;
    let mut left = total;
    let mut guard = 0;
    while left > 0 && guard < 100_000 {
        guard += 1;
        let k = p.write(A, left.min(64 * 1024));
        left -= k;
        if !p.step(true) {
            break;
        }
    }
    p.run(Duration::from_secs(600));
    assert_eq!(
        p.conns[A].error(),
        None,
        "loss {loss_every}/1000 seed {seed}"
    );
    p.check_integrity(B);
    let c = p.conns[A].counters();
    if loss_every > 0 {
        assert!(c.retransmits > 0, "loss must cause retransmissions: {c:?}");
        assert!(
            c.fast_retransmits + c.timeouts > 0,
            "a repair happened: {c:?}"
        );
    }
    assert!(
        p.conns[B].counters().out_of_order_segments > 0,
        "reordering/loss seen"
    );
}

#[test]
fn bulk_integrity_no_loss() {
    lossy_bulk(0, 1);
}
#[test]
fn bulk_integrity_1_percent() {
    lossy_bulk(10, 2);
}
#[test]
fn bulk_integrity_5_percent() {
    lossy_bulk(50, 3);
}
#[test]
fn bulk_integrity_20_percent() {
    lossy_bulk(200, 4);
}

/// A controller that keeps cwnd at two segments whatever happens.
#[derive(Debug)]
struct FixedCwnd(usize);

impl tinygram_proto::CongestionControl for FixedCwnd {
    fn cwnd(&self) -> usize {
        self.0
    }
    fn ssthresh(&self) -> usize {
        usize::MAX
    }
    fn on_ack(&mut self, _: usize, _: usize) {}
    fn on_fast_retransmit(&mut self, _: usize, _: usize, _: u32) {}
    fn on_recovery_dupack(&mut self, _: usize) {}
    fn on_partial_ack(&mut self, _: usize, _: usize) {}
    fn on_recovery_exit(&mut self, _: usize, _: usize) {}
    fn on_rto(&mut self, _: usize, _: usize) {}
    fn on_loss_repair(&mut self, _: usize, _: usize) {}
}

/// Issue 2: congestion control sits behind a trait; `Config::congestion`
/// plugs in another controller (NewReno stays the default).
#[test]
fn a_plugged_in_congestion_controller_is_used() {
    use tinygram_proto::CcFactory;
    let first_burst = |a: Config| {
        let mut p = Pair::new(a, cfg(), 1, 2, ms(10));
        p.run_until(ms(100), true, |p| p.conns[B].state() == State::Established);
        let t0 = p.now;
        p.write(A, 20 * 1460);
        p.advance_to(t0, true);
        let burst = p.data_from(A).iter().filter(|d| d.0 == t0).count();
        (p, burst)
    };
    // The default: NewReno with RFC 6928's initial window of 10 segments.
    assert_eq!(format!("{:?}", cfg().congestion), "newreno");
    let (_, burst) = first_burst(cfg());
    assert_eq!(burst, 10);

    let mut a = cfg();
    a.congestion = CcFactory::new("fixed-2", |init| {
        assert_eq!(init.mss, 1460, "built with the negotiated MSS");
        Box::new(FixedCwnd(2 * init.mss))
    });
    let (mut p, burst) = first_burst(a);
    assert_eq!(burst, 2, "{}", p.dump());
    assert_eq!(p.conns[A].cwnd(), 2 * 1460);
    p.run(Duration::from_secs(5));
    p.check_integrity(B);
    assert_eq!(
        p.conns[A].cwnd(),
        2 * 1460,
        "the controller's window, never grown"
    );
    // Two segments per round trip (20 ms): no instant sends more than two.
    let mut per_instant = std::collections::BTreeMap::new();
    for d in p.data_from(A) {
        *per_instant.entry(d.0).or_insert(0) += 1;
    }
    assert!(per_instant.values().all(|&n| n <= 2), "{per_instant:?}");
    assert_eq!(p.conns[B].config().congestion.name(), "newreno");
}

/// `poll_transmit_with_headroom` emits exactly what `poll_transmit` does, with
/// the payload behind the caller's room: two identical pairs, one driven each
/// way, through a loss repaired by SACK, produce the same segments.
#[test]
fn headroom_transmit_matches_plain_transmit() {
    use tinygram_proto::{Connection, Instant, OptionSet, TcpRepr};
    let cfg = Config {
        options: OptionSet {
            sack: true,
            timestamps: true,
            ..OptionSet::default()
        },
        ..Config::default()
    };
    let new_pair = || {
        (
            Connection::connect(
                cfg.clone(),
                1,
                2,
                IsnSeries::new(SeqNumber(7)),
                Instant::ZERO,
            ),
            Connection::listen(cfg.clone(), 2, IsnSeries::new(SeqNumber(9))),
        )
    };
    let (a1, b1) = new_pair();
    let (a2, b2) = new_pair();
    // [sender, receiver], driven with poll_transmit and with headroom.
    let mut c1 = [a1, b1];
    let mut c2 = [a2, b2];
    fn split(c: &mut [Connection; 2], from: usize) -> (&mut Connection, &mut Connection) {
        let [a, b] = c;
        if from == 0 {
            (a, b)
        } else {
            (b, a)
        }
    }
    const ROOM: usize = 60;
    let data: Vec<u8> = (0..60_000u32).map(|i| (i * 7) as u8).collect();
    let (mut written, mut read, mut sink) = (0, 0usize, vec![0u8; 1 << 16]);
    let (mut plain, mut roomy) = (Vec::new(), Vec::new());
    let mut now = Instant::ZERO;
    let mut data_segments = 0;
    let mut sack_rexmits_seen = false;
    for _ in 0..10_000 {
        if c1[0].state() == State::Established && written < data.len() {
            let n1 = c1[0].write(&data[written..], false).unwrap();
            let n2 = c2[0].write(&data[written..], false).unwrap();
            assert_eq!(n1, n2);
            written += n1;
        }
        let mut moved = false;
        for from in 0..2 {
            let from_a = from == 0;
            let (x1, y1) = split(&mut c1, from);
            let (x2, y2) = split(&mut c2, from);
            loop {
                let r1: Option<TcpRepr> = x1.poll_transmit(now, &mut plain);
                roomy.clear();
                roomy.extend_from_slice(&[0xee; 7]);
                let r2 = x2.poll_transmit_with_headroom(now, &mut roomy, ROOM);
                assert_eq!(r1, r2, "headers differ");
                let Some(r) = r1 else { break };
                assert_eq!(&roomy[ROOM..], &plain[..], "payloads differ");
                moved = true;
                if from_a && !plain.is_empty() {
                    data_segments += 1;
                    // Lose the 5th data segment on both paths.
                    if data_segments == 5 {
                        continue;
                    }
                }
                y1.handle_segment(now, &r, &plain);
                y2.handle_segment(now, &r, &roomy[ROOM..]);
            }
        }
        let n1 = c1[1].read(&mut sink);
        let mut sink2 = vec![0u8; sink.len()];
        let n2 = c2[1].read(&mut sink2);
        assert_eq!((n1, &sink[..n1]), (n2, &sink2[..n2]));
        assert_eq!(&sink[..n1], &data[read..read + n1]);
        read += n1;
        sack_rexmits_seen |= c2[0].counters().sack_retransmits > 0;
        if read == data.len() {
            break;
        }
        if !moved {
            let next = [c1[0].poll_timeout(), c1[1].poll_timeout()]
                .into_iter()
                .flatten()
                .min()
                .expect("a timer");
            now = now.max(next);
        } else {
            now += ms(1);
        }
        for c in c1.iter_mut().chain(c2.iter_mut()) {
            c.handle_timeout(now);
        }
    }
    assert_eq!(read, data.len(), "the transfer did not finish");
    assert!(
        sack_rexmits_seen,
        "the loss was not repaired by a SACK retransmission"
    );
    assert_eq!(c1[0].counters(), c2[0].counters());
    assert_eq!(c1[1].counters(), c2[1].counters());
}

/// `snd_buf_counts`: BSD and Linux count sent, unacknowledged bytes against
/// the send buffer; the Mentat TCP of Solaris counts only unsent bytes
/// (illumos tcp_impl.h TCP_UNSENT_BYTES), so once the bytes leave, the
/// application may write as much again before the first ACK returns.
#[test]
fn send_buffer_counts_queued_or_only_unsent_bytes() {
    for (counts, room_in_flight) in [("queued", 0), ("unsent", 4000)] {
        let mut c = cfg();
        c.snd_buf = 4000;
        c.send_policy = tinygram_proto::policy::SendPolicyKind::NoDelay;
        tinygram_proto::settings::set_text(&mut c, "snd_buf_counts", counts).unwrap();
        let mut p = Pair::new(c, cfg(), 1000, 5000, ms(10));
        p.run_until(ms(1000), true, |p| p.conns[B].state() == State::Established);
        assert_eq!(
            p.write(A, 4000),
            4000,
            "{counts}: the first write fills the buffer"
        );
        // The data leaves at once (initial window of 10); its ACK is 20 ms away.
        let t = p.now + ms(1);
        p.advance_to(t, true);
        assert_eq!(p.conns[A].bytes_in_flight(), 4000, "{counts}");
        assert_eq!(p.conns[A].send_space(), room_in_flight, "{counts}");
        assert_eq!(p.write(A, 10_000), room_in_flight, "{counts}");
        p.run(ms(2000));
        p.check_integrity(B);
    }
}

/// Connections made from one shared `Arc<Config>` (a host's settings, as the
/// simulator hands them out) each keep their own: a setting changed on one
/// live connection is that connection's alone.
#[test]
fn a_setting_changed_on_one_connection_leaves_its_siblings_alone() {
    use std::sync::Arc;
    use tinygram_proto::policy::SendPolicyKind;
    use tinygram_proto::{Connection, Instant};
    let shared = Arc::new(Config::default());
    let open = |port| {
        Connection::connect(
            Arc::clone(&shared),
            port,
            80,
            IsnSeries::new(SeqNumber(1)),
            Instant::ZERO,
        )
    };
    let (mut a, b) = (open(1000), open(1001));
    let before = shared.send_policy;
    assert_ne!(before, SendPolicyKind::NoDelay);
    a.set_send_policy(Instant::ZERO, SendPolicyKind::NoDelay);
    a.set_send_buffer(12_345);
    assert_eq!(a.config().send_policy, SendPolicyKind::NoDelay);
    assert_eq!(a.config().snd_buf, 12_345);
    assert_eq!(b.config().send_policy, before);
    assert_eq!(b.config().snd_buf, shared.snd_buf);
    assert_eq!(shared.send_policy, before);
}
