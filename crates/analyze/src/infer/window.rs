//! The receive window a side advertised: its SYN's, the largest, and whether
//! it grew or was updated on its own.

use crate::evidence::{Confidence, Inferred};
use crate::flow::{Dir, Flow};
use serde::Serialize;

/// A side's advertised receive window over the connection (bytes, scaled).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RcvWindow {
    /// The window in its SYN (never scaled, RFC 7323 2.2).
    pub syn: Option<u64>,
    /// The first window after the handshake.
    pub first: Option<u64>,
    /// The largest advertised: the scenario's `rcv_buf`.
    pub max: u64,
    /// The smallest advertised after the handshake.
    pub min: u64,
    /// The largest grew past the first by more than a segment (buffer
    /// autotuning, or a larger buffer set after the connection opened).
    pub grew: bool,
    /// Pure window updates: the same ACK as before with a larger window
    /// (RFC 1122 4.2.3.3).
    pub updates: usize,
    /// Segments that advertised a zero window.
    pub zero_windows: usize,
}

/// The receive window side `d` advertised.
pub fn rcv_window(f: &Flow, d: Dir) -> Inferred<RcvWindow> {
    let who = if d == 0 { "client" } else { "server" };
    let mine = f.segs.iter().filter(|g| g.dir == d);
    let syn = mine.clone().find(|g| g.flags.syn()).map(|g| g.win);
    let wins: Vec<(Option<u64>, u64, bool)> = mine
        .filter(|g| !g.flags.syn() && !g.flags.rst())
        .map(|g| (g.ack, g.win, g.is_pure_ack()))
        .collect();
    let first = wins.first().map(|w| w.1);
    let max = wins.iter().map(|w| w.1).chain(syn).max().unwrap_or(0);
    let min = wins.iter().map(|w| w.1).min().unwrap_or(max);
    let smss = f.smss(1 - d) as u64;
    let grew = first.is_some_and(|x| max > x + smss);
    let updates = wins
        .windows(2)
        .filter(|w| w[1].2 && w[1].0 == w[0].0 && w[1].1 > w[0].1)
        .count();
    let zero_windows = wins.iter().filter(|w| w.1 == 0).count();
    let scaled = f.sides[0].window_scale.is_some() && f.sides[1].window_scale.is_some();
    let conf = if wins.len() >= 3 && (scaled || !f.saw_syn) {
        Confidence::Medium
    } else if wins.len() >= 3 {
        // Without window scaling a buffer over 64 KiB still shows as 65535.
        if max >= 65_535 {
            Confidence::Low
        } else {
            Confidence::Medium
        }
    } else {
        Confidence::Low
    };
    let ev = format!(
        "the {who} advertised {} segment(s): SYN {}, first {}, largest {max} B, smallest {min} B{}{}{}{}",
        wins.len(),
        syn.map_or("not seen".into(), |w| format!("{w} B")),
        first.map_or("none".into(), |w| format!("{w} B")),
        if grew { "; it grew (autotuning?)" } else { "" },
        if updates > 0 { format!("; {updates} pure window update(s)") } else { String::new() },
        if zero_windows > 0 { format!("; {zero_windows} zero window(s)") } else { String::new() },
        if !scaled && f.saw_syn && max >= 65_535 { "; no window scaling, so the buffer may be larger than 64 KiB" } else { "" }
    );
    Inferred::new(
        RcvWindow {
            syn,
            first,
            max,
            min,
            grew,
            updates,
            zero_windows,
        },
        conf,
        ev,
    )
}
