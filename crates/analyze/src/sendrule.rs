//! Which send rule a sender's segments are consistent with, from what it did:
//! a runt it sent that a rule would have held rules that rule out; a runt it
//! held that a rule would have sent rules that one out. Fixes must not
//! recommend a rule the sender already follows, and `whatif` replays the
//! sender with a rule its segments allow.

use crate::diagnose::distances;
use crate::flow::{Dir, Flow};
use crate::holds::{holds, HoldCause};
use serde::Serialize;

/// A send rule for partial segments, as the wire can tell them apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SendRule {
    /// Strict Nagle (RFC 896; RFC 1122 4.2.3.4; BSD): a partial segment waits
    /// while any data sent before the current burst is unacknowledged.
    Nagle,
    /// Minshall's modification (via Cheshire, Nagle x delayed ACK; Linux): a
    /// partial segment waits only while an earlier partial one is unacknowledged.
    Minshall,
    /// Never waits for an ACK: TCP_NODELAY, or Doupnik's policy (Doupnik, A
    /// new TCP transmission policy, 2.1: send the end of each write at once).
    NoHold,
}

impl SendRule {
    /// The rule in words.
    pub fn name(self) -> &'static str {
        match self {
            SendRule::Nagle => "strict Nagle",
            SendRule::Minshall => "Minshall's rule",
            SendRule::NoHold => "no hold (TCP_NODELAY or Doupnik's policy)",
        }
    }
}

/// The first segment that ruled a rule out.
#[derive(Clone, Debug, Serialize)]
pub struct Witness {
    /// When the segment passed the capture point (seconds since its start).
    pub at_s: f64,
    pub detail: String,
}

/// One rule's verdict.
#[derive(Clone, Debug, Serialize)]
pub struct RuleVerdict {
    pub rule: SendRule,
    /// No segment of the sender contradicts the rule.
    pub consistent: bool,
    /// Segments that contradict it.
    pub witnesses: usize,
    /// The first of them.
    pub first_witness: Option<Witness>,
}

/// What one sender's segments say about its send rule.
#[derive(Clone, Debug, Serialize)]
pub struct SendRules {
    /// "client" or "server".
    pub sender: &'static str,
    /// Strict Nagle, Minshall, no hold: in that order.
    pub verdicts: Vec<RuleVerdict>,
    /// Runts the sender held until an ACK let them go.
    pub runts_held: usize,
    /// Of those, runts held with no earlier runt unacknowledged: Minshall's
    /// rule would have sent them at once.
    pub runts_minshall_sends: usize,
}

/// Holds released by an ACK that rule out the no-hold rules: one could be an
/// application write that happened to coincide with the ACK, two cannot.
const HOLDS_TO_RULE_OUT_NO_HOLD: usize = 2;

impl SendRules {
    /// Whether the sender's segments allow `rule`.
    pub fn consistent(&self, rule: SendRule) -> bool {
        self.verdicts.iter().any(|v| v.rule == rule && v.consistent)
    }

    /// The strictest rule the segments allow: strict Nagle if nothing ruled
    /// it out, else Minshall, else no hold.
    pub fn strictest(&self) -> Option<SendRule> {
        self.verdicts.iter().find(|v| v.consistent).map(|v| v.rule)
    }
}

/// Which send rules the data `s` sent is consistent with, with evidence.
///
/// A sub-MSS segment sent while data from before its burst was
/// unacknowledged rules out strict Nagle (a burst's trailing runt may go with
/// it: Doupnik 1.5's liberal reading, BSD's); one sent while another sub-MSS
/// segment was unacknowledged rules out Minshall too; a runt held until an
/// ACK with no earlier runt outstanding rules out Minshall; runts held until
/// ACKs rule out the rules that never hold. Segments at the peer's window
/// edge and FINs are not judged: the window or the close sent them.
pub fn send_rules_consistent(f: &Flow, s: Dir) -> SendRules {
    let smss = f.smss(s);
    let r = 1 - s;
    let mut nagle = Vec::new();
    let mut minshall = Vec::new();
    // Outstanding new data of s: (end, time sent, len).
    let mut flight: Vec<(u64, f64, usize)> = Vec::new();
    let (mut high_ack, mut edge) = (0u64, None::<u64>);
    // When the peer's latest segment passed: a burst begins after it.
    let mut burst_start = f64::NEG_INFINITY;
    for g in &f.segs {
        if g.duplicate {
            continue;
        }
        if g.dir == r {
            burst_start = g.t;
            if let (Some(a), false) = (g.ack, g.flags.syn()) {
                edge = Some(a + g.win);
                high_ack = high_ack.max(a);
                let n = flight.partition_point(|&(e, _, _)| e <= high_ack);
                flight.drain(..n);
            }
            continue;
        }
        if g.len == 0 || g.retransmit || g.flags.syn() {
            continue;
        }
        let at_edge = edge.is_some_and(|e| g.end() >= e);
        if g.len < smss && !g.flags.fin() && !at_edge {
            let before: u64 = flight
                .iter()
                .filter(|x| x.1 < burst_start)
                .map(|x| x.2 as u64)
                .sum();
            if before > 0 {
                nagle.push(Witness {
                    at_s: g.t,
                    detail: format!(
                        "a {} B segment left while {before} B sent before the last ACK were unacknowledged",
                        g.len
                    ),
                });
            }
            if let Some(x) = flight.iter().find(|x| x.2 < smss) {
                minshall.push(Witness {
                    at_s: g.t,
                    detail: format!(
                        "a {} B segment left while an earlier {} B segment (sent at {:.6} s) was unacknowledged",
                        g.len, x.2, x.1
                    ),
                });
            }
        }
        flight.push((g.end(), g.t, g.len));
    }
    let held: Vec<_> = holds(f, s, &distances(f), 0.001, 0.002)
        .into_iter()
        .filter(|h| h.cause == HoldCause::SendRule)
        .collect();
    let minshall_sends: Vec<_> = held.iter().filter(|h| !h.runt_outstanding).collect();
    minshall.extend(minshall_sends.iter().map(|h| Witness {
        at_s: h.released_s,
        detail: format!(
            "a {} B segment waited {:.1} ms for an ACK while only full segments were unacknowledged",
            h.len,
            h.held_s() * 1e3
        ),
    }));
    minshall.sort_by(|a, b| a.at_s.total_cmp(&b.at_s));
    let no_hold: Vec<Witness> = if held.len() >= HOLDS_TO_RULE_OUT_NO_HOLD {
        held.iter()
            .map(|h| Witness {
                at_s: h.released_s,
                detail: format!(
                    "a {} B segment waited {:.1} ms and left as an ACK arrived",
                    h.len,
                    h.held_s() * 1e3
                ),
            })
            .collect()
    } else {
        Vec::new()
    };
    let verdict = |rule, w: Vec<Witness>| RuleVerdict {
        rule,
        consistent: w.is_empty(),
        witnesses: w.len(),
        first_witness: w.into_iter().next(),
    };
    SendRules {
        sender: if s == 0 { "client" } else { "server" },
        runts_held: held.len(),
        runts_minshall_sends: minshall_sends.len(),
        verdicts: vec![
            verdict(SendRule::Nagle, nagle),
            verdict(SendRule::Minshall, minshall),
            verdict(SendRule::NoHold, no_hold),
        ],
    }
}
