//! Engine entry points for SYN cookies (RFC 4987 3.6): a listener whose
//! backlog is full answers a SYN without keeping state, and builds the
//! connection only when an ACK returns a cookie the driver has validated.
//! The driver owns the cookie (its hash, clock and MSS encoding); the engine
//! only sends the SYN-ACK and starts the connection from what the cookie holds.
//!
//! A cookie carries the peer's MSS and nothing else: window scaling, SACK,
//! timestamps, NAKs and big windows cannot be encoded, so the cookie SYN-ACK
//! does not offer them and the connection runs without them.

use super::Connection;
use crate::config::Config;
use crate::isn::IsnGenerator;
use crate::seq::SeqNumber;
use crate::time::Instant;
use crate::wire::{Flags, TcpOptions, TcpRepr};
use std::sync::Arc;

impl Connection {
    /// The SYN-ACK a stateless listener sends for `syn` with ISS `cookie`:
    /// exactly what a passive open would send for that SYN had it carried
    /// only an MSS option of `mss` (the peer's, as the cookie encodes it).
    pub fn cookie_syn_ack(
        config: &Config,
        syn: &TcpRepr,
        cookie: SeqNumber,
        mss: u16,
        now: Instant,
    ) -> TcpRepr {
        let cfg = Arc::new(config.clone());
        let mut c = Connection::cookie_syn_received(cfg, syn.seq, syn, cookie, mss, now);
        c.emit_syn(now)
    }

    /// The connection a validated cookie ACK completes (RFC 4987 3.6): the
    /// peer's ISN is `ack.seq - 1`, ours `ack.ack - 1` (the cookie), `mss` the
    /// peer's MSS decoded from it. The ACK (and any data on it) is processed
    /// as the third segment of the handshake, so the connection is
    /// ESTABLISHED (or further) on return. `isn` serves a later reuse of the
    /// 4-tuple, as a passive open's generator does. No round-trip sample is
    /// taken from the handshake: the SYN-ACK's send time was not kept.
    pub fn from_syn_cookie(
        config: impl Into<Arc<Config>>,
        ack: &TcpRepr,
        payload: &[u8],
        mss: u16,
        isn: impl IsnGenerator + 'static,
        now: Instant,
    ) -> Connection {
        let irs = ack.seq - 1;
        let iss = ack.ack - 1;
        let mut c = Connection::cookie_syn_received(config.into(), irs, ack, iss, mss, now);
        c.emit_syn(now);
        c.rtt_probe = None;
        c.isn_gen = Box::new(isn);
        c.handle_segment(now, ack, payload);
        c
    }

    /// SYN-RECEIVED for the SYN `seq` from `from`'s ports carrying only MSS
    /// `mss`, with ISS `iss`; the SYN-ACK is due.
    fn cookie_syn_received(
        config: Arc<Config>,
        seq: SeqNumber,
        from: &TcpRepr,
        iss: SeqNumber,
        mss: u16,
        now: Instant,
    ) -> Connection {
        let gen = move |_: Instant, _: u16, _: u16| iss;
        let mut c = Connection::listen_with(config, from.dst_port, Box::new(gen));
        let syn = TcpRepr {
            src_port: from.src_port,
            dst_port: from.dst_port,
            seq,
            ack: SeqNumber(0),
            flags: Flags::SYN,
            window: from.window,
            urgent: 0,
            options: TcpOptions {
                mss: Some(mss),
                ..TcpOptions::default()
            },
        };
        c.on_listen(now, &syn, &[]);
        c
    }

    /// Bytes of memory the send and receive buffers hold now: nothing until
    /// data is written or arrives, then up to the configured sizes.
    pub fn buffer_memory(&self) -> usize {
        self.recv_buf.allocated() + self.send_buf.allocated()
    }
}
