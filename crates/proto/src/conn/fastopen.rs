//! TCP Fast Open (RFC 7413): the server's take of SYN data and cookie, and the
//! client's cookie option and data in its SYN.

use super::Connection;
use crate::state::State;
use crate::wire::TcpRepr;

impl Connection {
    /// The sequence a Fast Open child's unacknowledged SYN-ACK holds in
    /// flight, 0 when it counts none (Linux tcp_create_openreq_child starts
    /// SND.UNA at ISS + 1; `Config::tfo_child_syn_outside_window`).
    pub(super) fn syn_outside_flight(&self) -> usize {
        // The hot test first: Fast Open's state is read only in SYN-RECEIVED.
        if self.state != State::SynReceived || self.snd_una != self.iss {
            return 0;
        }
        usize::from(self.cfg.tfo_child_syn_outside_window && self.tfo.child)
    }

    /// RFC 7413 4.3: a SYN with a valid cookie (or, when the listener waives
    /// cookies, an empty Fast Open option) has its data taken into the
    /// receive buffer and acknowledged by the SYN-ACK; a SYN asking for a
    /// cookie, or carrying a wrong one, gets one in the SYN-ACK and its data
    /// is dropped (the client sends it again after the handshake, 4.2.2).
    pub(super) fn fast_open_server(&mut self, seg: &TcpRepr, payload: &[u8]) {
        let fo_cfg = &self.cfg.fast_open;
        let opt = seg.options.fast_open;
        // Only a SYN that carries data or asks for Fast Open, and only while
        // the queue has room (RFC 7413 5.1).
        if !fo_cfg.server || (payload.is_empty() && opt.is_none()) || fo_cfg.queue == 0 {
            return;
        }
        let valid = fo_cfg.server_no_cookie
            || opt
                .is_some_and(|o| !o.cookie.is_request() && fo_cfg.server_cookie == Some(o.cookie));
        if valid {
            self.tfo.child = true;
            if !payload.is_empty() {
                let keep = payload.len().min(self.syn_window());
                let r = self.recv_buf.insert(0, &payload[..keep]);
                self.counters.bytes_delivered += r.advanced as u64;
                self.tfo.syn_data = true;
                self.tfo.syn_data_acked = true;
            }
        } else if let (Some(o), Some(cookie)) = (opt, fo_cfg.server_cookie) {
            // A request or a wrong cookie: answer with the right one (4.3.1).
            self.tfo.reply = Some(crate::fastopen::FastOpenOption {
                experimental: o.experimental,
                cookie,
            });
        }
    }

    /// Changes the Fast Open settings of a connection not yet synchronized
    /// (TCP_FASTOPEN on a listener, set after listen()).
    pub fn set_fast_open(&mut self, f: crate::fastopen::FastOpenConfig) {
        self.cfg_mut().fast_open = f;
    }

    /// Fast Open progress: whether SYN data was sent or taken, and the cookie
    /// a server gave this client (the caller keeps it in its [`CookieCache`](crate::fastopen::CookieCache)).
    pub fn fast_open(&self) -> &crate::fastopen::TfoState {
        &self.tfo
    }

    /// Fast Open on the SYN or SYN-ACK `r`: the server's cookie reply; on an
    /// active open the cookie option and, when a cookie is known, data in
    /// the first SYN (RFC 7413 4.2.1); a retransmitted SYN carries no data (4.2.2).
    pub(super) fn syn_fast_open(&mut self, r: &mut TcpRepr, payload: &mut Vec<u8>) {
        if self.state == State::SynReceived {
            r.options.fast_open = self.tfo.reply;
            return;
        }
        let fo = self.cfg.fast_open.clone();
        // A retransmitted SYN goes plain, without data or option, as Linux's
        // does: the path may drop what it does not know (RFC 7413 4.2.2).
        if !fo.client || self.retries > 0 || self.tfo.syn_resent_plain {
            return;
        }
        let cookie = fo.cookie.filter(|c| !c.is_request());
        if cookie.is_some() || !fo.client_no_cookie {
            r.options.fast_open = Some(crate::fastopen::FastOpenOption {
                experimental: fo.experimental,
                cookie: cookie.unwrap_or_default(),
            });
        }
        let may_carry = (cookie.is_some() || fo.client_no_cookie) && self.retries == 0;
        if may_carry && !self.send_buf.is_empty() {
            // Linux's room for SYN data: the MSS less the most options take.
            let mss = self.cfg.mss.min(fo.peer_mss.unwrap_or(u16::MAX));
            let room = (mss as usize).saturating_sub(crate::wire::MAX_OPTIONS_LEN);
            let len = self.send_buf.len().min(room).min(self.snd_wnd.max(room));
            self.send_buf.copy_out(self.send_buf.head(), len, payload);
            self.snd_nxt = self.iss + 1 + len;
            if self.snd_max < self.snd_nxt {
                self.snd_max = self.snd_nxt;
            }
            self.tfo.syn_data = true;
            self.tfo.syn_data_len = len;
            let end = self.send_buf.head() + len as u64;
            if let Some(skbs) = self.skbs_mut() {
                skbs.on_syn_data(end);
            }
            // Linux queues the SYN's data as a segment of its own.
            self.sent.on_syn_data_sent(self.iss + 1 + len);
        }
    }

    /// RFC 7413 4.2.2: a cookie the SYN-ACK carries is kept for the cache.
    /// tcp_rcv_fastopen_synack: a cookie our SYN did not ask for (no Fast
    /// Open option in it, as in cookie-less mode) is ignored.
    pub(super) fn fast_open_syn_ack(&mut self, seg: &TcpRepr) {
        let fo_cfg = &self.cfg.fast_open;
        let asked = fo_cfg.client
            && (fo_cfg.cookie.is_some_and(|c| !c.is_request()) || !fo_cfg.client_no_cookie);
        // An odd length is no cookie (Linux tcp_parse_fastopen_option;
        // FreeBSD tcp_fastopen_update_cache).
        let valid = |f: &crate::fastopen::FastOpenOption| {
            !f.cookie.is_request() && f.cookie.as_bytes().len().is_multiple_of(2)
        };
        match seg.options.fast_open.filter(valid) {
            Some(fo) if asked => self.tfo.learned = Some(fo),
            Some(_) => {}
            None => self.tfo.no_cookie = asked,
        }
        // tcp_rcv_fastopen_synack: "We requested a cookie but didn't get it"
        // (no option at all, no SYN data, the SYN never retransmitted).
        self.tfo.no_cookie_reply =
            asked && seg.options.fast_open.is_none() && !self.tfo.syn_data && self.retries == 0;
        if self.cfg.fast_open.client {
            self.tfo.peer_mss = seg.options.mss;
        }
    }
}
