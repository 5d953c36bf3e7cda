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

/// An ICMP error message quoting one of our segments, by type (RFC 792).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IcmpError {
    /// Destination unreachable, with its code ([`unreach`]).
    Unreachable(u8),
    /// Time exceeded: code 0 in transit (TTL), 1 in reassembly.
    TimeExceeded(u8),
    /// Parameter problem, with its code.
    ParameterProblem(u8),
    /// Source quench (deprecated by RFC 6633; ignored by TCP).
    SourceQuench,
    /// Redirect, with its code (a routing matter, not TCP's).
    Redirect(u8),
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
        if self.cfg.icmp_bsd && self.state == State::SynSent {
            // FreeBSD: the SYN's MSS option comes from the interface
            // (tcp_mssopt), not from what tcp_ctlinput learns of the path.
            return true;
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

    /// An ICMP error quoting a segment of ours whose sequence number is
    /// `seq`; `accepted` says the application holds the socket. Returns
    /// false when the quoted number is not one we have outstanding. Under
    /// `icmp_bsd` as FreeBSD's tcp_ctlinput, otherwise as Linux's
    /// tcp_v4_err: a time exceeded or parameter problem is a hard error like
    /// an unreachable, a source quench or redirect changes nothing.
    pub fn icmp_error(&mut self, seq: SeqNumber, err: IcmpError, accepted: bool) -> bool {
        if self.cfg.icmp_bsd {
            return self.icmp_error_bsd(seq, err);
        }
        let hard = match err {
            IcmpError::Unreachable(code) => return self.icmp_unreachable(seq, code, accepted),
            IcmpError::TimeExceeded(_) => ConnError::TimeExceeded,
            IcmpError::ParameterProblem(_) => ConnError::ParameterProblem,
            IcmpError::SourceQuench | IcmpError::Redirect(_) => return true,
        };
        // tcp_req_err: a time exceeded or parameter problem aborts a request.
        self.icmp_hard(seq, hard, true, accepted)
    }

    /// FreeBSD tcp_ctlinput (tcp_subr.c) after icmp_input's sorting: with
    /// icmp_may_rst, port or protocol unreachable, administratively
    /// prohibited (net, host, filter) and TTL exceeded in transit drop a
    /// connection in SYN-SENT (tcp_drop_syn_sent); everything else is only
    /// tcp_notify's soft error, and the syncache (SYN-RECEIVED) keeps its
    /// entry (syncache_unreach). The quoted number must lie in [SND.UNA, SND.MAX).
    fn icmp_error_bsd(&mut self, seq: SeqNumber, err: IcmpError) -> bool {
        match self.state {
            State::Listen | State::Closed => return false,
            State::SynReceived if self.passive => return seq == self.iss,
            _ => {}
        }
        if !(seq >= self.snd_una && seq < self.snd_max) {
            return false;
        }
        let hard = match err {
            IcmpError::Unreachable(code @ (2 | 3 | 9 | 10 | 13)) => ConnError::Unreachable(code),
            IcmpError::TimeExceeded(0) => ConnError::TimeExceeded,
            _ => return true,
        };
        if self.cfg.icmp_may_rst && self.state == State::SynSent {
            self.enter_closed(Some(hard));
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
        let req_abort = matches!(code, unreach::NET | unreach::HOST);
        self.icmp_hard(seq, ConnError::Unreachable(code), req_abort, accepted)
    }

    /// Linux tcp_v4_err for a hard ICMP error: a request (SYN-RECEIVED)
    /// quoting its ISN goes back to LISTEN if `req_abort` (tcp_req_err); a
    /// connection in SYN-SENT, or a Fast Open child not yet accepted, closes
    /// with `err`.
    fn icmp_hard(
        &mut self,
        seq: SeqNumber,
        err: ConnError,
        req_abort: bool,
        accepted: bool,
    ) -> bool {
        match self.state {
            State::Listen | State::Closed => false,
            State::SynReceived if self.passive && !self.tfo.child => {
                // tcp_req_err: only an exact match of the SYN-ACK's ISN counts.
                if seq != self.iss {
                    return false;
                }
                if req_abort {
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
                    self.enter_closed(Some(err));
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

    fn syn_sent(cfg: Config) -> Connection {
        let now = Instant::from_nanos(1_000_000_000);
        let mut c =
            Connection::connect(cfg, 4000, 80, IsnSeries::with_step(SeqNumber(7000), 0), now);
        let syn = c.poll_transmit(now, &mut Vec::new()).expect("the SYN");
        assert_eq!(syn.seq, SeqNumber(7000));
        c
    }

    #[test]
    fn freebsd_ends_a_syn_sent_only_for_refusals_and_ttl_exceeded_with_icmp_may_rst() {
        let bsd = Config {
            icmp_bsd: true,
            ..Config::default()
        };
        let iss = SeqNumber(7000);
        let soft = [
            IcmpError::Unreachable(unreach::NET),
            IcmpError::Unreachable(unreach::HOST),
            IcmpError::Unreachable(unreach::FRAG_NEEDED),
            IcmpError::TimeExceeded(1),
            IcmpError::ParameterProblem(0),
            IcmpError::SourceQuench,
            IcmpError::Redirect(1),
        ];
        for err in soft {
            let mut c = syn_sent(bsd.clone());
            assert!(c.icmp_error(iss, err, false), "{err:?}");
            assert_eq!((c.state(), c.error()), (State::SynSent, None), "{err:?}");
        }
        // The SYN's MSS option stays the interface's (tcp_mssopt).
        let mut c = syn_sent(bsd.clone());
        assert!(c.icmp_frag_needed(iss, 600));
        assert_eq!(c.advertised_mss(), bsd.mss);
        let hard = [
            (
                IcmpError::Unreachable(unreach::PORT),
                ConnError::Unreachable(3),
            ),
            (IcmpError::Unreachable(13), ConnError::Unreachable(13)),
            (IcmpError::TimeExceeded(0), ConnError::TimeExceeded),
        ];
        for (err, want) in hard {
            let mut c = syn_sent(bsd.clone());
            // SND.MAX itself is not below SND.MAX: not ours.
            assert!(!c.icmp_error(iss + 1, err, false), "{err:?}");
            assert_eq!(c.state(), State::SynSent);
            assert!(c.icmp_error(iss, err, false), "{err:?}");
            assert_eq!((c.state(), c.error()), (State::Closed, Some(want)));
            let mut off = syn_sent(Config {
                icmp_may_rst: false,
                ..bsd.clone()
            });
            assert!(off.icmp_error(iss, err, false));
            assert_eq!(off.state(), State::SynSent, "{err:?} without icmp_may_rst");
        }
    }

    #[test]
    fn linux_ends_a_syn_sent_for_time_exceeded_and_parameter_problem() {
        let iss = SeqNumber(7000);
        for (err, want) in [
            (IcmpError::TimeExceeded(0), Some(ConnError::TimeExceeded)),
            (
                IcmpError::ParameterProblem(2),
                Some(ConnError::ParameterProblem),
            ),
            (IcmpError::SourceQuench, None),
            (IcmpError::Redirect(0), None),
        ] {
            let mut c = syn_sent(Config::default());
            assert!(c.icmp_error(iss, err, false));
            assert_eq!(c.error(), want, "{err:?}");
        }
        // A request goes back to LISTEN for a time exceeded (tcp_req_err).
        let mut c = syn_received();
        assert!(c.icmp_error(SeqNumber(5000), IcmpError::TimeExceeded(0), false));
        assert_eq!(c.state(), State::Listen);
    }
}
