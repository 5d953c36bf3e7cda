//! `tinygram`: run scenarios, list policies, benchmark the simulator.

mod bench;
mod output;

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;
use tinygram_sim::scenario::{Scenario, KEYS};

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
    },
    /// Run packetdrill scripts against the engine on virtual time.
    Drill(tinygram_drill::DrillArgs),
    /// Document every scenario key with its default.
    Scenario,
    /// List the send and ACK policies with their sources.
    Policies,
    /// Measure the simulator's speed.
    Bench {
        #[command(subcommand)]
        what: BenchWhat,
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
        s += &format!("  {:<28} default {:<14} {}\n", k.key, k.default, k.doc);
    }
    s
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.cmd {
        Cmd::Run {
            scenario,
            set,
            json,
            quiet,
        } => {
            let sc = match Scenario::from_file(&scenario, &set) {
                Ok(sc) => sc,
                Err(e) => {
                    eprintln!("error: {e}");
                    return ExitCode::from(2);
                }
            };
            let result = output::run_with_progress(&sc, quiet || json);
            if json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&result).expect("result serializes")
                );
            } else {
                print!("{}", output::table(&sc, &result));
            }
            if result.integrity_ok {
                ExitCode::SUCCESS
            } else {
                eprintln!("error: data integrity check failed");
                ExitCode::FAILURE
            }
        }
        Cmd::Drill(args) => tinygram_drill::run(&args),
        Cmd::Scenario => {
            print!("{}", scenario_keys_help());
            ExitCode::SUCCESS
        }
        Cmd::Policies => {
            print!("{}", output::policies());
            ExitCode::SUCCESS
        }
        Cmd::Bench {
            what: BenchWhat::Sim { bytes },
        } => bench::sim(&bytes),
    }
}
