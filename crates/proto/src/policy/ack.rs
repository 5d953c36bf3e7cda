//! ACK policies: given an arriving data segment, acknowledge now or later.

use crate::time::{Duration, Instant};
use core::fmt;
use core::str::FromStr;

/// What an ACK policy sees when an in-order data segment arrives.
#[derive(Clone, Copy, Debug)]
pub struct AckCtx {
    pub now: Instant,
    /// Effective MSS of the peer's segments.
    pub mss: usize,
    /// Payload length of the segment that just arrived.
    pub seg_len: usize,
    /// Data segments received since we last sent an ACK, this one included.
    pub segs_since_ack: u32,
    /// Full-sized data segments received since we last sent an ACK, this one included.
    pub full_segs_since_ack: u32,
    /// Configured delayed-ACK timeout.
    pub delack: Duration,
    /// Configured "ACK every Nth segment".
    pub delack_segments: u32,
}

/// Why an ACK goes now (or was delayed), for counters and traces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AckReason {
    /// Policy acknowledges every segment.
    Immediate,
    /// RFC 1122 4.2.3.2 / RFC 5681 4.2: every second (Nth) segment.
    EveryNth,
    /// RFC 5681 4.2: out-of-order segment or gap fill.
    OutOfOrder,
    /// Delayed-ACK timer fired.
    Timer,
    /// Window update after the application read (RFC 1122 4.2.3.3).
    WindowUpdate,
    /// Outgoing data carried the pending ACK.
    Piggyback,
}

impl fmt::Display for AckReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AckReason::Immediate => "immediate",
            AckReason::EveryNth => "every Nth segment",
            AckReason::OutOfOrder => "out of order",
            AckReason::Timer => "delayed-ACK timer",
            AckReason::WindowUpdate => "window update",
            AckReason::Piggyback => "carried by data",
        })
    }
}

/// A policy's verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AckDecision {
    /// Send an ACK now.
    Now(AckReason),
    /// Send an ACK no later than this time (an earlier pending deadline stays).
    Delay(Instant),
}

/// When to acknowledge: one small type per policy.
pub trait AckPolicy: fmt::Debug + Send {
    /// An in-order data segment arrived.
    fn on_data(&mut self, ctx: &AckCtx) -> AckDecision;
}

/// ACK every segment at once.
#[derive(Debug, Default)]
pub struct Immediate;

impl AckPolicy for Immediate {
    fn on_data(&mut self, _ctx: &AckCtx) -> AckDecision {
        AckDecision::Now(AckReason::Immediate)
    }
}

/// RFC 1122 4.2.3.2 delayed ACK: ACK at least every Nth segment (BSD counts any
/// data segment), otherwise within the delayed-ACK timeout.
#[derive(Debug, Default)]
pub struct Delayed;

impl AckPolicy for Delayed {
    fn on_data(&mut self, ctx: &AckCtx) -> AckDecision {
        if ctx.segs_since_ack >= ctx.delack_segments {
            AckDecision::Now(AckReason::EveryNth)
        } else {
            AckDecision::Delay(ctx.now + ctx.delack)
        }
    }
}

/// An ACK policy by name, as configured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum AckPolicyKind {
    Immediate,
    #[default]
    Delayed,
}

impl AckPolicyKind {
    /// Every policy: (name, one-line description with its source).
    pub const ALL: &'static [(&'static str, &'static str)] = &[
        ("immediate", "ACK every data segment at once"),
        (
            "delayed",
            "ACK every 2nd segment or after `delack` (RFC 1122 4.2.3.2, RFC 5681 4.2)",
        ),
    ];

    pub fn build(self) -> Box<dyn AckPolicy> {
        match self {
            AckPolicyKind::Immediate => Box::new(Immediate),
            AckPolicyKind::Delayed => Box::new(Delayed),
        }
    }
}

impl FromStr for AckPolicyKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "immediate" => Ok(AckPolicyKind::Immediate),
            "delayed" => Ok(AckPolicyKind::Delayed),
            _ => Err(format!(
                "unknown ACK policy {s:?} (expected one of: {})",
                Self::ALL
                    .iter()
                    .map(|(n, _)| *n)
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    }
}

impl fmt::Display for AckPolicyKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AckPolicyKind::Immediate => "immediate",
            AckPolicyKind::Delayed => "delayed",
        })
    }
}
