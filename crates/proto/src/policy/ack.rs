//! ACK policies: given an arriving data segment, acknowledge now or later.
//!
//! Rules common to every policy live in the engine, not here: out-of-order data
//! and gap fills are acknowledged at once (RFC 5681 4.2), a pending ACK rides on
//! any outgoing segment and cancels the timer, and window updates follow the
//! receiver SWS rule (RFC 1122 4.2.3.3).

use crate::config::Config;
use crate::time::{Duration, Instant};
use core::fmt;
use core::str::FromStr;

/// What an ACK policy sees when an in-order data segment arrives (or, with
/// `seg_len == 0`, when a read opens the window or a timer fires).
#[derive(Clone, Copy, Debug)]
pub struct AckCtx {
    pub now: Instant,
    /// Effective MSS of the peer's segments.
    pub mss: usize,
    /// Payload length of the segment that just arrived (0 for other events).
    pub seg_len: usize,
    /// Segments the arrival stands for: a GRO packet's gso_segs, else 1 (0 for other events).
    pub seg_count: u32,
    /// Data segments received since we last sent an ACK, this one included.
    pub segs_since_ack: u32,
    /// Full-sized data segments received since we last sent an ACK, this one included.
    pub full_segs_since_ack: u32,
    /// In-order bytes received since we last sent an ACK (RCV.NXT - RCV.WUP).
    pub bytes_since_ack: usize,
    /// How far the right window edge would move if we acknowledged now: the
    /// window we would advertise (RFC 1122 4.2.3.3 applied) past the last one.
    pub right_edge_moved: usize,
    /// Free receive buffer: the window we could offer now.
    pub rcv_wnd: usize,
    /// This side's smoothed RTT (RFC 6298), once measured.
    pub srtt: Option<Duration>,
    /// This side's retransmission timeout.
    pub rto: Duration,
}

/// Formats a duration as milliseconds: "200 ms", "12.5 ms".
pub fn fmt_ms(d: Duration) -> impl fmt::Display {
    struct Ms(Duration);
    impl fmt::Display for Ms {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            let us = self.0.as_micros();
            if us.is_multiple_of(1000) {
                write!(f, "{} ms", us / 1000)
            } else {
                let s = format!("{:.3}", us as f64 / 1e3);
                write!(f, "{} ms", s.trim_end_matches('0'))
            }
        }
    }
    Ms(d)
}

fn ordinal(n: u32) -> String {
    match n {
        1 => "first".into(),
        2 => "second".into(),
        3 => "third".into(),
        n => format!("{n}th"),
    }
}

/// Why an ACK goes now, for counters and the why-trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AckReason {
    /// The `immediate` policy acknowledges every segment.
    Immediate,
    /// RFC 1122 4.2.3.2 / RFC 5681 4.2: the Nth segment since the last ACK
    /// (`full`: counting only full-sized ones).
    EveryNth { n: u32, full: bool },
    /// Westfield (003): more than `limit` segments arrived since we last sent data.
    Interactivity { count: u32, limit: u32 },
    /// Mills (003): the right window edge moved more than one MSS since the last ACK.
    RightEdge { moved: u32 },
    /// Linux-like: more than one MSS arrived since the last ACK (tcp_input.c __tcp_ack_snd_check).
    MoreThanMss { bytes: u32 },
    /// Linux-like quick-ACK mode; `left` quick ACKs remained before this one.
    QuickAck { left: u32 },
    /// Linux-like: a read emptied a queue that held small pushed segments
    /// (tcp.c tcp_cleanup_rbuf, ICSK_ACK_PUSHED / ICSK_ACK_PUSHED2).
    ReadPushed { twice: bool },
    /// RFC 5681 4.2: out-of-order segment or gap fill (also duplicates, RFC 9293).
    OutOfOrder,
    /// The delayed-ACK timer fired; `delay` is what it was set for.
    Timer { delay: Duration },
    /// Window update after the application read (RFC 1122 4.2.3.3).
    WindowUpdate,
    /// Outgoing data carried the pending ACK.
    Piggyback,
    /// Acknowledges the peer's SYN-ACK (RFC 9293 3.10.7.3).
    Handshake,
    /// Acknowledges the peer's FIN at once (RFC 9293 3.10.7.4 eighth step).
    Fin,
}

impl AckReason {
    /// Stable short name, as used in JSON traces and summaries.
    pub fn name(self) -> &'static str {
        match self {
            AckReason::Immediate => "immediate",
            AckReason::EveryNth { .. } => "every-nth",
            AckReason::Interactivity { .. } => "interactivity",
            AckReason::RightEdge { .. } => "right-edge",
            AckReason::MoreThanMss { .. } => "more-than-mss",
            AckReason::QuickAck { .. } => "quickack",
            AckReason::ReadPushed { .. } => "read-pushed",
            AckReason::OutOfOrder => "out-of-order",
            AckReason::Timer { .. } => "timer",
            AckReason::WindowUpdate => "window-update",
            AckReason::Piggyback => "piggyback",
            AckReason::Handshake => "handshake",
            AckReason::Fin => "fin",
        }
    }
}

impl fmt::Display for AckReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            AckReason::Immediate => f.write_str("immediate"),
            AckReason::EveryNth { n, full } => write!(
                f,
                "{} {}segment",
                ordinal(n),
                if full { "full-sized " } else { "" }
            ),
            AckReason::Interactivity { count, limit } => {
                write!(f, "interactivity {count} > {limit}")
            }
            AckReason::RightEdge { moved } => write!(f, "right edge moved {moved} B"),
            AckReason::MoreThanMss { bytes } => write!(f, "{bytes} B unacknowledged > 1 MSS"),
            AckReason::QuickAck { left } => write!(f, "quick-ACK mode ({left} left)"),
            AckReason::ReadPushed { twice } => write!(
                f,
                "read emptied the queue after {} small segment{}",
                if twice { "two" } else { "a" },
                if twice { "s" } else { "" }
            ),
            AckReason::OutOfOrder => f.write_str("out of order"),
            AckReason::Timer { delay } => write!(f, "timer {}", fmt_ms(delay)),
            AckReason::WindowUpdate => f.write_str("window update"),
            AckReason::Piggyback => f.write_str("carried by data"),
            AckReason::Handshake => f.write_str("handshake"),
            AckReason::Fin => f.write_str("FIN"),
        }
    }
}

/// Why an ACK was deferred, for the why-trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DelayReason {
    /// Fewer than N segments since the last ACK (`full`: counting full-sized ones).
    Waiting { have: u32, need: u32, full: bool },
    /// Westfield: `count` segments since we last sent data, not more than `limit`.
    Interactivity { count: u32, limit: u32 },
    /// Mills: the right edge moved only `moved` bytes, not more than one MSS.
    RightEdge { moved: u32 },
    /// Doupnik 1.6: the delay follows the RTT (`srtt`), clamped if `clamped`.
    Rtt { srtt: Duration, clamped: bool },
    /// Doupnik 1.6 fallback: no RTT sample yet, the fixed delay applies.
    NoRttYet,
    /// Linux-like: not in quick-ACK mode; `pingpong` when the flow looks interactive.
    QuickAckOff { pingpong: bool },
    /// `window_update = "delayed"`: the window a read opened waits for the ACK policy.
    WindowUpdate,
}

impl fmt::Display for DelayReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            DelayReason::Waiting {
                have: 1,
                need: 2,
                full: false,
            } => f.write_str("lone segment"),
            DelayReason::Waiting { have, need, full } => write!(
                f,
                "{have} of {need} {}segments",
                if full { "full-sized " } else { "" }
            ),
            DelayReason::Interactivity { count, limit } => {
                write!(f, "interactivity {count} <= {limit}")
            }
            DelayReason::RightEdge { moved } => {
                write!(f, "right edge moved {moved} B, not more than one MSS")
            }
            DelayReason::Rtt { srtt, clamped } => write!(
                f,
                "SRTT {}{}",
                fmt_ms(srtt),
                if clamped { ", clamped" } else { "" }
            ),
            DelayReason::NoRttYet => f.write_str("no RTT sample yet"),
            DelayReason::QuickAckOff { pingpong: true } => f.write_str("ping-pong flow"),
            DelayReason::QuickAckOff { pingpong: false } => f.write_str("quick-ACK mode over"),
            DelayReason::WindowUpdate => f.write_str("window update waits for the ACK policy"),
        }
    }
}

/// A policy's verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AckDecision {
    /// Send an ACK now.
    Now(AckReason),
    /// Send an ACK no later than `until` (an earlier pending deadline stays).
    Delay { until: Instant, reason: DelayReason },
}

/// When to acknowledge: one small type per policy.
pub trait AckPolicy: fmt::Debug + Send {
    /// An in-order data segment arrived.
    fn on_data(&mut self, ctx: &AckCtx) -> AckDecision;
    /// The application's read opened the window enough to announce (RFC 1122
    /// 4.2.3.3) and `window_update = "delayed"`: when should that ACK go?
    fn on_window_open(&mut self, ctx: &AckCtx) -> AckDecision;
    /// This side sent a segment; `data` if it carried payload, `acked_new` if it
    /// acknowledged data not acknowledged before.
    fn on_sent(&mut self, _now: Instant, _data: bool, _acked_new: bool) {}
    /// An active open completed (the SYN-ACK came in); `writer_waiting` when
    /// data is queued beyond what the SYN carried, as when a write blocks on
    /// the connection.
    fn on_connected(&mut self, _ctx: &AckCtx, _writer_waiting: bool) {}
    /// The delayed-ACK timer fired.
    fn on_timer(&mut self, _ctx: &AckCtx) {}
    /// Out-of-order or duplicate data arrived (the engine ACKs it at once).
    fn on_out_of_order(&mut self, _ctx: &AckCtx) {}
    /// The application's read emptied the receive queue while an ACK is owed:
    /// `Some` sends it now (Linux tcp_cleanup_rbuf); the default waits.
    fn on_read_emptied(&mut self, _ctx: &AckCtx) -> Option<AckReason> {
        None
    }
    /// The peer's segment size as this policy estimates it (Linux's
    /// icsk_ack.rcv_mss, TCP_INFO's tcpi_rcv_mss), once data has arrived.
    fn rcv_mss(&self) -> Option<usize> {
        None
    }
}

/// Which segments count toward "ACK every Nth segment".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum DelackCount {
    /// Any data segment (BSD; what Cheshire describes, 004).
    #[default]
    Any,
    /// Only full-sized segments (RFC 1122 4.2.3.2's wording).
    Full,
}

impl FromStr for DelackCount {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "any" => Ok(DelackCount::Any),
            "full" => Ok(DelackCount::Full),
            _ => Err(format!(
                "unknown delack_count {s:?}{} (expected \"any\" or \"full\")",
                crate::suggest::did_you_mean(s, ["any", "full"])
            )),
        }
    }
}

impl fmt::Display for DelackCount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DelackCount::Any => "any",
            DelackCount::Full => "full",
        })
    }
}

/// Whether a window the application's read opened is announced at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum WindowUpdate {
    /// At once, once the right edge moves by min(half the buffer, 2 x MSS)
    /// (RFC 1122 4.2.3.3; BSD tcp_output.c: adv >= 2 * t_maxseg or 2 * adv >= sb_hiwat).
    #[default]
    Immediate,
    /// It waits for the ACK policy like any other ACK ("sociable" Tops-20, 003).
    Delayed,
    /// At once only when the window at least doubles (Linux tcp.c
    /// tcp_cleanup_rbuf: "Lots means at least twice"); else it waits.
    Doubling,
}

impl WindowUpdate {
    const NAMES: [&'static str; 3] = ["immediate", "delayed", "doubling"];
}

impl FromStr for WindowUpdate {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "immediate" => Ok(WindowUpdate::Immediate),
            "delayed" => Ok(WindowUpdate::Delayed),
            "doubling" => Ok(WindowUpdate::Doubling),
            _ => Err(format!(
                "unknown window_update {s:?}{} (expected \"immediate\", \"delayed\" or \"doubling\")",
                crate::suggest::did_you_mean(s, Self::NAMES)
            )),
        }
    }
}

impl fmt::Display for WindowUpdate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            WindowUpdate::Immediate => "immediate",
            WindowUpdate::Delayed => "delayed",
            WindowUpdate::Doubling => "doubling",
        })
    }
}

/// Which window every segment we send offers (receiver SWS avoidance).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum WindowAdvertise {
    /// Hold the right edge until it can move by min(half the advertisable
    /// window, one MSS), on every segment (RFC 1122 4.2.3.3's algorithm).
    #[default]
    Rfc1122,
    /// All free space on every segment, zero (that is, the edge held) only
    /// while it is under both a quarter of the buffer and one MSS (BSD
    /// tcp_output.c: "recwin < sb_hiwat / 4 && recwin < t_maxseg").
    Bsd,
    /// Free space, zero while under half the buffer and under 1/16 of it or
    /// one MSS; without window scaling a multiple of the MSS, kept while
    /// within one MSS of the free space (Linux tcp_output.c __tcp_select_window).
    Linux,
}

impl WindowAdvertise {
    const NAMES: [&'static str; 3] = ["rfc1122", "bsd", "linux"];
}

impl FromStr for WindowAdvertise {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "rfc1122" => Ok(WindowAdvertise::Rfc1122),
            "bsd" => Ok(WindowAdvertise::Bsd),
            "linux" => Ok(WindowAdvertise::Linux),
            _ => Err(format!(
                "unknown window_advertise {s:?}{} (expected \"rfc1122\", \"bsd\" or \"linux\")",
                crate::suggest::did_you_mean(s, Self::NAMES)
            )),
        }
    }
}

impl fmt::Display for WindowAdvertise {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            WindowAdvertise::Rfc1122 => "rfc1122",
            WindowAdvertise::Bsd => "bsd",
            WindowAdvertise::Linux => "linux",
        })
    }
}

/// The classic delayed-ACK settings shared by the policies that "delay as
/// `delayed` does" (RFC 1122 4.2.3.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DelackParams {
    /// One-shot delay (`delack`).
    pub delay: Duration,
    /// ACK at once on every Nth segment (`delack_segments`).
    pub segments: u32,
    /// Which segments count (`delack_count`).
    pub count: DelackCount,
    /// Free-running tick instead of the one-shot (`delack_tick`; BSD fast timer 200 ms, lwIP 250 ms).
    pub tick: Option<Duration>,
}

impl DelackParams {
    pub fn from_config(cfg: &Config) -> Self {
        DelackParams {
            delay: cfg.delack,
            segments: cfg.delack_segments,
            count: cfg.delack_count,
            tick: cfg.delack_tick,
        }
    }

    /// When an ACK deferred now must leave: after the one-shot `delay`, or at
    /// the first tick of the free-running timer after now (BSD tcp_fasttimo,
    /// lwIP tcp_fasttmr: the wait is anywhere up to one tick).
    pub fn deadline(&self, now: Instant) -> Instant {
        match self.tick {
            Some(t) if !t.is_zero() => {
                let t = u64::try_from(t.as_nanos()).unwrap_or(u64::MAX);
                let k = now.as_nanos() / t + 1;
                Instant::from_nanos(k.saturating_mul(t))
            }
            _ => now + self.delay,
        }
    }

    /// RFC 1122 4.2.3.2 / RFC 5681 4.2: ACK at once on the Nth segment, else wait.
    pub fn decide(&self, ctx: &AckCtx) -> AckDecision {
        let full = self.count == DelackCount::Full;
        let have = if full {
            ctx.full_segs_since_ack
        } else {
            ctx.segs_since_ack
        };
        if have >= self.segments {
            AckDecision::Now(AckReason::EveryNth { n: have, full })
        } else {
            AckDecision::Delay {
                until: self.deadline(ctx.now),
                reason: DelayReason::Waiting {
                    have,
                    need: self.segments,
                    full,
                },
            }
        }
    }

    fn delay(&self, ctx: &AckCtx, reason: DelayReason) -> AckDecision {
        AckDecision::Delay {
            until: self.deadline(ctx.now),
            reason,
        }
    }
}

/// ACK every segment at once.
#[derive(Debug, Default)]
pub struct Immediate;

impl AckPolicy for Immediate {
    fn on_data(&mut self, _ctx: &AckCtx) -> AckDecision {
        AckDecision::Now(AckReason::Immediate)
    }
    fn on_window_open(&mut self, _ctx: &AckCtx) -> AckDecision {
        AckDecision::Now(AckReason::WindowUpdate)
    }
}

/// RFC 1122 4.2.3.2 delayed ACK: ACK at least every Nth segment (BSD counts any
/// data segment, RFC 1122 full-sized ones), otherwise within the delayed-ACK timeout.
#[derive(Debug)]
pub struct Delayed {
    pub p: DelackParams,
}

impl AckPolicy for Delayed {
    fn on_data(&mut self, ctx: &AckCtx) -> AckDecision {
        self.p.decide(ctx)
    }
    fn on_window_open(&mut self, ctx: &AckCtx) -> AckDecision {
        self.p.delay(ctx, DelayReason::WindowUpdate)
    }
}

/// Westfield's "interactivity" (Improving TCP throughput, 1985): count segments
/// received since this side last sent data; above N, ACK at once, else delay as `delayed`.
#[derive(Debug)]
pub struct Interactivity {
    pub p: DelackParams,
    pub limit: u32,
    /// Data segments received since this side last sent a segment carrying data.
    count: u32,
}

impl Interactivity {
    pub fn new(p: DelackParams, limit: u32) -> Self {
        Interactivity { p, limit, count: 0 }
    }
}

impl AckPolicy for Interactivity {
    fn on_data(&mut self, ctx: &AckCtx) -> AckDecision {
        self.count = self.count.saturating_add(ctx.seg_count.max(1));
        let (count, limit) = (self.count, self.limit);
        if count > limit {
            return AckDecision::Now(AckReason::Interactivity { count, limit });
        }
        match self.p.decide(ctx) {
            AckDecision::Delay { until, .. } => AckDecision::Delay {
                until,
                reason: DelayReason::Interactivity { count, limit },
            },
            now => now,
        }
    }
    fn on_window_open(&mut self, ctx: &AckCtx) -> AckDecision {
        self.p.delay(ctx, DelayReason::WindowUpdate)
    }
    fn on_sent(&mut self, _now: Instant, data: bool, _acked_new: bool) {
        // Pure ACKs do not count: a one-way flow never sends data (Westfield's
        // "minimally interactive" connection).
        if data {
            self.count = 0;
        }
    }
    fn on_out_of_order(&mut self, _ctx: &AckCtx) {
        self.count = self.count.saturating_add(1);
    }
}

/// Mills' fuzzball rule (mod.protocols.tcp-ip, 1985): ACK at once when the right
/// window edge moved more than one MSS since the last ACK, otherwise within the nominal delay.
#[derive(Debug)]
pub struct Fuzzball {
    pub p: DelackParams,
}

impl Fuzzball {
    fn decide(&self, ctx: &AckCtx) -> AckDecision {
        let moved = u32::try_from(ctx.right_edge_moved).unwrap_or(u32::MAX);
        if ctx.right_edge_moved > ctx.mss {
            AckDecision::Now(AckReason::RightEdge { moved })
        } else {
            self.p.delay(ctx, DelayReason::RightEdge { moved })
        }
    }
}

impl AckPolicy for Fuzzball {
    fn on_data(&mut self, ctx: &AckCtx) -> AckDecision {
        self.decide(ctx)
    }
    fn on_window_open(&mut self, ctx: &AckCtx) -> AckDecision {
        self.decide(ctx)
    }
}

/// Doupnik 1.6 (A new TCP transmission policy replacing Nagle mode): a delay matched to the session's
/// RTT, k x SRTT clamped to [min, max]; the fixed delay before any RTT sample.
#[derive(Debug)]
pub struct Adaptive {
    pub p: DelackParams,
    pub k: f64,
    pub min: Duration,
    pub max: Duration,
}

impl Adaptive {
    fn delay(&self, ctx: &AckCtx) -> AckDecision {
        let Some(srtt) = ctx.srtt else {
            return self.p.delay(ctx, DelayReason::NoRttYet);
        };
        let want = srtt.mul_f64(self.k);
        let d = want.clamp(self.min, self.max);
        AckDecision::Delay {
            until: ctx.now + d,
            reason: DelayReason::Rtt {
                srtt,
                clamped: d != want,
            },
        }
    }
}

impl AckPolicy for Adaptive {
    fn on_data(&mut self, ctx: &AckCtx) -> AckDecision {
        match self.p.decide(ctx) {
            AckDecision::Delay { .. } => self.delay(ctx),
            now => now,
        }
    }
    fn on_window_open(&mut self, ctx: &AckCtx) -> AckDecision {
        self.delay(ctx)
    }
}

/// Linux's TCP_ATO_MIN and TCP_DELACK_MIN (HZ/25): the shortest ACK timeout.
pub const QUICKACK_ATO_MIN: Duration = Duration::from_millis(40);
/// Linux's TCP_DELACK_MAX (HZ/5): the longest ACK timeout this model uses.
pub const QUICKACK_ATO_MAX: Duration = Duration::from_millis(200);
/// Linux's TCP_MAX_QUICKACKS.
pub const MAX_QUICKACKS: u32 = 16;

/// Linux-like quick ACK (modelled on Linux tcp_input.c tcp_event_data_recv,
/// __tcp_ack_snd_check, tcp_incr_quickack; tcp_output.c tcp_send_delayed_ack,
/// tcp_event_data_sent; tcp_timer.c tcp_delack_timer_handler; tcp.c
/// tcp_cleanup_rbuf's ACK after a read of small pushed segments). Not exact: no
/// receive-buffer tuning or ECN; GRO is the simulator host's
/// `rx_coalesce`, which merges segments before this policy sees them. Quick-ACK mode (every
/// segment ACKed) for the first segments and after an idle gap longer than
/// the RTO; otherwise ACK once more than one MSS is unacknowledged, or after
/// an adaptive timeout (ATO) of 40 to 200 ms; replying within the ATO marks
/// the flow interactive (ping-pong), which turns quick-ACK mode off.
#[derive(Debug)]
pub struct QuickAck {
    /// The least ACK timeout (TCP_ATO_MIN; the `ato_min` setting).
    ato_min: Duration,
    /// Quick ACKs left (icsk_ack.quick).
    quick: u32,
    /// ACK timeout estimate (icsk_ack.ato); zero before the first data.
    ato: Duration,
    /// When data last arrived (icsk_ack.lrcvtime).
    lrcvtime: Option<Instant>,
    /// Interactive flow detected (inet_csk_in_pingpong_mode).
    pingpong: bool,
    /// Small segments since the last ACK: 1 = ICSK_ACK_PUSHED, 2 = also PUSHED2.
    pushed: u8,
    /// Estimated peer MSS (icsk_ack.rcv_mss); zero before the first data.
    rcv_mss: usize,
    /// Size of the last segment of at least TCP_MSS_DEFAULT (icsk_ack.last_seg_size).
    last_seg_size: usize,
}

/// Linux's TCP_MSS_DEFAULT: the least segment tcp_measure_rcv_mss takes as full-sized.
const LINUX_MSS_DEFAULT: usize = 536;

impl Default for QuickAck {
    fn default() -> Self {
        QuickAck::new(QUICKACK_ATO_MIN)
    }
}

impl QuickAck {
    /// A receiver whose least ACK timeout is `ato_min`.
    pub fn new(ato_min: Duration) -> Self {
        QuickAck {
            ato_min,
            quick: 0,
            ato: Duration::ZERO,
            lrcvtime: None,
            pingpong: false,
            pushed: 0,
            rcv_mss: 0,
            last_seg_size: 0,
        }
    }

    /// tcp_measure_rcv_mss: a segment under the MSS estimate marks the pending
    /// ACK PUSHED (a second one PUSHED2), unless it is of at least 536 bytes and
    /// the same size as the last one, which makes it the new estimate.
    fn measure_rcv_mss(&mut self, ctx: &AckCtx) {
        let (len, lss) = (ctx.seg_len, self.last_seg_size);
        if self.rcv_mss == 0 {
            // tcp_initialize_rcv_mss: min(advmss, TCP_MSS_DEFAULT), at least TCP_MIN_MSS.
            self.rcv_mss = ctx.mss.clamp(88, LINUX_MSS_DEFAULT);
        }
        self.last_seg_size = 0;
        if len >= self.rcv_mss {
            self.rcv_mss = len.min(ctx.mss.max(1));
            return;
        }
        if len >= LINUX_MSS_DEFAULT {
            self.last_seg_size = len;
            if len == lss {
                self.rcv_mss = len;
                return;
            }
        }
        self.pushed = (self.pushed + 1).min(2);
    }

    /// tcp_incr_quickack: rcv_wnd / (2 x MSS) quick ACKs, at least 2, at most 16.
    fn incr_quick(&mut self, ctx: &AckCtx) {
        let q = (ctx.rcv_wnd / (2 * ctx.mss.max(1))).clamp(2, MAX_QUICKACKS as usize) as u32;
        self.quick = self.quick.max(q);
    }

    /// tcp_send_delayed_ack: the ATO, bounded by max(SRTT, 40 ms) and 200 ms.
    fn timeout(&self, ctx: &AckCtx) -> Duration {
        let mut max = QUICKACK_ATO_MAX;
        if let Some(srtt) = ctx.srtt {
            max = max.min(srtt.max(self.ato_min));
        }
        self.ato.min(max).max(self.ato_min)
    }

    fn delay(&self, ctx: &AckCtx, reason: DelayReason) -> AckDecision {
        AckDecision::Delay {
            until: ctx.now + self.timeout(ctx),
            reason,
        }
    }
}

impl AckPolicy for QuickAck {
    fn on_data(&mut self, ctx: &AckCtx) -> AckDecision {
        let now = ctx.now;
        match self.lrcvtime {
            None => {
                // The first data: start in quick-ACK mode.
                self.incr_quick(ctx);
                self.ato = self.ato_min;
            }
            Some(t) => {
                let m = now - t;
                if m <= self.ato_min / 2 {
                    self.ato = self.ato / 2 + self.ato_min / 2;
                } else if m < self.ato {
                    self.ato = (self.ato / 2 + m).min(ctx.rto);
                } else if m > ctx.rto {
                    // Idle longer than the RTO: quick ACKs again.
                    self.incr_quick(ctx);
                }
            }
        }
        self.lrcvtime = Some(now);
        self.measure_rcv_mss(ctx);
        if ctx.bytes_since_ack > ctx.mss {
            let bytes = u32::try_from(ctx.bytes_since_ack).unwrap_or(u32::MAX);
            return AckDecision::Now(AckReason::MoreThanMss { bytes });
        }
        if self.quick > 0 && !self.pingpong {
            return AckDecision::Now(AckReason::QuickAck { left: self.quick });
        }
        self.delay(
            ctx,
            DelayReason::QuickAckOff {
                pingpong: self.pingpong,
            },
        )
    }
    fn on_window_open(&mut self, ctx: &AckCtx) -> AckDecision {
        self.delay(ctx, DelayReason::WindowUpdate)
    }
    fn on_sent(&mut self, now: Instant, data: bool, acked_new: bool) {
        // Every segment carries the ACK: inet_csk_clear_xmit_timer clears
        // icsk_ack.pending, the PUSHED flags with it.
        self.pushed = 0;
        // tcp_event_data_sent: a reply within the ATO of the last arrival.
        if data && self.lrcvtime.is_some_and(|t| now - t < self.ato) {
            self.pingpong = true;
        }
        // tcp_event_ack_sent -> tcp_dec_quickack_mode.
        if acked_new && self.quick > 0 {
            self.quick -= 1;
            if self.quick == 0 {
                self.ato = self.ato_min;
            }
        }
    }
    fn on_connected(&mut self, ctx: &AckCtx, writer_waiting: bool) {
        // tcp_rcv_synsent_state_process: with a writer waiting
        // (sk_write_pending) the ACK is left to its data and quick-ACK mode
        // starts now (tcp_enter_quickack_mode); tcp_finish_connect stamps
        // lrcvtime, so that data, sent at once, marks the flow interactive.
        if writer_waiting {
            self.lrcvtime = Some(ctx.now);
            self.incr_quick(ctx);
            self.pingpong = false;
            self.ato = self.ato_min;
        }
    }
    fn on_timer(&mut self, ctx: &AckCtx) {
        // tcp_delack_timer_handler: a missed delayed ACK.
        if self.pingpong {
            self.pingpong = false;
            self.ato = self.ato_min;
        } else {
            self.ato = (self.ato * 2).min(ctx.rto).max(self.ato_min);
        }
    }
    fn on_out_of_order(&mut self, ctx: &AckCtx) {
        // tcp_enter_quickack_mode.
        self.incr_quick(ctx);
        self.pingpong = false;
        self.ato = self.ato_min;
    }
    fn on_read_emptied(&mut self, _ctx: &AckCtx) -> Option<AckReason> {
        // tcp_cleanup_rbuf: "If this read emptied read buffer, we send ACK, if
        // connection is not bidirectional, user drained receive buffer and
        // there was a small segment in queue" (PUSHED2 even when bidirectional).
        match self.pushed {
            2 => Some(AckReason::ReadPushed { twice: true }),
            1 if !self.pingpong => Some(AckReason::ReadPushed { twice: false }),
            _ => None,
        }
    }
    fn rcv_mss(&self) -> Option<usize> {
        (self.rcv_mss > 0).then_some(self.rcv_mss)
    }
}

/// An ACK policy by name, as configured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum AckPolicyKind {
    Immediate,
    #[default]
    Delayed,
    Interactivity(u32),
    Fuzzball,
    Adaptive,
    QuickAck,
}

impl AckPolicyKind {
    /// Every policy: (name, one-line description with its source).
    pub const ALL: &'static [(&'static str, &'static str)] = &[
        (
            "immediate",
            "ACK every data segment at once (no delayed ACK; RFC 9293 3.10.7.4)",
        ),
        (
            "delayed",
            "ACK every `delack_segments`th segment (2; `delack_count` any or full) or after `delack` (200 ms) or at the next `delack_tick` (RFC 1122 4.2.3.2, RFC 5681 4.2; BSD; Solaris tcp_deferred_ack_interval, Davids 2001)",
        ),
        (
            "interactivity:N",
            "ACK at once when more than N segments arrived since this side last sent data, else as delayed (Westfield, Improving TCP throughput, 1985)",
        ),
        (
            "fuzzball",
            "ACK at once when the right window edge moved more than one MSS since the last ACK, else within `delack` (Mills' fuzzball rule, mod.protocols.tcp-ip 1985)",
        ),
        (
            "adaptive",
            "delay = `adaptive_k` x SRTT clamped to [`adaptive_min`, `adaptive_max`], `delack` before an RTT sample; ACK every Nth as delayed (Doupnik 1.6)",
        ),
        (
            "quickack",
            "Linux-like: quick ACKs at start and after idle, ACK past one MSS, `ato_min` (40 ms) to 200 ms adaptive timeout, ping-pong detection (modelled on Linux tcp_input.c; not exact)",
        ),
    ];

    /// Builds the policy with its parameters from `cfg`.
    pub fn build(self, cfg: &Config) -> Box<dyn AckPolicy> {
        let p = DelackParams::from_config(cfg);
        match self {
            AckPolicyKind::Immediate => Box::new(Immediate),
            AckPolicyKind::Delayed => Box::new(Delayed { p }),
            AckPolicyKind::Interactivity(n) => Box::new(Interactivity::new(p, n)),
            AckPolicyKind::Fuzzball => Box::new(Fuzzball { p }),
            AckPolicyKind::Adaptive => Box::new(Adaptive {
                p,
                k: cfg.adaptive_k,
                min: cfg.adaptive_min,
                max: cfg.adaptive_max,
            }),
            AckPolicyKind::QuickAck => Box::new(QuickAck::new(cfg.ato_min)),
        }
    }
}

impl FromStr for AckPolicyKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s {
            "immediate" => AckPolicyKind::Immediate,
            "delayed" => AckPolicyKind::Delayed,
            "fuzzball" => AckPolicyKind::Fuzzball,
            "adaptive" => AckPolicyKind::Adaptive,
            "quickack" => AckPolicyKind::QuickAck,
            _ => {
                if let Some(n) = s.strip_prefix("interactivity:") {
                    return n.parse::<u32>().map(AckPolicyKind::Interactivity).map_err(|_| {
                        format!(
                            "bad ACK policy {s:?}: interactivity takes a segment count, e.g. interactivity:4"
                        )
                    });
                }
                return Err(crate::suggest::unknown_policy("ACK policy", s, Self::ALL));
            }
        })
    }
}

impl fmt::Display for AckPolicyKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AckPolicyKind::Immediate => f.write_str("immediate"),
            AckPolicyKind::Delayed => f.write_str("delayed"),
            AckPolicyKind::Interactivity(n) => write!(f, "interactivity:{n}"),
            AckPolicyKind::Fuzzball => f.write_str("fuzzball"),
            AckPolicyKind::Adaptive => f.write_str("adaptive"),
            AckPolicyKind::QuickAck => f.write_str("quickack"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: usize = 1000;

    fn ctx(segs: u32, full: u32) -> AckCtx {
        AckCtx {
            now: Instant::from_millis(1000),
            mss: MSS,
            seg_len: MSS,
            seg_count: 1,
            segs_since_ack: segs,
            full_segs_since_ack: full,
            bytes_since_ack: full as usize * MSS,
            right_edge_moved: 0,
            rcv_wnd: 64 * MSS,
            srtt: None,
            rto: Duration::from_millis(300),
        }
    }

    fn params() -> DelackParams {
        DelackParams {
            delay: Duration::from_millis(200),
            segments: 2,
            count: DelackCount::Any,
            tick: None,
        }
    }

    fn at(ms: u64) -> Instant {
        Instant::from_millis(ms)
    }

    #[test]
    fn delayed_counts_any_or_full() {
        let mut any = Delayed { p: params() };
        assert_eq!(
            any.on_data(&ctx(1, 1)),
            AckDecision::Delay {
                until: at(1200),
                reason: DelayReason::Waiting {
                    have: 1,
                    need: 2,
                    full: false
                }
            }
        );
        // A small segment then a full one: BSD counts both.
        assert_eq!(
            any.on_data(&ctx(2, 1)),
            AckDecision::Now(AckReason::EveryNth { n: 2, full: false })
        );
        let mut full = Delayed {
            p: DelackParams {
                count: DelackCount::Full,
                ..params()
            },
        };
        assert!(matches!(
            full.on_data(&ctx(2, 1)),
            AckDecision::Delay { .. }
        ));
        assert_eq!(
            full.on_data(&ctx(3, 2)),
            AckDecision::Now(AckReason::EveryNth { n: 2, full: true })
        );
    }

    #[test]
    fn tick_is_free_running() {
        let p = DelackParams {
            tick: Some(Duration::from_millis(200)),
            ..params()
        };
        assert_eq!(p.deadline(at(1000)), at(1200));
        assert_eq!(p.deadline(at(1001)), at(1200));
        assert_eq!(p.deadline(at(1199)), at(1200));
        assert_eq!(p.deadline(Instant::from_micros(1_050_500)), at(1200));
    }

    #[test]
    fn interactivity_counts_segments_between_data_sent() {
        let mut p = Interactivity::new(params(), 2);
        let c = ctx(1, 1);
        assert!(matches!(p.on_data(&c), AckDecision::Delay { .. }));
        p.on_sent(c.now, false, true); // a pure ACK does not reset the count
        assert!(matches!(p.on_data(&c), AckDecision::Delay { .. }));
        p.on_sent(c.now, false, true);
        assert_eq!(
            p.on_data(&c),
            AckDecision::Now(AckReason::Interactivity { count: 3, limit: 2 })
        );
        assert_eq!(
            AckReason::Interactivity { count: 5, limit: 4 }.to_string(),
            "interactivity 5 > 4"
        );
        p.on_sent(c.now, true, true); // an echo resets it
        assert!(matches!(p.on_data(&c), AckDecision::Delay { .. }));
    }

    #[test]
    fn interactivity_counts_a_gro_packet_as_its_segments() {
        let mut p = Interactivity::new(params(), 2);
        let c = AckCtx {
            seg_count: 3,
            ..ctx(3, 3)
        };
        assert_eq!(
            p.on_data(&c),
            AckDecision::Now(AckReason::Interactivity { count: 3, limit: 2 })
        );
    }

    #[test]
    fn fuzzball_needs_more_than_one_mss_of_right_edge() {
        let mut p = Fuzzball { p: params() };
        let c = AckCtx {
            right_edge_moved: MSS,
            ..ctx(2, 2)
        };
        assert!(matches!(p.on_data(&c), AckDecision::Delay { .. }));
        let c = AckCtx {
            right_edge_moved: 2 * MSS,
            ..c
        };
        assert_eq!(
            p.on_data(&c),
            AckDecision::Now(AckReason::RightEdge { moved: 2000 })
        );
        assert_eq!(
            AckReason::RightEdge { moved: 2896 }.to_string(),
            "right edge moved 2896 B"
        );
    }

    #[test]
    fn adaptive_follows_srtt_within_bounds() {
        let mut p = Adaptive {
            p: params(),
            k: 1.0,
            min: Duration::from_millis(5),
            max: Duration::from_millis(100),
        };
        let c = ctx(1, 1);
        assert_eq!(
            p.on_data(&c),
            AckDecision::Delay {
                until: at(1200),
                reason: DelayReason::NoRttYet
            }
        );
        let c = AckCtx {
            srtt: Some(Duration::from_millis(30)),
            ..c
        };
        assert!(matches!(p.on_data(&c), AckDecision::Delay { until, .. } if until == at(1030)));
        let c = AckCtx {
            srtt: Some(Duration::from_millis(300)),
            ..c
        };
        assert!(matches!(
            p.on_data(&c),
            AckDecision::Delay { until, reason: DelayReason::Rtt { clamped: true, .. } } if until == at(1100)
        ));
    }

    #[test]
    fn quickack_starts_quick_then_detects_ping_pong() {
        let mut p = QuickAck::default();
        let mut c = AckCtx {
            rcv_wnd: 4 * MSS,
            ..ctx(1, 1)
        };
        // rcv_wnd / (2 MSS) = 2 quick ACKs.
        assert!(matches!(
            p.on_data(&c),
            AckDecision::Now(AckReason::QuickAck { left: 2 })
        ));
        p.on_sent(c.now, false, true);
        c.now += Duration::from_millis(1);
        assert!(matches!(p.on_data(&c), AckDecision::Now(_)));
        p.on_sent(c.now, false, true);
        c.now += Duration::from_millis(1);
        assert_eq!(
            p.on_data(&c),
            AckDecision::Delay {
                until: c.now + QUICKACK_ATO_MIN,
                reason: DelayReason::QuickAckOff { pingpong: false }
            }
        );
        // Replying within the ATO marks the flow interactive.
        p.on_sent(c.now, true, true);
        assert!(p.pingpong);
        // More than one MSS unacknowledged goes at once regardless.
        let c = AckCtx {
            bytes_since_ack: 2 * MSS,
            ..c
        };
        assert!(matches!(
            p.on_data(&c),
            AckDecision::Now(AckReason::MoreThanMss { bytes: 2000 })
        ));
    }

    #[test]
    fn quickack_waits_its_least_timeout_once_quick_mode_is_over() {
        let mut cfg = Config {
            ato_min: Duration::from_millis(48),
            ..Config::default()
        };
        let mut p = QuickAck::new(cfg.ato_min);
        let mut c = AckCtx {
            rcv_wnd: 4 * MSS,
            ..ctx(1, 1)
        };
        for _ in 0..2 {
            assert!(matches!(p.on_data(&c), AckDecision::Now(_)));
            p.on_sent(c.now, false, true);
            c.now += Duration::from_millis(1);
        }
        let AckDecision::Delay { until, .. } = p.on_data(&c) else {
            panic!("quick-ACK mode should be over");
        };
        assert_eq!(until - c.now, Duration::from_millis(48));
        // The setting reaches the policy through its table row.
        crate::settings::set_text(&mut cfg, "ato_min", "30ms").unwrap();
        assert!(cfg.validate().is_ok());
        cfg.ato_min = Duration::ZERO;
        assert_eq!(cfg.validate().unwrap_err().key, "ato_min");
    }

    #[test]
    fn names_round_trip() {
        for (name, _) in AckPolicyKind::ALL {
            let name = name.replace(":N", ":4");
            let k: AckPolicyKind = name.parse().unwrap();
            assert_eq!(k.to_string(), name);
        }
        assert!("interactivity:x".parse::<AckPolicyKind>().is_err());
        assert!("never".parse::<AckPolicyKind>().is_err());
        assert_eq!(fmt_ms(Duration::from_millis(200)).to_string(), "200 ms");
        assert_eq!(fmt_ms(Duration::from_micros(12_500)).to_string(), "12.5 ms");
        assert_eq!(
            AckReason::Timer {
                delay: Duration::from_millis(200)
            }
            .to_string(),
            "timer 200 ms"
        );
        assert_eq!(
            AckReason::EveryNth { n: 2, full: false }.to_string(),
            "second segment"
        );
    }
}
