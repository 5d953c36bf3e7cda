//! `whatif`'s text report: a mismatch warning first, then what was
//! inferred and on what evidence, how the replay matches, and the
//! alternatives with their ranges over the open values.

use super::{Change, FlowWhatif, Report};
use crate::space::Distribution;
use std::fmt::Write;

/// 3 significant digits, as people write measurements: 41.5, 0.612, 1230.
pub fn sig3(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return if x.is_nan() {
            "-".into()
        } else {
            format!("{x}")
        };
    }
    let decimals = (2 - x.abs().log10().floor() as i32).clamp(0, 6) as usize;
    format!("{x:.decimals$}")
}

/// A distribution as its median, with the range when the open values move it.
fn range(d: &Distribution, scale: f64) -> String {
    let (lo, mid, hi) = (d.min * scale, d.p50 * scale, d.max * scale);
    if (hi - lo).abs() <= 1e-9 * mid.abs().max(1.0) || sig3(lo) == sig3(hi) {
        sig3(mid)
    } else {
        format!("{} ({}-{})", sig3(mid), sig3(lo), sig3(hi))
    }
}

fn change(c: Option<Change>, ratio: Option<f64>) -> String {
    match (c, ratio) {
        (Some(Change::Same), _) => "same".into(),
        (Some(Change::Lower), Some(r)) => format!("{:.0} % lower", (1.0 - r) * 100.0),
        (Some(Change::Higher), Some(r)) => format!("{:.0} % higher", (r - 1.0) * 100.0),
        (Some(Change::Flips { lower, of }), _) => format!("flips: lower at {lower} of {of}"),
        (Some(Change::Lower), None) => "lower".into(),
        (Some(Change::Higher), None) => "higher".into(),
        (None, _) => "-".into(),
    }
}

/// The whole report as text.
pub fn text(r: &Report) -> String {
    let mut s = String::new();
    for f in &r.flows {
        s += &flow(r, f);
    }
    for k in &r.skipped {
        let _ = writeln!(s, "flow {}: not replayed: {}", k.flow, k.reason);
    }
    s
}

fn flow(r: &Report, f: &FlowWhatif) -> String {
    let mut s = String::new();
    let b = &f.baseline;
    if !b.matches {
        let _ = writeln!(
            s,
            "WARNING: the replay does not match the capture (median error {:.0} % per turn, over the {:.0} % a what-if needs): read the alternatives as directions, not numbers. {}",
            b.median_rel_error * 100.0,
            super::MATCH_TOLERANCE * 100.0,
            b.likely_cause.as_deref().unwrap_or("")
        );
    }
    let _ = writeln!(
        s,
        "whatif {}, flow {}: {} -> {}",
        r.capture, f.flow, f.client, f.server
    );
    let inf = &f.inference;
    let _ = writeln!(s, "\ninferred from the capture (confidence: evidence):");
    let p = &inf.path;
    let _ = writeln!(
        s,
        "  capture point   {:?} ({:?}: {})",
        p.vantage.value, p.vantage.confidence, p.vantage.evidence
    );
    let _ = writeln!(
        s,
        "  round trip      {} ms ({:?}: {})",
        sig3(p.min_rtt_s.value * 1e3),
        p.min_rtt_s.confidence,
        p.min_rtt_s.evidence
    );
    let rate = p.bottleneck_bps.value.map_or("not shown".to_string(), |b| {
        format!("{} Mbit/s", sig3(b / 1e6))
    });
    let _ = writeln!(
        s,
        "  bottleneck      {rate} ({:?}: {})",
        p.bottleneck_bps.confidence, p.bottleneck_bps.evidence
    );
    let _ = writeln!(
        s,
        "  loss            {:.2} % ({:?}: {})",
        p.loss.value.rate * 100.0,
        p.loss.confidence,
        p.loss.evidence
    );
    for side in &inf.sides {
        let sr = &side.send_rule.value;
        let possible: Vec<&str> = sr.possible.iter().map(|x| x.scenario_name()).collect();
        let dl = &side.ack.delack_s.value;
        let delack = if dl.is_open() {
            format!("{}-{} ms", sig3(dl.lo * 1e3), sig3(dl.hi * 1e3))
        } else {
            format!("{} ms", sig3(dl.lo * 1e3))
        };
        let _ = writeln!(
            s,
            "  {:<15} nearest profile {} ({:?}); send rule {} (possible: {}; {:?}: {}); ACKs {} with a {delack} delay ({:?}: {})",
            side.side,
            side.profile.value.name,
            side.profile.confidence,
            sr.likely.scenario_name(),
            possible.join(", "),
            side.send_rule.confidence,
            side.send_rule.evidence,
            side.ack.ack_policy.value,
            side.ack.delack_s.confidence,
            side.ack.delack_s.evidence
        );
    }
    let turns = b.captured_ms.len();
    let _ = writeln!(
        s,
        "  application     {} turn(s) replayed of {} exchange(s) ({:?}: {})",
        turns,
        f.exchanges.exchanges.len(),
        f.exchanges.shape,
        f.exchanges.note
    );
    for n in &f.notes {
        let _ = writeln!(s, "                  note: {n}");
    }
    if f.open.is_empty() {
        let _ = writeln!(
            s,
            "  open values     none: the capture shows every value the replay needs"
        );
    } else {
        for o in &f.open {
            let _ = writeln!(s, "  open            {} = {}: {}", o.key, o.spec, o.why);
        }
    }
    let _ = writeln!(
        s,
        "\nreplay of the capture ({} run(s) over the open values): median error {:.1} %, p95 {:.1} % per turn",
        f.points,
        b.median_rel_error * 100.0,
        b.p95_rel_error * 100.0
    );
    let show = turns.min(5);
    for i in 0..show {
        let _ = writeln!(
            s,
            "  turn {:<3} captured {:>9} ms   replayed {:>9} ms",
            i + 1,
            sig3(b.captured_ms[i]),
            sig3(b.replayed_ms[i])
        );
    }
    if turns > show {
        let _ = writeln!(s, "  ... and {} more turns (--json has all)", turns - show);
    }
    let _ = writeln!(
        s,
        "\n  {:<32} {:>20} {:>20} {:>14} {:>12} {:>10}  {:<22} segments",
        "configuration", "p50 ms", "p99 ms", "data segs", "small segs", "wire kB", "p50 vs replay",
    );
    let line = |s: &mut String, name: &str, m: &super::Metrics, ch: String, seg: String| {
        let _ = writeln!(
            s,
            "  {:<32} {:>20} {:>20} {:>14} {:>12} {:>10}  {:<22} {}",
            name,
            range(&m.p50_ms, 1.0),
            range(&m.p99_ms, 1.0),
            range(&m.data_segments, 1.0),
            range(&m.small_segments, 1.0),
            range(&m.wire_bytes, 1e-3),
            ch,
            seg
        );
    };
    line(
        &mut s,
        "replay (as captured)",
        &b.metrics,
        "-".into(),
        "-".into(),
    );
    for a in &f.alternatives {
        let name = format!("{}{}", a.name, if a.pareto { " *" } else { "" });
        match (&a.metrics, &a.error) {
            (Some(m), _) => line(
                &mut s,
                &name,
                m,
                change(a.p50_change, a.p50_ratio),
                change(a.segments_change, None),
            ),
            (None, Some(e)) => {
                let _ = writeln!(s, "  {name:<32} failed: {e}");
            }
            (None, None) => {}
        }
    }
    let _ = writeln!(
        s,
        "  * Pareto-best: no other configuration has both a lower median exchange time and fewer data segments.\n  Ranges are over the open values; \"flips\" marks a conclusion the open values decide.\n  The written scenario: --out DIR saves it (scenario-flow-{}.toml) to edit and `tinygram run`.\n",
        f.flow
    );
    s
}
