//! TCP over UDP: a connection whose segments travel encapsulated in UDP to
//! the peer's port (RFC 6951's encapsulation, as FreeBSD applies it to TCP
//! with TCP_REMOTE_UDP_ENCAPS_PORT). The driver adds and strips the UDP
//! header; the engine keeps the port and pays its header out of the MSS.

use super::Connection;
use crate::state::State;

impl Connection {
    /// The peer's UDP port the segments travel encapsulated to; 0: plain TCP.
    pub fn udp_encaps_port(&self) -> u16 {
        self.cfg.udp_encaps_port
    }

    /// Takes the UDP port a segment for a listener came from, so that the
    /// connection it opens answers the same way (FreeBSD tcp_syncache.c
    /// syncache_add records the port with the SYN). Only a listening or
    /// closed connection changes its port: once a handshake has started it
    /// is fixed (FreeBSD tcp_usrreq.c refuses TCP_REMOTE_UDP_ENCAPS_PORT
    /// outside CLOSED). Returns whether the port was taken.
    pub fn set_udp_encaps_port(&mut self, port: u16) -> bool {
        if !matches!(self.state, State::Listen | State::Closed) {
            return false;
        }
        self.cfg_mut().udp_encaps_port = port;
        true
    }

    /// A passive open in SYN-RECEIVED whose state stands for a SYN cookie
    /// (FreeBSD net.inet.tcp.syncookies_only: no syncache entry is kept)
    /// takes the UDP port of the ACK that completes it: the cookie holds no
    /// port (tcp_syncache.c syncookie_expand). Returns whether it was taken.
    pub fn take_cookie_udp_encaps_port(&mut self, port: u16) -> bool {
        if !(self.passive && self.state == State::SynReceived) {
            return false;
        }
        self.cfg_mut().udp_encaps_port = port;
        true
    }

    /// MSS bytes the encapsulation costs: the configured overhead while
    /// encapsulated, else none (FreeBSD tcp_output.c and tcp_mss_update
    /// subtract net.inet.tcp.udp_tunneling_overhead when t_port is set).
    pub(super) fn encaps_overhead(&self) -> u16 {
        if self.cfg.udp_encaps_port == 0 {
            0
        } else {
            self.cfg.udp_tunneling_overhead
        }
    }

    /// The largest segment this end takes and offers before the path MTU:
    /// the configured MSS less what the encapsulation costs.
    pub(super) fn local_mss(&self) -> u16 {
        self.cfg.mss.saturating_sub(self.encaps_overhead()).max(1)
    }
}

#[cfg(test)]
mod tests {
    use crate::config::Config;
    use crate::isn::IsnSeries;
    use crate::seq::SeqNumber;
    use crate::time::Instant;
    use crate::wire::{Flags, TcpOptions, TcpRepr};
    use crate::Connection;

    fn syn(mss: u16) -> TcpRepr {
        TcpRepr {
            src_port: 4000,
            dst_port: 80,
            seq: SeqNumber(7),
            ack: SeqNumber(0),
            flags: Flags::SYN,
            window: 65_535,
            urgent: 0,
            options: TcpOptions {
                mss: Some(mss),
                ..TcpOptions::default()
            },
        }
    }

    fn synack_of(c: &mut Connection) -> TcpRepr {
        let mut buf = Vec::new();
        c.poll_transmit(Instant::from_millis(1), &mut buf)
            .expect("a SYN-ACK")
    }

    #[test]
    fn an_encapsulated_listener_offers_the_mss_less_the_udp_header() {
        let cfg = Config {
            mss: 1460,
            ..Config::default()
        };
        let mut plain = Connection::listen(cfg.clone(), 80, IsnSeries::with_step(SeqNumber(1), 0));
        plain.handle_segment(Instant::from_millis(1), &syn(1460), &[]);
        assert_eq!(synack_of(&mut plain).options.mss, Some(1460));

        let mut tunneled = Connection::listen(cfg, 80, IsnSeries::with_step(SeqNumber(1), 0));
        assert!(tunneled.set_udp_encaps_port(5000));
        tunneled.handle_segment(Instant::from_millis(1), &syn(1460), &[]);
        assert_eq!(synack_of(&mut tunneled).options.mss, Some(1452));
        assert_eq!(tunneled.udp_encaps_port(), 5000);
        // The handshake has started: the port is the connection's now.
        assert!(!tunneled.set_udp_encaps_port(6000));
        assert_eq!(tunneled.udp_encaps_port(), 5000);
    }

    #[test]
    fn only_a_passive_open_in_syn_received_takes_a_cookie_ack_port() {
        let mut c =
            Connection::listen(Config::default(), 80, IsnSeries::with_step(SeqNumber(1), 0));
        assert!(
            !c.take_cookie_udp_encaps_port(7),
            "LISTEN: not a cookie's open yet"
        );
        c.set_udp_encaps_port(5000);
        c.handle_segment(Instant::from_millis(1), &syn(1460), &[]);
        assert!(c.take_cookie_udp_encaps_port(5001));
        assert_eq!(c.udp_encaps_port(), 5001);
    }

    #[test]
    fn the_overhead_is_a_setting() {
        let cfg = Config {
            mss: 1460,
            udp_encaps_port: 9,
            udp_tunneling_overhead: 100,
            ..Config::default()
        };
        let mut c = Connection::listen(cfg, 80, IsnSeries::with_step(SeqNumber(1), 0));
        c.handle_segment(Instant::from_millis(1), &syn(1460), &[]);
        assert_eq!(synack_of(&mut c).options.mss, Some(1360));
    }
}
