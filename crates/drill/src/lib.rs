#![doc = include_str!("../README.md")]

pub mod ast;
pub mod cli;
pub mod parse;
pub mod report;
pub mod runner;
pub mod stack;
mod syscall;
pub mod sysctl;

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
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) => return empty(Failure::new(0, FailKind::Io, format!("cannot read: {e}"))),
    };
    let text = match script_text(bytes) {
        Ok(t) => t,
        Err(m) => return empty(Failure::new(0, FailKind::NotAScript, m)),
    };
    match parse_script(&text, &shown) {
        Ok(script) => run_script(&script, settings),
        Err(e) => empty(Failure::new(e.line, FailKind::Parse, e.msg)),
    }
}

/// A script's bytes as text, or why they are not a script: packetdrill
/// scripts are text, so a NUL byte or invalid UTF-8 means a binary file.
fn script_text(bytes: Vec<u8>) -> Result<String, String> {
    if let Some(at) = bytes.iter().position(|&b| b == 0) {
        return Err(format!("binary data (a NUL byte at offset {at}), not text"));
    }
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "binary data (invalid UTF-8 at offset {}), not text",
            e.utf8_error().valid_up_to()
        )
    })
}
