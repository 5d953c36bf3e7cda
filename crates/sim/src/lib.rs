//! tinygram-sim: the deterministic discrete-event network simulator.

mod cache;
pub mod coalesce;
mod drive;
pub mod event;
pub mod flood;
pub mod flows;
pub mod footprint;
mod host;
pub mod link;
pub mod metrics;
mod packet;
pub mod pattern;
pub mod pcap;
pub mod qdisc;
pub mod scenario;
pub mod units;
pub mod variant;
pub mod wire;
pub mod workload;
pub mod world;

pub use event::{CalendarQueue, EventQueue};
pub use link::{DropReason, Fate, Framing, Link, LinkConfig, LinkStats};
pub use metrics::RunResult;
pub use scenario::{Direction, HostConfig, KeyDoc, Scenario, ScenarioError, Workload, KEYS};
pub use variant::{ScenarioSet, VariantSpec};
pub use world::{run, Sim};
