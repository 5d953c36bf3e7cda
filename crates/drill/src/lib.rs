#![doc = include_str!("../README.md")]

pub mod ast;
pub mod cli;
pub mod parse;
pub mod report;
pub mod runner;
pub mod stack;
mod syscall;

pub use cli::{run, run_cli, DrillArgs};
pub use parse::{parse_script, ParseError};
pub use report::{FailKind, Failure, ScriptReport, QUICK_ACK_HINT};
pub use runner::{run_script, Settings};
pub use stack::Stack;

/// Reads, parses and runs one script file.
pub fn run_file(path: &std::path::Path, settings: &Settings) -> ScriptReport {
    let shown = path.display().to_string();
    let empty = |f: Failure| ScriptReport {
        path: shown.clone(),
        failure: Some(f),
        skipped: Vec::new(),
        notes: Vec::new(),
        trace: Vec::new(),
    };
    let text = match std::fs::read(path) {
        Ok(b) => String::from_utf8_lossy(&b).into_owned(),
        Err(e) => return empty(Failure::new(0, FailKind::Io, format!("cannot read: {e}"))),
    };
    match parse_script(&text, &shown) {
        Ok(script) => run_script(&script, settings),
        Err(e) => empty(Failure::new(e.line, FailKind::Parse, e.msg)),
    }
}
