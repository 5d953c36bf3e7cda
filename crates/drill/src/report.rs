//! Results of running one script, and their text form.

use std::fmt;

/// What kind of problem stopped a script.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailKind {
    /// The script could not be parsed.
    Parse,
    /// An outbound segment differed from the script.
    Mismatch,
    /// Something happened too early or too late.
    Timing,
    /// A system call returned something else than the script says.
    Syscall,
    /// The script uses a construct the runner does not support.
    Unsupported,
    /// The engine misbehaved (e.g. a timer that never advances).
    Engine,
    /// A `%{ }%` check's assertion failed.
    Check,
    /// The script file could not be read.
    Io,
    /// The file is not a packetdrill script (binary data, not text).
    NotAScript,
}

impl FailKind {
    /// Whether the script never ran (unreadable, not a script, does not
    /// parse), as opposed to a script that ran and failed.
    pub fn not_run(self) -> bool {
        matches!(self, FailKind::Io | FailKind::NotAScript | FailKind::Parse)
    }
}

impl fmt::Display for FailKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FailKind::Parse => "parse error",
            FailKind::Mismatch => "segment mismatch",
            FailKind::Timing => "timing error",
            FailKind::Syscall => "system call mismatch",
            FailKind::Unsupported => "unsupported construct",
            FailKind::Engine => "engine error",
            FailKind::Check => "check failed",
            FailKind::Io => "i/o error",
            FailKind::NotAScript => "not a packetdrill script",
        })
    }
}

/// The first failure of a script, with the line it happened on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// 1-based script line (0 when no line applies).
    pub line: usize,
    /// Category.
    pub kind: FailKind,
    /// One-sentence explanation.
    pub msg: String,
    /// The script line's text.
    pub script: Option<String>,
    /// What the script expected, in script notation.
    pub expected: Option<String>,
    /// What the engine did, in script notation.
    pub actual: Option<String>,
    /// Virtual time in nanoseconds since the script started.
    pub time_ns: Option<i64>,
    /// A one-line suggestion printed after the failure (e.g. [`QUICK_ACK_HINT`]).
    pub hint: Option<String>,
}

/// Appended to an ACK that came later or sooner than a script written for
/// Linux expects, when the script left the ACK policy to `--stack rfc`.
pub const QUICK_ACK_HINT: &str = "the script may assume Linux's quick ACKs; try --stack linux";

impl Failure {
    /// A failure with just a line, kind and message.
    pub fn new(line: usize, kind: FailKind, msg: impl Into<String>) -> Failure {
        Failure {
            line,
            kind,
            msg: msg.into(),
            script: None,
            expected: None,
            actual: None,
            time_ns: None,
            hint: None,
        }
    }
}

/// Formats nanoseconds as seconds with microsecond precision.
pub fn secs(ns: i64) -> String {
    let sign = if ns < 0 { "-" } else { "" };
    let a = ns.unsigned_abs();
    format!(
        "{sign}{}.{:06}",
        a / 1_000_000_000,
        (a % 1_000_000_000) / 1_000
    )
}

/// Outcome of one script.
#[derive(Clone, Debug)]
pub struct ScriptReport {
    /// Script path.
    pub path: String,
    /// `None` when the script passed.
    pub failure: Option<Failure>,
    /// Lines that were not run (commands, python blocks), with the reason.
    pub skipped: Vec<(usize, String)>,
    /// Script options that were ignored.
    pub notes: Vec<String>,
    /// Every segment in and out, for `--verbose`.
    pub trace: Vec<String>,
}

impl ScriptReport {
    /// True when the script passed.
    pub fn passed(&self) -> bool {
        self.failure.is_none()
    }

    /// True when the script never ran: see [`FailKind::not_run`].
    pub fn not_run(&self) -> bool {
        self.failure.as_ref().is_some_and(|f| f.kind.not_run())
    }
}

impl fmt::Display for ScriptReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.failure {
            None if self.skipped.is_empty() => write!(f, "PASS {}", self.path)?,
            None => write!(
                f,
                "PASS {} ({} line{} skipped, not run)",
                self.path,
                self.skipped.len(),
                if self.skipped.len() == 1 { "" } else { "s" }
            )?,
            Some(fail) => {
                let head = if fail.kind.not_run() { "ERROR" } else { "FAIL" };
                write!(f, "{head} {}", self.path)?;
                if fail.line > 0 {
                    write!(
                        f,
                        "\n{}:{}: {}: {}",
                        self.path, fail.line, fail.kind, fail.msg
                    )?;
                } else {
                    write!(f, "\n{}: {}: {}", self.path, fail.kind, fail.msg)?;
                }
                if let Some(s) = &fail.script {
                    write!(f, "\n  script:   {s}")?;
                }
                if let Some(s) = &fail.expected {
                    write!(f, "\n  expected: {s}")?;
                }
                if let Some(s) = &fail.actual {
                    write!(f, "\n  actual:   {s}")?;
                }
                if let Some(t) = fail.time_ns {
                    write!(f, "\n  time:     {} s (virtual)", secs(t))?;
                }
                if let Some(h) = &fail.hint {
                    write!(f, "\n  hint: {h}")?;
                }
            }
        }
        for (line, what) in &self.skipped {
            write!(f, "\n  skipped {}:{}: {what}", self.path, line)?;
        }
        for n in &self.notes {
            write!(f, "\n  note: {n}")?;
        }
        Ok(())
    }
}
