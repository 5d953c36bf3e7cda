//! The engine's timers: retransmission (RFC 6298), tail loss probe (RFC 8985
//! 7), persist (RFC 9293 3.8.6.1), delayed ACK, TIME-WAIT and the send
//! policy's, and what each does when it fires.

use super::{ConnError, Connection, Timer};
use crate::policy::AckReason;
use crate::state::State;
use crate::time::{Duration, Instant};

impl Connection {
    /// The earliest time `handle_timeout` must be called, if any timer is armed.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.timers.iter().flatten().min().copied()
    }

    pub(super) fn arm(&mut self, t: Timer, at: Instant) {
        self.timers[t as usize] = Some(at);
    }

    pub(super) fn disarm(&mut self, t: Timer) {
        self.timers[t as usize] = None;
    }

    pub(super) fn armed(&self, t: Timer) -> bool {
        self.timers[t as usize].is_some()
    }

    /// Processes every timer that has expired by `now`.
    pub fn handle_timeout(&mut self, now: Instant) {
        let due = |c: &Self, t: Timer| c.timers[t as usize].is_some_and(|at| at <= now);
        if due(self, Timer::TimeWait) {
            self.disarm(Timer::TimeWait);
            self.enter_closed(None);
            return;
        }
        if due(self, Timer::Rack) {
            self.disarm(Timer::Rack);
            self.rack_detect(now); // RFC 8985 6.3
        }
        // A probe due with the RTO goes first and re-arms it (RFC 8985 7.3).
        if due(self, Timer::Tlp) {
            self.disarm(Timer::Tlp);
            self.on_tlp_timeout(now);
        }
        if due(self, Timer::Retransmit) {
            self.disarm(Timer::Retransmit);
            self.on_retransmit_timeout(now);
        }
        if due(self, Timer::DelayedAck) {
            self.disarm(Timer::DelayedAck);
            if self.state.synchronized() || self.state == State::SynReceived {
                self.ack.now.get_or_insert(AckReason::Timer {
                    delay: self.ack.delack_len,
                });
                self.counters.delack_timer_fired += 1;
                let ctx = self.ack_ctx(now, 0);
                self.ack_policy.on_timer(&ctx);
            }
        }
        if due(self, Timer::Persist) {
            self.disarm(Timer::Persist);
            self.on_persist_timeout(now);
        }
        if due(self, Timer::Keepalive) {
            self.disarm(Timer::Keepalive);
            self.on_keepalive_timeout(now);
        }
        if due(self, Timer::Policy) {
            // Nothing to do here: the next poll asks the policy again.
            self.disarm(Timer::Policy);
            self.tx.policy_timer_fired = true;
        }
        self.debug_check_invariants();
    }

    /// Whether a tail loss probe may be scheduled now (RFC 8985 7.2: SACK in
    /// use, data outstanding, not in recovery, an RTT measured, no probe out).
    /// Any state with data or a FIN in flight qualifies: Linux's
    /// tcp_output.c tcp_schedule_loss_probe does not look at the state, so a
    /// FIN or the data queued before shutdown() is probed as well.
    fn tlp_eligible(&self) -> bool {
        self.cfg.recovery.tlp
            && self.negotiated.sack
            // Linux's tcp_schedule_loss_probe checks no state: a FIN in
            // flight after close() is probed too.
            && matches!(
                self.state,
                State::Established
                    | State::CloseWait
                    | State::FinWait1
                    | State::Closing
                    | State::LastAck
            )
            && !self.recovery.active
            && self.snd_una < self.snd_max
            && self.tlp_end.is_none()
            && self.rtt.srtt().is_some()
    }

    /// RFC 8985 7.2: PTO = 2 SRTT, plus WCDelAckT (200 ms) when one segment is
    /// in flight, and never later than the RTO, which the probe then stands in for.
    pub(super) fn arm_tlp(&mut self, now: Instant) {
        self.disarm(Timer::Tlp);
        if !self.tlp_eligible() {
            return;
        }
        let Some(srtt) = self.rtt.srtt() else {
            return;
        };
        let mut pto = srtt * 2;
        if self.snd_max.distance_from(self.snd_una) <= self.snd_mss {
            pto += Duration::from_millis(200);
        } else {
            pto += self.cfg.tlp_extra;
        }
        let mut at = now + pto;
        if let Some(rto) = self.timers[Timer::Retransmit as usize] {
            at = at.min(rto);
        }
        self.arm(Timer::Tlp, at);
    }

    /// RFC 8985 7.3: send one new segment if the window allows, else resend
    /// the last one, so an ACK (with SACK) comes back before the RTO.
    fn on_tlp_timeout(&mut self, now: Instant) {
        if !self.tlp_eligible() {
            return;
        }
        self.counters.tlp_probes += 1;
        self.tlp_end = Some(self.snd_max);
        let flight = self.snd_max.distance_from(self.snd_una);
        if self.unsent() > 0 && self.snd_wnd > flight {
            self.tx.force_one = true;
        } else {
            // The last segment sent: a FIN that went alone is probed alone
            // (tcp_send_fin queues it as its own skb once the data is out).
            let back = if self.tx.fin_alone && self.fin_sent() {
                1
            } else {
                flight.min(self.snd_mss).max(1)
            };
            self.recovery.rexmit_one = Some(self.snd_max - back);
            self.rtt_probe = None; // Karn: the timed segment may be resent.
        }
        // RFC 8985 7.3: the RTO is re-armed after a probe.
        self.arm(Timer::Retransmit, now + self.rtt.rto());
    }

    /// RFC 6298 5.4-5.6: retransmit the earliest unacknowledged segment, back off.
    fn on_retransmit_timeout(&mut self, now: Instant) {
        match self.state {
            State::SynSent | State::SynReceived => {
                // A passive open's SYN-ACKs count against synack_retries
                // (Linux's request sockets); an active open's, a
                // simultaneous open included, against syn_retries.
                let limit = if self.passive {
                    self.cfg.synack_retries
                } else {
                    self.cfg.syn_retries
                };
                if self.retries >= limit {
                    self.enter_closed(Some(ConnError::TimedOut));
                    return;
                }
                self.retries += 1;
                self.counters.syn_retransmits += 1;
                if self.cfg.syn_rexmit_drop_options
                    && self.state == State::SynSent
                    && self.retries == 3
                {
                    // FreeBSD tcp_timer_rexmt: no answer to the third SYN; a
                    // middlebox may drop unknown options (TF_REQ_SCALE,
                    // TF_REQ_TSTMP and TF_SACK_PERMIT cleared for good).
                    let o = &mut self.cfg_mut().options;
                    (o.window_scale, o.timestamps, o.sack) = (false, false, false);
                }
                self.rtt.back_off();
                self.rtt_probe = None;
                self.tx.need_syn = true;
                self.snd_nxt = self.iss;
            }
            State::Closed | State::Listen | State::TimeWait => {}
            _ => {
                if self.snd_una == self.snd_max {
                    return;
                }
                if self.retries > 0 && self.user_timeout.expired(now) {
                    // RFC 5482 / Linux tcp_write_timeout: the user timeout is
                    // up; tcp_write_err drops the connection without a RST.
                    self.enter_closed(Some(ConnError::TimedOut));
                    return;
                }
                if self.retries >= self.retry_limit(self.rtt.rto() < self.cfg.rto_max) {
                    // RFC 1122 4.2.3.5: give up; tell the peer.
                    self.pending_rst = Some(Box::new(self.rst_segment(self.snd_nxt, None)));
                    self.enter_closed(Some(ConnError::TimedOut));
                    return;
                }
                self.retries += 1;
                self.user_timeout.on_retransmit(now, self.snd_max);
                self.counters.timeouts += 1;
                let flight = self.snd_max.distance_from(self.snd_una);
                self.cc.on_rto(flight, self.snd_mss);
                self.rtt.back_off();
                self.rtt_probe = None; // Karn
                                       // RFC 6582 4.1: no fast retransmit for data sent before the timeout.
                self.recovery.recover = self.snd_max;
                self.recovery.active = false;
                self.recovery.sack = false;
                self.recovery.prr = None;
                self.tlp_end = None;
                self.rack.on_rto(&mut self.sent);
                self.scoreboard.set_rack_lost(None);
                self.disarm(Timer::Rack);
                self.recovery.rxt_first = false;
                self.recovery.dupacks = 0;
                self.recovery.rexmit_one = None;
                if self.tx.naks_used {
                    self.nak_tx.clear();
                }
                if self.retries >= 2 {
                    // RFC 2018 8: the receiver may have reneged; stop trusting SACKs.
                    self.scoreboard.clear();
                }
                // Go back N: resend from the oldest unacknowledged byte.
                self.snd_nxt = self.snd_una;
            }
        }
        let _ = now;
    }

    /// RFC 9293 3.8.6.1: probe a zero window; RFC 1122 4.2.3.4: or override SWS.
    fn on_persist_timeout(&mut self, now: Instant) {
        if !self.can_send_data_state() || self.unsent() == 0 {
            self.persist_backoff = 0;
            return;
        }
        if self.snd_wnd == 0 {
            // RFC 1122 4.2.2.17 keeps the connection open only "as long as the
            // receiving TCP continues to send acknowledgments in response to
            // the probe segments": like Linux's tcp_probe_timer, give up after
            // max_retries (tcp_retries2) probes no ACK answered, without a
            // RST (tcp_write_err).
            // An orphan whose probe interval reached rto_max is given up
            // at once (tcp_probe_timer's `!alive` check).
            if self.probes_out >= self.retry_limit(self.persist_interval() < self.cfg.rto_max) {
                self.counters.window_probe_aborts += 1;
                self.enter_closed(Some(ConnError::TimedOut));
                return;
            }
            self.probes_out += 1;
            // Abandon an earlier probe byte and send it again.
            self.snd_nxt = self.snd_una;
            self.counters.window_probes += 1;
            self.persist_backoff = self.persist_backoff.saturating_add(1);
            let at = now + self.persist_interval();
            self.arm(Timer::Persist, at);
            if self.cfg.window_probe == crate::config::WindowProbe::OldSeq {
                // tcp_xmit_probe_skb: no data, a sequence number already acked.
                self.tx.old_seq_probe = true;
                return;
            }
        }
        self.tx.force_one = true;
    }

    /// States keep-alive runs in: synchronized, until TIME-WAIT (Linux's
    /// tcp_keepalive_timer skips CLOSE, LISTEN and SYN-SENT).
    fn keepalive_state(&self) -> bool {
        matches!(
            self.state,
            State::Established
                | State::CloseWait
                | State::FinWait1
                | State::FinWait2
                | State::Closing
                | State::LastAck
        )
    }

    /// FreeBSD tcp(4) TCP_KEEPINIT, as tcp_timer_keep: while an active open
    /// is not yet established, the keep-alive timer is its connect timeout.
    pub(super) fn connect_timer_runs(&self) -> bool {
        let opening = match self.state {
            State::SynSent => true,
            State::SynReceived => !self.passive,
            _ => false,
        };
        opening && self.cfg.connect_timeout.is_some()
    }

    /// Arms the keep-alive timer if it should run and does not: `keepalive_idle`
    /// after the last segment arrived (Linux keepalive_time_elapsed).
    pub(super) fn keepalive_kick(&mut self, now: Instant) {
        if self.connect_timer_runs() {
            return;
        }
        if !(self.cfg.keepalive && self.keepalive_state()) {
            self.disarm(Timer::Keepalive);
            return;
        }
        if !self.armed(Timer::Keepalive) {
            let idle = self.cfg.keepalive_idle;
            let elapsed = self.last_rcv.map_or(Duration::ZERO, |t| now - t);
            self.arm(Timer::Keepalive, now + idle.saturating_sub(elapsed));
        }
    }

    /// RFC 1122 4.2.3.6, as Linux's tcp_keepalive_timer: after `keepalive_idle`
    /// with nothing received and nothing in flight or queued, a probe (an
    /// ACK carrying SND.UNA - 1, which the peer must answer) every
    /// `keepalive_intvl`; after `keepalive_probes` unanswered ones (or, with
    /// TCP_USER_TIMEOUT, once that much time passed), a reset and ETIMEDOUT.
    fn on_keepalive_timeout(&mut self, now: Instant) {
        if self.connect_timer_runs() {
            // tcp_drop: a reset only once the peer's SYN is in (TCPS_HAVERCVDSYN).
            if self.state == State::SynReceived {
                let ack = Some(self.rcv_nxt());
                self.pending_rst = Some(Box::new(self.rst_segment(self.snd_nxt, ack)));
            }
            self.enter_closed(Some(ConnError::TimedOut));
            return;
        }
        if !(self.cfg.keepalive && self.keepalive_state()) {
            return;
        }
        let idle = self.cfg.keepalive_idle;
        // "It is alive without keepalive": data in flight or waiting.
        if self.snd_max != self.snd_una || self.unsent() > 0 {
            self.arm(Timer::Keepalive, now + idle);
            return;
        }
        let elapsed = self.last_rcv.map_or(idle, |t| now - t);
        if elapsed < idle {
            self.arm(Timer::Keepalive, now + (idle - elapsed));
            return;
        }
        let give_up = match self.user_timeout.limit() {
            Some(ut) => elapsed >= ut && self.keepalive_out > 0,
            None => self.keepalive_out >= self.cfg.keepalive_probes,
        };
        if give_up {
            // tcp_send_active_reset, then tcp_write_err.
            let ack = Some(self.rcv_nxt());
            self.pending_rst = Some(Box::new(self.rst_segment(self.snd_nxt, ack)));
            self.enter_closed(Some(ConnError::TimedOut));
            return;
        }
        self.keepalive_out += 1;
        self.counters.keepalive_probes += 1;
        self.tx.old_seq_probe = true;
        self.arm(Timer::Keepalive, now + self.cfg.keepalive_intvl);
    }

    /// The retry limit: `max_retries`, or for an orphan Linux's
    /// tcp_orphan_retries(): `orphan_retries`, where 0 means 8 while the
    /// timer is `alive` (below `rto_max`) and 0 once it is not.
    fn retry_limit(&self, alive: bool) -> u32 {
        match self.cfg.orphan_retries {
            _ if !self.fin.orphaned => self.cfg.max_retries,
            0 if alive => 8,
            n => n,
        }
    }

    fn persist_interval(&self) -> Duration {
        let mut d = self.rtt.rto();
        for _ in 0..self.persist_backoff.min(32) {
            d = (d * 2).min(self.cfg.rto_max);
        }
        d
    }

    /// Keeps the retransmission and persist timers consistent after any input.
    pub(super) fn after_input(&mut self, now: Instant) {
        if !self.can_send_data_state() {
            return;
        }
        let flight = self.snd_max.distance_from(self.snd_una);
        if flight > 0 && !self.armed(Timer::Retransmit) && !self.armed(Timer::Persist) {
            self.arm(Timer::Retransmit, now + self.rtt.rto());
        }
        self.arm_persist_if_needed(now);
    }

    /// RFC 9293 3.8.6.1 / RFC 1122 4.2.3.4: with nothing in flight and data the
    /// window will not let out, arm the persist (or SWS override) timer.
    pub(super) fn arm_persist_if_needed(&mut self, now: Instant) {
        if self.armed(Timer::Persist) || !self.can_send_data_state() {
            return;
        }
        let unsent = self.unsent();
        if unsent == 0 || self.snd_nxt != self.snd_una {
            return;
        }
        let room = self.snd_wnd;
        if room < unsent.min(self.snd_mss) {
            self.disarm(Timer::Retransmit);
            let at = now + self.persist_interval();
            self.arm(Timer::Persist, at);
        }
    }
}
