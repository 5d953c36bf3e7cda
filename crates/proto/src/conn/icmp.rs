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

/// The smallest path MTU taken from an ICMP message: below it the path is
/// taken to be 552 bytes (Linux's net.ipv4.route.min_pmtu, __ip_rt_update_pmtu).
const MIN_PMTU: u16 = 552;

/// IPv4 and TCP headers without options: MTU - 40 is the MSS (RFC 879).
const HEADERS: u16 = 40;

impl Connection {
    /// The MSS our SYN or SYN-ACK offers: the configured one, or less when
    /// the path MTU is smaller (Linux tcp_advertise_mss: the route's advmss,
    /// MTU - 40).
    pub(super) fn advertised_mss(&self) -> u16 {
        let mss = self.local_mss();
        self.pmtu.map_or(mss, |m| {
            mss.min(m.saturating_sub(HEADERS + self.encaps_overhead()))
        })
    }

    /// An ICMP "fragmentation needed and DF set" quoting our segment `seq`,
    /// with the next hop's `mtu` (RFC 1191 4; Linux tcp_v4_err and
    /// tcp_v4_mtu_reduced). Returns false when the quoted number is not one
    /// we have outstanding. A smaller path MTU shrinks the MSS we send and
    /// offer (tcp_sync_mss); a Fast Open SYN whose data was too big is sent
    /// again at once without it (tcp_simple_retransmit). Data already sent
    /// in larger segments is repaired by the usual loss recovery.
    pub fn icmp_frag_needed(&mut self, seq: SeqNumber, mtu: u16) -> bool {
        if matches!(self.state, State::Listen | State::Closed)
            || !(seq >= self.snd_una && seq <= self.snd_nxt)
        {
            return false;
        }
        let mtu = mtu.max(MIN_PMTU);
        let current = self.pmtu.unwrap_or(self.cfg.mss.saturating_add(HEADERS));
        if mtu >= current {
            return true;
        }
        self.pmtu = Some(mtu);
        if self.state.synchronized() {
            let opts = self.snd_mss_options();
            // FreeBSD tcp_mss_update: a UDP encapsulation's header comes out too.
            let mss = mtu.saturating_sub(HEADERS + self.encaps_overhead()) as usize;
            self.snd_mss = self.snd_mss.min(mss.saturating_sub(opts)).max(1);
            if self.cfg.pmtu_resend && self.snd_nxt > self.snd_una {
                // FreeBSD tcp_mtudisc: the segments in flight were dropped;
                // stop timing one (Karn), mark all sent as before any fast
                // retransmit (snd_recover), and send again from SND.UNA.
                self.rtt_probe = None;
                self.recovery.recover = self.snd_max;
                self.snd_nxt = self.snd_una;
            }
        } else if self.state == State::SynSent && self.tfo.syn_data {
            // tcp_simple_retransmit: the SYN and its data are lost; the SYN
            // goes again now, plain (the data follows the handshake).
            // As a retransmission timeout resends it, without the backoff.
            self.tfo.syn_resent_plain = true;
            self.counters.syn_retransmits += 1;
            self.rtt_probe = None;
            self.tx.need_syn = true;
            self.snd_nxt = self.iss;
        }
        true
    }

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
