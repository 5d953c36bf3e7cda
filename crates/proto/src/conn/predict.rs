//! Header prediction: the two common segments of an established connection,
//! a pure ACK that advances SND.UNA and the next in-order data segment, go
//! straight to the steps they need; everything else takes the full RFC 9293
//! 3.10.7.4 path (Jacobson header prediction, FreeBSD tcp_input.c
//! tcp_do_segment; Linux tcp_input.c tcp_rcv_established fast path).
//!
//! The short path calls the same functions the full path calls for such a
//! segment, in the same order; the predicate admits a segment only when every
//! other step of the full path is known to do nothing for it.

use super::Connection;
use crate::state::State;
use crate::time::Instant;
use crate::wire::{Flags, TcpRepr};

#[cfg(test)]
thread_local! {
    /// Test switch: with it set, every segment takes the full path, so a test
    /// can compare the two paths on the same traffic.
    pub(super) static FULL_PATH_ONLY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

impl Connection {
    /// Whether `seg` may take the short path (Jacobson header prediction,
    /// FreeBSD tcp_do_segment; Linux tcp_rcv_established pred_flags and
    /// tcp_fast_path_check): ESTABLISHED; only ACK (PSH aside) set; the next
    /// sequence number expected; the send window unchanged and open; no SACK
    /// blocks, NAK or unknown option; timestamps, if any, passing PAWS; no
    /// recovery, duplicate ACKs, SACKed data, RACK, NAKs, Big Window or ECN
    /// in use; no FIN recorded; no trace. Then either a pure ACK of new data
    /// (SND.UNA < SEG.ACK <= SND.MAX) or data that acknowledges nothing new
    /// (SEG.ACK = SND.UNA) and fits the receive window offered.
    pub(super) fn header_predicted(&self, now: Instant, seg: &TcpRepr, payload_len: usize) -> bool {
        #[cfg(test)]
        if FULL_PATH_ONLY.with(|f| f.get()) {
            return false;
        }
        let rcv_nxt = self.rcv_nxt();
        if self.state != State::Established
            || seg.flags.0 & !Flags::PSH.0 != Flags::ACK.0
            || seg.seq != rcv_nxt
            || self.cfg.trace
            || self.recovery.active
            || self.recovery.dupacks != 0
            || self.cfg.dupack_threshold == 0
            || !self.scoreboard.is_empty()
            || (self.negotiated.sack && self.cfg.recovery.rack)
            || self.negotiated.nak
            || self.negotiated.bigwin
            || self.ecn.ok
            || self.fin.rcv_seq.is_some()
            || !seg.options.sack_blocks.is_empty()
            || seg.options.nak.is_some()
            || !seg.options.unknown.is_empty()
            || self.snd_wnd == 0
            || self.peer_window(seg) != self.snd_wnd
        {
            return false;
        }
        if let (true, Some(ts)) = (self.ts.enabled, seg.options.timestamps) {
            if self.ts.paws_rejects(now, ts) {
                return false;
            }
        }
        if payload_len == 0 {
            // Linux tcp_rcv_established "bulk data transfer: sender"; FreeBSD
            // SEQ_GT(th_ack, snd_una) && SEQ_LEQ(th_ack, snd_max).
            seg.ack > self.snd_una && seg.ack <= self.snd_max
        } else {
            // FreeBSD th_ack == snd_una ("pure, in-sequence data packet"),
            // all of it inside the window offered (nothing to trim; RFC 9293
            // 3.10.7.4: data is acceptable only in an open window).
            seg.ack == self.snd_una && payload_len <= self.rcv_adv.distance_from(rcv_nxt)
        }
    }

    /// The short path for a segment [`header_predicted`](Self::header_predicted)
    /// admitted: the fifth check's ACK steps, TS.Recent, then the text.
    pub(super) fn on_predicted(&mut self, now: Instant, seg: &TcpRepr, payload: &[u8]) {
        #[cfg(test)]
        tests::note_predicted();
        let window = self.snd_wnd;
        // An acceptable ACK answers the zero-window probes (as process_ack).
        self.probes_out = 0;
        if payload.is_empty() {
            let sacked_before = self.scoreboard.sacked_bytes();
            self.on_ack_advance(now, seg, sacked_before);
        }
        self.update_send_window(seg, window);
        // RFC 7323 4.3 (2), 5.3 R3 (as on_synchronized).
        if let (true, Some(ts)) = (self.ts.enabled, seg.options.timestamps) {
            self.ts.update_recent(now, seg.seq, ts);
        }
        if !payload.is_empty() {
            // process_text for text at RCV.NXT, all inside the window: no
            // duplicate head to trim or D-SACK, no tail to cut.
            let nxt_off = self.recv_buf.nxt();
            let r = self.recv_buf.insert(nxt_off, payload);
            self.dsack_after_insert(nxt_off, nxt_off, payload.len());
            self.text_stored(now, nxt_off, payload.len(), r, false);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::FULL_PATH_ONLY;
    use crate::cc::CwndValidation;
    use crate::config::{Config, OptionSet};
    use crate::conn::Connection;
    use crate::isn::IsnSeries;
    use crate::policy::AckPolicyKind;
    use crate::seq::SeqNumber;
    use crate::state::State;
    use crate::time::{Duration, Instant};
    use crate::wire::{Flags, Nak, TcpRepr, Timestamps};
    use proptest::prelude::*;
    use std::collections::VecDeque;

    /// Engine state a step may change, beyond the counters: what must be the
    /// same whichever path a segment took.
    fn snapshot(c: &Connection) -> String {
        format!(
            "{c:?} {:?} cwnd={} ssthresh={} srtt={:?} rto={:?} timers={:?} wl=({:?},{:?}) \
             max_snd_wnd={} probes={} ack={:?} recovery={:?} ts={:?} rtt_probe={:?} \
             retries={} persist={} tlp={:?} rcv_adv={:?} next_timeout={:?}",
            c.counters,
            c.cc.cwnd(),
            c.cc.ssthresh(),
            c.rtt.srtt(),
            c.rtt.rto(),
            c.timers,
            c.snd_wl1,
            c.snd_wl2,
            c.max_snd_wnd,
            c.probes_out,
            c.ack,
            c.recovery,
            c.ts,
            c.rtt_probe,
            c.retries,
            c.persist_backoff,
            c.tx,
            c.rcv_adv,
            c.poll_timeout(),
        )
    }

    /// A small random pair: both sides write (`both`), the wire loses,
    /// delays and duplicates segments as `rng` says; returns every segment
    /// sent and a snapshot after every event, and how many segments took the
    /// short path.
    fn run(
        cfg: &Config,
        seed: u64,
        lossy: bool,
        both: bool,
        full_only: bool,
    ) -> (Vec<String>, u64) {
        FULL_PATH_ONLY.with(|f| f.set(full_only));
        PREDICTED.with(|p| p.set(0));
        let mut rng = seed | 1;
        let mut next = move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        let mut c = [
            Connection::connect(
                cfg.clone(),
                40000,
                80,
                IsnSeries::new(SeqNumber(7)),
                Instant::ZERO,
            ),
            Connection::listen(cfg.clone(), 80, IsnSeries::new(SeqNumber(u32::MAX - 3000))),
        ];
        let mut wire: VecDeque<(Instant, usize, TcpRepr, Vec<u8>)> = VecDeque::new();
        let mut log = Vec::new();
        let mut now = Instant::ZERO;
        let mut written = [0usize; 2];
        let total = [60_000usize, if both { 20_000 } else { 0 }];
        let mut buf = Vec::new();
        let mut sink = [0u8; 4096];
        for _ in 0..20_000 {
            for side in 0..2 {
                if c[side].state() == State::Established && written[side] < total[side] {
                    let n = (next() % 3000) as usize + 1;
                    let data: Vec<u8> = (0..n).map(|i| (written[side] + i) as u8).collect();
                    written[side] += c[side].write(&data, false).unwrap_or(0);
                }
                if next() % 4 != 0 {
                    while c[side].read(&mut sink) > 0 {}
                }
                while let Some(r) = c[side].poll_transmit(now, &mut buf) {
                    let p = std::mem::take(&mut buf);
                    log.push(format!("{now:?} {side} {r:?} {p:?}"));
                    let at = now + Duration::from_millis(10);
                    match if lossy { next() % 40 } else { 39 } {
                        0 => {}
                        1 => wire.push_back((at + Duration::from_millis(3), 1 - side, r, p)),
                        2 => {
                            wire.push_back((at, 1 - side, r, p.clone()));
                            wire.push_back((at, 1 - side, r, p));
                        }
                        _ => wire.push_back((at, 1 - side, r, p)),
                    }
                }
            }
            wire.make_contiguous().sort_by_key(|e| e.0);
            let timer = c.iter().filter_map(|x| x.poll_timeout()).min();
            let arrival = wire.front().map(|e| e.0);
            let Some(t) = [timer, arrival].into_iter().flatten().min() else {
                break;
            };
            now = now.max(t);
            if arrival.is_some_and(|a| a <= now) {
                let (_, to, r, p) = wire.pop_front().unwrap();
                c[to].handle_segment(now, &r, &p);
                log.push(format!("in {to}: {}", snapshot(&c[to])));
            } else {
                for (side, x) in c.iter_mut().enumerate() {
                    if x.poll_timeout().is_some_and(|t| t <= now) {
                        x.handle_timeout(now);
                        log.push(format!("timer {side}: {}", snapshot(x)));
                    }
                }
            }
        }
        FULL_PATH_ONLY.with(|f| f.set(false));
        (log, PREDICTED.with(|p| p.get()))
    }

    thread_local! {
        static PREDICTED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    }

    /// Counts the segments that took the short path (see `on_predicted`).
    pub(in crate::conn) fn note_predicted() {
        PREDICTED.with(|p| p.set(p.get() + 1));
    }

    fn config(opts: u8, ack: u8, extra: u8) -> Config {
        Config {
            mss: 536,
            rcv_buf: 8192,
            snd_buf: 16384,
            options: OptionSet {
                window_scale: opts & 1 != 0,
                timestamps: opts & 2 != 0,
                sack: opts & 4 != 0,
                ..OptionSet::default()
            },
            ack_policy: [
                AckPolicyKind::Delayed,
                AckPolicyKind::Immediate,
                AckPolicyKind::QuickAck,
            ][ack as usize % 3],
            dsack: extra & 1 != 0,
            dsack_single: extra & 2 != 0,
            cwnd_validation: if extra & 4 != 0 {
                CwndValidation::Linux
            } else {
                CwndValidation::Off
            },
            recovery: crate::config::RecoverySet {
                tlp: extra & 8 != 0,
                prr: extra & 8 != 0,
                rack: extra & 16 != 0,
            },
            ..Config::default()
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// The short path changes nothing: the same segments, counters,
        /// timers and congestion state as with every segment on the full path.
        #[test]
        fn short_path_matches_full_path(
            seed in any::<u64>(), opts in 0u8..8, ack in 0u8..3, extra in 0u8..32,
            lossy in any::<bool>(), both in any::<bool>(),
        ) {
            let cfg = config(opts, ack, extra);
            let (full, none) = run(&cfg, seed, lossy, both, true);
            let (short, taken) = run(&cfg, seed, lossy, both, false);
            prop_assert_eq!(none, 0);
            // RACK with SACK keeps every segment on the full path.
            let rack_sack = cfg.options.sack && cfg.recovery.rack;
            prop_assert!(taken > 0 || rack_sack, "no segment took the short path");
            prop_assert_eq!(full.len(), short.len());
            for (i, (f, s)) in full.iter().zip(&short).enumerate() {
                prop_assert_eq!(f, s, "first difference at event {}", i);
            }
        }
    }

    /// An established pair with data in flight from A, and B's next segment
    /// to A as a template: the predicate's inputs, ready to be spoiled.
    fn established(opts: u8) -> (Connection, TcpRepr) {
        let cfg = config(opts, 1, 0);
        let mut a = Connection::connect(
            cfg.clone(),
            40000,
            80,
            IsnSeries::new(SeqNumber(7)),
            Instant::ZERO,
        );
        let mut b = Connection::listen(cfg, 80, IsnSeries::new(SeqNumber(100)));
        let now = Instant::from_millis(1);
        let mut buf = Vec::new();
        for _ in 0..4 {
            while let Some(r) = a.poll_transmit(now, &mut buf) {
                b.handle_segment(now, &r, &std::mem::take(&mut buf));
            }
            while let Some(r) = b.poll_transmit(now, &mut buf) {
                a.handle_segment(now, &r, &std::mem::take(&mut buf));
            }
        }
        assert_eq!(a.state(), State::Established);
        a.write(&[7; 1000], false).unwrap();
        a.poll_transmit(now, &mut buf).expect("data");
        let ack = TcpRepr {
            src_port: 80,
            dst_port: 40000,
            seq: a.rcv_nxt(),
            ack: a.snd_max,
            flags: Flags::ACK,
            window: (a.snd_wnd >> a.negotiated.snd_wscale) as u16,
            urgent: 0,
            options: Default::default(),
        };
        let mut ack = ack;
        if a.ts.enabled {
            ack.options.timestamps = Some(Timestamps {
                tsval: b.ts.option(Instant::from_millis(2)).tsval,
                tsecr: 1,
            });
        }
        (a, ack)
    }

    #[test]
    fn predicts_the_common_pure_ack_and_data() {
        let now = Instant::from_millis(2);
        for opts in 0..8 {
            let (a, ack) = established(opts);
            assert!(a.header_predicted(now, &ack, 0), "pure ACK, options {opts}");
            let mut psh = ack;
            psh.flags = Flags::ACK | Flags::PSH;
            assert!(a.header_predicted(now, &psh, 0), "PSH is ignored");
            let mut data = ack;
            data.ack = a.snd_una;
            assert!(
                a.header_predicted(now, &data, 100),
                "in-order data, options {opts}"
            );
        }
    }

    #[test]
    fn rejects_every_unusual_segment() {
        let now = Instant::from_millis(2);
        let (a, ack) = established(7);
        type Spoil = Box<dyn Fn(&mut TcpRepr)>;
        let spoiled: Vec<(&str, Spoil, usize)> = vec![
            ("FIN", Box::new(|s| s.flags = Flags::ACK | Flags::FIN), 0),
            ("SYN", Box::new(|s| s.flags = Flags::ACK | Flags::SYN), 0),
            ("RST", Box::new(|s| s.flags = Flags::ACK | Flags::RST), 0),
            ("URG", Box::new(|s| s.flags = Flags(Flags::ACK.0 | 0x20)), 0),
            ("ECE", Box::new(|s| s.flags = Flags(Flags::ACK.0 | 0x40)), 0),
            ("no ACK", Box::new(|s| s.flags = Flags::PSH), 0),
            ("seq ahead", Box::new(|s| s.seq += 1), 0),
            ("seq behind", Box::new(|s| s.seq = s.seq - 1), 0),
            ("window change", Box::new(|s| s.window -= 1), 0),
            ("zero window", Box::new(|s| s.window = 0), 0),
            (
                "SACK block",
                Box::new(|s| {
                    s.options.sack_blocks.push(s.ack, s.ack + 10);
                }),
                0,
            ),
            (
                "NAK",
                Box::new(|s| {
                    s.options.nak = Some(Nak {
                        seq: s.ack,
                        count: 1,
                    })
                }),
                0,
            ),
            ("duplicate ACK", Box::new(|s| s.ack = s.ack - 1000), 0),
            ("ACK of unsent", Box::new(|s| s.ack += 1), 0),
            (
                "old timestamp",
                Box::new(|s| {
                    let t = s.options.timestamps.as_mut().unwrap();
                    t.tsval = t.tsval.wrapping_sub(100_000);
                }),
                0,
            ),
            ("data with new ACK", Box::new(|_| {}), 100),
        ];
        for (what, spoil, len) in spoiled {
            let mut s = ack;
            spoil(&mut s);
            assert!(
                !a.header_predicted(now, &s, len),
                "{what} took the short path"
            );
        }
    }

    #[test]
    fn rejects_unusual_connection_state() {
        let now = Instant::from_millis(2);
        type Spoil = Box<dyn Fn(&mut Connection)>;
        let cases: Vec<(&str, Spoil)> = vec![
            ("recovery", Box::new(|c| c.recovery.active = true)),
            ("duplicate ACKs", Box::new(|c| c.recovery.dupacks = 1)),
            (
                "FIN recorded",
                Box::new(|c| c.fin.rcv_seq = Some(c.rcv_nxt() + 5)),
            ),
            ("trace", Box::new(|c| c.cfg_mut().trace = true)),
            ("ECN", Box::new(|c| c.ecn.ok = true)),
            ("RACK", Box::new(|c| c.cfg_mut().recovery.rack = true)),
            ("NAK", Box::new(|c| c.negotiated.nak = true)),
            ("Big Window", Box::new(|c| c.negotiated.bigwin = true)),
            ("close wait", Box::new(|c| c.state = State::CloseWait)),
            (
                "SACKed data",
                Box::new(|c| {
                    let (u, m) = (c.snd_una, c.snd_max);
                    c.scoreboard.update(u, m, &[(u + 100, u + 200)]);
                }),
            ),
        ];
        for (what, spoil) in cases {
            let (mut a, ack) = established(7);
            spoil(&mut a);
            assert!(
                !a.header_predicted(now, &ack, 0),
                "{what} took the short path"
            );
        }
        // Data into a closed receive window is the full path's to judge.
        let (mut a, mut data) = established(7);
        data.ack = a.snd_una;
        a.rcv_adv = a.rcv_nxt();
        assert!(
            !a.header_predicted(now, &data, 100),
            "closed window took the short path"
        );
        let (mut a, mut data) = established(7);
        data.ack = a.snd_una;
        a.rcv_adv = a.rcv_nxt() + 99;
        assert!(
            !a.header_predicted(now, &data, 100),
            "data past the window took the short path"
        );
        assert!(
            a.header_predicted(now, &data, 99),
            "data up to the window's edge"
        );
    }
}
