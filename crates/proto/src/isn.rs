//! Initial sequence numbers (RFC 9293 3.4.1): the engine draws each one from a
//! generator its driver injects, so the engine itself has no clock and no
//! randomness, and a listener picks a fresh ISS for every SYN it answers.

use crate::seq::SeqNumber;
use crate::time::Instant;

/// Where a connection's initial send sequence numbers come from (RFC 9293 3.4.1).
///
/// Called once per connection attempt: by `connect`, and by a listener each
/// time a SYN arrives (so one that returns to LISTEN after a RST answers the
/// next SYN with a new ISS). Any `FnMut(Instant, u16, u16) -> SeqNumber` is one.
pub trait IsnGenerator: Send {
    /// The ISS for a connection from `local_port` to `remote_port`, chosen at `now`.
    fn next_isn(&mut self, now: Instant, local_port: u16, remote_port: u16) -> SeqNumber;
}

impl<F> IsnGenerator for F
where
    F: FnMut(Instant, u16, u16) -> SeqNumber + Send,
{
    fn next_isn(&mut self, now: Instant, local_port: u16, remote_port: u16) -> SeqNumber {
        self(now, local_port, remote_port)
    }
}

/// A deterministic generator for tests and scripts: `first`, then each ISN
/// `step` beyond the one before, like 4.4BSD's `tcp_iss` (advanced by
/// TCP_ISSINCR/2 = 64000 per connection). Predictable on purpose; RFC 6528
/// asks real stacks for unguessable ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IsnSeries {
    next: SeqNumber,
    step: u32,
}

impl IsnSeries {
    /// `first`, then `first + 64000`, `first + 128000`, ...
    pub fn new(first: SeqNumber) -> IsnSeries {
        IsnSeries::with_step(first, 64_000)
    }

    /// `first`, then `first + step`, `first + 2 step`, ... (modulo 2^32).
    pub fn with_step(first: SeqNumber, step: u32) -> IsnSeries {
        IsnSeries { next: first, step }
    }
}

impl IsnGenerator for IsnSeries {
    fn next_isn(&mut self, _now: Instant, _local: u16, _remote: u16) -> SeqNumber {
        let isn = self.next;
        self.next = SeqNumber(isn.0.wrapping_add(self.step));
        isn
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn series_steps_and_wraps() {
        let mut g = IsnSeries::new(SeqNumber(u32::MAX - 10));
        let t = Instant::ZERO;
        assert_eq!(g.next_isn(t, 1, 2), SeqNumber(u32::MAX - 10));
        assert_eq!(g.next_isn(t, 1, 2), SeqNumber(63_989));
        let mut n = 0u32;
        let mut f = move |_: Instant, _: u16, remote: u16| {
            n += 1;
            SeqNumber(n * 1000 + u32::from(remote))
        };
        assert_eq!(f.next_isn(t, 80, 7), SeqNumber(1007));
        assert_eq!(f.next_isn(t, 80, 7), SeqNumber(2007));
    }
}
