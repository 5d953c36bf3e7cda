//! Slow-start exit heuristics: Linux's HyStart (tcp_cubic.c) and HyStart++ (RFC 9406).

use super::AckSample;
use crate::seq::SeqNumber;
use crate::time::{Duration, Instant};

/// What a slow-start heuristic asks of its controller after an ACK.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SsVerdict {
    /// Keep growing: by the bytes acked divided by `divisor` (1 in slow start,
    /// RFC 9406 CSS_GROWTH_DIVISOR in conservative slow start).
    Grow { divisor: usize },
    /// Leave slow start now: ssthresh = cwnd (tcp_cubic.c hystart_update; RFC 9406 4.2).
    Exit,
}

/// Linux tcp_cubic.c hystart_low_window: HyStart acts only from 16 segments of cwnd.
pub const HYSTART_LOW_WINDOW: usize = 16;
/// Linux tcp_cubic.c hystart_ack_delta_us: ACKs at most 2 ms apart form a train.
pub const HYSTART_ACK_DELTA: Duration = Duration::from_millis(2);
/// Linux tcp_cubic.c HYSTART_MIN_SAMPLES: RTT samples per round before the delay test.
pub const HYSTART_MIN_SAMPLES: u32 = 8;

/// Linux tcp_cubic.c HYSTART_DELAY_THRESH: delay_min / 8 clamped to [4 ms, 16 ms].
pub fn hystart_delay_thresh(delay_min: Duration) -> Duration {
    (delay_min / 8).clamp(Duration::from_millis(4), Duration::from_millis(16))
}

/// Linux's HyStart (tcp_cubic.c bictcp_acked, hystart_update): leaves slow start
/// when an ACK train spans half the minimum delay or a round's RTT rises.
#[derive(Clone, Debug, Default)]
pub struct LinuxHystart {
    /// ca->found: slow start was left by HyStart; no more detection until reset.
    pub found: bool,
    /// ca->delay_min: least RTT seen since the last reset.
    pub delay_min: Option<Duration>,
    round_start: Instant,
    last_ack: Instant,
    end_seq: Option<SeqNumber>,
    curr_rtt: Option<Duration>,
    sample_cnt: u32,
}

impl LinuxHystart {
    /// bictcp_hystart_reset: a new round starts now and ends when `snd_nxt` is acked.
    fn reset_round(&mut self, now: Instant, snd_nxt: SeqNumber) {
        self.round_start = now;
        self.last_ack = now;
        self.end_seq = Some(snd_nxt);
        self.curr_rtt = None;
        self.sample_cnt = 0;
    }

    /// bictcp_reset + bictcp_hystart_reset on a timeout (bictcp_state, TCP_CA_Loss).
    pub fn reset(&mut self) {
        *self = LinuxHystart::default();
    }

    /// cubictcp_acked + hystart_update (Linux 5.8 and later) for one ACK in
    /// slow start with cwnd in segments: delay_min follows every sample; rounds
    /// and detection run only from hystart_low_window.
    pub fn on_ack(&mut self, s: &AckSample, cwnd_segs: usize) -> SsVerdict {
        let Some(rtt) = s.rtt else {
            return SsVerdict::Grow { divisor: 1 };
        };
        let delay = rtt.max(Duration::from_micros(1));
        if self.delay_min.is_none_or(|d| d > delay) {
            self.delay_min = Some(delay);
        }
        let delay_min = self.delay_min.unwrap_or(delay);
        if self.found || cwnd_segs < HYSTART_LOW_WINDOW {
            return SsVerdict::Grow { divisor: 1 };
        }
        // hystart_update: a round ends once its last segment is acked.
        match self.end_seq {
            Some(e) if s.snd_una <= e => {}
            _ => self.reset_round(s.now, s.snd_nxt),
        }
        // HYSTART_ACK_TRAIN: ACKs closely spaced over more than delay_min / 2
        // (hystart_ack_delay is 0 here: the engine does not pace).
        if s.now.saturating_duration_since(self.last_ack) <= HYSTART_ACK_DELTA {
            self.last_ack = s.now;
            if s.now.saturating_duration_since(self.round_start) > delay_min / 2 {
                self.found = true;
            }
        }
        // HYSTART_DELAY: the round's least RTT over 8 samples exceeds delay_min + thresh.
        if self.curr_rtt.is_none_or(|c| c > delay) {
            self.curr_rtt = Some(delay);
        }
        if self.sample_cnt < HYSTART_MIN_SAMPLES {
            self.sample_cnt += 1;
        } else if self
            .curr_rtt
            .is_some_and(|c| c > delay_min + hystart_delay_thresh(delay_min))
        {
            self.found = true;
        }
        if self.found {
            SsVerdict::Exit
        } else {
            SsVerdict::Grow { divisor: 1 }
        }
    }
}

/// RFC 9406 4.3 MIN_RTT_THRESH.
pub const HSPP_MIN_RTT_THRESH: Duration = Duration::from_millis(4);
/// RFC 9406 4.3 MAX_RTT_THRESH.
pub const HSPP_MAX_RTT_THRESH: Duration = Duration::from_millis(16);
/// RFC 9406 4.3 MIN_RTT_DIVISOR.
pub const HSPP_MIN_RTT_DIVISOR: u32 = 8;
/// RFC 9406 4.3 N_RTT_SAMPLE.
pub const HSPP_N_RTT_SAMPLE: u32 = 8;
/// RFC 9406 4.3 CSS_GROWTH_DIVISOR.
pub const HSPP_CSS_GROWTH_DIVISOR: usize = 4;
/// RFC 9406 4.3 CSS_ROUNDS.
pub const HSPP_CSS_ROUNDS: u32 = 5;
/// RFC 9406 4.3 L for a non-paced sender: at most 8 SMSS of growth per ACK.
pub const HSPP_L: usize = 8;

/// Where HyStart++ stands (RFC 9406 4.2).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum HsppPhase {
    /// Standard slow start with RTT sampling.
    SlowStart,
    /// Conservative slow start since the RTT rose to `baseline`; `rounds` completed.
    Css { baseline: Duration, rounds: u32 },
    /// Left for congestion avoidance (CSS_ROUNDS done, or a loss): standard rules apply.
    Done,
}

/// HyStart++ (RFC 9406): slow start that moves to conservative slow start when
/// a round's least RTT rises, and to congestion avoidance after CSS_ROUNDS.
#[derive(Clone, Debug)]
pub struct HystartPlusPlus {
    pub phase: HsppPhase,
    last_round_min_rtt: Option<Duration>,
    current_round_min_rtt: Option<Duration>,
    rtt_sample_count: u32,
    window_end: Option<SeqNumber>,
}

impl Default for HystartPlusPlus {
    fn default() -> Self {
        HystartPlusPlus {
            phase: HsppPhase::SlowStart,
            last_round_min_rtt: None,
            current_round_min_rtt: None,
            rtt_sample_count: 0,
            window_end: None,
        }
    }
}

impl HystartPlusPlus {
    /// RFC 9406 4.2: a loss or ECN mark in slow start or CSS ends HyStart++.
    pub fn on_congestion(&mut self) {
        self.phase = HsppPhase::Done;
    }

    /// One ACK while cwnd < ssthresh (RFC 9406 4.2).
    pub fn on_ack(&mut self, s: &AckSample) -> SsVerdict {
        if self.phase == HsppPhase::Done {
            return SsVerdict::Grow { divisor: 1 };
        }
        // Round boundary: the ACK covers windowEnd.
        if self.window_end.is_none_or(|e| s.snd_una > e) {
            self.last_round_min_rtt = self.current_round_min_rtt;
            self.current_round_min_rtt = None;
            self.rtt_sample_count = 0;
            self.window_end = Some(s.snd_nxt);
            if let HsppPhase::Css { baseline, rounds } = self.phase {
                if rounds + 1 >= HSPP_CSS_ROUNDS {
                    self.phase = HsppPhase::Done;
                    return SsVerdict::Exit;
                }
                self.phase = HsppPhase::Css {
                    baseline,
                    rounds: rounds + 1,
                };
            }
        }
        if let Some(rtt) = s.rtt {
            if self.current_round_min_rtt.is_none_or(|c| c > rtt) {
                self.current_round_min_rtt = Some(rtt);
            }
            self.rtt_sample_count += 1;
        }
        let enough = self.rtt_sample_count >= HSPP_N_RTT_SAMPLE;
        match (
            self.phase,
            self.current_round_min_rtt,
            self.last_round_min_rtt,
        ) {
            (HsppPhase::SlowStart, Some(cur), Some(last)) if enough => {
                let thresh =
                    (last / HSPP_MIN_RTT_DIVISOR).clamp(HSPP_MIN_RTT_THRESH, HSPP_MAX_RTT_THRESH);
                if cur >= last + thresh {
                    self.phase = HsppPhase::Css {
                        baseline: cur,
                        rounds: 0,
                    };
                }
            }
            (HsppPhase::Css { baseline, .. }, Some(cur), _) if enough && cur < baseline => {
                // The rise was spurious: back to slow start.
                self.phase = HsppPhase::SlowStart;
            }
            _ => {}
        }
        SsVerdict::Grow {
            divisor: match self.phase {
                HsppPhase::Css { .. } => HSPP_CSS_GROWTH_DIVISOR,
                _ => 1,
            },
        }
    }
}

/// Which slow-start exit a controller uses.
#[derive(Clone, Debug, Default)]
pub enum SlowStartExit {
    /// Plain slow start to ssthresh or the first loss (RFC 5681 3.1).
    #[default]
    Standard,
    /// Linux's HyStart (tcp_cubic.c).
    Hystart(LinuxHystart),
    /// HyStart++ (RFC 9406).
    HystartPlusPlus(HystartPlusPlus),
}

impl SlowStartExit {
    /// Asks the heuristic about one ACK in slow start; `cwnd_segs` is cwnd in segments.
    pub fn on_ack(&mut self, s: &AckSample, cwnd_segs: usize) -> SsVerdict {
        match self {
            SlowStartExit::Standard => SsVerdict::Grow { divisor: 1 },
            SlowStartExit::Hystart(h) => h.on_ack(s, cwnd_segs),
            SlowStartExit::HystartPlusPlus(h) => h.on_ack(s),
        }
    }

    /// Bytes slow start may add for `acked` bytes: RFC 9406's cap of L SMSS per
    /// ACK applies to HyStart++ only (RFC 3465 2.2 caps Linux's at the bytes acked).
    pub fn growth_cap(&self, acked: usize, mss: usize) -> usize {
        match self {
            SlowStartExit::HystartPlusPlus(_) => acked.min(HSPP_L * mss),
            _ => acked,
        }
    }

    /// A loss or timeout: HyStart++ is done; Linux's HyStart starts over after a timeout.
    pub fn on_loss(&mut self, timeout: bool) {
        match self {
            SlowStartExit::Standard => {}
            SlowStartExit::Hystart(h) => {
                if timeout {
                    h.reset();
                }
            }
            SlowStartExit::HystartPlusPlus(h) => h.on_congestion(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(now_us: u64, rtt_ms: u64, una: u32, nxt: u32) -> AckSample {
        AckSample {
            now: Instant::from_micros(now_us),
            rtt: Some(Duration::from_millis(rtt_ms)),
            srtt: Some(Duration::from_millis(rtt_ms)),
            snd_una: SeqNumber(una),
            snd_nxt: SeqNumber(nxt),
        }
    }

    #[test]
    fn delay_threshold_is_clamped() {
        assert_eq!(
            hystart_delay_thresh(Duration::from_millis(10)),
            Duration::from_millis(4)
        );
        assert_eq!(
            hystart_delay_thresh(Duration::from_millis(80)),
            Duration::from_millis(10)
        );
        assert_eq!(
            hystart_delay_thresh(Duration::from_millis(400)),
            Duration::from_millis(16)
        );
    }

    #[test]
    fn linux_hystart_exits_on_rtt_increase() {
        let mut h = LinuxHystart::default();
        // First round: 100 ms RTT, ACKs 10 ms apart (no train).
        let mut t = 0;
        for i in 0..10 {
            t += 10_000;
            assert_eq!(
                h.on_ack(&sample(t, 100, 1000 * i, 20_000), 20),
                SsVerdict::Grow { divisor: 1 }
            );
        }
        // New round with RTT 100 + 12.5 + 1 ms: above delay_min + 12.5 ms after 8 samples.
        let mut verdicts = Vec::new();
        for i in 0..10 {
            t += 10_000;
            verdicts.push(h.on_ack(&sample(t, 114, 20_001 + 1000 * i, 40_000), 20));
        }
        // The first 8 samples of the round only collect; the 9th decides.
        assert!(verdicts[..8]
            .iter()
            .all(|v| *v == SsVerdict::Grow { divisor: 1 }));
        assert_eq!(verdicts[8], SsVerdict::Exit);
        assert!(h.found);
    }

    #[test]
    fn linux_hystart_stays_below_low_window_and_for_small_rises() {
        let mut h = LinuxHystart::default();
        let mut t = 0;
        for i in 0..30 {
            t += 10_000;
            // RTT grows, but cwnd is under 16 segments.
            assert_eq!(
                h.on_ack(&sample(t, 100 + i, 1000 * i as u32, 50_000), 15),
                SsVerdict::Grow { divisor: 1 }
            );
        }
        let mut h = LinuxHystart::default();
        for i in 0..30 {
            t += 10_000;
            // A 3 ms rise is under the 4 ms floor of the threshold.
            let rtt = if i < 10 { 40 } else { 43 };
            assert_eq!(
                h.on_ack(&sample(t, rtt, 1000 * i as u32, 50_000), 32),
                SsVerdict::Grow { divisor: 1 }
            );
        }
    }

    #[test]
    fn linux_hystart_ack_train_exit() {
        let mut h = LinuxHystart::default();
        // delay_min 20 ms; ACKs 1 ms apart for more than 10 ms of one round.
        let mut exit_at = None;
        for i in 0..15u32 {
            let v = h.on_ack(&sample(1_000 * i as u64, 20, 100 * i, 100_000), 32);
            if v == SsVerdict::Exit && exit_at.is_none() {
                exit_at = Some(i);
            }
        }
        assert!(h.found);
        // Round started at 0 µs; the first ACK past 10 ms (delay_min / 2) is at 11 ms.
        assert_eq!(exit_at, Some(11));
    }

    #[test]
    fn hystart_plus_plus_css_then_avoidance() {
        let mut h = HystartPlusPlus::default();
        let mut una = 0u32;
        let mut nxt = 10_000u32;
        let mut round = |h: &mut HystartPlusPlus, rtt: u64| {
            let mut out = Vec::new();
            for _ in 0..10 {
                una += 1000;
                out.push(h.on_ack(&sample(0, rtt, una, nxt)));
            }
            // The next round's first ACK passes windowEnd.
            una = nxt;
            nxt += 20_000;
            out
        };
        round(&mut h, 50);
        assert_eq!(h.phase, HsppPhase::SlowStart);
        // RTT up by 7 ms (threshold 50/8 = 6.25 ms): CSS, growth divided by 4.
        let v = round(&mut h, 57);
        assert!(matches!(h.phase, HsppPhase::Css { .. }), "{:?}", h.phase);
        assert_eq!(*v.last().unwrap(), SsVerdict::Grow { divisor: 4 });
        // CSS_ROUNDS further rounds without a fall below baseline: exit.
        let mut exited = false;
        for _ in 0..HSPP_CSS_ROUNDS {
            exited |= round(&mut h, 58).contains(&SsVerdict::Exit);
        }
        assert!(exited);
        assert_eq!(h.phase, HsppPhase::Done);
    }

    #[test]
    fn hystart_plus_plus_spurious_rise_returns_to_slow_start() {
        let mut h = HystartPlusPlus::default();
        let feed = |h: &mut HystartPlusPlus, rtt: u64, una0: u32, nxt: u32| {
            for i in 1..=10 {
                h.on_ack(&sample(0, rtt, una0 + i * 100, nxt));
            }
        };
        feed(&mut h, 50, 0, 2000);
        feed(&mut h, 60, 2001, 4000);
        assert!(matches!(h.phase, HsppPhase::Css { .. }));
        feed(&mut h, 50, 4001, 6000);
        assert_eq!(h.phase, HsppPhase::SlowStart);
    }
}
