//! Segment output: the order `poll_transmit` serves resets, SYNs,
//! retransmissions (NAK, SACK, single) and new data in, the send policy's and
//! SWS avoidance's holds, and the building and counting of each segment.

use super::{Connection, Timer};
use crate::policy::{AckDecision, AckReason, SendCtx, SendDecision};
use crate::seq::SeqNumber;
use crate::state::State;
use crate::time::{Duration, Instant};
use crate::trace::{HoldRule, TraceEvent};
use crate::wire::{Flags, TcpOptions, TcpRepr, RFC1106_BIGWIN_MAX};

/// What the next `poll_transmit` owes, what the last ones sent, and the
/// current transmission opportunity.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct TxState {
    /// Bytes at the front of the payload buffer that belong to the caller
    /// (`poll_transmit_with_headroom`); 0 for `poll_transmit`.
    pub(super) headroom: usize,
    /// min(available, allowed) at the start of the current transmission
    /// opportunity (cleared when `poll_transmit` runs dry).
    pub(super) burst: Option<usize>,
    /// Send SYN (SYN-SENT) or SYN-ACK (SYN-RECEIVED) on the next poll.
    pub(super) need_syn: bool,
    /// The persist timer fired: send one segment even if the window says no.
    pub(super) force_one: bool,
    /// A zero-window probe of the old-sequence kind is due (`WindowProbe::OldSeq`).
    pub(super) old_seq_probe: bool,
    /// Data was written with nothing in flight: check for an idle restart
    /// at the next transmit (tcp_skb_entail's tcp_slow_start_after_idle_check).
    pub(super) idle_check: bool,
    /// New data went out: re-arm the probe timeout (RFC 8985 7.2).
    pub(super) tlp_rearm: bool,
    /// The send policy's timer fired since the last segment (Linux pushes
    /// data a timer releases: tcp_write_wakeup sets PSH).
    pub(super) policy_timer_fired: bool,
    /// The segment poll_transmit last returned goes out ECT(0) (RFC 3168 6.1.2, 6.1.5).
    pub(super) last_ect: bool,
    /// Our FIN went in a segment of its own (no data with it).
    pub(super) fin_alone: bool,
    /// Segments in the TSO packet being built, of new data or of a SACK
    /// retransmission run (`Config::tso_segs`).
    pub(super) tso_run: u32,
    /// A NAK was ever queued (`nak_tx`, `pending_naks`): until then both are
    /// empty and not read.
    pub(super) naks_used: bool,
    /// Fast Open client: the end of SYN data the SYN-ACK left
    /// unacknowledged, resent as a retransmission in a segment of its own
    /// with PSH (RFC 7413 4.2.2; Linux tcp_rcv_fastopen_synack resends the
    /// SYN's data skb). Here, not with the rest of Fast Open's state,
    /// because every transmit checks it.
    pub(super) syn_data_resend_end: Option<SeqNumber>,
}

impl Connection {
    /// Like [`poll_transmit`](Self::poll_transmit), but `buf` is resized to
    /// `headroom` bytes (their contents unspecified) and the payload is written
    /// after them, so a driver can encode the headers in front of it
    /// (`TcpRepr::emit_in_place`) without copying the payload a second time.
    pub fn poll_transmit_with_headroom(
        &mut self,
        now: Instant,
        buf: &mut Vec<u8>,
        headroom: usize,
    ) -> Option<TcpRepr> {
        let mut r = TcpRepr::default();
        self.poll_transmit_with_headroom_into(now, buf, headroom, &mut r)
            .then_some(r)
    }

    /// [`poll_transmit_with_headroom`](Self::poll_transmit_with_headroom)
    /// writing the header into `out` (every field set): returns whether a
    /// segment is due. A driver's hot path never copies the 160-byte header.
    pub fn poll_transmit_with_headroom_into(
        &mut self,
        now: Instant,
        buf: &mut Vec<u8>,
        headroom: usize,
        out: &mut TcpRepr,
    ) -> bool {
        buf.resize(headroom, 0);
        self.tx.headroom = headroom;
        let sent = self.poll_transmit_into(now, buf, out);
        self.tx.headroom = 0;
        sent
    }

    /// The next segment to send, if any; its payload is written into `payload`
    /// (cleared first). Call until it returns `None`.
    pub fn poll_transmit(&mut self, now: Instant, payload: &mut Vec<u8>) -> Option<TcpRepr> {
        let mut r = TcpRepr::default();
        self.poll_transmit_into(now, payload, &mut r).then_some(r)
    }

    /// [`poll_transmit`](Self::poll_transmit) writing the header into `out`
    /// (every field set when it returns true; unspecified otherwise).
    pub fn poll_transmit_into(
        &mut self,
        now: Instant,
        payload: &mut Vec<u8>,
        out: &mut TcpRepr,
    ) -> bool {
        self.tx.last_ect = false;
        let r = self.next_transmit(now, payload, out);
        if std::mem::take(&mut self.tx.tlp_rearm) && self.cfg.recovery.tlp {
            self.arm_tlp(now);
        }
        // The drain budget only feeds a debug assertion: no work in release.
        if !cfg!(debug_assertions) {
            return r;
        }
        if r {
            if self.tx_streak == 0 {
                self.tx_budget = self.transmit_budget();
            }
            self.tx_streak += 1;
            debug_assert!(
                self.tx_streak <= self.tx_budget,
                "poll_transmit returned {} segments without running dry: {self:?}",
                self.tx_streak
            );
        } else {
            self.tx_streak = 0;
        }
        self.debug_check_invariants();
        r
    }

    /// Most segments one drain of `poll_transmit` can return: each data or
    /// retransmitted segment covers at least one new byte of the send buffer,
    /// of go-back-N, of SACK recovery (HighRxt only grows) or of the NAK queue;
    /// the rest are a few control segments and the ACKs owed.
    fn transmit_budget(&self) -> usize {
        let seq_space = self.send_buf.len() + 2;
        4 * seq_space
            + self.nak_tx.queued_bytes()
            + self.ack.extra as usize
            + self.pending_naks.len()
            + 8
    }

    /// Debug builds check the send sequence variables after every call that
    /// can move them: SND.UNA <= SND.NXT <= SND.MAX, and everything sent and
    /// unacknowledged is queued data plus at most a SYN and a FIN.
    pub(super) fn debug_check_invariants(&self) {
        if !cfg!(debug_assertions) || matches!(self.state, State::Listen) {
            return;
        }
        let (una, nxt, max) = (self.snd_una, self.snd_nxt, self.snd_max);
        let flight = max.0.wrapping_sub(una.0) as usize;
        debug_assert!(
            nxt.0.wrapping_sub(una.0) as usize <= flight,
            "SND.NXT outside [SND.UNA, SND.MAX]: {self:?}"
        );
        debug_assert!(
            flight <= self.send_buf.len() + 2,
            "more in flight than queued: {flight} > {} + SYN + FIN: {self:?}",
            self.send_buf.len()
        );
        debug_assert!(
            self.scoreboard
                .ranges()
                .iter()
                .all(|&(l, r)| l.0.wrapping_sub(una.0) < r.0.wrapping_sub(una.0)
                    && r.0.wrapping_sub(una.0) as usize <= flight),
            "SACK scoreboard outside [SND.UNA, SND.MAX]: {self:?}"
        );
    }

    /// Fills `out` with the next segment due and returns true, or returns false.
    fn next_transmit(&mut self, now: Instant, payload: &mut Vec<u8>, out: &mut TcpRepr) -> bool {
        payload.truncate(self.tx.headroom);
        if std::mem::take(&mut self.ack.read_emptied)
            && self.ack.now.is_none()
            && self.ack.owed_since.is_some()
            && self.state.synchronized()
        {
            let ctx = self.ack_ctx(now, 0);
            if let Some(reason) = self.ack_policy.on_read_emptied(&ctx) {
                self.apply_ack_decision(now, AckDecision::Now(reason));
            }
        }
        if std::mem::take(&mut self.ack.window_opened)
            && self.ack.now.is_none()
            && self.state.synchronized()
        {
            let ctx = self.ack_ctx(now, 0);
            let d = self.ack_policy.on_window_open(&ctx);
            self.apply_ack_decision(now, d);
        }
        if self.nothing_due() {
            // What the full pass below does when it finds nothing to send.
            self.tx.idle_check = false;
            self.note_rwnd_chrono(now, 0, 0);
            self.tx.burst = None;
            self.tx.tso_run = 0;
            return false;
        }
        if let Some(mut rst) = self.pending_rst.take().map(|r| *r) {
            // RFC 7323 3.2: once negotiated, TSopt SHOULD be sent in a RST too.
            if self.ts.enabled
                && rst.options.timestamps.is_none()
                && rst.src_port == self.local_port
                && rst.dst_port == self.remote_port
            {
                rst.options.timestamps = Some(self.ts.option(now));
            }
            self.counters.rsts_sent += 1;
            self.counters.segments_sent += 1;
            *out = rst;
            return true;
        }
        match self.state {
            State::Closed | State::Listen | State::TimeWait => {
                return self.maybe_pure_ack(now, out);
            }
            State::SynSent | State::SynReceived => {
                if self.tx.need_syn {
                    *out = self.emit_syn_with(now, payload);
                    return true;
                }
                // RFC 7413 4.3.2: a Fast Open server may send data before
                // the handshake completes.
                if !(self.state == State::SynReceived && self.tfo.child) {
                    return self.maybe_pure_ack(now, out);
                }
            }
            _ => {}
        }
        if std::mem::take(&mut self.tx.old_seq_probe) {
            self.header_into(now, self.snd_una - 1, Flags::ACK, out);
            self.counters.segments_sent += 1;
            return true;
        }
        if self.emit_nak_rexmit(now, payload, out) || self.emit_sack_rexmit(now, payload, out) {
            return true;
        }
        if let Some(seq) = self.recovery.rexmit_one.take() {
            if seq >= self.snd_una
                && seq < self.snd_max
                && self.emit_retransmit_one(now, seq, payload, out)
            {
                return true;
            }
        }
        self.maybe_idle_restart(now);
        self.cut_skbs();
        let sent = self.emit_data(now, payload, out);
        self.note_cwnd_usage(sent);
        if sent {
            return true;
        }
        self.tx.burst = None;
        self.tx.tso_run = 0;
        self.arm_persist_if_needed(now);
        self.maybe_pure_ack(now, out)
    }

    /// Whether an established connection has nothing to send: no ACK owed, no
    /// reset, probe or retransmission queued, no unsent data or FIN (the ACK
    /// policy has seen its flags already). Callers poll after every event, so
    /// this is the common answer; it skips every step of the full pass, each of
    /// which would find nothing (TSO off: cutting skbs could change them).
    fn nothing_due(&self) -> bool {
        // A sender with data fails the first three tests.
        self.state == State::Established
            && self.ack.now.is_none()
            && self.off_of(self.snd_nxt) == self.send_buf.end()
            && self.snd_nxt == self.snd_max
            && (!self.fin.queued || self.fin_sent())
            && self.pending_rst.is_none()
            && !self.tx.old_seq_probe
            && (!self.tx.naks_used || self.nak_tx.is_empty())
            && !self.recovery.sack
            && self.recovery.rexmit_one.is_none()
            && self.cfg.tso_segs == 0
    }

    /// The SYN or SYN-ACK, with what Fast Open adds to it.
    fn emit_syn_with(&mut self, now: Instant, payload: &mut Vec<u8>) -> TcpRepr {
        let mut r = self.emit_syn(now);
        self.sent.on_syn_sent(self.iss + 1);
        self.syn_fast_open(&mut r, payload);
        r
    }

    pub(super) fn emit_syn(&mut self, now: Instant) -> TcpRepr {
        self.tx.need_syn = false;
        if self.state == State::SynSent {
            self.syn_first_sent.get_or_insert(now);
        }
        let mut flags = Flags::SYN;
        if self.state == State::SynReceived {
            flags = flags | Flags::ACK;
        }
        flags = flags | self.ecn_syn_flags();
        let mut r = TcpRepr {
            src_port: self.local_port,
            dst_port: self.remote_port,
            seq: self.iss,
            ack: if flags.ack() {
                self.rcv_nxt()
            } else {
                SeqNumber(0)
            },
            flags,
            window: self.syn_window().min(u16::MAX as usize) as u16,
            urgent: 0,
            options: TcpOptions::default(),
        };
        // FreeBSD TF_NOOPT (TCP_NOOPT): the SYN goes bare, MSS left out too.
        if !self.cfg.no_options {
            r.options.mss = Some(self.advertised_mss());
        }
        // Active: offer what is configured. Passive: answer what was negotiated.
        let mut want = self.cfg.options;
        if self.cfg.no_options {
            want = crate::config::OptionSet {
                ecn: want.ecn,
                ..Default::default()
            };
        }
        // Linux tcp_send_synack: a simultaneous open's SYN-ACK is its SYN again,
        // options as tcp_syn_options offers them to any peer.
        let active =
            self.state == State::SynSent || (self.cfg.simultaneous_synack && !self.passive);
        let offer_ws = want.window_scale
            && !self.negotiated.bigwin
            && (active || self.negotiated.snd_wscale > 0 || self.negotiated.rcv_wscale > 0);
        if offer_ws {
            r.options.window_scale = Some(self.offered_wscale());
        }
        if want.timestamps && (active || self.ts.enabled) {
            r.options.timestamps = Some(self.ts.option(now));
        }
        r.options.sack_permitted = want.sack && (active || self.negotiated.sack);
        r.options.nak_permitted = want.nak && (active || self.negotiated.nak);
        if want.big_window && (active || self.negotiated.bigwin) {
            // RFC 1106 3 option B: our 30-bit window, never more than we can buffer (5).
            let w = self.rcv_buf_size.min(RFC1106_BIGWIN_MAX as usize);
            r.options.big_window_offer = Some(w as u32);
        }
        if self.retries == 0 {
            if let (Some(limit), true) = (self.rcv_buf_limit, self.cfg.trace) {
                self.trace.push(TraceEvent::BufferCapped {
                    at: now,
                    requested: self.cfg.rcv_buf,
                    granted: self.rcv_buf_size,
                    limit,
                });
            }
        }
        // Linux tcp_send_synack: a simultaneous open answers with its SYN
        // alone; the data its SYN carried (Fast Open) stays sent.
        let simultaneous = self.state == State::SynReceived && !self.passive;
        if !(simultaneous && self.snd_nxt > self.iss + 1) {
            self.snd_nxt = self.iss + 1;
        }
        if self.snd_max < self.snd_nxt {
            self.snd_max = self.snd_nxt;
        }
        if self.retries == 0 {
            self.rtt_probe = Some((self.iss + 1, now));
        }
        if !self.armed(Timer::Retransmit) {
            self.arm(Timer::Retransmit, now + self.rtt.rto());
        }
        if flags.ack() {
            self.rcv_adv = self.rcv_nxt() + self.syn_window();
            self.rcv_wnd_last = self.syn_window();
            self.ts.note_ack_sent(r.ack);
            self.clear_ack_pending();
        }
        self.counters.segments_sent += 1;
        r
    }

    /// A header for a synchronized-state segment, carrying ACK and our
    /// window, written into `r` (every field set): built in the caller's
    /// slot, since a 160-byte header copied back up the transmit path (a
    /// memcpy reading what was just stored field by field) cost several per
    /// cent of a segment's time.
    pub(super) fn header_into(
        &mut self,
        now: Instant,
        seq: SeqNumber,
        flags: Flags,
        r: &mut TcpRepr,
    ) {
        let (window, upper) = self.window_to_advertise();
        r.src_port = self.local_port;
        r.dst_port = self.remote_port;
        r.seq = seq;
        r.window = window;
        r.urgent = 0;
        r.options = TcpOptions::default();
        r.options.big_window_upper = upper;
        self.segment_options(now, &mut r.options);
        let since = self.ack.owed_since.take();
        if self.cfg.trace && (since.is_some() || self.ack.now.is_some()) {
            self.trace.push(TraceEvent::AckSent {
                at: now,
                reason: self.ack.now.unwrap_or(AckReason::Piggyback),
                waited: since.map_or(Duration::ZERO, |t| now - t),
            });
        }
        self.clear_ack_pending();
        let ece = self.ece_flag();
        r.ack = self.rcv_nxt();
        r.flags = flags | Flags::ACK | ece;
    }

    fn emit_retransmit_one(
        &mut self,
        now: Instant,
        seq: SeqNumber,
        payload: &mut Vec<u8>,
        out: &mut TcpRepr,
    ) -> bool {
        self.emit_range(now, seq, self.snd_mss, payload, out)
    }

    /// RFC 1106 2.1: resend NAKed data at once, ahead of new data ("and then
    /// continue sending data where it left off").
    fn emit_nak_rexmit(&mut self, now: Instant, payload: &mut Vec<u8>, out: &mut TcpRepr) -> bool {
        if !self.tx.naks_used {
            return false;
        }
        while let Some((seq, len)) = self.nak_tx.next(self.snd_una, self.snd_mss) {
            if seq >= self.snd_nxt {
                continue;
            }
            let len = len.min(self.snd_nxt.distance_from(seq));
            if self.emit_range(now, seq, len, payload, out) {
                self.counters.nak_retransmits += 1;
                return true;
            }
        }
        false
    }

    /// RFC 6675 5 step 4 and NextSeg rule 1: during SACK recovery, resend the
    /// first lost, unSACKed data while cwnd - pipe allows a segment.
    fn emit_sack_rexmit(&mut self, now: Instant, payload: &mut Vec<u8>, out: &mut TcpRepr) -> bool {
        if !self.recovery.sack {
            return false;
        }
        let (mss, th) = (self.snd_mss, self.cfg.dupack_threshold);
        let (una, max) = (self.snd_una, self.snd_max);
        let hole = if self.recovery.rxt_first && self.scoreboard.sacked_end(una).is_none() {
            // RFC 6675 5 step 4.3: the first segment goes regardless of pipe.
            Some((
                una,
                self.scoreboard.next_sacked(una).unwrap_or(max).min(max),
            ))
        } else {
            let pipe = self
                .scoreboard
                .pipe(una, max, self.recovery.high_rxt, th, mss);
            if pipe + mss > self.send_cwnd() {
                return false;
            }
            self.scoreboard
                .next_lost(una, self.recovery.high_rxt.max(una), th, mss)
        };
        self.recovery.rxt_first = false;
        let Some((start, end)) = hole else {
            return false;
        };
        let end = end.min(max);
        if start >= end
            || !self.emit_range(now, start, end.distance_from(start).min(mss), payload, out)
        {
            return false;
        }
        // HighRxt only moves forward, and within SND.MAX: each call makes progress.
        let sent = payload.len() - self.tx.headroom + out.flags.fin() as usize;
        if let Some(p) = &mut self.recovery.prr {
            p.on_sent(sent);
        }
        let run_continues = start == self.recovery.high_rxt;
        self.recovery.high_rxt = (start + sent.max(1)).min(max);
        self.counters.sack_retransmits += 1;
        if self.closes_rexmit_packet(run_continues, start + sent, end, sent) {
            out.flags = out.flags | Flags::PSH;
        }
        true
    }

    /// Whether a SACK retransmission ending at `seg_end` (of `len` bytes, in a
    /// hole ending at `hole_end`) closes a Linux TSO packet of two or more
    /// segments, which leaves with PSH as new data's do (`Config::tso_segs`):
    /// tcp_xmit_retransmit_queue resends as many segments of one skb as cwnd
    /// allows in one packet (Linux tcp_output.c __tcp_retransmit_skb).
    /// `run_continues`: the segment follows the previous retransmission.
    fn closes_rexmit_packet(
        &mut self,
        run_continues: bool,
        seg_end: SeqNumber,
        hole_end: SeqNumber,
        len: usize,
    ) -> bool {
        if self.cfg.tso_segs == 0 {
            return false;
        }
        if !run_continues {
            self.tx.tso_run = 0;
        }
        self.tx.tso_run += 1;
        let mss = self.snd_mss;
        let pipe = self.scoreboard.pipe(
            self.snd_una,
            self.snd_max,
            self.recovery.high_rxt,
            self.cfg.dupack_threshold,
            mss,
        );
        let more = len == mss
            && seg_end < hole_end
            && !self.skbs().is_some_and(|s| s.is_end(self.off_of(seg_end)))
            && pipe + mss <= self.send_cwnd();
        !more && std::mem::take(&mut self.tx.tso_run) >= 2
    }

    /// Resends up to `max_len` bytes (and the FIN if it follows) from `seq`,
    /// never past SND.MAX: a retransmission repeats what was sent (RFC 9293
    /// 3.8.1) and must not carry new data, which SND.MAX would not account for.
    fn emit_range(
        &mut self,
        now: Instant,
        seq: SeqNumber,
        max_len: usize,
        payload: &mut Vec<u8>,
        out: &mut TcpRepr,
    ) -> bool {
        let off = self.off_of(seq);
        let queued = self.send_buf.end() - off;
        // Sequence space sent from `seq`: data, plus one if the FIN went too.
        let sent = self.snd_max.distance_from(seq) as u64;
        let mut len = queued.min(sent).min(max_len as u64) as usize;
        // A resend never merges across a MSG_EOR record end (tcp_skb_can_collapse)
        // nor into an skb out of fragments.
        if let Some(e) = self.next_segment_cut_after(off) {
            len = len.min((e - off) as usize);
        }
        let fin = self.fin.queued && off + len as u64 == self.send_buf.end() && sent > queued;
        if len == 0 && !fin {
            return false;
        }
        self.build_data_segment(now, off, len, fin, payload, out);
        // RFC 1106 4.2: a repair in flight pushes the timer out to a full RTO,
        // so it does not "go off milliseconds before a naked packet's ack".
        let at = now + self.user_timeout.clamp(now, self.rtt.rto());
        if self.timers[Timer::Retransmit as usize].is_none_or(|t| t < at) {
            self.arm(Timer::Retransmit, at);
        }
        true
    }

    /// Notes that data which could go is held by `rule` (starts a why-trace episode).
    fn note_hold(&mut self, now: Instant, rule: HoldRule, bytes: usize, unacked: usize) {
        match self.hold {
            Some((r, _, _)) if r == rule => return,
            Some((_, since, _)) => self.hold = Some((rule, since, bytes)),
            None => {
                self.hold = Some((rule, now, bytes));
                if matches!(rule, HoldRule::Policy(_)) {
                    self.counters.policy_holds += 1;
                }
            }
        }
        if self.cfg.trace {
            self.trace.push(TraceEvent::Hold {
                at: now,
                rule,
                bytes,
                unacked,
                peer_window: self.snd_wnd,
            });
        }
    }

    /// Sends new (or go-back-N) data as window, cwnd and the send policy allow.
    fn emit_data(&mut self, now: Instant, payload: &mut Vec<u8>, out: &mut TcpRepr) -> bool {
        // RFC 6675 5.1: going back after a timeout, skip what the peer SACKed.
        let mut sack_limit = None;
        if self.snd_nxt < self.snd_max && !self.scoreboard.is_empty() {
            while let Some(end) = self.scoreboard.sacked_end(self.snd_nxt) {
                self.snd_nxt = end.min(self.snd_max);
            }
            sack_limit = self
                .scoreboard
                .next_sacked(self.snd_nxt)
                .filter(|&s| s < self.snd_max)
                .map(|s| s.distance_from(self.snd_nxt));
            if self.cfg.sack_whole_segments {
                // Less than a segment before the SACKed bytes: the whole
                // segment is resent with them (see `Config::sack_whole_segments`).
                sack_limit = sack_limit.filter(|&d| d >= self.snd_mss);
            }
        }
        let nxt_off = self.off_of(self.snd_nxt);
        let end = self.send_buf.end();
        let unsent = (end - nxt_off) as usize;
        let fin_pending = self.fin.queued && !self.fin_sent();
        if unsent == 0 && !fin_pending {
            self.note_rwnd_chrono(now, 0, 0);
            return false;
        }
        let flight = self
            .snd_nxt
            .distance_from(self.snd_una)
            .saturating_sub(self.syn_outside_flight());
        let wnd_room = self.snd_wnd.saturating_sub(flight);
        self.note_rwnd_chrono(now, unsent, wnd_room);
        // RFC 6675 5: in SACK recovery, cwnd bounds pipe rather than FlightSize.
        let cc_flight = if self.recovery.sack {
            self.sack_pipe()
        } else {
            flight
        };
        // RFC 3042 (RFC 5681 3.2): on the first and second duplicate ACK a new
        // segment may go, so the flight may exceed cwnd by up to 2 SMSS. Not
        // with RFC 1106 NAKs, which replace duplicate-ACK loss detection.
        let limited_transmit = if !self.recovery.active
            && !self.negotiated.nak
            && self.snd_nxt == self.snd_max
            && self.recovery.dupacks > 0
            && self.recovery.dupacks < self.cfg.dupack_threshold
        {
            self.recovery.dupacks.min(2) as usize * self.snd_mss
        } else {
            0
        };
        let cwnd_room = (self.send_cwnd() + limited_transmit).saturating_sub(cc_flight);
        let allowed = wnd_room.min(cwnd_room);
        let limit_rule = if wnd_room <= cwnd_room {
            HoldRule::PeerWindow
        } else {
            HoldRule::Cwnd
        };
        let mss = self.snd_mss;
        let burst = *self.tx.burst.get_or_insert(unsent.min(allowed));
        let mut len = unsent
            .min(allowed)
            .min(mss)
            .min(sack_limit.unwrap_or(usize::MAX));
        // A record closed with MSG_EOR ends the segment; one that is not the
        // queue's tail goes whatever the policy, as Linux's tcp_write_xmit
        // applies Nagle's test to the last skb only (tcp_nagle_test).
        let record_cut = self
            .next_segment_cut_after(nxt_off)
            .map(|e| (e - nxt_off) as usize)
            .filter(|&r| r < len);
        if let Some(r) = record_cut {
            len = r;
        }
        // The SYN's unacknowledged data goes again on its own (`TxState::syn_data_resend_end`).
        if self
            .tx
            .syn_data_resend_end
            .is_some_and(|e| self.snd_una >= e)
        {
            self.tx.syn_data_resend_end = None;
        }
        let syn_data_resend = self.tx.syn_data_resend_end.filter(|&e| self.snd_nxt < e);
        if let Some(e) = syn_data_resend {
            len = len.min(e.distance_from(self.snd_nxt));
        }
        let retransmission = self.snd_nxt < self.snd_max;
        let forced = self.tx.force_one;

        if forced && len > 0 && len < unsent.min(mss) && !retransmission {
            // A loss probe is one full segment whatever cwnd leaves (Linux's
            // tcp_send_loss_probe: tcp_write_xmit with push_one = 2 takes a
            // cwnd quota of one segment), not the bytes a byte-counted cwnd has left.
            len = unsent.min(mss).min(wnd_room);
        }
        if unsent > 0 && len == 0 {
            if !forced {
                self.note_hold(now, limit_rule, unsent.min(mss), flight);
                return false;
            }
            // Persist timer: one byte into a zero window, or what the window allows.
            len = unsent.min(mss).min(wnd_room.max(1));
        } else if unsent > 0 && len < mss && !retransmission && !forced && record_cut.is_none() {
            if len < unsent {
                // RFC 1122 4.2.3.4 sender SWS avoidance: a window-limited runt goes
                // only if it is at least half the largest window the peer offered.
                if len < self.max_snd_wnd / 2 {
                    let rule = if limit_rule == HoldRule::Cwnd {
                        HoldRule::Cwnd
                    } else {
                        HoldRule::SenderSws
                    };
                    self.note_hold(now, rule, len, flight);
                    return false;
                }
            } else if !fin_pending
                && self.send_buf.write_cut_short()
                && (flight == 0 || len < self.max_snd_wnd / 2)
            {
                // RFC 1122 4.2.3.4 sender SWS avoidance, under every send policy: the
                // tail of a write cut short by a full buffer is not pushed (BSD's
                // TF_MORETOCOME). With data in flight, ACKs make room for the rest of
                // the write, so wait for it; with none, nothing would, so send it
                // whatever the policy (else e.g. Doupnik Rule 2 deadlocks).
                if flight > 0 {
                    self.note_hold(now, HoldRule::SenderSws, len, flight);
                    return false;
                }
            } else if !fin_pending {
                // The tail of the data: the send policy decides (FIN is never held).
                let seg_end = nxt_off + len as u64;
                let ctx = SendCtx {
                    now,
                    mss,
                    available: unsent,
                    allowed,
                    burst,
                    seg_len: len,
                    in_flight: flight,
                    ends_app_data: self
                        .send_buf
                        .next_boundary_after(nxt_off)
                        .is_some_and(|b| b <= seg_end),
                    flushed: self.send_buf.flushed() > nxt_off,
                    unacked_partial: self.last_partial_end.is_some_and(|e| e > self.snd_una),
                    held_since: match self.hold {
                        Some((HoldRule::Policy(_), since, _)) => {
                            Some(self.policy_since.map_or(since, |p| p.max(since)))
                        }
                        _ => None,
                    },
                };
                // Flushed data is pushed: no policy holds it (see `flush`).
                let decision = if ctx.flushed {
                    SendDecision::Send
                } else {
                    self.send_policy.decide(&ctx)
                };
                if let SendDecision::Hold { reason, until } = decision {
                    self.note_hold(now, HoldRule::Policy(reason), len, flight);
                    if let Some(at) = until {
                        self.arm(Timer::Policy, at);
                    }
                    return false;
                }
            }
        }
        self.tx.force_one = false;
        let fin = fin_pending && nxt_off + len as u64 == end;
        if len == 0 && !fin {
            return false;
        }
        let mut timer_released = false;
        if let Some((rule, since, bytes)) = self.hold.take() {
            timer_released = self.tx.policy_timer_fired && matches!(rule, HoldRule::Policy(_));
            self.disarm(Timer::Policy);
            if self.cfg.trace {
                self.trace.push(TraceEvent::Release {
                    at: now,
                    rule,
                    bytes,
                    held: now - since,
                });
            }
        }
        let probe = forced && self.snd_wnd == 0;
        // A bare FIN may follow data a shrunk window no longer covers (BSD
        // sends it too; the peer ACKs and it is repeated): only data counts.
        debug_assert!(
            forced || retransmission || len == 0 || flight + len <= self.snd_wnd,
            "new data beyond the peer's window: {flight} + {len} > {}",
            self.snd_wnd
        );
        self.build_data_segment(now, nxt_off, len, fin, payload, out);
        if self.cfg.psh_at_window_limit
            && len > 0
            && !retransmission
            && !self.recovery.active
            && limited_transmit == 0
            && !forced
            && ((self.cfg.tso_segs == 0
                && len < unsent
                && allowed.saturating_sub(len) < mss.min(unsent - len)
                && self.send_buf.next_boundary_after(nxt_off).is_some())
                || timer_released)
        {
            // The window stops the write before its next segment: Linux
            // pushes what it let out.
            out.flags = out.flags | Flags::PSH;
        }
        let burst_ends = len == unsent || allowed.saturating_sub(len) < mss.min(unsent - len);
        let skb_ends = self.skbs().is_some_and(|s| s.is_end(nxt_off + len as u64));
        if self.closes_tso_packet(len, mss, retransmission || forced, burst_ends || skb_ends) {
            out.flags = out.flags | Flags::PSH;
        }

        self.tx.policy_timer_fired = false;
        if self.recovery.sack {
            if let Some(p) = &mut self.recovery.prr {
                p.on_sent(len + fin as usize);
            }
        }
        let new_nxt = self.seq_of(nxt_off + len as u64) + fin as usize;
        let new_data = new_nxt > self.snd_max;
        if new_data && self.rtt_probe.is_none() && !retransmission {
            self.rtt_probe = Some((new_nxt, now));
        }
        if len > 0 && len < mss && !retransmission {
            self.last_partial_end = Some(new_nxt);
        }
        self.snd_nxt = new_nxt;
        if new_nxt > self.snd_max {
            self.snd_max = new_nxt;
        }
        if !probe && !self.armed(Timer::Retransmit) {
            // tcp_clamp_rto_to_user_timeout: never past the user timeout.
            let rto = self.user_timeout.clamp(now, self.rtt.rto());
            self.arm(Timer::Retransmit, now + rto);
        }
        true
    }

    /// Whether a segment of `len` bytes closes a Linux TSO packet of two or
    /// more segments, which leaves with PSH (`Config::tso_segs`; Linux
    /// tcp_write_xmit sends new data in packets of tcp_tso_autosize segments);
    /// `burst_ends`: no more new data may follow it now.
    fn closes_tso_packet(
        &mut self,
        len: usize,
        mss: usize,
        resent: bool,
        burst_ends: bool,
    ) -> bool {
        if self.cfg.tso_segs == 0 || len == 0 || resent {
            self.tx.tso_run = 0;
            return false;
        }
        let segs = self.tso_segs_now(mss);
        self.tx.tso_run += 1;
        if self.tx.tso_run >= segs || len < mss || burst_ends {
            return std::mem::take(&mut self.tx.tso_run) >= 2;
        }
        false
    }

    /// Segments per TSO packet now (Linux tcp_tso_autosize, see [`crate::tso`]).
    fn tso_segs_now(&self, mss: usize) -> u32 {
        let cwnd = self.cc.cwnd();
        crate::tso::autosize(&crate::tso::TsoInputs {
            mss,
            window: cwnd.max(self.snd_max.distance_from(self.snd_una)),
            slow_start: cwnd < self.cc.ssthresh() / 2,
            srtt: self.rtt.srtt(),
            min_rtt: self.rtt.min_rtt(),
            min_segs: self.cfg.tso_segs,
        })
    }

    /// Cuts what was written since into Linux's skbs of its size goal
    /// (`Config::tso_segs`) before any of it is sent.
    fn cut_skbs(&mut self) {
        if self.cfg.tso_segs == 0 {
            return;
        }
        let mss = self.snd_mss;
        let goal = crate::skb::size_goal(mss, self.tso_segs_now(mss), self.max_snd_wnd);
        let sent = self.off_of(self.snd_max);
        let send_buf = &self.send_buf;
        self.skbs.cut(send_buf.end(), sent, goal, |o| {
            send_buf.next_record_end_after(o)
        });
    }

    /// Linux's skbs, when this connection keeps them (`Config::tso_segs`):
    /// every change to them is made under the same test, so without it they
    /// are empty, and the common path leaves their cache line alone.
    fn skbs(&self) -> Option<&crate::skb::SkbQueue> {
        (self.cfg.tso_segs > 0).then_some(&self.skbs)
    }

    /// The skbs to change, under the same test as [`skbs`](Self::skbs).
    pub(super) fn skbs_mut(&mut self) -> Option<&mut crate::skb::SkbQueue> {
        (self.cfg.tso_segs > 0).then_some(&mut self.skbs)
    }

    /// The first offset after `off` no segment spans: a MSG_EOR record end,
    /// or the end of an skb that ran out of fragments (see [`crate::skb`]).
    fn next_segment_cut_after(&self, off: u64) -> Option<u64> {
        let record = self.send_buf.next_record_end_after(off);
        match (record, self.skbs().and_then(|s| s.next_full_end_after(off))) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Builds one segment from stream offset `off`; counts it.
    fn build_data_segment(
        &mut self,
        now: Instant,
        off: u64,
        len: usize,
        fin: bool,
        payload: &mut Vec<u8>,
        out: &mut TcpRepr,
    ) {
        let seq = self.seq_of(off);
        if len > 0 {
            self.send_buf.copy_out(off, len, payload);
        }
        let end = off + len as u64;
        let mut flags = Flags::ACK;
        // PSH marks the end of application data (Doupnik 2.0; RFC 9293 3.9.1),
        // the SYN's data when resent (tcp_send_syn_data gave its skb PSH), and
        // an skb that ran out of fragments (tcp_mark_push).
        if len > 0
            && (self
                .send_buf
                .next_boundary_after(off)
                .is_some_and(|b| b <= end)
                || self.tx.syn_data_resend_end == Some(seq + len)
                || self.skbs().is_some_and(|s| s.is_full_end(end)))
        {
            flags = flags | Flags::PSH;
        }
        if fin {
            flags = flags | Flags::FIN;
        }
        let acked_new = self.ack.segs > 0;
        let new_data = len > 0 && seq >= self.snd_max;
        if (len > 0 || fin) && seq >= self.snd_max {
            self.user_timeout
                .on_new_segment(seq + len + fin as usize, now);
        }
        // A new FIN arms the probe as new data does (tcp_event_new_data_sent).
        self.tx.tlp_rearm |= new_data || (fin && seq + len >= self.snd_max);
        if fin && seq >= self.snd_max {
            self.tx.fin_alone = len == 0;
        }
        self.tx.tlp_rearm |= new_data;
        if len > 0 {
            if !self.sent.data_in_flight() {
                // tcp_event_data_sent: nothing in flight, CA_EVENT_TX_START.
                if let Some(last) = self.last_data_sent {
                    self.cc
                        .on_tx_after_idle(now, now.saturating_duration_since(last));
                }
            }
            self.last_data_sent = Some(now);
        }
        // RFC 8985 6.1: the segment's send times, for RACK and the RTT samples.
        self.sent.on_sent(seq, seq + len + fin as usize, fin, now);
        flags = flags | self.ecn_on_data_sent(new_data);
        self.header_into(now, seq, flags, out);
        self.ack_policy.on_sent(now, len > 0, acked_new);
        let new_end = self.seq_of(end);
        let snd_max = self.snd_max;
        let c = &mut self.counters;
        c.segments_sent += 1;
        if len > 0 {
            c.data_segments_sent += 1;
            c.bytes_sent += len as u64;
            if len < self.snd_mss {
                c.small_segments_sent += 1;
            }
            if seq < snd_max {
                c.retransmits += 1;
                if new_end > snd_max {
                    c.new_bytes_sent += new_end.distance_from(snd_max) as u64;
                }
            } else {
                c.new_bytes_sent += len as u64;
            }
        }
    }
}
