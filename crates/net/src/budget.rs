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
//!    without progress (no data in, none of ours acknowledged) first among
//!    those holding at least the mean buffer memory per connection (so a
//!    client that is idle between small requests, holding little, is not
//!    taken for the peers pinning the budget), until the buffers fit. A
//!    peer that answers every zero-window probe with a zero window is kept
//!    by the probe rules (RFC 1122 4.2.2.17); only this bounds what it pins;
//! 4. past the accept threshold, a new connection asking in (a SYN, a cookie
//!    ACK) first reclaims: connections without progress for longer than
//!    twice `rto_max` are aborted, longest idle first among those holding
//!    at least the mean, until the buffers are
//!    below the threshold again, so peers that pin the budget and stall do
//!    not lock new clients out for good (Linux's tcp_out_of_resources
//!    penalizes first a peer that has not opened its window for
//!    2 * TCP_RTO_MAX).

use crate::host::FourTuple;
use tinygram_proto::{Duration, Instant};

/// Whether a new connection may be accepted with `used` of `budget` bytes
/// in use (below Linux's tcp_mem pressure threshold, two thirds).
pub fn accepts(budget: usize, used: usize) -> bool {
    used < budget / 3 * 2
}

/// What a new connection may still take for its receive buffer.
pub fn left(budget: usize, used: usize) -> usize {
    budget.saturating_sub(used)
}

/// Whether a connection idle (without progress) for `idle` may be aborted
/// to let a new one in: longer than twice `rto_max` (Linux's
/// tcp_out_of_resources, 2 * TCP_RTO_MAX since the peer last opened its
/// window or took data).
pub fn stale(idle: Duration, rto_max: Duration) -> bool {
    idle > rto_max.saturating_mul(2)
}

/// The connection to abort first: of those holding at least `fair` bytes
/// of buffers (and some), the one that has gone longest without progress
/// (ties: the lowest 4-tuple, so runs repeat).
pub fn oldest_idle(
    conns: impl Iterator<Item = (FourTuple, Instant, usize)>,
    fair: usize,
) -> Option<FourTuple> {
    conns
        .filter(|&(_, _, memory)| memory > 0 && memory >= fair)
        .min_by_key(|&(key, since, _)| (since, key))
        .map(|(key, _, _)| key)
}

/// The mean buffer memory per live connection: [`oldest_idle`]'s `fair`.
pub fn fair_share(used: usize, conns: usize) -> usize {
    used / conns.max(1)
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
        assert_eq!(oldest_idle(conns.into_iter(), 0), Some((A, 3, 80)));
        assert_eq!(oldest_idle(conns[1..2].iter().copied(), 0), None);
    }

    #[test]
    fn connections_holding_less_than_their_share_are_passed_over() {
        let t = Instant::from_millis;
        let conns = [
            ((A, 1, 80), t(1), 500), // an idle client between small requests
            ((A, 2, 80), t(5), 300_000),
            ((A, 3, 80), t(9), 300_000),
        ];
        let fair = fair_share(600_500, 3);
        assert_eq!(oldest_idle(conns.into_iter(), fair), Some((A, 2, 80)));
    }

    #[test]
    fn stale_past_twice_rto_max() {
        let (s, rto_max) = (Duration::from_secs, Duration::from_secs(60));
        assert!(!stale(s(120), rto_max));
        assert!(stale(s(121), rto_max));
    }
}
