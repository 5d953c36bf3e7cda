//! Benchmarks live in benches/; this crate's library holds what the
//! benchmark documentation is built from.

pub mod ratios;
