//! CUBIC congestion control (RFC 9438), with a choice of slow-start exit.

use super::hystart::{SlowStartExit, SsVerdict};
use super::recovery::{reno_recovery_hooks, RenoRecovery};
use super::{AckSample, CongestionControl};
use crate::time::{Duration, Instant};

/// RFC 9438 4.1 C: 0.4 segments / s^3.
pub const CUBIC_C: f64 = 0.4;
/// RFC 9438 4.6 beta_cubic: 0.7.
pub const CUBIC_BETA: f64 = 0.7;

/// RFC 9438 4.1 eq. 1: W_cubic(t) = C (t - K)^3 + W_max, in segments.
pub fn w_cubic(t: f64, k: f64, w_max: f64) -> f64 {
    CUBIC_C * (t - k).powi(3) + w_max
}

/// RFC 9438 4.1 eq. 2: K = cbrt((W_max - cwnd_epoch) / C), in seconds.
pub fn cubic_k(w_max: f64, cwnd_epoch: f64) -> f64 {
    ((w_max - cwnd_epoch).max(0.0) / CUBIC_C).cbrt()
}

/// RFC 9438 4.3 alpha_cubic = 3 (1 - beta) / (1 + beta).
pub fn alpha_cubic() -> f64 {
    3.0 * (1.0 - CUBIC_BETA) / (1.0 + CUBIC_BETA)
}

/// CUBIC (RFC 9438): cubic window growth from the last reduction, with a
/// Reno-friendly floor, beta 0.7 and fast convergence; NewReno-style inflation
/// in fast recovery (RFC 6582 3.2), which PRR replaces when selected.
#[derive(Clone, Debug)]
pub struct Cubic {
    cwnd: usize,
    ssthresh: usize,
    /// W_max in segments (RFC 9438 4.7), 0 before the first reduction.
    w_max: f64,
    /// Start of the current congestion-avoidance epoch (RFC 9438 4.2).
    epoch_start: Option<Instant>,
    /// K of this epoch, seconds.
    k: f64,
    /// cwnd at the epoch's start, segments.
    cwnd_epoch: f64,
    /// W_est of the Reno-friendly region, segments (RFC 9438 4.3).
    w_est: f64,
    /// Fractional segments of growth not yet applied to cwnd.
    ca_carry: f64,
    /// Latest ACK's time and smoothed RTT (from `on_ack_sample`).
    now: Instant,
    srtt: Option<Duration>,
    last: Option<AckSample>,
    /// Slow-start exit (Linux HyStart, HyStart++ or none).
    pub ss_exit: SlowStartExit,
    reduce_on_loss: bool,
}

impl Cubic {
    /// `initial_window` in bytes (RFC 6928); `reduce_on_loss` false for RFC 1106 4.2 "noise".
    pub fn new(initial_window: usize, ss_exit: SlowStartExit, reduce_on_loss: bool) -> Self {
        Cubic {
            cwnd: initial_window,
            ssthresh: usize::MAX,
            w_max: 0.0,
            epoch_start: None,
            k: 0.0,
            cwnd_epoch: 0.0,
            w_est: 0.0,
            ca_carry: 0.0,
            now: Instant::ZERO,
            srtt: None,
            last: None,
            ss_exit,
            reduce_on_loss,
        }
    }

    /// W_max in segments (RFC 9438 4.7).
    pub fn w_max(&self) -> f64 {
        self.w_max
    }

    /// K of the current epoch in seconds (RFC 9438 eq. 2).
    pub fn k(&self) -> f64 {
        self.k
    }

    /// RFC 9438 4.6-4.7: multiplicative decrease with fast convergence.
    fn reduce(&mut self, mss: usize) {
        let cwnd_segs = self.cwnd as f64 / mss as f64;
        // RFC 9438 4.7 fast convergence: a W_max lower than the last one releases bandwidth.
        self.w_max = if cwnd_segs < self.w_max {
            cwnd_segs * (1.0 + CUBIC_BETA) / 2.0
        } else {
            cwnd_segs
        };
        // RFC 9438 4.6: ssthresh = cwnd x beta_cubic (as tcp_cubic.c
        // bictcp_recalc_ssthresh), at least 2 segments.
        self.ssthresh = ((self.cwnd as f64 * CUBIC_BETA) as usize).max(2 * mss);
        self.epoch_start = None;
        self.ca_carry = 0.0;
        self.ss_exit.on_loss(false);
    }

    /// RFC 9438 4.2-4.5: growth in congestion avoidance for `acked` bytes.
    fn avoid(&mut self, acked: usize, mss: usize) {
        let mssf = mss as f64;
        let cwnd_segs = self.cwnd as f64 / mssf;
        let now = self.now;
        let start = match self.epoch_start {
            Some(s) => s,
            None => {
                // A new epoch: K from W_max, or at once on the plateau when
                // cwnd is already above it (RFC 9438 4.2, after slow start).
                self.epoch_start = Some(now);
                self.cwnd_epoch = cwnd_segs;
                if self.w_max < cwnd_segs {
                    self.w_max = cwnd_segs;
                }
                self.k = cubic_k(self.w_max, cwnd_segs);
                self.w_est = cwnd_segs;
                now
            }
        };
        let t = now.saturating_duration_since(start).as_secs_f64();
        let rtt = self.srtt.map_or(0.1, |d| d.as_secs_f64());
        // RFC 9438 4.2: target = W_cubic(t + RTT) clamped to [cwnd, 1.5 cwnd].
        let target = w_cubic(t + rtt, self.k, self.w_max).clamp(cwnd_segs, 1.5 * cwnd_segs);
        let segs_acked = acked as f64 / mssf;
        // RFC 9438 4.3: W_est grows by alpha per cwnd acked (alpha = 1 past W_max).
        let alpha = if self.w_est >= self.w_max {
            1.0
        } else {
            alpha_cubic()
        };
        self.w_est += alpha * segs_acked / cwnd_segs;
        let growth = if w_cubic(t, self.k, self.w_max) < self.w_est {
            // Reno-friendly region: cwnd follows W_est.
            (self.w_est - cwnd_segs).max(0.0)
        } else {
            // RFC 9438 4.4-4.5: (target - cwnd) / cwnd per segment acked.
            (target - cwnd_segs) / cwnd_segs * segs_acked
        };
        self.ca_carry += growth * mssf;
        let whole = self.ca_carry.floor();
        if whole >= 1.0 {
            self.cwnd += whole as usize;
            self.ca_carry -= whole;
        }
    }
}

impl CongestionControl for Cubic {
    reno_recovery_hooks!();

    fn cwnd(&self) -> usize {
        self.cwnd
    }
    fn ssthresh(&self) -> usize {
        self.ssthresh
    }

    fn on_ack_sample(&mut self, s: &AckSample) {
        self.now = s.now;
        if s.srtt.is_some() {
            self.srtt = s.srtt;
        }
        self.last = Some(*s);
    }

    fn on_ack(&mut self, acked: usize, mss: usize) {
        if self.cwnd < self.ssthresh {
            let verdict = match &self.last {
                Some(s) => {
                    let s = *s;
                    self.ss_exit.on_ack(&s, self.cwnd / mss.max(1))
                }
                None => SsVerdict::Grow { divisor: 1 },
            };
            match verdict {
                SsVerdict::Exit => {
                    // tcp_cubic.c hystart_update / RFC 9406: ssthresh = cwnd.
                    self.ssthresh = self.cwnd;
                }
                SsVerdict::Grow { divisor } => {
                    // RFC 5681 3.1 with RFC 3465 byte counting, capped at ssthresh.
                    let add = self.ss_exit.growth_cap(acked, mss) / divisor.max(1);
                    self.cwnd = (self.cwnd + add).min(self.ssthresh.max(self.cwnd));
                }
            }
            return;
        }
        self.avoid(acked, mss);
    }

    fn on_ack_window_unused(&mut self, _acked: usize, mss: usize) {
        if self.cwnd < self.ssthresh {
            if let Some(s) = self.last {
                if self.ss_exit.on_ack(&s, self.cwnd / mss.max(1)) == SsVerdict::Exit {
                    // tcp_cubic.c hystart_update: ssthresh = cwnd.
                    self.ssthresh = self.cwnd;
                }
            }
        }
    }

    fn on_idle_restart(&mut self, restart: usize, idle: Duration, rto: Duration) {
        (self.cwnd, self.ssthresh) =
            super::idle_restart(self.cwnd, self.ssthresh, restart, idle, rto);
        self.ca_carry = 0.0;
    }

    fn on_recovery_exit(&mut self, flight: usize, mss: usize) {
        if self.reduce_on_loss {
            // RFC 6582 3.2 step 6, option 1.
            self.cwnd = self.ssthresh.min(flight.max(mss) + mss);
        } else {
            self.cwnd = self.cwnd.max(flight + mss);
        }
    }

    fn on_rto(&mut self, _flight: usize, mss: usize) {
        // RFC 9438 4.8: ssthresh by beta_cubic, cwnd to the loss window.
        self.reduce(mss);
        self.cwnd = mss;
        self.ss_exit.on_loss(true);
    }
}

impl RenoRecovery for Cubic {
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
        self.reduce_on_loss
    }
    fn decrease(&mut self, _flight: usize, mss: usize) {
        self.reduce(mss);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seq::SeqNumber;

    const MSS: usize = 1000;

    fn ack_at(c: &mut Cubic, now: Instant, srtt_ms: u64) {
        c.on_ack_sample(&AckSample {
            now,
            rtt: Some(Duration::from_millis(srtt_ms)),
            srtt: Some(Duration::from_millis(srtt_ms)),
            snd_una: SeqNumber(0),
            snd_nxt: SeqNumber(0),
        });
        c.on_ack(MSS, MSS);
    }

    #[test]
    fn k_and_w_cubic_follow_the_rfc_formulas() {
        // W_max 100, cwnd_epoch 70: K = cbrt(30 / 0.4) = cbrt(75).
        let k = cubic_k(100.0, 70.0);
        assert!((k - 75f64.cbrt()).abs() < 1e-12);
        assert!((w_cubic(0.0, k, 100.0) - 70.0).abs() < 1e-9);
        assert!((w_cubic(k, k, 100.0) - 100.0).abs() < 1e-12);
        assert!((w_cubic(k + 2.0, k, 100.0) - 103.2).abs() < 1e-9);
        assert!((alpha_cubic() - 0.9 / 1.7).abs() < 1e-12);
    }

    #[test]
    fn loss_reduces_by_beta_and_growth_tracks_w_cubic() {
        let mut c = Cubic::new(100 * MSS, SlowStartExit::Standard, true);
        c.ssthresh = 100 * MSS; // already in congestion avoidance at W = 100
        c.on_loss_repair(100 * MSS, MSS);
        assert_eq!((c.cwnd(), c.ssthresh()), (70 * MSS, 70 * MSS));
        assert_eq!(c.w_max(), 100.0);
        // Feed one ACK per segment, cwnd ACKs per RTT of 100 ms, for 8 s.
        let rtt = 100u64;
        let mut now_ms = 0u64;
        let mut at_k = None;
        while now_ms < 8_000 {
            let per_rtt = c.cwnd() / MSS;
            for i in 0..per_rtt {
                let t =
                    Instant::from_micros(now_ms * 1000 + i as u64 * rtt * 1000 / per_rtt as u64);
                ack_at(&mut c, t, rtt);
            }
            now_ms += rtt;
            let t = now_ms as f64 / 1000.0;
            let w = c.cwnd() as f64 / MSS as f64;
            // cwnd aims at W_cubic(t + RTT): it stays within a few segments of it,
            // never below the Reno-friendly estimate's region by much.
            let expect = w_cubic(t + 0.1, c.k(), 100.0);
            assert!(
                (w - expect).abs() < 4.0 || w > expect,
                "t={t} cwnd={w} W_cubic={expect}"
            );
            if at_k.is_none() && t >= c.k() {
                at_k = Some(w);
            }
        }
        // On the plateau near K, cwnd is close to W_max.
        let w = at_k.unwrap();
        assert!((99.0..=104.0).contains(&w), "cwnd at K = {w}");
        // Beyond K: convex growth above W_max.
        assert!(c.cwnd() > 110 * MSS, "cwnd = {}", c.cwnd());
    }

    #[test]
    fn fast_convergence_lowers_w_max() {
        let mut c = Cubic::new(100 * MSS, SlowStartExit::Standard, true);
        c.ssthresh = 100 * MSS;
        c.on_loss_repair(100 * MSS, MSS);
        assert_eq!(c.w_max(), 100.0);
        // A second loss before reaching W_max: W_max = cwnd (1 + beta) / 2.
        c.on_loss_repair(70 * MSS, MSS);
        assert!((c.w_max() - 70.0 * 1.7 / 2.0).abs() < 1e-9);
        assert_eq!(c.cwnd(), 49 * MSS);
    }

    #[test]
    fn rto_sets_loss_window_and_noise_keeps_window() {
        let mut c = Cubic::new(40 * MSS, SlowStartExit::Standard, true);
        c.on_rto(40 * MSS, MSS);
        assert_eq!((c.cwnd(), c.ssthresh()), (MSS, 28 * MSS));
        let mut n = Cubic::new(40 * MSS, SlowStartExit::Standard, false);
        n.on_loss_repair(40 * MSS, MSS);
        assert_eq!(n.cwnd(), 40 * MSS);
        // A CE mark reduces even when losses are noise.
        n.on_congestion_signal(40 * MSS, MSS);
        assert_eq!(n.cwnd(), 28 * MSS);
    }

    #[test]
    fn reno_friendly_region_on_short_rtt() {
        // Short RTT, small W_max: Reno's estimate beats the cubic curve early on.
        let mut c = Cubic::new(20 * MSS, SlowStartExit::Standard, true);
        c.ssthresh = 20 * MSS;
        c.on_loss_repair(20 * MSS, MSS);
        let start = c.cwnd();
        let mut now_us = 0;
        for _ in 0..14 * 5 {
            now_us += 200; // 1 ms RTT, 14 ACKs per RTT
            ack_at(&mut c, Instant::from_micros(now_us), 1);
        }
        // 5 RTTs of Reno-friendly growth: about alpha per RTT, where W_cubic barely moves.
        let grown = (c.cwnd() - start) as f64 / MSS as f64;
        assert!(grown >= 2.0, "grew {grown} segments");
    }
}
