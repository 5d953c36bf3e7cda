//! The `tinygram drill` command line: arguments, per-script output, summary.

use crate::run_file;
use crate::runner::Settings;
use crate::stack::Stack;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `tinygram drill` (clap-ready: flatten or use as a subcommand).
#[derive(Debug, Clone, clap::Args)]
pub struct DrillArgs {
    /// Scripts to run (packetdrill syntax).
    #[arg(required = true, value_name = "SCRIPT.pkt")]
    pub scripts: Vec<PathBuf>,
    /// Minimum timing tolerance in microseconds (the larger of this and 12.5% of the gap applies).
    #[arg(
        long = "tolerance_usecs",
        alias = "tolerance-usecs",
        default_value_t = 4000
    )]
    pub tolerance_usecs: i64,
    /// Compare each outbound segment alone instead of merging consecutive ones.
    #[arg(long = "strict_segments", alias = "strict-segments")]
    pub strict_segments: bool,
    /// Whose defaults new sockets get: a profile from `tinygram profiles`:
    /// `rfc` (alias `tinygram`: the engine's strict Nagle, 200 ms delayed ACK),
    /// `linux` (quick ACKs, Linux's Nagle, RTO 200 ms to 120 s, ...), `freebsd`,
    /// or a historical stack. The script's setsockopts override them.
    #[arg(long, default_value = "rfc", value_name = "PROFILE")]
    pub stack: Stack,
    /// Print every segment in and out of each script.
    #[arg(long, short)]
    pub verbose: bool,
    /// Print only failures and the summary.
    #[arg(long, short)]
    pub quiet: bool,
}

/// Standalone parser for `run_cli` (the main CLI can embed `DrillArgs` instead).
#[derive(Debug, clap::Parser)]
#[command(
    name = "tinygram drill",
    about = "Run packetdrill scripts against the tinygram engine on a virtual clock"
)]
struct Standalone {
    #[command(flatten)]
    args: DrillArgs,
}

/// How a drill run ended; [`Outcome::exit_code`] maps it to the process status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Every script ran and passed.
    Passed,
    /// Every script ran; at least one failed.
    Failed,
    /// At least one script could not run (unreadable, not a script, no events,
    /// does not parse).
    NotRun,
}

impl Outcome {
    /// 0 passed, 1 a script ran and failed, 2 a script could not run.
    pub fn exit_code(self) -> u8 {
        match self {
            Outcome::Passed => 0,
            Outcome::Failed => 1,
            Outcome::NotRun => 2,
        }
    }
}

/// Runs the scripts, prints results and `N passed, N failed` to `out`, and
/// scripts that could not run to `err` (counted as `N not run`).
pub fn run_scripts(
    args: &DrillArgs,
    out: &mut dyn std::io::Write,
    err: &mut dyn std::io::Write,
) -> Outcome {
    let settings = Settings {
        tolerance_usecs: args.tolerance_usecs.max(0),
        strict_segments: args.strict_segments,
        stack: args.stack,
        ..Settings::default()
    };
    let (mut passed, mut failed, mut not_run) = (0usize, 0usize, 0usize);
    for path in &args.scripts {
        let rep = run_file(path, &settings);
        if rep.not_run() {
            not_run += 1;
            let _ = writeln!(err, "{rep}");
            continue;
        }
        if rep.passed() {
            passed += 1;
        } else {
            failed += 1;
        }
        if !rep.passed() || !args.quiet {
            let _ = writeln!(out, "{rep}");
        }
        if args.verbose {
            for t in &rep.trace {
                let _ = writeln!(out, "    {t}");
            }
        }
    }
    if not_run > 0 {
        let _ = writeln!(out, "{passed} passed, {failed} failed, {not_run} not run");
        Outcome::NotRun
    } else {
        let _ = writeln!(out, "{passed} passed, {failed} failed");
        if failed == 0 {
            Outcome::Passed
        } else {
            Outcome::Failed
        }
    }
}

/// Entry for a clap subcommand: runs and maps the result to an exit code.
pub fn run(args: &DrillArgs) -> ExitCode {
    let outcome = run_scripts(args, &mut std::io::stdout(), &mut std::io::stderr());
    ExitCode::from(outcome.exit_code())
}

/// Entry for a hand-rolled CLI: `args` are the words after `drill`; returns the exit status.
pub fn run_cli(args: &[String]) -> i32 {
    use clap::Parser;
    let argv = std::iter::once("tinygram drill".to_string()).chain(args.iter().cloned());
    match Standalone::try_parse_from(argv) {
        Ok(s) => i32::from(
            run_scripts(&s.args, &mut std::io::stdout(), &mut std::io::stderr()).exit_code(),
        ),
        Err(e) => {
            let _ = e.print();
            if e.use_stderr() {
                2
            } else {
                0
            }
        }
    }
}
