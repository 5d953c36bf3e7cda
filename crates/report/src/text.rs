//! The human-readable report of `tinygram diagnose`.

use std::fmt::Write;
use tinygram_analyze::diagnose::FlowReport;
use tinygram_analyze::exchange::Write as AppWrite;
use tinygram_analyze::{Diagnosis, FlowSummary, Shape};

/// Seconds as "1.234 s", "43.6 ms", or for what a loopback path takes, to the
/// microsecond ("0.025 ms"), so a sub-millisecond time does not read as zero.
fn ms(s: f64) -> String {
    if s >= 1.0 {
        format!("{s:.3} s")
    } else if s > 0.0 && s < 1e-3 {
        format!("{:.3} ms", s * 1e3)
    } else {
        format!("{:.1} ms", s * 1e3)
    }
}

/// How many occurrences of each finding the text lists (JSON lists them all).
const SHOWN: usize = 5;

/// Renders a diagnosis as text: per flow, its findings with times, the time
/// lost, and the fixes with the side that must make each.
pub fn diagnosis(d: &Diagnosis, name: &str) -> String {
    diagnosis_top(d, name, usize::MAX)
}

/// [`diagnosis`] showing at most `top` flows in full: every analysed flow in
/// capture order when they fit, else the `top` that lost most time (then
/// carried most), worst first, and the rest counted in a line.
pub fn diagnosis_top(d: &Diagnosis, name: &str, top: usize) -> String {
    let mut s = String::new();
    let c = &d.capture;
    let _ = writeln!(
        s,
        "{name}: {} {} frame(s), {} TCP segment(s) in {} flow(s) [{}]",
        c.frames,
        c.format,
        c.tcp_segments,
        d.flow_count(),
        c.link_types.join(", ")
    );
    if c.bad_checksums > 0 {
        let _ = writeln!(
            s,
            "  note: {} segment(s) with a bad TCP checksum (usually checksum offload on the capturing host)",
            c.bad_checksums
        );
    }
    if c.malformed > 0 {
        let _ = writeln!(s, "  note: {} malformed TCP header(s) skipped", c.malformed);
    }
    if let Some(x) = &d.summarised {
        let _ = writeln!(
            s,
            "  note: {} flow(s) past --max-flows {} summarised, not analysed (the {} that carried most were): {} segment(s), {} B of payload, {} unanswered SYN(s); --all lists them, one line each",
            x.flows,
            x.max_flows,
            d.flows.len(),
            x.segments,
            x.payload_bytes,
            x.syn_unanswered
        );
        if x.too_big > 0 {
            let _ = writeln!(
                s,
                "  note: {} of them left out for their size: the flows analysed hold at most {} segments (about 190 bytes each in memory); split the capture by time (editcap -A/-B) to analyse them",
                x.too_big, x.max_segments
            );
        }
    }
    let shown = shown_flows(&d.flows, top);
    if shown.len() < d.flows.len() {
        let _ = writeln!(
            s,
            "  the {} flow(s) that lost most time, worst first, of {} analysed; --top N shows more, --all every one",
            shown.len(),
            d.flows.len()
        );
    }
    for &i in &shown {
        flow(&mut s, &d.flows[i]);
    }
    let hidden: Vec<&FlowReport> = (0..d.flows.len())
        .filter(|i| !shown.contains(i))
        .map(|i| &d.flows[i])
        .collect();
    if !hidden.is_empty() {
        let troubled = hidden.iter().filter(|f| !f.findings.is_empty()).count();
        let lost: f64 = hidden.iter().map(|f| f.time_lost_s).sum();
        let _ = writeln!(
            s,
            "\n... and {} more analysed flow(s) not shown: {} with findings ({} lost in all), {} without",
            hidden.len(),
            troubled,
            ms(lost),
            hidden.len() - troubled
        );
    }
    s
}

/// Indices of the flows to show in full: all when `top` allows, else the
/// `top` that lost most time, then carried most, then the earliest.
fn shown_flows(flows: &[FlowReport], top: usize) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..flows.len()).collect();
    if flows.len() <= top {
        return idx;
    }
    let bytes = |f: &FlowReport| f.client_bytes + f.server_bytes;
    idx.sort_by(|&a, &b| {
        let (x, y) = (&flows[a], &flows[b]);
        y.time_lost_s
            .total_cmp(&x.time_lost_s)
            .then(bytes(y).cmp(&bytes(x)))
            .then(a.cmp(&b))
    });
    idx.truncate(top);
    idx
}

/// One line for a flow summarised, not analysed (past `--max-flows`).
pub fn summary_line(x: &FlowSummary) -> String {
    let which = if x.connections > 1 {
        format!(
            "flows {}-{} ({} connections on one address pair)",
            x.flow,
            x.flow + x.connections as usize - 1,
            x.connections
        )
    } else {
        format!("flow {}", x.flow)
    };
    let state = match x.state {
        "syn_unanswered" => "SYN unanswered",
        "open" => "handshake seen, no FIN or RST",
        "closed" => "closed by FIN",
        "reset" => "reset",
        _ => "no handshake in the capture",
    };
    format!(
        "{which}: {} (client) <-> {} (server): {} segment(s) over {} from {:.6} s; client sent {} B, server sent {} B; {state} [summary only]",
        x.client,
        x.server,
        x.segments,
        ms(x.duration_s),
        x.start_s,
        x.client_bytes,
        x.server_bytes
    )
}

/// One analysed flow in full.
fn flow(s: &mut String, f: &FlowReport) {
    let _ = writeln!(
        s,
        "\nflow {}: {} (client) <-> {} (server)",
        f.flow, f.client, f.server
    );
    let _ = writeln!(
        s,
        "  {} segments over {} from {:.6} s; client sent {} B (MSS {}), server sent {} B (MSS {})",
        f.segments,
        ms(f.duration_s),
        f.start_s,
        f.client_bytes,
        f.client_mss,
        f.server_bytes,
        f.server_mss
    );
    let _ = writeln!(
        s,
        "  round trip from the capture point: to the client {:.3} ms, to the server {:.3} ms{}",
        f.capture_to_client_rtt_ms,
        f.capture_to_server_rtt_ms,
        if f.handshake_seen {
            ""
        } else {
            " (no handshake in the capture)"
        }
    );
    exchanges(s, f);
    if f.findings.is_empty() {
        let _ = writeln!(
            s,
            "  no findings: no held tails, stalls, window limits, timeouts or storms"
        );
        return;
    }
    let _ = writeln!(s, "  time lost: {}", ms(f.time_lost_s));
    for x in &f.findings {
        let _ = writeln!(
            s,
            "\n  [{}] data from the {}: {} occurrence(s), {} lost",
            x.kind.title(),
            x.sender,
            x.count,
            ms(x.time_lost_s)
        );
        let _ = writeln!(s, "    {}", x.summary);
        for e in x.events.iter().take(SHOWN) {
            let _ = writeln!(
                s,
                "    at {:>12.6} s  lost {:>10}  {}",
                e.at_s,
                ms(e.lost_s),
                e.detail
            );
        }
        if x.events.len() > SHOWN {
            let _ = writeln!(
                s,
                "    ... and {} more (see --json)",
                x.events.len() - SHOWN
            );
        }
        for r in &x.recommendations {
            let _ = writeln!(s, "    fix ({}): {}", r.side, r.fix);
            if let Some(e) = &r.replay {
                let _ = writeln!(
                    s,
                    "      replayed ({}): median exchange {:.1} -> {:.1} ms{}",
                    e.alternative,
                    e.baseline_p50_ms,
                    e.p50_ms,
                    if e.replay_matches {
                        String::new()
                    } else {
                        format!(
                            " (a direction, not a number: the replay is {:.0} % off the capture)",
                            e.baseline_error * 100.0
                        )
                    }
                );
            }
        }
    }
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied()
}

fn sizes(w: &[AppWrite]) -> String {
    let v: Vec<String> = w.iter().map(|w| w.bytes.to_string()).collect();
    format!("[{}]", v.join(", "))
}

/// The flow's exchanges in a few lines: how many, how long each took at the
/// client, the writes, think times, and what part of each exchange each kind
/// of hold took (medians over the exchanges).
fn exchanges(s: &mut String, f: &FlowReport) {
    let x = &f.exchanges;
    if x.is_empty() || f.shape == Shape::Empty {
        if f.shape != Shape::Empty {
            let _ = writeln!(s, "  exchanges: {}", f.shape_note);
        }
        return;
    }
    let at = |g: fn(&tinygram_analyze::Exchange) -> Option<f64>| {
        median(x.iter().filter_map(g).collect())
    };
    let client = at(|e| e.completion_at_client_s);
    let capture = at(|e| e.completion_at_capture_s);
    let _ = write!(s, "  exchanges: {}", f.shape_note);
    if let (Some(c), Some(p)) = (client, capture) {
        let _ = write!(
            s,
            "; each took {} at the client (median{})",
            ms(c),
            if (c - p).abs() >= 5e-5 {
                format!(", {} at the capture point", ms(p))
            } else {
                String::new()
            }
        );
        if c > 0.0 {
            let _ = write!(s, ", {:.1} per second", 1.0 / c);
        }
    }
    let _ = writeln!(s);
    // Each kind of hold's median share of an exchange, over all exchanges
    // (zero where it did not occur).
    let mut kinds: Vec<(String, &str)> = Vec::new();
    for e in x {
        for h in &e.held {
            let k = (h.kind.title().to_string(), h.sender);
            if !kinds.contains(&k) {
                kinds.push(k);
            }
        }
    }
    for (title, sender) in kinds {
        let v: Vec<f64> = x
            .iter()
            .map(|e| {
                e.held
                    .iter()
                    .filter(|h| h.kind.title() == title && h.sender == sender)
                    .map(|h| h.held_s)
                    .sum()
            })
            .collect();
        let n = v.iter().filter(|&&t| t > 0.0).count();
        let _ = writeln!(
            s,
            "    {} of it in the median exchange: {title}, the {sender}'s data (in {n} of {} exchanges)",
            // A hold takes no negative time; -0.0 is rounding.
            ms(median(v).unwrap_or(0.0).max(0.0)),
            x.len()
        );
    }
    let first = x.iter().find(|e| e.request_bytes > 0).unwrap_or(&x[0]);
    let _ = writeln!(
        s,
        "    first request {} B in write(s) of {}, its answer {} B in write(s) of {}",
        first.request_bytes,
        sizes(&first.request_writes.value),
        first.response_bytes,
        sizes(&first.response_writes.value)
    );
    let think = |g: fn(&tinygram_analyze::Exchange) -> Option<(f64, f64)>| {
        let v: Vec<(f64, f64)> = x.iter().filter_map(g).collect();
        let lo = median(v.iter().map(|p| p.0).collect())?;
        let hi = median(v.iter().map(|p| p.1).collect())?;
        Some(if hi - lo < 5e-5 {
            ms(lo)
        } else {
            format!("{} to {}", ms(lo), ms(hi))
        })
    };
    let server = think(|e| e.server_think_s.as_ref().map(|t| (t.value.lo, t.value.hi)));
    let cl = think(|e| e.client_think_s.as_ref().map(|t| (t.value.lo, t.value.hi)));
    if server.is_some() || cl.is_some() {
        let _ = writeln!(
            s,
            "    think time (median, net of the path and of TCP's holds): server {}, client before its next request {}",
            server.unwrap_or_else(|| "-".into()),
            cl.unwrap_or_else(|| "-".into())
        );
    }
}

#[cfg(test)]
mod tests {
    use super::ms;

    #[test]
    fn sub_millisecond_times_keep_their_microseconds() {
        assert_eq!(ms(0.000025), "0.025 ms");
        assert_eq!(ms(0.0436), "43.6 ms");
        assert_eq!(ms(0.0), "0.0 ms");
        assert_eq!(ms(1.5), "1.500 s");
    }
}
