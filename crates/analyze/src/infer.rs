//! What a capture says about the path and each side's TCP, for `tinygram
//! whatif`: every value with the evidence it came from and a confidence, and
//! the scenario keys (`link.delay`, `server.delack`, ...) it maps to. A value
//! the capture cannot give is an open [`Span`] (whatif sweeps it) or a
//! Low-confidence default that says so.

mod acks;
mod initial_window;
mod path;
mod profile;
mod stats;
mod window;

pub use crate::sendrule::{send_rule, SendRule, SendRules, Witness};
pub use acks::{ack_behaviour, AckBehaviour, AckSamples};
pub use initial_window::initial_window;
pub use path::{path, vantage, LossEstimate, NegotiatedOptions, PathInference, Vantage};
pub use profile::{nearest, KeyDiff, NearestProfile, Observed, ProfileScore};
pub use stats::{quantile, upper_mode, Cluster};
pub use window::{rcv_window, RcvWindow};

use crate::diagnose::distances;
use crate::evidence::{Confidence, Inferred, Span};
use crate::flow::{Dir, Flow};
use serde::Serialize;

/// One side's TCP as the capture shows it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SideInference {
    /// "client" or "server": the scenario table the keys go in.
    pub side: &'static str,
    /// `mss`: the MSS this side announced in its SYN.
    pub mss: Inferred<Option<u16>>,
    /// `options`: what its SYN offered (scenario names).
    pub options: Inferred<Vec<String>>,
    /// `ack_policy`, `delack`, `delack_segments`: as the receiver of the peer's data.
    pub ack: AckBehaviour,
    /// `send_policy`: the rules consistent with what it sent.
    pub send_rule: Inferred<SendRules>,
    /// `initial_window`, in segments.
    pub initial_window: Inferred<Span<u32>>,
    /// `rcv_buf`: its advertised window.
    pub rcv_window: Inferred<RcvWindow>,
    /// `profile`, and the keys that differ from it.
    pub profile: Inferred<NearestProfile>,
}

/// Everything inferred about one flow.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FlowInference {
    pub client: String,
    pub server: String,
    pub handshake_seen: bool,
    pub path: PathInference,
    /// `[client, server]`.
    pub sides: [SideInference; 2],
}

/// One scenario key whatif can write, with what backs it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ScenarioKey {
    /// Full key: `link.delay`, `server.delack`, ...
    pub key: String,
    /// The value as TOML text: `"40ms"` quoted, numbers bare, lists `["sack"]`.
    pub value: String,
    pub confidence: Confidence,
    /// Other values (TOML text) the capture leaves possible: sweep them.
    pub sweep: Vec<String>,
    pub evidence: String,
}

fn side_name(d: Dir) -> &'static str {
    if d == 0 {
        "client"
    } else {
        "server"
    }
}

/// Infers the path and both sides' TCP from one flow. Never panics: a flow
/// with no handshake, one segment or only ACKs gets Low-confidence values
/// that say what was missing.
pub fn infer(f: &Flow) -> FlowInference {
    let dist = distances(f);
    let path = path::path(f, &dist);
    let sides = [0, 1].map(|d| side(f, d, &dist, &path));
    let addr = |d: Dir| f.sides[d].addr.map_or("?".into(), |a| a.to_string());
    FlowInference {
        client: addr(0),
        server: addr(1),
        handshake_seen: f.saw_syn,
        path,
        sides,
    }
}

fn side(f: &Flow, d: Dir, dist: &[f64; 2], path: &PathInference) -> SideInference {
    let who = side_name(d);
    let me = &f.sides[d];
    let syn_seen = f.segs.iter().any(|g| g.dir == d && g.flags.syn());
    let mss = match me.mss_option {
        Some(m) => Inferred::new(
            Some(m),
            Confidence::High,
            format!("the {who}'s SYN announced MSS {m}"),
        ),
        None if syn_seen => Inferred::new(
            None,
            Confidence::Medium,
            format!("the {who}'s SYN carried no MSS option (RFC 9293 3.7.1: 536 is assumed)"),
        ),
        None => {
            let peer = f.sides[1 - d].max_payload;
            Inferred::new(
                (peer > 0).then(|| peer.min(65_535) as u16),
                Confidence::Low,
                format!("no SYN from the {who}: the largest segment it received, {peer} B, is a lower bound"),
            )
        }
    };
    let options = if syn_seen {
        let v: Vec<String> = [
            (me.window_scale.is_some(), "wscale"),
            (me.timestamps, "timestamps"),
            (me.sack_permitted, "sack"),
            (me.big_window, "bigwin"),
            (me.nak_permitted, "nak"),
        ]
        .into_iter()
        .filter(|x| x.0)
        .map(|x| x.1.to_string())
        .collect();
        Inferred::new(
            v,
            Confidence::High,
            format!("the options the {who}'s SYN offered"),
        )
    } else {
        let o = &path.options.value;
        let v: Vec<String> = [(o.timestamps, "timestamps"), (o.sack, "sack")]
            .into_iter()
            .filter(|x| x.0)
            .map(|x| x.1.to_string())
            .collect();
        Inferred::new(
            v,
            Confidence::Low,
            format!("no SYN from the {who}: {}", path.options.evidence),
        )
    };
    let ack = ack_behaviour(f, d, dist);
    let send_rule = send_rule(f, d);
    let initial_window = initial_window(f, d, dist);
    let rcv_window = rcv_window(f, d);
    let profile = nearest(&Observed {
        mss: &mss,
        options: &options,
        send: &send_rule,
        acks: &ack,
        initial_window: &initial_window,
        rcv_window: &rcv_window,
    });
    SideInference {
        side: who,
        mss,
        options,
        ack,
        send_rule,
        initial_window,
        rcv_window,
        profile,
    }
}

/// A duration as a scenario value: whole microseconds.
fn dur(s: f64) -> String {
    let us = (s * 1e6).round().max(0.0) as u64;
    if us > 0 && us.is_multiple_of(1000) {
        format!("\"{}ms\"", us / 1000)
    } else {
        format!("\"{us}us\"")
    }
}

/// A timer as a scenario value: whole milliseconds, as stacks set them
/// (jiffies, `delacktime` in ms), once it is at least one.
fn timer(s: f64) -> String {
    if s >= 0.001 {
        format!("\"{}ms\"", (s * 1e3).round() as u64)
    } else {
        dur(s)
    }
}

/// A drop probability as `link.loss` takes it: four decimals, below 1 (a
/// link that loses every frame delivers nothing, and the scenario refuses it).
fn loss(p: f64) -> String {
    format!("{:.4}", p.clamp(0.0, 0.9999))
}

fn toml_list(v: &[String]) -> String {
    let q: Vec<String> = v.iter().map(|x| format!("\"{x}\"")).collect();
    format!("[{}]", q.join(", "))
}

impl FlowInference {
    /// The scenario keys this inference sets, link first, then each side's.
    pub fn scenario_keys(&self) -> Vec<ScenarioKey> {
        let mut out = Vec::new();
        let mut put = |key: String, value: String, c: Confidence, sweep: Vec<String>, ev: &str| {
            out.push(ScenarioKey {
                key,
                value,
                confidence: c,
                sweep,
                evidence: ev.to_string(),
            })
        };
        let p = &self.path;
        let d = &p.one_way_delay_s;
        if d.value > 0.0 {
            put(
                "link.delay".into(),
                dur(d.value),
                d.confidence,
                vec![],
                &d.evidence,
            );
        }
        let r = &p.bottleneck_bps;
        match r.value {
            Some(bps) => put(
                "link.rate".into(),
                format!("\"{:.0}bps\"", bps),
                r.confidence,
                vec![],
                &r.evidence,
            ),
            None => put(
                "link.rate".into(),
                "\"100Mbps\"".into(),
                Confidence::Low,
                vec!["\"10Mbps\"".into(), "\"1Gbps\"".into()],
                &r.evidence,
            ),
        }
        let l = &p.loss;
        let sweep = if l.value.range.is_open() && l.confidence == Confidence::Low {
            vec![loss(l.value.range.lo), loss(l.value.range.hi)]
        } else {
            vec![]
        };
        put(
            "link.loss".into(),
            loss(l.value.rate),
            l.confidence,
            sweep,
            &l.evidence,
        );
        if p.reordering.value > 0.0 {
            put(
                "link.reorder".into(),
                format!("{:.4}", p.reordering.value),
                p.reordering.confidence,
                vec![],
                &p.reordering.evidence,
            );
        }
        for s in &self.sides {
            let k = |x: &str| format!("{}.{x}", s.side);
            let pr = &s.profile;
            put(
                k("profile"),
                format!("\"{}\"", pr.value.name),
                pr.confidence,
                vec![],
                &pr.evidence,
            );
            if let Some(m) = s.mss.value {
                put(
                    k("mss"),
                    m.to_string(),
                    s.mss.confidence,
                    vec![],
                    &s.mss.evidence,
                );
            }
            put(
                k("options"),
                toml_list(&s.options.value),
                s.options.confidence,
                vec![],
                &s.options.evidence,
            );
            let sr = &s.send_rule;
            let others: Vec<String> = sr
                .value
                .possible
                .iter()
                .filter(|&&x| x != sr.value.likely)
                .map(|x| format!("\"{}\"", x.scenario_name()))
                .collect();
            put(
                k("send_policy"),
                format!("\"{}\"", sr.value.likely.scenario_name()),
                sr.confidence,
                others,
                &sr.evidence,
            );
            let a = &s.ack;
            put(
                k("ack_policy"),
                format!("\"{}\"", a.ack_policy.value),
                a.ack_policy.confidence,
                vec![],
                &a.ack_policy.evidence,
            );
            let dl = &a.delack_s;
            let sweep = if dl.value.is_open() {
                vec![timer(dl.value.lo), timer(dl.value.hi)]
            } else {
                vec![]
            };
            // The quickack policy's timer is its least ACK timeout (`ato_min`),
            // not `delack`; with no lone segment to show it, Linux's 40 ms stands.
            let quickack = a.ack_policy.value == "quickack";
            if !(quickack && dl.value.is_open()) {
                put(
                    k(if quickack { "ato_min" } else { "delack" }),
                    timer(if dl.value.is_open() {
                        dl.value.hi
                    } else {
                        dl.value.lo
                    }),
                    dl.confidence,
                    sweep,
                    &dl.evidence,
                );
            }
            if let Some(n) = a.ack_every.value {
                put(
                    k("delack_segments"),
                    n.to_string(),
                    a.ack_every.confidence,
                    vec![],
                    &a.ack_every.evidence,
                );
            }
            let iw = &s.initial_window;
            let sweep = if iw.value.is_open() {
                vec![iw.value.lo.to_string()]
            } else {
                vec![]
            };
            put(
                k("initial_window"),
                iw.value.hi.to_string(),
                iw.confidence,
                sweep,
                &iw.evidence,
            );
            let w = &s.rcv_window;
            if w.value.max > 0 {
                put(
                    k("rcv_buf"),
                    w.value.max.to_string(),
                    w.confidence,
                    vec![],
                    &w.evidence,
                );
            }
        }
        out
    }

    /// The keys as (key, TOML value) pairs, for a scenario writer.
    pub fn scenario_pairs(&self) -> Vec<(String, String)> {
        self.scenario_keys()
            .into_iter()
            .map(|k| (k.key, k.value))
            .collect()
    }
}
