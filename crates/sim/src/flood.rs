//! A SYN flood (RFC 4987 2): SYNs from spoofed source addresses, none of
//! them a host of the run, so nobody answers the SYN-ACKs and every SYN that
//! opens a connection holds a place in the listener's backlog until its
//! SYN-ACK retransmissions give up. The SYNs enter the bottleneck on the
//! client side, as though from beyond the clients' access links.

use crate::flows::splitmix;
use std::time::Duration;
use tinygram_proto::{Flags, SeqNumber, TcpRepr};

/// The most SYNs one flood may send (each is one event).
pub const MAX_FLOOD_SYNS: u32 = 10_000_000;
/// The first spoofed source's host number; the run's hosts are numbered from 0.
pub const SPOOFED_SOURCES: u32 = 1 << 31;

/// A flood against one listening port.
#[derive(Clone, Debug)]
pub struct SynFlood {
    /// The server host attacked (a `server_host` of the scenario) and its port.
    pub server_host: String,
    pub port: u16,
    /// When the first SYN reaches the bottleneck, and the gap between SYNs.
    pub start: Duration,
    pub interval: Duration,
    pub count: u32,
    /// Distinct spoofed source addresses, used in turn (each with ports of its own).
    pub sources: u32,
}

impl SynFlood {
    /// Why this flood cannot run, if it cannot (the host is checked by the run).
    pub fn check(&self) -> Result<(), String> {
        if self.count > MAX_FLOOD_SYNS {
            return Err(format!(
                "a flood of {} SYNs is more than the {MAX_FLOOD_SYNS} allowed",
                self.count
            ));
        }
        if self.sources == 0 || self.sources >= SPOOFED_SOURCES {
            return Err(format!(
                "a flood needs 1 to {} spoofed sources, not {}",
                SPOOFED_SOURCES - 1,
                self.sources
            ));
        }
        Ok(())
    }

    /// The `n`th SYN and its source host number: source `n mod sources`,
    /// a port of its own per round, an ISN from the run's `seed`, an MSS
    /// option and nothing else (what a flooding tool sends).
    pub(crate) fn syn(&self, n: u32, seed: u64) -> (u32, TcpRepr) {
        let mut state = seed ^ u64::from(n).wrapping_mul(0xd1b5_4a32_d192_ed03);
        let mut syn = TcpRepr {
            src_port: 1024 + ((n / self.sources) % 64_512) as u16,
            dst_port: self.port,
            seq: SeqNumber(splitmix(&mut state) as u32),
            flags: Flags::SYN,
            window: 65535,
            ..TcpRepr::default()
        };
        syn.options.mss = Some(1460);
        (SPOOFED_SOURCES + n % self.sources, syn)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flood(sources: u32) -> SynFlood {
        SynFlood {
            server_host: "server".to_string(),
            port: 7,
            start: Duration::ZERO,
            interval: Duration::from_millis(1),
            count: 10,
            sources,
        }
    }

    #[test]
    fn syns_come_from_spoofed_sources_in_turn_with_ports_per_round() {
        let f = flood(3);
        let (src0, s0) = f.syn(0, 1);
        let (src3, s3) = f.syn(3, 1);
        assert_eq!((src0, src3), (SPOOFED_SOURCES, SPOOFED_SOURCES));
        assert_ne!(s0.src_port, s3.src_port, "another round, another port");
        assert_eq!(f.syn(1, 1).0, SPOOFED_SOURCES + 1);
        assert!(s0.flags.syn() && !s0.flags.ack() && s0.dst_port == 7);
        assert_ne!(s0.seq, s3.seq);
        assert_eq!(f.syn(5, 9).1, f.syn(5, 9).1, "a function of the seed");
    }

    #[test]
    fn bad_floods_are_refused_with_a_reason() {
        assert!(flood(0).check().unwrap_err().contains("spoofed sources"));
        let mut f = flood(1);
        f.count = MAX_FLOOD_SYNS + 1;
        assert!(f.check().unwrap_err().contains("more than"));
        assert!(flood(1).check().is_ok());
    }
}
