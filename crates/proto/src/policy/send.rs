//! Send policies: given what window and cwnd allow, send a partial segment now
//! or hold it. Full segments always go; the engine asks only about partial ones.

use crate::time::{Duration, Instant};
use core::fmt;
use core::str::FromStr;

/// What a send policy sees about one candidate partial segment (Doupnik 2.0:
/// decide after the window and congestion limits are applied).
#[derive(Clone, Copy, Debug)]
pub struct SendCtx {
    pub now: Instant,
    /// Effective send MSS (payload bytes).
    pub mss: usize,
    /// Unsent bytes in the send buffer (Doupnik 2.0 "available").
    pub available: usize,
    /// Bytes the peer window and cwnd let us send now (Doupnik 2.0 "allowed").
    pub allowed: usize,
    /// min(available, allowed) when this transmission opportunity began, before
    /// any of its segments left (the liberal rules' test, Doupnik 1.5 and 2.1).
    pub burst: usize,
    /// Length of the candidate segment (under one MSS).
    pub seg_len: usize,
    /// Bytes sent and not yet acknowledged (SND.NXT - SND.UNA).
    pub in_flight: usize,
    /// The candidate includes an end of application data (a write without
    /// more-follows, or a flush).
    pub ends_app_data: bool,
    /// The candidate includes data the application flushed explicitly (uncork).
    pub flushed: bool,
    /// A partial segment sent earlier is still unacknowledged (Minshall).
    pub unacked_partial: bool,
    /// Since when this data has been held, if it was held before.
    pub held_since: Option<Instant>,
}

/// Why data that could have gone was held.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HoldReason {
    /// RFC 896 / RFC 1122 4.2.3.4: partial segment while data is unacknowledged.
    Nagle,
    /// Minshall: partial segment while an earlier partial one is unacknowledged.
    Minshall,
    /// Doupnik 2.1 Rule 2: partial segment that is not the end of application data.
    NotEndOfData,
    /// Solaris tcp_naglim_def: segment under the limit while data is unacknowledged.
    Naglim,
    /// TCP_CORK: partial segment before a flush.
    Cork,
}

impl HoldReason {
    /// Stable short name used in traces and JSON.
    pub fn name(self) -> &'static str {
        match self {
            HoldReason::Nagle => "nagle",
            HoldReason::Minshall => "minshall",
            HoldReason::NotEndOfData => "doupnik",
            HoldReason::Naglim => "naglim",
            HoldReason::Cork => "cork",
        }
    }
}

impl fmt::Display for HoldReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            HoldReason::Nagle => "nagle: partial segment while data is unacknowledged",
            HoldReason::Minshall => "minshall: an earlier runt is unacknowledged",
            HoldReason::NotEndOfData => "doupnik: not end of application data",
            HoldReason::Naglim => "naglim: small segment while data is unacknowledged",
            HoldReason::Cork => "cork: partial segment before flush",
        })
    }
}

/// A policy's verdict on the candidate segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendDecision {
    Send,
    /// Hold; if `until` is set, ask again then even if nothing else happens.
    Hold {
        reason: HoldReason,
        until: Option<Instant>,
    },
}

impl SendDecision {
    fn hold(reason: HoldReason) -> SendDecision {
        SendDecision::Hold {
            reason,
            until: None,
        }
    }
}

/// When to send: one small type per policy.
pub trait SendPolicy: fmt::Debug + Send {
    /// Decide on the partial candidate segment described by `ctx`.
    fn decide(&mut self, ctx: &SendCtx) -> SendDecision;
}

/// TCP_NODELAY (RFC 1122 4.2.3.4 lets an application disable Nagle): send what is allowed.
#[derive(Debug, Default)]
pub struct NoDelay;

impl SendPolicy for NoDelay {
    fn decide(&mut self, _ctx: &SendCtx) -> SendDecision {
        SendDecision::Send
    }
}

/// Strict Nagle (RFC 1122 4.2.3.4; Doupnik 1.3, BSD): a partial segment waits
/// while any data is unacknowledged.
#[derive(Debug, Default)]
pub struct Nagle;

impl SendPolicy for Nagle {
    fn decide(&mut self, ctx: &SendCtx) -> SendDecision {
        if ctx.in_flight == 0 {
            SendDecision::Send
        } else {
            SendDecision::hold(HoldReason::Nagle)
        }
    }
}

/// Liberal Nagle (Doupnik 1.5): the size test applies to min(available,
/// allowed) at the opportunity, so a trailing partial goes with full segments.
#[derive(Debug, Default)]
pub struct NagleLiberal;

impl SendPolicy for NagleLiberal {
    fn decide(&mut self, ctx: &SendCtx) -> SendDecision {
        if ctx.in_flight == 0 || ctx.burst >= ctx.mss {
            SendDecision::Send
        } else {
            SendDecision::hold(HoldReason::Nagle)
        }
    }
}

/// Linux 2.0-2.2's Nagle (include/net/tcp.h tcp_snd_test: `len < mss >> 1 &&
/// packets_out`): only a segment under half the MSS waits while data is in flight.
#[derive(Debug, Default)]
pub struct NagleHalf;

impl SendPolicy for NagleHalf {
    fn decide(&mut self, ctx: &SendCtx) -> SendDecision {
        if ctx.in_flight == 0 || 2 * ctx.seg_len >= ctx.mss {
            SendDecision::Send
        } else {
            SendDecision::hold(HoldReason::Nagle)
        }
    }
}

/// Minshall's modification (via Cheshire, Nagle x delayed ACK): at most one
/// unacknowledged runt; a partial segment waits only while an earlier one is unacknowledged.
#[derive(Debug, Default)]
pub struct Minshall;

impl SendPolicy for Minshall {
    fn decide(&mut self, ctx: &SendCtx) -> SendDecision {
        if ctx.unacked_partial {
            SendDecision::hold(HoldReason::Minshall)
        } else {
            SendDecision::Send
        }
    }
}

/// Doupnik's new policy, Rules 1 and 2 (Doupnik, A new TCP transmission policy, 2.1): send a
/// partial segment only if it holds the end of application data; never wait for ACKs.
#[derive(Debug, Default)]
pub struct Doupnik {
    /// Rule 3: also send it when min(available, allowed) exceeds a full segment.
    pub liberal: bool,
}

impl SendPolicy for Doupnik {
    fn decide(&mut self, ctx: &SendCtx) -> SendDecision {
        if ctx.ends_app_data || (self.liberal && ctx.burst > ctx.mss) {
            SendDecision::Send
        } else {
            SendDecision::hold(HoldReason::NotEndOfData)
        }
    }
}

/// Solaris tcp_naglim_def (Davids, TCP -- Either Fast or Efficient): Nagle applies only to
/// segments under `limit` bytes (the connection's copy is min(MSS, limit)).
#[derive(Debug)]
pub struct Naglim {
    pub limit: usize,
}

impl SendPolicy for Naglim {
    fn decide(&mut self, ctx: &SendCtx) -> SendDecision {
        if ctx.seg_len >= self.limit.min(ctx.mss) || ctx.in_flight == 0 {
            SendDecision::Send
        } else {
            SendDecision::hold(HoldReason::Naglim)
        }
    }
}

/// Linux's cap on corked data (TCP_CORK: partial frames go after 200 ms).
pub const CORK_CAP: Duration = Duration::from_millis(200);

/// TCP_CORK (Linux tcp(7)): only full segments until the application flushes,
/// and held data goes after [`CORK_CAP`] anyway.
#[derive(Debug, Default)]
pub struct Cork;

impl SendPolicy for Cork {
    fn decide(&mut self, ctx: &SendCtx) -> SendDecision {
        if ctx.flushed {
            return SendDecision::Send;
        }
        let since = ctx.held_since.unwrap_or(ctx.now);
        if ctx.now >= since + CORK_CAP {
            SendDecision::Send
        } else {
            SendDecision::Hold {
                reason: HoldReason::Cork,
                until: Some(since + CORK_CAP),
            }
        }
    }
}

/// A send policy by name, as configured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SendPolicyKind {
    NoDelay,
    /// Strict Nagle: the BSD default, so the classic stall is what a newcomer sees first.
    #[default]
    Nagle,
    NagleLiberal,
    /// Linux 2.2: Nagle for segments under half the MSS.
    NagleHalf,
    Minshall,
    Doupnik,
    DoupnikLiberal,
    Naglim(u32),
    Cork,
}

impl SendPolicyKind {
    /// Every policy: (name, one-line description with its source).
    pub const ALL: &'static [(&'static str, &'static str)] = &[
        (
            "nodelay",
            "send whatever window and cwnd allow at once (TCP_NODELAY; RFC 1122 4.2.3.4)",
        ),
        (
            "nagle",
            "strict Nagle: a partial segment waits while any data is unacknowledged (RFC 896; RFC 1122 4.2.3.4; Doupnik 1.3; BSD)",
        ),
        (
            "nagle-liberal",
            "liberal Nagle: a trailing partial segment goes with full ones sent in the same opportunity (Doupnik 1.5)",
        ),
        (
            "nagle-half",
            "Nagle for segments under half the MSS only: a larger partial segment goes with data in flight (Linux 2.2 include/net/tcp.h tcp_snd_test)",
        ),
        (
            "minshall",
            "at most one unacknowledged runt in flight (Minshall 1998, via Cheshire; Linux, macOS)",
        ),
        (
            "doupnik",
            "send full segments; send a partial one only if it holds the end of application data (Doupnik 2.1 Rules 1-2)",
        ),
        (
            "doupnik-liberal",
            "doupnik plus Rule 3: a partial segment also goes when min(available, allowed) exceeds a segment (Doupnik 2.1)",
        ),
        (
            "naglim:N",
            "Nagle applies only to segments under N bytes (Solaris tcp_naglim_def; Davids)",
        ),
        (
            "cork",
            "only full segments until the application flushes, partial data after 200 ms at most (Linux TCP_CORK)",
        ),
    ];

    pub fn build(self) -> Box<dyn SendPolicy> {
        match self {
            SendPolicyKind::NoDelay => Box::new(NoDelay),
            SendPolicyKind::Nagle => Box::new(Nagle),
            SendPolicyKind::NagleLiberal => Box::new(NagleLiberal),
            SendPolicyKind::NagleHalf => Box::new(NagleHalf),
            SendPolicyKind::Minshall => Box::new(Minshall),
            SendPolicyKind::Doupnik => Box::new(Doupnik { liberal: false }),
            SendPolicyKind::DoupnikLiberal => Box::new(Doupnik { liberal: true }),
            SendPolicyKind::Naglim(n) => Box::new(Naglim { limit: n as usize }),
            SendPolicyKind::Cork => Box::new(Cork),
        }
    }
}

impl FromStr for SendPolicyKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s {
            "nodelay" => SendPolicyKind::NoDelay,
            "nagle" => SendPolicyKind::Nagle,
            "nagle-liberal" => SendPolicyKind::NagleLiberal,
            "nagle-half" => SendPolicyKind::NagleHalf,
            "minshall" => SendPolicyKind::Minshall,
            "doupnik" => SendPolicyKind::Doupnik,
            "doupnik-liberal" => SendPolicyKind::DoupnikLiberal,
            "cork" => SendPolicyKind::Cork,
            _ => {
                if let Some(n) = s.strip_prefix("naglim:") {
                    return match n.parse::<u32>() {
                        Ok(n) if n > 0 => Ok(SendPolicyKind::Naglim(n)),
                        _ => Err(format!(
                            "bad send policy {s:?}: naglim takes a positive byte count, e.g. naglim:30"
                        )),
                    };
                }
                return Err(crate::suggest::unknown_policy("send policy", s, Self::ALL));
            }
        })
    }
}

impl fmt::Display for SendPolicyKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SendPolicyKind::NoDelay => f.write_str("nodelay"),
            SendPolicyKind::Nagle => f.write_str("nagle"),
            SendPolicyKind::NagleLiberal => f.write_str("nagle-liberal"),
            SendPolicyKind::NagleHalf => f.write_str("nagle-half"),
            SendPolicyKind::Minshall => f.write_str("minshall"),
            SendPolicyKind::Doupnik => f.write_str("doupnik"),
            SendPolicyKind::DoupnikLiberal => f.write_str("doupnik-liberal"),
            SendPolicyKind::Naglim(n) => write!(f, "naglim:{n}"),
            SendPolicyKind::Cork => f.write_str("cork"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> SendCtx {
        SendCtx {
            now: Instant::from_millis(1000),
            mss: 1000,
            available: 500,
            allowed: 10_000,
            burst: 500,
            seg_len: 500,
            in_flight: 3000,
            ends_app_data: true,
            flushed: false,
            unacked_partial: false,
            held_since: None,
        }
    }

    fn sends(p: &mut dyn SendPolicy, c: SendCtx) -> bool {
        p.decide(&c) == SendDecision::Send
    }

    #[test]
    fn doupnik_1_4_first_case_tail_after_full_segments() {
        // 3.5 MSS written, all allowed: the half segment follows three full ones.
        let c = SendCtx {
            burst: 3500,
            ..ctx()
        };
        assert!(!sends(&mut Nagle, c));
        assert!(sends(&mut NagleLiberal, c));
        assert!(sends(&mut Minshall, c));
        assert!(sends(&mut Doupnik { liberal: false }, c));
    }

    #[test]
    fn doupnik_1_5_window_blocked_remainder() {
        // Only a partial remainder is left at a later opportunity, data in flight.
        let c = ctx();
        assert!(!sends(&mut Nagle, c));
        assert!(!sends(&mut NagleLiberal, c));
        assert!(sends(&mut Doupnik { liberal: false }, c));
        let c = SendCtx {
            ends_app_data: false,
            ..ctx()
        };
        assert!(!sends(&mut Doupnik { liberal: false }, c));
        // Rule 3: more than a segment allowed at the opportunity.
        let c = SendCtx {
            ends_app_data: false,
            burst: 1500,
            ..ctx()
        };
        assert!(sends(&mut Doupnik { liberal: true }, c));
        assert!(!sends(&mut Doupnik { liberal: false }, c));
    }

    #[test]
    fn nagle_half_holds_only_segments_under_half_the_mss() {
        // Linux 2.2 tcp_snd_test: 499 of 1000 waits behind data in flight, 500 goes.
        let small = SendCtx {
            seg_len: 499,
            ..ctx()
        };
        assert!(!sends(&mut NagleHalf, small));
        assert!(sends(&mut NagleHalf, ctx()));
        assert!(!sends(&mut Nagle, ctx()));
        let idle = SendCtx {
            in_flight: 0,
            ..small
        };
        assert!(sends(&mut NagleHalf, idle));
        assert_eq!(
            "nagle-half".parse::<SendPolicyKind>(),
            Ok(SendPolicyKind::NagleHalf)
        );
        assert_eq!(SendPolicyKind::NagleHalf.to_string(), "nagle-half");
    }

    #[test]
    fn minshall_holds_only_behind_an_unacked_runt() {
        assert!(sends(&mut Minshall, ctx()));
        let c = SendCtx {
            unacked_partial: true,
            ..ctx()
        };
        assert_eq!(
            Minshall.decide(&c),
            SendDecision::Hold {
                reason: HoldReason::Minshall,
                until: None
            }
        );
    }

    #[test]
    fn naglim_limits_nagle_to_small_segments() {
        let mut p = Naglim { limit: 30 };
        let small = SendCtx {
            seg_len: 20,
            ..ctx()
        };
        assert!(!sends(&mut p, small));
        let big = SendCtx {
            seg_len: 30,
            ..ctx()
        };
        assert!(sends(&mut p, big));
        let idle = SendCtx {
            in_flight: 0,
            ..small
        };
        assert!(sends(&mut p, idle));
    }

    #[test]
    fn cork_waits_for_flush_or_cap() {
        let c = SendCtx {
            held_since: Some(Instant::from_millis(900)),
            ..ctx()
        };
        assert_eq!(
            Cork.decide(&c),
            SendDecision::Hold {
                reason: HoldReason::Cork,
                until: Some(Instant::from_millis(1100))
            }
        );
        let late = SendCtx {
            now: Instant::from_millis(1100),
            ..c
        };
        assert!(sends(&mut Cork, late));
        let flushed = SendCtx { flushed: true, ..c };
        assert!(sends(&mut Cork, flushed));
    }

    #[test]
    fn names_round_trip() {
        for (name, _) in SendPolicyKind::ALL {
            let name = name.replace(":N", ":30");
            let k: SendPolicyKind = name.parse().unwrap();
            assert_eq!(k.to_string(), name);
        }
        assert!("naglim:0".parse::<SendPolicyKind>().is_err());
        assert!("fast".parse::<SendPolicyKind>().is_err());
    }
}
