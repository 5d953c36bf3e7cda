//! How a side acknowledges: its delayed-ACK time, how many segments one ACK
//! covers, quick ACKs at the start, and the ACK policy those make.

use super::stats::upper_mode;
use crate::diagnose::Thresholds;
use crate::evidence::{Confidence, Inferred, Span};
use crate::flow::{Dir, Flow};
use serde::Serialize;
use tinygram_proto::policy::ack::MAX_QUICKACKS;

/// The ACK samples a side's behaviour rests on.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct AckSamples {
    /// Lone segments (nothing more from the peer, the side silent) answered by a pure ACK.
    pub lone: usize,
    /// Of those, answered at once (within the late-ACK threshold, net of the path).
    pub prompt: usize,
    /// Full-sized segments among the ones acknowledged at once on their own:
    /// only these tell an immediate policy from Linux, which also ACKs a
    /// runt at once when the application reads it (tcp.c tcp_cleanup_rbuf).
    pub prompt_full: usize,
    /// Of those, answered after a timer-like wait: the delays, in seconds.
    pub timer_delays_s: Vec<f64>,
    /// Pure ACKs of whole full segments while more data kept coming: how many
    /// segments each covered (index 0 = one segment, ..., 3 = four or more).
    pub segments_per_ack: [usize; 4],
}

/// A side's acknowledgement behaviour, as a receiver of the peer's data.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AckBehaviour {
    /// Delayed-ACK time (`delack`); an open span when no lone segment waited.
    pub delack_s: Inferred<Span<f64>>,
    /// Segments one ACK covers when data keeps coming (`delack_segments`).
    pub ack_every: Inferred<Option<u32>>,
    /// Leading segments each acknowledged at once on its own (Linux's
    /// quick-ACK mode); `None` when every segment seen was.
    pub quick_acks_at_start: Inferred<Option<u32>>,
    /// `ack_policy`: "immediate", "delayed" or "quickack".
    pub ack_policy: Inferred<String>,
    pub samples: AckSamples,
}

fn name(d: Dir) -> &'static str {
    if d == 0 {
        "client"
    } else {
        "server"
    }
}

/// A data segment of the peer waiting for this side's ACK.
struct Pending {
    end: u64,
    t: f64,
    full: bool,
    /// Retransmitted (Karn: not timed) or carrying FIN (acknowledged at once).
    untimed: bool,
}

/// The ACK behaviour of side `r` as the receiver of the peer's data.
///
/// A lone segment's pure ACK, net of the path, shows the delayed-ACK timer
/// (RFC 1122 4.2.3.2; Cheshire, the 200 ms pause) or an immediate ACK; ACKs
/// while data keeps coming show the every-second-segment rule (RFC 5681 4.2);
/// leading segments each acknowledged at once show Linux's quick-ACK mode
/// (tcp_input.c tcp_incr_quickack).
pub fn ack_behaviour(f: &Flow, r: Dir, dist: &[f64; 2]) -> AckBehaviour {
    let s = 1 - r;
    let smss = f.smss(s) as u64;
    let th = Thresholds::default();
    let mut smp = AckSamples::default();
    let mut pending: Vec<Pending> = Vec::new();
    let mut high = 0u64;
    let mut last_r_t = f64::NEG_INFINITY;
    let mut quick = 0u32;
    // The run of individually and promptly acknowledged leading segments ended.
    let mut quick_done = false;
    for g in &f.segs {
        if g.dir == s {
            if g.len == 0 || g.duplicate || g.flags.syn() {
                continue;
            }
            if g.retransmit || g.reordered {
                for p in pending.iter_mut().filter(|p| p.end > g.seq) {
                    p.untimed = true;
                }
                if g.end() <= pending.last().map_or(0, |p| p.end) {
                    continue;
                }
            }
            pending.push(Pending {
                end: g.end(),
                t: g.t,
                full: g.len as u64 >= smss,
                untimed: g.retransmit || g.flags.fin(),
            });
            continue;
        }
        let silent_since = std::mem::replace(&mut last_r_t, g.t);
        let Some(a) = g.ack else { continue };
        if a <= high {
            continue;
        }
        let prev = std::mem::replace(&mut high, a);
        let n = pending.partition_point(|p| p.end <= a);
        if n == 0 {
            continue;
        }
        let covered: Vec<Pending> = pending.drain(..n).collect();
        if !g.is_pure_ack() {
            continue; // rode on data: says nothing of the timer
        }
        let newest = covered
            .iter()
            .map(|p| p.t)
            .fold(f64::NEG_INFINITY, f64::max);
        let delay = g.t - newest - dist[r];
        // Nothing else of the peer's could have reached r before the ACK left.
        let alone = pending.iter().all(|p| p.t + dist[r] >= g.t);
        let timed = !covered.iter().any(|p| p.untimed);
        if n == 1 && alone && timed && silent_since <= newest && covered[0].end == a {
            smp.lone += 1;
            if delay < th.late_ack_s {
                smp.prompt += 1;
                smp.prompt_full += usize::from(covered[0].full);
                if !quick_done {
                    quick += 1;
                }
            } else if delay <= th.late_ack_max_s {
                smp.timer_delays_s.push(delay);
                quick_done = true;
            }
            continue;
        }
        if n == 1 && !quick_done {
            // One segment acknowledged on its own while more was coming.
            quick += 1;
            smp.prompt_full += usize::from(covered[0].full);
            continue;
        }
        quick_done = true;
        if delay >= th.late_ack_s {
            // A timer's ACK covers whatever was waiting: only an ACK sent on
            // a segment's arrival shows how many segments the rule lets
            // wait (RFC 1122 4.2.3.2: at least every second full segment).
            continue;
        }
        let bytes = a - prev;
        if covered.iter().all(|p| p.full) && smss > 0 && bytes.is_multiple_of(smss) {
            let k = (bytes / smss).clamp(1, 4) as usize;
            smp.segments_per_ack[k - 1] += 1;
        }
    }
    conclude(r, smp, quick, quick_done)
}

/// RFC 1122 4.2.3.2: "an ACK should not be excessively delayed; in
/// particular, the delay MUST be less than 0.5 seconds".
const MAX_DELACK_S: f64 = 0.5;

fn conclude(r: Dir, smp: AckSamples, quick: u32, quick_done: bool) -> AckBehaviour {
    let who = name(r);
    let timer = upper_mode(&smp.timer_delays_s, 0.1, 0.002);
    let delack_s = match timer {
        Some(c) => Inferred::new(
            // RFC 1122 4.2.3.2: a delayed ACK waits at most 0.5 s; a longer
            // wait was the timer and something else (the scenario caps it too).
            Span::exact(c.median.min(MAX_DELACK_S)),
            match c.count {
                1 => Confidence::Low,
                2..=4 => Confidence::Medium,
                _ => Confidence::High,
            },
            format!(
                "the {who} acknowledged {} of {} lone segments after a wait of {:.1} ms (median of that cluster, {:.1} to {:.1} ms, net of the path); {} promptly, {} after other waits",
                c.count,
                smp.lone,
                c.median * 1e3,
                c.lo * 1e3,
                c.hi * 1e3,
                smp.prompt,
                smp.timer_delays_s.len() - c.count
            ),
        ),
        None => Inferred::new(
            Span { lo: 0.04, hi: 0.2 },
            Confidence::Low,
            format!(
                "no lone segment waited for the {who}'s delayed ACK ({} lone, all prompt): the capture cannot give the timer; the span runs from Linux's 40 ms to BSD's 200 ms",
                smp.lone
            ),
        ),
    };
    let counted: usize = smp.segments_per_ack.iter().sum();
    let mode = (0..4)
        .rev()
        .max_by_key(|&i| smp.segments_per_ack[i])
        .filter(|_| counted > 0);
    let ack_every = match mode {
        Some(i) => Inferred::new(
            Some(i as u32 + 1),
            if counted >= 10 && smp.segments_per_ack[i] * 2 > counted {
                Confidence::High
            } else {
                Confidence::Medium
            },
            format!(
                "{} of {counted} pure ACKs of back-to-back full segments covered {}{} (1/2/3/4+: {:?})",
                smp.segments_per_ack[i],
                i + 1,
                if i == 3 { " or more" } else { "" },
                smp.segments_per_ack
            ),
        ),
        None if !quick_done && quick >= 3 => Inferred::new(
            Some(1),
            if quick > MAX_QUICKACKS && smp.prompt_full >= 3 {
                Confidence::Medium
            } else {
                Confidence::Low
            },
            format!("each of the {quick} segments the {who} acknowledged had its own prompt ACK"),
        ),
        None => Inferred::new(
            None,
            Confidence::Low,
            format!("no run of full segments showed how many the {who} acknowledges at once"),
        ),
    };
    let quick_acks_at_start = if quick_done {
        Inferred::new(
            Some(quick),
            if quick >= 2 { Confidence::Medium } else { Confidence::Low },
            format!(
                "the {who} acknowledged the first {quick} segment(s) one by one at once, then began to delay or combine ACKs"
            ),
        )
    } else {
        Inferred::new(
            None,
            Confidence::Low,
            format!("every one of the {quick} segment(s) the {who} acknowledged got its own prompt ACK: no end to a quick-ACK phase seen"),
        )
    };
    let (policy, conf, why) = if timer.is_some() {
        if quick_done && quick >= 2 {
            (
                "quickack",
                Confidence::Medium,
                format!(
                    "delayed ACKs after {quick} quick ACKs at the start (Linux's quick-ACK mode)"
                ),
            )
        } else {
            (
                "delayed",
                Confidence::Medium,
                "delayed ACKs with no quick ACKs at the start".to_string(),
            )
        }
    } else if !quick_done && quick >= 3 {
        (
            "immediate",
            // Linux's quick-ACK phase (tcp_incr_quickack) lasts up to 16
            // ACKs, and Linux ACKs a runt at once when it is read.
            if quick > MAX_QUICKACKS && smp.prompt_full >= 3 {
                Confidence::Medium
            } else {
                Confidence::Low
            },
            format!("all {quick} ACKs immediate ({} of full segments), none delayed (a quick-ACK phase longer than the capture, or runts read at once, look the same on Linux)", smp.prompt_full),
        )
    } else if quick_done && quick >= 2 {
        ("quickack", Confidence::Medium, format!("{quick} quick ACKs at the start, then combined ACKs; no lone segment showed the timer"))
    } else if quick_done && quick == 0 && counted > 0 {
        (
            "delayed",
            Confidence::Medium,
            "the first ACK already covered back-to-back segments: no quick-ACK phase; no lone segment showed the timer".to_string(),
        )
    } else if counted > 0 && mode.is_some_and(|i| i >= 1) {
        (
            "delayed",
            Confidence::Low,
            "ACKs cover two or more segments; no lone segment showed the timer".to_string(),
        )
    } else {
        (
            "delayed",
            Confidence::Low,
            "too few ACKs to tell; the RFC 1122 4.2.3.2 default".to_string(),
        )
    };
    AckBehaviour {
        delack_s,
        ack_every,
        quick_acks_at_start,
        ack_policy: Inferred::new(policy.to_string(), conf, format!("the {who}: {why}")),
        samples: smp,
    }
}
