//! Findings from the holds that no delayed-ACK timer released: runts the
//! send rule held a round trip, data waiting for the congestion window, the
//! sender's buffer or the peer's window; with fixes that fit the sender's
//! stack as the capture shows it.

use crate::diagnose::{event_span, union_len, Event, Finding, Kind, Recommendation, Remedy};
use crate::flow::{Dir, Flow};
use crate::holds::{Hold, HoldCause};
use crate::sendrule::{SendRule, SendRules};

fn side(d: Dir) -> &'static str {
    if d == 0 {
        "client"
    } else {
        "server"
    }
}

fn rec(d: Dir, fix: impl Into<String>) -> Recommendation {
    Recommendation {
        side: side(d),
        fix: fix.into(),
        remedy: None,
        replay: None,
    }
}

fn ms(x: f64) -> String {
    format!("{:.1} ms", x * 1e3)
}

/// The fix for runts a send rule held, given the rule the sender's segments
/// show: Minshall's rule only when some held runt had no earlier runt
/// unacknowledged (Minshall would have sent it) and the sender is not
/// already likely on it, never to a sender whose holds Minshall's rule would
/// make too. `unmatched`: held runts whose
/// hold the detector could not time (what was outstanding is unknown).
pub fn send_rule_fixes(
    s: Dir,
    held: &[&Hold],
    unmatched: usize,
    rules: &SendRules,
) -> Vec<Recommendation> {
    let mut recs = vec![rec(
        s,
        "write each message in one write (build it in a buffer, or writev/sendmsg) so no runt is left behind unacknowledged data",
    )
    .remedy(Remedy::OneWrite)];
    recs.push(
        rec(
            s,
            "once messages go out in one write, set TCP_NODELAY on this side",
        )
        .remedy(Remedy::Nodelay),
    );
    let minshall_sends = held.iter().filter(|h| !h.runt_outstanding).count();
    let doupnik = "Doupnik's policy (send_policy = \"doupnik\"), which sends the end of every write at once (Doupnik, A new TCP transmission policy, 2.1)";
    // Its runts left behind full segments (strict Nagle ruled out), and none
    // behind another runt: Minshall's rule, as Linux's Nagle is.
    let likely_minshall = rules.likely == SendRule::Minshall;
    if unmatched > 0 && minshall_sends == 0 && !likely_minshall {
        recs.push(rec(s, format!("or {doupnik}")).remedy(Remedy::Doupnik));
        recs.push(rec(
            s,
            "or Minshall's rule (send_policy = \"minshall\"), unless this side already uses it (Linux does): it still holds a runt behind an earlier unacknowledged runt",
        ).remedy(Remedy::Minshall));
    } else if minshall_sends > 0 && !likely_minshall {
        recs.push(rec(
            s,
            format!(
                "or use Minshall's rule (Linux's Nagle; send_policy = \"minshall\"): {minshall_sends} of these {} runts waited with no earlier runt unacknowledged, and it would have sent them at once",
                held.len()
            ),
        ).remedy(Remedy::Minshall));
        recs.push(rec(s, format!("or {doupnik}")).remedy(Remedy::Doupnik));
    } else {
        recs.push(rec(
            s,
            format!(
                "or use {doupnik}; Minshall's rule would not help: each runt waited behind an earlier unacknowledged runt, which it holds too{}",
                if rules.consistent(SendRule::Nagle) { "" } else { " (and this sender already sends runts behind full segments, as Minshall's rule does)" }
            ),
        ).remedy(Remedy::Doupnik));
    }
    recs
}

/// Adds findings for `s`'s holds that the delayed-ACK detector did not
/// already report (`stalls`: its events, stamped at the release).
pub fn findings(
    f: &Flow,
    s: Dir,
    hs: &[Hold],
    stalls: &[(Kind, Event)],
    rules: &SendRules,
    out: &mut Vec<Finding>,
) {
    let r = 1 - s;
    let fresh: Vec<&Hold> = hs
        .iter()
        .filter(|h| {
            !stalls
                .iter()
                .any(|(_, e)| (e.at_s - h.released_s).abs() < 1e-9)
        })
        .collect();
    let event = |h: &Hold, what: String| Event {
        at_s: h.released_s,
        lost_s: h.held_s(),
        detail: format!(
            "{what}; it left {} after the {}'s ACK, sent {} after the data it acknowledged arrived",
            ms((h.released_s - h.ack_s).max(0.0)),
            side(r),
            ms(h.ack_delay_s)
        ),
    };
    let of = |c: HoldCause| fresh.iter().copied().filter(move |h| h.cause == c);
    let two_way = f.sides[r].bytes > 0;

    let runts: Vec<&Hold> = of(HoldCause::SendRule).collect();
    if !runts.is_empty() {
        let events: Vec<Event> = runts
            .iter()
            .map(|h| {
                let behind = if h.runt_outstanding {
                    "behind an earlier unacknowledged runt"
                } else {
                    "behind unacknowledged full segments"
                };
                event(
                    h,
                    format!("{} B runt held {} {behind}", h.len, ms(h.held_s())),
                )
            })
            .collect();
        let typical = median(events.iter().map(|e| e.lost_s).collect());
        let recs = send_rule_fixes(s, &runts, 0, rules);
        push(out, Kind::RuntHold, s, events, format!(
            "{} time(s) the {} held a runt until an earlier segment was acknowledged (typically {}, about a round trip): the ACK came on time, the send rule cost the round trip",
            runts.len(),
            side(s),
            ms(typical)
        ), recs);
    }

    let cwnd: Vec<Event> = of(HoldCause::Cwnd)
        .map(|h| {
            event(
                h,
                format!(
                    "{} B in flight filled the congestion window; the next segment waited {}",
                    h.in_flight,
                    ms(h.held_s())
                ),
            )
        })
        .collect();
    if !cwnd.is_empty() {
        let n = cwnd.len();
        let mut recs = vec![rec(s, "a larger initial window (RFC 6928: 10 segments) shortens the start; keep the connection open and reuse it so later messages start with a grown window")];
        if two_way {
            recs.push(rec(s, "disable slow start after idle (Linux: net.ipv4.tcp_slow_start_after_idle = 0) so each response does not start over (RFC 5681 4.1)"));
        }
        push(out, Kind::CwndLimited, s, cwnd, format!(
            "{n} time(s) the {} had data waiting with the {}'s window open, its congestion window full, until an ACK let more go",
            side(s),
            side(r)
        ), recs);
    }

    let buf: Vec<Event> = of(HoldCause::SendBuffer)
        .map(|h| {
            event(
                h,
                format!(
                    "in flight stayed at {} B; the next segment waited {}",
                    h.in_flight,
                    ms(h.held_s())
                ),
            )
        })
        .collect();
    if !buf.is_empty() {
        push(out, Kind::SendBufferLimited, s, buf, format!(
            "the {}'s data in flight stayed flat round trip after round trip with the window open and no loss: its socket send buffer (or its application) capped it, not congestion control",
            side(s)
        ), vec![rec(s, "give the socket a larger send buffer (SO_SNDBUF, Linux net.ipv4.tcp_wmem): it must hold a bandwidth-delay product of unacknowledged data")]);
    }

    // Peer-window waits inside turns, when the window detector (which wants
    // several and a share of the flow) reported none for this sender.
    let has_window = out
        .iter()
        .any(|x| x.kind == Kind::WindowLimited && x.sender == side(s));
    let win: Vec<Event> = of(HoldCause::PeerWindow)
        .map(|h| {
            event(
                h,
                format!(
                    "the {}'s window was full with {} B in flight; the next segment waited {}",
                    side(r),
                    h.in_flight,
                    ms(h.held_s())
                ),
            )
        })
        .collect();
    if !has_window && !win.is_empty() {
        // Window waits are stamped where they begin.
        let win = win
            .into_iter()
            .map(|mut e| {
                e.at_s -= e.lost_s;
                e
            })
            .collect();
        push(out, Kind::WindowLimited, s, win, format!(
            "the {} filled the {}'s receive window and waited for it to open",
            side(s),
            side(r)
        ), vec![rec(r, "offer a larger receive window (bigger receive buffer, window scaling per RFC 7323): it should cover the bandwidth-delay product")]);
    }
}

fn push(
    out: &mut Vec<Finding>,
    kind: Kind,
    s: Dir,
    events: Vec<Event>,
    summary: String,
    recs: Vec<Recommendation>,
) {
    let lost = union_len(events.iter().map(|e| event_span(kind, e)));
    out.push(Finding {
        kind,
        sender: side(s),
        count: events.len(),
        time_lost_s: lost,
        summary: format!("{summary}; {} in all", ms(lost)),
        events,
        recommendations: recs,
        overhead_ratio: None,
        overhead_ratio_with_acks: None,
    });
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}
