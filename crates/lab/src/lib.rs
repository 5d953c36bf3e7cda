//! tinygram-lab: the run library that the CLI, `reproduce`, `whatif` and the
//! Python package share.
//!
//! One entry point ([`run::run_json`], [`run::World`]) reads a scenario and
//! alone decides which world runs it (two hosts, or many flows over a
//! bottleneck). Values a scenario leaves open (an `[open]` table, or
//! `--open`) are a [`space::Space`] that expands into runs by grid or seeded
//! samples, each result summarised as a [`space::Distribution`]; `sweep` is
//! the same expansion over the keys a user names.

pub mod pool;
pub mod reports;
pub mod run;
pub mod source;
pub mod space;
pub mod sweep;
pub mod whatif;

pub use run::{run_json, run_set, Outcome, Run, World};
pub use source::{check, toml_value_text, Source};
pub use space::{Distribution, Reading, Space};
