//! SYN cookies (RFC 4987 3.6): past the backlog a listener answers a SYN
//! with a SYN-ACK whose ISS encodes the connection, keeps nothing, and
//! builds the connection only when an ACK returns a cookie that verifies.

use super::secret::{IsnKey, COOKIE_LIFETIME};
use crate::config::Config;
use crate::conn::Connection;
use crate::time::Instant;
use crate::wire::TcpRepr;
use std::net::SocketAddrV4;

/// The MSS values a SYN cookie's 3-bit index stands for (RFC 4987 3.6:
/// "a small table of commonly used MSS values"): Linux's IPv4 four, plus
/// jumbo and loopback-sized ones for TUN devices with a large MTU.
pub const COOKIE_MSS: [u16; 8] = [536, 1200, 1300, 1440, 1460, 4016, 8960, 65495];

/// The largest table entry not above the peer's MSS (536 without the option,
/// RFC 9293 3.7.1's default).
pub fn cookie_mss_index(peer_mss: Option<u16>) -> u8 {
    let mss = peer_mss.unwrap_or(536);
    COOKIE_MSS.iter().rposition(|&m| m <= mss).unwrap_or(0) as u8
}

/// A host's cookie state: only when the last one left.
#[derive(Clone, Copy, Debug, Default)]
pub struct Cookies {
    last_sent: Option<Instant>,
}

impl Cookies {
    /// Whether a cookie left recently enough for a cookie ACK to be valid:
    /// a host not under a flood never builds a connection from an unsolicited ACK.
    pub fn recent(&self, now: Instant) -> bool {
        self.last_sent
            .is_some_and(|t| now.saturating_duration_since(t) <= COOKIE_LIFETIME)
    }

    /// The SYN-ACK that answers `syn` without keeping state: its ISS is the
    /// cookie, which carries the peer's MSS (rounded down to the table).
    pub fn syn_ack(
        &mut self,
        key: &IsnKey,
        (local, remote): (SocketAddrV4, SocketAddrV4),
        syn: &TcpRepr,
        config: &Config,
        now: Instant,
    ) -> TcpRepr {
        let index = cookie_mss_index(syn.options.mss);
        let cookie = key.syn_cookie(local, remote, syn.seq, now, index);
        self.last_sent = Some(now);
        Connection::cookie_syn_ack(config, syn, cookie, COOKIE_MSS[index as usize], now)
    }

    /// The peer's MSS an ACK's cookie carries, if the cookie is one this
    /// host made for the ACK's 4-tuple and ISN and has not expired.
    pub fn check(
        &self,
        key: &IsnKey,
        (local, remote): (SocketAddrV4, SocketAddrV4),
        ack: &TcpRepr,
        now: Instant,
    ) -> Option<u16> {
        let (their_isn, cookie) = (ack.seq - 1, ack.ack - 1);
        key.check_syn_cookie(local, remote, their_isn, cookie, now)
            .map(|index| COOKIE_MSS[usize::from(index)])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_peer_mss_rounds_down_to_the_table() {
        assert_eq!(cookie_mss_index(None), 0);
        assert_eq!(cookie_mss_index(Some(100)), 0, "below the table: its least");
        assert_eq!(COOKIE_MSS[cookie_mss_index(Some(1460)) as usize], 1460);
        assert_eq!(COOKIE_MSS[cookie_mss_index(Some(1459)) as usize], 1440);
        assert_eq!(COOKIE_MSS[cookie_mss_index(Some(9000)) as usize], 8960);
        assert_eq!(COOKIE_MSS[cookie_mss_index(Some(u16::MAX)) as usize], 65495);
    }
}
