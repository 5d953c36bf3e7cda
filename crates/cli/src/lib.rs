//! The `tinygram` command's building blocks, as a library so tests can drive
//! them: run output, the why-trace summary, captures and `diagnose`, the
//! benchmark, `reproduce`, `sweep` (and the
//! run-as-a-function API it shares with the Python package), and `tun`.

pub mod api;
pub mod bench;
pub mod bench_tun;
pub mod capture;
pub mod explain;
pub mod flows;
pub mod output;
pub mod reproduce;
pub mod sweep;
pub mod tun;
pub mod variants;
