//! Send policies: given what window and cwnd allow, send now or hold.

use crate::time::Instant;
use core::fmt;
use core::str::FromStr;

/// What a send policy sees about one candidate segment (Doupnik 2.0: decide
/// after the window and congestion limits are applied).
#[derive(Clone, Copy, Debug)]
pub struct SendCtx {
    pub now: Instant,
    /// Effective send MSS (payload bytes).
    pub mss: usize,
    /// Unsent bytes in the send buffer (Doupnik 2.0 "available").
    pub available: usize,
    /// Bytes the peer window and cwnd let us send now (Doupnik 2.0 "allowed").
    pub allowed: usize,
    /// Length of the candidate segment: min(available, allowed, mss).
    pub seg_len: usize,
    /// Bytes sent and not yet acknowledged.
    pub in_flight: usize,
    /// The candidate segment ends exactly at an end of application data.
    pub ends_app_data: bool,
    /// A partial segment sent earlier is still unacknowledged (Minshall).
    pub unacked_partial: bool,
}

/// Why data that could have gone was held.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HoldReason {
    /// RFC 896 / RFC 1122 4.2.3.4: partial segment while data is unacknowledged.
    Nagle,
    /// Minshall: partial segment while an earlier partial one is unacknowledged.
    Minshall,
    /// Doupnik 2.1 Rule 2: partial segment that is not the end of application data.
    NotEndOfData,
    /// Solaris tcp_naglim_def: small segment while data is unacknowledged.
    Naglim,
    /// TCP_CORK: partial segment before a flush.
    Cork,
}

impl fmt::Display for HoldReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            HoldReason::Nagle => "nagle",
            HoldReason::Minshall => "minshall",
            HoldReason::NotEndOfData => "not end of application data",
            HoldReason::Naglim => "naglim",
            HoldReason::Cork => "cork",
        })
    }
}

/// A policy's verdict on the candidate segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendDecision {
    Send,
    Hold(HoldReason),
}

/// When to send: one small type per policy.
pub trait SendPolicy: fmt::Debug + Send {
    /// Decide on the candidate segment described by `ctx`.
    fn decide(&mut self, ctx: &SendCtx) -> SendDecision;
}

/// TCP_NODELAY (RFC 1122 4.2.3.4 allows disabling Nagle): send whatever is allowed.
#[derive(Debug, Default)]
pub struct NoDelay;

impl SendPolicy for NoDelay {
    fn decide(&mut self, _ctx: &SendCtx) -> SendDecision {
        SendDecision::Send
    }
}

/// A send policy by name, as configured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SendPolicyKind {
    /// Send as soon as window and cwnd allow.
    #[default]
    NoDelay,
}

impl SendPolicyKind {
    /// Every policy: (name, one-line description with its source).
    pub const ALL: &'static [(&'static str, &'static str)] = &[(
        "nodelay",
        "send whatever window and cwnd allow at once (TCP_NODELAY; RFC 1122 4.2.3.4)",
    )];

    pub fn build(self) -> Box<dyn SendPolicy> {
        match self {
            SendPolicyKind::NoDelay => Box::new(NoDelay),
        }
    }
}

impl FromStr for SendPolicyKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "nodelay" => Ok(SendPolicyKind::NoDelay),
            _ => Err(format!(
                "unknown send policy {s:?} (expected one of: {})",
                Self::ALL
                    .iter()
                    .map(|(n, _)| *n)
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    }
}

impl fmt::Display for SendPolicyKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SendPolicyKind::NoDelay => "nodelay",
        })
    }
}
