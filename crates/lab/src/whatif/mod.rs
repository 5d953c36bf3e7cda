//! `whatif`: what each fix would have done to a captured exchange, and what
//! it would cost on the wire.
//!
//! A pipeline of existing layers: capture -> flows (`analyze`) -> the
//! inferred path, stacks and application schedule, each value with its
//! evidence -> a scenario file (the simulator's format, values the capture
//! cannot show left open) -> the replay and the alternatives through the run
//! library -> a table. The replay is captured at the same point as the
//! original and read by the same analyzer, so the two are measured alike.

pub mod alternatives;
mod measure;
pub mod rank;
pub mod schedule;
pub mod table;
pub mod write;

use crate::space::{Distribution, Reading, Space};
use crate::Source;
use serde::Serialize;
use std::path::Path;
use tinygram_analyze::exchange::Exchanges;
use tinygram_analyze::flowtable::DEFAULT_MAX_FLOWS;
use tinygram_analyze::{Capture, Flow, FlowInference, FlowTable};

pub use alternatives::Alternative;

/// A value the capture cannot show, as an `[open]` entry with the reason.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OpenKey {
    pub key: String,
    /// The spec as TOML: `{ from = "0us", to = "40ms" }`, `{ values = [...] }`.
    pub spec: String,
    pub why: String,
}

/// What `whatif` looks at and tries.
#[derive(Clone, Debug)]
pub struct Options {
    /// One flow by its number in the capture (1-based, as `diagnose` lists them).
    pub flow: Option<usize>,
    /// Otherwise the N flows with the most payload.
    pub busiest: usize,
    /// The side whose send policy is varied: "client" or "server" (default:
    /// the side whose data TCP held longest).
    pub side: Option<String>,
    /// Extra alternatives, each `KEY=VALUE[;KEY=VALUE...]` as `--set`.
    pub tries: Vec<String>,
    /// Draws of the open values per alternative.
    pub samples: u32,
    /// Simulations in parallel.
    pub threads: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            flow: None,
            busiest: 1,
            side: None,
            tries: Vec::new(),
            samples: 8,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        }
    }
}

/// Headline figures of one configuration over the open values.
#[derive(Clone, Debug, Serialize)]
pub struct Metrics {
    pub p50_ms: Distribution,
    pub p99_ms: Distribution,
    pub max_ms: Distribution,
    /// Simulated time to the end of the conversation.
    pub total_s: Distribution,
    /// Both sides' data segments.
    pub data_segments: Distribution,
    /// Both sides' data segments under the MSS.
    pub small_segments: Distribution,
    /// Both sides' bytes on the wire, headers and framing included.
    pub wire_bytes: Distribution,
}

/// How the replay of the capture as inferred matches the capture.
#[derive(Clone, Debug, Serialize)]
pub struct Baseline {
    /// Completion of each replayed turn as the client saw it: in the capture
    /// and in the replay (median over the open values), in milliseconds.
    pub captured_ms: Vec<f64>,
    pub replayed_ms: Vec<f64>,
    /// |replay - capture| / capture over the turns: median and 95th percentile.
    pub median_rel_error: f64,
    pub p95_rel_error: f64,
    /// The median error is within [`MATCH_TOLERANCE`].
    pub matches: bool,
    /// When it does not: the inferred value most likely at fault, and why.
    pub likely_cause: Option<String>,
    pub metrics: Metrics,
}

/// The largest median relative error of a replay that still matches its capture.
pub const MATCH_TOLERANCE: f64 = 0.15;

/// One selected flow's what-if.
#[derive(Clone, Debug, Serialize)]
pub struct FlowWhatif {
    /// 1-based number of the flow in the capture.
    pub flow: usize,
    pub client: String,
    pub server: String,
    pub inference: FlowInference,
    pub exchanges: Exchanges,
    /// For each replayed turn, the index of its exchange in `exchanges`.
    pub turn_exchange: Vec<usize>,
    /// Notes on what the schedule leaves out.
    pub notes: Vec<String>,
    /// The scenario file written from the capture.
    pub scenario: String,
    pub open: Vec<OpenKey>,
    /// Runs per configuration (the points of the open values).
    pub points: usize,
    /// The side whose send policy the alternatives vary, and why.
    pub held_side: String,
    pub held_why: String,
    pub baseline: Baseline,
    pub alternatives: Vec<Alternative>,
}

/// A capture's what-if: every selected flow, and the flows left out with why.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub capture: String,
    pub flows: Vec<FlowWhatif>,
    pub skipped: Vec<Skipped>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Skipped {
    pub flow: usize,
    pub reason: String,
}

/// `whatif` on a capture file; `progress(msg)` reports each phase.
pub fn whatif_file(
    path: &Path,
    opts: &Options,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<Report, String> {
    check(opts)?;
    let err = |e: tinygram_analyze::CaptureError| format!("{}: {e}", path.display());
    // Two passes: every flow summarised, then only the candidates' segments.
    let mut table = FlowTable::survey(path, &mut |_| {}).map_err(err)?;
    let total = table.flow_count();
    if total == 0 {
        return Err("the capture holds no TCP flow".into());
    }
    match opts.flow {
        Some(n) => {
            if !table.select_number(n) {
                return Err(no_such_flow(n, total));
            }
        }
        // Every flow when they fit (the busiest are then exactly those of a
        // whole-capture read), else the address pairs that carried most.
        // No segment budget: the flows replayed are read whole, as before.
        None => table.select_busiest_within(DEFAULT_MAX_FLOWS.max(opts.busiest), u64::MAX),
    }
    let sel = table.read_selected(path, &mut |_| {}).map_err(err)?;
    whatif_flows(
        &sel.flows,
        total,
        &path.display().to_string(),
        opts,
        progress,
    )
}

fn no_such_flow(n: usize, total: u64) -> String {
    format!(
        "--flow {n}: the capture has {total} flow(s), numbered from 1 as `tinygram diagnose` lists them"
    )
}

/// The flows `opts` selects from `flows` (numbered from 1 in capture order;
/// the capture holds `total`).
fn select<'a>(
    flows: &'a [(usize, Flow)],
    total: u64,
    opts: &Options,
) -> Result<Vec<(usize, &'a Flow)>, String> {
    if flows.is_empty() {
        return Err("the capture holds no TCP flow".into());
    }
    if let Some(n) = opts.flow {
        return match flows.iter().find(|(i, _)| *i == n) {
            Some((_, f)) => Ok(vec![(n, f)]),
            None => Err(no_such_flow(n, total)),
        };
    }
    let mut by_bytes: Vec<(usize, &Flow)> = flows.iter().map(|(i, f)| (*i, f)).collect();
    by_bytes.sort_by_key(|(i, f)| (std::cmp::Reverse(f.sides[0].bytes + f.sides[1].bytes), *i));
    by_bytes.truncate(opts.busiest.max(1));
    Ok(by_bytes)
}

/// Refuses options no capture could satisfy, before reading one.
fn check(opts: &Options) -> Result<(), String> {
    if let Some(s) = &opts.side {
        if s != "client" && s != "server" {
            return Err(format!("--side {s:?}: expected client or server"));
        }
    }
    if opts.samples == 0 || opts.samples > 1000 {
        return Err(format!("--samples {}: give 1 to 1000", opts.samples));
    }
    for t in &opts.tries {
        alternatives::parse_try(t)?;
    }
    Ok(())
}

/// `whatif` on a capture read already; `name` labels it.
pub fn whatif(
    cap: &Capture,
    name: &str,
    opts: &Options,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<Report, String> {
    check(opts)?;
    let flows: Vec<(usize, Flow)> = tinygram_analyze::flows(cap)
        .into_iter()
        .enumerate()
        .map(|(i, f)| (i + 1, f))
        .collect();
    whatif_flows(&flows, flows.len() as u64, name, opts, progress)
}

/// `whatif` on the numbered flows read from a capture of `total` flows.
fn whatif_flows(
    flows: &[(usize, Flow)],
    total: u64,
    name: &str,
    opts: &Options,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<Report, String> {
    let mut report = Report {
        capture: name.to_string(),
        flows: Vec::new(),
        skipped: Vec::new(),
    };
    for (id, f) in select(flows, total, opts)? {
        match flow_whatif(id, f, opts, progress) {
            Ok(w) => report.flows.push(w),
            Err(reason) => report.skipped.push(Skipped { flow: id, reason }),
        }
    }
    if report.flows.is_empty() {
        let why: Vec<String> = report
            .skipped
            .iter()
            .map(|s| format!("flow {}: {}", s.flow, s.reason))
            .collect();
        return Err(format!("nothing to replay: {}", why.join("; ")));
    }
    Ok(report)
}

/// The side whose data TCP held longest in the capture, with the evidence:
/// the holds `diagnose` finds in the flow's exchanges (bare exchanges carry none).
fn held_side(f: &Flow, forced: Option<&str>) -> (String, String) {
    if let Some(s) = forced {
        return (s.to_string(), "chosen with --side".into());
    }
    let report = tinygram_analyze::diagnose_flow(f, &tinygram_analyze::Thresholds::default());
    let mut held = [0.0f64; 2];
    for e in &report.exchanges {
        for h in &e.held {
            held[usize::from(h.sender == "server")] += h.held_s;
        }
    }
    if held[0] + held[1] > 0.0 {
        let s = usize::from(held[1] > held[0]);
        return (
            ["client", "server"][s].to_string(),
            format!(
                "TCP held the client's data {:.1} ms and the server's {:.1} ms in all",
                held[0] * 1e3,
                held[1] * 1e3
            ),
        );
    }
    let s = usize::from(f.sides[1].bytes > f.sides[0].bytes);
    (
        ["client", "server"][s].to_string(),
        "no hold seen; the side that sent more".into(),
    )
}

pub fn flow_whatif(
    id: usize,
    f: &Flow,
    opts: &Options,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<FlowWhatif, String> {
    progress(&format!(
        "flow {id}: inferring path, stacks and application"
    ));
    let inference = tinygram_analyze::infer(f);
    let ex = tinygram_analyze::exchanges(f);
    let sch = schedule::schedule(f, &ex)?;
    let mut open = sch.open.clone();
    open.extend(path_open(&inference));
    let title = format!(
        "whatif-flow-{id}: {} -> {}",
        inference.client, inference.server
    );
    let scenario = write::scenario(
        &title,
        &inference,
        &sch,
        &open,
        opts.samples,
        write::Tcp::Inferred,
    );
    let src = Source {
        text: scenario.clone(),
        origin: format!("<whatif flow {id}>"),
        name: format!("whatif-flow-{id}"),
    };
    let space = Space::of_source(&src, &[]).map_err(|e| format!("the written scenario: {e}"))?;
    space
        .validate(&src, &[])
        .map_err(|e| format!("the written scenario: {e}"))?;
    let points = space.points()?;
    let (side, why) = held_side(f, opts.side.as_deref());
    let alts = alternatives::list(&inference, &sch, &side, opts, &title, &open)?;
    progress(&format!(
        "flow {id}: {} configurations x {} points",
        alts.len() + 1,
        points.len()
    ));
    let measured = measure::run_all(&src, &points, &alts, &inference, opts.threads)?;
    let baseline = measure::baseline(&sch, &measured.baseline, &points, &space)?;
    let alternatives = alternatives::judge(alts, &measured, &baseline.metrics);
    Ok(FlowWhatif {
        flow: id,
        client: inference.client.clone(),
        server: inference.server.clone(),
        exchanges: ex,
        turn_exchange: sch.source.clone(),
        notes: sch.notes.clone(),
        scenario,
        open,
        points: points.len(),
        held_side: side,
        held_why: why,
        baseline,
        alternatives,
        inference,
    })
}

/// A capture of one configuration's run at the open values' first point, as
/// pcap bytes taken where the original was: the replay (`None`) or
/// alternative `alt` (an index into `f.alternatives`).
pub fn replay_pcap(f: &FlowWhatif, alt: Option<usize>) -> Result<Vec<u8>, String> {
    let src = Source {
        text: f.scenario.clone(),
        origin: format!("<whatif flow {}>", f.flow),
        name: format!("whatif-flow-{}", f.flow),
    };
    let space = Space::of_source(&src, &[]).map_err(|e| e.to_string())?;
    let mut sets = space
        .points()?
        .first()
        .map(|p| p.overrides())
        .unwrap_or_default();
    let src = match alt.map(|i| &f.alternatives[i]) {
        None => src,
        Some(a) => {
            sets.extend(a.settings.iter().cloned());
            match &a.text {
                Some(t) => Source {
                    text: t.clone(),
                    ..src
                },
                None => src,
            }
        }
    };
    measure::pcap_of(&src, &sets, measure::vantage(&f.inference))
}

/// The alternative a user would try first: the Pareto-best one with the
/// lowest median exchange time (fewest data segments on a tie).
pub fn best(f: &FlowWhatif) -> Option<usize> {
    let key = |a: &Alternative| {
        a.metrics
            .as_ref()
            .map(|m| (m.p50_ms.p50, m.data_segments.p50))
    };
    (0..f.alternatives.len())
        .filter(|&i| f.alternatives[i].pareto && key(&f.alternatives[i]).is_some())
        .min_by(|&a, &b| {
            let (x, y) = (
                key(&f.alternatives[a]).unwrap(),
                key(&f.alternatives[b]).unwrap(),
            );
            x.0.total_cmp(&y.0).then(x.1.total_cmp(&y.1))
        })
}

/// Path values the capture leaves open, from the inference's own sweep lists.
/// A loss rate is swept only where the capture saw loss: with no
/// retransmission, the upper end of its interval is a bound on what a short
/// capture could miss, not a plausible value of the path to replay.
fn path_open(inf: &FlowInference) -> Vec<OpenKey> {
    let lossless = inf.path.loss.value.retransmits == 0;
    inf.scenario_keys()
        .into_iter()
        .filter(|k| k.key.starts_with("link.") && !k.sweep.is_empty())
        .filter(|k| !(k.key == "link.loss" && lossless))
        .map(|k| {
            let mut values = vec![k.value.clone()];
            values.extend(k.sweep.iter().cloned());
            values.dedup();
            OpenKey {
                spec: format!("{{ values = [{}] }}", values.join(", ")),
                why: format!("{} ({:?} confidence): {}", k.key, k.confidence, k.evidence),
                key: k.key,
            }
        })
        .collect()
}

/// A paired comparison of a configuration against the baseline at the same
/// points: lower at every point, higher at every point, the same within
/// `same`, or a conclusion that flips inside the open values.
pub fn compare(alt: &[f64], base: &[f64], same: f64) -> Change {
    let diffs: Vec<f64> = alt.iter().zip(base).map(|(a, b)| a - b).collect();
    if diffs.iter().all(|d| d.abs() <= same) {
        return Change::Same;
    }
    match Reading::of(diffs.iter().map(|&d| d <= same)) {
        Reading::Holds => Change::Lower,
        Reading::Fails => Change::Higher,
        Reading::Flips { yes, of } => Change::Flips { lower: yes, of },
    }
}

/// How a figure moved against the baseline over the open values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "change")]
pub enum Change {
    Same,
    Lower,
    Higher,
    /// Lower at `lower` of `of` points: the open values decide it.
    Flips {
        lower: usize,
        of: usize,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_paired_comparison_says_when_the_open_values_decide_it() {
        assert_eq!(compare(&[1.0, 2.0], &[5.0, 6.0], 0.1), Change::Lower);
        assert_eq!(compare(&[9.0, 9.0], &[5.0, 6.0], 0.1), Change::Higher);
        assert_eq!(compare(&[5.05, 6.0], &[5.0, 6.0], 0.1), Change::Same);
        assert_eq!(
            compare(&[1.0, 9.0], &[5.0, 6.0], 0.1),
            Change::Flips { lower: 1, of: 2 }
        );
    }
}
