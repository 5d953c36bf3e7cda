//! The stack profile (`tinygram profiles`) nearest to what a side did, and
//! the keys in which it differs.

use super::acks::AckBehaviour;
use super::window::RcvWindow;
use crate::evidence::{Confidence, Inferred, Span};
use crate::sendrule::{SendRule, SendRules};
use serde::Serialize;
use tinygram_proto::policy::{AckPolicyKind, SendPolicyKind};
use tinygram_proto::profile::{Profile, PROFILES};
use tinygram_proto::OptionSet;

/// A scenario host key whose inferred value differs from the profile's.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KeyDiff {
    /// The host key (`delack`, `send_policy`, ...), without the side.
    pub key: String,
    /// The profile's value, in scenario syntax without quotes.
    pub profile: String,
    pub inferred: String,
    pub confidence: Confidence,
}

/// How far one profile is from what the side did.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ProfileScore {
    pub name: String,
    /// Weighted count of behaviour keys that disagree (High 2, Medium 1).
    pub distance: u32,
}

/// The nearest profile and what differs from it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NearestProfile {
    pub name: String,
    /// Keys whose inferred value (Medium or High confidence) differs from
    /// the profile's: set these after `profile = name`.
    pub differs: Vec<KeyDiff>,
    /// Every profile, nearest first.
    pub ranking: Vec<ProfileScore>,
}

/// What one side did, as the comparison reads it.
pub struct Observed<'a> {
    pub mss: &'a Inferred<Option<u16>>,
    pub options: &'a Inferred<Vec<String>>,
    pub send: &'a Inferred<SendRules>,
    pub acks: &'a AckBehaviour,
    pub initial_window: &'a Inferred<Span<u32>>,
    pub rcv_window: &'a Inferred<RcvWindow>,
}

fn weight(c: Confidence) -> u32 {
    match c {
        Confidence::Low => 0,
        Confidence::Medium => 1,
        Confidence::High => 2,
    }
}

/// The option names a profile offers, in scenario order.
pub fn option_names(o: &OptionSet) -> Vec<String> {
    [
        (o.window_scale, "wscale"),
        (o.timestamps, "timestamps"),
        (o.sack, "sack"),
        (o.big_window, "bigwin"),
        (o.nak, "nak"),
        (o.ecn, "ecn"),
    ]
    .into_iter()
    .filter(|x| x.0)
    .map(|x| x.1.to_string())
    .collect()
}

/// The send rule a profile's policy behaves as, for runts: `None` for the
/// variants (liberal Nagle, Nagle for half segments, naglim, Doupnik, cork)
/// that hold some runts and send others, which the three rules cannot place.
fn rule_of(p: SendPolicyKind) -> Option<SendRule> {
    match p {
        SendPolicyKind::Nagle => Some(SendRule::Nagle),
        SendPolicyKind::Minshall => Some(SendRule::Minshall),
        SendPolicyKind::NoDelay => Some(SendRule::NoHold),
        _ => None,
    }
}

/// One profile's disagreements with what was observed: (distance, diffs).
fn compare(p: &Profile, o: &Observed) -> (u32, Vec<KeyDiff>) {
    let c = p.config();
    let mut dist = 0;
    let mut diffs = Vec::new();
    let mut differ = |key: &str, prof: String, inf: String, conf: Confidence, counts: bool| {
        if conf == Confidence::Low {
            return;
        }
        if counts {
            dist += weight(conf);
        }
        diffs.push(KeyDiff {
            key: key.into(),
            profile: prof,
            inferred: inf,
            confidence: conf,
        });
    };
    // Send rule: the profile's must still be possible.
    let set = &o.send.value;
    let fits = match rule_of(c.send_policy) {
        Some(r) => set.consistent(r),
        None => set.possible != [SendRule::NoHold],
    };
    if !fits {
        differ(
            "send_policy",
            c.send_policy.to_string(),
            set.likely.scenario_name().into(),
            o.send.confidence,
            true,
        );
    }
    let ack = &o.acks.ack_policy;
    if ack.value != c.ack_policy.to_string() {
        differ(
            "ack_policy",
            c.ack_policy.to_string(),
            ack.value.clone(),
            ack.confidence,
            true,
        );
    }
    // The delayed-ACK time a lone segment waits under the profile.
    let expected = match c.ack_policy {
        AckPolicyKind::Immediate => None,
        AckPolicyKind::QuickAck => Some(c.ato_min.as_secs_f64()),
        _ => Some(c.delack.as_secs_f64()),
    };
    let d = &o.acks.delack_s;
    if let Some(e) = expected.filter(|_| !d.value.is_open()) {
        if (d.value.lo - e).abs() > 0.25 * e + 0.005 {
            let key = if c.ack_policy == AckPolicyKind::QuickAck {
                "ato_min"
            } else {
                "delack"
            };
            differ(
                key,
                format!("{}ms", (e * 1e3).round()),
                format!("{}ms", (d.value.lo * 1e3).round()),
                d.confidence,
                true,
            );
        }
    }
    let every = match c.ack_policy {
        AckPolicyKind::Immediate => 1,
        AckPolicyKind::QuickAck => 2,
        _ => c.delack_segments.min(4),
    };
    if let Some(n) = o.acks.ack_every.value {
        if n.min(4) != every {
            differ(
                "delack_segments",
                c.delack_segments.to_string(),
                n.to_string(),
                o.acks.ack_every.confidence,
                true,
            );
        }
    }
    let prof_opts = option_names(&c.options);
    let mut mine = o.options.value.clone();
    mine.sort();
    let mut theirs = prof_opts.clone();
    theirs.sort();
    if mine != theirs {
        differ(
            "options",
            prof_opts.join(","),
            o.options.value.join(","),
            o.options.confidence,
            true,
        );
    }
    let iw = &o.initial_window;
    if !iw.value.is_open() && iw.value.lo != c.initial_window {
        differ(
            "initial_window",
            c.initial_window.to_string(),
            iw.value.lo.to_string(),
            iw.confidence,
            true,
        );
    }
    let w = &o.rcv_window;
    let buf = c.rcv_buf as f64;
    if (w.value.max as f64 - buf).abs() > 0.1 * buf {
        differ(
            "rcv_buf",
            c.rcv_buf.to_string(),
            w.value.max.to_string(),
            w.confidence,
            !w.value.grew,
        );
    }
    if let Some(m) = o.mss.value.filter(|&m| m != c.mss) {
        // The path's MTU sets it, not the stack: listed, not counted.
        differ(
            "mss",
            c.mss.to_string(),
            m.to_string(),
            o.mss.confidence,
            false,
        );
    }
    (dist, diffs)
}

/// The profile nearest to what the side did: fewest weighted disagreements,
/// the earlier profile in `tinygram profiles` on a tie.
pub fn nearest(o: &Observed) -> Inferred<NearestProfile> {
    let mut scored: Vec<(u32, usize, Vec<KeyDiff>)> = PROFILES
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let (d, k) = compare(p, o);
            (d, i, k)
        })
        .collect();
    scored.sort_by_key(|x| (x.0, x.1));
    let ranking = scored
        .iter()
        .map(|x| ProfileScore {
            name: PROFILES[x.1].name.into(),
            distance: x.0,
        })
        .collect::<Vec<_>>();
    let (best, i, diffs) = scored.swap_remove(0);
    let runner = ranking.get(1).map_or(u32::MAX, |r| r.distance);
    let tied: Vec<&str> = ranking
        .iter()
        .filter(|r| r.distance == best)
        .map(|r| r.name.as_str())
        .collect();
    let conf = if runner >= best + 2 && best <= 2 {
        Confidence::High
    } else if runner > best {
        Confidence::Medium
    } else {
        Confidence::Low
    };
    let ev = format!(
        "{} key(s) of {} differ (weighted {best}); runner-up {} at {}{}",
        diffs.len(),
        PROFILES[i].name,
        ranking.get(1).map_or("none", |r| r.name.as_str()),
        runner,
        if tied.len() > 1 {
            format!("; tied: {} (the first listed wins)", tied.join(", "))
        } else {
            String::new()
        }
    );
    Inferred::new(
        NearestProfile {
            name: PROFILES[i].name.into(),
            differs: diffs,
            ranking,
        },
        conf,
        ev,
    )
}
