//! Retransmission timeout estimation (RFC 6298).

use crate::time::Duration;

/// SRTT/RTTVAR estimator with exponential backoff (RFC 6298 2-5).
#[derive(Debug, Clone)]
pub struct RttEstimator {
    srtt: Option<Duration>,
    /// The least sample seen (Linux's tcp_min_rtt, without its window).
    min_rtt: Option<Duration>,
    rttvar: Duration,
    rto: Duration,
    backoff: u32,
    min: Duration,
    max: Duration,
    /// Coarse timer tick (BSD's 500 ms slow timeout): the RTO is a whole number of ticks.
    tick: Option<Duration>,
    floor: RtoFloor,
    /// Added to every timeout computed from a sample or backed off.
    slop: Duration,
}

/// What the minimum RTO bounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum RtoFloor {
    /// The variance term: RTO >= SRTT + min (Linux tcp_set_rto, tcp_rto_min),
    /// so an ACK delayed by up to `min` after one RTT never times out.
    #[default]
    Variance,
    /// The whole RTO: RTO >= min (RFC 6298 2.4).
    Rto,
}

impl RtoFloor {
    pub fn name(self) -> &'static str {
        match self {
            RtoFloor::Variance => "variance",
            RtoFloor::Rto => "rto",
        }
    }
}

impl std::str::FromStr for RtoFloor {
    type Err = String;
    /// `"variance"` or `"rto"`.
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "variance" => Ok(RtoFloor::Variance),
            "rto" => Ok(RtoFloor::Rto),
            _ => Err(format!(
                "unknown rto_floor {s:?}{} (expected \"variance\" or \"rto\")",
                crate::suggest::did_you_mean(s, ["variance", "rto"])
            )),
        }
    }
}

/// RFC 6298 2: clock granularity G; our virtual clock is exact, so 1 ms
/// stands for a conventional stack tick and keeps RTO above 0 on tiny RTTs.
const GRANULARITY: Duration = Duration::from_millis(1);

impl RttEstimator {
    pub fn new(initial: Duration, min: Duration, max: Duration) -> Self {
        RttEstimator {
            srtt: None,
            min_rtt: None,
            rttvar: Duration::ZERO,
            rto: initial.clamp(min, max),
            backoff: 0,
            min,
            max,
            tick: None,
            floor: RtoFloor::Variance,
            slop: Duration::ZERO,
        }
    }

    /// Adds `slop` to every timeout computed from a sample or backed off,
    /// not to the initial one (FreeBSD tcp_timer.h TCPT_RANGESET adds
    /// tcp_rexmit_slop; tcp_newtcpcb sets t_rxtcur to rexmit_initial bare).
    pub fn with_slop(mut self, slop: Duration) -> Self {
        self.slop = slop;
        self
    }

    /// Sets what `min` bounds: the variance term (Linux) or the whole RTO (RFC 6298 2.4).
    pub fn with_floor(mut self, floor: RtoFloor) -> Self {
        self.floor = floor;
        self
    }

    /// Counts the RTO in whole ticks of `tick`, rounded up (4.4BSD tcp_timer.h:
    /// t_rxtcur in PR_SLOWHZ ticks of 500 ms). The phase of the free-running
    /// tick is not modelled: a BSD timer may fire up to one tick early.
    pub fn with_tick(mut self, tick: Option<Duration>) -> Self {
        self.tick = tick.filter(|t| !t.is_zero());
        self
    }

    /// RFC 6298 2.2-2.3: fold in one measurement (never from a retransmitted segment: Karn).
    pub fn sample(&mut self, r: Duration) {
        self.min_rtt = Some(self.min_rtt.map_or(r, |m| m.min(r)));
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = r / 2;
            }
            Some(srtt) => {
                let delta = srtt.abs_diff(r);
                self.rttvar = (self.rttvar * 3 + delta) / 4;
                self.srtt = Some((srtt * 7 + r) / 8);
            }
        }
        let srtt = self.srtt.unwrap_or(r);
        let var = GRANULARITY.max(self.rttvar * 4);
        self.rto = match self.floor {
            // Linux tcp_set_rto: the minimum floors the variance term.
            RtoFloor::Variance => srtt + var.max(self.min),
            // RFC 6298 2.3-2.4: SRTT + max(G, 4*RTTVAR), rounded up to the minimum.
            RtoFloor::Rto => (srtt + var).max(self.min),
        }
        .min(self.max);
        // RFC 6298 5.7 note: a new sample after backoff ends the backoff.
        self.backoff = 0;
    }

    /// The timeout to arm now, backoff included (RFC 6298 5.5).
    pub fn rto(&self) -> Duration {
        let mut r = self.rto;
        for _ in 0..self.backoff.min(32) {
            r = (r * 2).min(self.max);
        }
        if self.srtt.is_some() || self.backoff > 0 {
            r = (r + self.slop).min(self.max);
        }
        match self.tick {
            Some(t) => {
                let (r_ns, t_ns) = (r.as_nanos(), t.as_nanos());
                let ticks = r_ns.div_ceil(t_ns).max(1);
                let n = u64::try_from(ticks.saturating_mul(t_ns)).unwrap_or(u64::MAX);
                Duration::from_nanos(n)
            }
            None => r,
        }
    }

    /// RFC 6298 5.5: double the timeout after an expiry.
    pub fn back_off(&mut self) {
        self.backoff = self.backoff.saturating_add(1);
    }

    /// Forget the backoff (new data acknowledged).
    pub fn reset_backoff(&mut self) {
        self.backoff = 0;
    }

    /// The least RTT measured so far.
    pub fn min_rtt(&self) -> Option<Duration> {
        self.min_rtt
    }

    pub fn srtt(&self) -> Option<Duration> {
        self.srtt
    }
    pub fn rttvar(&self) -> Duration {
        self.rttvar
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_coarse_tick_rounds_the_rto_up_to_whole_ticks() {
        let ms = Duration::from_millis;
        let mut r = RttEstimator::new(ms(3000), ms(1000), ms(64_000)).with_tick(Some(ms(500)));
        r.sample(ms(100));
        // SRTT 100 + max(4 x 50, 1000) = 1100 ms: three ticks.
        assert_eq!(r.rto(), ms(1500));
        let mut exact = RttEstimator::new(ms(3000), ms(1000), ms(64_000));
        exact.sample(ms(100));
        assert_eq!(exact.rto(), ms(1100));
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn slop_is_added_to_computed_and_backed_off_timeouts_not_the_initial_one() {
        let mut e = RttEstimator::new(ms(1000), ms(30), ms(64_000))
            .with_floor(RtoFloor::Rto)
            .with_slop(ms(200));
        assert_eq!(e.rto(), ms(1000));
        e.back_off();
        assert_eq!(e.rto(), ms(2200));
        e.sample(ms(100));
        // max(30, 100 + 4 x 50) + 200.
        assert_eq!(e.rto(), ms(500));
        e.back_off();
        assert_eq!(e.rto(), ms(800));
    }

    #[test]
    fn rfc6298_first_and_later_samples() {
        let mut e = RttEstimator::new(ms(1000), ms(200), ms(60_000));
        assert_eq!(e.rto(), ms(1000));
        e.sample(ms(100));
        // SRTT = 100, RTTVAR = 50, RTO = 100 + max(4*50, 200) = 300
        assert_eq!(e.rto(), ms(300));
        e.sample(ms(100));
        // RTTVAR = 3/4*50 + 0 = 37.5, SRTT = 100, RTO = 100 + max(150, 200)
        assert_eq!(e.rto(), ms(300));
        e.sample(ms(1000));
        // RTTVAR = 3/4*37.5 + 900/4 = 253.125, SRTT = 212.5, RTO = 212.5 + 1012.5
        assert_eq!(e.rto(), ms(1225));
    }

    #[test]
    fn min_max_and_backoff() {
        let mut e = RttEstimator::new(ms(1000), ms(200), ms(5000));
        e.sample(ms(1));
        assert_eq!(e.rto(), ms(201));
        e.back_off();
        assert_eq!(e.rto(), ms(402));
        for _ in 0..10 {
            e.back_off();
        }
        assert_eq!(e.rto(), ms(5000));
        e.reset_backoff();
        assert_eq!(e.rto(), ms(201));
    }

    /// RFC 6298 2.4 rounds the whole RTO up to the minimum; Linux adds the
    /// minimum to SRTT in place of a smaller variance term.
    #[test]
    fn the_minimum_floors_the_rto_or_the_variance_term() {
        let mut whole = RttEstimator::new(ms(1000), ms(1000), ms(60_000)).with_floor(RtoFloor::Rto);
        let mut var = RttEstimator::new(ms(1000), ms(1000), ms(60_000));
        whole.sample(ms(100));
        var.sample(ms(100));
        assert_eq!(whole.rto(), ms(1000), "max(100 + 4 x 50, 1000)");
        assert_eq!(var.rto(), ms(1100), "100 + max(4 x 50, 1000)");
        // Above the minimum the two agree: SRTT + 4 x RTTVAR.
        let mut whole = RttEstimator::new(ms(1000), ms(200), ms(60_000)).with_floor(RtoFloor::Rto);
        whole.sample(ms(400));
        assert_eq!(whole.rto(), ms(1200), "400 + 4 x 200");
        assert_eq!("rto".parse::<RtoFloor>(), Ok(RtoFloor::Rto));
        assert!("whole"
            .parse::<RtoFloor>()
            .unwrap_err()
            .contains("expected"));
    }
}
