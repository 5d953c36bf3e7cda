//! Which send rule a side ran, from what it sent while data was
//! unacknowledged, and its initial window.

use super::stats::upper_mode;
use crate::diagnose::{distances, stall_events, Kind, Thresholds};
use crate::evidence::{Confidence, Inferred, Span};
use crate::flow::{Dir, Flow, Seg};
use serde::Serialize;

/// A send rule, by what it lets a sub-MSS segment (a runt) do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SendRule {
    /// Strict Nagle: a runt waits while any data is unacknowledged (RFC 896;
    /// RFC 1122 4.2.3.4; Doupnik 1.3).
    Nagle,
    /// Minshall: a runt waits only while another runt is unacknowledged
    /// (Minshall, via Cheshire).
    Minshall,
    /// No holding rule (TCP_NODELAY; RFC 1122 4.2.3.4); also any rule whose
    /// holds the capture never showed.
    Nodelay,
}

impl SendRule {
    pub const ALL: [SendRule; 3] = [SendRule::Nagle, SendRule::Minshall, SendRule::Nodelay];

    /// The `send_policy` value of a scenario.
    pub fn scenario_name(self) -> &'static str {
        match self {
            SendRule::Nagle => "nagle",
            SendRule::Minshall => "minshall",
            SendRule::Nodelay => "nodelay",
        }
    }
}

/// The segment that showed a rule was off.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RuledOut {
    /// Capture time of the runt, seconds since the capture's start.
    pub at_s: f64,
    /// Its first sequence number (relative) and payload bytes.
    pub seq: u64,
    pub len: usize,
    pub why: String,
}

/// The send rules consistent with what a sender did.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SendRuleSet {
    /// Rules still possible, strictest first; never empty (nodelay rules
    /// nothing out).
    pub possible: Vec<SendRule>,
    pub nagle_ruled_out_by: Option<RuledOut>,
    pub minshall_ruled_out_by: Option<RuledOut>,
    /// New runts sent (not retransmissions, not FIN, not window-limited).
    pub runts: usize,
    /// Of those, sent while data was certainly unacknowledged: the tests.
    pub runts_with_data_out: usize,
    /// Runts that left only when a late ACK arrived (held tails, diagnose):
    /// a holding rule was on, or the application wrote just then.
    pub held_tails: usize,
    /// The rule to assume first: the strictest possible one when held tails
    /// were seen or nothing was tested, else the most permissive one left.
    pub likely: SendRule,
}

impl SendRuleSet {
    pub fn allows(&self, r: SendRule) -> bool {
        self.possible.contains(&r)
    }
}

fn name(d: Dir) -> &'static str {
    if d == 0 {
        "client"
    } else {
        "server"
    }
}

/// The send rules consistent with what side `d` sent. A runt sent while
/// only full segments were unacknowledged rules out strict Nagle (RFC 896;
/// Doupnik 1.3); one sent while another runt was unacknowledged rules out
/// Minshall too (Minshall, via Cheshire). Judged conservatively, so the rule
/// the sender ran is never ruled out: an ACK counts as arrived as early as the
/// path allows; retransmissions, FIN segments,
/// runts that reach the edge of the peer's window (RFC 1122 4.2.3.4: the
/// window allowed no more) and segments larger than the MSS (offload: the
/// stack split them) are not judged.
pub fn send_rule(f: &Flow, d: Dir) -> Inferred<SendRuleSet> {
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
    let mut nagle_off: Option<RuledOut> = None;
    let mut minshall_off: Option<RuledOut> = None;
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
    let mut acks: std::collections::VecDeque<(f64, u64)> = Default::default();
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
                let runts_out = out.iter().filter(|x| x.1).count();
                if nagle_off.is_none() {
                    nagle_off = Some(RuledOut {
                        at_s: g.t,
                        seq: g.seq,
                        len: g.len,
                        why: format!(
                            "a {} B runt left with {} segment(s) unacknowledged",
                            g.len,
                            out.len()
                        ),
                    });
                }
                if runts_out > 0 && minshall_off.is_none() {
                    minshall_off = Some(RuledOut {
                        at_s: g.t,
                        seq: g.seq,
                        len: g.len,
                        why: format!(
                            "a {} B runt left with {runts_out} other runt(s) unacknowledged",
                            g.len
                        ),
                    });
                }
            }
        }
        out.push((g.end(), runt));
    }
    let held_tails = stall_events(f, d, &dist, &Thresholds::default())
        .iter()
        .filter(|(k, _)| *k == Kind::HeldTail)
        .count();
    let possible: Vec<SendRule> = SendRule::ALL
        .into_iter()
        .filter(|r| match r {
            SendRule::Nagle => nagle_off.is_none(),
            SendRule::Minshall => minshall_off.is_none(),
            SendRule::Nodelay => true,
        })
        .collect();
    let strictest = possible[0];
    let likely = if held_tails > 0 || tested == 0 {
        strictest
    } else if possible.len() == 1 {
        SendRule::Nodelay
    } else {
        // Data went out with runts, and nothing was held: between the rules
        // left, the one that allowed what was seen most naturally.
        possible[possible.len() - 2]
    };
    let who = name(d);
    let (conf, summary) = match (possible.len(), tested, held_tails) {
        (1, _, _) => (
            Confidence::High,
            format!("the {who} sent runts that both Nagle and Minshall would have held: only nodelay-like rules remain"),
        ),
        (_, 0, 0) => (
            Confidence::Low,
            format!("the {who} never sent a runt while data was unacknowledged ({runts} runt(s) in all) and no tail was held: nothing ruled out"),
        ),
        (_, _, h) if h > 0 => (
            Confidence::Medium,
            format!("{h} held tail(s) of the {who} suggest a holding rule; {tested} of {runts} runt(s) left with data unacknowledged"),
        ),
        _ => (
            Confidence::Medium,
            format!("{tested} of the {who}'s {runts} runt(s) left with data unacknowledged; no tail was held"),
        ),
    };
    let mut ev = summary;
    for (r, x) in [("Nagle", &nagle_off), ("Minshall", &minshall_off)] {
        if let Some(x) = x {
            ev += &format!(
                "; {r} ruled out at {:.6} s (seq {}): {}",
                x.at_s, x.seq, x.why
            );
        }
    }
    Inferred::new(
        SendRuleSet {
            possible,
            nagle_ruled_out_by: nagle_off,
            minshall_ruled_out_by: minshall_off,
            runts,
            runts_with_data_out: tested,
            held_tails,
            likely,
        },
        conf,
        ev,
    )
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

/// The initial window of side `d` in segments: the data it sent before the
/// first ACK of its data could have reached it (RFC 5681 3.1, RFC 6928).
/// Exact when more data left as soon as that ACK arrived (the window, not
/// the application, ended the flight); a lower bound otherwise.
pub fn initial_window(f: &Flow, d: Dir, dist: &[f64; 2]) -> Inferred<Span<u32>> {
    let who = name(d);
    let smss = f.smss(d) as u64;
    let data: Vec<&Seg> = f
        .segs
        .iter()
        .filter(|g| g.dir == d && g.len > 0 && !g.retransmit && !g.duplicate)
        .collect();
    let Some(first) = data.first() else {
        return Inferred::new(
            Span { lo: 1, hi: 10 },
            Confidence::Low,
            format!("the {who} sent no data: from 1 (RFC 2001) to 10 (RFC 6928) segments"),
        );
    };
    let first_ack = f
        .segs
        .iter()
        .find(|g| g.dir != d && g.ack.is_some_and(|a| a > first.seq) && g.t >= first.t);
    let Some(ack) = first_ack else {
        let bytes: u64 = data.iter().map(|g| g.len as u64).sum();
        let n = bytes.div_ceil(smss.max(1)) as u32;
        return Inferred::new(
            Span { lo: n.max(1), hi: n.max(10) },
            Confidence::Low,
            format!("none of the {who}'s data was acknowledged in the capture; it sent {n} segment(s) of data"),
        );
    };
    let arrives = ack.t + dist[d];
    let flight: Vec<&&Seg> = data.iter().filter(|g| g.t < arrives).collect();
    let bytes: u64 = flight.iter().map(|g| g.len as u64).sum();
    let n = bytes.div_ceil(smss.max(1)).max(1) as u32;
    let next = data.iter().find(|g| g.t >= arrives);
    let slack = 0.002 + 0.25 * dist[d];
    let peer_wnd = f
        .segs
        .iter()
        .rev()
        .find(|g| g.dir != d && g.t <= first.t && !g.flags.syn())
        .map(|g| g.win)
        .or_else(|| {
            f.segs
                .iter()
                .find(|g| g.dir != d && g.flags.syn())
                .map(|g| g.win)
        });
    let rwnd_limited = peer_wnd.is_some_and(|w| bytes + smss > w);
    // A runt released by the ACK was held by the send rule, not the window.
    let full_flight = flight.last().is_some_and(|g| g.len as u64 >= smss);
    // The flight must stand apart from what follows by more than the
    // spacing a bottleneck gives back-to-back segments: where a segment takes
    // longer to serialize than the round trip, the ACKs come back before the
    // flight has arrived and the flight cannot be told from the rest.
    // The spacing within the flight when it has two segments or more (none
    // where the capture is at the sender), else the flow's usual spacing.
    let within = flight.windows(2).map(|w| w[1].t - w[0].t);
    let spacing = if flight.len() >= 2 {
        within.fold(0.0, f64::max)
    } else {
        let gaps: Vec<f64> = data.windows(2).map(|w| w[1].t - w[0].t).collect();
        upper_mode(&gaps, 0.1, 50e-6).map_or(0.0, |c| c.median)
    };
    let apart = match (flight.last(), next) {
        (Some(l), Some(x)) => x.t - l.t > 2.0 * spacing,
        _ => false,
    };
    match next {
        Some(x)
            if x.t - arrives <= slack
                && !rwnd_limited
                && full_flight
                && apart
                && x.len as u64 >= smss =>
        {
            Inferred::new(
            Span::exact(n),
            if flight.len() >= 2 { Confidence::High } else { Confidence::Medium },
            format!(
                "the {who} sent {bytes} B ({n} segment(s) of {smss} B) before the first ACK of its data could reach it, and more {:.1} ms after that ACK arrived: the window ended the flight",
                (x.t - arrives).max(0.0) * 1e3
            ),
            )
        }
        _ => Inferred::new(
            Span { lo: n, hi: n.max(10) },
            Confidence::Low,
            format!(
                "the {who} sent {bytes} B ({n} segment(s)) before its first ACK could arrive, then {}: a lower bound",
                if rwnd_limited {
                    "the peer's window was full".to_string()
                } else if !full_flight || next.is_some_and(|x| (x.len as u64) < smss) {
                    "a runt (the send rule or the application ended the flight)".to_string()
                } else if !apart && next.is_some() {
                    format!(
                        "more at the same {:.3} ms spacing as within the flight (the bottleneck spreads it beyond the round trip)",
                        spacing * 1e3
                    )
                } else {
                    match next {
                        Some(x) => format!("paused {:.1} ms (the application ran out of data)", (x.t - arrives) * 1e3),
                        None => "nothing more".to_string(),
                    }
                }
            ),
        ),
    }
}
