//! Pluggable policies: when to send ([`send`]) and when to acknowledge ([`ack`]).
//! The engine applies window and congestion limits first; policies decide what
//! to do with what is allowed (Doupnik 2.0, "available" vs "allowed").

pub mod ack;
pub mod send;

pub use ack::{
    AckCtx, AckDecision, AckPolicy, AckPolicyKind, AckReason, DelackCount, DelayReason,
    WindowAdvertise, WindowUpdate,
};
pub use send::{HoldReason, SendCtx, SendDecision, SendPolicy, SendPolicyKind};
