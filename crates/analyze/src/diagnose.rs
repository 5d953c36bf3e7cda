//! Where a flow's time went: held tails, delayed-ACK stalls, window limits,
//! loss recovery and tinygram storms, each with times, the time lost, and the
//! fix with the side of the connection that must make it.
//!
//! The capture may have been taken anywhere on the path. Each flow's distance
//! from the capture point to each host (the round trip capture -> host ->
//! capture) is estimated from the handshake and from the fastest
//! data-to-ACK samples; delays are measured net of it.

use crate::capture::{Capture, CaptureError, ReadStats};
use crate::exchange::{self, Exchange, HeldPart, Shape};
use crate::flow::{flows, Dir, Flow, Seg};
use crate::flowtable::{FlowTable, Summarised};
use crate::holds::{holds, Hold};
use crate::sendrule::{send_rules, SendRules};
use serde::Serialize;
use std::collections::HashMap;

/// Tunables of the detectors.
#[derive(Clone, Debug)]
pub struct Thresholds {
    /// An ACK is "late" when it left this long after the data it acknowledges
    /// arrived (net of the path). Delayed-ACK timers are 40 ms (Linux) to 200 ms
    /// (BSD, Solaris); RFC 1122 4.2.3.2 caps them at 500 ms.
    pub late_ack_s: f64,
    /// Longest delay still taken for a delayed-ACK timer.
    pub late_ack_max_s: f64,
    /// Held data leaves within this long of the late ACK's arrival at the
    /// sender (plus the capture point's distance to the sender).
    pub release_slack_s: f64,
    /// A tinygram storm is at least this many consecutive small segments...
    pub storm_min_segments: usize,
    /// ...no further apart than this.
    pub storm_max_gap_s: f64,
    /// Shortest silence inside a turn, ended by an ACK, counted as a hold.
    pub min_hold_s: f64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            late_ack_s: 0.004,
            late_ack_max_s: 1.0,
            release_slack_s: 0.002,
            storm_min_segments: 20,
            storm_max_gap_s: 0.05,
            min_hold_s: 0.001,
        }
    }
}

/// What kind of problem a finding is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// Nagle x delayed ACK (Cheshire; Doupnik 1.5): a sub-MSS segment released
    /// only by an ACK that came late.
    HeldTail,
    /// A sender with full segments waiting (congestion or peer window) for an
    /// ACK the receiver delayed (RFC 1122 4.2.3.2).
    DelayedAckStall,
    /// The sender filled the peer's advertised window and waited.
    WindowLimited,
    /// The receiver advertised a zero window (RFC 9293 3.8.6.1).
    ZeroWindow,
    /// Loss repaired by the retransmission timer (RFC 6298).
    TimeoutRecovery,
    /// Loss repaired by fast retransmit (RFC 5681 3.2), SACK (RFC 6675) or NAK (RFC 1106).
    FastRecovery,
    /// Many small segments in quick succession (Davids).
    TinygramStorm,
    /// A runt held a round trip by the send rule, released by an ACK that came
    /// on time: behind an earlier unacknowledged runt (Minshall's rule, via
    /// Cheshire) or any unacknowledged data (strict Nagle, RFC 896).
    RuntHold,
    /// Full segments waited with the peer's window open: in flight had
    /// reached the congestion window (RFC 5681 3.1).
    CwndLimited,
    /// In flight stayed flat for round trips with the window open and no
    /// loss: the sender's buffer, not cwnd, capped it (RFC 5681 3.1).
    SendBufferLimited,
}

impl Kind {
    pub fn title(self) -> &'static str {
        match self {
            Kind::HeldTail => "held tails (Nagle x delayed ACK)",
            Kind::DelayedAckStall => "delayed-ACK stalls",
            Kind::WindowLimited => "receive-window-limited",
            Kind::ZeroWindow => "zero window",
            Kind::TimeoutRecovery => "recovery by timeout",
            Kind::FastRecovery => "recovery by fast retransmit",
            Kind::TinygramStorm => "tinygram storm",
            Kind::RuntHold => "runt held a round trip (send rule)",
            Kind::CwndLimited => "congestion-window-limited",
            Kind::SendBufferLimited => "send-buffer-limited",
        }
    }
}

/// One occurrence of a finding.
#[derive(Clone, Debug, Serialize)]
pub struct Event {
    /// Seconds since the start of the capture.
    pub at_s: f64,
    /// Time lost by this occurrence.
    pub lost_s: f64,
    pub detail: String,
}

/// A fix and the side of the connection that must make it.
#[derive(Clone, Debug, Serialize)]
pub struct Recommendation {
    /// "client" or "server".
    pub side: &'static str,
    pub fix: String,
    /// The change the fix makes, where a simulation can try it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remedy: Option<Remedy>,
    /// What the fix did in a replay of the flow (`diagnose --rank`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replay: Option<ReplayEffect>,
}

/// The one change a recommendation makes on its side, as `whatif` can run it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Remedy {
    /// Each turn written at once (Cheshire, Nagle x delayed ACK: one write per message).
    OneWrite,
    /// TCP_NODELAY (RFC 1122 4.2.3.4: an application may disable Nagle).
    Nodelay,
    /// Minshall's rule (Minshall, via Cheshire, Nagle x delayed ACK).
    Minshall,
    /// Doupnik's policy (Doupnik, A new TCP transmission policy, 2.1).
    Doupnik,
    /// ACK without delay, or sooner (RFC 1122 4.2.3.2 allows up to 500 ms;
    /// the limit of shortening it is an ACK per segment).
    ImmediateAcks,
}

/// What one fix did to the flow's median exchange in a replay of it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ReplayEffect {
    /// The alternative the replay ran (`whatif`'s name for it).
    pub alternative: String,
    /// Median exchange completion, replayed as captured and with the fix, ms.
    pub baseline_p50_ms: f64,
    pub p50_ms: f64,
    /// The replay's own baseline matched the capture (median error within
    /// `whatif`'s tolerance); if not, the change is a direction, not a number.
    pub replay_matches: bool,
    /// Median relative error of the replayed baseline against the capture.
    pub baseline_error: f64,
}

impl Recommendation {
    /// The same recommendation, tagged with the change it makes.
    pub fn remedy(mut self, r: Remedy) -> Self {
        self.remedy = Some(r);
        self
    }
}

/// All occurrences of one kind of problem in one direction of a flow.
#[derive(Clone, Debug, Serialize)]
pub struct Finding {
    pub kind: Kind,
    /// The side whose data was affected ("client" or "server").
    pub sender: &'static str,
    pub count: usize,
    pub time_lost_s: f64,
    pub summary: String,
    pub events: Vec<Event>,
    pub recommendations: Vec<Recommendation>,
    /// Tinygram storms: (framing + headers) / payload of the sender's frames (Davids).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overhead_ratio: Option<f64>,
    /// The same, counting the receiver's pure ACKs too.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overhead_ratio_with_acks: Option<f64>,
}

/// One flow's report.
#[derive(Clone, Debug, Serialize)]
pub struct FlowReport {
    /// The flow's number from 1, in order of first appearance (`whatif --flow N`).
    pub flow: usize,
    pub client: String,
    pub server: String,
    pub start_s: f64,
    pub duration_s: f64,
    pub segments: usize,
    pub client_bytes: u64,
    pub server_bytes: u64,
    pub client_mss: usize,
    pub server_mss: usize,
    /// Round trip from the capture point to the client and back, and to the server.
    pub capture_to_client_rtt_ms: f64,
    pub capture_to_server_rtt_ms: f64,
    pub handshake_seen: bool,
    pub time_lost_s: f64,
    pub findings: Vec<Finding>,
    /// What kind of conversation the flow is (request/response, one-way, ...).
    pub shape: Shape,
    /// Why, in a sentence.
    pub shape_note: String,
    /// Each exchange's sizes, writes, latency, think times, and the part of
    /// its latency each kind of hold took.
    pub exchanges: Vec<Exchange>,
    /// Which send rules each side's segments are consistent with (client, server).
    pub send_rules: Vec<SendRules>,
}

/// The whole capture's diagnosis.
#[derive(Clone, Debug, Serialize)]
pub struct Diagnosis {
    pub capture: ReadStats,
    /// The flows analysed in full, in capture order.
    pub flows: Vec<FlowReport>,
    /// The flows past the limit of those analysed, counted; absent when
    /// every flow was analysed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summarised: Option<Summarised>,
}

impl Diagnosis {
    /// Flows in the capture, analysed or summarised.
    pub fn flow_count(&self) -> u64 {
        self.flows.len() as u64 + self.summarised.as_ref().map_or(0, |s| s.flows)
    }
}

/// Diagnoses every TCP flow of a capture read whole.
pub fn diagnose(cap: &Capture, th: &Thresholds) -> (Diagnosis, Vec<Flow>) {
    let fl = flows(cap);
    let reports = fl
        .iter()
        .enumerate()
        .map(|(i, f)| report(i + 1, f, &cap.stats, th))
        .collect();
    (
        Diagnosis {
            capture: cap.stats.clone(),
            flows: reports,
            summarised: None,
        },
        fl,
    )
}

fn report(n: usize, f: &Flow, stats: &ReadStats, th: &Thresholds) -> FlowReport {
    let mut r = diagnose_flow(f, th);
    r.flow = n;
    Rounding::of(stats).report(&mut r);
    r
}

/// A diagnosis of a capture file in memory bounded by flows as well as
/// segments: the busiest `max_flows` flows analysed in full, the rest
/// counted (and listed by [`FlowTable::summaries`]).
pub struct FileDiagnosis {
    pub diagnosis: Diagnosis,
    /// The flows analysed, with their numbers, in capture order.
    pub flows: Vec<(usize, Flow)>,
    /// Every flow's summary.
    pub table: FlowTable,
}

/// Diagnoses a capture file: a first pass summarises every flow (at most
/// [`crate::flowtable::MAX_TRACKED`] address pairs), the `max_flows`
/// busiest (bounded by [`crate::flowtable::MAX_MAX_FLOWS`]) are read again
/// and analysed in full. `progress(pass, bytes)` hears each pass's progress
/// (pass 1 or 2).
pub fn diagnose_file(
    path: &std::path::Path,
    max_flows: usize,
    th: &Thresholds,
    progress: &mut dyn FnMut(u8, u64),
) -> Result<FileDiagnosis, CaptureError> {
    let max_flows = max_flows.clamp(1, crate::flowtable::MAX_MAX_FLOWS);
    let mut table = FlowTable::survey(path, &mut |b| progress(1, b))?;
    table.select_busiest(max_flows);
    let sel = table.read_selected(path, &mut |b| progress(2, b))?;
    let reports = sel
        .flows
        .iter()
        .map(|(n, f)| report(*n, f, &sel.stats, th))
        .collect();
    Ok(FileDiagnosis {
        diagnosis: Diagnosis {
            capture: sel.stats,
            flows: reports,
            summarised: table.summarised(max_flows),
        },
        flows: sel.flows,
        table,
    })
}

/// Rounds reported times to the capture's timestamp resolution, so numbers
/// read as people write them (0.040013 s, not 0.040013440000000004 s).
#[derive(Clone, Copy, Debug)]
pub struct Rounding {
    /// Decimal places of a time in seconds.
    places: i32,
}

impl Rounding {
    /// The capture's resolution: microseconds for pcap, nanoseconds for a
    /// nanosecond pcap or a pcapng that says so; nanoseconds when unknown.
    pub fn of(stats: &ReadStats) -> Self {
        let ns = stats.ts_resolution_ns.max(1) as f64;
        Rounding {
            places: (9.0 - ns.log10()).ceil().clamp(0.0, 9.0) as i32,
        }
    }

    /// `x` seconds, rounded.
    pub fn s(self, x: f64) -> f64 {
        round_to(x, self.places)
    }

    /// `x` milliseconds, rounded.
    pub fn ms(self, x: f64) -> f64 {
        round_to(x, (self.places - 3).max(0))
    }

    /// Rounds every time in a flow's report.
    pub fn report(self, r: &mut FlowReport) {
        let s = |x: &mut f64| *x = self.s(*x);
        s(&mut r.start_s);
        s(&mut r.duration_s);
        s(&mut r.time_lost_s);
        r.capture_to_client_rtt_ms = self.ms(r.capture_to_client_rtt_ms);
        r.capture_to_server_rtt_ms = self.ms(r.capture_to_server_rtt_ms);
        for x in &mut r.findings {
            s(&mut x.time_lost_s);
            for e in &mut x.events {
                s(&mut e.at_s);
                s(&mut e.lost_s);
            }
        }
        for x in &mut r.exchanges {
            s(&mut x.start_s);
            for v in [
                &mut x.completion_at_capture_s,
                &mut x.completion_at_client_s,
            ]
            .into_iter()
            .flatten()
            {
                s(v);
            }
            for t in [&mut x.server_think_s, &mut x.client_think_s]
                .into_iter()
                .flatten()
            {
                s(&mut t.value.lo);
                s(&mut t.value.hi);
            }
            for h in &mut x.held {
                s(&mut h.held_s);
            }
        }
        for w in r
            .send_rules
            .iter_mut()
            .flat_map(|x| x.verdicts.iter_mut())
            .filter_map(|v| v.first_witness.as_mut())
        {
            s(&mut w.at_s);
        }
    }
}

/// `x` rounded to `places` decimal places (dividing by a power of ten keeps
/// the result the nearest double to the decimal).
fn round_to(x: f64, places: i32) -> f64 {
    let k = 10f64.powi(places);
    let y = (x * k).round() / k;
    if y == 0.0 {
        0.0 // no "-0"
    } else {
        y
    }
}

fn side_name(d: Dir) -> &'static str {
    if d == 0 {
        "client"
    } else {
        "server"
    }
}

/// Diagnoses one flow (numbered 1: a caller that knows its number sets `flow`).
pub fn diagnose_flow(f: &Flow, th: &Thresholds) -> FlowReport {
    let dist = distances(f);
    let mut findings = Vec::new();
    let rules: Vec<SendRules> = (0..2).map(|s| send_rules(f, s)).collect();
    for (s, rules) in rules.iter().enumerate() {
        let ev = stall_events(f, s, &dist, th);
        let stalled: Vec<(f64, f64)> = ev
            .iter()
            .map(|(_, e)| (e.at_s - e.lost_s, e.at_s))
            .collect();
        let hs = holds(f, s, &dist, th.min_hold_s, th.release_slack_s);
        stalls(s, f.sides[1 - s].bytes > 0, &ev, &hs, rules, &mut findings);
        let mut recovering = recovery(f, s, &dist, &mut findings);
        windows(f, s, &dist, th, &stalled, &mut recovering, &mut findings);
        charge_recovery(s, &recovering, &mut findings);
        crate::hold_findings::findings(f, s, &hs, &ev, rules, &mut findings);
        storms(f, s, th, &mut findings);
    }
    let mut ex = exchange::split(f, &dist);
    for x in &mut ex.exchanges {
        x.held = held_parts(x, &findings);
    }
    let (t0, t1) = f.span();
    // Findings may overlap (a window-limited wait inside a timeout's wait):
    // the flow lost the union of their spans, not the sum.
    let time_lost_s = union_len(
        findings
            .iter()
            .flat_map(|x| x.events.iter().map(move |e| event_span(x.kind, e))),
    );
    FlowReport {
        flow: 1,
        client: f.addr(0).to_string(),
        server: f.addr(1).to_string(),
        start_s: t0,
        duration_s: t1 - t0,
        segments: f.segs.len(),
        client_bytes: f.sides[0].bytes,
        server_bytes: f.sides[1].bytes,
        client_mss: f.smss(0),
        server_mss: f.smss(1),
        capture_to_client_rtt_ms: dist[0] * 1e3,
        capture_to_server_rtt_ms: dist[1] * 1e3,
        handshake_seen: f.saw_syn,
        time_lost_s,
        findings,
        shape: ex.shape,
        shape_note: ex.note,
        exchanges: ex.exchanges,
        send_rules: rules,
    }
}

/// The time each kind of finding took within one exchange: its events'
/// spans clipped to the exchange, overlaps within a kind counted once.
fn held_parts(x: &Exchange, findings: &[Finding]) -> Vec<HeldPart> {
    let (a, b) = (
        x.start_s,
        x.start_s + x.completion_at_capture_s.unwrap_or(0.0),
    );
    let mut out = Vec::new();
    for fd in findings {
        let spans = fd
            .events
            .iter()
            .map(|e| event_span(fd.kind, e))
            .map(|(s, e)| (s.max(a), e.min(b)));
        let held = union_len(spans);
        if held > 0.0 {
            out.push(HeldPart {
                kind: fd.kind,
                sender: fd.sender,
                held_s: held,
            });
        }
    }
    out
}

/// Round trip from the capture point to each host: from the handshake, and
/// from the fastest data -> ACK exchange (Karn: no retransmitted data).
pub fn distances(f: &Flow) -> [f64; 2] {
    let mut dist = [f64::INFINITY; 2];
    let segs = &f.segs;
    // Each answer is timed from the latest copy of what it answers: a lost
    // and retransmitted SYN or SYN-ACK must not count the timer's wait.
    let syn = |s: &Seg| s.dir == 0 && s.flags.syn() && !s.flags.ack();
    let syn_ack = |s: &Seg| s.dir == 1 && s.flags.syn();
    if let Some(j) = segs.iter().position(syn_ack) {
        if let Some(i) = segs[..j].iter().rposition(syn) {
            dist[1] = segs[j].t - segs[i].t;
        }
        if let Some(k) = (j + 1..segs.len()).find(|&k| segs[k].dir == 0 && !syn(&segs[k])) {
            if let Some(j2) = segs[..k].iter().rposition(syn_ack) {
                dist[0] = segs[k].t - segs[j2].t;
            }
        }
    }
    for s in 0..2 {
        let mut out: Vec<(u64, f64)> = Vec::new();
        for g in segs {
            if g.dir == s && g.len > 0 {
                if g.retransmit {
                    out.clear();
                } else {
                    out.push((g.end(), g.t));
                }
            } else if g.dir != s {
                if let Some(a) = g.ack {
                    let n = out.partition_point(|&(e, _)| e <= a);
                    if n > 0 {
                        let sample = g.t - out[n - 1].1;
                        dist[1 - s] = dist[1 - s].min(sample);
                        out.drain(..n);
                    }
                }
            }
        }
    }
    dist.map(|d| if d.is_finite() { d.max(0.0) } else { 0.0 })
}

/// The time span an event lost: window waits are stamped where they begin,
/// the other findings where the wait ended.
pub fn event_span(kind: Kind, e: &Event) -> (f64, f64) {
    match kind {
        // A fast-recovery episode is stamped at its start; its lost time
        // (window full during the repair) lies within it.
        Kind::WindowLimited | Kind::ZeroWindow | Kind::FastRecovery => (e.at_s, e.at_s + e.lost_s),
        _ => (e.at_s - e.lost_s, e.at_s),
    }
}

/// Total length of a set of time spans, overlaps counted once.
pub fn union_len(spans: impl IntoIterator<Item = (f64, f64)>) -> f64 {
    let mut v: Vec<(f64, f64)> = spans.into_iter().filter(|(a, b)| b > a).collect();
    v.sort_by(|x, y| x.0.total_cmp(&y.0));
    let mut total = 0.0;
    let mut cur: Option<(f64, f64)> = None;
    for (a, b) in v {
        match cur {
            Some((ca, cb)) if a <= cb => cur = Some((ca, cb.max(b))),
            _ => {
                if let Some((ca, cb)) = cur {
                    total += cb - ca;
                }
                cur = Some((a, b));
            }
        }
    }
    total + cur.map_or(0.0, |(a, b)| b - a)
}

fn ms(x: f64) -> String {
    format!("{:.1} ms", x * 1e3)
}

/// Held tails and delayed-ACK stalls of data sent by `s`.
///
/// Signature (Cheshire; Doupnik 1.5): the receiver's pure ACK, covering at most
/// one full-sized segment (a lone or odd segment), leaves a timer-like interval
/// after the data it acknowledges, while the sender is idle; then the sender's
/// next data leaves as soon as that ACK reaches it. The receiver must have been
/// silent meanwhile: anything it sent would have carried the ACK, so an ACK
/// that trails the receiver's own segments was queued, not delayed.
/// A sub-MSS first segment is
/// a held tail (a send policy held it); a full one is a delayed-ACK stall (the
/// congestion or peer window held it).
pub fn stall_events(f: &Flow, s: Dir, dist: &[f64; 2], th: &Thresholds) -> Vec<(Kind, Event)> {
    let r = 1 - s;
    let smss = f.smss(s);
    let mut out = Vec::new();
    // Outstanding data of s: (end, time sent, len).
    let mut flight: Vec<(u64, f64, usize)> = Vec::new();
    let mut last_data_t = f64::NEG_INFINITY;
    let mut high_s = 0u64;
    let mut high_ack = 0u64;
    // A late ACK waiting to see whether the sender reacts: (time, delay, acked).
    let mut cand: Option<(f64, f64, u64)> = None;
    let window = dist[s] + th.release_slack_s + 0.25 * dist[s];
    // When the receiver last sent anything: a delayed ACK follows silence,
    // since any segment the receiver sends carries its latest ACK.
    let mut last_r_t = f64::NEG_INFINITY;
    for g in &f.segs {
        if g.dir == s {
            if g.len == 0 {
                continue;
            }
            if g.retransmit && g.end() <= high_s {
                // A pure resend is not the held data leaving (an RTO may
                // fire just as the late ACK lands).
                last_data_t = g.t;
                continue;
            }
            high_s = high_s.max(g.end());
            if let Some((ta, delay, ack)) = cand.take() {
                if g.t - ta <= window {
                    let tail = g.len < smss;
                    let kind = if tail {
                        Kind::HeldTail
                    } else {
                        Kind::DelayedAckStall
                    };
                    let lost = delay;
                    let what = if tail {
                        format!("{} B segment held", g.len)
                    } else {
                        format!("{} B of full segments waited", g.len)
                    };
                    out.push((
                        kind,
                        Event {
                            at_s: g.t,
                            lost_s: lost,
                            detail: format!(
                                "{what} until the {} ACKed byte {ack} {} late; it left {} after that ACK",
                                side_name(r),
                                ms(delay),
                                ms((g.t - ta).max(0.0))
                            ),
                        },
                    ));
                }
            }
            last_data_t = g.t;
            flight.push((g.end(), g.t, g.len));
            continue;
        }
        let silent_since = std::mem::replace(&mut last_r_t, g.t);
        if g.len > 0 {
            // The receiver sent data after its late ACK (a window update, then
            // the next request): what the sender sends next may answer that
            // data, so it shows nothing about what the ACK released.
            cand = None;
        }
        let Some(a) = g.ack else { continue };
        if a <= high_ack {
            continue;
        }
        high_ack = a;
        let n = flight.partition_point(|&(e, _, _)| e <= a);
        if n == 0 {
            cand = None;
            continue;
        }
        let newest = flight[..n]
            .iter()
            .map(|x| x.1)
            .fold(f64::NEG_INFINITY, f64::max);
        let full = flight[..n].iter().filter(|x| x.2 >= smss).count();
        let idle = last_data_t <= newest && n == flight.len();
        flight.drain(..n);
        // Net of the path, and of any time the ACK spent queued behind the
        // receiver's own segments.
        let delay = (g.t - newest - dist[r]).min(g.t - silent_since);
        cand = (g.is_pure_ack()
            && idle
            && full <= 1
            && delay >= th.late_ack_s
            && delay <= th.late_ack_max_s)
            .then_some((g.t, delay, a));
    }
    out
}

/// `two_way`: the receiver sent data too (requests and responses); a one-way
/// transfer has no requests to double-buffer.
/// `hs`: the sender's holds, to tell which held tails waited behind an
/// earlier runt; `rules`: the send rules its segments allow.
fn stalls(
    s: Dir,
    two_way: bool,
    ev: &[(Kind, Event)],
    hs: &[Hold],
    rules: &SendRules,
    out: &mut Vec<Finding>,
) {
    let (snd, rcv) = (side_name(s), side_name(1 - s));
    for kind in [Kind::HeldTail, Kind::DelayedAckStall] {
        let events: Vec<Event> = ev
            .iter()
            .filter(|(k, _)| *k == kind)
            .map(|(_, e)| e.clone())
            .collect();
        if events.is_empty() {
            continue;
        }
        let lost = union_len(events.iter().map(|e| event_span(kind, e)));
        let typical = median(events.iter().map(|e| e.lost_s).collect());
        let mut recs = Vec::new();
        let summary;
        if kind == Kind::HeldTail {
            summary = format!(
                "{} time(s) the {snd} held a sub-MSS segment until the {rcv}'s delayed ACK (typically {} late) released it",
                events.len(),
                ms(typical)
            );
            let held: Vec<&Hold> = hs
                .iter()
                .filter(|h| events.iter().any(|e| (e.at_s - h.released_s).abs() < 1e-9))
                .collect();
            recs.extend(crate::hold_findings::send_rule_fixes(
                s,
                &held,
                events.len() - held.len(),
                rules,
            ));
            if s == 0 && two_way {
                recs.push(rec(s, "double-buffer requests: keep a second request in flight so the ACK is never owed alone"));
            }
            recs.push(
                rec(
                    1 - s,
                    "a shorter delayed-ACK time (or quick ACKs) shrinks each stall",
                )
                .remedy(Remedy::ImmediateAcks),
            );
        } else {
            summary = format!(
                "{} time(s) the {snd} had full segments waiting (congestion or peer window) for an ACK the {rcv} delayed (typically {})",
                events.len(),
                ms(typical)
            );
            recs.push(rec(1 - s, "a shorter delayed-ACK time, or ACK every segment while the sender's window is small (quick ACKs)").remedy(Remedy::ImmediateAcks));
            if !two_way {
                // A one-way transfer: nothing to restructure on the sender.
            } else if s == 0 {
                recs.push(rec(s, "double-buffer requests so data keeps flowing behind the segment whose ACK is delayed"));
            } else {
                recs.push(rec(
                    1 - s,
                    "double-buffer requests so the response's ACK rides on the next request",
                ));
            }
        }
        out.push(Finding {
            kind,
            sender: snd,
            count: events.len(),
            time_lost_s: lost,
            summary,
            events,
            recommendations: recs,
            overhead_ratio: None,
            overhead_ratio_with_acks: None,
        });
    }
}

fn rec(side: Dir, fix: &str) -> Recommendation {
    Recommendation {
        side: side_name(side),
        fix: fix.to_string(),
        remedy: None,
        replay: None,
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Zero-window periods and receive-window-limited waits of data sent by `s`.
fn windows(
    f: &Flow,
    s: Dir,
    dist: &[f64; 2],
    th: &Thresholds,
    stalled: &[(f64, f64)],
    recovering: &mut [(f64, f64, f64)],
    out: &mut Vec<Finding>,
) {
    let r = 1 - s;
    let react = dist[s] * 1.25 + th.release_slack_s;
    let mut edge_moved_t = f64::NEG_INFINITY;
    let smss = f.smss(s) as u64;
    let mut edge: Option<u64> = None;
    let mut zero_since: Option<(f64, u64)> = None;
    let mut zero = Vec::new();
    let mut limited = Vec::new();
    // When the window left dropped under a full segment, and its right edge then.
    let mut blocked_since: Option<(f64, u64)> = None;
    let mut high = 0u64;
    for g in &f.segs {
        if g.dir == r {
            let Some(a) = g.ack else { continue };
            if g.flags.syn() || g.flags.rst() {
                continue;
            }
            if g.win == 0 {
                zero_since.get_or_insert((g.t, a));
            } else if let Some((t0, a0)) = zero_since.take() {
                zero.push(Event {
                    at_s: t0,
                    lost_s: g.t - t0,
                    detail: format!(
                        "the {} advertised a zero window at byte {a0} for {}",
                        side_name(r),
                        ms(g.t - t0)
                    ),
                });
            }
            if edge != Some(a + g.win) {
                edge_moved_t = g.t;
            }
            edge = Some(a + g.win);
        } else if g.len > 0 && !g.retransmit {
            if let Some((t0, e0)) = blocked_since.take() {
                // Counted only when the sender went as soon as the window
                // opened, and not already counted as a stall; a segment that
                // fit the window already open (an answer smaller than the
                // window left) waited for its application, not for the window.
                let fit_before = g.end() <= e0;
                let in_stall = stalled.iter().any(|&(a, b)| a < g.t && t0 < b);
                // During loss recovery the window's left edge waits for the
                // repair: that wait is the recovery's, not a small window's.
                let episode = recovering.iter_mut().find(|(a, b, _)| t0 >= *a && t0 < *b);
                if let Some((_, _, blocked)) = episode {
                    *blocked += (g.t - t0).max(0.0);
                } else if g.t - t0 > 0.0 && g.t - edge_moved_t <= react && !in_stall && !fit_before
                {
                    limited.push(Event {
                        at_s: t0,
                        lost_s: g.t - t0,
                        detail: format!(
                            "the {} filled the {}'s window and waited {}",
                            side_name(s),
                            side_name(r),
                            ms(g.t - t0)
                        ),
                    });
                }
            }
            high = high.max(g.end());
            if let Some(e) = edge {
                // Less than a full segment of window left: the sender must wait.
                if e.saturating_sub(high) < smss {
                    blocked_since = Some((g.t, e));
                }
            }
        }
    }
    if let Some((t0, a0)) = zero_since {
        let t1 = f.span().1;
        zero.push(Event {
            at_s: t0,
            lost_s: t1 - t0,
            detail: format!(
                "the {} advertised a zero window at byte {a0} until the end of the capture",
                side_name(r)
            ),
        });
    }
    let (t0, t1) = f.span();
    if !zero.is_empty() {
        let lost = union_len(zero.iter().map(|e| event_span(Kind::ZeroWindow, e)));
        out.push(Finding {
            kind: Kind::ZeroWindow,
            sender: side_name(s),
            count: zero.len(),
            time_lost_s: lost,
            summary: format!(
                "the {} closed its window {} time(s), stopping the {} for {} in all",
                side_name(r),
                zero.len(),
                side_name(s),
                ms(lost)
            ),
            events: zero,
            recommendations: vec![rec(
                r,
                "the receiving application reads too slowly: read sooner or in larger chunks, or give the socket a larger receive buffer",
            )],
            overhead_ratio: None,
            overhead_ratio_with_acks: None,
        });
    }
    let lost = union_len(limited.iter().map(|e| event_span(Kind::WindowLimited, e)));
    if limited.len() >= 3 && lost >= 0.05 * (t1 - t0).max(1e-9) {
        out.push(Finding {
            kind: Kind::WindowLimited,
            sender: side_name(s),
            count: limited.len(),
            time_lost_s: lost,
            summary: format!(
                "the {} filled the {}'s receive window {} time(s) and waited {} in all ({:.0}% of the flow)",
                side_name(s),
                side_name(r),
                limited.len(),
                ms(lost),
                100.0 * lost / (t1 - t0).max(1e-9)
            ),
            events: limited,
            recommendations: vec![rec(
                r,
                "offer a larger receive window (bigger receive buffer, window scaling per RFC 7323 or RFC 1106's Big Window): it should cover the bandwidth-delay product",
            )],
            overhead_ratio: None,
            overhead_ratio_with_acks: None,
        });
    }
}

/// A loss-recovery episode of one sender, as the wire shows it.
struct Episode {
    /// By the retransmission timer (else fast retransmit, SACK or NAK).
    timeout: bool,
    /// The sender's highest sequence number when it began: the episode ends
    /// when the cumulative ACK reaches it (RFC 6582 3.2; RFC 6675 5).
    recover: u64,
    start_t: f64,
    /// When and how it ended.
    end: Option<(f64, &'static str)>,
    /// Retransmissions the episode made (its first included).
    resent: usize,
    event: Event,
}

/// Loss recovery of data sent by `s`: by retransmission timeout or fast.
///
/// Counted per episode, as a stack counts them: a fast retransmit (third
/// duplicate ACK, RFC 5681 3.2; SACK, RFC 6675 5; a NAK, RFC 1106 2.1)
/// begins an episode, and every later retransmission before the ACK covers
/// the episode's recovery point (NewReno partial ACKs, RFC 6582 3.2 step 5;
/// the go-back-N resends after a timeout) belongs to it. A timeout is a
/// resend of the oldest unacknowledged byte that no loss signal prompted: after
/// silence with no ACK progress, or of a byte the episode had already resent
/// (the resend itself was lost, RFC 6298 5.5 backoff).
///
/// Returns each fast-recovery episode's span (start, end) in event order, with
/// zero blocked time for [`windows`] to fill in.
fn recovery(f: &Flow, s: Dir, dist: &[f64; 2], out: &mut Vec<Finding>) -> Vec<(f64, f64, f64)> {
    let r = 1 - s;
    // A resend prompted by an ACK leaves as the ACK arrives: at most one
    // capture-to-sender round trip after the ACK passed the capture point,
    // plus queueing. A timer cannot fire that soon after the ACK progress
    // that restarted it (RFC 6298 5.3: an RTO is at least a round trip, and
    // stacks floor it at 200 ms or more).
    let prompt = dist[s] + 0.5 * (dist[0] + dist[1]).max(0.2);
    // RFC 1106 4.3: with NAKs in use, duplicate ACKs trigger nothing.
    let nak_in_use = f.sides[0].nak_permitted && f.sides[1].nak_permitted;
    let smss = f.smss(s) as u64;
    let mut last_sent: HashMap<u64, f64> = HashMap::new();
    let mut high_s = 0u64;
    let mut high_ack = 0u64;
    let mut last_win: Option<u64> = None;
    let mut last_progress_t = f64::NEG_INFINITY;
    let mut dupacks = 0u32;
    // When a loss signal arrived since the last ACK progress, and which.
    let mut signal: Option<(f64, &'static str)> = None;
    // The latest loss signal, kept across ACK progress: a capture near the
    // receiver sees a spurious resend (the original was only reordered or
    // queued) arrive after the ACK that covered it.
    let mut last_signal: Option<(f64, &'static str)> = None;
    let mut episodes: Vec<Episode> = Vec::new();
    // The episode under way, an index into `episodes`.
    let mut cur: Option<usize> = None;
    for g in &f.segs {
        if g.dir == r {
            let Some(a) = g.ack else { continue };
            if g.flags.syn() || g.flags.rst() {
                continue;
            }
            if a > high_ack {
                high_ack = a;
                last_progress_t = g.t;
                dupacks = 0;
                // RFC 6675 IsLost: DupThresh (3) segments SACKed above the new
                // cumulative ACK mark the byte at it lost.
                let sacked: u64 = g
                    .sacks
                    .iter()
                    .map(|&(l, r)| r.saturating_sub(l.max(a)))
                    .sum();
                signal = (!nak_in_use && sacked >= 3 * smss).then_some((g.t, "SACK"));
                if let Some(i) = cur.filter(|&i| a >= episodes[i].recover) {
                    episodes[i].end = Some((g.t, "recovered"));
                    cur = None;
                }
            } else if a == high_ack
                && g.is_pure_ack()
                && high_s > a
                && g.win > 0
                && last_win == Some(g.win)
            {
                // RFC 5681 2: same ACK, same window, no data, data outstanding.
                dupacks += 1;
                if !nak_in_use && signal.is_none() {
                    if !g.sacks.is_empty() {
                        signal = Some((g.t, "SACK"));
                    } else if dupacks >= 3 {
                        signal = Some((g.t, "duplicate ACKs"));
                    }
                }
            }
            if g.nak.is_some() {
                signal = Some((g.t, "a NAK"));
            }
            if signal.is_some() {
                last_signal = signal;
            }
            last_win = Some(g.win);
            continue;
        }
        if g.duplicate || g.reordered {
            continue;
        }
        // The FIN occupies one sequence number and is resent like data.
        let end = g.end() + u64::from(g.flags.fin());
        if end == g.seq || g.flags.syn() {
            continue;
        }
        let resend = g.seq < high_s;
        high_s = high_s.max(end);
        let before = last_sent.insert(g.seq, g.t);
        if !resend {
            continue;
        }
        if last_win == Some(0) {
            continue; // a zero-window probe (RFC 9293 3.8.6.1)
        }
        let head = g.seq <= high_ack;
        let since_progress = g.t - last_progress_t;
        if let Some(i) = cur {
            // Beyond the oldest unacknowledged byte: more of the episode's
            // repair (SACK holes, go-back-N). At the oldest: a partial ACK's
            // resend, unless the episode already resent that byte or the
            // resend came long after the last ACK progress (the timer).
            let again = before.is_some_and(|b| b >= episodes[i].start_t);
            if !head || (!again && since_progress <= prompt) {
                episodes[i].resent += 1;
                continue;
            }
            // Ended by the timer; `cur` is set again below.
            episodes[i].end = Some((g.t, "the timer fired"));
        }
        let covered = end <= high_ack;
        let prompted = signal
            .or(if covered { last_signal } else { None })
            .filter(|&(ts, _)| g.t - ts <= prompt);
        if prompted.is_none() && since_progress <= prompt {
            // Prompted by ACK progress with no loss signal: a partial ACK of
            // the episode just ended, whose recovery point lay beyond what a
            // capture far from the sender had seen (lost or in flight).
            if let Some(i) = episodes.len().checked_sub(1) {
                let ep = &mut episodes[i];
                ep.end = None;
                ep.recover = ep.recover.max(high_s);
                ep.resent += 1;
                cur = Some(i);
                continue;
            }
        }
        let since = before.unwrap_or(f64::NEG_INFINITY).max(last_progress_t);
        let waited = if since.is_finite() { g.t - since } else { 0.0 };
        let event = match prompted {
            Some((_, how)) => Event {
                at_s: g.t,
                lost_s: 0.0,
                detail: if how == "a NAK" {
                    format!(
                        "byte {} resent on the receiver's NAK (RFC 1106), {} after it last left",
                        g.seq,
                        ms(before.map(|b| g.t - b).unwrap_or(0.0))
                    )
                } else {
                    format!(
                        "byte {} resent after {dupacks} duplicate ACK(s), {} after it last left (triggered by {how})",
                        g.seq,
                        ms(before.map(|b| g.t - b).unwrap_or(0.0))
                    )
                },
            },
            None => Event {
                at_s: g.t,
                lost_s: waited,
                detail: format!(
                    "byte {} resent by the retransmission timer after {} with no ACK progress ({dupacks} duplicate ACK(s))",
                    g.seq,
                    ms(waited)
                ),
            },
        };
        episodes.push(Episode {
            timeout: prompted.is_none(),
            recover: high_s,
            start_t: g.t,
            end: None,
            resent: 1,
            event,
        });
        cur = Some(episodes.len() - 1);
        // A loss signal begins one episode.
        signal = None;
        last_signal = None;
    }
    let t_end = f.span().1;
    let mut spans = Vec::new();
    let (mut timeouts, mut fast) = (Vec::new(), Vec::new());
    for ep in episodes {
        let mut e = ep.event;
        let (t, how) = ep
            .end
            .unwrap_or((t_end, "still under way at the end of the capture"));
        e.detail += &format!(
            "; {how} at {t:.6} s, {} later, after {} resend(s)",
            ms(t - ep.start_t),
            ep.resent
        );
        if ep.timeout {
            timeouts.push(e);
        } else {
            spans.push((ep.start_t, t, 0.0));
            fast.push(e);
        }
    }
    let snd = side_name(s);
    // A one-way transfer has no messages or requests to restructure.
    let two_way = f.sides[r].bytes > 0;
    if !timeouts.is_empty() {
        let lost = union_len(timeouts.iter().map(|e| (e.at_s - e.lost_s, e.at_s)));
        let mut recs = Vec::new();
        if two_way {
            recs.push(rec(
                s,
                "keep data flowing behind each message (double-buffer) so a loss is repaired by fast retransmit, not the timer",
            ));
        }
        if f.sides[0].sack_permitted && f.sides[1].sack_permitted {
            recs.push(rec(s, "check the RTO: SACK is on, yet recovery waited for the timer (tail loss: consider tail-loss probes)"));
        } else {
            recs.push(rec(s, "enable SACK (RFC 2018) on both sides so several losses in one window, or a lost resend, do not need the timer"));
        }
        out.push(Finding {
            kind: Kind::TimeoutRecovery,
            sender: snd,
            count: timeouts.len(),
            time_lost_s: lost,
            summary: format!(
                "{} retransmission timeout(s) of {snd} data, {} waiting for the timer in all",
                timeouts.len(),
                ms(lost)
            ),
            events: timeouts,
            recommendations: recs,
            overhead_ratio: None,
            overhead_ratio_with_acks: None,
        });
    }
    if !fast.is_empty() {
        let mut recs = Vec::new();
        let sack = f.sides[0].sack_permitted && f.sides[1].sack_permitted;
        if !sack && !nak_in_use && f.sides[s].retransmits > fast.len() as u64 {
            recs.push(rec(s, "enable SACK (RFC 2018) on both sides: without it NewReno repairs one lost segment per round trip"));
        }
        if recs.is_empty() {
            recs.push(rec(s, "none needed for recovery itself"));
        }
        recs.push(rec(s, "if the losses come from a noisy link rather than congestion, treat loss as noise (RFC 1106 4.2) so each repair does not shrink the window"));
        out.push(Finding {
            kind: Kind::FastRecovery,
            sender: snd,
            count: fast.len(),
            time_lost_s: 0.0,
            summary: format!(
                "{} loss recovery episode(s) of {snd} data begun by fast retransmit, SACK or NAK (no timer wait)",
                fast.len()
            ),
            events: fast,
            recommendations: recs,
            overhead_ratio: None,
            overhead_ratio_with_acks: None,
        });
    }
    spans
}

/// Charges each fast-recovery episode the time the sender sat with the peer's
/// window full while the repair held the window's left edge (NewReno repairs
/// one hole per round trip, RFC 6582 3.2).
fn charge_recovery(s: Dir, recovering: &[(f64, f64, f64)], out: &mut [Finding]) {
    let mine = |x: &&mut Finding| x.kind == Kind::FastRecovery && x.sender == side_name(s);
    let Some(fast) = out.iter_mut().find(mine) else {
        return;
    };
    for (e, &(_, _, blocked)) in fast.events.iter_mut().zip(recovering) {
        if blocked > 0.0 {
            e.lost_s = blocked;
            e.detail += &format!(
                "; the peer's window was full for {} of it, its left edge waiting for the repair",
                ms(blocked)
            );
        }
    }
    fast.time_lost_s = fast.events.iter().map(|e| e.lost_s).sum();
    if fast.time_lost_s > 0.0 {
        fast.summary += &format!(
            "; the window stayed full for {} while the repairs held its left edge",
            ms(fast.time_lost_s)
        );
    }
}

/// Bytes one frame occupies on an Ethernet wire (Davids): preamble 8, header
/// 14, FCS 4, inter-frame gap 12, padded to the 64-byte minimum frame.
pub fn ethernet_wire_bytes(ip_len: usize) -> usize {
    (14 + ip_len + 4).max(64) + 8 + 12
}

/// Runs of many small segments sent by `s` in quick succession, with no data
/// from the peer between them (Davids' 50 writes of 10 bytes).
fn storms(f: &Flow, s: Dir, th: &Thresholds, out: &mut Vec<Finding>) {
    let small_max = (f.smss(s) / 8).max(32);
    // Data segments of s, each with whether the peer sent data since the
    // previous one: an exchange (request, response) ends a run.
    let mut segs: Vec<&Seg> = Vec::new();
    let mut exchange: Vec<bool> = Vec::new();
    let mut peer_spoke = false;
    for g in &f.segs {
        if g.len == 0 {
            continue;
        }
        if g.dir == s {
            segs.push(g);
            exchange.push(peer_spoke);
            peer_spoke = false;
        } else {
            peer_spoke = true;
        }
    }
    let mut events = Vec::new();
    let (mut over, mut over_acks, mut payload) = (0usize, 0usize, 0usize);
    let mut i = 0;
    while i < segs.len() {
        let mut j = i;
        while j < segs.len()
            && segs[j].len <= small_max
            && (j == i || (segs[j].t - segs[j - 1].t <= th.storm_max_gap_s && !exchange[j]))
        {
            j += 1;
        }
        if j - i >= th.storm_min_segments {
            let run = &segs[i..j];
            let (t0, t1) = (run[0].t, run[run.len() - 1].t);
            let bytes: usize = run.iter().map(|g| g.len).sum();
            let o: usize = run
                .iter()
                .map(|g| ethernet_wire_bytes(g.header_bytes + g.len) - g.len)
                .sum();
            let acks: usize = f
                .segs
                .iter()
                .filter(|g| g.dir != s && g.is_pure_ack() && g.t >= t0 && g.t <= t1 + 0.5)
                .map(|g| ethernet_wire_bytes(g.header_bytes))
                .sum();
            over += o;
            over_acks += o + acks;
            payload += bytes;
            events.push(Event {
                at_s: t0,
                lost_s: 0.0,
                detail: format!(
                    "{} segments carrying {bytes} B over {} (overhead {:.0}% of the data, {:.0}% with the ACKs)",
                    run.len(),
                    ms(t1 - t0),
                    100.0 * o as f64 / bytes as f64,
                    100.0 * (o + acks) as f64 / bytes as f64
                ),
            });
            i = j;
        } else {
            i = j.max(i + 1);
        }
    }
    if events.is_empty() {
        return;
    }
    let n: usize = events.len();
    let ratio = over as f64 / payload.max(1) as f64;
    let ratio_acks = over_acks as f64 / payload.max(1) as f64;
    out.push(Finding {
        kind: Kind::TinygramStorm,
        sender: side_name(s),
        count: n,
        time_lost_s: 0.0,
        summary: format!(
            "{n} burst(s) of small segments (at most {small_max} B each) from the {}: framing and headers are {:.0}% of the data ({:.0}% counting the {}'s ACKs, Davids' ratio)",
            side_name(s),
            100.0 * ratio,
            100.0 * ratio_acks,
            side_name(1 - s)
        ),
        events,
        recommendations: vec![
            rec(s, "coalesce small writes in the application (buffer, or writev/sendmsg)"),
            rec(s, "if TCP_NODELAY is set on this side, clear it, or use a Nagle limit for tiny segments only (naglim, Solaris tcp_naglim_def)"),
        ],
        overhead_ratio: Some(ratio),
        overhead_ratio_with_acks: Some(ratio_acks),
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flow::fixture::seg;

    /// Two quick request/response exchanges (30 B requests, 100 B
    /// responses), then the client's pure ACK of the second response 20 ms
    /// late, then `rest`.
    fn flow(rest: Vec<Seg>) -> Flow {
        let mut segs = vec![
            seg(0.0, 0, 1, 30, 1),
            seg(0.1, 1, 1, 100, 31),
            seg(0.2, 0, 31, 30, 101),
            seg(0.3, 1, 101, 100, 61),
            seg(20.3, 0, 61, 0, 201),
        ];
        segs.extend(rest);
        crate::flow::fixture::flow(1460, segs)
    }

    fn held_tails(f: &Flow) -> Vec<f64> {
        stall_events(f, 1, &distances(f), &Thresholds::default())
            .into_iter()
            .filter(|(k, _)| *k == Kind::HeldTail)
            .map(|(_, e)| e.at_s)
            .collect()
    }

    #[test]
    fn data_leaving_right_after_a_late_ack_is_a_held_tail() {
        let f = flow(vec![seg(20.4, 1, 201, 100, 61)]);
        assert_eq!(held_tails(&f), vec![seg(20.4, 1, 0, 0, 0).t]);
    }

    #[test]
    fn a_response_to_a_request_after_a_late_ack_is_not_a_held_tail() {
        // The client's application was slow to read: its window update came
        // late, then its next request, and the server answered that.
        let f = flow(vec![seg(20.4, 0, 61, 30, 201), seg(20.5, 1, 201, 100, 91)]);
        assert_eq!(held_tails(&f), Vec::<f64>::new());
    }
}
