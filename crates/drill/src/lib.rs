#![doc = include_str!("../README.md")]

pub mod ast;
#[cfg(feature = "cli")]
pub mod cli;
mod encaps;
mod epoll;
mod files;
mod icmp;
pub mod ipfields;
mod mask;
pub mod nplab;
pub mod parse;
mod poll;
mod pycheck;
pub mod report;
pub mod runner;
pub mod stack;
pub mod suite;
mod syscall;
mod sysctl;
mod zerocopy;

#[cfg(feature = "cli")]
pub use cli::{run, run_cli, DrillArgs, PYTHON_WARNING};
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
    let bytes = match read_bounded(path) {
        Ok(b) => b,
        Err(f) => return empty(*f),
    };
    let text = match script_text(bytes) {
        Ok(t) => t,
        Err(m) => return empty(Failure::new(0, FailKind::NotAScript, m)),
    };
    let os = nplab::os_name(settings.stack);
    let defined = |n: &str| Some(n) == os || settings.defines.iter().any(|(d, _)| d == n);
    let text = match nplab::select_branches(&text, defined) {
        Ok(t) => t,
        Err((line, m)) => return empty(Failure::new(line, FailKind::Parse, m)),
    };
    let text = substitute_defines(&text, &settings.defines);
    match parse_script(&text, &shown) {
        Ok(script) => run_script(&script, settings),
        Err(e) => empty(Failure::new(e.line, FailKind::Parse, e.msg)),
    }
}

/// The largest script file read: packetdrill scripts are a few kilobytes
/// (the upstream suite's largest is under 20 KB), and parsing takes several
/// times a file's size in memory.
pub const MAX_SCRIPT_BYTES: u64 = 4 << 20;

/// A script file's bytes, refused past [`MAX_SCRIPT_BYTES`] without reading the rest.
fn read_bounded(path: &std::path::Path) -> Result<Vec<u8>, Box<Failure>> {
    use std::io::Read;
    let io =
        |e: std::io::Error| Box::new(Failure::new(0, FailKind::Io, format!("cannot read: {e}")));
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .map_err(io)?
        .take(MAX_SCRIPT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > MAX_SCRIPT_BYTES {
        return Err(Box::new(Failure::new(
            0,
            FailKind::NotAScript,
            format!(
                "larger than {} MiB; packetdrill scripts are a few kilobytes",
                MAX_SCRIPT_BYTES >> 20
            ),
        )));
    }
    Ok(bytes)
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

/// Replaces each whole-word `NAME` of `-D NAME=VALUE` with VALUE, as
/// packetdrill's lexer reads a defined name.
pub fn substitute_defines(text: &str, defines: &[(String, String)]) -> String {
    if defines.is_empty() {
        return text.to_string();
    }
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find(|c: char| word(c)) {
        out.push_str(&rest[..start]);
        let tail = &rest[start..];
        let end = tail.find(|c: char| !word(c)).unwrap_or(tail.len());
        let w = &tail[..end];
        match defines.iter().rev().find(|(n, _)| n == w) {
            Some((_, v)) => out.push_str(v),
            None => out.push_str(w),
        }
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod define_tests {
    use super::substitute_defines;

    #[test]
    fn whole_words_only() {
        let d = vec![("CODE".to_string(), "host_unreachable".to_string())];
        assert_eq!(
            substitute_defines("x CODE CODEX _CODE CODE,1", &d),
            "x host_unreachable CODEX _CODE host_unreachable,1"
        );
        assert_eq!(substitute_defines("CODE", &[]), "CODE");
    }
}

#[cfg(test)]
mod read_tests {
    use super::*;

    #[test]
    fn a_script_file_past_the_size_bound_is_refused_unread() {
        let p = std::env::temp_dir().join(format!("tinygram-huge-{}.pkt", std::process::id()));
        let line = "0 < . 1:1(0) ack 1 win 514 <nop>\n";
        let n = (MAX_SCRIPT_BYTES as usize) / line.len() + 1;
        std::fs::write(&p, line.repeat(n)).unwrap();
        let rep = run_file(&p, &Settings::default());
        std::fs::remove_file(&p).unwrap();
        let f = rep.failure.expect("refused");
        assert_eq!(f.kind, FailKind::NotAScript, "{}", f.msg);
        assert!(f.msg.contains("larger than 4 MiB"), "{}", f.msg);
    }
}
