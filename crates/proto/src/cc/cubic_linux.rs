//! CUBIC as Linux computes it (net/ipv4/tcp_cubic.c), for `--stack linux`:
//! whole segments and jiffies, the cubic curve timed from the epoch plus
//! delay_min, an increment of one segment per `cnt` acked, growth of at most
//! 5 % per RTT before the first loss, and the epoch moved on by idle time.
//! RFC 9438 describes the same curve; these are the ways Linux's arithmetic
//! differs from [`super::Cubic`]'s.

use super::hystart::{SlowStartExit, SsVerdict};
use super::recovery::{reno_recovery_hooks, RenoRecovery};
use super::{AckSample, CongestionControl};
use crate::time::{Duration, Instant};

/// tcp_cubic.c BICTCP_BETA_SCALE.
const BETA_SCALE: u64 = 1024;
/// tcp_cubic.c beta: 717 / 1024, about 0.7.
const BETA: u64 = 717;
/// tcp_cubic.c BICTCP_HZ: the curve's time unit is 1/1024 s.
const BICTCP_HZ: u32 = 10;
/// tcp_cubic.c bic_scale (41) x 10: C = 0.4 in the curve's units.
const CUBE_RTT_SCALE: u64 = 410;
/// tcp_cubic.c beta_scale: 8 (1024 + 717) / 3 / (1024 - 717), the Reno-friendly step.
const TCP_FRIENDLY_SCALE: u64 = 8 * (BETA_SCALE + BETA) / 3 / (BETA_SCALE - BETA);
/// The kernel clock: HZ = 1000, one jiffy per millisecond (CONFIG_HZ_1000).
const JIFFY_US: u64 = 1000;

/// Instant to jiffies (tcp_jiffies32).
fn jiffies(t: Instant) -> u64 {
    t.as_micros() / JIFFY_US
}

/// tcp_cubic.c cubic_root: the cube root rounded down (the kernel's table
/// and Newton step land within a unit of it).
fn cubic_root(a: u64) -> u64 {
    let mut x = (a as f64).cbrt() as u64;
    while (x + 1).pow(3) <= a {
        x += 1;
    }
    while x > 0 && x.pow(3) > a {
        x -= 1;
    }
    x
}

/// CUBIC with tcp_cubic.c's state (struct bictcp) and Linux's HyStart.
#[derive(Clone, Debug)]
pub struct LinuxCubic {
    /// snd_cwnd and snd_ssthresh in segments.
    cwnd: u64,
    ssthresh: u64,
    /// snd_cwnd_cnt: segments acked toward the next increment (tcp_cong_avoid_ai).
    cwnd_cnt: u64,
    /// Segment size the windows are counted in.
    mss: usize,
    /// cnt: segments to ack per one-segment increase.
    cnt: u64,
    last_max_cwnd: u64,
    last_cwnd: u64,
    last_time: u64,
    origin_point: u64,
    /// K in 1/1024 s.
    bic_k: u64,
    /// delay_min in microseconds, 0 when unknown.
    delay_min_us: u64,
    /// epoch_start in jiffies (None: no epoch).
    epoch_start: Option<u64>,
    ack_cnt: u64,
    tcp_cwnd: u64,
    now: Instant,
    last: Option<AckSample>,
    /// Linux's HyStart (or none).
    pub ss_exit: SlowStartExit,
    reduce_on_loss: bool,
}

impl LinuxCubic {
    /// `initial_window` in bytes; windows are kept in segments of `mss` (fixed
    /// from the first ACK's MSS if it differs).
    pub fn new(
        initial_window: usize,
        mss: usize,
        ss_exit: SlowStartExit,
        reduce_on_loss: bool,
    ) -> Self {
        let mss = mss.max(1);
        LinuxCubic {
            cwnd: (initial_window / mss).max(1) as u64,
            ssthresh: u64::from(u32::MAX >> 1),
            cwnd_cnt: 0,
            mss,
            cnt: 0,
            last_max_cwnd: 0,
            last_cwnd: 0,
            last_time: 0,
            origin_point: 0,
            bic_k: 0,
            delay_min_us: 0,
            epoch_start: None,
            ack_cnt: 0,
            tcp_cwnd: 0,
            now: Instant::ZERO,
            last: None,
            ss_exit,
            reduce_on_loss,
        }
    }

    /// bictcp_reset: a timeout forgets the curve, W_max and delay_min.
    fn reset(&mut self) {
        self.cnt = 0;
        self.last_max_cwnd = 0;
        self.last_cwnd = 0;
        self.last_time = 0;
        self.origin_point = 0;
        self.bic_k = 0;
        self.delay_min_us = 0;
        self.epoch_start = None;
        self.ack_cnt = 0;
        self.tcp_cwnd = 0;
    }

    /// bictcp_update: `cnt` for the current cwnd at this time.
    fn update(&mut self, acked: u64) {
        let cwnd = self.cwnd;
        let now = jiffies(self.now);
        self.ack_cnt += acked;
        let mut skip_curve = false;
        if self.last_cwnd == cwnd && now.saturating_sub(self.last_time) <= 1000 / 32 {
            return;
        }
        // The curve is recomputed at most once per jiffy.
        if self.epoch_start.is_some() && now == self.last_time {
            skip_curve = true;
        }
        if !skip_curve {
            self.last_cwnd = cwnd;
            self.last_time = now;
            let epoch = match self.epoch_start {
                Some(e) => e,
                None => {
                    self.epoch_start = Some(now);
                    self.ack_cnt = acked;
                    self.tcp_cwnd = cwnd;
                    if self.last_max_cwnd <= cwnd {
                        self.bic_k = 0;
                        self.origin_point = cwnd;
                    } else {
                        // cube_factor = 2^40 / 410: K = cbrt((W_max - cwnd) / C) in 1/1024 s.
                        let cube_factor = (1u64 << (10 + 3 * BICTCP_HZ)) / CUBE_RTT_SCALE;
                        self.bic_k = cubic_root(cube_factor * (self.last_max_cwnd - cwnd));
                        self.origin_point = self.last_max_cwnd;
                    }
                    now
                }
            };
            // t = elapsed + delay_min, in 1/1024 s (usecs_to_jiffies rounds up).
            let mut t = now.saturating_sub(epoch) + self.delay_min_us.div_ceil(JIFFY_US);
            t = (t << BICTCP_HZ) / (1_000_000 / JIFFY_US);
            let offs = t.abs_diff(self.bic_k);
            let delta =
                ((CUBE_RTT_SCALE as u128 * (offs as u128).pow(3)) >> (10 + 3 * BICTCP_HZ)) as u64;
            let target = if t < self.bic_k {
                self.origin_point.saturating_sub(delta)
            } else {
                self.origin_point + delta
            };
            self.cnt = if target > cwnd {
                cwnd / (target - cwnd)
            } else {
                100 * cwnd
            };
            // Before any loss the curve knows no bandwidth: at most 5 % per RTT.
            if self.last_max_cwnd == 0 && self.cnt > 20 {
                self.cnt = 20;
            }
        }
        // tcp_friendliness: Reno's estimate, one segment per beta_scale/8 cwnd acked.
        let delta = (cwnd * TCP_FRIENDLY_SCALE) >> 3;
        while delta > 0 && self.ack_cnt > delta {
            self.ack_cnt -= delta;
            self.tcp_cwnd += 1;
        }
        if self.tcp_cwnd > cwnd {
            let max_cnt = cwnd / (self.tcp_cwnd - cwnd);
            self.cnt = self.cnt.min(max_cnt);
        }
        // At most one segment per two acked: 1.5 x per RTT.
        self.cnt = self.cnt.max(2);
    }

    /// tcp_cong_avoid_ai: one segment per `w` acked.
    fn cong_avoid_ai(&mut self, w: u64, acked: u64) {
        let w = w.max(1);
        if self.cwnd_cnt >= w {
            self.cwnd_cnt = 0;
            self.cwnd += 1;
        }
        self.cwnd_cnt += acked;
        if self.cwnd_cnt >= w {
            let delta = self.cwnd_cnt / w;
            self.cwnd_cnt -= delta * w;
            self.cwnd += delta;
        }
    }

    /// bictcp_recalc_ssthresh: end the epoch, W_max with fast convergence, ssthresh = cwnd x beta.
    fn recalc_ssthresh(&mut self) -> u64 {
        self.epoch_start = None;
        self.last_max_cwnd = if self.cwnd < self.last_max_cwnd {
            self.cwnd * (BETA_SCALE + BETA) / (2 * BETA_SCALE)
        } else {
            self.cwnd
        };
        (self.cwnd * BETA / BETA_SCALE).max(2)
    }

    /// The slow-start exit's verdict on the latest ACK (cubictcp_acked).
    fn hystart(&mut self) {
        if self.cwnd < self.ssthresh {
            if let Some(s) = self.last {
                if self.ss_exit.on_ack(&s, self.cwnd as usize) == SsVerdict::Exit {
                    self.ssthresh = self.cwnd;
                }
            }
        }
    }

    fn bytes(&self, segs: u64) -> usize {
        (segs as usize).saturating_mul(self.mss)
    }

    fn segs(&self, bytes: usize) -> u64 {
        bytes.div_ceil(self.mss) as u64
    }
}

impl CongestionControl for LinuxCubic {
    reno_recovery_hooks!();

    fn cwnd(&self) -> usize {
        self.bytes(self.cwnd)
    }
    fn ssthresh(&self) -> usize {
        if self.ssthresh >= u64::from(u32::MAX >> 1) {
            usize::MAX
        } else {
            self.bytes(self.ssthresh)
        }
    }

    fn on_ack_sample(&mut self, s: &AckSample) {
        self.now = s.now;
        self.last = Some(*s);
        // cubictcp_acked: delay_min from every sample, except in the first
        // second of an epoch after a reduction.
        let Some(rtt) = s.rtt else { return };
        if let Some(e) = self.epoch_start {
            if jiffies(s.now).saturating_sub(e) < 1000 {
                return;
            }
        }
        let us = (rtt.as_micros() as u64).max(1);
        if self.delay_min_us == 0 || self.delay_min_us > us {
            self.delay_min_us = us;
        }
    }

    fn on_ack(&mut self, acked: usize, mss: usize) {
        if mss != self.mss && mss > 0 {
            let bytes = self.bytes(self.cwnd);
            self.mss = mss;
            self.cwnd = self.segs(bytes).max(1);
        }
        self.hystart();
        let mut acked = self.segs(acked);
        if self.cwnd < self.ssthresh {
            // tcp_slow_start: cwnd + acked, up to ssthresh; the rest goes to avoidance.
            let to = (self.cwnd + acked).min(self.ssthresh.max(self.cwnd));
            acked -= to - self.cwnd;
            self.cwnd = to;
            if acked == 0 {
                return;
            }
        }
        self.update(acked);
        let cnt = self.cnt;
        self.cong_avoid_ai(cnt, acked);
    }

    fn on_ack_window_unused(&mut self, _acked: usize, _mss: usize) {
        self.hystart();
    }

    fn on_recovery_exit(&mut self, flight: usize, _mss: usize) {
        if self.reduce_on_loss {
            // tcp_end_cwnd_reduction: cwnd = ssthresh.
            self.cwnd = self.ssthresh.min(self.segs(flight) + 1).max(1);
        } else {
            self.cwnd = self.cwnd.max(self.segs(flight) + 1);
        }
        self.cwnd_cnt = 0;
    }

    fn on_rto(&mut self, _flight: usize, _mss: usize) {
        // tcp_enter_loss: ssthresh from the module, cwnd to one segment;
        // bictcp_state(TCP_CA_Loss) then resets the module and HyStart.
        self.ssthresh = self.recalc_ssthresh();
        self.cwnd = 1;
        self.cwnd_cnt = 0;
        self.reset();
        self.ss_exit.on_loss(true);
    }

    fn on_idle_restart(&mut self, restart: usize, idle: Duration, rto: Duration) {
        let (cwnd, ssthresh) =
            super::idle_restart(self.cwnd(), self.ssthresh(), restart, idle, rto);
        self.cwnd = self.segs(cwnd).max(1);
        if ssthresh != usize::MAX {
            self.ssthresh = self.segs(ssthresh);
        }
    }

    fn on_tx_after_idle(&mut self, now: Instant, idle: Duration) {
        // cubictcp_cwnd_event(CA_EVENT_TX_START): move the epoch on by the
        // idle time so growth resumes on the curve where it left off.
        if let Some(e) = self.epoch_start {
            let shifted = e + idle.as_micros() as u64 / JIFFY_US;
            self.epoch_start = Some(shifted.min(jiffies(now)).max(e));
        }
    }
}

/// Windows in segments: bytes round up to whole segments (`segs`).
impl RenoRecovery for LinuxCubic {
    fn window(&self) -> usize {
        self.cwnd as usize
    }
    fn set_window(&mut self, w: usize) {
        self.cwnd = w as u64;
    }
    fn threshold(&self) -> usize {
        self.ssthresh as usize
    }
    fn units(&self, bytes: usize) -> usize {
        self.segs(bytes) as usize
    }
    fn segment(&self, _mss: usize) -> usize {
        1
    }
    fn reduces_on_repair(&self) -> bool {
        self.reduce_on_loss
    }
    /// tcp_cubic.c bictcp_recalc_ssthresh; HyStart hears of the loss.
    fn decrease(&mut self, _flight: usize, _mss: usize) {
        self.ss_exit.on_loss(false);
        self.ssthresh = self.recalc_ssthresh();
    }
    fn note_noise_loss(&mut self) {
        self.ss_exit.on_loss(false);
    }
    fn restart_growth(&mut self) {
        self.cwnd_cnt = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seq::SeqNumber;

    const MSS: usize = 1000;

    fn ack(c: &mut LinuxCubic, now_ms: u64, rtt_ms: u64, segs: usize) {
        c.on_ack_sample(&AckSample {
            now: Instant::from_millis(now_ms),
            rtt: Some(Duration::from_millis(rtt_ms)),
            srtt: Some(Duration::from_millis(rtt_ms)),
            snd_una: SeqNumber(0),
            snd_nxt: SeqNumber(0),
        });
        c.on_ack(segs * MSS, MSS);
    }

    #[test]
    fn cube_root_is_exact_for_cubes() {
        assert_eq!(cubic_root(0), 0);
        assert_eq!(cubic_root(27), 3);
        assert_eq!(cubic_root(26), 2);
        assert_eq!(cubic_root(1_000_000_000), 1000);
    }

    #[test]
    fn before_any_loss_growth_is_at_most_one_segment_per_twenty_acked() {
        let mut c = LinuxCubic::new(48 * MSS, MSS, SlowStartExit::Standard, true);
        c.ssthresh = 48;
        // 22 segments acked two at a time, 100 ms apart: one increase.
        for i in 0..11 {
            ack(&mut c, 1000 + 100 * i, 100, 2);
        }
        assert_eq!(c.cwnd(), 49 * MSS);
    }

    #[test]
    fn loss_sets_ssthresh_by_beta_and_w_max_by_fast_convergence() {
        let mut c = LinuxCubic::new(100 * MSS, MSS, SlowStartExit::Standard, true);
        c.on_loss_repair(100 * MSS, MSS);
        assert_eq!(c.ssthresh(), 70 * MSS); // 100 x 717 / 1024 = 70
        assert_eq!(c.last_max_cwnd, 100);
        c.on_loss_repair(70 * MSS, MSS);
        assert_eq!(c.last_max_cwnd, 70 * 1741 / 2048);
        assert_eq!(c.cwnd(), 49 * MSS);
    }

    #[test]
    fn after_a_loss_cwnd_climbs_back_toward_w_max_by_k() {
        let mut c = LinuxCubic::new(100 * MSS, MSS, SlowStartExit::Standard, true);
        c.on_loss_repair(100 * MSS, MSS);
        // One ACK per segment, 100 ms RTT, for K = cbrt(30 / 0.4) = 4.2 s.
        let mut now = 0;
        while now < 4300 {
            let n = c.cwnd() / MSS;
            for i in 0..n as u64 {
                ack(&mut c, now + i * 100 / n as u64, 100, 1);
            }
            now += 100;
        }
        let w = c.cwnd() / MSS;
        assert!((97..=103).contains(&w), "cwnd at K = {w}");
    }

    #[test]
    fn slow_start_leftover_goes_to_avoidance_and_rto_resets() {
        let mut c = LinuxCubic::new(10 * MSS, MSS, SlowStartExit::Standard, true);
        c.ssthresh = 12;
        ack(&mut c, 100, 100, 4);
        assert_eq!(c.cwnd(), 12 * MSS);
        assert_eq!(c.cwnd_cnt, 2);
        c.on_rto(12 * MSS, MSS);
        assert_eq!((c.cwnd(), c.ssthresh()), (MSS, 8 * MSS));
        assert_eq!((c.last_max_cwnd, c.delay_min_us), (0, 0));
    }
}
