//! `diagnose --rank`: each finding's fixes run through `whatif` on the flow
//! they came from, and ordered by what the replay measured (median exchange
//! time). `analyze` tags each fix with the change it makes; this joins the
//! two, so `analyze` stays free of the simulator.

use super::{flow_whatif, Alternative, FlowWhatif, Options};
use tinygram_analyze::{Flow, FlowReport, Remedy, ReplayEffect};

/// The `whatif` alternative a fix corresponds to, for a flow replayed with
/// `held` as the side whose send policy varies: `None` when the fix is on
/// the other side's sending, which that replay does not vary.
pub fn alternative_name(remedy: Remedy, fix_side: &str, held: &str) -> Option<String> {
    let send = |p: &str| (fix_side == held).then(|| format!("{held} {p}"));
    match remedy {
        Remedy::OneWrite => Some("each turn in one write".to_string()),
        Remedy::Nodelay => send("nodelay"),
        Remedy::Minshall => send("minshall"),
        Remedy::Doupnik => send("doupnik"),
        Remedy::ImmediateAcks => (fix_side != held).then(|| format!("{fix_side} immediate ACKs")),
    }
}

/// What the replay measured for the alternative named `name`.
fn effect(w: &FlowWhatif, name: &str) -> Option<ReplayEffect> {
    let a: &Alternative = w.alternatives.iter().find(|a| a.name == name)?;
    let m = a.metrics.as_ref()?;
    Some(ReplayEffect {
        alternative: name.to_string(),
        baseline_p50_ms: w.baseline.metrics.p50_ms.p50,
        p50_ms: m.p50_ms.p50,
        replay_matches: w.baseline.matches,
        baseline_error: w.baseline.median_rel_error,
    })
}

/// Runs `whatif` on flow `id` (1-based) once per side that held data in a
/// finding, fills each tagged fix's [`ReplayEffect`], and orders each
/// finding's fixes: measured ones by median exchange time, fastest first,
/// then the rest in their order. Returns the notes of replays that failed.
pub fn rank_flow(
    f: &Flow,
    id: usize,
    report: &mut FlowReport,
    opts: &Options,
    progress: &(dyn Fn(&str) + Sync),
) -> Vec<String> {
    let mut notes = Vec::new();
    for held in ["client", "server"] {
        let has_fixes = report
            .findings
            .iter()
            .any(|x| x.sender == held && x.recommendations.iter().any(|r| r.remedy.is_some()));
        if !has_fixes {
            continue;
        }
        let o = Options {
            flow: Some(id),
            side: Some(held.to_string()),
            tries: Vec::new(),
            ..opts.clone()
        };
        let w = match flow_whatif(id, f, &o, progress) {
            Ok(w) => w,
            Err(e) => {
                notes.push(format!(
                    "flow {id}: the {held}'s fixes were not replayed: {e}"
                ));
                continue;
            }
        };
        for x in report.findings.iter_mut().filter(|x| x.sender == held) {
            for r in &mut x.recommendations {
                r.replay = r
                    .remedy
                    .and_then(|m| alternative_name(m, r.side, held))
                    .and_then(|n| effect(&w, &n));
            }
            x.recommendations.sort_by(|a, b| {
                let key =
                    |r: &tinygram_analyze::Recommendation| r.replay.as_ref().map(|e| e.p50_ms);
                match (key(a), key(b)) {
                    (Some(p), Some(q)) => p.total_cmp(&q),
                    (Some(_), None) => std::cmp::Ordering::Less,
                    (None, Some(_)) => std::cmp::Ordering::Greater,
                    (None, None) => std::cmp::Ordering::Equal,
                }
            });
        }
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn send_fixes_map_only_onto_the_side_whose_policy_the_replay_varies() {
        assert_eq!(
            alternative_name(Remedy::Nodelay, "client", "client").as_deref(),
            Some("client nodelay")
        );
        assert_eq!(alternative_name(Remedy::Minshall, "server", "client"), None);
        assert_eq!(
            alternative_name(Remedy::ImmediateAcks, "server", "client").as_deref(),
            Some("server immediate ACKs")
        );
        assert_eq!(
            alternative_name(Remedy::ImmediateAcks, "client", "client"),
            None
        );
        assert_eq!(
            alternative_name(Remedy::OneWrite, "client", "client").as_deref(),
            Some("each turn in one write")
        );
    }
}
