//! The fixes `whatif` tries: every send policy on the side TCP held, the
//! ACK policies on the other side, writing each turn at once, each named
//! stack at both ends, and the user's own `--try` overrides; then each
//! judged against the replayed baseline at the same points.

use super::measure::{self, Measured};
use super::schedule::Schedule;
use super::write::{self, dur, Tcp};
use super::{compare, Change, Metrics, OpenKey, Options};
use serde::Serialize;
use tinygram_analyze::FlowInference;

/// What kind of fix an alternative is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A send policy on the side whose data was held (Nagle and its fixes).
    Send,
    /// An ACK policy on the receiving side.
    Ack,
    /// The application writes each turn in one call.
    Write,
    /// A named stack profile at both ends.
    Profile,
    /// The user's `--try`.
    Try,
}

/// One alternative, and once run, what it did against the baseline.
#[derive(Clone, Debug, Serialize)]
pub struct Alternative {
    pub name: String,
    pub kind: Kind,
    /// `KEY=VALUE` overrides on the written scenario.
    pub settings: Vec<String>,
    /// A scenario text replacing the written one (a profile at both ends).
    #[serde(skip)]
    pub text: Option<String>,
    pub metrics: Option<Metrics>,
    /// Median exchange time and data segments against the baseline, at the same points.
    pub p50_change: Option<Change>,
    pub segments_change: Option<Change>,
    /// Median over the points of this alternative's median completion
    /// divided by the baseline's.
    pub p50_ratio: Option<f64>,
    /// No other configuration is at least as good in both median completion
    /// and data segments, and better in one (medians over the points).
    pub pareto: bool,
    pub error: Option<String>,
}

impl Alternative {
    fn new(name: impl Into<String>, kind: Kind, settings: Vec<String>) -> Alternative {
        Alternative {
            name: name.into(),
            kind,
            settings,
            text: None,
            metrics: None,
            p50_change: None,
            segments_change: None,
            p50_ratio: None,
            pareto: false,
            error: None,
        }
    }
}

/// The send policies tried (`tinygram policies`), in the order shown.
pub const SEND_POLICIES: &[&str] = &[
    "nagle",
    "nagle-liberal",
    "nagle-half",
    "minshall",
    "doupnik",
    "doupnik-liberal",
    "cork",
    "nodelay",
];

/// A `--try` argument: `KEY=VALUE[;KEY=VALUE...]`.
pub fn parse_try(t: &str) -> Result<Vec<String>, String> {
    let sets: Vec<String> = t
        .split(';')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect();
    if sets.is_empty() || sets.iter().any(|s| !s.contains('=')) {
        return Err(format!(
            "--try {t:?}: expected KEY=VALUE, several joined with ';' (as --set takes them)"
        ));
    }
    Ok(sets)
}

/// Every alternative for a flow whose `side` held data.
pub fn list(
    inf: &FlowInference,
    sch: &Schedule,
    side: &str,
    opts: &Options,
    title: &str,
    open: &[OpenKey],
) -> Result<Vec<Alternative>, String> {
    let other = if side == "client" { "server" } else { "client" };
    let mut out = Vec::new();
    for p in SEND_POLICIES {
        out.push(Alternative::new(
            format!("{side} {p}"),
            Kind::Send,
            vec![format!("{side}.send_policy=\"{p}\"")],
        ));
    }
    out.push(Alternative::new(
        "each turn in one write",
        Kind::Write,
        vec![format!("workload.exchanges={}", coalesced(sch))],
    ));
    let o = &inf.sides[usize::from(other == "server")];
    let inferred_delack = o.ack.delack_s.value.hi;
    let ack = |name: String, sets: Vec<String>| Alternative::new(name, Kind::Ack, sets);
    out.push(ack(
        format!("{other} immediate ACKs"),
        vec![format!("{other}.ack_policy=\"immediate\"")],
    ));
    out.push(ack(
        format!("{other} quickack"),
        vec![format!("{other}.ack_policy=\"quickack\"")],
    ));
    out.push(ack(
        format!("{other} delayed ACK 40ms"),
        vec![
            format!("{other}.ack_policy=\"delayed\""),
            format!("{other}.delack=\"40ms\""),
        ],
    ));
    if inferred_delack > 0.0 && (inferred_delack - 0.040).abs() > 0.002 {
        out.push(ack(
            format!("{other} delayed ACK {}", dur(inferred_delack)),
            vec![
                format!("{other}.ack_policy=\"delayed\""),
                format!("{other}.delack=\"{}\"", dur(inferred_delack)),
            ],
        ));
    }
    // Westfield: ACK at once when more segments arrived than the sender can
    // send before it must wait for one: the receiver's window in segments.
    let mss = inf.sides[usize::from(side == "server")]
        .mss
        .value
        .or(o.mss.value)
        .map_or(1448, u64::from)
        .max(1);
    let win_segments = (o.rcv_window.value.max / mss).max(2) - 1;
    out.push(ack(
        format!("{other} interactivity:{win_segments}"),
        vec![format!(
            "{other}.ack_policy=\"interactivity:{win_segments}\""
        )],
    ));
    for p in tinygram_proto::profile::PROFILES {
        let mut a = Alternative::new(format!("{} at both ends", p.name), Kind::Profile, vec![]);
        a.text = Some(write::scenario(
            title,
            inf,
            sch,
            open,
            opts.samples,
            Tcp::Profile(p.name),
        ));
        out.push(a);
    }
    for t in &opts.tries {
        out.push(Alternative::new(t.clone(), Kind::Try, parse_try(t)?));
    }
    Ok(out)
}

/// The turns as the scenario's `workload.exchanges`, each side's writes of a
/// turn made one write.
fn coalesced(sch: &Schedule) -> String {
    let items: Vec<String> = sch
        .turns
        .iter()
        .map(|t| {
            let mut s = format!(
                "{{ request = [{}], response = [{}]",
                t.request.iter().sum::<u64>(),
                t.response.iter().sum::<u64>()
            );
            if let Some(x) = t.think_s {
                s += &format!(", think = \"{}\"", dur(x));
            }
            if let Some(x) = t.pause_s {
                s += &format!(", pause = \"{}\"", dur(x));
            }
            s + " }"
        })
        .collect();
    format!("[{}]", items.join(", "))
}

fn median(v: &[f64]) -> f64 {
    crate::space::Distribution::of(v).map_or(f64::NAN, |d| d.p50)
}

/// Fills each alternative's figures, its changes against the baseline at the
/// same points, and which configurations are Pareto-best.
pub fn judge(mut alts: Vec<Alternative>, m: &Measured, base: &Metrics) -> Vec<Alternative> {
    let base_cols = measure::columns(&m.baseline);
    let [base_p50, _, _, _, base_segs, _, _] = &base_cols;
    for (a, runs) in alts.iter_mut().zip(&m.alternatives) {
        let runs = match runs {
            Ok(r) => r,
            Err(e) => {
                a.error = Some(e.clone());
                continue;
            }
        };
        match measure::metrics(runs) {
            Ok(x) => a.metrics = Some(x),
            Err(e) => {
                a.error = Some(e);
                continue;
            }
        }
        let [p50, _, _, _, segs, _, _] = measure::columns(runs);
        // Within 2 % or 0.05 ms is the same completion; a segment is a segment.
        let same = (base.p50_ms.p50 * 0.02).max(0.05);
        a.p50_change = Some(compare(&p50, base_p50, same));
        a.segments_change = Some(compare(&segs, base_segs, 0.5));
        let ratios: Vec<f64> = p50.iter().zip(base_p50).map(|(x, b)| x / b).collect();
        a.p50_ratio = Some(median(&ratios));
    }
    // Pareto over (median completion, data segments), the baseline included.
    let cands: Vec<(f64, f64)> = std::iter::once((base.p50_ms.p50, base.data_segments.p50))
        .chain(alts.iter().map(|a| {
            a.metrics
                .as_ref()
                .map_or((f64::INFINITY, f64::INFINITY), |x| {
                    (x.p50_ms.p50, x.data_segments.p50)
                })
        }))
        .collect();
    for (i, a) in alts.iter_mut().enumerate() {
        let (l, s) = cands[i + 1];
        a.pareto = l.is_finite()
            && !cands
                .iter()
                .any(|&(l2, s2)| l2 <= l && s2 <= s && (l2 < l || s2 < s));
    }
    alts
}
