//! Runs the replay and every alternative at every point of the open values,
//! and measures the replay the way the capture was measured: captured at the
//! same point and read by the same analyzer.

use super::alternatives::Alternative;
use super::schedule::Schedule;
use super::{Baseline, Metrics, MATCH_TOLERANCE};
use crate::space::{Distribution, Point, Space, Spec};
use crate::Source;
use serde_json::Value;
use tinygram_analyze::infer::Vantage;
use tinygram_analyze::FlowInference;
use tinygram_sim::pcap::{write_pcap, Vantage as SimVantage};

/// One run: its result JSON and, for the replay, each turn's completion as
/// the client saw it (ms).
#[derive(Clone, Debug)]
pub struct PointRun {
    pub result: Value,
    pub turns_ms: Vec<f64>,
}

/// Every configuration's runs, point by point (the same points for all).
pub struct Measured {
    pub baseline: Vec<PointRun>,
    pub alternatives: Vec<Result<Vec<PointRun>, String>>,
}

/// Runs the scenario text with `sets`; with `capture`, also measures the
/// turns from a capture at that point, read back by the analyzer.
fn run_one(src: &Source, sets: &[String], capture: Option<SimVantage>) -> Result<PointRun, String> {
    let set = src.set(sets, None).map_err(|e| e.to_string())?;
    let mut sim = match crate::World::of(&set.base) {
        crate::World::TwoHost(sim) => sim,
        crate::World::ManyFlow(_) => return Err("whatif replays one connection".into()),
    };
    if capture.is_some() {
        sim.enable_capture(false);
    }
    let r = sim.run(&mut |_, _| {});
    let result = serde_json::to_value(&r).map_err(|e| e.to_string())?;
    let mut turns_ms = Vec::new();
    if let Some(v) = capture {
        let mut pcap = Vec::new();
        let (events, _) = sim.capture();
        write_pcap(&mut pcap, events, None, v).map_err(|e| e.to_string())?;
        let cap = tinygram_analyze::read_bytes(&pcap).map_err(|e| e.to_string())?;
        if let Some(f) = tinygram_analyze::flows(&cap).first() {
            let ex = tinygram_analyze::exchanges(f);
            turns_ms = ex
                .exchanges
                .iter()
                .filter(|e| e.request_bytes > 0 && e.response_bytes > 0)
                .map(|e| e.completion_at_client_s.unwrap_or(f64::NAN) * 1e3)
                .collect();
        }
    }
    Ok(PointRun { result, turns_ms })
}

/// The replay's capture point: the original's, or the client's when the
/// original was taken between the hosts (the analyzer corrects both to the client).
fn vantage(inf: &FlowInference) -> SimVantage {
    match inf.path.vantage.value {
        Vantage::Server => SimVantage::Server,
        _ => SimVantage::Client,
    }
}

/// Runs the baseline and each alternative at every point on `threads` threads.
pub fn run_all(
    src: &Source,
    points: &[Point],
    alts: &[Alternative],
    inf: &FlowInference,
    threads: usize,
) -> Result<Measured, String> {
    let n = points.len();
    let configs = alts.len() + 1;
    let alt_srcs: Vec<Source> = alts
        .iter()
        .map(|a| match &a.text {
            Some(t) => Source {
                text: t.clone(),
                origin: format!("{} ({})", src.origin, a.name),
                name: src.name.clone(),
            },
            None => src.clone(),
        })
        .collect();
    let v = vantage(inf);
    let runs = crate::pool::map(
        n * configs,
        threads,
        &|i| {
            let (c, p) = (i / n, i % n);
            let mut sets = points[p].overrides();
            if c == 0 {
                return run_one(src, &sets, Some(v));
            }
            sets.extend(alts[c - 1].settings.iter().cloned());
            run_one(&alt_srcs[c - 1], &sets, None)
        },
        &|| {},
    );
    let mut it = runs.into_iter();
    let baseline: Vec<PointRun> = it
        .by_ref()
        .take(n)
        .collect::<Result<_, _>>()
        .map_err(|e| format!("the replay failed: {e}"))?;
    let alternatives = (0..alts.len())
        .map(|_| it.by_ref().take(n).collect::<Result<Vec<_>, _>>())
        .collect();
    Ok(Measured {
        baseline,
        alternatives,
    })
}

/// A numeric field of a two-host result, summed over both hosts for a
/// per-host counter (`data_segments`).
fn field(r: &Value, path: &str) -> f64 {
    if let Some(host) = path.strip_prefix("both.") {
        return field(r, &format!("client.{host}")) + field(r, &format!("server.{host}"));
    }
    let mut v = r;
    for p in path.split('.') {
        v = &v[p];
    }
    v.as_f64().unwrap_or(f64::NAN)
}

/// The per-point values of each headline figure, in point order.
pub fn columns(runs: &[PointRun]) -> [Vec<f64>; 7] {
    let col = |p: &str| {
        runs.iter()
            .map(|r| field(&r.result, p))
            .collect::<Vec<f64>>()
    };
    [
        col("completion_ms.p50"),
        col("completion_ms.p99"),
        col("completion_ms.max"),
        col("sim_time_s"),
        col("both.data_segments"),
        col("both.small_segments"),
        col("both.wire_bytes"),
    ]
}

/// The headline figures' distributions over the points.
pub fn metrics(runs: &[PointRun]) -> Result<Metrics, String> {
    let d = |v: &Vec<f64>, what: &str| {
        Distribution::of(v).ok_or_else(|| format!("no {what}: no turn completed in any run"))
    };
    let [p50, p99, max, total, data, small, wire] = columns(runs);
    Ok(Metrics {
        p50_ms: d(&p50, "median completion")?,
        p99_ms: d(&p99, "99th percentile")?,
        max_ms: d(&max, "slowest turn")?,
        total_s: d(&total, "total time")?,
        data_segments: d(&data, "data segments")?,
        small_segments: d(&small, "small segments")?,
        wire_bytes: d(&wire, "wire bytes")?,
    })
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    if v.is_empty() {
        f64::NAN
    } else {
        v[v.len() / 2]
    }
}

/// Each turn's relative error of a replay against the capture.
fn rel_errors(captured: &[f64], replayed: &[f64]) -> Vec<f64> {
    captured
        .iter()
        .zip(replayed)
        .filter(|(c, r)| c.is_finite() && r.is_finite() && **c > 0.0)
        .map(|(c, r)| (r - c).abs() / c)
        .collect()
}

/// How the replay matches the capture, and what is likely wrong when not.
pub fn baseline(
    sch: &Schedule,
    runs: &[PointRun],
    points: &[Point],
    space: &Space,
) -> Result<Baseline, String> {
    let captured: Vec<f64> = sch
        .turns
        .iter()
        .map(|t| t.captured_s.map_or(f64::NAN, |s| s * 1e3))
        .collect();
    let replayed: Vec<f64> = (0..captured.len())
        .map(|i| {
            let mut v: Vec<f64> = runs
                .iter()
                .filter_map(|r| r.turns_ms.get(i).copied())
                .filter(|x| x.is_finite())
                .collect();
            median(&mut v)
        })
        .collect();
    let mut errs = rel_errors(&captured, &replayed);
    errs.sort_by(f64::total_cmp);
    let q = |p: f64| {
        if errs.is_empty() {
            f64::NAN
        } else {
            errs[((p * errs.len() as f64).ceil() as usize).clamp(1, errs.len()) - 1]
        }
    };
    let (median_rel_error, p95_rel_error) = (q(0.5), q(0.95));
    let matches = median_rel_error <= MATCH_TOLERANCE;
    let likely_cause = if matches {
        None
    } else {
        Some(cause(&captured, &replayed, runs, points, space))
    };
    Ok(Baseline {
        captured_ms: captured,
        replayed_ms: replayed,
        median_rel_error,
        p95_rel_error,
        matches,
        likely_cause,
        metrics: metrics(runs)?,
    })
}

/// The inferred value most likely behind a replay that misses: an open value
/// whose setting moves the error most (and where it is smallest), else the
/// direction of the miss and the values that shape it.
fn cause(
    captured: &[f64],
    replayed: &[f64],
    runs: &[PointRun],
    points: &[Point],
    space: &Space,
) -> String {
    let point_err: Vec<f64> = runs
        .iter()
        .map(|r| {
            let mut e = rel_errors(captured, &r.turns_ms);
            median(&mut e)
        })
        .collect();
    if let Some(best) = (0..point_err.len())
        .filter(|&i| point_err[i].is_finite())
        .min_by(|&a, &b| point_err[a].total_cmp(&point_err[b]))
    {
        let worst = point_err
            .iter()
            .copied()
            .filter(|x| x.is_finite())
            .fold(0.0, f64::max);
        if worst - point_err[best] > 0.05 && !space.is_empty() {
            let at: Vec<String> = points[best]
                .sets
                .iter()
                .map(|(k, v)| format!("{k} = {v}"))
                .collect();
            let keys: Vec<&str> = space
                .open
                .iter()
                .filter(|o| !matches!(o.spec, Spec::Values(ref v) if v.len() < 2))
                .map(|o| o.key.as_str())
                .collect();
            return format!(
                "the open values decide it: the error runs from {:.0} % to {:.0} % over {}; it is smallest at {}",
                point_err[best] * 100.0,
                worst * 100.0,
                keys.join(", "),
                at.join(", ")
            );
        }
    }
    let (mut slower, mut n) = (0, 0);
    for (c, r) in captured.iter().zip(replayed) {
        if c.is_finite() && r.is_finite() {
            n += 1;
            slower += usize::from(r > c);
        }
    }
    if slower * 2 > n {
        "the replay is slower than the capture in most turns: a hold the replay adds that the \
         capture's stack did not make (the inferred send rule or delayed-ACK time), or a path \
         slower than inferred (link.rate, link.delay)"
            .into()
    } else {
        "the replay is faster than the capture in most turns: time the capture spent that the \
         replay does not model (application time hidden under a hold, CPU, a hold of another \
         kind), or an inferred delayed-ACK time that is too short"
            .into()
    }
}
