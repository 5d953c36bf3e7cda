//! The human-readable report of `tinygram diagnose`.

use std::fmt::Write;
use tinygram_analyze::Diagnosis;

fn ms(s: f64) -> String {
    if s >= 1.0 {
        format!("{s:.3} s")
    } else {
        format!("{:.1} ms", s * 1e3)
    }
}

/// How many occurrences of each finding the text lists (JSON lists them all).
const SHOWN: usize = 5;

/// Renders a diagnosis as text: per flow, its findings with times, the time
/// lost, and the fixes with the side that must make each.
pub fn diagnosis(d: &Diagnosis, name: &str) -> String {
    let mut s = String::new();
    let c = &d.capture;
    let _ = writeln!(
        s,
        "{name}: {} {} frame(s), {} TCP segment(s) in {} flow(s) [{}]",
        c.frames,
        c.format,
        c.tcp_segments,
        d.flows.len(),
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
    for (i, f) in d.flows.iter().enumerate() {
        let _ = writeln!(
            s,
            "\nflow {}: {} (client) <-> {} (server)",
            i + 1,
            f.client,
            f.server
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
        if f.findings.is_empty() {
            let _ = writeln!(
                s,
                "  no findings: no held tails, stalls, window limits, timeouts or storms"
            );
            continue;
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
            }
        }
    }
    s
}
