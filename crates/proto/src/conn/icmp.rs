//! ICMP destination-unreachable messages about a connection's segments.
//! RFC 1122 4.2.3.9 makes them soft errors for a synchronized connection;
//! before that, Linux (net/ipv4/tcp_ipv4.c, tcp_v4_err and tcp_req_err) ends
//! the handshake, and the engine does as Linux does.

use super::{ConnError, Connection};
use crate::seq::SeqNumber;
use crate::state::State;

/// ICMP destination-unreachable codes (RFC 792, RFC 1122 3.2.2.1).
pub mod unreach {
    /// Network unreachable.
    pub const NET: u8 = 0;
    /// Host unreachable.
    pub const HOST: u8 = 1;
    /// Protocol unreachable.
    pub const PROTOCOL: u8 = 2;
    /// Port unreachable.
    pub const PORT: u8 = 3;
    /// Fragmentation needed and DF set (path MTU discovery, RFC 1191).
    pub const FRAG_NEEDED: u8 = 4;
}

impl Connection {
    /// An ICMP destination unreachable with `code`, quoting a segment of ours
    /// whose sequence number is `seq`; `accepted` says the application holds
    /// the socket. Returns false when the quoted number is not one we have
    /// outstanding (Linux counts it as OutOfWindowIcmps and ignores it).
    ///
    /// A passive open still in SYN-RECEIVED goes back to LISTEN when the ICMP
    /// quotes its SYN-ACK and says the network or host is unreachable
    /// (tcp_req_err). A Fast Open child not yet accepted, or an active open in
    /// SYN-SENT, is closed with the error, its received data kept
    /// (tcp_v4_err). Anything else is a soft error and changes nothing.
    pub fn icmp_unreachable(&mut self, seq: SeqNumber, code: u8, accepted: bool) -> bool {
        if code == unreach::FRAG_NEEDED {
            // Path MTU discovery is not modelled: the message changes nothing.
            return true;
        }
        match self.state {
            State::Listen | State::Closed => false,
            State::SynReceived if self.passive && !self.tfo.child => {
                // tcp_req_err: only an exact match of the SYN-ACK's ISN counts.
                if seq != self.iss {
                    return false;
                }
                if matches!(code, unreach::NET | unreach::HOST) {
                    self.back_to_listen();
                }
                true
            }
            _ => {
                // tcp_v4_err: between(seq, snd_una, snd_nxt); a Fast Open
                // child's SND.UNA is still its ISN.
                if !(seq >= self.snd_una && seq <= self.snd_nxt) {
                    return false;
                }
                // FreeBSD tcp_ctlinput: SEQ_LT(seq, snd_max), SND.NXT itself out.
                if self.cfg.icmp_seq_below_max && seq >= self.snd_max {
                    return false;
                }
                let early = match self.state {
                    State::SynSent => true,
                    State::SynReceived => self.tfo.child && !accepted,
                    _ => false,
                };
                if early {
                    self.enter_closed(Some(ConnError::Unreachable(code)));
                }
                true
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::isn::IsnSeries;
    use crate::time::Instant;
    use crate::wire::{Flags, TcpOptions, TcpRepr};

    fn syn(seq: u32) -> TcpRepr {
        TcpRepr {
            src_port: 4000,
            dst_port: 80,
            seq: SeqNumber(seq),
            ack: SeqNumber(0),
            flags: Flags::SYN,
            window: 20_000,
            urgent: 0,
            options: TcpOptions {
                mss: Some(1000),
                ..TcpOptions::default()
            },
        }
    }

    fn syn_received() -> Connection {
        let mut c = Connection::listen(
            Config::default(),
            80,
            IsnSeries::with_step(SeqNumber(5000), 0),
        );
        let now = Instant::from_nanos(1_000_000_000);
        c.handle_segment(now, &syn(100), &[]);
        assert_eq!(c.state(), State::SynReceived);
        c
    }

    #[test]
    fn a_request_goes_back_to_listen_only_for_its_own_isn_and_hard_codes() {
        let mut c = syn_received();
        assert!(!c.icmp_unreachable(SeqNumber(5001), unreach::HOST, false));
        assert!(c.icmp_unreachable(SeqNumber(5000), unreach::PORT, false));
        assert_eq!(c.state(), State::SynReceived);
        assert!(c.icmp_unreachable(SeqNumber(5000), unreach::HOST, false));
        assert_eq!(c.state(), State::Listen);
        assert_eq!(c.error(), None);
    }
}
