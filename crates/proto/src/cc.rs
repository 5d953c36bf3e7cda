//! Congestion control behind a small trait; NewReno (RFC 5681, RFC 6582) is the default.

use crate::config::{LossIs, SlowStart};
use crate::seq::SeqNumber;
use crate::time::{Duration, Instant};
use core::fmt;
use std::sync::Arc;

pub mod cubic;
pub mod cubic_linux;
pub mod hystart;
pub mod usage;

pub use cubic::Cubic;
pub use cubic_linux::LinuxCubic;
pub use hystart::SlowStartExit;
pub use usage::{CwndUsage, CwndValidation, SendTimes};

/// What the connection knows about an ACK of new data, given to the
/// controller before `on_ack` and the recovery hooks: the time and RTT
/// (CUBIC's clock, RFC 9438 4.2; HyStart's delay samples) and the sequence
/// space (HyStart rounds end when the round's last byte is acked).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckSample {
    pub now: Instant,
    /// This ACK's RTT sample, if it gave one (RFC 6298 3, RFC 7323 4.1).
    pub rtt: Option<Duration>,
    /// Smoothed RTT after this ACK.
    pub srtt: Option<Duration>,
    /// SND.UNA after this ACK.
    pub snd_una: SeqNumber,
    /// SND.NXT when the ACK arrived.
    pub snd_nxt: SeqNumber,
}

/// A congestion controller: owns cwnd and ssthresh; the connection owns loss
/// detection and tells it what happened. All sizes in bytes.
pub trait CongestionControl: fmt::Debug + Send {
    fn cwnd(&self) -> usize;
    fn ssthresh(&self) -> usize;
    /// New data acknowledged outside fast recovery.
    fn on_ack(&mut self, acked: usize, mss: usize);
    /// New data acknowledged while the sender was not using its window (Linux
    /// tcp_is_cwnd_limited false): cwnd stays, but a slow-start exit still sees
    /// the ACK (tcp_cubic.c cubictcp_acked runs apart from cong_avoid's check).
    fn on_ack_window_unused(&mut self, acked: usize, mss: usize) {
        let _ = (acked, mss);
    }
    /// Entering fast recovery after `dupack_threshold` duplicate ACKs.
    fn on_fast_retransmit(&mut self, flight: usize, mss: usize, dupacks: u32);
    /// Another duplicate ACK during fast recovery (window inflation).
    fn on_recovery_dupack(&mut self, mss: usize);
    /// A partial ACK during fast recovery (RFC 6582 3.2 step 5).
    fn on_partial_ack(&mut self, acked: usize, mss: usize);
    /// A full ACK ends fast recovery (RFC 6582 3.2 step 6).
    fn on_recovery_exit(&mut self, flight: usize, mss: usize);
    /// Retransmission timeout (RFC 5681 3.1, equation 4 and loss window).
    fn on_rto(&mut self, flight: usize, mss: usize);
    /// A loss repaired without a timeout and without window inflation (NAK,
    /// RFC 1106 2.1; SACK recovery, RFC 6675 5): once per window of data.
    fn on_loss_repair(&mut self, flight: usize, mss: usize);
    /// The time, RTT and sequence space of an ACK of new data, before `on_ack`
    /// or the recovery hooks; controllers that need neither ignore it.
    fn on_ack_sample(&mut self, _sample: &AckSample) {}
    /// A congestion signal other than loss (RFC 3168 6.1.2: ECN-Echo), once
    /// per window: reduce as for a loss even when losses count as noise.
    fn on_congestion_signal(&mut self, flight: usize, mss: usize) {
        let _ = (flight, mss);
    }
    /// New data goes out at `now` with nothing in flight, `idle` after the
    /// last data sent (Linux CA_EVENT_TX_START, tcp_output.c tcp_event_data_sent).
    fn on_tx_after_idle(&mut self, now: Instant, idle: Duration) {
        let _ = (now, idle);
    }
    /// Sending resumes after `idle` with nothing in flight and the idle
    /// restart on: shrink cwnd toward `restart` (Linux tcp_cwnd_restart).
    fn on_idle_restart(&mut self, restart: usize, idle: Duration, rto: Duration) {
        let _ = (restart, idle, rto);
    }
}

/// tcp_output.c tcp_cwnd_restart (RFC 2861 2.2): ssthresh keeps 3/4 of cwnd
/// (tcp_current_ssthresh), cwnd halves per RTO of idle time down to
/// min(`restart`, cwnd). Returns (cwnd, ssthresh); all sizes in bytes.
pub fn idle_restart(
    cwnd: usize,
    ssthresh: usize,
    restart: usize,
    idle: Duration,
    rto: Duration,
) -> (usize, usize) {
    let ssthresh = ssthresh.max(cwnd / 2 + cwnd / 4);
    let restart = restart.min(cwnd);
    let mut left = idle.as_micros() as i128;
    let rto = (rto.as_micros() as i128).max(1);
    let mut w = cwnd;
    loop {
        left -= rto;
        if left <= 0 || w <= restart {
            break;
        }
        w >>= 1;
    }
    (w.max(restart), ssthresh)
}

/// Which arithmetic CUBIC uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum CubicVariant {
    /// RFC 9438 as written ([`Cubic`]).
    #[default]
    Rfc9438,
    /// Linux's tcp_cubic.c ([`LinuxCubic`]).
    Linux,
}

impl std::str::FromStr for CubicVariant {
    type Err = String;
    /// `"rfc9438"` or `"linux"`.
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "rfc9438" | "rfc" => Ok(CubicVariant::Rfc9438),
            "linux" => Ok(CubicVariant::Linux),
            _ => Err(format!(
                "unknown cubic variant {s:?}{} (expected \"rfc9438\" or \"linux\")",
                crate::suggest::did_you_mean(s, ["rfc9438", "linux"])
            )),
        }
    }
}

/// What a connection's controller starts from, once the handshake has fixed the MSS.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CcInit {
    /// Effective send MSS in bytes.
    pub mss: usize,
    /// Initial window in bytes: `Config::initial_window` segments (RFC 6928).
    pub initial_window: usize,
    /// Slow-start growth asked for (RFC 1106 4.2).
    pub slow_start: SlowStart,
    /// Reaction to repaired losses asked for (RFC 1106 4.2).
    pub loss_is: LossIs,
    /// CUBIC's arithmetic: RFC 9438's or Linux's tcp_cubic.c.
    pub cubic: CubicVariant,
}

/// The builder signature a [`CcFactory`] wraps.
type BuildCc = dyn Fn(&CcInit) -> Box<dyn CongestionControl> + Send + Sync;

/// Builds each connection's congestion controller. `Config::congestion` holds
/// one (NewReno by default); any [`CongestionControl`] plugs in through
/// [`CcFactory::new`]. Clones share the builder.
#[derive(Clone)]
pub struct CcFactory {
    name: &'static str,
    build: Arc<BuildCc>,
}

impl CcFactory {
    /// A controller named `name` (for Debug output and reports), built by `build`.
    pub fn new(
        name: &'static str,
        build: impl Fn(&CcInit) -> Box<dyn CongestionControl> + Send + Sync + 'static,
    ) -> CcFactory {
        CcFactory {
            name,
            build: Arc::new(build),
        }
    }

    /// RFC 5681 with RFC 6582 NewReno recovery, honouring `slow_start` and `loss_is`.
    pub fn new_reno() -> CcFactory {
        CcFactory::new("newreno", |i: &CcInit| {
            Box::new(NewReno::new(
                i.initial_window,
                i.slow_start,
                i.loss_is == LossIs::Congestion,
            ))
        })
    }

    /// CUBIC (RFC 9438) leaving slow start by `ss_exit`, honouring `loss_is`.
    pub fn cubic() -> CcFactory {
        CcFactory::new("cubic", |i: &CcInit| match i.cubic {
            CubicVariant::Rfc9438 => Box::new(Cubic::new(
                i.initial_window,
                slow_start_exit(i.slow_start),
                i.loss_is == LossIs::Congestion,
            )),
            CubicVariant::Linux => Box::new(LinuxCubic::new(
                i.initial_window,
                i.mss,
                slow_start_exit(i.slow_start),
                i.loss_is == LossIs::Congestion,
            )),
        })
    }

    /// A built-in controller by the name used in scenario files, drill's
    /// TCP_CONGESTION and net.ipv4.tcp_congestion_control.
    pub fn by_name(name: &str) -> Result<CcFactory, String> {
        match name {
            "newreno" | "reno" => Ok(CcFactory::new_reno()),
            "cubic" => Ok(CcFactory::cubic()),
            "tahoe" => Ok(crate::tahoe::Tahoe::factory()),
            other => Err(format!(
                "unknown congestion control {other:?}{} (expected {})",
                crate::suggest::did_you_mean(other, CONGESTION_NAMES.iter().map(|c| c.name)),
                CONGESTION_NAMES
                    .iter()
                    .map(|c| c.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    }

    /// The controller's name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// A fresh controller for one connection.
    pub fn build(&self, init: &CcInit) -> Box<dyn CongestionControl> {
        (self.build)(init)
    }
}

impl Default for CcFactory {
    fn default() -> Self {
        CcFactory::new_reno()
    }
}

impl fmt::Debug for CcFactory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

/// The slow-start exit `slow_start` asks for (RFC 1106 4.2's "double" has none).
fn slow_start_exit(s: SlowStart) -> SlowStartExit {
    match s {
        SlowStart::Standard | SlowStart::Double | SlowStart::Abc => SlowStartExit::Standard,
        SlowStart::Hystart => SlowStartExit::Hystart(Default::default()),
        SlowStart::HystartPlusPlus => SlowStartExit::HystartPlusPlus(Default::default()),
    }
}

/// A built-in module, for listings (`tinygram congestion`) and errors.
#[derive(Clone, Copy, Debug)]
pub struct ModuleInfo {
    /// The name a scenario file or drill script selects it by.
    pub name: &'static str,
    /// Its specification.
    pub rfc: &'static str,
    /// One line on what it does.
    pub about: &'static str,
}

/// The congestion controllers `Config::congestion` can be set to by name.
pub const CONGESTION_NAMES: [ModuleInfo; 3] = [
    ModuleInfo {
        name: "newreno",
        rfc: "RFC 5681, RFC 6582",
        about: "slow start, +1 SMSS per RTT, halve on loss, NewReno recovery (default)",
    },
    ModuleInfo {
        name: "cubic",
        rfc: "RFC 9438",
        about: "cubic growth from the last W_max, beta 0.7, Reno-friendly floor",
    },
    ModuleInfo {
        name: "tahoe",
        rfc: "Jacobson 1988; 4.3BSD-Tahoe tcp_input.c",
        about: "any loss: window to one segment, no fast recovery (RFC 1106's era)",
    },
];

/// Slow-start variants `Config::slow_start` takes (scenario key `slow_start`).
pub const SLOW_START_NAMES: [ModuleInfo; 5] = [
    ModuleInfo {
        name: "standard",
        rfc: "RFC 5681 3.1, RFC 3465",
        about: "one SMSS per ACK until ssthresh or loss (default)",
    },
    ModuleInfo {
        name: "double",
        rfc: "RFC 1106 4.2",
        about: "two SMSS per ACK",
    },
    ModuleInfo {
        name: "abc",
        rfc: "RFC 3465; Linux tcp_slow_start",
        about: "one SMSS per SMSS acknowledged, however many one ACK covers",
    },
    ModuleInfo {
        name: "hystart",
        rfc: "Linux tcp_cubic.c hystart_update",
        about: "leave slow start on an ACK train over delay_min/2 or an RTT rise (Linux default)",
    },
    ModuleInfo {
        name: "hystart++",
        rfc: "RFC 9406",
        about: "conservative slow start on an RTT rise, congestion avoidance after 5 rounds",
    },
];

/// Loss-recovery modules `Config::recovery` takes (scenario key `recovery`).
pub const RECOVERY_NAMES: [ModuleInfo; 4] = [
    ModuleInfo {
        name: "newreno",
        rfc: "RFC 6675, RFC 6582",
        about: "SACK scoreboard recovery (or NewReno without SACK), cwnd = ssthresh at once (default)",
    },
    ModuleInfo {
        name: "prr",
        rfc: "RFC 6937",
        about: "Proportional Rate Reduction: cwnd falls to ssthresh in step with delivered data (SACK recovery)",
    },
    ModuleInfo {
        name: "tlp",
        rfc: "RFC 8985 7",
        about: "Tail Loss Probe at 2 SRTT (SACK): a lost tail is found without an RTO",
    },
    ModuleInfo {
        name: "rack",
        rfc: "RFC 8985 6",
        about: "RACK (SACK): a segment is lost once a later-sent one is delivered and RTT + min_RTT/4 (DSACK-widened) has passed; reordering timer",
    },
];

/// Congestion signals besides loss and how losses count (`options = ["ecn"]`, `loss_is`).
pub const SIGNAL_NAMES: [ModuleInfo; 4] = [
    ModuleInfo {
        name: "ecn",
        rfc: "RFC 3168",
        about: "option: ECT(0) data; a CE mark is echoed by ECE until CWR and reduces cwnd once per window",
    },
    ModuleInfo {
        name: "congestion",
        rfc: "RFC 5681",
        about: "loss_is: a repaired loss reduces cwnd (default)",
    },
    ModuleInfo {
        name: "noise",
        rfc: "RFC 1106 4.2",
        about: "loss_is: a repaired loss leaves cwnd alone; a timeout still reduces",
    },
    ModuleInfo {
        name: "ecn-only",
        rfc: "RFC 3168 + RFC 1106 4.2",
        about: "loss_is, EXPERIMENTAL: only CE marks reduce cwnd; an unmarked repaired loss is noise",
    },
];

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

    fn on_fast_retransmit(&mut self, flight: usize, mss: usize, dupacks: u32) {
        self.ss_exit.on_loss(false);
        if self.reduce_on_repair {
            // RFC 5681 3.2 steps 2-3.
            self.ssthresh = (flight / 2).max(2 * mss);
            self.cwnd = self.ssthresh + dupacks as usize * mss;
        } else {
            self.cwnd += dupacks as usize * mss;
        }
    }

    fn on_recovery_dupack(&mut self, mss: usize) {
        self.cwnd += mss;
    }

    fn on_partial_ack(&mut self, acked: usize, mss: usize) {
        // RFC 6582 3.2 step 5: deflate by the amount acked, add back one SMSS.
        self.cwnd = self.cwnd.saturating_sub(acked) + mss;
        self.cwnd = self.cwnd.max(mss);
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

    fn on_loss_repair(&mut self, flight: usize, mss: usize) {
        self.ss_exit.on_loss(false);
        if self.reduce_on_repair {
            // RFC 6675 5 step 4.2 (RFC 5681 eq. 4): ssthresh = cwnd = FlightSize / 2.
            self.ssthresh = (flight / 2).max(2 * mss);
            self.cwnd = self.ssthresh;
            self.ca_acked = 0;
        }
        // RFC 1106 4.2 "noise": the window stays open.
    }

    fn on_congestion_signal(&mut self, flight: usize, mss: usize) {
        // RFC 3168 6.1.2: halve as for a loss (RFC 5681 eq. 4).
        self.ssthresh = (flight / 2).max(2 * mss);
        self.cwnd = self.ssthresh;
        self.ca_acked = 0;
        self.ss_exit.on_loss(false);
    }

    fn on_rto(&mut self, flight: usize, mss: usize) {
        // RFC 5681 3.1 eq. 4 and "LW = 1 SMSS".
        self.ssthresh = (flight / 2).max(2 * mss);
        self.cwnd = mss;
        self.ca_acked = 0;
        self.ss_exit.on_loss(true);
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
