//! `tinygram`: run scenarios, list policies, benchmark the simulator.

use tinygram_cli::{bench, capture, explain, output, reproduce, tun, variants};

use clap::{CommandFactory, Parser, Subcommand};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use tinygram_sim::scenario::KEYS;
use tinygram_sim::world::Sim;
use tinygram_sim::ScenarioSet;

#[derive(Parser)]
#[command(
    name = "tinygram",
    version,
    about = "A TCP engine and laboratory: Nagle, delayed ACK and their fixes, side by side",
    long_about = None
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run one scenario file in the deterministic simulator.
    #[command(after_long_help = scenario_keys_help())]
    Run {
        /// The scenario (TOML). `tinygram scenario` lists every key.
        scenario: PathBuf,
        /// Override a key: `--set client.send_policy=nodelay`, `--set workload.request=[18225]`.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Print the result as JSON (stable field names).
        #[arg(long)]
        json: bool,
        /// No progress bar.
        #[arg(long, short)]
        quiet: bool,
        /// Write the why-trace (hold/release, ACK decisions) and every segment as JSON lines.
        #[arg(long, value_name = "FILE")]
        trace: Option<PathBuf>,
        /// Print which rule held data, for how long, and the Nagle x delayed-ACK pairs.
        #[arg(long)]
        explain: bool,
        /// Run only this `[[variant]]` of the file, with the full output.
        #[arg(long, value_name = "NAME")]
        variant: Option<String>,
        #[command(flatten)]
        capture: capture::RunCaptureArgs,
    },
    /// Diagnose a real capture (pcap/pcapng): held tails, delayed-ACK stalls,
    /// window limits, timeouts, tinygram storms, with the fix for each.
    Diagnose {
        /// The capture (Ethernet, Linux cooked SLL/SLL2 or raw IP; IPv4/IPv6).
        file: PathBuf,
        /// Print the findings as JSON.
        #[arg(long)]
        json: bool,
        /// Write a time-sequence graph (SVG) per flow direction into DIR, for
        /// the busiest flows (see --plot-flows).
        #[arg(long, value_name = "DIR")]
        plot: Option<PathBuf>,
        /// How many flows --plot draws, busiest (most payload bytes) first; 0: all.
        #[arg(long, value_name = "N", default_value_t = 10)]
        plot_flows: usize,
    },
    /// Run packetdrill scripts against the engine on virtual time.
    Drill(tinygram_drill::DrillArgs),
    /// Run the source documents' experiments and write a report beside the published numbers.
    Reproduce {
        /// Experiments to run: all (default), doupnik-web, davids-traces, cheshire-cliff, ...
        names: Vec<String>,
        /// Report directory (markdown, HTML, SVG charts).
        #[arg(long, default_value = "tinygram-report")]
        out: PathBuf,
        /// A reduced set that runs in seconds.
        #[arg(long)]
        quick: bool,
        /// Simulations run in parallel (default: one per core).
        #[arg(long)]
        jobs: Option<usize>,
        /// Print report.json (every claim and table) to stdout instead of the text summary.
        #[arg(long)]
        json: bool,
    },
    /// Document every scenario key with its default.
    Scenario,
    /// List the send and ACK policies with their sources.
    Policies,
    /// List the congestion-control, slow-start and loss-recovery modules with their RFCs.
    Congestion,
    /// Run the engine on a Linux TUN device against real TCP peers (root or CAP_NET_ADMIN).
    Tun {
        #[command(subcommand)]
        cmd: tun::TunCmd,
    },
    /// Measure the simulator's speed.
    Bench {
        #[command(subcommand)]
        what: BenchWhat,
    },
    /// Print a shell completion script: `tinygram completions bash > ~/.local/share/bash-completion/completions/tinygram`.
    Completions {
        /// The shell: bash, zsh, fish, powershell or elvish.
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff): `tinygram man > tinygram.1`; `--dir DIR` writes one page per subcommand too.
    Man {
        /// Write tinygram.1 and tinygram-SUBCOMMAND.1 for every subcommand into DIR instead.
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
}

#[derive(Subcommand)]
enum BenchWhat {
    /// 1 GB bulk transfer over 10 Gbps, 1 ms delay, MSS 1448, no capture.
    Sim {
        /// Bytes to transfer (size syntax, e.g. "1GB", "100MB").
        #[arg(long, default_value = "1GB")]
        bytes: String,
    },
}

fn scenario_keys_help() -> String {
    let mut s = String::from("Scenario keys (TOML; all optional):\n");
    for k in KEYS {
        s += &format!(
            "  {:<28} default {:<14} {}\n",
            k.key,
            k.default_value(),
            k.doc
        );
    }
    s += "\nVariants: each [[variant]] table has a name and any keys above; `run` runs the\n\
          file as written, then every variant (file, then variant keys, then --set), and\n\
          prints one comparison table (JSON: \"variants\"). --variant NAME runs just one.\n";
    s += "\n";
    s += tinygram_sim::metrics::INTEGRITY_RULE;
    s += "\n";
    s
}

/// Writing to a closed pipe (`tinygram run x.toml --json | head -3`) ends the
/// process quietly, as it does `cat` and `grep`, instead of a panic in
/// `println!`: Rust ignores SIGPIPE by default, so restore the default action.
fn exit_quietly_on_broken_pipe() {
    #[cfg(unix)]
    // SAFETY: first thing in main, before any other thread exists; SIG_DFL is
    // a valid disposition for SIGPIPE.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

fn main() -> ExitCode {
    exit_quietly_on_broken_pipe();
    let cli = Cli::parse();
    match cli.cmd {
        Cmd::Run {
            scenario,
            set,
            json,
            quiet,
            trace,
            explain,
            variant,
            capture,
        } => {
            let set = match ScenarioSet::from_file(&scenario, &set) {
                Ok(set) => set,
                Err(e) => {
                    eprintln!("error: {e}");
                    return ExitCode::from(2);
                }
            };
            let (mut sc, others) = match &variant {
                None => (set.base.clone(), set.variants.as_slice()),
                Some(name) => match set.select(name) {
                    Ok(sc) => (sc.clone(), &[][..]),
                    Err(e) => {
                        eprintln!("error: {}: {e}", scenario.display());
                        return ExitCode::from(2);
                    }
                },
            };
            capture.prepare(&mut sc);
            let mut sim = Sim::new(&sc);
            if trace.is_some() || explain {
                sim.enable_trace();
            }
            if trace.is_some() {
                sim.enable_capture(false);
            }
            capture.setup(&mut sim);
            let result = output::run_with_progress(&mut sim, quiet || json);
            if let Err(e) = capture.finish(&sim) {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
            if !(others.is_empty() || quiet || json) {
                eprintln!(
                    "running {} variants of {}",
                    others.len(),
                    scenario.display()
                );
            }
            let rows = variants::run_all(others);
            if json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&variants::json(&result, &rows))
                        .expect("result serializes")
                );
            } else {
                print!("{}", output::table(&sc, &result));
            }
            if explain {
                print!("{}", explain::summary(sim.traces()));
            }
            if !json && !rows.is_empty() {
                let transactions = !matches!(sc.workload, tinygram_sim::Workload::Bulk { .. });
                print!("{}", variants::table(&result, &rows, transactions));
            }
            if let Some(path) = trace {
                let written = std::fs::File::create(&path).and_then(|f| {
                    let mut w = std::io::BufWriter::new(f);
                    explain::write_trace(&mut w, sim.traces(), sim.capture().0)?;
                    w.flush()
                });
                if let Err(e) = written {
                    eprintln!("error: cannot write trace {}: {e}", path.display());
                    return ExitCode::FAILURE;
                }
            }
            if result.integrity_ok && rows.iter().all(|(_, r)| r.integrity_ok) {
                ExitCode::SUCCESS
            } else {
                let failed = std::iter::once(("", &result))
                    .chain(rows.iter().map(|(n, r)| (n.as_str(), r)))
                    .filter(|(_, r)| !r.integrity_ok);
                for (name, r) in failed {
                    let which = if name.is_empty() {
                        String::new()
                    } else {
                        format!(" (variant {name:?})")
                    };
                    let why = r
                        .integrity_error
                        .as_deref()
                        .unwrap_or("a byte did not match");
                    eprintln!("error: data integrity check failed{which}: {why}");
                }
                ExitCode::FAILURE
            }
        }
        Cmd::Diagnose {
            file,
            json,
            plot,
            plot_flows,
        } => capture::diagnose_cmd(&file, json, plot.as_deref(), plot_flows),
        Cmd::Drill(args) => tinygram_drill::run(&args),
        Cmd::Reproduce {
            names,
            out,
            quick,
            jobs,
            json,
        } => {
            let threads =
                jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
            let sections = match reproduce::reproduce(&names, quick, threads, true) {
                Ok(s) => s,
                Err(e) => {
                    eprintln!("error: {e}");
                    return ExitCode::from(2);
                }
            };
            if !json {
                for s in &sections {
                    print!("{}", reproduce::format_section(s));
                }
            }
            if let Err(e) = reproduce::write_report(&out, &sections, quick) {
                eprintln!("error: cannot write the report to {}: {e}", out.display());
                return ExitCode::FAILURE;
            }
            let done = format!(
                "Report: {} (open index.html in a browser), {} and {}",
                out.join("index.html").display(),
                out.join("report.md").display(),
                out.join("report.json").display()
            );
            if json {
                match serde_json::to_string_pretty(&reproduce::json(&sections, quick)) {
                    Ok(s) => println!("{s}"),
                    Err(e) => {
                        eprintln!("error: cannot encode the report as JSON: {e}");
                        return ExitCode::FAILURE;
                    }
                }
                eprintln!("{done}");
            } else {
                println!("\n{done}");
            }
            ExitCode::SUCCESS
        }
        Cmd::Scenario => {
            print!("{}", scenario_keys_help());
            ExitCode::SUCCESS
        }
        Cmd::Policies => {
            print!("{}", output::policies());
            ExitCode::SUCCESS
        }
        Cmd::Congestion => {
            print!("{}", output::congestion());
            ExitCode::SUCCESS
        }
        Cmd::Tun { cmd } => tun::run(cmd),
        Cmd::Bench {
            what: BenchWhat::Sim { bytes },
        } => bench::sim(&bytes),
        Cmd::Completions { shell } => {
            clap_complete::generate(
                shell,
                &mut Cli::command(),
                "tinygram",
                &mut std::io::stdout(),
            );
            ExitCode::SUCCESS
        }
        Cmd::Man { dir } => man(dir.as_deref()),
    }
}

/// `tinygram man`: the whole command's page on stdout, or with `--dir` one
/// page per (sub)command, named as `man` finds them (`tinygram-run.1`).
fn man(dir: Option<&std::path::Path>) -> ExitCode {
    let cmd = Cli::command();
    let Some(dir) = dir else {
        let mut out = std::io::stdout().lock();
        return match clap_mangen::Man::new(cmd).render(&mut out) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: cannot write the man page: {e}");
                ExitCode::FAILURE
            }
        };
    };
    if let Err(e) = std::fs::create_dir_all(dir) {
        eprintln!("error: cannot create {}: {e}", dir.display());
        return ExitCode::FAILURE;
    }
    match clap_mangen::generate_to(cmd, dir) {
        Ok(()) => {
            println!("wrote tinygram.1 and tinygram-*.1 to {}", dir.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: cannot write man pages to {}: {e}", dir.display());
            ExitCode::FAILURE
        }
    }
}
