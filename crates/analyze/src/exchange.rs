//! A flow's application, as the segments show it: its exchanges (a turn of
//! client data, then the server's answer), the writes each side made as far
//! as segment boundaries reveal them, how long each exchange took, and each
//! side's think time net of the path and of any time TCP held the data.
//!
//! Times are read at the capture point and moved to the hosts with the
//! capture point's round trip to each ([`crate::diagnose::distances`]): the
//! server saw the request's last byte half that round trip after the capture
//! point did, and sent its answer half of it before, so its think time is the
//! gap at the capture point less the whole round trip, however the path
//! splits it.

use crate::diagnose::{distances, Kind};
use crate::evidence::{Confidence, Inferred, Span};
use crate::flow::{Dir, Flow, Seg};
use serde::Serialize;

/// What kind of conversation a flow is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Shape {
    /// No data either way.
    Empty,
    /// Only one side sent data (a bulk transfer, a stream of keystrokes).
    OneWay,
    /// The client speaks, the server answers, in turns.
    RequestResponse,
    /// The server speaks first (a banner, a greeting), then turns.
    ServerFirst,
    /// The server answered requests while later requests were already on the
    /// way: turns overlap, and request/response pairs cannot be read off the
    /// order of the segments.
    Pipelined,
}

/// How a write's end is known.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Boundary {
    /// Seen: a sub-MSS segment with PSH (RFC 9293 3.9.1: PSH marks the end of
    /// the data a send call gave), or the end of the turn.
    Seen,
    /// Likely: a full segment with PSH (stacks also push mid-write), or a
    /// sub-MSS segment from a sender that never sets PSH.
    Inferred,
}

/// One write of the application, as far as the segments delimit it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Write {
    pub bytes: u64,
    pub end: Boundary,
}

/// Time TCP held one side's data within an exchange, by kind of hold.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HeldPart {
    /// The finding's kind, as in `findings[].kind`.
    pub kind: Kind,
    /// Whose data was held: "client" or "server".
    pub sender: &'static str,
    pub held_s: f64,
}

/// One turn of client data and the server's answer.
#[derive(Clone, Debug, Serialize)]
pub struct Exchange {
    /// When the first request byte passed the capture point (seconds since
    /// the capture's start); for a server's greeting, its first byte.
    pub start_s: f64,
    pub request_bytes: u64,
    pub response_bytes: u64,
    /// The client's writes (several coalesced into one segment count as one).
    pub request_writes: Inferred<Vec<Write>>,
    pub response_writes: Inferred<Vec<Write>>,
    /// First request byte to last response byte at the capture point; `None`
    /// when the request went unanswered in the capture.
    pub completion_at_capture_s: Option<f64>,
    /// The same as the client saw it: the capture point's round trip to the
    /// client added (the request left half of it earlier, the answer arrived
    /// half of it later).
    pub completion_at_client_s: Option<f64>,
    /// From the request's last byte reaching the server to its answer's first
    /// byte leaving it, net of TCP holds.
    pub server_think_s: Option<Inferred<Span<f64>>>,
    /// From the answer's last byte reaching the client to its next request's
    /// first byte leaving it; `None` for the last exchange.
    pub client_think_s: Option<Inferred<Span<f64>>>,
    /// The time each kind of hold took within this exchange (filled in by
    /// `diagnose`; overlapping holds of one kind counted once).
    pub held: Vec<HeldPart>,
}

/// A flow's exchanges, and what kind of conversation it is.
#[derive(Clone, Debug, Serialize)]
pub struct Exchanges {
    pub shape: Shape,
    /// Why the flow has that shape, in a sentence.
    pub note: String,
    /// Turns in order; empty for one-way and pipelined flows.
    pub exchanges: Vec<Exchange>,
}

/// A run of one side's new data, uninterrupted by the other side's data.
#[derive(Clone, Debug)]
struct Turn {
    dir: Dir,
    /// Indices into the flow's segments of the turn's new data.
    segs: Vec<usize>,
    lo: u64,
    hi: u64,
}

/// The flow's exchanges, with distances from [`distances`].
pub fn exchanges(f: &Flow) -> Exchanges {
    split(f, &distances(f))
}

/// The flow's exchanges; `dist` is the capture point's round trip to the
/// client and to the server.
pub fn split(f: &Flow, dist: &[f64; 2]) -> Exchanges {
    let turns = turns(f);
    let bytes = |d: Dir| turns.iter().filter(|t| t.dir == d).count();
    let none = |shape, note: String| Exchanges {
        shape,
        note,
        exchanges: Vec::new(),
    };
    if turns.is_empty() {
        return none(Shape::Empty, "no data either way".into());
    }
    if bytes(0) == 0 || bytes(1) == 0 {
        let who = if bytes(0) == 0 { "server" } else { "client" };
        return none(
            Shape::OneWay,
            format!("only the {who} sent data: a one-way transfer, not request/response"),
        );
    }
    // A server turn answers the client bytes its first segment acknowledges;
    // client bytes already sent beyond them are later requests in flight.
    let mut overlapped = 0;
    let mut answers = 0;
    let mut client_high = 0u64;
    for t in &turns {
        if t.dir == 0 {
            client_high = client_high.max(t.hi);
        } else if client_high > 0 {
            answers += 1;
            let a = f.segs[t.segs[0]].ack.unwrap_or(0);
            if a < client_high {
                overlapped += 1;
            }
        }
    }
    if overlapped >= 2 && overlapped * 10 > answers {
        return none(
            Shape::Pipelined,
            format!(
                "{overlapped} of {answers} answers began before the server had all the client had sent: requests are pipelined, so turns cannot be paired"
            ),
        );
    }
    let server_first = turns[0].dir == 1;
    // Each exchange's request turn and answer turn, as indices into `turns`.
    let mut pairs: Vec<(Option<usize>, Option<usize>)> = Vec::new();
    let mut i = 0;
    while i < turns.len() {
        if turns[i].dir == 0 {
            let r = turns.get(i + 1).filter(|t| t.dir == 1).map(|_| i + 1);
            pairs.push((Some(i), r));
            i += 1 + usize::from(r.is_some());
        } else {
            pairs.push((None, Some(i)));
            i += 1;
        }
    }
    let mut out: Vec<Exchange> = pairs
        .iter()
        .map(|&(q, r)| exchange(f, dist, q.map(|i| &turns[i]), r.map(|i| &turns[i])))
        .collect();
    // Client think: from an answer's last byte to the next request's first.
    for k in 1..pairs.len() {
        if let (Some(r), Some(q)) = (pairs[k - 1].1, pairs[k].0) {
            out[k - 1].client_think_s = Some(think(f, dist, 0, &turns[r], &turns[q]));
        }
    }
    let (shape, note) = if server_first {
        (
            Shape::ServerFirst,
            "the server spoke first; its greeting is the first exchange, with no request".into(),
        )
    } else {
        (
            Shape::RequestResponse,
            format!("{} request/response turn(s)", out.len()),
        )
    };
    Exchanges {
        shape,
        note,
        exchanges: out,
    }
}

/// Runs of new data by direction, in capture order.
fn turns(f: &Flow) -> Vec<Turn> {
    let mut out: Vec<Turn> = Vec::new();
    for (i, g) in f.segs.iter().enumerate() {
        if g.len == 0 || g.retransmit || g.duplicate {
            continue;
        }
        match out.last_mut() {
            Some(t) if t.dir == g.dir => {
                t.segs.push(i);
                t.lo = t.lo.min(g.seq);
                t.hi = t.hi.max(g.end());
            }
            _ => out.push(Turn {
                dir: g.dir,
                segs: vec![i],
                lo: g.seq,
                hi: g.end(),
            }),
        }
    }
    out
}

/// When the last copy of a turn's last byte passed the capture point before
/// `until` (a resend of a lost last segment is the copy that arrived).
fn last_byte_t(f: &Flow, t: &Turn, until: f64) -> f64 {
    f.segs
        .iter()
        .filter(|g| g.dir == t.dir && g.len > 0 && g.seq < t.hi && g.end() >= t.hi && g.t <= until)
        .map(|g| g.t)
        .fold(
            f.segs[*t.segs.last().expect("a turn has segments")].t,
            f64::max,
        )
}

/// The writes of one turn, from its segments in sequence order.
fn writes(f: &Flow, t: &Turn) -> Inferred<Vec<Write>> {
    let smss = f.smss(t.dir);
    let pushes = f.segs.iter().any(|g| g.dir == t.dir && g.flags.psh());
    let mut segs: Vec<&Seg> = t.segs.iter().map(|&i| &f.segs[i]).collect();
    segs.sort_by_key(|g| g.seq);
    let mut out = Vec::new();
    let mut start = t.lo;
    for (k, g) in segs.iter().enumerate() {
        let last = k + 1 == segs.len();
        let sub = g.len < smss;
        let end = if last || (sub && g.flags.psh()) {
            Some(Boundary::Seen)
        } else if g.flags.psh() || (sub && !pushes) {
            Some(Boundary::Inferred)
        } else {
            None
        };
        if let Some(b) = end {
            out.push(Write {
                bytes: g.end() - start,
                end: b,
            });
            start = g.end();
        }
    }
    let inferred = out.iter().filter(|w| w.end == Boundary::Inferred).count();
    let (conf, how) = if !pushes {
        (
            Confidence::Low,
            "the sender sets no PSH, so write ends are guessed from sub-MSS segments",
        )
    } else if inferred > 0 {
        (
            Confidence::Medium,
            "some write ends are full segments with PSH, which stacks also set mid-write",
        )
    } else {
        (
            Confidence::High,
            "each write ends at a sub-MSS segment with PSH or at the end of the turn",
        )
    };
    Inferred::new(
        out,
        conf,
        format!(
            "{} segment(s): {how}; writes coalesced into one segment count as one",
            segs.len()
        ),
    )
}

fn exchange(f: &Flow, dist: &[f64; 2], req: Option<&Turn>, resp: Option<&Turn>) -> Exchange {
    let first = |t: &Turn| f.segs[t.segs[0]].t;
    let start_s = req.or(resp).map(first).unwrap_or(0.0);
    let end = resp.map(|r| last_byte_t(f, r, f64::INFINITY));
    let completion = match (req, end) {
        (Some(_), Some(e)) => Some((e - start_s).max(0.0)),
        _ => None,
    };
    let server_think_s = match (req, resp) {
        (Some(q), Some(r)) => Some(think(f, dist, 1, q, r)),
        _ => None,
    };
    let empty = || Inferred::new(Vec::new(), Confidence::High, "no data this turn");
    Exchange {
        start_s,
        request_bytes: req.map_or(0, |t| t.hi - t.lo),
        response_bytes: resp.map_or(0, |t| t.hi - t.lo),
        request_writes: req.map_or_else(empty, |t| writes(f, t)),
        response_writes: resp.map_or_else(empty, |t| writes(f, t)),
        completion_at_capture_s: completion,
        completion_at_client_s: completion.map(|c| c + dist[0]),
        server_think_s,
        client_think_s: None,
        held: Vec::new(),
    }
}

/// Think time of side `who` answering turn `asked` with turn `answer`: the
/// gap at the capture point less the capture point's round trip to `who`.
/// When the answer's first segment left as an ACK reached `who` (after the
/// question's data), TCP may have held it since any time after the question
/// arrived: the think time is then anywhere from zero to the gap.
fn think(f: &Flow, dist: &[f64; 2], who: Dir, asked: &Turn, answer: &Turn) -> Inferred<Span<f64>> {
    let a0 = &f.segs[answer.segs[0]];
    let q = last_byte_t(f, asked, a0.t);
    let gap = (a0.t - q - dist[who]).max(0.0);
    let react = dist[who] * 1.25 + 0.002;
    let released = f.segs.iter().any(|g| {
        g.dir != who
            && g.is_pure_ack()
            && g.t > q
            && g.t <= a0.t
            && a0.t - g.t <= react
            && gap > 0.001
    });
    let side = if who == 1 { "server" } else { "client" };
    if released {
        return Inferred::new(
            Span::between(0.0, gap),
            Confidence::Low,
            format!(
                "the {side}'s answer left as an ACK reached it, so TCP may have held it: its think time lies anywhere under the {:.1} ms gap",
                gap * 1e3
            ),
        );
    }
    let conf = if f.saw_syn {
        Confidence::High
    } else {
        Confidence::Medium
    };
    Inferred::new(
        Span::exact(gap),
        conf,
        format!(
            "gap at the capture point less its {:.1} ms round trip to the {side}{}",
            dist[who] * 1e3,
            if f.saw_syn {
                ""
            } else {
                " (no handshake: the round trip comes from data/ACK samples)"
            }
        ),
    )
}
