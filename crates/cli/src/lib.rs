//! The `tinygram` command's building blocks, as a library so tests can drive
//! them: run output, the why-trace summary, captures and `diagnose`, the
//! benchmark, `reproduce`, `sweep`'s output files, and `tun`. The run
//! itself, as a function, is `tinygram_lab`'s (shared with Python).

pub mod bench;
pub mod bench_flows_ns3;
pub mod bench_tun;
pub mod capture;
pub mod explain;
pub mod flows;
pub mod output;
/// The documents' experiments: the `tinygram-reproduce` library.
pub use tinygram_reproduce as reproduce;
pub mod sweep;
pub mod tun;
pub mod variants;
pub mod whatif;
