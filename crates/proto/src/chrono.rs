//! Linux's TCP chronographs (tcp_chrono_start/stop in tcp_output.c): how
//! long the connection had data to send, and for how much of that time the
//! peer's receive window or the local send buffer held it back. TCP_INFO
//! reports them as tcpi_busy_time, tcpi_rwnd_limited and tcpi_sndbuf_limited.

use crate::time::{Duration, Instant};

/// What the connection is limited by; a later kind outranks an earlier one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ChronoKind {
    /// Nothing to send.
    Unspec,
    /// Data queued or in flight.
    Busy,
    /// The peer's window stops the next segment.
    RwndLimited,
    /// The application waits for send-buffer space.
    SndbufLimited,
}

/// The running chronograph and the time accrued to each kind.
#[derive(Clone, Copy, Debug)]
pub struct Chrono {
    kind: ChronoKind,
    since: Instant,
    /// Accrued time of Busy, RwndLimited, SndbufLimited.
    stat: [Duration; 3],
}

impl Default for Chrono {
    fn default() -> Self {
        Chrono {
            kind: ChronoKind::Unspec,
            since: Instant::ZERO,
            stat: [Duration::ZERO; 3],
        }
    }
}

/// Accrued times, as TCP_INFO reports them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ChronoStats {
    /// All three kinds together (tcpi_busy_time).
    pub busy: Duration,
    /// tcpi_rwnd_limited.
    pub rwnd_limited: Duration,
    /// tcpi_sndbuf_limited.
    pub sndbuf_limited: Duration,
}

impl Chrono {
    /// tcp_chrono_set: closes the running interval and starts `kind`.
    fn set(&mut self, kind: ChronoKind, now: Instant) {
        if let Some(i) = Self::slot(self.kind) {
            self.stat[i] += now.saturating_duration_since(self.since);
        }
        self.kind = kind;
        self.since = now;
    }

    fn slot(kind: ChronoKind) -> Option<usize> {
        match kind {
            ChronoKind::Unspec => None,
            ChronoKind::Busy => Some(0),
            ChronoKind::RwndLimited => Some(1),
            ChronoKind::SndbufLimited => Some(2),
        }
    }

    /// tcp_chrono_start: a more interesting condition replaces the running one.
    pub fn start(&mut self, kind: ChronoKind, now: Instant) {
        if kind > self.kind {
            self.set(kind, now);
        }
    }

    /// tcp_chrono_stop: with nothing queued or in flight the chronograph
    /// stops; otherwise, if `kind` is the running one, it falls back to Busy.
    pub fn stop(&mut self, kind: ChronoKind, now: Instant, queues_empty: bool) {
        if queues_empty {
            if self.kind != ChronoKind::Unspec {
                self.set(ChronoKind::Unspec, now);
            }
        } else if kind == self.kind {
            self.set(ChronoKind::Busy, now);
        }
    }

    /// tcp_get_info_chrono_stats: accrued times up to `now`.
    pub fn stats(&self, now: Instant) -> ChronoStats {
        let mut s = self.stat;
        if let Some(i) = Self::slot(self.kind) {
            s[i] += now.saturating_duration_since(self.since);
        }
        ChronoStats {
            busy: s[0] + s[1] + s[2],
            rwnd_limited: s[1],
            sndbuf_limited: s[2],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: u64) -> Instant {
        Instant::ZERO + Duration::from_millis(ms)
    }

    #[test]
    fn the_most_interesting_condition_accrues_time() {
        let mut c = Chrono::default();
        c.start(ChronoKind::Busy, at(10));
        c.start(ChronoKind::RwndLimited, at(10));
        // Busy does not replace a window limit.
        c.start(ChronoKind::Busy, at(50));
        c.stop(ChronoKind::RwndLimited, at(210), false);
        c.stop(ChronoKind::Busy, at(240), true);
        let s = c.stats(at(400));
        assert_eq!(s.rwnd_limited, Duration::from_millis(200));
        assert_eq!(s.busy, Duration::from_millis(230));
        assert_eq!(s.sndbuf_limited, Duration::ZERO);
        // Stopping a kind that is not running changes nothing.
        c.start(ChronoKind::Busy, at(400));
        c.stop(ChronoKind::RwndLimited, at(450), false);
        assert_eq!(c.stats(at(500)).busy, Duration::from_millis(330));
    }
}

/// TCP_USER_TIMEOUT (RFC 5482): how long transmitted data may stay
/// unacknowledged once retransmissions began before the connection is
/// dropped, as Linux keeps it (tcp_timer.c: retransmits_timed_out counts
/// from retrans_stamp, the first transmission of the oldest data that had
/// to be resent, and tcp_clamp_rto_to_user_timeout cuts the backed-off
/// timer so that it fires when the time is up).
#[derive(Clone, Debug, Default)]
pub struct UserTimeout {
    /// The limit; None: off (the retry count alone decides).
    limit: Option<Duration>,
    /// retrans_stamp, and SND.MAX at that retransmission: cleared once
    /// everything sent up to there is acknowledged (no resent data left).
    stamp: Option<(Instant, crate::SeqNumber)>,
    /// First transmission time of each segment in flight, by end
    /// sequence number (kept only while a limit is set).
    sent: std::collections::VecDeque<(crate::SeqNumber, Instant)>,
}

impl UserTimeout {
    /// Sets or clears the limit (setsockopt TCP_USER_TIMEOUT; 0 clears).
    pub fn set(&mut self, limit: Option<Duration>) {
        self.limit = limit.filter(|d| !d.is_zero());
        if self.limit.is_none() {
            self.sent.clear();
        }
    }

    /// The limit in force.
    pub fn limit(&self) -> Option<Duration> {
        self.limit
    }

    /// A segment ending at `end` (sequence space) was sent for the first time.
    pub fn on_new_segment(&mut self, end: crate::SeqNumber, now: Instant) {
        if self.limit.is_some() {
            self.sent.push_back((end, now));
        }
    }

    /// SND.UNA advanced to `una`.
    pub fn on_ack(&mut self, una: crate::SeqNumber) {
        while self.sent.front().is_some_and(|&(e, _)| e <= una) {
            self.sent.pop_front();
        }
        if self.stamp.is_some_and(|(_, high)| una >= high) {
            self.stamp = None;
        }
    }

    /// A retransmission timeout resends from SND.UNA; `snd_max` is the
    /// highest sequence sent. Sets retrans_stamp if this starts an episode.
    pub fn on_retransmit(&mut self, now: Instant, snd_max: crate::SeqNumber) {
        if self.stamp.is_none() {
            let first = self.sent.front().map_or(now, |&(_, t)| t);
            self.stamp = Some((first, snd_max));
        }
    }

    /// Whether the time is up at `now` (retransmits_timed_out with a user timeout).
    pub fn expired(&self, now: Instant) -> bool {
        match (self.limit, self.stamp) {
            (Some(l), Some((start, _))) => now.saturating_duration_since(start) >= l,
            _ => false,
        }
    }

    /// The retransmission timeout `rto`, cut to the time left
    /// (tcp_clamp_rto_to_user_timeout; at least 1 ms once the time is up).
    pub fn clamp(&self, now: Instant, rto: Duration) -> Duration {
        match (self.limit, self.stamp) {
            (Some(l), Some((start, _))) => {
                let left = l.saturating_sub(now.saturating_duration_since(start));
                rto.min(left.max(Duration::from_millis(1)))
            }
            _ => rto,
        }
    }
}

#[cfg(test)]
mod user_timeout_tests {
    use super::*;
    use crate::SeqNumber;

    #[test]
    fn counts_from_the_first_transmission_of_resent_data() {
        let ms = |m| Instant::ZERO + Duration::from_millis(m);
        let mut u = UserTimeout::default();
        u.set(Some(Duration::from_millis(3000)));
        u.on_new_segment(SeqNumber(101), ms(2000));
        u.on_new_segment(SeqNumber(201), ms(2100));
        u.on_retransmit(ms(2300), SeqNumber(201));
        assert!(!u.expired(ms(4999)));
        assert!(u.expired(ms(5000)));
        // 2.5 s in, a 1 s backed-off timer is cut to the 0.5 s left.
        assert_eq!(
            u.clamp(ms(4500), Duration::from_secs(1)),
            Duration::from_millis(500)
        );
        // Everything resent is acknowledged: the episode is over.
        u.on_ack(SeqNumber(201));
        assert!(!u.expired(ms(9000)));
        assert_eq!(
            u.clamp(ms(9000), Duration::from_secs(1)),
            Duration::from_secs(1)
        );
        u.set(None);
        u.on_retransmit(ms(9000), SeqNumber(201));
        assert!(!u.expired(ms(20000)));
    }
}
