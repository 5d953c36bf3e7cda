//! RFC 7323 timestamps: the TSval clock, TS.Recent, RTTM (section 4) and PAWS (section 5).

use crate::seq::SeqNumber;
use crate::time::{Duration, Instant};
use crate::wire::Timestamps;

/// RFC 7323 5.4: the timestamp clock ticks once per millisecond (1 ms to 1 s allowed).
pub const TS_TICK_NS: u64 = 1_000_000;
/// RFC 7323 5.5: a TS.Recent idle longer than 24 days is no longer used for PAWS.
pub const PAWS_IDLE: Duration = Duration::from_secs(24 * 24 * 3600);
/// RFC 7323 3.2 / Cheshire: the option costs 12 bytes (10 + 2 NOPs) on every segment.
pub const TS_OPTION_SPACE: usize = 12;

/// Per-connection timestamp state (RFC 7323 4.3 TS.Recent, Last.ACK.sent).
#[derive(Debug, Clone)]
pub struct TsState {
    /// Both SYNs carried the option (RFC 7323 3.2).
    pub enabled: bool,
    /// Added to the clock so TSval is not the driver's time (RFC 7323 5.4, 7.1).
    offset: u32,
    /// RFC 7323 4.3 TS.Recent.
    recent: u32,
    /// When TS.Recent was last set (for the 24-day rule, RFC 7323 5.5).
    recent_at: Option<Instant>,
    /// RFC 7323 4.3 Last.ACK.sent.
    last_ack_sent: SeqNumber,
}

impl TsState {
    pub fn new(offset: u32) -> Self {
        TsState {
            enabled: false,
            offset,
            recent: 0,
            recent_at: None,
            last_ack_sent: SeqNumber(0),
        }
    }

    /// RFC 7323 5.4: our TSval at `now`.
    #[inline]
    pub fn clock(&self, now: Instant) -> u32 {
        self.offset
            .wrapping_add((now.as_nanos() / TS_TICK_NS) as u32)
    }

    /// The option for an outgoing segment: our clock and TS.Recent (RFC 7323 3.2).
    #[inline]
    pub fn option(&self, now: Instant) -> Timestamps {
        Timestamps {
            tsval: self.clock(now),
            tsecr: if self.recent_at.is_some() {
                self.recent
            } else {
                0
            },
        }
    }

    /// RFC 7323 4.3 (1): TS.Recent from the peer's SYN or SYN-ACK.
    pub fn on_syn(&mut self, now: Instant, ts: Timestamps) {
        self.recent = ts.tsval;
        self.recent_at = Some(now);
    }

    /// RFC 7323 5.3 R1: PAWS; true when the segment is an old duplicate to drop.
    #[inline]
    pub fn paws_rejects(&self, now: Instant, ts: Timestamps) -> bool {
        let Some(at) = self.recent_at else {
            return false;
        };
        if now.saturating_duration_since(at) > PAWS_IDLE {
            return false; // RFC 7323 5.5: TS.Recent is too old to judge by.
        }
        (ts.tsval.wrapping_sub(self.recent) as i32) < 0
    }

    /// RFC 7323 4.3 (2) / 5.3 R3: take SEG.TSval when it is not older than
    /// TS.Recent and the segment covers Last.ACK.sent.
    #[inline]
    pub fn update_recent(&mut self, now: Instant, seg_seq: SeqNumber, ts: Timestamps) {
        let newer = (ts.tsval.wrapping_sub(self.recent) as i32) >= 0 || self.recent_at.is_none();
        if newer && seg_seq.diff(self.last_ack_sent) <= 0 {
            self.recent = ts.tsval;
            self.recent_at = Some(now);
        }
    }

    /// RFC 7323 4.3: remember the ACK field of every segment we send.
    #[inline]
    pub fn note_ack_sent(&mut self, ack: SeqNumber) {
        self.last_ack_sent = ack;
    }

    /// RFC 7323 4.1 RTTM: the round trip from an echoed TSval, if it is one of ours.
    #[inline]
    pub fn rtt_sample(&self, now: Instant, tsecr: u32) -> Option<Duration> {
        if tsecr == 0 {
            return None;
        }
        let ticks = self.clock(now).wrapping_sub(tsecr);
        // A wild echo (from the future, or older than the clock can say) is ignored.
        if (ticks as i32) < 0 {
            return None;
        }
        Some(Duration::from_nanos(u64::from(ticks) * TS_TICK_NS))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_echo_and_rtt() {
        let mut t = TsState::new(1000);
        assert_eq!(t.clock(Instant::from_millis(5)), 1005);
        t.on_syn(
            Instant::ZERO,
            Timestamps {
                tsval: 77,
                tsecr: 0,
            },
        );
        assert_eq!(t.option(Instant::from_millis(2)).tsecr, 77);
        let rtt = t.rtt_sample(Instant::from_millis(600), 1020).unwrap();
        assert_eq!(rtt, Duration::from_millis(580));
        assert_eq!(t.rtt_sample(Instant::from_millis(600), 0), None);
    }

    #[test]
    fn paws_rejects_older_tsval_only() {
        let mut t = TsState::new(0);
        let now = Instant::from_millis(10);
        t.on_syn(
            now,
            Timestamps {
                tsval: 100,
                tsecr: 0,
            },
        );
        assert!(t.paws_rejects(
            now,
            Timestamps {
                tsval: 99,
                tsecr: 0
            }
        ));
        assert!(!t.paws_rejects(
            now,
            Timestamps {
                tsval: 100,
                tsecr: 0
            }
        ));
        // Wraparound: 5 is "after" u32::MAX - 5.
        t.on_syn(
            now,
            Timestamps {
                tsval: u32::MAX - 5,
                tsecr: 0,
            },
        );
        assert!(!t.paws_rejects(now, Timestamps { tsval: 5, tsecr: 0 }));
        // RFC 7323 5.5: after 24 days idle, anything goes.
        let later = Instant::from_millis(25 * 24 * 3600 * 1000);
        assert!(!t.paws_rejects(later, Timestamps { tsval: 1, tsecr: 0 }));
    }

    #[test]
    fn recent_follows_last_ack_sent() {
        let mut t = TsState::new(0);
        let now = Instant::ZERO;
        t.on_syn(
            now,
            Timestamps {
                tsval: 10,
                tsecr: 0,
            },
        );
        t.note_ack_sent(SeqNumber(100));
        t.update_recent(
            now,
            SeqNumber(200),
            Timestamps {
                tsval: 20,
                tsecr: 0,
            },
        );
        assert_eq!(t.option(now).tsecr, 10, "segment beyond Last.ACK.sent");
        t.update_recent(
            now,
            SeqNumber(100),
            Timestamps {
                tsval: 30,
                tsecr: 0,
            },
        );
        assert_eq!(t.option(now).tsecr, 30);
    }
}
