//! The `tinygram drill` command line: arguments, per-script output, summary.

use crate::run_file;
use crate::runner::Settings;
use crate::stack::Stack;
use std::path::PathBuf;
use std::process::ExitCode;

/// The warning `drill --help` ends with: scripts carry Python that runs as you.
pub const PYTHON_WARNING: &str = "Warning: a script's %{ }% blocks are arbitrary Python, run by \
python3 as the user running drill (as packetdrill runs them): a script can read, write or \
delete your files. Run only scripts you trust, or use --no-python, which refuses such scripts \
(reported unsupported). Blocks run with an empty environment (PATH only), in isolated mode \
(python3 -I), and are killed after --python-timeout seconds (10).";

/// Arguments of `tinygram drill` (clap-ready: flatten or use as a subcommand).
#[derive(Debug, Clone, clap::Args)]
pub struct DrillArgs {
    /// Scripts to run (packetdrill syntax).
    #[arg(required_unless_present = "suite", value_name = "SCRIPT.pkt")]
    pub scripts: Vec<PathBuf>,
    /// Run every `*.pkt` under DIR (as upstream's run_all.py does for IPv4:
    /// `*v6.pkt` left out) in parallel and print a table per directory.
    #[arg(long, value_name = "DIR", conflicts_with = "scripts")]
    pub suite: Option<PathBuf>,
    /// With --suite: print the results as one JSON document.
    #[arg(long, requires = "suite")]
    pub json: bool,
    /// With --suite: scripts run at once (default: all cores).
    #[arg(long, alias = "max_in_parallel", value_name = "N")]
    pub jobs: Option<usize>,
    /// packetdrill's `--ip_version`: only `ipv4` is supported.
    #[arg(long = "ip_version", value_name = "ipv4")]
    pub ip_version: Option<String>,
    /// packetdrill's `--local_ip` (checked as an IPv4 address; the engine's
    /// segments carry no IP header, so the address does not change a run).
    #[arg(long = "local_ip", value_name = "ADDR")]
    pub local_ip: Option<std::net::Ipv4Addr>,
    /// packetdrill's `--remote_ip` (checked, as --local_ip).
    #[arg(long = "remote_ip", value_name = "ADDR")]
    pub remote_ip: Option<std::net::Ipv4Addr>,
    /// packetdrill's `--gateway_ip` (checked, as --local_ip).
    #[arg(long = "gateway_ip", value_name = "ADDR")]
    pub gateway_ip: Option<std::net::Ipv4Addr>,
    /// packetdrill's `--netmask_ip` (checked, as --local_ip).
    #[arg(long = "netmask_ip", value_name = "MASK")]
    pub netmask_ip: Option<std::net::Ipv4Addr>,
    /// packetdrill's `--mtu`: a new socket's MSS is this less 40 bytes of
    /// IPv4 and TCP headers (68 to 65535).
    #[arg(long, value_name = "BYTES",
          value_parser = clap::value_parser!(u16).range(68..))]
    pub mtu: Option<u16>,
    /// packetdrill's `--send_omit_free` (accepted: the runner never frees
    /// send buffers behind the script's back).
    #[arg(long = "send_omit_free")]
    pub send_omit_free: bool,
    /// packetdrill's `--tcp_ts_tick_usecs`: check outbound TSvals, this many
    /// microseconds a tick (0, the default, leaves them unchecked as packetdrill does).
    #[arg(long = "tcp_ts_tick_usecs", value_name = "USECS", default_value_t = 0,
          value_parser = clap::value_parser!(i64).range(0..=1_000_000))]
    pub tcp_ts_tick_usecs: i64,
    /// packetdrill's `-D NAME=VALUE`: NAME in the script reads as VALUE.
    #[arg(short = 'D', value_name = "NAME=VALUE", value_parser = parse_define)]
    pub define: Vec<(String, String)>,
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
    /// Refuse `%{ }%` Python blocks: a script with one is reported
    /// unsupported and not run. Blocks are arbitrary Python run as you, as in
    /// packetdrill: use this for suites you did not write.
    #[arg(long = "no-python")]
    pub no_python: bool,
    /// Seconds one script's `%{ }%` blocks may run in all (they share one
    /// python3 process); past it the process is killed and the script fails.
    #[arg(long = "python-timeout", value_name = "SECS", default_value_t = 10.0,
          value_parser = parse_timeout)]
    pub python_timeout: f64,
    /// Print every segment in and out of each script.
    #[arg(long, short)]
    pub verbose: bool,
    /// Print only failures and the summary.
    #[arg(long, short)]
    pub quiet: bool,
}

/// Parses `--python-timeout`: positive seconds, at most a day.
fn parse_timeout(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v > 0.0 && v <= 86_400.0 => Ok(v),
        _ => Err(format!(
            "{s:?} is not a number of seconds (more than 0, at most 86400)"
        )),
    }
}

/// Parses `-D NAME=VALUE`; NAME must be an identifier.
fn parse_define(s: &str) -> Result<(String, String), String> {
    let (n, v) = s
        .split_once('=')
        .ok_or_else(|| format!("-D {s:?}: expected NAME=VALUE"))?;
    let ident = !n.is_empty()
        && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !n.starts_with(|c: char| c.is_ascii_digit());
    if !ident {
        return Err(format!(
            "-D {s:?}: {n:?} is not a name (letters, digits, _)"
        ));
    }
    Ok((n.to_string(), v.to_string()))
}

/// Standalone parser for `run_cli` (the main CLI can embed `DrillArgs` instead).
#[derive(Debug, clap::Parser)]
#[command(
    name = "tinygram drill",
    about = "Run packetdrill scripts against the tinygram engine on a virtual clock",
    after_help = PYTHON_WARNING
)]
struct Standalone {
    #[command(flatten)]
    args: DrillArgs,
}

impl DrillArgs {
    /// Parses the words after `drill`, as the command line does.
    pub fn parse_words<S: AsRef<str>>(words: &[S]) -> Result<DrillArgs, clap::Error> {
        use clap::Parser;
        let argv = std::iter::once("tinygram drill").chain(words.iter().map(|w| w.as_ref()));
        Standalone::try_parse_from(argv).map(|s| s.args)
    }
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
    if let Some(v) = args.ip_version.as_deref() {
        if v != "ipv4" {
            let _ = writeln!(
                err,
                "--ip_version={v}: only ipv4 is supported (the runner plays an IPv4 peer)"
            );
            return Outcome::NotRun;
        }
    }
    let settings = Settings {
        tolerance_usecs: args.tolerance_usecs.max(0),
        strict_segments: args.strict_segments,
        stack: args.stack,
        defines: args.define.clone(),
        tcp_ts_tick_usecs: args.tcp_ts_tick_usecs,
        mtu: args.mtu,
        no_python: args.no_python,
        python_timeout: std::time::Duration::from_secs_f64(args.python_timeout),
        ..Settings::default()
    };
    let mut settings = settings;
    if let Some(a) = args.local_ip {
        settings.local_ip = a.into();
    }
    if let Some(a) = args.remote_ip {
        settings.remote_ip = a.into();
    }
    if let Some(dir) = &args.suite {
        return run_suite_cmd(args, dir, &settings, out, err);
    }
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

/// `--suite DIR`: runs the suite, prints the table (or JSON); the outcome is
/// Passed only when every script passed.
fn run_suite_cmd(
    args: &DrillArgs,
    dir: &std::path::Path,
    settings: &Settings,
    out: &mut dyn std::io::Write,
    err: &mut dyn std::io::Write,
) -> Outcome {
    let jobs = args
        .jobs
        .filter(|&j| j > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let entries = match crate::suite::run_suite(dir, settings, jobs) {
        Ok(e) => e,
        Err(e) => {
            let _ = writeln!(err, "--suite {}: cannot list scripts: {e}", dir.display());
            return Outcome::NotRun;
        }
    };
    if entries.is_empty() {
        let _ = writeln!(err, "--suite {}: no *.pkt scripts found", dir.display());
        return Outcome::NotRun;
    }
    if args.json {
        let j = crate::suite::to_json(dir, settings, &entries);
        let _ = writeln!(out, "{j:#}");
    } else {
        let _ = crate::suite::write_table(out, dir, &entries, args.quiet);
    }
    let (_, total) = crate::suite::tally(&entries);
    if total.pass == total.scripts {
        Outcome::Passed
    } else if total.error > 0 {
        Outcome::NotRun
    } else {
        Outcome::Failed
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
