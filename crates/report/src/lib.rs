//! tinygram-report: the report layer: the text of `tinygram
//! diagnose` and tcptrace-style time-sequence plots in SVG and PNG.

pub mod plot;
pub mod ratios;
pub mod text;

pub use plot::{holds_from_trace, render, render_svg_string};
