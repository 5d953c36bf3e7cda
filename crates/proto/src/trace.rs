//! The why-trace: every time the engine holds data it could have sent, and
//! every time held data leaves, with the rule responsible (issue: "a trace that
//! says why each byte waited"). Recorded only when `Config::trace` is on.

use crate::config::BufferLimit;
use crate::policy::ack::fmt_ms;
use crate::policy::{AckReason, DelayReason, HoldReason};
use crate::time::{Duration, Instant};
use crate::wire::WireError;
use core::fmt;

/// The rule that kept data from leaving.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HoldRule {
    /// The send policy.
    Policy(HoldReason),
    /// The peer's advertised window is full (RFC 9293 3.8.6).
    PeerWindow,
    /// The congestion window is full (RFC 5681).
    Cwnd,
    /// Sender silly-window avoidance held a window-limited runt (RFC 1122 4.2.3.4).
    SenderSws,
}

impl HoldRule {
    /// Stable short name, as used in JSON traces and summaries.
    pub fn name(self) -> &'static str {
        match self {
            HoldRule::Policy(r) => r.name(),
            HoldRule::PeerWindow => "window",
            HoldRule::Cwnd => "cwnd",
            HoldRule::SenderSws => "sws",
        }
    }
}

impl fmt::Display for HoldRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HoldRule::Policy(r) => write!(f, "{r}"),
            HoldRule::PeerWindow => f.write_str("window: peer window full"),
            HoldRule::Cwnd => f.write_str("cwnd: congestion window full"),
            HoldRule::SenderSws => f.write_str("sws: window-limited runt (RFC 1122 4.2.3.4)"),
        }
    }
}

/// One decision of the engine.
#[derive(Clone, Debug, PartialEq)]
pub enum TraceEvent {
    /// Data that could have been sent was held.
    Hold {
        at: Instant,
        rule: HoldRule,
        /// Bytes in the held candidate.
        bytes: usize,
        /// Bytes unacknowledged at that moment.
        unacked: usize,
        /// The peer's window at that moment.
        peer_window: usize,
    },
    /// Held data left; `held` is how long since the hold began.
    Release {
        at: Instant,
        rule: HoldRule,
        bytes: usize,
        held: Duration,
    },
    /// An ACK was deferred until `deadline` (the earliest pending deadline), and why.
    AckDelayed {
        at: Instant,
        deadline: Instant,
        /// Data segments not yet acknowledged.
        segs: u32,
        reason: DelayReason,
    },
    /// An ACK left (pure, or riding on data), and why.
    AckSent {
        at: Instant,
        reason: AckReason,
        /// How long the oldest unacknowledged segment waited for it.
        waited: Duration,
    },
    /// The receive buffer, hence every window offered, was capped (RFC 1106 5).
    BufferCapped {
        at: Instant,
        requested: usize,
        granted: usize,
        limit: BufferLimit,
    },
    /// A segment's bytes could not be parsed; it was dropped and counted.
    InvalidSegment { at: Instant, error: WireError },
}

impl TraceEvent {
    pub fn at(&self) -> Instant {
        match self {
            TraceEvent::Hold { at, .. }
            | TraceEvent::Release { at, .. }
            | TraceEvent::AckDelayed { at, .. }
            | TraceEvent::AckSent { at, .. }
            | TraceEvent::BufferCapped { at, .. }
            | TraceEvent::InvalidSegment { at, .. } => *at,
        }
    }
}

impl fmt::Display for TraceEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TraceEvent::Hold {
                at,
                rule,
                bytes,
                unacked,
                peer_window,
            } => write!(
                f,
                "{at} hold {bytes} B ({rule}; {unacked} B unacknowledged, peer window {peer_window} B)"
            ),
            TraceEvent::Release {
                at,
                rule,
                bytes,
                held,
            } => write!(
                f,
                "{at} release {bytes} B held {:.3} ms by {}",
                held.as_secs_f64() * 1e3,
                rule.name()
            ),
            TraceEvent::AckDelayed {
                at,
                deadline,
                segs,
                reason,
            } => write!(
                f,
                "{at} delay ACK of {segs} segment(s) until {deadline} ({reason}, timer {})",
                fmt_ms(*deadline - *at)
            ),
            TraceEvent::AckSent { at, reason, waited } => write!(
                f,
                "{at} ACK ({reason}) after {:.3} ms",
                waited.as_secs_f64() * 1e3
            ),
            TraceEvent::BufferCapped {
                at,
                requested,
                granted,
                limit,
            } => write!(
                f,
                "{at} receive buffer {granted} B, not the {requested} B asked for ({}; RFC 1106 5)",
                limit.name()
            ),
            TraceEvent::InvalidSegment { at, error } => {
                write!(f, "{at} invalid segment dropped: {error}")
            }
        }
    }
}
