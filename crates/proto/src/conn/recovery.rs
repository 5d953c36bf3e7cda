//! The sender's side of an ACK (RFC 9293 3.10.7.4 fifth check): RTT samples,
//! congestion-window growth, duplicate-ACK, SACK (RFC 6675), RACK (RFC 8985)
//! and NAK (RFC 1106) loss detection, and fast recovery (RFC 6582).

use super::{Connection, Timer};
use crate::cc::{AckSample, CwndValidation};
use crate::prr::Prr;
use crate::seq::SeqNumber;
use crate::time::{Duration, Instant};
use crate::wire::{Nak, TcpRepr};

/// Loss-recovery state: duplicate ACKs (RFC 5681), NewReno's (RFC 6582) or
/// the SACK scoreboard's (RFC 6675) recovery, and PRR's (RFC 6937).
#[derive(Clone, Copy, Debug)]
pub(super) struct RecoveryState {
    /// In fast recovery (NewReno or SACK).
    pub(super) active: bool,
    /// The current recovery is driven by the SACK scoreboard (RFC 6675), not NewReno.
    pub(super) sack: bool,
    /// RFC 6675 5 step 4.3: the first retransmission of a recovery ignores pipe.
    pub(super) rxt_first: bool,
    /// Duplicate ACKs counted since SND.UNA last moved.
    pub(super) dupacks: u32,
    /// RFC 6582 "recover": highest sequence sent when recovery began.
    pub(super) recover: SeqNumber,
    /// RFC 6675 HighRxt: highest sequence number retransmitted in this recovery.
    pub(super) high_rxt: SeqNumber,
    /// A single segment to retransmit at once (fast retransmit, partial ACK).
    pub(super) rexmit_one: Option<SeqNumber>,
    /// RFC 6937 PRR state of the current SACK recovery, when `recovery.prr` is on.
    pub(super) prr: Option<Prr>,
}

impl RecoveryState {
    /// No recovery, with the send sequence space starting at `iss`.
    pub(super) fn new(iss: SeqNumber) -> Self {
        RecoveryState {
            active: false,
            sack: false,
            rxt_first: false,
            dupacks: 0,
            recover: iss,
            high_rxt: iss,
            rexmit_one: None,
            prr: None,
        }
    }
}

impl Connection {
    /// RFC 6675 4: the data estimated in flight from the SACK scoreboard.
    pub(super) fn sack_pipe(&self) -> usize {
        self.scoreboard.pipe(
            self.snd_una,
            self.snd_max,
            self.recovery.high_rxt,
            self.cfg.dupack_threshold,
            self.snd_mss,
        )
    }

    /// RFC 9293 3.10.7.4 fifth check, with RFC 5681/6582 loss detection.
    /// Returns false when the segment must be dropped.
    pub(super) fn process_ack(&mut self, now: Instant, seg: &TcpRepr, payload_len: usize) -> bool {
        let ack = seg.ack;
        // By unsigned offset from SND.UNA, so no ACK is ambiguous 2^31 away.
        let ahead = ack.0.wrapping_sub(self.snd_una.0) as usize;
        let flight = self.snd_max.distance_from(self.snd_una);
        if ahead > flight {
            if ack > self.snd_max {
                // Acknowledges something not yet sent (RFC 9293 3.10.7.4;
                // RFC 5961 5.2 answers it as a challenge).
                self.counters.unacceptable_acks += 1;
                if !self.cfg.silent_unsent_ack {
                    self.ack_invalid(now, self.cfg.rfc5961, true);
                }
                return false;
            }
            let behind = self.snd_una.0.wrapping_sub(ack.0) as usize;
            if self.cfg.rfc5961 && behind > self.max_snd_wnd {
                // RFC 5961 5.2: below SND.UNA - MAX.SND.WND: drop, ACK.
                self.counters.unacceptable_acks += 1;
                self.ack_invalid(now, true, true);
                return false;
            }
            if self.cfg.old_ack_sack {
                self.old_ack_sack(now, seg);
            }
            return true; // old duplicate: ignore the ACK field
        }
        let window = self.peer_window(seg);
        // An acceptable ACK answers the zero-window probes (Linux's tcp_ack
        // clears icsk_probes_out), even one still advertising a zero window.
        self.probes_out = 0;
        let flight_before = self.snd_max.distance_from(self.snd_una);
        // RFC 6937 DeliveredData = delta(SND.UNA) + delta(SACKd).
        let (una_before, sacked_before) = (self.snd_una, self.scoreboard.sacked_bytes());
        // RFC 5681 2: the definition of a duplicate acknowledgment. Replies to
        // zero-window probes look the same and are not counted.
        let is_dup = ack == self.snd_una
            && self.snd_wnd > 0
            && payload_len == 0
            && !seg.flags.syn()
            && !seg.flags.fin()
            && window == self.snd_wnd
            && flight_before > 0;

        let exited_recovery = ack > self.snd_una && self.on_ack_advance(now, seg, sacked_before);
        // RFC 6675 Update(): fold the ACK's SACK blocks into the scoreboard.
        let sack_new = self.negotiated.sack
            && !seg.options.sack_blocks.is_empty()
            && self.scoreboard.update(
                self.snd_una,
                self.snd_max,
                seg.options.sack_blocks.as_slice(),
            );
        if self.negotiated.sack && !self.negotiated.nak {
            // RFC 6675 5: an ACK carrying new SACK information counts as a duplicate.
            if ack == self.snd_una && (is_dup || (sack_new && flight_before > 0)) {
                self.counters.dup_acks_received += is_dup as u64;
                self.recovery.dupacks += 1;
            }
            if self.cfg.recovery.rack {
                let blocks = seg.options.sack_blocks.as_slice();
                // RFC 2883 4: a D-SACK is a first block below the cumulative
                // ACK or inside the second block.
                let dsack = blocks.first().is_some_and(|&(l, r)| {
                    r <= ack || blocks.get(1).is_some_and(|&(l2, r2)| l >= l2 && r <= r2)
                });
                self.rack.on_sack(&mut self.sent, now, self.snd_una, blocks);
                self.rack
                    .on_dsack_and_exit(dsack, exited_recovery, self.snd_una, self.snd_max);
                self.rack_detect(now);
            }
            let thresh = self.cfg.dupack_threshold;
            // With RACK only its marks start recovery (RFC 8985 6.2; Linux's
            // tcp_time_to_recover skips the DupThresh heuristic under RACK):
            // reordering seen earlier keeps a window open for late segments.
            if !self.recovery.active
                && !self.cfg.recovery.rack
                && self.snd_una > self.recovery.recover
                && self.snd_una < self.snd_max
                && (self.recovery.dupacks >= thresh
                    || self.scoreboard.is_lost(self.snd_una, thresh, self.snd_mss))
            {
                self.enter_sack_recovery();
            }
            if self.recovery.sack {
                if let Some(mut prr) = self.recovery.prr {
                    let delivered = (self.snd_una.distance_from(una_before) as i64
                        + self.scoreboard.sacked_bytes() as i64
                        - sacked_before as i64)
                        .max(0) as usize;
                    let pipe = self.sack_pipe();
                    if self.cfg.prr_safe_ack {
                        prr.on_ack_safe(delivered, pipe, self.snd_mss, self.snd_una > una_before);
                    } else {
                        prr.on_ack(delivered, pipe, self.snd_mss);
                    }
                    self.recovery.prr = Some(prr);
                }
            }
        } else if is_dup {
            self.counters.dup_acks_received += 1;
            self.recovery.dupacks += 1;
            if self.negotiated.nak {
                // RFC 1106 4.3: no duplicate-ACK fast retransmit while NAKs are in use.
                if self.recovery.dupacks == self.cfg.dupack_threshold {
                    self.counters.fast_retransmits_suppressed += 1;
                }
            } else if self.recovery.active {
                self.cc.on_recovery_dupack(self.snd_mss);
            } else if self.recovery.dupacks == self.cfg.dupack_threshold
                && ack > self.recovery.recover
            {
                // RFC 6582 3.2 step 2: enter fast retransmit / fast recovery.
                self.recovery.recover = self.snd_max;
                self.recovery.active = true;
                self.cc
                    .on_fast_retransmit(flight_before, self.snd_mss, self.recovery.dupacks);
                self.recovery.rexmit_one = Some(self.snd_una);
                self.rtt_probe = None;
                self.counters.fast_retransmits += 1;
            }
        }

        self.update_send_window(seg, window);
        true
    }

    /// RFC 9293 3.10.7.4 fifth check for an ACK that advances SND.UNA: frees
    /// what it covers, samples the RTT, grows cwnd or steps recovery (RFC
    /// 5681, RFC 6582, RFC 6675), and restarts the retransmission timer (RFC
    /// 6298 5.2-5.3). Returns whether recovery ended. `seg.ack` > SND.UNA.
    pub(super) fn on_ack_advance(
        &mut self,
        now: Instant,
        seg: &TcpRepr,
        sacked_before: usize,
    ) -> bool {
        let ack = seg.ack;
        let mut exited_recovery = false;
        let acked = ack.distance_from(self.snd_una);
        let fin_now_acked = self.fin.queued && ack > self.fin_seq();
        // The SYN occupies ISS: the ACK that completes a passive open covers
        // it, not a byte of data written meanwhile in SYN-RECEIVED.
        let syn_now_acked = self.snd_una == self.iss && self.send_buf.head() == 0;
        let data_acked = acked - fin_now_acked as usize - syn_now_acked as usize;
        self.send_buf.ack(data_acked);
        let head = self.send_buf.head();
        if let Some(skbs) = self.skbs_mut() {
            skbs.ack(head);
        }
        self.snd_una = ack;
        self.user_timeout.on_ack(ack);
        if self.send_buf.is_empty() && ack == self.snd_max {
            // tcp_chrono_stop: nothing queued or in flight.
            self.chrono.stop(crate::chrono::ChronoKind::Busy, now, true);
        }
        if self.snd_nxt < self.snd_una {
            self.snd_nxt = self.snd_una;
        }
        self.scoreboard.advance(ack);
        if self.recovery.high_rxt < ack {
            self.recovery.high_rxt = ack;
        }
        let rtt = self.take_rtt_sample(now, seg);
        // The congestion module's sample is the newest segment's send time,
        // on every ACK (tcp_input.c tcp_clean_rtx_queue ca_rtt_us).
        // One pass over the record of sent segments: RACK's deliveries
        // (steps 1-3, off while NAKs are in use, RFC 1106 4.3), the
        // congestion module's RTT sample and the delivered count.
        let rack_on = self.cfg.recovery.rack && self.negotiated.sack && !self.negotiated.nak;
        if rack_on {
            self.rack.begin_ack();
        }
        let rack = &mut self.rack;
        let taken = self.sent.on_cumulative_ack(self.snd_una, now, |s| {
            if rack_on {
                rack.on_cumulative_ack(now, s);
            }
        });
        self.counters.segments_delivered += taken.segments;
        let ca_rtt = taken.rtt;
        self.cc.on_ack_sample(&AckSample {
            now,
            rtt: ca_rtt.or(rtt),
            srtt: self.rtt.srtt(),
            snd_una: self.snd_una,
            snd_nxt: self.snd_max,
        });
        self.retries = 0;
        self.rtt.reset_backoff();
        if self.recovery.active {
            if ack >= self.recovery.recover {
                // RFC 6675 5 step 3 / RFC 6582 3.2 step 6: recovery ends.
                if !self.recovery.sack {
                    let flight = self.snd_max.distance_from(self.snd_una);
                    self.cc.on_recovery_exit(flight, self.snd_mss);
                }
                self.recovery.active = false;
                self.recovery.sack = false;
                exited_recovery = true;
                // RFC 6937 3: on exit cwnd = ssthresh, which the controller holds.
                self.recovery.prr = None;
            } else if self.recovery.sack {
                // RFC 6675: a partial ACK only updates the scoreboard; pipe decides.
            } else {
                // RFC 6582 3.2 step 5: partial ACK, retransmit the next hole.
                self.cc.on_partial_ack(acked, self.snd_mss);
                self.recovery.rexmit_one = Some(self.snd_una);
            }
        } else if self.window_in_use() {
            let grow = self.newly_delivered(acked, sacked_before);
            self.cc.on_ack(grow, self.snd_mss);
        } else {
            self.cc.on_ack_window_unused(acked, self.snd_mss);
        }
        self.recovery.dupacks = 0;
        // RFC 6298 5.2-5.3.
        if self.snd_una == self.snd_max {
            self.disarm(Timer::Retransmit);
        } else {
            self.arm(Timer::Retransmit, now + self.rtt.rto());
        }
        // RFC 8985 7.4: the probe's episode ends once it is acknowledged.
        if self.tlp_end.is_some_and(|e| ack >= e) {
            self.tlp_end = None;
        }
        self.tx.tlp_rearm = true;
        exited_recovery
    }

    /// RFC 9293 3.10.7.4: update the send window from the newest segment
    /// (SND.WL1, SND.WL2), and stop the persist timer once it opens.
    pub(super) fn update_send_window(&mut self, seg: &TcpRepr, window: usize) {
        let ack = seg.ack;
        if self.snd_wl1 < seg.seq || (self.snd_wl1 == seg.seq && self.snd_wl2 <= ack) {
            self.snd_wnd = window;
            self.snd_wl1 = seg.seq;
            self.snd_wl2 = ack;
            self.max_snd_wnd = self.max_snd_wnd.max(window);
            if window > 0 {
                self.persist_backoff = 0;
                if self.armed(Timer::Persist) && window >= self.unsent().min(self.snd_mss) {
                    self.disarm(Timer::Persist);
                }
            }
        }
    }

    /// RFC 8985 6.2 steps 4-5 and 6.3: mark segments lost by time, resend a
    /// lost retransmission, start recovery on a loss, (re)arm the reordering timer.
    pub(super) fn rack_detect(&mut self, now: Instant) {
        if !self.cfg.recovery.rack
            || !self.negotiated.sack
            || self.negotiated.nak
            || !self.state.synchronized()
        {
            return;
        }
        let thresh = self.cfg.dupack_threshold as usize;
        let dupthresh_sacked = self.scoreboard.sacked_bytes() >= thresh * self.snd_mss;
        let reo = self
            .rack
            .reo_wnd(self.recovery.active, dupthresh_sacked, self.rtt.srtt());
        let det = self.rack.detect_loss(&mut self.sent, now, reo);
        if let Some(s) = det.lost_rexmit {
            // The retransmission is lost too: NextSeg finds it again.
            self.recovery.high_rxt = self.recovery.high_rxt.min(s).max(self.snd_una);
        }
        self.scoreboard.set_rack_lost(self.rack.lost_end());
        match det.timeout {
            Some(d) => self.arm(Timer::Rack, now + d),
            None => self.disarm(Timer::Rack),
        }
        if det.newly_lost {
            self.counters.rack_losses += 1;
            if !self.recovery.active
                && self.snd_una > self.recovery.recover
                && self.snd_una < self.snd_max
            {
                self.enter_sack_recovery();
            }
        }
    }

    /// RFC 6675 5 step 4: enter loss recovery driven by the SACK scoreboard.
    fn enter_sack_recovery(&mut self) {
        let flight = self.snd_max.distance_from(self.snd_una);
        self.recovery.recover = self.snd_max;
        self.recovery.active = true;
        self.recovery.sack = true;
        // RFC 3168 6.1.2: at most one reduction per window, ECN's included.
        if self.ecn_recover.is_none_or(|r| self.snd_una > r) {
            self.cc.on_loss_repair(flight, self.snd_mss);
        }
        // RFC 6937 3: RecoverFS = SND.NXT - SND.UNA at the start of recovery.
        // Only when the controller reduced (not for RFC 1106 4.2 "noise").
        self.recovery.prr = (self.cfg.recovery.prr && self.cc.ssthresh() < flight)
            .then(|| Prr::new(flight, self.cc.ssthresh()));
        self.recovery.high_rxt = self.snd_una;
        self.recovery.rxt_first = true;
        self.rtt_probe = None;
        self.counters.sack_recoveries += 1;
        self.counters.fast_retransmits += 1;
    }

    /// An ACK below SND.UNA that carries SACK blocks during SACK recovery:
    /// its cumulative ACK is stale but its SACK information is news, so the
    /// scoreboard, RACK and PRR take it (Linux's tcp_ack: an old ACK with
    /// SACK still runs tcp_sacktag_write_queue, tcp_fastretrans_alert and
    /// tcp_xmit_recovery). SND.UNA and the window stay as they are.
    fn old_ack_sack(&mut self, now: Instant, seg: &TcpRepr) {
        if !self.negotiated.sack || !self.recovery.sack || seg.options.sack_blocks.is_empty() {
            return;
        }
        let blocks = seg.options.sack_blocks.as_slice();
        let sacked_before = self.scoreboard.sacked_bytes();
        if !self.scoreboard.update(self.snd_una, self.snd_max, blocks) {
            return;
        }
        if self.cfg.recovery.rack {
            self.rack.on_sack(&mut self.sent, now, self.snd_una, blocks);
            self.rack_detect(now);
        }
        if let Some(mut prr) = self.recovery.prr {
            let delivered = self.scoreboard.sacked_bytes().saturating_sub(sacked_before);
            let pipe = self.sack_pipe();
            prr.on_ack_safe(delivered, pipe, self.snd_mss, false);
            self.recovery.prr = Some(prr);
        }
    }

    /// RFC 1106 2.1: the peer NAKed [seq, seq + count x MSS): resend it at once.
    pub(super) fn on_nak(&mut self, nak: Nak) {
        self.counters.naks_received += 1;
        let start = nak.seq.max(self.snd_una);
        let end = (nak.seq + nak.count as usize * self.snd_mss).min(self.snd_nxt);
        if start >= end || nak.seq >= self.snd_max {
            return; // names nothing outstanding: advisory, ignore (RFC 1106 2)
        }
        self.tx.naks_used = true;
        self.nak_tx.push(start, end);
        if self.rtt_probe.is_some_and(|(e, _)| e > start) {
            self.rtt_probe = None; // Karn: the timed segment is being resent.
        }
        // RFC 1106 4.2: congestion (once per window of data) or noise (no change).
        if start >= self.recovery.recover {
            let flight = self.snd_max.distance_from(self.snd_una);
            self.recovery.recover = self.snd_max;
            self.cc.on_loss_repair(flight, self.snd_mss);
        }
    }

    /// RTT sample for an ACK of new data: RFC 7323 4.1 RTTM from the echoed
    /// TSval when timestamps are on, else the one timed segment (Karn, RFC 6298 3).
    pub(super) fn take_rtt_sample(&mut self, now: Instant, seg: &TcpRepr) -> Option<Duration> {
        if self.ts.enabled {
            if let Some(ts) = seg.options.timestamps {
                if let Some(r) = self.ts.rtt_sample(now, ts.tsecr) {
                    self.rtt.sample(r);
                    self.rtt_probe = None;
                    return Some(r);
                }
            }
        }
        let ack = seg.ack;
        if let Some((end, sent)) = self.rtt_probe {
            if ack >= end {
                let r = now - sent;
                self.rtt.sample(r);
                self.rtt_probe = None;
                return Some(r);
            }
        }
        None
    }

    /// RFC 5681 4.1 / RFC 2861: new data waits, nothing is in flight and the
    /// last data went out more than an RTO ago: cwnd restarts smaller (Linux
    /// checks when the write is queued, tcp_slow_start_after_idle_check).
    pub(super) fn maybe_idle_restart(&mut self, now: Instant) {
        if !std::mem::take(&mut self.tx.idle_check)
            || !self.cfg.slow_start_after_idle
            || self.snd_una != self.snd_max
            || self.recovery.active
        {
            return;
        }
        let Some(last) = self.last_data_sent else {
            return;
        };
        let idle = now.saturating_duration_since(last);
        let rto = self.rtt.rto();
        if idle <= rto || self.send_buf.end() <= self.off_of(self.snd_nxt) {
            return;
        }
        let restart = self.cfg.initial_window as usize * self.snd_mss;
        self.cc.on_idle_restart(restart, idle, rto);
    }

    /// Linux tcp_write_xmit's end: after a pass that sent data, or found data
    /// waiting with the flight at cwnd, record how much of cwnd is in use
    /// (tcp_cwnd_validate; is_cwnd_limited when packets in flight >= cwnd).
    pub(super) fn note_cwnd_usage(&mut self, sent: bool) {
        if self.cfg.cwnd_validation == CwndValidation::Off {
            return;
        }
        let mss = self.snd_mss.max(1);
        let in_flight = if self.recovery.sack {
            self.sack_pipe()
        } else {
            self.snd_nxt.distance_from(self.snd_una)
        };
        let waiting = self.send_buf.end() > self.off_of(self.snd_nxt);
        let limited = in_flight.div_ceil(mss) >= self.send_cwnd() / mss;
        if sent || (waiting && limited) {
            let packets_out = self.snd_max.distance_from(self.snd_una).div_ceil(mss);
            self.cwnd_usage
                .on_transmit(self.snd_una, self.snd_max, packets_out, limited);
        }
    }

    /// What an ACK of `acked` bytes grows cwnd by. Linux counts segments newly
    /// delivered (tcp_ack's delivered): data SACKed earlier, or standing for a
    /// duplicate ACK without SACK (tcp_remove_reno_sacks), was counted then.
    /// Other stacks count every byte SND.UNA moves (RFC 5681 3.1).
    fn newly_delivered(&self, acked: usize, sacked_before: usize) -> usize {
        if self.cfg.cwnd_validation == CwndValidation::Off {
            return acked;
        }
        let mss = self.snd_mss.max(1);
        if self.negotiated.sack {
            let was_sacked = sacked_before.saturating_sub(self.scoreboard.sacked_bytes());
            acked.saturating_sub(was_sacked).max(acked.min(mss))
        } else {
            let pkts = acked.div_ceil(mss);
            let dup = self.recovery.dupacks as usize;
            pkts.saturating_sub(dup).max(1).min(pkts) * mss
        }
    }

    /// Whether an ACK of new data may grow cwnd: always, unless cwnd validation
    /// is on and the sender did not use its window (tcp_is_cwnd_limited).
    fn window_in_use(&self) -> bool {
        match self.cfg.cwnd_validation {
            CwndValidation::Off => true,
            CwndValidation::Linux => {
                let mss = self.snd_mss.max(1);
                let cwnd = self.cc.cwnd();
                self.cwnd_usage
                    .is_cwnd_limited(cwnd / mss, cwnd < self.cc.ssthresh())
            }
        }
    }
}
