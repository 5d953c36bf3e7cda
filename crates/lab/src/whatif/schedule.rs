//! The application of a captured flow as an `exchanges` workload: each
//! turn's writes, the server's think and the client's pause where the capture
//! shows them, and one open range per kind of time the capture hides.

use super::OpenKey;
use tinygram_analyze::exchange::{Exchange, Exchanges, Shape};
use tinygram_analyze::{Confidence, Flow};

/// One turn as the scenario gives it.
#[derive(Clone, Debug, PartialEq)]
pub struct Turn {
    pub request: Vec<u64>,
    pub response: Vec<u64>,
    /// Seconds; `None`: hidden, taken from the workload's open `think`.
    pub think_s: Option<f64>,
    pub pause_s: Option<f64>,
    /// Where it is in the capture, for the scenario's comments.
    pub at_s: f64,
    /// Completion as the client saw it in the capture, seconds.
    pub captured_s: Option<f64>,
}

/// The flow's conversation, ready to write.
#[derive(Clone, Debug)]
pub struct Schedule {
    pub turns: Vec<Turn>,
    /// The index in the analyzer's exchanges of each turn.
    pub source: Vec<usize>,
    /// Ranges for the hidden times: `workload.think` and `workload.pause`.
    pub open: Vec<OpenKey>,
    pub notes: Vec<String>,
}

/// Times under a microsecond are the capture's noise.
const TICK: f64 = 1e-6;

/// A span is shown when its ends are within a tick (or one rounds to the other).
fn known(lo: f64, hi: f64) -> bool {
    (hi - lo).abs() < 2.0 * TICK
}

/// Reads the workload off the analyzer's exchanges; an error says why the
/// flow is not a conversation `whatif` can replay.
pub fn schedule(f: &Flow, ex: &Exchanges) -> Result<Schedule, String> {
    match ex.shape {
        Shape::RequestResponse | Shape::ServerFirst => {}
        other => {
            return Err(format!(
                "not a request/response conversation ({}: {})",
                serde_json::to_value(other)
                    .ok()
                    .and_then(|v| v.as_str().map(String::from))
                    .unwrap_or_default(),
                ex.note
            ))
        }
    }
    let mut notes = Vec::new();
    let mut turns = Vec::new();
    let mut source = Vec::new();
    let (mut think_open, mut pause_open) = (Vec::new(), Vec::new());
    let handshake_end = f
        .segs
        .iter()
        .find(|s| s.dir == 0 && !s.flags.syn() && s.flags.ack())
        .map(|s| s.t);
    for (i, e) in ex.exchanges.iter().enumerate() {
        if e.request_bytes == 0 {
            notes.push(format!(
                "the server's greeting at {:.6} s ({} bytes) is not replayed: the workload starts with the client's first request",
                e.start_s, e.response_bytes
            ));
            continue;
        }
        if e.response_bytes == 0 {
            notes.push(format!(
                "the request at {:.6} s ({} bytes) has no answer in the capture and is left out",
                e.start_s, e.request_bytes
            ));
            continue;
        }
        let writes = |w: &tinygram_analyze::Inferred<Vec<tinygram_analyze::exchange::Write>>,
                      total: u64| {
            let v: Vec<u64> = w.value.iter().map(|x| x.bytes).filter(|&b| b > 0).collect();
            if v.iter().sum::<u64>() == total && !v.is_empty() {
                v
            } else {
                vec![total]
            }
        };
        let think = time_of(e.server_think_s.as_ref(), &mut think_open);
        let pause = if turns.is_empty() {
            // The first request's pause counts from the handshake.
            handshake_end.map(|t0| (e.start_s - t0).max(0.0))
        } else {
            time_of(previous_pause(&ex.exchanges, i).as_ref(), &mut pause_open)
        };
        turns.push(Turn {
            request: writes(&e.request_writes, e.request_bytes),
            response: writes(&e.response_writes, e.response_bytes),
            think_s: think,
            pause_s: pause,
            at_s: e.start_s,
            captured_s: e.completion_at_client_s,
        });
        source.push(i);
    }
    if turns.is_empty() {
        return Err("no answered request in the capture".into());
    }
    let mut open = Vec::new();
    if let Some(k) = range_key("workload.think", &think_open, "the server's think time") {
        open.push(k);
    }
    if let Some(k) = range_key(
        "workload.pause",
        &pause_open,
        "the client's pause before a request",
    ) {
        open.push(k);
    }
    Ok(Schedule {
        turns,
        source,
        open,
        notes,
    })
}

/// The client's pause before exchange `i`: the previous exchange's `client_think_s`.
fn previous_pause(
    all: &[Exchange],
    i: usize,
) -> Option<tinygram_analyze::Inferred<tinygram_analyze::Span<f64>>> {
    all.get(i.checked_sub(1)?)?.client_think_s.clone()
}

/// A time the capture shows, or `None` with its span kept for the open range.
fn time_of(
    t: Option<&tinygram_analyze::Inferred<tinygram_analyze::Span<f64>>>,
    hidden: &mut Vec<(f64, f64, String)>,
) -> Option<f64> {
    let t = t?;
    let (lo, hi) = (t.value.lo.max(0.0), t.value.hi.max(0.0));
    if known(lo, hi) && t.confidence > Confidence::Low {
        Some(lo)
    } else {
        hidden.push((lo, hi, t.evidence.clone()));
        None
    }
}

/// One open key spanning every hidden time of a kind (a shared range: the
/// hidden times of one application are drawn together).
fn range_key(key: &str, hidden: &[(f64, f64, String)], what: &str) -> Option<OpenKey> {
    if hidden.is_empty() {
        return None;
    }
    let lo = hidden.iter().map(|h| h.0).fold(f64::INFINITY, f64::min);
    let hi = hidden.iter().map(|h| h.1).fold(0.0, f64::max);
    let hi = if hi - lo < 1e-4 { lo + 1e-4 } else { hi };
    Some(OpenKey {
        key: key.to_string(),
        spec: format!(
            "{{ from = \"{}\", to = \"{}\" }}",
            super::write::dur(lo),
            super::write::dur(hi)
        ),
        why: format!(
            "{} is hidden in {} turn(s) (e.g. {}): drawn from the range they allow",
            what,
            hidden.len(),
            hidden[0].2
        ),
    })
}
