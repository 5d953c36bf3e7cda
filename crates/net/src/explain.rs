//! `--explain`: the why-trace (proto's `TraceEvent`s) folded into a summary as
//! it is produced, so a long run does not keep every event.

use std::collections::BTreeMap;
use std::fmt;
use tinygram_proto::{Connection, Duration, TraceEvent};

#[derive(Clone, Debug, Default, PartialEq)]
struct Tally {
    count: u64,
    total: Duration,
    max: Duration,
}

impl Tally {
    fn add(&mut self, d: Duration) {
        self.count += 1;
        self.total += d;
        self.max = self.max.max(d);
    }
}

/// Hold and ACK decisions, by rule and by reason.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Explain {
    holds: BTreeMap<String, u64>,
    releases: BTreeMap<String, Tally>,
    acks: BTreeMap<String, Tally>,
    acks_delayed: u64,
    /// Other decisions (buffer caps, invalid segments, ...), first few verbatim.
    notes: Vec<String>,
    other_events: u64,
    buf: Vec<TraceEvent>,
}

/// Other events kept verbatim in the summary.
const MAX_NOTES: usize = 10;

impl Explain {
    /// Moves `conn`'s new trace events into the summary.
    pub fn absorb(&mut self, conn: &mut Connection) {
        conn.drain_trace(&mut self.buf);
        for ev in self.buf.drain(..) {
            match ev {
                TraceEvent::Hold { rule, .. } => {
                    *self.holds.entry(rule.name().to_string()).or_default() += 1
                }
                TraceEvent::Release { rule, held, .. } => self
                    .releases
                    .entry(rule.name().to_string())
                    .or_default()
                    .add(held),
                TraceEvent::AckDelayed { .. } => self.acks_delayed += 1,
                TraceEvent::AckSent { reason, waited, .. } => {
                    self.acks.entry(reason.to_string()).or_default().add(waited)
                }
                other => {
                    self.other_events += 1;
                    if self.notes.len() < MAX_NOTES {
                        self.notes.push(other.to_string());
                    }
                }
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.holds.is_empty()
            && self.acks.is_empty()
            && self.acks_delayed == 0
            && self.other_events == 0
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

impl fmt::Display for Explain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "why-trace summary:")?;
        if self.holds.is_empty() {
            writeln!(f, "  no data was held")?;
        }
        for (rule, n) in &self.holds {
            let r = self.releases.get(rule).cloned().unwrap_or_default();
            writeln!(
                f,
                "  held by {rule:<10} {n} time(s); released {} time(s), {:.3} ms in all, longest {:.3} ms",
                r.count,
                ms(r.total),
                ms(r.max)
            )?;
        }
        writeln!(f, "  ACKs delayed {} time(s)", self.acks_delayed)?;
        for (reason, t) in &self.acks {
            writeln!(
                f,
                "  ACK sent ({reason}) {} time(s), waited {:.3} ms in all, longest {:.3} ms",
                t.count,
                ms(t.total),
                ms(t.max)
            )?;
        }
        if self.other_events > 0 {
            writeln!(f, "  {} other event(s):", self.other_events)?;
            for n in &self.notes {
                writeln!(f, "    {n}")?;
            }
        }
        Ok(())
    }
}
