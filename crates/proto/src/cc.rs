//! Congestion control behind a small trait; NewReno (RFC 5681, RFC 6582) is the default.

use crate::seq::SeqNumber;
use crate::time::{Duration, Instant};
use core::fmt;
use std::sync::Arc;

pub mod cubic;
pub mod cubic_linux;
pub mod hystart;
pub mod newreno;
mod recovery;
pub mod tahoe;
pub mod usage;

pub use cubic::Cubic;
pub use cubic_linux::LinuxCubic;
pub use hystart::SlowStartExit;
pub use newreno::NewReno;
pub use tahoe::Tahoe;
pub use usage::{CwndUsage, CwndValidation};

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

/// How a loss repaired without a timeout affects cwnd (RFC 1106 section 4.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum LossIs {
    /// Standard reaction: halve (RFC 5681).
    #[default]
    Congestion,
    /// Loss repaired by NAK or fast retransmit does not shrink cwnd; RTO still does.
    Noise,
    /// Experimental: only ECN CE marks (RFC 3168) mean congestion; a repaired
    /// loss without a mark is noise (a modern take on RFC 1106 4.2's question).
    EcnOnly,
}

/// Slow-start growth (RFC 1106 section 4.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SlowStart {
    /// One segment per ACK (RFC 5681 3.1).
    #[default]
    Standard,
    /// Two segments per ACK (RFC 1106 4.2: "2*R log2(W)").
    Double,
    /// Standard growth, left early by Linux's HyStart (tcp_cubic.c: ACK train, delay increase).
    Hystart,
    /// HyStart++ (RFC 9406): conservative slow start after an RTT rise.
    HystartPlusPlus,
    /// One segment per segment acknowledged, however many one ACK covers:
    /// RFC 3465 byte counting without its L = 2 SMSS cap, as Linux's
    /// tcp_slow_start grows cwnd by the packets an ACK acknowledges.
    Abc,
}

impl std::str::FromStr for LossIs {
    type Err = String;
    /// `"congestion"`, `"noise"` or the experimental `"ecn-only"`, as in scenario files and drill setsockopts.
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "congestion" => Ok(LossIs::Congestion),
            "noise" => Ok(LossIs::Noise),
            "ecn-only" => Ok(LossIs::EcnOnly),
            _ => Err(format!(
                "unknown loss_is {s:?}{} (expected \"congestion\", \"noise\" or \"ecn-only\" (experimental))",
                crate::suggest::did_you_mean(s, ["congestion", "noise", "ecn-only"])
            )),
        }
    }
}

impl std::str::FromStr for SlowStart {
    type Err = String;
    /// `"standard"`, `"double"`, `"abc"`, `"hystart"` or `"hystart++"`, as in scenario files and drill setsockopts.
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "standard" => Ok(SlowStart::Standard),
            "double" => Ok(SlowStart::Double),
            "abc" => Ok(SlowStart::Abc),
            "hystart" => Ok(SlowStart::Hystart),
            "hystart++" | "hystartpp" => Ok(SlowStart::HystartPlusPlus),
            _ => Err(format!(
                "unknown slow_start {s:?}{} (expected \"standard\", \"double\", \"abc\", \"hystart\" or \"hystart++\")",
                crate::suggest::did_you_mean(s, ["standard", "double", "abc", "hystart", "hystart++"])
            )),
        }
    }
}

impl SlowStart {
    /// The name scenario files use.
    pub fn name(self) -> &'static str {
        match self {
            SlowStart::Standard => "standard",
            SlowStart::Double => "double",
            SlowStart::Abc => "abc",
            SlowStart::Hystart => "hystart",
            SlowStart::HystartPlusPlus => "hystart++",
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
            "tahoe" => Ok(Tahoe::factory()),
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
pub(crate) fn slow_start_exit(s: SlowStart) -> SlowStartExit {
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
