//! Segment arrival: the RFC 9293 3.10.7 steps for each state, the SYN's
//! options, and in-order and out-of-order text into the receive buffer.

use super::{
    build_cc, rst_reply, wscale_for, ConnError, Connection, Timer, DEFAULT_MSS, MAX_WSCALE,
    MIN_PEER_MSS,
};
use crate::bigwin;
use crate::cc::AckSample;
use crate::policy::AckReason;
use crate::recv_buf::{Insert, RecvBuffer};
use crate::seq::SeqNumber;
use crate::state::State;
use crate::time::Instant;
use crate::timestamps::TS_OPTION_SPACE;
use crate::trace::TraceEvent;
use crate::wire::{ChecksumCtx, Flags, TcpRepr, WireError};

impl Connection {
    /// The peer's window from a segment: RFC 1106 3.1 reassembly with big
    /// windows, else RFC 7323 2.3 scaling.
    pub(super) fn peer_window(&self, seg: &TcpRepr) -> usize {
        if self.negotiated.bigwin {
            bigwin::join(seg.window, seg.options.big_window_upper.unwrap_or(0))
        } else {
            (seg.window as usize) << self.negotiated.snd_wscale
        }
    }

    /// Parses a segment's bytes and processes it: for drivers that read a wire.
    /// A malformed segment (bad option length, option running past the header,
    /// known option of the wrong size, bad checksum) is dropped, counted in
    /// `invalid_segments` and traced, and changes nothing else (DESIGN: bad input).
    pub fn handle_bytes(
        &mut self,
        now: Instant,
        bytes: &[u8],
        checksum: Option<ChecksumCtx>,
    ) -> Result<(), WireError> {
        let mut repr = TcpRepr::default();
        match TcpRepr::parse_into(bytes, checksum, &mut repr) {
            Ok(payload) => {
                self.handle_segment(now, &repr, &bytes[payload]);
                Ok(())
            }
            Err(e) => {
                self.note_invalid_segment(now, e);
                Err(e)
            }
        }
    }

    /// Counts and traces a segment the driver could not parse (see [`handle_bytes`](Self::handle_bytes)).
    pub fn note_invalid_segment(&mut self, now: Instant, error: WireError) {
        self.counters.invalid_segments += 1;
        if self.cfg.trace {
            self.trace
                .push(TraceEvent::InvalidSegment { at: now, error });
        }
    }

    /// Processes a GRO packet: `payload` is several segments of `gso_size`
    /// bytes merged by the receiving host, as Linux's TCP gets one from GRO or
    /// a virtio-net header. The peer's segment size is measured from
    /// `gso_size`, not the merged length (Linux tcp_measure_rcv_mss).
    pub fn handle_gro_segment(
        &mut self,
        now: Instant,
        seg: &TcpRepr,
        payload: &[u8],
        gso_size: usize,
    ) {
        self.rx_gso_size = Some(gso_size.max(1));
        self.handle_segment(now, seg, payload);
        self.rx_gso_size = None;
    }

    /// FreeBSD net.inet.tcp.drop_synfin (tcp_input.c tcp_input, tcp_do_segment,
    /// tcp_timewait.c tcp_twcheck): SYN|FIN is dropped unseen, in TIME-WAIT
    /// too (before a SYN may reopen it), except on a listener when a RST or
    /// ACK is set (those are handled first).
    fn drops_syn_fin(&self, seg: &TcpRepr) -> bool {
        let syn_fin = Flags::SYN.0 | Flags::FIN.0;
        let listen_first = Flags::RST.0 | Flags::ACK.0;
        self.cfg.drop_syn_fin
            && seg.flags.0 & syn_fin == syn_fin
            && match self.state {
                State::Listen => seg.flags.0 & listen_first == 0,
                _ => true,
            }
    }

    /// Processes one arriving segment (RFC 9293 3.10.7).
    pub fn handle_segment(&mut self, now: Instant, seg: &TcpRepr, payload: &[u8]) {
        if seg.dst_port != self.local_port
            || (self.state != State::Listen && seg.src_port != self.remote_port)
        {
            return;
        }
        if seg
            .options
            .unknown
            .iter()
            .any(|(k, _)| k == crate::wire::kind::MD5SIG)
        {
            // No TCP-MD5 key is ever configured, so a signed segment is
            // dropped unseen (Linux tcp_inbound_md5_hash: TCPMD5Unexpected).
            self.counters.invalid_segments += 1;
            return;
        }
        if self.drops_syn_fin(seg) {
            return;
        }
        // Linux tcp_segs_in: a GRO packet counts as the segments it merged.
        let segs = u64::from(rx_segments(payload.len(), self.rx_gso_size, self.snd_mss).0);
        self.counters.segments_received += segs;
        if payload.is_empty() && seg.flags.0 & (Flags::SYN.0 | Flags::FIN.0 | Flags::RST.0) == 0 {
            self.counters.pure_acks_received += 1;
        }
        if !payload.is_empty() {
            self.counters.data_segments_received += segs;
            self.counters.bytes_received += payload.len() as u64;
        }
        match self.state {
            State::Closed => {
                if let Some(r) = rst_reply(seg, payload.len()) {
                    self.pending_rst = Some(Box::new(r));
                }
            }
            State::Listen => self.on_listen(now, seg, payload),
            State::SynSent => {
                self.on_syn_sent(now, seg);
                self.syn_ack_text(now, seg, payload);
            }
            _ if self.header_predicted(now, seg, payload.len()) => {
                self.on_predicted(now, seg, payload)
            }
            _ => self.on_synchronized(now, seg, payload),
        }
        // A CE mark belongs to this segment only, consumed or not.
        self.ecn.ce_next = false;
        if self.state.synchronized() {
            // Keep-alive measures idleness from here (tcp_ack: rcv_tstamp,
            // icsk_probes_out = 0).
            self.last_rcv = Some(now);
            self.keepalive_out = 0;
        }
        self.keepalive_kick(now);
        self.counters.segments_delivered += self.sent.on_handshake_ack(self.snd_una);
        self.after_input(now);
        self.debug_check_invariants();
    }

    /// RFC 9293 3.10.7.2.
    pub(super) fn on_listen(&mut self, now: Instant, seg: &TcpRepr, payload: &[u8]) {
        if seg.flags.rst() {
            return;
        }
        if seg.flags.ack() {
            // RFC 9293 3.10.7.2: <SEQ=SEG.ACK><CTL=RST>, to whoever sent it.
            self.pending_rst = rst_reply(seg, 0).map(Box::new);
            return;
        }
        if !seg.flags.syn() {
            return;
        }
        self.remote_port = seg.src_port;
        // RFC 9293 3.10.7.2: select an ISS for this SYN.
        let iss = self.isn_gen.next_isn(now, self.local_port, seg.src_port);
        self.set_iss(iss);
        self.accept_syn(now, seg);
        self.tfo = crate::fastopen::TfoState::default();
        self.fast_open_server(seg, payload);
        self.state = State::SynReceived;
        self.tx.need_syn = true;
    }

    /// Takes the peer's ISN and SYN options (RFC 9293 3.7.1, RFC 7323 2.2).
    /// An option is in use when we offer it (or, passive, are willing to) and
    /// the peer's SYN or SYN-ACK carries it.
    fn accept_syn(&mut self, now: Instant, seg: &TcpRepr) {
        self.irs = seg.seq;
        self.round_buffers_to_mss(seg.options.mss.unwrap_or(DEFAULT_MSS));
        self.recv_buf = RecvBuffer::new(self.rcv_buf_size, self.cfg.max_ooo_ranges);
        let want = self.cfg.options;
        let o = &seg.options;
        // RFC 7323 3.2: timestamps only if both SYNs carry them.
        self.ts.enabled = false;
        if let (true, Some(ts)) = (want.timestamps, o.timestamps) {
            self.ts.enabled = true;
            self.ts.on_syn(now, ts);
        }
        // RFC 2018 2: SACK-permitted in both SYNs.
        self.negotiated.sack = want.sack && o.sack_permitted;
        // RFC 1106 2: NAKs negotiated like SACK-permitted.
        self.negotiated.nak = want.nak && o.nak_permitted;
        // RFC 1106 3: big windows only if both SYNs carry option B.
        self.negotiated.bigwin = want.big_window && o.big_window_offer.is_some();
        self.ecn_negotiate(seg);
        let mut peer_mss = seg.options.mss.unwrap_or(DEFAULT_MSS);
        if peer_mss < MIN_PEER_MSS {
            peer_mss = MIN_PEER_MSS;
            self.counters.peer_mss_floored += 1;
        }
        // RFC 6691 / Cheshire: options on every segment come out of the MSS
        // (timestamps: 1460 becomes 1448; RFC 1106 option C: 8 more).
        let per_segment = self.snd_mss_options();
        self.snd_mss = (peer_mss.min(self.advertised_mss()) as usize)
            .saturating_sub(per_segment)
            .max(1);
        match (
            want.window_scale && !self.negotiated.bigwin,
            seg.options.window_scale,
        ) {
            (true, Some(peer)) => {
                self.negotiated.snd_wscale = peer.min(MAX_WSCALE);
                self.negotiated.rcv_wscale = self.offered_wscale();
            }
            _ => {
                self.negotiated.snd_wscale = 0;
                self.negotiated.rcv_wscale = 0;
            }
        }
        // The window in a SYN is never scaled (RFC 7323 2.2); with big windows
        // the offered 30-bit window replaces it (RFC 1106 3).
        self.snd_wnd = match (self.negotiated.bigwin, o.big_window_offer) {
            (true, Some(w)) => w as usize,
            _ => seg.window as usize,
        };
        self.max_snd_wnd = self.max_snd_wnd.max(self.snd_wnd);
        self.snd_wl1 = seg.seq;
        self.snd_wl2 = seg.ack;
        self.rcv_adv = self.rcv_nxt() + self.syn_window();
        self.rcv_wnd_last = self.syn_window();
        // Restart congestion state with the real MSS (RFC 6928 counts segments).
        self.cc = build_cc(&self.cfg, self.snd_mss);
    }

    /// Option bytes every segment carries, which come out of the MSS
    /// (RFC 6691; Linux tcp_mtu_to_mss subtracts the same).
    pub(super) fn snd_mss_options(&self) -> usize {
        self.ts.enabled as usize * TS_OPTION_SPACE
            + self.negotiated.bigwin as usize * bigwin::UPPER_OPTION_SPACE
    }

    /// The window-scale shift this side offers: the smallest that fits the
    /// receive buffer, or FreeBSD's shift for `wscale_buf`
    /// (tcp_usrreq.c tcp_connect: while (TCP_MAXWIN << shift) < sb_max, shift++).
    pub(super) fn offered_wscale(&self) -> u8 {
        match self.cfg.wscale_buf {
            Some(max) => {
                let mut s = 0;
                while s < MAX_WSCALE && ((u16::MAX as usize) << s) < max {
                    s += 1;
                }
                s
            }
            None => wscale_for(self.rcv_buf_size),
        }
    }

    /// With `buf_round_mss`, rounds both buffers up to a multiple of the
    /// segment size once the peer's MSS is known (FreeBSD tcp_input.c
    /// tcp_mss: roundup(sb_hiwat, mss), no further than sb_max).
    fn round_buffers_to_mss(&mut self, peer_mss: u16) {
        if !self.cfg.buf_round_mss {
            return;
        }
        let mss = peer_mss.max(MIN_PEER_MSS).min(self.local_mss()) as usize;
        let cap = self.cfg.wscale_buf.unwrap_or(usize::MAX);
        let round = |b: usize| {
            if b < mss {
                b
            } else {
                b.div_ceil(mss).saturating_mul(mss).min(cap).max(b)
            }
        };
        self.rcv_buf_size = round(self.rcv_buf_size);
        let snd = round(self.cfg.snd_buf);
        if snd != self.cfg.snd_buf {
            self.set_send_buffer(snd);
        }
    }

    /// The window a SYN or SYN-ACK offers: 16 bits, or with big windows
    /// negotiated the 30-bit window of option B (RFC 1106 3).
    pub(super) fn syn_window(&self) -> usize {
        if self.negotiated.bigwin {
            self.rcv_buf_size.min(bigwin::MAX_WINDOW)
        } else {
            self.rcv_buf_size.min(u16::MAX as usize)
        }
    }

    /// RFC 9293 3.10.7.3.
    fn on_syn_sent(&mut self, now: Instant, seg: &TcpRepr) {
        if seg.flags.ack() && (seg.ack <= self.iss || seg.ack > self.snd_max) {
            if !seg.flags.rst() {
                self.pending_rst = Some(Box::new(self.rst_segment(seg.ack, None)));
            }
            return;
        }
        if self.syn_ack_echo_rejected(now, seg) {
            if !seg.flags.rst() {
                self.pending_rst = Some(Box::new(self.rst_segment(seg.ack, None)));
            }
            return;
        }
        if seg.flags.rst() {
            if seg.flags.ack() {
                self.enter_closed(Some(ConnError::Refused));
            }
            return;
        }
        if !seg.flags.syn() {
            return;
        }
        self.accept_syn(now, seg);
        if seg.flags.ack() {
            // RFC 7413 4.2.2: data the SYN-ACK does not cover is sent again
            // as ordinary data.
            self.fast_open_syn_ack(seg);
            let data_acked = seg.ack.diff(self.iss + 1).max(0) as usize;
            if data_acked > 0 {
                self.send_buf.ack(data_acked.min(self.send_buf.len()));
                let head = self.send_buf.head();
                if let Some(skbs) = self.skbs_mut() {
                    skbs.ack(head);
                }
                // Linux tcp_rcv_fastopen_synack: TCPI_OPT_SYN_DATA only when
                // the SYN-ACK covers all of the SYN's data.
                self.tfo.syn_data_acked = data_acked >= self.tfo.syn_data_len;
            }
            if self.tfo.syn_data && data_acked >= self.tfo.syn_data_len {
                self.sent.on_syn_acked_with_data();
            }
            if seg.ack < self.snd_nxt {
                self.snd_nxt = seg.ack;
                if self.tfo.syn_data && data_acked < self.tfo.syn_data_len {
                    // The SYN's data stays sent: it is resent, not sent anew.
                    self.tx.syn_data_resend_end = Some(self.snd_max);
                    if self.cfg.recovery.rack && self.negotiated.sack {
                        // Linux keeps the SYN's data skb in the retransmission
                        // queue: RACK counts its resending (tcpi_retrans).
                        let mut s = seg.ack;
                        while s < self.snd_max {
                            let n = self.snd_max.distance_from(s).min(self.snd_mss.max(1));
                            self.sent.on_sent(s, s + n, false, now);
                            s += n;
                        }
                    }
                } else {
                    self.snd_max = seg.ack;
                }
            }
            // After a bare retransmitted SYN, the SYN-ACK may still cover
            // the first SYN's data (the peer took it): go on from there.
            if seg.ack > self.snd_nxt {
                self.snd_nxt = seg.ack;
            }
            self.snd_una = seg.ack;
            let rtt = self.take_rtt_sample(now, seg);
            self.cc.on_ack_sample(&AckSample {
                now,
                rtt,
                srtt: self.rtt.srtt(),
                snd_una: self.snd_una,
                snd_nxt: self.snd_max,
            });
            self.retries = 0;
            self.rtt.reset_backoff();
            self.disarm(Timer::Retransmit);
            self.state = State::Established;
            self.ack.now = Some(AckReason::Handshake);
            // Data queued past what the SYN carried, with the SYN's own data
            // all acknowledged: a writer is waiting on the connection.
            let waiting = !self.send_buf.is_empty() && data_acked >= self.tfo.syn_data_len;
            let ctx = self.ack_ctx(now, 0);
            self.ack_policy.on_connected(&ctx, waiting);
        } else {
            // Simultaneous open: answer with SYN-ACK from our ISN.
            self.state = State::SynReceived;
            self.tx.need_syn = true;
        }
    }

    /// With `syn_ack_paws`: an ACK in SYN-SENT whose TSecr is neither zero nor
    /// between our first SYN's TSval and our clock now (Linux
    /// tcp_rcv_synsent_state_process: between(tsecr, retrans_stamp, now)).
    fn syn_ack_echo_rejected(&self, now: Instant, seg: &TcpRepr) -> bool {
        let (Some(ts), Some(first)) = (seg.options.timestamps, self.syn_first_sent) else {
            return false;
        };
        if !(self.cfg.syn_ack_paws && self.cfg.options.timestamps && seg.flags.ack()) {
            return false;
        }
        let (lo, hi) = (self.ts.clock(first), self.ts.clock(now));
        ts.tsecr != 0 && ts.tsecr.wrapping_sub(lo) > hi.wrapping_sub(lo)
    }

    /// RFC 9293 3.10.7.3: data (and a FIN) on the SYN-ACK that completed an
    /// active open is taken in as on any segment (Linux's
    /// tcp_rcv_fastopen_synack queues it with tcp_fastopen_add_skb).
    fn syn_ack_text(&mut self, now: Instant, seg: &TcpRepr, payload: &[u8]) {
        if self.state != State::Established || !seg.flags.syn() || !seg.flags.ack() {
            return;
        }
        if payload.is_empty() && !seg.flags.fin() {
            return;
        }
        // The text starts after the SYN's sequence number.
        let mut text = *seg;
        text.seq = seg.seq + 1;
        text.flags = Flags(seg.flags.0 & !Flags::SYN.0);
        if !payload.is_empty() {
            self.process_text(now, &text, payload);
        }
        if seg.flags.fin() {
            let fin_seq = text.seq + payload.len();
            if fin_seq.diff(self.rcv_adv) <= 0 {
                self.fin.rcv_seq = Some(fin_seq);
            }
        }
        self.check_fin(now);
    }

    /// Linux tcp_validate_incoming: in a simultaneous open's SYN-RECEIVED, the
    /// peer's SYN-ACK (no data, acknowledging all we sent) passes as an ACK;
    /// its SYN, a duplicate, gets an immediate ACK (tcp_data_queue).
    fn simultaneous_syn_ack(&mut self, now: Instant, seg: &TcpRepr, payload: &[u8]) -> bool {
        let rcv_nxt = self.rcv_nxt();
        if !(self.cfg.simultaneous_synack
            && self.state == State::SynReceived
            && !self.passive
            && seg.flags.syn()
            && seg.flags.ack()
            && !seg.flags.rst()
            && !seg.flags.fin()
            && payload.is_empty()
            && seg.seq + 1 == rcv_nxt
            && seg.ack == self.snd_nxt)
        {
            return false;
        }
        let mut ack = *seg;
        ack.seq = rcv_nxt;
        ack.flags = Flags(seg.flags.0 & !Flags::SYN.0);
        self.on_synchronized(now, &ack, payload);
        // tcp_data_queue: the SYN, now below RCV.NXT, is a duplicate.
        self.dsack_single(seg.seq, 1);
        self.counters.unacceptable_segments += 1;
        self.ack.now.get_or_insert(AckReason::OutOfOrder);
        true
    }

    /// RFC 9293 3.10.7.4: SYN-RECEIVED and every synchronized state.
    fn on_synchronized(&mut self, now: Instant, seg: &TcpRepr, payload: &[u8]) {
        let seg_len = seg.segment_len(payload.len());
        let rcv_nxt = self.rcv_nxt();
        let mut wnd = self.rcv_adv.distance_from(rcv_nxt);
        let syncache = self.state == State::SynReceived && self.passive;
        if self.cfg.rcv_wnd_free && wnd > 0 && !syncache {
            // FreeBSD tcp_input.c: rcv_wnd = imax(sbspace(so_rcv), rcv_adv - rcv_nxt);
            // the syncache checks against the window its SYN-ACK offered
            // (a simultaneous open's SYN-RECEIVED has a full tcpcb).
            wnd = wnd.max(self.recv_buf.free());
        }
        if self.cfg.time_wait_bsd
            && self.state == State::TimeWait
            && self.time_wait_bsd(now, seg, payload)
        {
            return;
        }

        // RFC 7323 5.3 R1: PAWS drops an old duplicate (with an ACK) before anything else.
        if self.ts.enabled && !seg.flags.rst() {
            if let Some(ts) = seg.options.timestamps {
                if self.ts.paws_rejects(now, ts) {
                    self.counters.paws_rejected += 1;
                    if !seg.flags.syn()
                        && self.state.synchronized()
                        && self.state != State::TimeWait
                    {
                        // Linux tcp_validate_incoming -> tcp_send_dupack.
                        self.dsack_single(seg.seq, seg_len);
                    }
                    self.ack_invalid(now, false, Self::oow_limited(seg, payload));
                    return;
                }
            }
        }

        if self.simultaneous_syn_ack(now, seg, payload) {
            return;
        }
        // First: the acceptability test.
        let acceptable = match (seg_len, wnd) {
            (0, 0) => seg.seq == rcv_nxt,
            (0, _) => seg.seq.in_range(rcv_nxt, rcv_nxt + wnd),
            (_, 0) => false,
            (_, _) => {
                seg.seq.in_range(rcv_nxt, rcv_nxt + wnd)
                    || (seg.seq + (seg_len - 1)).in_range(rcv_nxt, rcv_nxt + wnd)
            }
        };
        if !acceptable {
            if seg.flags.rst() {
                return;
            }
            self.counters.unacceptable_segments += 1;
            self.dsack_old(seg, payload.len());
            if !seg.flags.syn() && self.state.synchronized() && self.state != State::TimeWait {
                // Linux tcp_validate_incoming -> tcp_send_dupack.
                self.dsack_single(seg.seq, seg_len);
            }
            if self.state == State::TimeWait && seg.flags.fin() {
                // A retransmitted FIN: acknowledge and restart 2 MSL.
                self.enter_time_wait(now);
            }
            if seg.flags.syn() && self.cfg.rfc5961 && self.state.synchronized() {
                // RFC 5961 4.2: any SYN, in window or not, gets a challenge ACK.
                self.ack_invalid(now, true, true);
                return;
            }
            if seg.flags.syn() && self.cfg.syn_reset_tcb && self.state.synchronized() {
                // FreeBSD answers a SYN outside the window with tcp_respond's
                // bare ACK even with insecure_syn (tcp_input.c tcp_do_segment).
                self.ack_invalid(now, true, true);
                return;
            }
            self.ack_invalid(now, false, Self::oow_limited(seg, payload));
            // RFC 9293: with a zero window still take valid ACKs (zero-window probes).
            if wnd == 0 && seg.seq == rcv_nxt && seg.flags.ack() && self.state.synchronized() {
                self.process_ack(now, seg, 0);
            }
            return;
        }
        // Second: RST (RFC 5961 3.2: exact match resets, in-window gets a
        // challenge ACK; without RFC 5961 anything in window resets, RFC 793).
        if seg.flags.rst() {
            if seg.seq == rcv_nxt || !self.cfg.rfc5961 {
                self.counters.rsts_received += 1;
                match self.state {
                    // A Fast Open child is a full socket the listener may
                    // already have handed out with the SYN's data: Linux
                    // resets it like an established one (tcp_reset), keeping
                    // that data readable; other passive opens go back to
                    // LISTEN (RFC 9293 3.10.7.4).
                    State::SynReceived if self.passive && self.tfo.child => {
                        self.enter_closed(Some(ConnError::Reset))
                    }
                    State::SynReceived if self.passive => self.back_to_listen(),
                    State::SynReceived => self.enter_closed(Some(ConnError::Refused)),
                    // RFC 9293 3.10.7.4: no user signal; Linux and FreeBSD
                    // still report ECONNRESET (closing_rst_error).
                    State::Closing | State::LastAck if self.cfg.closing_rst_error => {
                        self.enter_closed(Some(ConnError::Reset))
                    }
                    State::Closing | State::LastAck | State::TimeWait => self.enter_closed(None),
                    _ => self.enter_closed(Some(ConnError::Reset)),
                }
            } else {
                self.ack_invalid(now, true, true);
            }
            return;
        }

        // Fourth: SYN.
        if seg.flags.syn() {
            if self.state == State::SynReceived && seg.seq == self.irs {
                // Our SYN-ACK was lost: send it again.
                self.tx.need_syn = true;
            } else if self.cfg.rfc5961 || !self.state.synchronized() {
                // RFC 5961 4.2: challenge ACK.
                self.ack_invalid(now, true, true);
            } else {
                // RFC 793: a SYN in the window is an error: reset. FreeBSD
                // drops the connection (tcp_input.c tcp_do_segment,
                // tcp_drop) and tcp_output resets from its own SND.NXT, RCV.NXT.
                self.pending_rst = if self.cfg.syn_reset_tcb {
                    Some(self.rst_segment(self.snd_nxt, Some(self.rcv_nxt())))
                } else {
                    rst_reply(seg, payload.len())
                }
                .map(Box::new);
                self.enter_closed(Some(ConnError::Reset));
            }
            return;
        }

        // Fifth: ACK.
        if !seg.flags.ack() {
            return;
        }
        if self.state == State::SynReceived {
            if seg.ack > self.snd_una && seg.ack <= self.snd_max {
                self.state = State::Established;
                self.tx.need_syn = false;
                self.snd_wnd = self.peer_window(seg);
                self.max_snd_wnd = self.max_snd_wnd.max(self.snd_wnd);
                self.snd_wl1 = seg.seq;
                self.snd_wl2 = seg.ack;
                if self.fin.queued {
                    self.state = State::FinWait1;
                }
            } else {
                self.pending_rst = Some(Box::new(self.rst_segment(seg.ack, None)));
                return;
            }
        }
        if !self.process_ack(now, seg, payload.len()) {
            return;
        }
        if self.ecn.ok {
            self.on_ecn_input(seg, payload.len());
        }
        // RFC 7323 4.3 (2), 5.3 R3: remember the peer's latest TSval, only
        // from a segment that passed every check (a forged one must not move it).
        if let (true, Some(ts)) = (self.ts.enabled, seg.options.timestamps) {
            self.ts.update_recent(now, seg.seq, ts);
        }
        if let (true, Some(nak)) = (self.negotiated.nak, seg.options.nak) {
            self.on_nak(nak);
        }
        match self.state {
            State::FinWait1 if self.fin_acked() => self.state = State::FinWait2,
            State::Closing if self.fin_acked() => {
                self.enter_time_wait(now);
                return;
            }
            State::LastAck if self.fin_acked() => {
                self.enter_closed(None);
                return;
            }
            State::TimeWait => {
                if seg.flags.fin() {
                    self.ack.now.get_or_insert(AckReason::Fin);
                    self.enter_time_wait(now);
                }
                return;
            }
            _ => {}
        }

        // RFC 1122 4.2.2.13: new data after the application closed for
        // reading, with our FIN sent: reset, as from no socket (the RST
        // takes its sequence number from the segment's ACK).
        if self.fin.rcv_shutdown
            && !payload.is_empty()
            && matches!(self.state, State::FinWait1 | State::FinWait2)
            && seg.seq + payload.len() > self.rcv_nxt()
        {
            let rst = if seg.flags.ack() {
                self.rst_segment(seg.ack, None)
            } else {
                let fin = usize::from(seg.flags.fin());
                self.rst_segment(SeqNumber(0), Some(seg.seq + payload.len() + fin))
            };
            self.pending_rst = Some(Box::new(rst));
            self.enter_closed(Some(ConnError::Reset));
            return;
        }

        // Seventh: segment text.
        if !payload.is_empty()
            && matches!(
                self.state,
                State::Established | State::FinWait1 | State::FinWait2
            )
        {
            self.process_text(now, seg, payload);
        }

        // Eighth: FIN.
        if seg.flags.fin() {
            let fin_seq = seg.seq + payload.len();
            if fin_seq.diff(self.rcv_adv) <= 0 {
                self.fin.rcv_seq = Some(fin_seq);
            }
        }
        self.check_fin(now);
    }

    /// FreeBSD's TIME-WAIT (tcp_timewait.c tcp_twcheck), before the sequence
    /// check: a RST is dropped (RFC 1337), a SYN without ACK above RCV.NXT
    /// closes the connection for the port's listener to take
    /// (`time_wait_recycles`), any other segment without ACK is dropped, a
    /// retransmitted FIN restarts 2 MSL, and anything but an exact duplicate
    /// ACK is answered with an ACK. Returns whether it handled `seg`.
    fn time_wait_bsd(&mut self, now: Instant, seg: &TcpRepr, payload: &[u8]) -> bool {
        if seg.flags.rst() {
            return true;
        }
        if seg.flags.syn() && !seg.flags.ack() && seg.seq > self.rcv_nxt() {
            self.counters.time_wait_recycles += 1;
            self.enter_closed(None);
            return true;
        }
        if !seg.flags.ack() {
            return true;
        }
        let rcv_nxt = self.rcv_nxt();
        if seg.flags.fin() && seg.seq + (payload.len() + 1) == rcv_nxt {
            self.enter_time_wait(now);
        }
        let dup_ack = seg.flags == Flags::ACK
            && payload.is_empty()
            && seg.seq == rcv_nxt
            && seg.ack == self.snd_nxt;
        if !dup_ack {
            self.ack.now.get_or_insert(AckReason::OutOfOrder);
        }
        true
    }

    /// Linux's tcp_oow_rate_limited: replies to segments carrying data (and no
    /// SYN) are never limited; they are not part of an ACK loop.
    fn oow_limited(seg: &TcpRepr, payload: &[u8]) -> bool {
        payload.is_empty() || seg.flags.syn()
    }

    /// Answers an unacceptable segment, or sends a challenge ACK (RFC 5961
    /// 3.2, 4.2, 5.2); with `limited`, at most one per `invalid_ack_interval`
    /// (RFC 5961 7), so two confused peers cannot ACK each other forever.
    pub(super) fn ack_invalid(&mut self, now: Instant, challenge: bool, limited: bool) {
        let gap = self.cfg.invalid_ack_interval;
        if limited && !gap.is_zero() {
            if self.last_invalid_ack.is_some_and(|t| now - t < gap) {
                if challenge {
                    self.counters.challenge_acks_suppressed += 1;
                } else {
                    self.counters.invalid_acks_suppressed += 1;
                }
                return;
            }
            self.last_invalid_ack = Some(now);
        }
        if challenge {
            self.counters.challenge_acks += 1;
            self.ack.challenge_owed = true;
        }
        self.ack.now.get_or_insert(AckReason::OutOfOrder);
    }

    pub(super) fn back_to_listen(&mut self) {
        let cfg = self.cfg.clone();
        let port = self.local_port;
        let mut counters = self.counters.clone();
        counters.bytes_lost_to_reset += (self.send_queued() + self.recv_available()) as u64;
        // The generator stays: the next SYN gets a new ISS (RFC 9293 3.4.1).
        let isn = std::mem::replace(
            &mut self.isn_gen,
            Box::new(|_: Instant, _: u16, _: u16| SeqNumber(0)),
        );
        *self = Connection::listen_with(cfg, port, isn);
        self.counters = counters;
    }

    /// The peer's FIN is consumed once every byte before it has arrived.
    fn check_fin(&mut self, now: Instant) {
        let Some(f) = self.fin.rcv_seq else { return };
        if self.fin.rcvd || self.rcv_nxt() != f {
            return;
        }
        if !matches!(
            self.state,
            State::SynReceived | State::Established | State::FinWait1 | State::FinWait2
        ) {
            return;
        }
        self.fin.rcvd = true;
        self.ack.now = Some(AckReason::Fin);
        match self.state {
            State::SynReceived | State::Established => self.state = State::CloseWait,
            State::FinWait1 => {
                if self.fin_acked() {
                    self.enter_time_wait(now);
                } else {
                    self.state = State::Closing;
                }
            }
            State::FinWait2 => self.enter_time_wait(now),
            _ => {}
        }
    }

    /// Stores payload in the receive buffer and decides when to ACK it.
    fn process_text(&mut self, now: Instant, seg: &TcpRepr, payload: &[u8]) {
        let rcv_nxt = self.rcv_nxt();
        let nxt_off = self.recv_buf.nxt();
        // FreeBSD ACKs at once what it trimmed as a duplicate (TF_ACKNOW).
        let dup = self.dsack_old(seg, payload.len());
        // Linux tcp_data_queue: the part of a partial packet below RCV.NXT.
        self.dsack_single(seg.seq, payload.len());
        let mut data = payload;
        let mut start = nxt_off as i64 + seg.seq.diff(rcv_nxt) as i64;
        if start < nxt_off as i64 - data.len() as i64 {
            start = nxt_off as i64 - data.len() as i64; // entirely old: duplicate
        }
        if start < 0 {
            data = &data[(-start) as usize..];
            start = 0;
        }
        // Trim to the window we advertised.
        let edge = nxt_off + self.rcv_adv.distance_from(rcv_nxt) as u64;
        let start = start as u64;
        let keep = edge.saturating_sub(start).min(data.len() as u64) as usize;
        let trimmed_tail = keep < data.len();
        let r = self.recv_buf.insert(start, &data[..keep]);
        self.dsack_after_insert(nxt_off, start, keep);
        if trimmed_tail {
            self.fin.rcv_seq = None;
        }
        self.text_stored(now, start, payload.len(), r, dup);
    }

    /// After `len` payload bytes of a segment were stored at stream offset
    /// `start` (`dup`: its head repeated data, FreeBSD's trim): counts what
    /// the insert did and decides when to ACK (RFC 5681 4.2, the ACK policy).
    pub(super) fn text_stored(
        &mut self,
        now: Instant,
        start: u64,
        len: usize,
        r: Insert,
        dup: bool,
    ) {
        if r.range_dropped {
            self.counters.ooo_ranges_dropped += 1;
        }
        if r.conflict_bytes > 0 {
            self.counters.overlap_conflicts += 1;
        }
        self.counters.duplicate_bytes_received += r.dup_bytes as u64;
        self.counters.bytes_delivered += r.advanced as u64;
        if r.out_of_order {
            self.counters.out_of_order_segments += 1;
            self.on_out_of_order(start);
        }
        if r.out_of_order || r.filled_gap || r.advanced == 0 || dup {
            // RFC 5681 4.2: out-of-order data and gap fills are acknowledged at once;
            // RFC 9293: so is a duplicate or out-of-window segment.
            self.counters.acks_out_of_order += 1;
            if self.ack.now == Some(AckReason::OutOfOrder) {
                self.ack.extra += 1;
            }
            self.ack.now = Some(AckReason::OutOfOrder);
            let ctx = self.ack_ctx(now, len);
            self.ack_policy.on_out_of_order(&ctx);
            return;
        }
        // A GRO packet counts as the segments it merged (Linux tcp_segs_in:
        // gso_segs), so "every Nth segment" rules see what the wire carried.
        let (segs, full) = rx_segments(len, self.rx_gso_size, self.snd_mss);
        self.ack.segs += segs;
        self.ack.bytes += r.advanced;
        self.ack.owed_since.get_or_insert(now);
        self.ack.full_segs += full;
        // tcp_measure_rcv_mss: a GRO packet's segments are gso_size bytes.
        let seg_len = self.rx_gso_size.map_or(len, |g| g.min(len));
        let mut ctx = self.ack_ctx(now, seg_len);
        ctx.seg_count = segs;
        let d = self.ack_policy.on_data(&ctx);
        self.apply_ack_decision(now, d);
    }
}

/// The segments, and the full-sized ones among them, that `len` payload bytes
/// stand for: one segment, or a GRO packet's pieces of `gso_size` bytes.
fn rx_segments(len: usize, gso_size: Option<usize>, mss: usize) -> (u32, u32) {
    let full = |n: usize| u32::from(n >= mss);
    match gso_size {
        Some(g) if len > g => {
            let whole = u32::try_from(len / g).unwrap_or(u32::MAX);
            let tail = len % g;
            let segs = whole.saturating_add(u32::from(tail > 0));
            let full = whole
                .saturating_mul(full(g))
                .saturating_add(full(tail) * u32::from(tail > 0));
            (segs, full)
        }
        _ => (1, full(len)),
    }
}

#[cfg(test)]
mod tests {
    use super::rx_segments;

    #[test]
    fn rx_segments_counts_gro_pieces_and_full_ones() {
        assert_eq!(rx_segments(1000, None, 1000), (1, 1));
        assert_eq!(rx_segments(999, None, 1000), (1, 0));
        assert_eq!(rx_segments(0, None, 1000), (1, 0));
        // Up to one gso_size piece: one segment.
        assert_eq!(rx_segments(1000, Some(1000), 1000), (1, 1));
        assert_eq!(rx_segments(4500, Some(1000), 1000), (5, 4));
        assert_eq!(rx_segments(4000, Some(1000), 1000), (4, 4));
        // Pieces under our MSS are not full-sized.
        assert_eq!(rx_segments(4000, Some(500), 1000), (8, 0));
    }
}
