//! What each fuzz target does with its input bytes, written once and shared by
//! the cargo-fuzz targets (`fuzz/`, nightly) and their stable proptest twins
//! (this crate's tests, run by `cargo test`). Every function here returns
//! normally on any input; a panic, overflow or failed invariant is a finding.

pub mod engine;
pub mod infer;
mod input;
pub mod parsers;
pub mod settings;

pub use engine::engine;
pub use infer::infer;
pub use input::Input;
pub use parsers::{drill_script, options, pcap, scenario, segment};
pub use settings::settings;
