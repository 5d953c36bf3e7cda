//! 4.3BSD-Tahoe's congestion response (Jacobson, "Congestion Avoidance and
//! Control", 1988): slow start and congestion avoidance, and any loss, found
//! by a timeout or by duplicate ACKs, takes the window to one segment. No fast
//! recovery: duplicate ACKs do not inflate the window. The era of RFC 1106.
//! With `loss_is = "noise"` (RFC 1106 4.2) a repaired loss leaves the window
//! alone, as in the other modules; a timeout still collapses it.

use super::{CcFactory, CcInit, CongestionControl, LossIs, SlowStart};

/// Tahoe: NewReno's growth, one segment after every loss.
#[derive(Debug, Clone)]
pub struct Tahoe {
    cwnd: usize,
    ssthresh: usize,
    ca_acked: usize,
    ss_factor: usize,
    /// False when losses count as noise (RFC 1106 4.2): only a timeout collapses.
    reduce_on_repair: bool,
}

impl Tahoe {
    /// `initial_window` in bytes; losses taken as congestion.
    pub fn new(initial_window: usize, slow_start: SlowStart) -> Self {
        Tahoe::with_loss(initial_window, slow_start, LossIs::Congestion)
    }

    /// As [`Tahoe::new`], with `loss_is` deciding whether a repaired loss
    /// (fast retransmit, NAK) collapses the window (RFC 1106 4.2).
    pub fn with_loss(initial_window: usize, slow_start: SlowStart, loss_is: LossIs) -> Self {
        Tahoe {
            cwnd: initial_window,
            ssthresh: usize::MAX,
            ca_acked: 0,
            reduce_on_repair: loss_is == LossIs::Congestion,
            ss_factor: match slow_start {
                SlowStart::Double => 2,
                // HyStart's exits came twenty years later: Tahoe slow-starts plainly.
                SlowStart::Standard
                | SlowStart::Abc
                | SlowStart::Hystart
                | SlowStart::HystartPlusPlus => 1,
            },
        }
    }

    /// The factory `Config::congestion` takes (`congestion = "tahoe"` in a profile).
    pub fn factory() -> CcFactory {
        CcFactory::new("tahoe", |i: &CcInit| {
            Box::new(Tahoe::with_loss(i.initial_window, i.slow_start, i.loss_is))
        })
    }

    /// Any loss: ssthresh to half the flight, the window to one segment.
    fn collapse(&mut self, flight: usize, mss: usize) {
        self.ssthresh = (flight / 2).max(2 * mss);
        self.cwnd = mss;
        self.ca_acked = 0;
    }
}

impl CongestionControl for Tahoe {
    fn cwnd(&self) -> usize {
        self.cwnd
    }
    fn ssthresh(&self) -> usize {
        self.ssthresh
    }
    fn on_ack(&mut self, acked: usize, mss: usize) {
        if self.cwnd < self.ssthresh {
            self.cwnd += self.ss_factor * acked.min(mss);
        } else {
            self.ca_acked += acked;
            if self.ca_acked >= self.cwnd {
                self.ca_acked -= self.cwnd;
                self.cwnd += mss;
            }
        }
    }
    fn on_fast_retransmit(&mut self, flight: usize, mss: usize, _dupacks: u32) {
        if self.reduce_on_repair {
            self.collapse(flight, mss);
        }
    }
    fn on_recovery_dupack(&mut self, _mss: usize) {
        // No fast recovery: duplicate ACKs send nothing new.
    }
    fn on_partial_ack(&mut self, acked: usize, mss: usize) {
        // Slow start again from one segment.
        self.on_ack(acked, mss);
    }
    fn on_recovery_exit(&mut self, _flight: usize, _mss: usize) {}
    fn on_rto(&mut self, flight: usize, mss: usize) {
        self.collapse(flight, mss);
    }
    fn on_loss_repair(&mut self, flight: usize, mss: usize) {
        // RFC 1106 4.2 "noise": the window stays open.
        if self.reduce_on_repair {
            self.collapse(flight, mss);
        }
    }
    fn on_congestion_signal(&mut self, flight: usize, mss: usize) {
        // RFC 3168 6.1.2: reduce as for a loss even when losses are noise.
        self.collapse(flight, mss);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_loss_takes_the_window_to_one_segment() {
        let mut t = Tahoe::new(1000, SlowStart::Standard);
        for _ in 0..15 {
            t.on_ack(1000, 1000);
        }
        assert_eq!(t.cwnd(), 16_000);
        t.on_fast_retransmit(16_000, 1000, 3);
        assert_eq!((t.cwnd(), t.ssthresh()), (1000, 8000));
        // No inflation on further duplicate ACKs, unlike NewReno's 3 + n segments.
        t.on_recovery_dupack(1000);
        assert_eq!(t.cwnd(), 1000);
        t.on_partial_ack(1000, 1000);
        assert_eq!(t.cwnd(), 2000);
        let mut n = crate::cc::NewReno::new(16_000, SlowStart::Standard, true);
        n.on_fast_retransmit(16_000, 1000, 3);
        assert!(n.cwnd() > 8000);
    }

    /// RFC 1106 4.2: built from a config with `loss_is = "noise"`, a NAK or
    /// fast-retransmit repair keeps the window; a timeout still collapses it.
    #[test]
    fn noise_keeps_the_window_on_repair_but_not_on_timeout() {
        let init = |loss_is| CcInit {
            mss: 1000,
            initial_window: 16_000,
            slow_start: SlowStart::Standard,
            loss_is,
            cubic: crate::cc::CubicVariant::Rfc9438,
        };
        let mut t = Tahoe::factory().build(&init(LossIs::Noise));
        t.on_loss_repair(16_000, 1000);
        assert_eq!(t.cwnd(), 16_000);
        t.on_fast_retransmit(16_000, 1000, 3);
        assert_eq!(t.cwnd(), 16_000);
        t.on_rto(16_000, 1000);
        assert_eq!((t.cwnd(), t.ssthresh()), (1000, 8000));
        let mut c = Tahoe::factory().build(&init(LossIs::Congestion));
        c.on_loss_repair(16_000, 1000);
        assert_eq!((c.cwnd(), c.ssthresh()), (1000, 8000));
        // An ECN-Echo is congestion whatever losses count as.
        let mut e = Tahoe::factory().build(&init(LossIs::Noise));
        e.on_congestion_signal(16_000, 1000);
        assert_eq!(e.cwnd(), 1000);
    }
}
