//! tinygram-sim: the deterministic discrete-event network simulator.

pub mod event;
pub mod link;
pub mod units;

pub use event::EventQueue;
pub use link::{DropReason, Fate, Framing, Link, LinkConfig, LinkStats};
