//! A side's initial window, from what it sent before the first ACK of its
//! data could reach it.

use super::stats::upper_mode;
use crate::evidence::{Confidence, Inferred, Span};
use crate::flow::{Dir, Flow, Seg};

fn name(d: Dir) -> &'static str {
    if d == 0 {
        "client"
    } else {
        "server"
    }
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
