//! `--explain` and `--trace`: what the why-trace says about a run.

use serde_json::json;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write;
use tinygram_proto::policy::ack::fmt_ms;
use tinygram_proto::policy::AckReason;
use tinygram_proto::{Duration, HoldRule, Instant, TraceEvent};
use tinygram_sim::world::WireEvent;

const HOSTS: [&str; 2] = ["client", "server"];

/// One finished hold episode.
#[derive(Clone, Copy, Debug)]
struct Episode {
    start: Instant,
    end: Instant,
    rule: HoldRule,
    bytes: usize,
}

fn episodes(trace: &[TraceEvent]) -> Vec<Episode> {
    let mut open: Option<(Instant, HoldRule, usize)> = None;
    let mut out = Vec::new();
    for e in trace {
        match *e {
            TraceEvent::Hold {
                at, rule, bytes, ..
            } => {
                open = Some(match open {
                    Some((since, _, _)) => (since, rule, bytes),
                    None => (at, rule, bytes),
                });
            }
            TraceEvent::Release {
                at,
                rule,
                bytes,
                held,
            } => {
                open = None;
                out.push(Episode {
                    start: at - held,
                    end: at,
                    rule,
                    bytes,
                });
            }
            _ => {}
        }
    }
    out
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// The human summary printed by `tinygram run --explain`.
pub fn summary(traces: [&[TraceEvent]; 2]) -> String {
    let mut s = String::from("\nWhy data waited (--explain):\n");
    let eps = [episodes(traces[0]), episodes(traces[1])];
    for h in 0..2 {
        let e = &eps[h];
        let total: Duration = e.iter().map(|x| x.end - x.start).sum();
        let _ = writeln!(
            s,
            "  {}: held sendable data {} times, {:.1} ms in all",
            HOSTS[h],
            e.len(),
            ms(total)
        );
        let mut by: BTreeMap<&str, (usize, Duration, Duration)> = BTreeMap::new();
        for x in e {
            let d = x.end - x.start;
            let r = by.entry(x.rule.name()).or_default();
            r.0 += 1;
            r.1 += d;
            r.2 = r.2.max(d);
        }
        for (rule, (n, sum, max)) in &by {
            let _ = writeln!(
                s,
                "    {rule:<10} {n:>6} holds  total {:>10.1} ms  mean {:>8.2} ms  max {:>8.2} ms",
                ms(*sum),
                ms(*sum) / *n as f64,
                ms(*max)
            );
        }
        let mut worst: Vec<&Episode> = e
            .iter()
            .filter(|x| matches!(x.rule, HoldRule::Policy(_)))
            .collect();
        worst.sort_by_key(|x| std::cmp::Reverse(x.end - x.start));
        for x in worst.iter().take(3) {
            let _ = writeln!(
                s,
                "    worst: at {} held {} B for {:.1} ms ({})",
                x.start,
                x.bytes,
                ms(x.end - x.start),
                x.rule
            );
        }
        // Grouped by rule; the label is the reason's text when every ACK of the
        // rule gave the same one ("timer 200 ms"), else the rule and an example.
        let mut acks: BTreeMap<&str, (usize, Duration, String, bool)> = BTreeMap::new();
        let mut delayed = 0;
        for ev in traces[h] {
            match ev {
                TraceEvent::AckSent { reason, waited, .. } => {
                    let text = reason.to_string();
                    let r = acks
                        .entry(reason.name())
                        .or_insert_with(|| (0, Duration::ZERO, text.clone(), true));
                    r.0 += 1;
                    r.1 = r.1.max(*waited);
                    r.3 &= r.2 == text;
                }
                TraceEvent::AckDelayed { .. } => delayed += 1,
                _ => {}
            }
        }
        if !acks.is_empty() || delayed > 0 {
            let _ = writeln!(s, "    ACKs: {delayed} delayed; sent because:");
            let label = |name: &str, example: &String, same: bool| {
                if same {
                    example.clone()
                } else {
                    format!("{name} (e.g. {example})")
                }
            };
            let width = acks
                .iter()
                .map(|(n, (_, _, e, same))| label(n, e, *same).len())
                .max()
                .unwrap_or(0)
                .max(22);
            for (name, (n, max, example, same)) in &acks {
                let reason = label(name, example, *same);
                let _ = writeln!(
                    s,
                    "      {reason:<width$} {n:>6}  longest wait {:>8.2} ms",
                    ms(*max)
                );
            }
        }
    }
    // The deadlock as the pair it is: a hold released only by the peer's
    // timer-driven ACK.
    let mut pairs = 0;
    let mut example = None;
    for (h, host_eps) in eps.iter().enumerate() {
        let peer = 1 - h;
        for x in host_eps
            .iter()
            .filter(|x| matches!(x.rule, HoldRule::Policy(_)))
        {
            let timer_ack = traces[peer].iter().find_map(|ev| match *ev {
                TraceEvent::AckSent {
                    at,
                    reason: AckReason::Timer { .. },
                    ..
                } if at >= x.start && at <= x.end => Some(at),
                _ => None,
            });
            if let Some(sent) = timer_ack {
                pairs += 1;
                // The decision that armed that timer: the first delay with its deadline.
                let why = traces[peer].iter().find_map(|ev| match *ev {
                    TraceEvent::AckDelayed {
                        at,
                        deadline,
                        reason,
                        ..
                    } if deadline == sent && at <= sent => {
                        Some(format!("{reason}, timer {}", fmt_ms(deadline - at)))
                    }
                    _ => None,
                });
                example.get_or_insert((h, *x, why.unwrap_or_else(|| "timer".into())));
            }
        }
    }
    if let Some((h, x, why)) = example {
        let _ = writeln!(
            s,
            "  Diagnosis: {pairs} hold(s) ended only when the peer's delayed-ACK timer fired.\n  \
             e.g. {} held {} B ({}) for {:.1} ms while {} delayed its ACK ({why})",
            HOSTS[h],
            x.bytes,
            x.rule.name(),
            ms(x.end - x.start),
            HOSTS[1 - h],
        );
    } else {
        let _ = writeln!(
            s,
            "  Diagnosis: no hold waited for a delayed-ACK timer (no Nagle x delayed-ACK stall)."
        );
    }
    s
}

fn event_json(host: usize, e: &TraceEvent) -> serde_json::Value {
    let h = HOSTS[host];
    match e {
        TraceEvent::Hold {
            at,
            rule,
            bytes,
            unacked,
            peer_window,
        } => json!({"t": at.as_secs_f64(), "host": h, "event": "hold", "rule": rule.name(),
                    "why": rule.to_string(), "bytes": bytes, "unacked": unacked, "peer_window": peer_window}),
        TraceEvent::Release {
            at,
            rule,
            bytes,
            held,
        } => json!({"t": at.as_secs_f64(), "host": h, "event": "release", "rule": rule.name(),
                    "bytes": bytes, "held_ms": ms(*held)}),
        TraceEvent::AckDelayed {
            at,
            deadline,
            segs,
            reason,
        } => json!({"t": at.as_secs_f64(), "host": h,
                    "event": "ack_delayed", "deadline": deadline.as_secs_f64(), "segments": segs,
                    "why": reason.to_string()}),
        TraceEvent::AckSent { at, reason, waited } => json!({"t": at.as_secs_f64(), "host": h,
                    "event": "ack_sent", "rule": reason.name(), "reason": reason.to_string(),
                    "waited_ms": ms(*waited)}),
        TraceEvent::BufferCapped {
            at,
            requested,
            granted,
            limit,
        } => json!({"t": at.as_secs_f64(), "host": h, "event": "buffer_capped",
                    "requested": requested, "granted": granted, "limit": limit.name()}),
        TraceEvent::InvalidSegment { at, error } => json!({"t": at.as_secs_f64(), "host": h,
                    "event": "invalid_segment", "error": error.to_string()}),
    }
}

fn segment_json(w: &WireEvent) -> serde_json::Value {
    let r = &w.repr;
    json!({"t": w.at.as_secs_f64(), "host": HOSTS[w.dir as usize], "event": "segment",
           "flags": format!("{:?}", r.flags), "seq": r.seq.0, "ack": r.ack.0, "win": r.window,
           "len": w.payload_len, "dropped": w.dropped})
}

/// Writes the why-trace and every segment as JSON lines, in time order.
pub fn write_trace(
    out: &mut dyn Write,
    traces: [&[TraceEvent]; 2],
    wire: &[WireEvent],
) -> std::io::Result<()> {
    let mut lines: Vec<(Instant, u8, serde_json::Value)> = Vec::new();
    for (h, t) in traces.iter().enumerate() {
        lines.extend(t.iter().map(|e| (e.at(), 1, event_json(h, e))));
    }
    lines.extend(wire.iter().map(|w| (w.at, 0, segment_json(w))));
    lines.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)));
    for (_, _, v) in lines {
        writeln!(out, "{v}")?;
    }
    Ok(())
}
