//! RFC 5681 slow start and congestion avoidance with RFC 6582 NewReno
//! recovery: the default controller.

use super::hystart::{self, SlowStartExit};
use super::recovery::{reno_recovery_hooks, RenoRecovery};
use super::{idle_restart, slow_start_exit, AckSample, CongestionControl, SlowStart};
use crate::time::Duration;

/// RFC 5681 slow start and congestion avoidance with RFC 6582 NewReno recovery.
#[derive(Debug, Clone)]
pub struct NewReno {
    cwnd: usize,
    ssthresh: usize,
    /// Bytes acknowledged toward the next congestion-avoidance increment (RFC 5681 3.1, byte counting).
    ca_acked: usize,
    /// Segments opened per ACK in slow start (RFC 1106 4.2: 2 for "double").
    ss_factor: usize,
    /// Slow start opens what each ACK acknowledges, uncapped (RFC 3465, as Linux).
    ss_abc: bool,
    /// Whether a loss repaired without a timeout shrinks the window (RFC 1106 4.2).
    reduce_on_repair: bool,
    /// Slow-start exit heuristic (HyStart, HyStart++) if one was asked for.
    ss_exit: SlowStartExit,
    /// The latest ACK sample, for the slow-start exit.
    last: Option<AckSample>,
}

impl NewReno {
    /// `initial_window` in bytes (RFC 6928).
    pub fn new(initial_window: usize, slow_start: SlowStart, reduce_on_repair: bool) -> Self {
        NewReno {
            cwnd: initial_window,
            ssthresh: usize::MAX,
            ca_acked: 0,
            ss_factor: match slow_start {
                SlowStart::Double => 2,
                _ => 1,
            },
            ss_abc: slow_start == SlowStart::Abc,
            reduce_on_repair,
            ss_exit: slow_start_exit(slow_start),
            last: None,
        }
    }
}

impl CongestionControl for NewReno {
    reno_recovery_hooks!();

    fn cwnd(&self) -> usize {
        self.cwnd
    }
    fn ssthresh(&self) -> usize {
        self.ssthresh
    }

    fn on_ack_sample(&mut self, s: &AckSample) {
        self.last = Some(*s);
    }

    fn on_ack(&mut self, acked: usize, mss: usize) {
        if self.cwnd < self.ssthresh {
            let divisor = match self.last {
                Some(s) => match self.ss_exit.on_ack(&s, self.cwnd / mss.max(1)) {
                    hystart::SsVerdict::Exit => {
                        self.ssthresh = self.cwnd;
                        return;
                    }
                    hystart::SsVerdict::Grow { divisor } => divisor.max(1),
                },
                None => 1,
            };
            // RFC 5681 3.1 eq. 2 (L = 1 SMSS per ACK); RFC 1106 4.2 "double"
            // opens two segments where the standard rule opens one.
            // RFC 3465 byte counting ("abc") opens all that was acknowledged.
            let opened = if self.ss_abc { acked } else { acked.min(mss) };
            self.cwnd += self.ss_factor * opened / divisor;
        } else {
            // RFC 5681 3.1 eq. 3 by byte counting: one SMSS per cwnd acknowledged.
            self.ca_acked += acked;
            if self.ca_acked >= self.cwnd {
                self.ca_acked -= self.cwnd;
                self.cwnd += mss;
            }
        }
    }

    fn on_ack_window_unused(&mut self, _acked: usize, mss: usize) {
        if self.cwnd < self.ssthresh {
            if let Some(s) = self.last {
                if self.ss_exit.on_ack(&s, self.cwnd / mss.max(1)) == hystart::SsVerdict::Exit {
                    self.ssthresh = self.cwnd;
                }
            }
        }
    }

    fn on_idle_restart(&mut self, restart: usize, idle: Duration, rto: Duration) {
        (self.cwnd, self.ssthresh) = idle_restart(self.cwnd, self.ssthresh, restart, idle, rto);
        self.ca_acked = 0;
    }

    fn on_recovery_exit(&mut self, flight: usize, mss: usize) {
        if self.reduce_on_repair {
            // RFC 6582 3.2 step 6, option 1.
            self.cwnd = self.ssthresh.min(flight.max(mss) + mss);
        } else {
            self.cwnd = self
                .cwnd
                .min(self.ssthresh.max(flight + mss))
                .max(flight + mss);
        }
        self.ca_acked = 0;
    }

    fn on_rto(&mut self, flight: usize, mss: usize) {
        // RFC 5681 3.1 eq. 4 and "LW = 1 SMSS".
        self.ssthresh = (flight / 2).max(2 * mss);
        self.cwnd = mss;
        self.ca_acked = 0;
        self.ss_exit.on_loss(true);
    }
}

impl RenoRecovery for NewReno {
    fn window(&self) -> usize {
        self.cwnd
    }
    fn set_window(&mut self, w: usize) {
        self.cwnd = w;
    }
    fn threshold(&self) -> usize {
        self.ssthresh
    }
    fn reduces_on_repair(&self) -> bool {
        self.reduce_on_repair
    }
    /// RFC 5681 3.2 step 2, eq. 4: ssthresh = max(FlightSize / 2, 2 SMSS).
    fn decrease(&mut self, flight: usize, mss: usize) {
        self.ss_exit.on_loss(false);
        self.ssthresh = (flight / 2).max(2 * mss);
    }
    fn note_noise_loss(&mut self) {
        self.ss_exit.on_loss(false);
    }
    fn restart_growth(&mut self) {
        self.ca_acked = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slow_start_then_avoidance() {
        let mut c = NewReno::new(10 * 1000, SlowStart::Standard, true);
        c.on_ack(1000, 1000);
        assert_eq!(c.cwnd(), 11_000);
        c.on_rto(20_000, 1000);
        assert_eq!((c.cwnd(), c.ssthresh()), (1000, 10_000));
        for _ in 0..9 {
            c.on_ack(1000, 1000);
        }
        assert_eq!(c.cwnd(), 10_000);
        // In avoidance: one MSS per cwnd of ACKed bytes.
        for _ in 0..10 {
            c.on_ack(1000, 1000);
        }
        assert_eq!(c.cwnd(), 11_000);
    }

    #[test]
    fn loss_repair_halves_only_for_congestion() {
        let mut c = NewReno::new(20_000, SlowStart::Standard, true);
        c.on_loss_repair(20_000, 1000);
        assert_eq!((c.ssthresh(), c.cwnd()), (10_000, 10_000));
        let mut n = NewReno::new(20_000, SlowStart::Standard, false);
        n.on_loss_repair(20_000, 1000);
        assert_eq!(n.cwnd(), 20_000);
    }

    #[test]
    fn double_slow_start_opens_two_segments_per_ack() {
        let mut c = NewReno::new(1000, SlowStart::Double, true);
        c.on_ack(1000, 1000);
        assert_eq!(c.cwnd(), 3000);
        // A delayed ACK covering two segments: twice the standard one-SMSS step.
        c.on_ack(2000, 1000);
        assert_eq!(c.cwnd(), 5000);
        // A partial segment acked opens twice the bytes acked, never more.
        c.on_ack(300, 1000);
        assert_eq!(c.cwnd(), 5600);
        let mut s = NewReno::new(1000, SlowStart::Standard, true);
        s.on_ack(1000, 1000);
        assert_eq!(s.cwnd(), 2000);
    }

    #[test]
    fn fast_recovery_newreno() {
        let mut c = NewReno::new(20_000, SlowStart::Standard, true);
        c.on_fast_retransmit(20_000, 1000, 3);
        assert_eq!((c.ssthresh(), c.cwnd()), (10_000, 13_000));
        c.on_recovery_dupack(1000);
        assert_eq!(c.cwnd(), 14_000);
        c.on_partial_ack(3000, 1000);
        assert_eq!(c.cwnd(), 12_000);
        c.on_recovery_exit(5000, 1000);
        assert_eq!(c.cwnd(), 6000);
    }
}
