//! `tinygram whatif`: the run library's what-if, printed, as JSON, or
//! written to a directory (the scenario, the JSON and an HTML page).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use tinygram_lab::whatif::{self, Options, Report};

/// The arguments of `tinygram whatif`.
#[derive(clap::Args, Debug)]
pub struct WhatifArgs {
    /// The capture (pcap or pcapng) of the slow application.
    pub capture: PathBuf,
    /// The flow to replay, by its number (1-based, in the order `diagnose` lists flows).
    #[arg(long, value_name = "N", conflicts_with = "busiest")]
    pub flow: Option<usize>,
    /// Replay the N flows with the most payload (default 1).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub busiest: usize,
    /// The side whose send policy to vary (default: the side TCP held longest).
    #[arg(long, value_parser = ["client", "server"])]
    pub side: Option<String>,
    /// An extra alternative: `--try 'server.delack=10ms'`, several keys joined with ';'.
    #[arg(long = "try", value_name = "KEY=VALUE")]
    pub tries: Vec<String>,
    /// Draws of the values the capture cannot show, per configuration.
    #[arg(long, default_value_t = 8)]
    pub samples: u32,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Write the scenario of each flow, whatif.json and index.html into DIR.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Simulations in parallel (default: one per core).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// No progress messages.
    #[arg(long, short)]
    pub quiet: bool,
}

/// Runs `tinygram whatif`.
pub fn run(a: &WhatifArgs) -> ExitCode {
    let opts = Options {
        flow: a.flow,
        busiest: a.busiest,
        side: a.side.clone(),
        tries: a.tries.clone(),
        samples: a.samples,
        threads: a
            .jobs
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
    };
    let quiet = a.quiet || a.json;
    let report = match whatif::whatif_file(&a.capture, &opts, &|m| {
        if !quiet {
            eprintln!("whatif: {m}");
        }
    }) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    if a.json {
        match serde_json::to_string_pretty(&report) {
            Ok(s) => println!("{s}"),
            Err(e) => {
                eprintln!("error: cannot encode the report: {e}");
                return ExitCode::FAILURE;
            }
        }
    } else {
        print!("{}", whatif::table::text(&report));
    }
    if let Some(dir) = &a.out {
        match write_dir(dir, &report) {
            Ok(files) => {
                if !quiet {
                    eprintln!("whatif: wrote {}", files.join(", "));
                }
            }
            Err(e) => {
                eprintln!("error: {}: {e}", dir.display());
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}

/// The scenario of each flow, the JSON report and the HTML page.
fn write_dir(dir: &Path, r: &Report) -> Result<Vec<String>, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create it: {e}"))?;
    let mut files = Vec::new();
    let mut put = |name: String, text: &str| -> Result<(), String> {
        let p = dir.join(&name);
        std::fs::write(&p, text).map_err(|e| format!("cannot write {name}: {e}"))?;
        files.push(p.display().to_string());
        Ok(())
    };
    for f in &r.flows {
        put(format!("scenario-flow-{}.toml", f.flow), &f.scenario)?;
    }
    let json = serde_json::to_string_pretty(r).map_err(|e| e.to_string())?;
    put("whatif.json".into(), &json)?;
    Ok(files)
}
