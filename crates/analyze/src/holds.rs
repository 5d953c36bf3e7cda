//! Every wait an ACK ended: data the sender had for the peer, held in the
//! middle of a turn until an ACK let it go, whether the ACK came late (a
//! delayed-ACK timer) or on time (one round trip). Each hold is classified by
//! what held it: the send rule (a runt behind unacknowledged data, Nagle or
//! Minshall), the peer's advertised window, the congestion window, or the
//! sender's own buffer.
//!
//! The wire shows a hold as the sender falling silent inside a turn (no data
//! from the peer meanwhile, so nothing it sends next answers anything) and
//! its next data leaving as soon as an ACK reaches it.

use crate::flow::{Dir, Flow};
use serde::Serialize;

/// What held the data.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HoldCause {
    /// A sub-MSS segment waited for unacknowledged data with room in the
    /// window: the send rule (RFC 896 / RFC 1122 4.2.3.4 Nagle; Minshall's
    /// modification via Cheshire, Nagle x delayed ACK).
    SendRule,
    /// The data did not fit the peer's advertised window (RFC 9293 3.8.6).
    PeerWindow,
    /// Full segments waited with the peer's window open: in flight had
    /// reached the congestion window (RFC 5681 3.1).
    Cwnd,
    /// In flight stayed at one size for round trip after round trip with the
    /// peer's window open and no loss, where a congestion window would have
    /// grown (RFC 5681 3.1): the sender's buffer capped it.
    SendBuffer,
}

/// One hold of one sender's data, in capture-point time.
#[derive(Clone, Debug, Serialize)]
pub struct Hold {
    /// 0 client, 1 server.
    pub sender: Dir,
    pub cause: HoldCause,
    /// When the sender's previous segment of the turn passed the capture
    /// point: the latest the held data can have been ready (the turn went on,
    /// so the application had more to send).
    pub began_s: f64,
    /// When the held segment passed the capture point.
    pub released_s: f64,
    /// When the releasing ACK passed the capture point.
    pub ack_s: f64,
    /// How long that ACK trailed the newest data it acknowledged, net of the
    /// path (a delayed-ACK timer shows as 40-500 ms here).
    pub ack_delay_s: f64,
    /// First sequence number and length of the held segment.
    pub seq: u64,
    pub len: usize,
    /// Bytes in flight just before the ACK.
    pub in_flight: u64,
    /// A sub-MSS segment sent earlier was unacknowledged just before the ACK
    /// (Minshall's rule holds a runt only then).
    pub runt_outstanding: bool,
}

impl Hold {
    /// Time the hold took.
    pub fn held_s(&self) -> f64 {
        (self.released_s - self.began_s).max(0.0)
    }
}

/// The ACK that may release held data, and what was in flight before it.
#[derive(Clone, Copy)]
struct AckSeen {
    t: f64,
    delay: f64,
    in_flight: u64,
    runt_outstanding: bool,
    /// Room the peer's window left before this ACK.
    room_before: u64,
}

/// Holds of data sent by `s`: each a segment that left within a reaction
/// time of an ACK that advanced, after the sender had been silent at least
/// `min_hold_s` inside a turn with data in flight. `dist` is the capture
/// point's round trip to each host ([`crate::diagnose::distances`]).
pub fn holds(f: &Flow, s: Dir, dist: &[f64; 2], min_hold_s: f64, slack_s: f64) -> Vec<Hold> {
    let smss = f.smss(s);
    // A released segment leaves as the ACK reaches the sender: at most a
    // round trip from the capture point to the sender after the ACK passed
    // it, plus a little scheduling.
    let react = dist[s] * 1.25 + slack_s;
    let r = 1 - s;
    let mut out = Vec::new();
    // Outstanding new data of s: (end, time sent, len).
    let mut flight: Vec<(u64, f64, usize)> = Vec::new();
    let (mut high_s, mut high_ack) = (0u64, 0u64);
    let mut edge: Option<u64> = None;
    let mut prev_t: Option<f64> = None;
    // The peer sent data, or s resent, since s's previous new segment.
    let mut broken = true;
    let mut last_ack: Option<AckSeen> = None;
    // Most bytes in flight since the last loss: cwnd was at least that.
    let mut max_flight = 0u64;
    for g in &f.segs {
        if g.duplicate {
            continue;
        }
        if g.dir == r {
            if g.len > 0 {
                broken = true;
                last_ack = None;
            }
            let Some(a) = g.ack else { continue };
            if g.flags.rst() {
                continue;
            }
            // The SYN-ACK's window (never scaled, RFC 7323 2.2) is the first edge.
            let room_before = edge.map_or(u64::MAX, |e| e.saturating_sub(high_s));
            edge = Some(a + g.win);
            if a <= high_ack {
                continue;
            }
            high_ack = a;
            let n = flight.partition_point(|&(e, _, _)| e <= a);
            let in_flight =
                high_s.saturating_sub(flight.first().map_or(high_s, |x| x.0 - x.2 as u64));
            let runt_outstanding = flight.iter().any(|x| x.2 < smss);
            let newest = flight[..n]
                .iter()
                .map(|x| x.1)
                .fold(f64::NEG_INFINITY, f64::max);
            flight.drain(..n);
            if n > 0 {
                last_ack = Some(AckSeen {
                    t: g.t,
                    delay: (g.t - newest - dist[r]).max(0.0),
                    in_flight,
                    runt_outstanding,
                    room_before,
                });
            }
            continue;
        }
        if g.len == 0 {
            continue;
        }
        if g.retransmit {
            // Loss recovery: the congestion window shrank (RFC 5681 3.1).
            broken = true;
            max_flight = 0;
            continue;
        }
        if let (Some(p), Some(ack), false) = (prev_t, last_ack, broken) {
            let waited = g.t - p;
            if ack.t >= p
                && g.t >= ack.t
                && g.t - ack.t <= react
                && waited >= min_hold_s
                && ack.in_flight > 0
            {
                let cause = if ack.room_before < g.len.min(smss) as u64 {
                    HoldCause::PeerWindow
                } else if g.len < smss
                    && ack.in_flight + g.len as u64 <= cwnd_floor(smss, max_flight)
                {
                    HoldCause::SendRule
                } else {
                    HoldCause::Cwnd
                };
                out.push(Hold {
                    sender: s,
                    cause,
                    began_s: p,
                    released_s: g.t,
                    ack_s: ack.t,
                    ack_delay_s: ack.delay,
                    seq: g.seq,
                    len: g.len,
                    in_flight: ack.in_flight,
                    runt_outstanding: ack.runt_outstanding,
                });
            }
        }
        // One ACK releases one hold: later segments of its burst follow on.
        last_ack = None;
        broken = false;
        prev_t = Some(g.t);
        high_s = high_s.max(g.end());
        if g.end() > high_ack {
            flight.push((g.end(), g.t, g.len));
        }
        let start = flight.first().map_or(high_s, |x| x.0 - x.2 as u64);
        max_flight = max_flight.max(high_s - start);
    }
    send_buffer_plateaus(&mut out, smss as u64);
    out
}

/// The least congestion window the sender can have had: the initial window
/// of RFC 3390 (min(4 MSS, max(2 MSS, 4380 bytes))), or the most it had in
/// flight since its last loss. A runt that fits under it waited for the send
/// rule, not for cwnd.
fn cwnd_floor(smss: usize, max_flight: u64) -> u64 {
    let iw = (4 * smss).min((2 * smss).max(4380)) as u64;
    iw.max(max_flight)
}

/// Round trips of flat in-flight that mark a buffer cap rather than cwnd.
const PLATEAU_ROUNDS: usize = 4;

/// Reclassifies runs of congestion-window holds whose in-flight stayed within
/// one segment of the same size for [`PLATEAU_ROUNDS`] or more round trips:
/// with no loss in between (a resend breaks a turn, so no hold spans one) a
/// congestion window grows by at least a segment per round trip (RFC 5681
/// 3.1), so what stayed flat is the sender's buffer.
fn send_buffer_plateaus(out: &mut [Hold], smss: u64) {
    let mut i = 0;
    while i < out.len() {
        if out[i].cause != HoldCause::Cwnd {
            i += 1;
            continue;
        }
        let base = out[i].in_flight;
        let mut j = i + 1;
        while j < out.len()
            && out[j].cause == HoldCause::Cwnd
            && out[j].in_flight.abs_diff(base) < smss
        {
            j += 1;
        }
        if j - i >= PLATEAU_ROUNDS {
            for h in &mut out[i..j] {
                h.cause = HoldCause::SendBuffer;
            }
        }
        i = j;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flow::Seg;

    /// A segment with receive window `win` (the fixture's, otherwise).
    fn seg(t_ms: f64, dir: Dir, seq: u64, len: usize, ack: u64, win: u64) -> Seg {
        Seg {
            win,
            ..crate::flow::fixture::seg(t_ms, dir, seq, len, ack)
        }
    }

    fn flow(segs: Vec<Seg>) -> Flow {
        crate::flow::fixture::flow(1000, segs)
    }

    #[test]
    fn a_runt_released_by_a_prompt_ack_is_a_send_rule_hold() {
        // 1000 + 500 leave, the ACK comes a 40 ms round trip later and the
        // 300-byte runt follows at once: held a round trip behind the runt.
        let f = flow(vec![
            seg(0.0, 0, 1, 1000, 1, 65_535),
            seg(0.0, 0, 1001, 500, 1, 65_535),
            seg(40.0, 1, 1, 0, 1501, 65_535),
            seg(40.0, 0, 1501, 300, 1, 65_535),
        ]);
        let h = holds(&f, 0, &[0.0, 0.04], 0.001, 0.002);
        assert_eq!(h.len(), 1);
        assert_eq!(h[0].cause, HoldCause::SendRule);
        assert!(h[0].runt_outstanding);
        assert!((h[0].held_s() - 0.04).abs() < 1e-9);
    }

    #[test]
    fn full_segments_waiting_on_a_closed_window_or_on_cwnd() {
        let window = flow(vec![
            seg(0.0, 1, 1, 0, 1, 2000),
            seg(0.0, 0, 1, 1000, 1, 2000),
            seg(0.0, 0, 1001, 1000, 1, 2000),
            seg(40.0, 1, 1, 0, 1001, 2000),
            seg(40.0, 0, 2001, 1000, 1, 2000),
        ]);
        let h = holds(&window, 0, &[0.0, 0.04], 0.001, 0.002);
        assert_eq!(
            h.iter().map(|h| h.cause).collect::<Vec<_>>(),
            [HoldCause::PeerWindow]
        );
        let open = flow(vec![
            seg(0.0, 1, 1, 0, 1, 65_535),
            seg(0.0, 0, 1, 1000, 1, 2000),
            seg(0.0, 0, 1001, 1000, 1, 2000),
            seg(40.0, 1, 1, 0, 1001, 65_535),
            seg(40.0, 0, 2001, 1000, 1, 2000),
        ]);
        let h = holds(&open, 0, &[0.0, 0.04], 0.001, 0.002);
        assert_eq!(
            h.iter().map(|h| h.cause).collect::<Vec<_>>(),
            [HoldCause::Cwnd]
        );
    }

    #[test]
    fn data_answering_the_peer_or_leaving_long_after_the_ack_is_no_hold() {
        let answered = flow(vec![
            seg(0.0, 0, 1, 500, 1, 65_535),
            seg(40.0, 1, 1, 100, 501, 65_535),
            seg(40.0, 0, 501, 300, 101, 65_535),
        ]);
        assert!(holds(&answered, 0, &[0.0, 0.04], 0.001, 0.002).is_empty());
        let late = flow(vec![
            seg(0.0, 0, 1, 500, 1, 65_535),
            seg(40.0, 1, 1, 0, 501, 65_535),
            seg(90.0, 0, 501, 300, 1, 65_535),
        ]);
        assert!(holds(&late, 0, &[0.0, 0.04], 0.001, 0.002).is_empty());
    }

    #[test]
    fn flat_in_flight_over_many_rounds_is_the_send_buffer() {
        let mut segs = vec![seg(0.0, 1, 1, 0, 1, 1 << 20)];
        let mut seq = 1;
        for k in 0..6u64 {
            let t = 40.0 * k as f64;
            if k > 0 {
                segs.push(seg(t, 1, 1, 0, seq, 1 << 20));
            }
            for _ in 0..4 {
                segs.push(seg(t, 0, seq, 1000, 1, 65_535));
                seq += 1000;
            }
        }
        let h = holds(&flow(segs), 0, &[0.0, 0.04], 0.001, 0.002);
        assert_eq!(h.len(), 5);
        assert!(h.iter().all(|h| h.cause == HoldCause::SendBuffer), "{h:?}");
    }
}
