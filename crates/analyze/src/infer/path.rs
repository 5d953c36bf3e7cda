//! The path as one capture shows it: where the capture was taken, the
//! minimum round trip, the bottleneck rate, loss, reordering and the options
//! the handshake negotiated.

use super::stats::upper_mode;
use crate::diagnose::ethernet_wire_bytes;
use crate::evidence::{Confidence, Inferred, Span};
use crate::flow::{Dir, Flow, Seg};
use serde::Serialize;

/// Where on the path the capture was taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Vantage {
    /// At (or near) the client: it answers the capture point at once.
    Client,
    /// At (or near) the server.
    Server,
    /// Somewhere along the path, with a round trip to each end.
    Between,
    /// The round trips are too short or missing to tell.
    Unknown,
}

/// Loss as the retransmissions show it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LossEstimate {
    /// Retransmissions per data segment sent (originals and resends), both
    /// directions: each resend repairs one lost transmission, so this is the
    /// per-packet drop probability `link.loss` takes (never above 1, as
    /// resends per original can be when one segment is resent many times).
    pub rate: f64,
    /// About 95% of plausible rates given the count (Wilson interval).
    pub range: Span<f64>,
    pub retransmits: u64,
    pub originals: u64,
    /// The rate of client data and of server data.
    pub client_to_server: f64,
    pub server_to_client: f64,
    /// ACKs that carried SACK blocks (RFC 2018): the receiver saw a hole.
    pub sack_acks: usize,
}

/// The options both SYNs carried (RFC 7323 2.2, RFC 2018 2: an option is in
/// use only when both sides offer it).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NegotiatedOptions {
    pub window_scale: bool,
    /// The shift each side announced (client, server).
    pub window_scale_shifts: [Option<u8>; 2],
    pub timestamps: bool,
    pub sack: bool,
}

/// The path between the two hosts.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PathInference {
    pub vantage: Inferred<Vantage>,
    /// Round trip from the capture point to the client and back (diagnose's distances).
    pub capture_to_client_rtt_s: f64,
    /// Round trip from the capture point to the server and back.
    pub capture_to_server_rtt_s: f64,
    /// End-to-end minimum round trip: the sum of both distances.
    pub min_rtt_s: Inferred<f64>,
    /// One-way propagation delay for `link.delay`: half the minimum round
    /// trip less the serialization of the handshake's segments; one capture
    /// cannot tell the two directions apart, so they are taken as equal.
    pub one_way_delay_s: Inferred<f64>,
    /// One-way delay from the capture point to the client and to the server,
    /// when the capture was taken between them.
    pub capture_split_s: Option<[f64; 2]>,
    /// Bottleneck rate in bits/s of Ethernet frames (preamble and gap
    /// counted, as `link.rate` with `link.framing = "ethernet"`).
    pub bottleneck_bps: Inferred<Option<f64>>,
    pub loss: Inferred<LossEstimate>,
    /// Data segments the network delivered out of order, per original.
    pub reordering: Inferred<f64>,
    pub options: Inferred<NegotiatedOptions>,
}

/// How many round-trip samples each distance rests on: (handshake seen,
/// data-to-ACK pairs timing the capture -> client -> capture and the
/// capture -> server -> capture round trips).
fn rtt_basis(f: &Flow) -> (bool, [usize; 2]) {
    let hs = f.segs.iter().any(|s| s.dir == 1 && s.flags.syn())
        && f.segs
            .iter()
            .any(|s| s.dir == 0 && s.flags.syn() && !s.flags.ack());
    let mut n = [0usize; 2];
    for s in 0..2 {
        let mut high_acked = 0u64;
        let mut sent: Vec<u64> = Vec::new();
        for g in &f.segs {
            if g.dir == s && g.len > 0 && !g.retransmit && !g.flags.syn() {
                sent.push(g.end());
            } else if g.dir != s {
                if let Some(a) = g.ack.filter(|&a| a > high_acked) {
                    high_acked = a;
                    let k = sent.partition_point(|&e| e <= a);
                    if k > 0 {
                        n[1 - s] += 1;
                        sent.drain(..k);
                    }
                }
            }
        }
    }
    (hs, n)
}

/// Where the capture was taken: at the end whose round trip from the capture
/// point is a small part of the whole (Jaiswal et al., Inferring TCP
/// connection characteristics through passive measurements, 2004, 3: the
/// measurement point splits the round trip in two).
pub fn vantage(f: &Flow, dist: &[f64; 2]) -> Inferred<Vantage> {
    let (hs, n) = rtt_basis(f);
    let total = dist[0] + dist[1];
    let basis = format!(
        "{}; {} and {} data-to-ACK samples from the client's and the server's side",
        if hs {
            "handshake in the capture"
        } else {
            "no handshake"
        },
        n[0],
        n[1]
    );
    let nums = format!(
        "capture -> client -> capture {:.3} ms, capture -> server -> capture {:.3} ms",
        dist[0] * 1e3,
        dist[1] * 1e3
    );
    let have = |d: Dir| hs || n[d] > 0;
    if !have(0) || !have(1) {
        return Inferred::new(
            Vantage::Unknown,
            Confidence::Low,
            format!("no round trip to one end could be timed ({basis})"),
        );
    }
    if total < 200e-6 {
        return Inferred::new(
            Vantage::Unknown,
            Confidence::Low,
            format!(
                "{nums}: a round trip under 0.2 ms is too short to place the capture ({basis})"
            ),
        );
    }
    let share = [dist[0] / total, dist[1] / total];
    for (d, v) in [(0, Vantage::Client), (1, Vantage::Server)] {
        if share[d] < 0.1 {
            let c = if share[d] < 0.03 && hs {
                Confidence::High
            } else {
                Confidence::Medium
            };
            return Inferred::new(
                v,
                c,
                format!(
                    "{nums}: the {} answers within {:.0}% of the round trip, so the capture is at or near it ({basis})",
                    if d == 0 { "client" } else { "server" },
                    100.0 * share[d]
                ),
            );
        }
    }
    Inferred::new(
        Vantage::Between,
        if hs {
            Confidence::High
        } else {
            Confidence::Medium
        },
        format!("{nums}: both ends are a real round trip away, so the capture is between them ({basis})"),
    )
}

/// The path: distances from `dist` (diagnose's), rate, loss, options.
pub fn path(f: &Flow, dist: &[f64; 2]) -> PathInference {
    let v = vantage(f, dist);
    let (hs, n) = rtt_basis(f);
    let rtt = dist[0] + dist[1];
    let min_rtt = if rtt > 0.0 {
        let c = if hs {
            Confidence::High
        } else if n[0] + n[1] >= 4 {
            Confidence::Medium
        } else {
            Confidence::Low
        };
        Inferred::new(
            rtt,
            c,
            format!(
                "capture -> client -> capture {:.3} ms plus capture -> server -> capture {:.3} ms, each the fastest of the handshake{} and {} data-to-ACK samples",
                dist[0] * 1e3,
                dist[1] * 1e3,
                if hs { "" } else { " (not in the capture)" },
                n[0] + n[1]
            ),
        )
    } else {
        Inferred::new(
            0.0,
            Confidence::Low,
            "no handshake and no data answered by an ACK: no round trip to time",
        )
    };
    let rate = bottleneck(f, v.value);
    let one_way = one_way_delay(f, &min_rtt, rate.value);
    let split = (v.value == Vantage::Between).then(|| [dist[0] / 2.0, dist[1] / 2.0]);
    PathInference {
        vantage: v,
        capture_to_client_rtt_s: dist[0],
        capture_to_server_rtt_s: dist[1],
        min_rtt_s: min_rtt,
        one_way_delay_s: one_way,
        capture_split_s: split,
        bottleneck_bps: rate,
        loss: loss(f),
        reordering: reordering(f),
        options: options(f),
    }
}

/// Half the round trip, less the serialization of the two handshake
/// segments when the rate is known (the round trip was timed on them).
fn one_way_delay(f: &Flow, rtt: &Inferred<f64>, rate: Option<f64>) -> Inferred<f64> {
    let hs: Vec<&Seg> = f.segs.iter().filter(|s| s.flags.syn()).take(2).collect();
    let ser = match (rate, hs.as_slice()) {
        (Some(r), [a, b]) if r > 0.0 => {
            (ethernet_wire_bytes(a.header_bytes) + ethernet_wire_bytes(b.header_bytes)) as f64 * 8.0
                / r
        }
        _ => 0.0,
    };
    let d = ((rtt.value - ser) / 2.0).max(0.0);
    let c = rtt.confidence.min(Confidence::Medium);
    Inferred::new(
        d,
        c,
        format!(
            "half the minimum round trip {:.3} ms{}; the two directions are taken as equal (one capture cannot split them)",
            rtt.value * 1e3,
            if ser > 0.0 {
                format!(
                    " less {:.3} ms serializing the SYN and SYN-ACK at the bottleneck rate",
                    ser * 1e3
                )
            } else {
                String::new()
            }
        ),
    )
}

/// Fewest samples a rate cluster needs.
const MIN_TRAIN: usize = 5;

/// Bottleneck rate of the busier direction: packet-pair dispersion of
/// back-to-back full segments where the capture is past the bottleneck
/// (Keshav, A control-theoretic approach to flow control, 1991, packet pair;
/// Dovrolis et al., What do packet dispersion techniques measure?, 2001),
/// else the delivery rate the receiver's ACKs clock out (Cardwell et al.,
/// BBR: congestion-based congestion control, 2016, delivery rate): the mode of
/// the per-pair rates, so that app-limited gaps and idle periods, which
/// scatter, do not count.
fn bottleneck(f: &Flow, v: Vantage) -> Inferred<Option<f64>> {
    let s = usize::from(f.sides[1].bytes > f.sides[0].bytes);
    let r = 1 - s;
    let smss = f.smss(s);
    let name = |d: Dir| if d == 0 { "client" } else { "server" };
    let full =
        |g: &Seg| g.dir == s && g.len == smss && !g.retransmit && !g.duplicate && !g.reordered;
    // Data pairs: consecutive full segments of s, nothing of s between.
    let mut data = Vec::new();
    let mut prev: Option<&Seg> = None;
    for g in f.segs.iter().filter(|g| g.dir == s && g.len > 0) {
        if let Some(p) = prev.filter(|p| full(p) && full(g) && g.seq == p.end()) {
            let gap = g.t - p.t;
            if gap > 0.0 {
                data.push(ethernet_wire_bytes(g.header_bytes + g.len) as f64 * 8.0 / gap);
            }
        }
        prev = Some(g);
    }
    // ACK pairs: consecutive advancing ACKs of r, each newly acknowledging
    // whole full segments.
    let hdr = f
        .segs
        .iter()
        .find(|g| full(g))
        .map_or(52, |g| g.header_bytes);
    let per_seg = ethernet_wire_bytes(hdr + smss) as f64 * 8.0;
    let mut acks = Vec::new();
    let mut high = None::<u64>;
    let mut last_t = None::<f64>;
    for g in f.segs.iter().filter(|g| g.dir == r) {
        let Some(a) = g.ack else { continue };
        let Some(h) = high else {
            high = Some(a);
            continue;
        };
        if a <= h {
            continue;
        }
        let bytes = a - h;
        let whole = bytes % smss as u64 == 0 && g.sacks.is_empty();
        if let (Some(t0), true) = (last_t, whole) {
            let gap = g.t - t0;
            if gap > 0.0 {
                acks.push((bytes / smss as u64) as f64 * per_seg / gap);
            }
        }
        last_t = whole.then_some(g.t);
        high = Some(a);
    }
    let past_bottleneck =
        matches!(v, Vantage::Between) || v == [Vantage::Client, Vantage::Server][r];
    let dm = upper_mode(&data, 0.1, 0.0).filter(|c| c.count >= MIN_TRAIN);
    let am = upper_mode(&acks, 0.1, 0.0).filter(|c| c.count >= MIN_TRAIN);
    let mbps = |x: f64| x / 1e6;
    match (past_bottleneck, dm, am) {
        (true, Some(c), _) => Inferred::new(
            Some(c.median),
            if c.count >= 20 { Confidence::High } else { Confidence::Medium },
            format!(
                "{} of {} back-to-back full {} segments arrived {:.3} Mbit/s apart (packet-pair dispersion; the capture is past the bottleneck)",
                c.count,
                data.len(),
                name(s),
                mbps(c.median)
            ),
        ),
        (_, _, Some(c)) => Inferred::new(
            Some(c.median),
            if c.count >= 20 { Confidence::Medium } else { Confidence::Low },
            format!(
                "{} of {} {} ACKs of whole full segments clocked out {:.3} Mbit/s (delivery rate: a lower bound if the sender never filled the path)",
                c.count,
                acks.len(),
                name(r),
                mbps(c.median)
            ),
        ),
        _ => Inferred::new(
            None,
            Confidence::Low,
            format!(
                "no train of at least {MIN_TRAIN} back-to-back full segments or of ACKs clocking them ({} data pairs, {} ACK pairs from the {} direction): sweep the rate",
                data.len(),
                acks.len(),
                name(s)
            ),
        ),
    }
}

/// Wilson score interval, about 95%, of a proportion `k / n`.
fn wilson(k: u64, n: u64) -> Span<f64> {
    if n == 0 {
        return Span { lo: 0.0, hi: 1.0 };
    }
    let (k, n, z) = (k as f64, n as f64, 1.96f64);
    let p = k / n;
    let d = 1.0 + z * z / n;
    let c = (p + z * z / (2.0 * n)) / d;
    let h = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / d;
    Span {
        lo: (c - h).max(0.0),
        hi: (c + h).min(1.0),
    }
}

/// Loss from retransmissions: each lost data segment is sent again at least
/// once (RFC 9293 3.8.1); a spurious resend counts too, and ACK losses hide
/// behind later cumulative ACKs, so this is the data direction's loss.
fn loss(f: &Flow) -> Inferred<LossEstimate> {
    let [c, s] = &f.sides;
    let orig = |x: &crate::flow::Side| x.data_segments.saturating_sub(x.retransmits);
    // Of `n` originals and `k` resends, `k` of `n + k` transmissions were lost.
    let rate = |k: u64, n: u64| {
        if n + k == 0 {
            0.0
        } else {
            k as f64 / (n + k) as f64
        }
    };
    let (k, n) = (c.retransmits + s.retransmits, orig(c) + orig(s));
    let sack_acks = f.segs.iter().filter(|g| !g.sacks.is_empty()).count();
    let conf = if n >= 200 {
        Confidence::Medium
    } else {
        Confidence::Low
    };
    let est = LossEstimate {
        rate: rate(k, n),
        range: wilson(k, n + k),
        retransmits: k,
        originals: n,
        client_to_server: rate(c.retransmits, orig(c)),
        server_to_client: rate(s.retransmits, orig(s)),
        sack_acks,
    };
    let ev = format!(
        "{k} retransmission(s) of {n} original data segments ({} from the client, {} from the server); {sack_acks} ACK(s) carried SACK blocks; 95% range {:.4} to {:.4}",
        c.retransmits, s.retransmits, est.range.lo, est.range.hi
    );
    Inferred::new(est, conf, ev)
}

/// Reordering: originals the network delivered after later segments, told
/// apart from retransmissions by their older IPv4 identification (flow.rs).
fn reordering(f: &Flow) -> Inferred<f64> {
    let k = f.segs.iter().filter(|g| g.reordered).count();
    let n: u64 = f
        .sides
        .iter()
        .map(|x| x.data_segments.saturating_sub(x.retransmits))
        .sum();
    let ids = f.segs.iter().any(|g| g.reordered) || n >= 50;
    Inferred::new(
        if n == 0 { 0.0 } else { k as f64 / n as f64 },
        if ids && n >= 200 {
            Confidence::Medium
        } else {
            Confidence::Low
        },
        format!("{k} of {n} original data segments arrived after later ones (by IPv4 identification; IPv6 or randomized identifications hide it)"),
    )
}

/// The options in use: both SYNs when the handshake is in the capture; else
/// what the data segments carry (SACK blocks, timestamp-sized option bytes).
fn options(f: &Flow) -> Inferred<NegotiatedOptions> {
    let [c, s] = &f.sides;
    if f.saw_syn && f.segs.iter().any(|g| g.dir == 1 && g.flags.syn()) {
        let o = NegotiatedOptions {
            window_scale: c.window_scale.is_some() && s.window_scale.is_some(),
            window_scale_shifts: [c.window_scale, s.window_scale],
            timestamps: c.timestamps && s.timestamps,
            sack: c.sack_permitted && s.sack_permitted,
        };
        return Inferred::new(
            o,
            Confidence::High,
            "read off both SYNs (RFC 7323 2.2, RFC 2018 2: an option is on only when both offer it)",
        );
    }
    // Timestamps take 10 bytes, 12 with padding, on every segment (RFC 7323 3).
    let ts = [c, s]
        .iter()
        .all(|x| x.data_option_bytes.is_some_and(|b| b >= 10));
    let sack = f.segs.iter().any(|g| !g.sacks.is_empty());
    Inferred::new(
        NegotiatedOptions {
            window_scale: false,
            window_scale_shifts: [None, None],
            timestamps: ts,
            sack,
        },
        Confidence::Low,
        "no handshake in the capture: timestamps guessed from the option bytes on every data segment, SACK from SACK blocks seen; window scaling unknown (windows taken unscaled)",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_brackets_the_proportion() {
        let w = wilson(20, 1000);
        assert!(w.lo < 0.02 && w.hi > 0.02 && w.lo > 0.01 && w.hi < 0.035);
        let z = wilson(0, 100);
        assert_eq!(z.lo, 0.0);
        assert!(z.hi > 0.0 && z.hi < 0.05);
        assert_eq!(wilson(0, 0), Span { lo: 0.0, hi: 1.0 });
    }
}
