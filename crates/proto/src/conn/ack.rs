//! ACK generation: what the ACK policy sees and decides, the window to offer
//! (receiver SWS avoidance, RFC 1122 4.2.3.3), window updates after a read,
//! and what a segment reports to the peer (timestamps, SACK and D-SACK, NAKs).

use super::{Connection, Timer};
use crate::bigwin;
use crate::policy::{AckCtx, AckDecision, AckReason, DelayReason, WindowAdvertise, WindowUpdate};
use crate::seq::SeqNumber;
use crate::state::State;
use crate::time::{Duration, Instant};
use crate::trace::TraceEvent;
use crate::wire::{Flags, Nak, TcpOptions, TcpRepr, MAX_OPTIONS_LEN};

/// What is owed to the peer in ACKs (RFC 1122 4.2.3.2, RFC 5681 4.2), and why.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct AckState {
    /// An ACK should go now, and why.
    pub(super) now: Option<AckReason>,
    /// Further immediate ACKs owed: each out-of-order segment gets its own
    /// (duplicate) ACK even when several arrive before the next poll (RFC 5681 4.2).
    pub(super) extra: u32,
    /// Segments, full-sized segments and in-order payload bytes received
    /// since we last sent an ACK.
    pub(super) segs: u32,
    pub(super) full_segs: u32,
    pub(super) bytes: usize,
    /// When the oldest data not yet acknowledged by us arrived.
    pub(super) owed_since: Option<Instant>,
    /// What the armed delayed-ACK timer was set for (for the why-trace).
    pub(super) delack_len: Duration,
    /// The ACK owed is an RFC 5961 challenge ACK (FreeBSD sends it with
    /// tcp_respond, outside tcp_output: no FIN repeated on it).
    pub(super) challenge_owed: bool,
    /// A read opened the window and the ACK policy has yet to say when to announce it.
    pub(super) window_opened: bool,
    /// A read emptied the receive queue since the last transmit: the ACK
    /// policy may send an owed ACK now (Linux tcp_cleanup_rbuf).
    pub(super) read_emptied: bool,
    /// RFC 3168 6.1.3: a CE mark arrived; ECE on every segment we send until
    /// the peer's CWR.
    pub(super) ece: bool,
    /// A D-SACK block for the next segment sent (`Config::dsack_single`).
    pub(super) dsack: Option<(SeqNumber, SeqNumber)>,
}

impl Connection {
    /// RFC 1122 4.2.3.3: announce a window the read opened, once it moves the
    /// right edge by min(half the advertisable window, 2 x MSS) (BSD's
    /// threshold); with `window_update = "delayed"` the ACK policy decides when
    /// (Tops-20; Westfield, "Improving TCP throughput"); with `"doubling"` only
    /// a window at least twice the one offered goes at once (Linux tcp_cleanup_rbuf).
    pub(super) fn after_read(&mut self) {
        if !matches!(
            self.state,
            State::Established | State::FinWait1 | State::FinWait2
        ) {
            return;
        }
        if self.recv_buf.readable() == 0 && self.ack.owed_since.is_some() {
            self.ack.read_emptied = true;
        }
        let cur = self.rcv_adv.distance_from(self.rcv_nxt());
        match self.cfg.window_update {
            WindowUpdate::Delayed => {
                // Any move the advertisement rule allows goes to the ACK
                // policy, at the next poll_transmit (which knows the time).
                if self.ack.now.is_none() && self.right_edge_gain() > 0 {
                    self.ack.window_opened = true;
                }
            }
            WindowUpdate::Immediate => {
                let free = self.recv_buf.free().min(self.max_rcv_wnd());
                let step = (self.advertisable() / 2).min(2 * self.snd_mss).max(1);
                if free >= cur + step && self.ack.now.is_none() {
                    self.ack.now = Some(AckReason::WindowUpdate);
                    self.counters.window_updates_sent += 1;
                }
            }
            WindowUpdate::Doubling => {
                // tcp_cleanup_rbuf: "if (2*rcv_window_now <= tp->window_clamp)",
                // then ACK if the new window is at least twice the current one.
                if 2 * cur <= self.advertisable() && self.ack.now.is_none() {
                    let new = self.window_offer().min(self.syn_data_window_cap());
                    if new > 0 && new >= 2 * cur && new > cur {
                        self.ack.now = Some(AckReason::WindowUpdate);
                        self.counters.window_updates_sent += 1;
                    }
                }
            }
        }
    }

    /// Linux tcp_openreq_init_rwin / tcp_grow_window: a Fast Open child whose
    /// only data came on its SYN offers no more than its SYN-ACK's window
    /// (rcv_ssthresh starts there and only later in-order data raises it).
    fn syn_data_window_cap(&self) -> usize {
        if self.counters.data_segments_received <= 1 && self.tfo.syn_data && self.tfo.child {
            self.rcv_adv.distance_from(self.rcv_nxt())
        } else {
            usize::MAX
        }
    }

    /// Largest window we can express (RFC 7323 2.3).
    fn max_rcv_wnd(&self) -> usize {
        if self.negotiated.bigwin {
            bigwin::MAX_WINDOW // RFC 1106 3: 30 bits
        } else {
            (u16::MAX as usize) << self.negotiated.rcv_wscale
        }
    }

    /// What the ACK policy sees now (`seg_len` 0 for events other than data).
    pub(super) fn ack_ctx(&self, now: Instant, seg_len: usize) -> AckCtx {
        AckCtx {
            now,
            mss: self.snd_mss,
            seg_len,
            seg_count: u32::from(seg_len > 0),
            segs_since_ack: self.ack.segs,
            full_segs_since_ack: self.ack.full_segs,
            bytes_since_ack: self.ack.bytes,
            right_edge_moved: self.right_edge_gain(),
            rcv_wnd: self.recv_buf.free().min(self.max_rcv_wnd()),
            srtt: self.rtt.srtt(),
            rto: self.rtt.rto(),
        }
    }

    /// How far an ACK sent now would move the right window edge past the last
    /// one advertised (the `window_advertise` rule of `window_to_advertise`).
    fn right_edge_gain(&self) -> usize {
        let cur = self.rcv_adv.distance_from(self.rcv_nxt());
        self.window_offer().saturating_sub(cur)
    }

    /// The most window this connection can ever offer: the buffer, within
    /// what the window field can say (65,535 << scale, or RFC 1106's 30 bits).
    fn advertisable(&self) -> usize {
        self.recv_buf.capacity().min(self.max_rcv_wnd()).max(1)
    }

    /// The window a segment sent now offers under `window_advertise`, never
    /// less than what is already offered (RFC 9293 3.8.6.2.2: do not shrink).
    fn window_offer(&self) -> usize {
        let cur = self.rcv_adv.distance_from(self.rcv_nxt());
        let free = self.recv_buf.free().min(self.max_rcv_wnd());
        let buf = self.recv_buf.capacity();
        let mss = self.snd_mss.max(1);
        let wnd = match self.cfg.window_advertise {
            WindowAdvertise::Rfc1122 => {
                // RFC 1122 4.2.3.3: move the edge by min(1/2 window, MSS); the
                // half is of the window that can be advertised, not the buffer.
                let step = (self.advertisable() / 2).min(mss);
                if free > cur && free - cur >= step {
                    free
                } else {
                    cur
                }
            }
            WindowAdvertise::Bsd => {
                // tcp_output.c: recwin < sb_hiwat / 4 && recwin < t_maxseg -> 0.
                if free < buf / 4 && free < mss {
                    0
                } else {
                    free
                }
            }
            WindowAdvertise::Linux => {
                // __tcp_select_window: full_space = min(window_clamp, allowed_space).
                let full = self.advertisable();
                let mss = mss.min(full);
                if free < full / 2 && (free < buf / 16 || free < mss) {
                    0
                } else if self.negotiated.rcv_wscale == 0 && !self.negotiated.bigwin {
                    // "Get the largest window that is a nice multiple of mss";
                    // keep the current offer while within one MSS of the free space.
                    let last = self.rcv_wnd_last;
                    if last + mss <= free || last > free {
                        free / mss * mss
                    } else if mss == full && free > last + full / 2 {
                        free
                    } else {
                        last
                    }
                } else {
                    free
                }
            }
        };
        wnd.max(cur)
    }

    /// Acts on an ACK policy's verdict: an ACK now, or the delayed-ACK timer
    /// (an earlier deadline stays); both are why-trace events.
    pub(super) fn apply_ack_decision(&mut self, now: Instant, d: AckDecision) {
        match d {
            AckDecision::Now(reason) => {
                match reason {
                    AckReason::EveryNth { .. } => self.counters.acks_every_nth += 1,
                    AckReason::Interactivity { .. } => self.counters.acks_interactivity += 1,
                    AckReason::RightEdge { .. } => self.counters.acks_right_edge += 1,
                    AckReason::QuickAck { .. }
                    | AckReason::MoreThanMss { .. }
                    | AckReason::ReadPushed { .. } => self.counters.acks_quick += 1,
                    AckReason::WindowUpdate => self.counters.window_updates_sent += 1,
                    _ => {}
                }
                self.ack.now.get_or_insert(reason);
            }
            AckDecision::Delay { until, reason } => {
                let t = &mut self.timers[Timer::DelayedAck as usize];
                if t.is_none_or(|cur| until < cur) {
                    *t = Some(until);
                    self.ack.delack_len = until - now;
                }
                let deadline = t.unwrap_or(until);
                if reason == DelayReason::WindowUpdate {
                    self.counters.window_updates_delayed += 1;
                }
                if self.cfg.trace {
                    self.trace.push(TraceEvent::AckDelayed {
                        at: now,
                        deadline,
                        segs: self.ack.segs,
                        reason,
                    });
                }
            }
        }
    }

    /// With `Config::dsack`: the part of a data segment below RCV.NXT is a
    /// duplicate, reported first in the SACK list (FreeBSD tcp_input.c
    /// tcp_do_segment, the todrop trim: tcp_update_sack_list).
    /// Returns whether it did.
    pub(super) fn dsack_old(&mut self, seg: &TcpRepr, len: usize) -> bool {
        if !(self.cfg.dsack && self.negotiated.sack && len > 0 && self.state.synchronized()) {
            return false;
        }
        let nxt = self.recv_buf.nxt();
        let behind = self.rcv_nxt().diff(seg.seq);
        if behind <= 0 || behind as u64 > nxt {
            return false;
        }
        let start = nxt - behind as u64;
        let end = (start + len as u64).min(nxt);
        self.sack_bsd.update(nxt, start, end);
        true
    }

    /// Linux tcp_send_dupack and tcp_data_queue (`Config::dsack_single`): a
    /// segment at `seq` of `seg_len` that repeats sequence space below RCV.NXT
    /// is reported with one D-SACK block of that part (RFC 2883 4).
    pub(super) fn dsack_single(&mut self, seq: SeqNumber, seg_len: usize) {
        let rcv_nxt = self.rcv_nxt();
        if !(self.cfg.dsack_single && self.negotiated.sack) || seg_len == 0 || seq >= rcv_nxt {
            return;
        }
        let end = seq + seg_len;
        self.ack.dsack = Some((seq, if end > rcv_nxt { rcv_nxt } else { end }));
    }

    /// With `Config::dsack`: after `len` bytes at stream offset `start` were
    /// stored (RCV.NXT was at `nxt_before`), the SACK list is brought up to
    /// date as FreeBSD's tcp_do_segment does after tcp_reass.
    pub(super) fn dsack_after_insert(&mut self, nxt_before: u64, start: u64, len: usize) {
        if !(self.cfg.dsack && self.negotiated.sack) || len == 0 {
            return;
        }
        let nxt = self.recv_buf.nxt();
        let end = start + len as u64;
        // What was below RCV.NXT was trimmed (and reported) by `dsack_old`.
        let start = start.max(nxt_before);
        if end <= start {
            return;
        }
        let first = self.sack_bsd.blocks().first().copied();
        match first {
            // A duplicate head recorded by the trim, then RCV.NXT moved: keep it first.
            Some(b) if nxt > nxt_before && b.1 == start => self.sack_bsd.update(nxt, b.0, b.1),
            _ => self.sack_bsd.update_dsack(nxt, start, end),
        }
    }

    /// Data held beyond a gap arrived at stream offset `start`: note it for the
    /// SACK option (RFC 2018 4) and NAK the gap before it once (RFC 1106 2.1).
    pub(super) fn on_out_of_order(&mut self, start: u64) {
        if self.negotiated.sack {
            self.sack_rx.note(start);
        }
        if !self.negotiated.nak {
            return;
        }
        let Some((gap_start, held_start)) = self.recv_buf.gap_below(start) else {
            return;
        };
        if let Some((off, count)) = self.nak_rx.on_gap(gap_start, held_start, self.snd_mss) {
            let seq = self.irs + 1 + off as usize;
            self.tx.naks_used = true;
            self.pending_naks.push_back(Nak { seq, count });
        }
    }

    /// Fills `out` with the pure ACK owed, if one is, and says whether it did.
    pub(super) fn maybe_pure_ack(&mut self, now: Instant, out: &mut TcpRepr) -> bool {
        if self.ack.now.is_none() {
            return false;
        }
        if !(self.state.synchronized() || self.state == State::SynReceived)
            || self.state == State::SynReceived && self.tx.need_syn
        {
            self.ack.now = None;
            return false;
        }
        let acked_new = self.ack.segs > 0;
        let challenge = std::mem::take(&mut self.ack.challenge_owed);
        if self.cfg.ack_repeats_fin && self.fin_sent() && !self.fin_acked() && !challenge {
            // FreeBSD tcp_output.c: the state's flags (tcp_outflags) keep FIN
            // until it is acknowledged, and a FIN sent again takes its old
            // sequence number (snd_nxt--); tcp_input.c tcp_send_challenge_ack
            // answers with tcp_respond, a bare ACK.
            self.header_into(now, self.fin_seq(), Flags::ACK | Flags::FIN, out);
        } else {
            self.header_into(now, self.snd_nxt, Flags::ACK, out);
        }
        self.ack_policy.on_sent(now, false, acked_new);
        self.counters.pure_acks_sent += 1;
        self.counters.segments_sent += 1;
        true
    }

    /// Options on a synchronized-state segment: RFC 1106 3.1 option C, RFC 7323
    /// timestamps, a pending RFC 1106 2.1 NAK, and RFC 2018 SACK blocks in the
    /// space left (at most 40 bytes, RFC 9293 3.1). Fills `o` in place (it
    /// holds option C already) so the header is not copied once more.
    pub(super) fn segment_options(&mut self, now: Instant, o: &mut TcpOptions) {
        if self.ts.enabled {
            o.timestamps = Some(self.ts.option(now));
            self.ts.note_ack_sent(self.rcv_nxt());
        }
        let nak = if self.tx.naks_used {
            self.pending_naks.pop_front()
        } else {
            None
        };
        if let Some(nak) = nak {
            o.nak = Some(nak);
            self.counters.naks_sent += 1;
        }
        if self.negotiated.sack && self.cfg.dsack {
            let room = MAX_OPTIONS_LEN.saturating_sub(o.encoded_len());
            let max = room.saturating_sub(4) / 8;
            let base = self.irs + 1;
            for &(s, e) in self.sack_bsd.blocks().iter().take(max) {
                o.sack_blocks.push(base + s as usize, base + e as usize);
            }
            self.sack_bsd.clean_dsack(self.recv_buf.nxt());
        } else if self.negotiated.sack && (self.recv_buf.has_ooo() || self.ack.dsack.is_some()) {
            let room = MAX_OPTIONS_LEN.saturating_sub(o.encoded_len());
            let mut max = room.saturating_sub(4) / 8;
            // Linux tcp_established_options: the D-SACK block first, sent
            // once (tcp_options_write clears rx_opt.dsack).
            if let Some((l, r)) = self.ack.dsack.take().filter(|_| max > 0) {
                o.sack_blocks.push(l, r);
                max -= 1;
            }
            let base = self.irs + 1;
            let blocks = &mut o.sack_blocks;
            let rb = &self.recv_buf;
            self.sack_rx.blocks(
                |off| rb.ooo_containing(off),
                rb.ooo_ranges(),
                max,
                |s, e| {
                    blocks.push(base + s as usize, base + e as usize);
                },
            );
        }
    }

    pub(super) fn clear_ack_pending(&mut self) {
        if self.ack.extra > 0 {
            self.ack.extra -= 1;
            self.ack.now = Some(AckReason::OutOfOrder);
            return;
        }
        self.ack.now = None;
        self.ack.segs = 0;
        self.ack.full_segs = 0;
        self.ack.bytes = 0;
        self.disarm(Timer::DelayedAck);
    }

    /// Receiver SWS avoidance by `window_advertise` (RFC 1122 4.2.3.3, BSD or
    /// Linux); never shrink the window (RFC 9293 3.8.6.2.2).
    /// Returns the header's window field and, with big windows, option C's
    /// upper bits (RFC 1106 3.1).
    pub(super) fn window_to_advertise(&mut self) -> (u16, Option<u16>) {
        let rcv_nxt = self.rcv_nxt();
        let wnd = self.window_offer();
        self.rcv_wnd_last = wnd;
        if self.negotiated.bigwin {
            let wnd = wnd.min(bigwin::MAX_WINDOW);
            let edge = rcv_nxt + wnd;
            if edge > self.rcv_adv {
                self.rcv_adv = edge;
            }
            let (field, upper) = bigwin::split(wnd);
            return (field, Some(upper));
        }
        let field = (wnd >> self.negotiated.rcv_wscale).min(u16::MAX as usize);
        let wnd = field << self.negotiated.rcv_wscale;
        let edge = rcv_nxt + wnd;
        if edge > self.rcv_adv {
            self.rcv_adv = edge;
        }
        (field as u16, None)
    }
}
