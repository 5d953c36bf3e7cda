//! Which send rule a sender ran, from what it sent while data was
//! unacknowledged. A runt (a sub-MSS segment) that left where a rule would
//! have held it rules that rule out; a runt held until an ACK only suggests
//! a holding rule (the application may have written just then), so holds
//! pick the likely rule but never rule one out. `diagnose` uses the verdicts
//! so no fix recommends the rule a sender already follows; `infer` (and so
//! `whatif`) uses the likely rule for the replay.

use crate::diagnose::{distances, Thresholds};
use crate::evidence::{Confidence, Inferred};
use crate::flow::{Dir, Flow, Seg};
use crate::holds::{holds, HoldCause};
use serde::Serialize;
use std::collections::VecDeque;

/// A send rule for partial segments, as the wire can tell them apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SendRule {
    /// Strict Nagle (RFC 896; RFC 1122 4.2.3.4; Doupnik 1.3): a runt waits
    /// while any data is unacknowledged.
    Nagle,
    /// Minshall's modification (Minshall, via Cheshire, Nagle x delayed ACK;
    /// Linux): a runt waits only while an earlier runt is unacknowledged.
    Minshall,
    /// Never waits for an ACK: TCP_NODELAY (RFC 1122 4.2.3.4), or Doupnik's
    /// policy (Doupnik, A new TCP transmission policy, 2.1: the end of each
    /// write goes at once).
    NoHold,
}

impl SendRule {
    /// Strictest first.
    pub const ALL: [SendRule; 3] = [SendRule::Nagle, SendRule::Minshall, SendRule::NoHold];

    /// The rule in words.
    pub fn name(self) -> &'static str {
        match self {
            SendRule::Nagle => "strict Nagle",
            SendRule::Minshall => "Minshall's rule",
            SendRule::NoHold => "no hold (TCP_NODELAY or Doupnik's policy)",
        }
    }

    /// The `send_policy` value of a scenario that behaves as the rule.
    pub fn scenario_name(self) -> &'static str {
        match self {
            SendRule::Nagle => "nagle",
            SendRule::Minshall => "minshall",
            SendRule::NoHold => "nodelay",
        }
    }
}

/// The first segment that ruled a rule out.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Witness {
    /// When the runt passed the capture point (seconds since its start).
    pub at_s: f64,
    /// Its first sequence number (relative) and payload bytes.
    pub seq: u64,
    pub len: usize,
    pub detail: String,
}

/// One rule's verdict.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RuleVerdict {
    pub rule: SendRule,
    /// No segment of the sender contradicts the rule.
    pub consistent: bool,
    /// Runts that contradict it.
    pub witnesses: usize,
    /// The first of them.
    pub first_witness: Option<Witness>,
}

/// What one sender's segments say about its send rule.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SendRules {
    /// "client" or "server".
    pub sender: &'static str,
    /// Strict Nagle, Minshall, no hold: in that order.
    pub verdicts: Vec<RuleVerdict>,
    /// The rules no segment contradicts, strictest first; never empty (no
    /// segment contradicts a rule that never holds).
    pub possible: Vec<SendRule>,
    /// The rule to assume: the strictest possible one when runts were held
    /// or nothing was tested, else the most permissive holding rule left.
    pub likely: SendRule,
    /// New runts judged (not retransmissions, FINs, window-limited).
    pub runts: usize,
    /// Of those, sent while data was certainly unacknowledged: the tests.
    pub runts_with_data_out: usize,
    /// Runts the sender held until an ACK let them go ([`holds`]).
    pub runts_held: usize,
    /// Of those, runts held with no earlier runt unacknowledged: Minshall's
    /// rule would have sent them at once.
    pub runts_minshall_sends: usize,
}

impl SendRules {
    /// Whether no segment of the sender contradicts `rule`.
    pub fn consistent(&self, rule: SendRule) -> bool {
        self.possible.contains(&rule)
    }

    /// The strictest rule no segment contradicts.
    pub fn strictest(&self) -> SendRule {
        self.possible[0]
    }
}

fn name(d: Dir) -> &'static str {
    if d == 0 {
        "client"
    } else {
        "server"
    }
}

/// Which send rules the data `d` sent is consistent with, with evidence.
///
/// A runt sent while any data was unacknowledged rules out strict Nagle
/// (RFC 896; RFC 1122 4.2.3.4: the trailing runt of a burst too); one sent
/// while another runt was unacknowledged rules out Minshall too (Minshall,
/// via Cheshire). Judged conservatively, so the rule the sender ran is never
/// ruled out: an ACK counts as arrived as early as the path allows;
/// retransmissions, FINs, runts that reach the edge of the peer's window
/// (RFC 1122 4.2.3.4: the window allowed no more) and segments larger than
/// the MSS (offload: the stack split them) are not judged.
pub fn send_rules(f: &Flow, d: Dir) -> SendRules {
    let dist = distances(f);
    let smss = f.smss(d);
    // Original data of d not yet (possibly) acknowledged: (end, runt).
    let mut out: Vec<(u64, bool)> = Vec::new();
    let mut acked = 0u64;
    // Right edges the peer advertised, with times: any of the recent ones
    // may be the one the sender knew.
    let mut edges: Vec<(f64, u64)> = Vec::new();
    let mut max_wnd = 0u64;
    let mut high = 0u64;
    let (mut runts, mut tested) = (0usize, 0usize);
    let mut nagle: Vec<Witness> = Vec::new();
    let mut minshall: Vec<Witness> = Vec::new();
    // An ACK the capture shows at t reached the sender at t plus the capture
    // -> sender one-way delay; data the capture shows at t left the sender
    // the sender -> capture one-way delay before. So an ACK counts as arrived
    // before a segment seen `lag` (their sum, the capture -> sender -> capture
    // round trip) after it. The handshake times that round trip tightly (an
    // immediate answer); a margin is left for the stack's own processing in
    // it. Without the handshake the distance may hold a delayed ACK: no lag.
    let lag = if f.saw_syn {
        (0.8 * dist[d] - 50e-6).max(0.0)
    } else {
        0.0
    };
    let mut acks: VecDeque<(f64, u64)> = VecDeque::new();
    for g in &f.segs {
        if g.dir != d {
            if let Some(a) = g.ack {
                acks.push_back((g.t, a));
                if !g.flags.syn() {
                    edges.push((g.t, a + g.win));
                    max_wnd = max_wnd.max(g.win);
                }
            }
            continue;
        }
        if g.len == 0 || g.flags.syn() || g.duplicate {
            continue;
        }
        let new = !g.retransmit && !g.reordered && g.seq >= high;
        high = high.max(g.end());
        if !new {
            continue;
        }
        while acks.front().is_some_and(|&(t, _)| t <= g.t - lag) {
            let (_, a) = acks.pop_front().expect("front exists");
            acked = acked.max(a);
        }
        out.retain(|&(e, _)| e > acked);
        let runt = g.len < smss;
        if g.len > smss {
            out.push((g.end(), false));
            continue;
        }
        if runt && !g.flags.fin() && !window_limited(g, &edges, dist[d], max_wnd) {
            runts += 1;
            if !out.is_empty() {
                tested += 1;
                let witness = |detail: String| Witness {
                    at_s: g.t,
                    seq: g.seq,
                    len: g.len,
                    detail,
                };
                nagle.push(witness(format!(
                    "a {} B runt left with {} segment(s) unacknowledged",
                    g.len,
                    out.len()
                )));
                let runts_out = out.iter().filter(|x| x.1).count();
                if runts_out > 0 {
                    minshall.push(witness(format!(
                        "a {} B runt left with {runts_out} other runt(s) unacknowledged",
                        g.len
                    )));
                }
            }
        }
        out.push((g.end(), runt));
    }
    let th = Thresholds::default();
    let held: Vec<_> = holds(f, d, &dist, th.min_hold_s, th.release_slack_s)
        .into_iter()
        .filter(|h| h.cause == HoldCause::SendRule)
        .collect();
    let minshall_sends = held.iter().filter(|h| !h.runt_outstanding).count();
    let verdict = |rule, w: Vec<Witness>| RuleVerdict {
        rule,
        consistent: w.is_empty(),
        witnesses: w.len(),
        first_witness: w.into_iter().next(),
    };
    let verdicts = vec![
        verdict(SendRule::Nagle, nagle),
        verdict(SendRule::Minshall, minshall),
        verdict(SendRule::NoHold, Vec::new()),
    ];
    let possible: Vec<SendRule> = verdicts
        .iter()
        .filter(|v| v.consistent)
        .map(|v| v.rule)
        .collect();
    let likely = if !held.is_empty() || tested == 0 || possible.len() == 1 {
        possible[0]
    } else {
        // Runts left with data out and none was held: of the rules left, the
        // one that allowed what was seen most naturally.
        possible[possible.len() - 2]
    };
    SendRules {
        sender: name(d),
        verdicts,
        possible,
        likely,
        runts,
        runts_with_data_out: tested,
        runts_held: held.len(),
        runts_minshall_sends: minshall_sends,
    }
}

/// [`send_rules`] with a confidence and the evidence in words, for `infer`.
pub fn send_rule(f: &Flow, d: Dir) -> Inferred<SendRules> {
    let r = send_rules(f, d);
    let who = name(d);
    let (runts, tested, held) = (r.runts, r.runts_with_data_out, r.runts_held);
    let (conf, summary) = match (r.possible.len(), tested, held) {
        (1, _, _) => (
            Confidence::High,
            format!("the {who} sent runts that both Nagle and Minshall would have held: only rules that never hold remain"),
        ),
        (_, 0, 0) => (
            Confidence::Low,
            format!("the {who} never sent a runt while data was unacknowledged ({runts} runt(s) in all) and held none: nothing ruled out"),
        ),
        (_, _, h) if h > 0 => (
            Confidence::Medium,
            format!("{h} runt(s) the {who} held until an ACK suggest a holding rule ({} with no earlier runt unacknowledged); {tested} of {runts} runt(s) left with data unacknowledged", r.runts_minshall_sends),
        ),
        _ => (
            Confidence::Medium,
            format!("{tested} of the {who}'s {runts} runt(s) left with data unacknowledged; none was held"),
        ),
    };
    let mut ev = summary;
    for v in &r.verdicts {
        if let Some(x) = &v.first_witness {
            ev += &format!(
                "; {} ruled out at {:.6} s (seq {}): {}",
                v.rule.name(),
                x.at_s,
                x.seq,
                x.detail
            );
        }
    }
    Inferred::new(r, conf, ev)
}

/// Whether the peer's window may have allowed no more than this runt: it
/// reaches the smallest right edge advertised from one round trip (capture
/// -> sender -> capture) before it up to it, or it is at least half the
/// largest window seen (the sender-side SWS rule, RFC 1122 4.2.3.4).
fn window_limited(g: &Seg, edges: &[(f64, u64)], dist: f64, max_wnd: u64) -> bool {
    if max_wnd > 0 && g.len as u64 * 2 >= max_wnd {
        return true;
    }
    let since = g.t - dist * 1.25 - 0.002;
    let k = edges.partition_point(|&(t, _)| t < since);
    // The last edge before the span was in force at its start.
    let from = k.saturating_sub(1);
    edges[from..]
        .iter()
        .take_while(|&&(t, _)| t <= g.t)
        .any(|&(_, e)| g.end() >= e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flow::fixture::seg;

    fn flow(segs: Vec<Seg>) -> Flow {
        crate::flow::fixture::flow(1460, segs)
    }

    /// A full segment and its write's 540 B runt together: strict Nagle
    /// would have held the runt (RFC 896), Minshall's rule would not.
    #[test]
    fn a_runt_behind_a_full_segment_rules_out_only_strict_nagle() {
        let f = flow(vec![
            seg(0.0, 0, 1, 1460, 1),
            seg(0.01, 0, 1461, 540, 1),
            seg(20.0, 1, 1, 0, 2001),
        ]);
        let r = send_rules(&f, 0);
        assert_eq!(r.possible, [SendRule::Minshall, SendRule::NoHold]);
        assert_eq!(r.verdicts[0].witnesses, 1);
        assert_eq!(
            r.verdicts[0].first_witness.as_ref().map(|w| w.len),
            Some(540)
        );
        assert_eq!(r.likely, SendRule::Minshall);
    }

    /// Two runts out at once rule out Minshall's rule too.
    #[test]
    fn a_runt_behind_a_runt_rules_out_minshall() {
        let f = flow(vec![
            seg(0.0, 0, 1, 100, 1),
            seg(0.01, 0, 101, 100, 1),
            seg(20.0, 1, 1, 0, 201),
        ]);
        let r = send_rules(&f, 0);
        assert_eq!(r.possible, [SendRule::NoHold]);
        assert_eq!(r.likely, SendRule::NoHold);
    }

    /// A runt sent after the ACK of all earlier data tests nothing.
    #[test]
    fn a_runt_after_everything_was_acknowledged_rules_nothing_out() {
        let f = flow(vec![
            seg(0.0, 0, 1, 100, 1),
            seg(20.0, 1, 1, 0, 101),
            seg(100.0, 0, 101, 100, 1),
        ]);
        let r = send_rules(&f, 0);
        assert_eq!(r.possible, SendRule::ALL);
        assert_eq!((r.runts, r.runts_with_data_out), (2, 0));
        assert_eq!(r.likely, SendRule::Nagle);
        assert_eq!(send_rule(&f, 0).confidence, Confidence::Low);
    }
}
