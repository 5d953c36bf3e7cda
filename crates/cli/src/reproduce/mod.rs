//! `tinygram reproduce`: the experiments of the source documents, run in the
//! simulator and shown beside the published numbers. Nothing is tuned to the
//! published figures: each scenario states the setup the document gives, and
//! where our numbers differ the report says so and why.

mod chart;
mod experiments;
mod report;

use indicatif::{ProgressBar, ProgressStyle};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use tinygram_sim::metrics::RunResult;
use tinygram_sim::scenario::Scenario;
use tinygram_sim::world::{Sim, WireEvent};

pub use experiments::{nagle_release_schedule, EXPERIMENTS};
pub use report::write_report;

/// One simulation to run for an experiment.
pub struct Job {
    /// Row labels, e.g. ["FreeBSD-like", "16 KiB", "Nagle on"].
    pub key: Vec<String>,
    pub scenario: Scenario,
    /// Keep the frames that crossed the wire (for packet counts and timing).
    pub capture: bool,
}

/// A finished simulation.
pub struct Done {
    pub key: Vec<String>,
    pub result: RunResult,
    /// Frames seen on the wire, if the job asked for them.
    pub wire: Vec<WireEvent>,
}

/// A table: headers and rows of cells.
#[derive(Clone, Debug, Default)]
pub struct Table {
    pub headers: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

/// One series of a bar chart: label and one value per category.
#[derive(Clone, Debug)]
pub struct Series {
    pub label: String,
    pub values: Vec<f64>,
}

/// A grouped bar chart.
#[derive(Clone, Debug)]
pub struct Chart {
    pub title: String,
    pub y_label: String,
    pub categories: Vec<String>,
    pub series: Vec<Series>,
    /// Logarithmic y axis (rates that span orders of magnitude).
    pub log: bool,
}

/// An experiment's part of the report.
#[derive(Clone, Debug)]
pub struct Section {
    pub name: &'static str,
    pub title: &'static str,
    pub source: &'static str,
    /// Markdown: what was simulated.
    pub setup: String,
    pub table: Table,
    pub charts: Vec<Chart>,
    /// Sentences derived from the numbers.
    pub findings: Vec<String>,
    /// Where our numbers differ from the document's, with the likely cause.
    pub differences: Vec<String>,
    /// Qualitative claims of the document, checked on our numbers.
    pub checks: Vec<Check>,
    /// Time-sequence graphs of representative runs: (caption, SVG document).
    pub plots: Vec<(String, String)>,
}

/// One of a document's claims, checked on our numbers.
#[derive(Clone, Debug)]
pub struct Check {
    /// The claim, with our figures.
    pub claim: String,
    pub holds: bool,
    /// Why the rules give a different result (required when it does not hold).
    pub cause: Option<String>,
}

impl Check {
    /// A claim; `cause` is kept only when the claim does not hold.
    pub fn new(claim: String, holds: bool, cause: impl FnOnce() -> Option<String>) -> Check {
        let cause = if holds { None } else { cause() };
        Check {
            claim,
            holds,
            cause,
        }
    }
}

/// An experiment: which runs it needs and how it reads them.
pub struct Experiment {
    pub name: &'static str,
    pub title: &'static str,
    pub source: &'static str,
    /// The base scenario file, embedded in the binary.
    pub base: &'static str,
    pub jobs: fn(quick: bool) -> Vec<Job>,
    pub section: fn(quick: bool, done: &[Done]) -> Section,
}

/// Builds a scenario from an experiment's base file plus overrides.
pub fn scenario(base: &str, origin: &str, overrides: &[String]) -> Scenario {
    Scenario::from_str(base, origin, overrides)
        .unwrap_or_else(|e| panic!("built-in scenario {origin} is invalid: {e}"))
}

fn run_job(job: Job) -> Done {
    let mut sim = Sim::new(&job.scenario);
    if job.capture {
        sim.enable_capture(false);
    }
    let result = sim.run(&mut |_, _| {});
    Done {
        key: job.key,
        wire: sim.capture().0.to_vec(),
        result,
    }
}

/// Runs every job on `jobs` threads; results come back in job order.
pub fn run_jobs(jobs: Vec<Job>, threads: usize, progress: bool) -> Vec<Done> {
    let n = jobs.len();
    let bar = if progress {
        let b = ProgressBar::new(n as u64);
        b.set_style(
            ProgressStyle::with_template("{spinner} {msg} [{wide_bar}] {pos}/{len} runs {elapsed}")
                .expect("valid template"),
        );
        b.set_message("simulating");
        b
    } else {
        ProgressBar::hidden()
    };
    let queue: Mutex<Vec<(usize, Job)>> = Mutex::new(jobs.into_iter().enumerate().rev().collect());
    let results: Mutex<Vec<Option<Done>>> = Mutex::new((0..n).map(|_| None).collect());
    let finished = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..threads.max(1) {
            s.spawn(|| loop {
                let next = queue.lock().expect("queue").pop();
                let Some((i, job)) = next else { break };
                let done = run_job(job);
                results.lock().expect("results")[i] = Some(done);
                finished.fetch_add(1, Ordering::Relaxed);
                bar.inc(1);
            });
        }
    });
    bar.finish_and_clear();
    results
        .into_inner()
        .expect("results")
        .into_iter()
        .map(|d| d.expect("every job ran"))
        .collect()
}

/// Runs the named experiments (all when empty) and returns their sections.
pub fn reproduce(
    names: &[String],
    quick: bool,
    threads: usize,
    progress: bool,
) -> Result<Vec<Section>, String> {
    let chosen: Vec<&Experiment> = if names.is_empty() || names.iter().any(|n| n == "all") {
        EXPERIMENTS.iter().collect()
    } else {
        names
            .iter()
            .map(|n| {
                EXPERIMENTS.iter().find(|e| e.name == n).ok_or_else(|| {
                    format!(
                        "unknown experiment {n:?} (expected all or one of: {})",
                        EXPERIMENTS
                            .iter()
                            .map(|e| e.name)
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                })
            })
            .collect::<Result<_, _>>()?
    };
    // All runs of all experiments share one pool, so the cores stay busy.
    let mut all = Vec::new();
    let mut spans = Vec::new();
    for e in &chosen {
        let jobs = (e.jobs)(quick);
        spans.push(jobs.len());
        all.extend(jobs);
    }
    let mut done = run_jobs(all, threads, progress).into_iter();
    let mut sections = Vec::new();
    for (e, n) in chosen.iter().zip(spans) {
        let mine: Vec<Done> = done.by_ref().take(n).collect();
        sections.push((e.section)(quick, &mine));
    }
    Ok(sections)
}

/// Formats a table for the terminal with aligned columns.
pub fn format_table(t: &Table) -> String {
    let cols = t.headers.len();
    let mut w = vec![0; cols];
    for row in std::iter::once(&t.headers).chain(t.rows.iter()) {
        for (i, c) in row.iter().enumerate().take(cols) {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let mut s = String::new();
    let line = |row: &Vec<String>, s: &mut String| {
        for (i, c) in row.iter().enumerate().take(cols) {
            let pad = w[i] - c.chars().count();
            if i == 0 {
                s.push_str(c);
                s.push_str(&" ".repeat(pad));
            } else {
                s.push_str("  ");
                s.push_str(&" ".repeat(pad));
                s.push_str(c);
            }
        }
        s.push('\n');
    };
    line(&t.headers, &mut s);
    s.push_str(&"-".repeat(w.iter().sum::<usize>() + 2 * (cols.saturating_sub(1))));
    s.push('\n');
    for r in &t.rows {
        line(r, &mut s);
    }
    s
}

/// The terminal rendering of a section.
pub fn format_section(sec: &Section) -> String {
    let mut s = format!(
        "\n== {} ({}) ==\nSource: {}\n\n",
        sec.title, sec.name, sec.source
    );
    s += &format_table(&sec.table);
    for f in &sec.findings {
        s += &format!("* {f}\n");
    }
    for c in &sec.checks {
        s += &format!(
            "  [{}] {}\n",
            if c.holds {
                "reproduced"
            } else {
                "NOT reproduced"
            },
            c.claim
        );
        if let Some(cause) = &c.cause {
            s += &format!("      likely cause: {cause}\n");
        }
    }
    for d in &sec.differences {
        s += &format!("  difference: {d}\n");
    }
    s
}
