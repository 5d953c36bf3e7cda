//! `tinygram`: run scenarios, list policies, benchmark the simulator.

use tinygram_cli::{
    bench, bench_flows_ns3, bench_tun, capture, explain, flows, output, reproduce, sweep, tun,
    variants, whatif,
};
use tinygram_lab::sweep as lab_sweep;

use clap::{CommandFactory, Parser, Subcommand};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use tinygram_sim::scenario::KEYS;

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
        /// Leave a key open, as the file's [open] table does: `A..B` (seeded
        /// draws), `A..B:N` (N steps, ends included) or `[V1, V2]`; the run
        /// then runs every point and prints each result's distribution.
        #[arg(long = "open", value_name = "KEY=SPEC")]
        open: Vec<String>,
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
        /// Replay each flow with findings (`whatif`) and order its fixes by
        /// the median exchange time each gave, with the number beside it.
        /// Runs simulations: seconds per flow, so not the default.
        #[arg(long)]
        rank: bool,
        /// Flows analysed in full, those that carried most payload (then
        /// most segments, then the longest); the rest are counted and
        /// summarised in a line each. At most 1,000,000.
        #[arg(long, value_name = "N", default_value_t = tinygram_analyze::flowtable::DEFAULT_MAX_FLOWS,
              value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=tinygram_analyze::flowtable::MAX_MAX_FLOWS as u64))]
        max_flows: usize,
        /// Flows the text report shows in full when there are more: those
        /// that lost most time, worst first; the rest are counted.
        #[arg(long, value_name = "N", default_value_t = capture::DEFAULT_TOP)]
        top: usize,
        /// Show every analysed flow in full and every summarised flow as a
        /// line (--json always lists them all).
        #[arg(long)]
        all: bool,
        /// No progress bar.
        #[arg(long, short)]
        quiet: bool,
    },
    /// What would each fix have done? Infers a captured exchange's path, stacks
    /// and application, replays it, and runs each send/ACK policy and stack
    /// against the replay: latency and segments, with ranges over what the
    /// capture cannot show.
    Whatif(whatif::WhatifArgs),
    /// Run packetdrill scripts against the engine on virtual time.
    #[command(after_help = tinygram_drill::PYTHON_WARNING)]
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
        /// Also run the LAN-like patterns on this machine's kernel (both ends,
        /// over veth in network namespaces) and tinygram over TUN against it,
        /// adding a "Linux <version> today" column (needs root).
        #[arg(long)]
        live: bool,
    },
    /// Run a scenario over the cross product of --grid values and --seeds on
    /// all cores; write one row per run (swept keys, seed, every result field).
    #[command(after_long_help = SWEEP_HELP)]
    Sweep {
        /// The scenario (TOML).
        scenario: PathBuf,
        /// A swept key and its values: `--grid client.send_policy=nagle,doupnik,nodelay`;
        /// values holding commas as a TOML array: `--grid 'client.options=[["wscale","sack"],[]]'`.
        #[arg(long = "grid", value_name = "KEY=V1,V2,...")]
        grid: Vec<String>,
        /// Seeds: `1..10` (inclusive: ten runs per combination), `7`, or a list `1..3,9`.
        #[arg(long, default_value = "1")]
        seeds: String,
        /// Override a key in every run, as `run --set`.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Leave a key open, as the file's [open] table does: `A..B` (seeded
        /// draws), `A..B:N` (N steps, ends included) or `[V1, V2]`.
        #[arg(long = "open", value_name = "KEY=SPEC")]
        open: Vec<String>,
        /// Output file: .csv, .jsonl or .parquet.
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
        /// Simulations run in parallel (default: one per core).
        #[arg(long)]
        jobs: Option<usize>,
        /// No progress bar.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Document every scenario key with its default.
    Scenario,
    /// List the send and ACK policies with their sources.
    Policies,
    /// List the stack profiles (`profile = "..."`, `drill --stack`, `tun --set profile=...`)
    /// with their settings and sources; `tinygram profiles NAME` shows one.
    Profiles {
        /// One profile to show (default: all).
        name: Option<String>,
    },
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

/// `bench sim --flows --look-ahead`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum LookAheadArg {
    /// Prefetch once the connections' state outgrows half the last-level cache.
    Auto,
    /// Always prefetch.
    On,
    /// Never prefetch.
    Off,
}

impl LookAheadArg {
    fn forced(self) -> Option<bool> {
        match self {
            LookAheadArg::Auto => None,
            LookAheadArg::On => Some(true),
            LookAheadArg::Off => Some(false),
        }
    }
}

#[derive(Subcommand)]
enum BenchWhat {
    /// Bulk transfer over 10 Gbps, 1 ms delay, raw framing, 4.5 MB queue, timestamps + SACK + window scaling, 1448-byte segments, no capture; `--against ns3` runs the same in ns-3.
    Sim {
        /// Bytes to transfer (size syntax, e.g. "1GB", "100MB").
        #[arg(long, default_value = "1GB")]
        bytes: String,
        /// Send and receive buffer of both sides.
        #[arg(long, default_value = "4MiB")]
        buf: String,
        /// Size of each application write.
        #[arg(long, default_value = "1448")]
        write_size: String,
        /// Probability a data frame is lost (client to server).
        #[arg(long, default_value_t = 0.0)]
        loss: f64,
        /// Also run the same transfer in another simulator, interleaved, and print the ratio.
        #[arg(long, value_enum)]
        against: Option<bench::Against>,
        /// Rounds for --against (each runs both simulators once).
        #[arg(long, default_value_t = 3)]
        rounds: u32,
        /// A prebuilt ns-3 program (benches/ns3/bulk.cc, with --flows benches/ns3/flows.cc); default: build it with g++ on first use.
        #[arg(long, value_name = "PATH")]
        ns3_bin: Option<PathBuf>,
        /// Instead: N concurrent request/response connections over a shared
        /// bottleneck (cost per segment against one flow, peak memory, idle
        /// connection size); with --against ns3, the same in ns-3.
        #[arg(long, value_name = "N")]
        flows: Option<u64>,
        /// With --flows: requests each connection makes.
        #[arg(long, default_value_t = 10, requires = "flows")]
        requests: u64,
        /// With --flows: one run only, with where its endpoints and event
        /// counter lie printed to stderr, for a memory trace
        /// (benches/endpoint-lines.sh runs it under valgrind's lackey).
        #[arg(long, requires = "flows", conflicts_with = "against")]
        memory_layout: bool,
        /// With --flows: whether each event prefetches the next events'
        /// connection state; auto does once their state outgrows half the
        /// last-level cache. Speed only: results are the same.
        #[arg(long, value_enum, default_value_t = LookAheadArg::Auto, requires = "flows")]
        look_ahead: LookAheadArg,
    },
    /// tinygram over TUN against the kernel, and the kernel against itself
    /// over veth, interleaved: bulk and 100-byte request/response (root).
    Tun {
        /// Rounds; ratios are taken within a round, then min and median.
        #[arg(long, default_value_t = 5)]
        rounds: usize,
        /// Bytes per bulk transfer (size syntax).
        #[arg(long, default_value = "1GB")]
        bytes: String,
        /// Length of each request/response measurement.
        #[arg(long, default_value = "3s")]
        rr_time: String,
        /// MTUs of the bulk cases (comma-separated).
        #[arg(long, value_delimiter = ',', default_value = "1500,65535")]
        mtu: Vec<u16>,
        /// tinygram without virtio-net offloads (the kernel side keeps its own settings).
        #[arg(long)]
        no_offload: bool,
        /// tinygram spins on the device instead of sleeping.
        #[arg(long)]
        busy_poll: bool,
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
    s += "\nMany flows ([bottleneck], [[flows]] and [flood] tables; without them: two hosts, one link):\n";
    for k in tinygram_sim::scenario::BOTTLENECK_KEYS
        .iter()
        .chain(tinygram_sim::scenario::FLOW_KEYS)
        .chain(tinygram_sim::scenario::FLOOD_KEYS)
    {
        s += &format!("  {:<28} default {:<14} {}\n", k.key, k.default, k.doc);
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
            open,
            capture,
        } => {
            let src = match tinygram_lab::Source::file(&scenario) {
                Ok(src) => src,
                Err(e) => {
                    eprintln!("error: {e}");
                    return ExitCode::from(2);
                }
            };
            match tinygram_lab::Space::of_source(&src, &open) {
                Ok(space) if !space.is_empty() => {
                    if variant.is_some() || trace.is_some() || explain || capture.any() {
                        eprintln!("error: {}: a run with open values runs many points; --variant, --trace, --explain, --pcap and --plot follow one run (fix the values with --set)", scenario.display());
                        return ExitCode::from(2);
                    }
                    return open_run(&src, &space, &set, json, quiet);
                }
                Ok(_) => {}
                Err(e) => {
                    eprintln!("error: {e}");
                    return ExitCode::from(2);
                }
            }
            let set = match src.set(&set, None) {
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
            if let Err(e) = tinygram_lab::run::supported(&set, &src.origin) {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
            capture.prepare(&mut sc);
            let mut sim = match tinygram_lab::World::of(&sc) {
                tinygram_lab::World::ManyFlow(fs) => {
                    if trace.is_some() || capture.plot.is_some() {
                        eprintln!("error: --trace and --plot follow one connection; a many-flow scenario has many (use --json and --explain, or --pcap for the bottleneck's packets)");
                        return ExitCode::from(2);
                    }
                    return flows::run(*fs, json, quiet, explain, capture.pcap.as_deref());
                }
                tinygram_lab::World::TwoHost(sim) => sim,
            };
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
            let rows = tinygram_lab::run::run_variants(others);
            if json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(
                        &tinygram_lab::Run {
                            base: tinygram_lab::Outcome::TwoHost(Box::new(result.clone())),
                            variants: rows.clone(),
                        }
                        .to_json()
                    )
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
            rank,
            max_flows,
            top,
            all,
            quiet,
        } => capture::diagnose_cmd(
            &file,
            &capture::DiagnoseOpts {
                json,
                plot: plot.as_deref(),
                plot_flows,
                rank,
                max_flows,
                top: if all { usize::MAX } else { top },
                all,
                quiet,
            },
        ),
        Cmd::Drill(args) => tinygram_drill::run(&args),
        Cmd::Whatif(args) => whatif::run(&args),
        Cmd::Reproduce {
            names,
            out,
            quick,
            jobs,
            json,
            live,
        } => {
            let threads =
                jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
            let bar = indicatif::ProgressBar::new(0);
            bar.set_style(
                indicatif::ProgressStyle::with_template(
                    "{spinner} {msg} [{wide_bar}] {pos}/{len} runs {elapsed}",
                )
                .expect("valid template"),
            );
            bar.set_message("simulating");
            let progress = |done: usize, all: usize| {
                bar.set_length(all as u64);
                bar.set_position(done as u64);
            };
            let found = reproduce::reproduce(&names, quick, threads, &progress);
            bar.finish_and_clear();
            let mut sections = match found {
                Ok(s) => s,
                Err(e) => {
                    eprintln!("error: {e}");
                    return ExitCode::from(2);
                }
            };
            if live {
                reproduce::live::run_or_explain(&mut sections, quick, threads);
            }
            if !json {
                for s in &sections {
                    print!("{}", reproduce::format_section(s));
                }
                print!("{}", reproduce::format_tally(&sections));
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
        Cmd::Sweep {
            scenario,
            grid,
            seeds,
            set,
            open,
            out,
            jobs,
            quiet,
        } => sweep_cmd(
            &scenario,
            &SweepSpace {
                grid,
                seeds,
                set,
                open,
            },
            &out,
            jobs,
            quiet,
        ),
        Cmd::Scenario => {
            print!("{}", scenario_keys_help());
            ExitCode::SUCCESS
        }
        Cmd::Policies => {
            print!("{}", output::policies());
            ExitCode::SUCCESS
        }
        Cmd::Profiles { name } => match output::profiles(name.as_deref()) {
            Ok(text) => {
                print!("{text}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::FAILURE
            }
        },
        Cmd::Congestion => {
            print!("{}", output::congestion());
            ExitCode::SUCCESS
        }
        Cmd::Tun { cmd } => tun::run(cmd),
        Cmd::Bench {
            what:
                BenchWhat::Sim {
                    flows: Some(n),
                    requests,
                    against,
                    rounds,
                    ns3_bin,
                    memory_layout,
                    look_ahead,
                    ..
                },
        } => match against {
            None if memory_layout => flows::memory_layout_run(n, requests, look_ahead.forced()),
            None => flows::bench(n, requests, look_ahead.forced()),
            Some(bench::Against::Ns3) => bench_flows_ns3::against_ns3(
                n,
                requests,
                rounds,
                ns3_bin.as_deref(),
                look_ahead.forced(),
            ),
        },
        Cmd::Bench {
            what:
                BenchWhat::Sim {
                    bytes,
                    buf,
                    write_size,
                    loss,
                    against,
                    rounds,
                    ns3_bin,
                    ..
                },
        } => bench::sim(&bench::SimArgs {
            bytes,
            buf,
            write_size,
            loss,
            against,
            rounds,
            ns3_bin,
        }),
        Cmd::Bench {
            what:
                BenchWhat::Tun {
                    rounds,
                    bytes,
                    rr_time,
                    mtu,
                    no_offload,
                    busy_poll,
                },
        } => {
            let parsed = tinygram_sim::units::parse_size(&bytes)
                .map_err(|e| format!("--bytes: {e}"))
                .and_then(|b| {
                    let t = tinygram_sim::units::parse_duration(&rr_time)
                        .map_err(|e| format!("--rr-time: {e}"))?;
                    Ok((b, t))
                });
            match parsed {
                Ok((b, t)) => bench_tun::run(&bench_tun::TunBench {
                    rounds,
                    bytes: b,
                    rr_time: t,
                    mtus: mtu,
                    tun: tinygram_net::TunOptions {
                        offload: !no_offload,
                        busy_poll,
                    },
                }),
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::from(2)
                }
            }
        }
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

/// `tinygram run` of a scenario with open values: every point, then each
/// headline result's distribution (JSON: the points and every field's).
fn open_run(
    src: &tinygram_lab::Source,
    space: &tinygram_lab::Space,
    set: &[String],
    json: bool,
    quiet: bool,
) -> ExitCode {
    let n = match space.count(tinygram_lab::space::MAX_POINTS) {
        Ok(n) => n,
        Err(e) => {
            eprintln!("error: {}: {e}", src.origin);
            return ExitCode::from(2);
        }
    };
    if !(quiet || json) {
        eprintln!("{}: {n} runs over the open values", src.origin);
    }
    let run = match tinygram_lab::space::run_open(src, space, set, None) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let v = run.to_json();
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&v).expect("result serializes")
        );
    } else {
        print!("{}", output::open_table(&run));
    }
    if v["integrity_ok"] == true {
        ExitCode::SUCCESS
    } else {
        eprintln!("error: data integrity check failed in at least one run (see --json)");
        ExitCode::FAILURE
    }
}

const SWEEP_HELP: &str = "Rows come in a fixed order (first --grid slowest, seeds fastest), \
whatever the number of threads. Columns: each swept key, seed, then every field of \
`run --json`, flattened with dotted names (completion_ms.p50, client.data_segments, \
variants.0.result.transactions); a result field named like a swept key gets `result.` \
in front (client.mss is a key and the effective MSS). Every value of every key is \
checked before anything runs. Rows are written as they finish, in that order, so a long \
sweep holds a few rows at a time; CSV and Parquet take their columns from the first row \
(Parquet: the first 1,024), and a column only a later row has is left out with a note \
(JSON lines keep every field).";

/// `tinygram sweep`: validate everything, run the cross product, write the rows.
/// What `sweep` varies and fixes: `--grid`, `--seeds`, `--set`, `--open`.
struct SweepSpace {
    grid: Vec<String>,
    seeds: String,
    set: Vec<String>,
    open: Vec<String>,
}

fn sweep_cmd(
    scenario: &std::path::Path,
    what: &SweepSpace,
    out: &std::path::Path,
    jobs: Option<usize>,
    quiet: bool,
) -> ExitCode {
    let prepared = (|| {
        sweep::Format::of(out)?;
        let src = tinygram_lab::Source::file(scenario).map_err(|e| e.to_string())?;
        let axes = what
            .grid
            .iter()
            .map(|g| lab_sweep::parse_axis(g))
            .collect::<Result<Vec<_>, _>>()?;
        let seeds = lab_sweep::parse_seeds(&what.seeds)?;
        let space = lab_sweep::space(&src, &axes, &what.open)?;
        lab_sweep::validate(&src, &what.set, &space, &seeds)?;
        Ok::<_, String>((src, lab_sweep::jobs(&space, &seeds)?))
    })();
    let (src, list) = match prepared {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let threads =
        jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let started = std::time::Instant::now();
    let written = match sweep::run(&src, &what.set, &list, threads, !quiet, out) {
        Ok(w) => w,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let took = started.elapsed();
    for note in &written.notes {
        eprintln!("note: {note}");
    }
    if !quiet && written.seeds_changed_nothing {
        eprintln!(
            "note: every seed gave the same results: nothing in this scenario draws from the run's random numbers (no loss, bit errors, reordering or jitter), so one seed is enough"
        );
    }
    if !quiet {
        eprintln!(
            "{} runs on {} threads in {:.2} s; wrote {}",
            written.rows,
            threads.min(written.rows).max(1),
            took.as_secs_f64(),
            out.display()
        );
    }
    ExitCode::SUCCESS
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
