//! One host's TCP endpoint, sans-IO: what happens to a segment that no
//! connection of the host claims. A listening port opens a connection per
//! SYN up to its backlog of half-open connections, answers SYNs beyond it
//! with SYN cookies (RFC 4987 3.6) or drops them, and builds a connection
//! from an ACK that returns a valid cookie; everything else gets a RST
//! (RFC 9293 3.10.7.1). Time comes in as an argument and segments go out as
//! [`TcpRepr`]s; addresses, framing, checksums and the device are the
//! driver's (the TUN host in crates/net, the simulator's hosts).
//!
//! The driver keeps its connections in a [`ConnTable`] (the demultiplexer),
//! their timers in [`Deadlines`], and its finished connections' records
//! bounded by [`closed::keep_last`]; it asks [`Endpoint::unmatched`] only
//! when the table has no connection for a segment.

pub mod backlog;
pub mod closed;
pub mod cookies;
pub mod deadlines;
pub mod demux;
pub mod secret;

pub use backlog::Listener;
pub use cookies::{cookie_mss_index, Cookies, COOKIE_MSS};
pub use deadlines::Deadlines;
pub use demux::{ConnTable, FourTuple, FxBuild, FxHasher};
pub use secret::{IsnKey, Rfc6528Isn, COOKIE_LIFETIME, COOKIE_PERIOD};

use crate::config::Config;
use crate::conn::rst_reply;
use crate::time::Instant;
use crate::wire::TcpRepr;
use std::net::SocketAddrV4;

/// What to do with a segment no connection claimed.
#[derive(Clone, Debug, PartialEq)]
pub enum Unmatched {
    /// A SYN on a listening port with room in its backlog: open a passive
    /// connection with the listener's settings, hand it the SYN, and call
    /// [`Endpoint::settled`] once it leaves SYN-RECEIVED.
    Open,
    /// An ACK that returned a valid cookie: build its connection
    /// (`Connection::from_syn_cookie`) with the peer MSS the cookie carried.
    FromCookie { mss: u16 },
    /// Send this SYN-ACK, a cookie; nothing is kept (RFC 4987 3.6).
    SendCookie(TcpRepr),
    /// Send this RST: the segment is for no connection (RFC 9293 3.10.7.1).
    Reset(TcpRepr),
    /// Send this RST: an ACK to a listening port whose cookie did not
    /// verify (forged, or older than two cookie periods).
    CookieRejected(TcpRepr),
    /// Dropped unanswered: the host takes no new connection now (its
    /// memory budget), so the peer retries later.
    Refused,
    /// Dropped unanswered: the backlog is full and SYN cookies are off, as
    /// Linux drops a SYN with `tcp_syncookies = 0` (the peer retries).
    BacklogFull,
    /// A RST for no connection: never answered (RFC 9293 3.10.7.1).
    Ignored,
}

/// A host's listening ports and SYN-cookie state.
#[derive(Debug)]
pub struct Endpoint {
    listeners: Vec<Listener>,
    key: IsnKey,
    cookies: Cookies,
}

impl Endpoint {
    /// An endpoint that signs its cookies with `key`.
    pub fn new(key: IsnKey) -> Endpoint {
        Endpoint {
            listeners: Vec::new(),
            key,
            cookies: Cookies::default(),
        }
    }

    /// The host's secret: its ISNs (RFC 6528) come from it too.
    pub fn key(&self) -> &IsnKey {
        &self.key
    }

    /// Accepts connections on `port` with `config` (its `backlog` and
    /// `syn_cookies` included); listening again replaces the settings.
    pub fn listen(&mut self, port: u16, config: Config) {
        match self.listener_mut(port) {
            Some(l) => l.config = config,
            None => self.listeners.push(Listener::new(port, config)),
        }
    }

    /// Stops accepting connections on `port` (those it opened live on).
    pub fn unlisten(&mut self, port: u16) {
        self.listeners.retain(|l| l.port != port);
    }

    pub fn listener(&self, port: u16) -> Option<&Listener> {
        self.listeners.iter().find(|l| l.port == port)
    }

    pub fn listener_mut(&mut self, port: u16) -> Option<&mut Listener> {
        self.listeners.iter_mut().find(|l| l.port == port)
    }

    /// Whether `seg`, for no connection, asks for a new one: a SYN, or an
    /// ACK that may return a cookie sent lately (RFC 4987 3.6), to a
    /// listening port. A host short of memory frees some before refusing it.
    pub fn asks_in(&self, now: Instant, seg: &TcpRepr) -> bool {
        let f = seg.flags;
        self.listener(seg.dst_port).is_some()
            && !f.rst()
            && (f.syn() && !f.ack() || f.ack() && !f.syn() && self.cookies.recent(now))
    }

    /// Half-open connections over all listening ports.
    pub fn half_open(&self) -> usize {
        self.listeners.iter().map(Listener::half_open).sum()
    }

    /// A connection [`Unmatched::Open`] made on `port` left SYN-RECEIVED.
    pub fn settled(&mut self, port: u16) {
        if let Some(l) = self.listener_mut(port) {
            l.settled();
        }
    }

    /// What to do with `seg` (carrying `payload_len` bytes) from `remote`
    /// to `local`, for which the host has no connection; `accepting`:
    /// whether the host takes new connections now. An [`Unmatched::Open`]
    /// is counted in the listener's backlog at once.
    pub fn unmatched(
        &mut self,
        now: Instant,
        tuple: (SocketAddrV4, SocketAddrV4),
        seg: &TcpRepr,
        payload_len: usize,
        accepting: bool,
    ) -> Unmatched {
        let reset = || rst_reply(seg, payload_len).map_or(Unmatched::Ignored, Unmatched::Reset);
        let Some(i) = self.listeners.iter().position(|l| l.port == seg.dst_port) else {
            return reset();
        };
        let f = seg.flags;
        let syn = f.syn() && !f.ack() && !f.rst();
        let cookie_ack = f.ack() && !f.syn() && !f.rst() && self.cookies.recent(now);
        if !accepting && (syn || cookie_ack) {
            return Unmatched::Refused;
        }
        if syn {
            let l = &mut self.listeners[i];
            if l.has_room() {
                l.opened();
                return Unmatched::Open;
            }
            if !l.config.syn_cookies {
                return Unmatched::BacklogFull;
            }
            let synack = self.cookies.syn_ack(&self.key, tuple, seg, &l.config, now);
            return Unmatched::SendCookie(synack);
        }
        if cookie_ack {
            return match self.cookies.check(&self.key, tuple, seg, now) {
                Some(mss) => Unmatched::FromCookie { mss },
                None => rst_reply(seg, payload_len)
                    .map_or(Unmatched::Ignored, Unmatched::CookieRejected),
            };
        }
        reset()
    }
}

#[cfg(test)]
mod tests;
