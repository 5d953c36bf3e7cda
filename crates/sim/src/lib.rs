//! tinygram-sim: the deterministic discrete-event network simulator.

pub mod event;
pub mod link;
pub mod scenario;
pub mod units;

pub use event::EventQueue;
pub use link::{DropReason, Fate, Framing, Link, LinkConfig, LinkStats};
pub use scenario::{Direction, HostConfig, KeyDoc, Scenario, ScenarioError, Workload, KEYS};
