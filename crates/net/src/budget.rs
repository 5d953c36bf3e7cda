//! The TUN host's memory budget: one cap on the buffer memory (send and
//! receive) of all its connections, the scenario's host `memory` key.
//!
//! Linux caps TCP memory host-wide (net.ipv4.tcp_mem: min, pressure, max);
//! tinygram's own policy when the budget is reached, in this order:
//! 1. past two thirds of the budget (Linux's tcp_init_mem puts the pressure
//!    threshold, tcp_mem[1], at two thirds of the hard limit, tcp_mem[2]),
//!    new connections are not accepted: SYNs and cookie ACKs are dropped
//!    unanswered, so the peer retries later;
//! 2. a new connection's receive buffer is granted within what the budget
//!    has left (RFC 1106 5, as the simulator's `memory` does);
//! 3. past the budget, connections are aborted with a RST, the one longest
//!    without progress (no data in, none of ours acknowledged) first, until
//!    the buffers fit. A peer that answers every zero-window probe with a
//!    zero window is kept by the probe rules (RFC 1122 4.2.2.17); only this
//!    bounds what it pins.

use crate::host::FourTuple;
use tinygram_proto::Instant;

/// Whether a new connection may be accepted with `used` of `budget` bytes
/// in use (below Linux's tcp_mem pressure threshold, two thirds).
pub fn accepts(budget: usize, used: usize) -> bool {
    used < budget / 3 * 2
}

/// What a new connection may still take for its receive buffer.
pub fn left(budget: usize, used: usize) -> usize {
    budget.saturating_sub(used)
}

/// The connection to abort first: the one holding buffers that has gone
/// longest without progress (ties: the lowest 4-tuple, so runs repeat).
pub fn oldest_idle(conns: impl Iterator<Item = (FourTuple, Instant, usize)>) -> Option<FourTuple> {
    conns
        .filter(|&(_, _, memory)| memory > 0)
        .min_by_key(|&(key, since, _)| (since, key))
        .map(|(key, _, _)| key)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    const A: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);

    #[test]
    fn accepts_below_two_thirds_only() {
        assert!(accepts(3000, 1999));
        assert!(!accepts(3000, 2000));
        assert_eq!((left(3000, 1000), left(3000, 4000)), (2000, 0));
    }

    #[test]
    fn the_oldest_idle_connection_holding_memory_goes_first() {
        let t = Instant::from_millis;
        let conns = [
            ((A, 1, 80), t(5), 100),
            ((A, 2, 80), t(1), 0), // idle longest, but holds nothing
            ((A, 3, 80), t(2), 100),
            ((A, 4, 80), t(2), 100),
        ];
        assert_eq!(oldest_idle(conns.into_iter()), Some((A, 3, 80)));
        assert_eq!(oldest_idle(conns[1..2].iter().copied()), None);
    }
}
