//! The application's side of a connection: writes, reads, flush, close and
//! abort (the socket calls of RFC 9293 3.10), and what they leave to send.

use super::{Connection, WriteError};
use crate::config::SndBufCounts;
use crate::policy::SendPolicyKind;
use crate::state::State;
use crate::time::Instant;
use crate::trace::TraceEvent;

impl Connection {
    /// Bytes `write` would accept now.
    pub fn send_space(&self) -> usize {
        if self.can_write() {
            self.send_room()
        } else {
            0
        }
    }

    /// Room under `snd_buf` for what it counts (`Config::snd_buf_counts`).
    fn send_room(&self) -> usize {
        let held = match self.cfg.snd_buf_counts {
            SndBufCounts::Queued => self.send_buf.len(),
            SndBufCounts::Unsent => (self.send_buf.end() - self.off_of(self.snd_max)) as usize,
        };
        self.cfg.snd_buf.saturating_sub(held)
    }

    /// Bytes written but not yet acknowledged (sent or not).
    pub fn send_queued(&self) -> usize {
        self.send_buf.len()
    }

    /// In-order bytes waiting for `read`.
    pub fn recv_available(&self) -> usize {
        self.recv_buf.readable()
    }

    /// The peer's FIN has arrived and every byte before it has been read (EOF).
    pub fn read_closed(&self) -> bool {
        self.fin.rcvd && self.recv_buf.readable() == 0
    }

    /// The peer's FIN has arrived (read or not).
    pub fn fin_received(&self) -> bool {
        self.fin.rcvd
    }

    /// The application will read no more (close(), or shutdown with
    /// SHUT_RD): RFC 1122 4.2.2.13, new data after that, once our FIN is
    /// out, is answered with a RST (Linux's tcp_rcv_state_process in
    /// FIN-WAIT-1/2 with RCV_SHUTDOWN; FreeBSD's tcp_input likewise).
    pub fn shutdown_read(&mut self) {
        self.fin.rcv_shutdown = true;
    }

    /// Resizes the send buffer of a live connection (SO_SNDBUF after
    /// connect/accept); what is queued stays.
    pub fn set_send_buffer(&mut self, bytes: usize) {
        self.cfg_mut().snd_buf = bytes;
    }

    /// Sets the SYN retransmissions a live connection still opening may make
    /// (TCP_SYNCNT after connect: tcp(7); Linux's tcp_write_timeout reads it).
    pub fn set_syn_retries(&mut self, n: u32) {
        self.cfg_mut().syn_retries = n;
    }

    fn can_write(&self) -> bool {
        !self.fin.queued
            && matches!(
                self.state,
                State::SynSent | State::SynReceived | State::Established | State::CloseWait
            )
    }

    /// Queues application data; returns how much fit in the send buffer. Unless
    /// `more_follows` (MSG_MORE), the end of this write is an end of
    /// application data (Doupnik 2.0): PSH is set there and policies may send.
    pub fn write(&mut self, data: &[u8], more_follows: bool) -> Result<usize, WriteError> {
        if let Some(e) = self.error {
            return Err(WriteError::Conn(e));
        }
        if !self.can_write() {
            return Err(WriteError::Closed);
        }
        if self.snd_una == self.snd_max && !data.is_empty() {
            self.tx.idle_check = true;
        }
        let room = self.send_room();
        Ok(self.send_buf.write(data, more_follows, room))
    }

    /// The bytes just written came from the caller's memory as zerocopy
    /// pieces of these lengths (send(2) MSG_ZEROCOPY: one per page of each
    /// buffer); with Linux's skbs (`Config::tso_segs`) an skb holds at most
    /// MAX_SKB_FRAGS of them, and one that runs out is pushed (tcp_sendmsg_locked).
    pub fn zerocopy_frags(&mut self, lens: &[usize]) {
        let end = self.send_buf.end();
        if let Some(skbs) = self.skbs_mut() {
            skbs.add_frags(end, lens);
        }
    }

    /// Closes a record at the last written byte (send(2) MSG_EOR): no later
    /// data shares a segment with it, nor does a retransmission merge across
    /// it (Linux tcp_sendmsg_locked marks the skb eor; tcp_skb_can_collapse_to).
    pub fn end_record(&mut self) {
        self.send_buf.mark_record_end();
    }

    /// Ends the current data set and pushes it: the last written byte becomes
    /// an end of application data (like a write without MSG_MORE), and the data
    /// written so far goes as window and cwnd allow, whatever the send policy
    /// (tcp(7): "all queued partial frames are sent" when TCP_CORK is cleared).
    pub fn flush(&mut self) {
        if self.cfg.flush_ends_data {
            self.send_buf.flush();
        } else {
            self.send_buf.push();
        }
    }

    /// Changes the send policy of a live connection at `now`, as Linux's
    /// setsockopt TCP_NODELAY / TCP_CORK does; it decides from the next
    /// transmission on, and data it holds counts as held from `now`.
    pub fn set_send_policy(&mut self, now: Instant, kind: SendPolicyKind) {
        self.cfg_mut().send_policy = kind;
        self.send_policy = kind.build();
        self.policy_since = Some(now);
    }

    /// Turns the why-trace on or off (see `Config::trace`).
    pub fn set_trace(&mut self, on: bool) {
        self.cfg_mut().trace = on;
    }

    /// Moves the why-trace recorded so far into `out` (only with `Config::trace`).
    pub fn drain_trace(&mut self, out: &mut Vec<TraceEvent>) {
        out.append(&mut self.trace);
    }

    /// Reads in-order data. Returns 0 when nothing is available (see
    /// [`read_closed`](Self::read_closed) for end of stream).
    pub fn read(&mut self, buf: &mut [u8]) -> usize {
        let n = self.recv_buf.read(buf);
        if n > 0 {
            self.after_read();
        }
        n
    }

    /// Copies in-order data into `buf` without consuming it (recv(2)
    /// MSG_PEEK): the window and the next read are unchanged.
    pub fn peek(&self, buf: &mut [u8]) -> usize {
        let mut k = 0;
        self.recv_buf.peek(|s| {
            let take = s.len().min(buf.len() - k);
            buf[k..k + take].copy_from_slice(&s[..take]);
            k += take;
        });
        k
    }

    /// Reads and discards up to `n` bytes, calling `check` on them first.
    pub fn read_with(&mut self, n: usize, mut check: impl FnMut(&[u8])) -> usize {
        let mut left = n.min(self.recv_buf.readable());
        let take = left;
        self.recv_buf.peek(|s| {
            let k = s.len().min(left);
            check(&s[..k]);
            left -= k;
        });
        self.recv_buf.consume(take);
        if take > 0 {
            self.after_read();
        }
        take
    }

    /// Closes our sending side (RFC 9293 3.10.4): FIN goes after queued data.
    pub fn close(&mut self) {
        match self.state {
            State::Listen | State::SynSent => self.enter_closed(None),
            State::SynReceived => self.fin.queued = true,
            State::Established => {
                self.fin.queued = true;
                self.state = State::FinWait1;
            }
            State::CloseWait => {
                self.fin.queued = true;
                self.state = State::LastAck;
            }
            _ => {}
        }
    }

    /// close(2): the application closes both directions and lets go of the
    /// connection, which lives on as an orphan until its FIN is acknowledged,
    /// retrying at most `orphan_retries` times (Linux's tcp_close, SOCK_DEAD).
    pub fn release(&mut self) {
        self.shutdown_read();
        self.close();
        self.fin.orphaned = true;
    }

    /// Aborts (RFC 9293 3.10.5): RST to the peer if synchronized, then CLOSED.
    pub fn abort(&mut self) {
        self.abort_reset(self.cfg.abort_rst_ack);
    }

    /// [`Connection::abort`], the RST optionally carrying an ACK of RCV.NXT
    /// (Linux's tcp_send_active_reset sends RST|ACK, e.g. on close() with
    /// unread data; RFC 9293 3.10.5 leaves the ACK out).
    pub fn abort_reset(&mut self, with_ack: bool) {
        if (self.state == State::SynReceived || self.state.synchronized())
            && self.state != State::TimeWait
        {
            let ack = with_ack.then(|| self.rcv_nxt());
            self.pending_rst = Some(Box::new(self.rst_segment(self.snd_nxt, ack)));
        }
        self.enter_closed(None);
    }
}
