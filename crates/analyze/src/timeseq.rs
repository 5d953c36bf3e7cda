//! The series of a tcptrace-style time-sequence graph for one direction of a
//! flow: data segments as (time, sequence range), the receiver's cumulative
//! ACKs and window right edge, SACK blocks and NAKs. Sequence numbers are
//! relative to the sender's ISN (the first data byte is 1).

use crate::diagnose::{stall_events, Kind, Thresholds};
use crate::flow::{Dir, Flow};

/// One data segment: sent at `t`, covering `[lo, hi)`.
#[derive(Clone, Debug, PartialEq)]
pub struct DataMark {
    pub t: f64,
    pub lo: u64,
    pub hi: u64,
    pub retransmit: bool,
    /// Carries less than a full segment.
    pub small: bool,
}

/// A shaded time span with a label (why-trace holds, detected stalls).
#[derive(Clone, Debug, PartialEq)]
pub struct Span {
    pub t0: f64,
    pub t1: f64,
    pub label: String,
}

/// Everything a time-sequence graph shows.
#[derive(Clone, Debug, Default)]
pub struct TimeSeq {
    pub title: String,
    pub data: Vec<DataMark>,
    /// (time, cumulative ACK) from the receiver.
    pub acks: Vec<(f64, u64)>,
    /// (time, ACK + window): the receive window's right edge.
    pub window_edge: Vec<(f64, u64)>,
    /// (time, lo, hi) SACK blocks.
    pub sacks: Vec<(f64, u64, u64)>,
    /// (time, first missing byte) RFC 1106 NAKs.
    pub naks: Vec<(f64, u64)>,
    /// Spans where data was held, with the rule's name.
    pub holds: Vec<Span>,
    /// Stalls the analyzer found (held tails, delayed-ACK stalls), as spans.
    pub stalls: Vec<Span>,
}

impl TimeSeq {
    /// The graph of data sent by `dir` (0 client, 1 server) in flow `f`.
    pub fn of(f: &Flow, dir: Dir) -> TimeSeq {
        let smss = f.smss(dir);
        let mut ts = TimeSeq {
            title: format!("{} -> {}", f.addr(dir), f.addr(1 - dir)),
            ..TimeSeq::default()
        };
        for g in &f.segs {
            if g.dir == dir {
                if g.len > 0 {
                    ts.data.push(DataMark {
                        t: g.t,
                        lo: g.seq,
                        hi: g.end(),
                        retransmit: g.retransmit,
                        small: g.len < smss,
                    });
                }
            } else if let Some(a) = g.ack {
                ts.acks.push((g.t, a));
                if !g.flags.syn() {
                    ts.window_edge.push((g.t, a + g.win));
                }
                for &(lo, hi) in &g.sacks {
                    ts.sacks.push((g.t, lo, hi));
                }
                if let Some((n, _)) = g.nak {
                    ts.naks.push((g.t, n));
                }
            }
        }
        let dist = crate::diagnose::distances(f);
        for (k, e) in stall_events(f, dir, &dist, &Thresholds::default()) {
            let name = match k {
                Kind::HeldTail => "held tail",
                _ => "delayed-ACK stall",
            };
            ts.stalls.push(Span {
                t0: e.at_s - e.lost_s,
                t1: e.at_s,
                label: name.to_string(),
            });
        }
        ts
    }

    /// The part of the graph between `t0` and `t1` (one exchange, say), with
    /// `title`; sequence numbers stay as they are.
    pub fn window(&self, t0: f64, t1: f64, title: &str) -> TimeSeq {
        let inside = |t: f64| t >= t0 && t <= t1;
        let spans = |v: &[Span]| -> Vec<Span> {
            v.iter()
                .filter(|s| s.t1 >= t0 && s.t0 <= t1)
                .map(|s| Span {
                    t0: s.t0.max(t0),
                    t1: s.t1.min(t1),
                    label: s.label.clone(),
                })
                .collect()
        };
        TimeSeq {
            title: title.to_string(),
            data: self.data.iter().filter(|d| inside(d.t)).cloned().collect(),
            acks: self.acks.iter().filter(|a| inside(a.0)).copied().collect(),
            window_edge: self
                .window_edge
                .iter()
                .filter(|a| inside(a.0))
                .copied()
                .collect(),
            sacks: self.sacks.iter().filter(|a| inside(a.0)).copied().collect(),
            naks: self.naks.iter().filter(|a| inside(a.0)).copied().collect(),
            holds: spans(&self.holds),
            stalls: spans(&self.stalls),
        }
    }

    /// The direction that carried more payload bytes.
    pub fn busier_direction(f: &Flow) -> Dir {
        usize::from(f.sides[1].bytes > f.sides[0].bytes)
    }
}
