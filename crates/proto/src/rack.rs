//! RACK time-based loss detection (RFC 8985 sections 6.1-6.3), over the
//! per-segment transmit times and marks of the connection's one record of
//! sent segments (`crate::sent`): a segment is lost once a segment sent after it
//! was delivered and more than RACK.rtt + RACK.reo_wnd has passed since it was
//! sent. The reordering window is min_RTT / 4, widened per round that sees a
//! DSACK (6.2 step 4). Linux runs the same rules (tcp_recovery.c
//! tcp_rack_detect_loss, net.ipv4.tcp_recovery = 1).

use crate::sent::{Sent, SentRecord};
use crate::seq::SeqNumber;
use crate::time::{Duration, Instant};

/// What one run of RACK_detect_loss found (RFC 8985 6.2 step 5).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Detection {
    /// Some segment was newly marked lost.
    pub newly_lost: bool,
    /// Start of the lowest newly lost segment that was a retransmission: it
    /// must be sent again.
    pub lost_rexmit: Option<SeqNumber>,
    /// When to run detection again (the RACK reordering timer, 6.3), if any
    /// segment may still become lost by time alone.
    pub timeout: Option<Duration>,
}

/// The sender's RACK state (RFC 8985 6.1 "per-connection variables").
#[derive(Debug, Clone)]
pub struct Rack {
    /// RACK.xmit_ts and RACK.end_seq: the most recently sent segment delivered.
    latest: Option<(Instant, SeqNumber)>,
    /// RACK.rtt: the RTT of that segment.
    rtt: Duration,
    /// min_RTT over unambiguous deliveries.
    min_rtt: Option<Duration>,
    /// RACK.fack: highest end sequence ever delivered.
    fack: Option<SeqNumber>,
    /// RACK.reordering_seen.
    reordering_seen: bool,
    /// RACK.dsack_round.
    dsack_round: Option<SeqNumber>,
    /// RACK.reo_wnd_mult.
    reo_wnd_mult: u32,
    /// RACK.reo_wnd_persist.
    reo_wnd_persist: u32,
    /// End of the highest segment marked lost (not yet acknowledged).
    lost_end: Option<SeqNumber>,
    /// Largest distance seen from the highest delivered sequence number
    /// down to a segment delivered after it without a retransmission
    /// (Linux's tcp_check_sack_reordering metric, behind tcpi_reordering).
    reorder_bytes: usize,
    /// ACKs that showed reordering, once for their SACKed part and once for
    /// their cumulative part (Linux's tp->reord_seen).
    reord_seen: u32,
    /// The current ACK's cumulative part already counted in `reord_seen`.
    cum_reordered: bool,
}

impl Default for Rack {
    fn default() -> Self {
        Rack {
            latest: None,
            rtt: Duration::ZERO,
            min_rtt: None,
            fack: None,
            reordering_seen: false,
            dsack_round: None,
            reo_wnd_mult: 1,
            reo_wnd_persist: 0,
            lost_end: None,
            reorder_bytes: 0,
            reord_seen: 0,
            cum_reordered: false,
        }
    }
}

/// RFC 8985 6.2 RACK_sent_after: t1/seq1 was sent after t2/seq2 (ties by sequence).
fn sent_after(t1: Instant, seq1: SeqNumber, t2: Instant, seq2: SeqNumber) -> bool {
    t1 > t2 || (t1 == t2 && seq1 > seq2)
}

impl Rack {
    /// RACK.reordering_seen.
    pub fn reordering_seen(&self) -> bool {
        self.reordering_seen
    }

    /// RACK.reo_wnd_mult (1 until a DSACK widens it).
    pub fn reo_wnd_mult(&self) -> u32 {
        self.reo_wnd_mult
    }

    /// Segments delivered by SACK and not yet cumulatively acknowledged (sacked_out).
    pub fn sacked_count(sent: &SentRecord) -> usize {
        sent.iter().filter(|s| s.sacked).count()
    }

    /// Segments marked lost and not delivered since, resent or not (lost_out).
    pub fn lost_count(sent: &SentRecord) -> usize {
        sent.iter().filter(|s| s.marked_lost && !s.sacked).count()
    }

    /// Retransmissions outstanding: resent, not delivered, not lost again (retrans_out).
    pub fn retrans_count(sent: &SentRecord) -> usize {
        sent.iter().filter(|s| s.rexmit_out && !s.sacked).count()
    }

    /// Largest reordering distance seen in bytes (see `reorder_bytes`).
    pub fn reorder_bytes(&self) -> usize {
        self.reorder_bytes
    }

    /// How often reordering was seen (Linux tcp_check_sack_reordering's
    /// tp->reord_seen++: once per ACK for a SACKed hole, once for a filled one).
    pub fn reord_seen(&self) -> u32 {
        self.reord_seen
    }

    /// End of the highest segment marked lost, if any is outstanding.
    pub fn lost_end(&self) -> Option<SeqNumber> {
        self.lost_end
    }

    /// RFC 8985 6.2 steps 1-3 for a segment the cumulative ACK removed
    /// from the record: delivered now, unless a SACK delivered it before.
    pub fn on_cumulative_ack(&mut self, now: Instant, s: &Sent) {
        if !s.sacked && self.delivered(now, s) && !self.cum_reordered {
            // Once per ACK, however many segments filled the hole.
            self.cum_reordered = true;
            self.reord_seen += 1;
        }
    }

    /// A new cumulative ACK begins: its filled holes count once (`reord_seen`).
    pub fn begin_ack(&mut self) {
        self.cum_reordered = false;
    }

    /// RFC 8985 6.2 steps 1-3 for one ACK's (already validated) SACK
    /// `blocks`, after the cumulative ACK moved SND.UNA to `snd_una`: the
    /// segments wholly inside a block are delivered.
    pub fn on_sack(
        &mut self,
        sent: &mut SentRecord,
        now: Instant,
        snd_una: SeqNumber,
        blocks: &[(SeqNumber, SeqNumber)],
    ) {
        let mut sack_reordered = false;
        for &(l, r) in blocks {
            if l >= r || r <= snd_una {
                continue;
            }
            for s in sent.overlapping_mut(l, r) {
                if !s.sacked && s.start >= l && s.end <= r {
                    s.sacked = true;
                    s.lost = false;
                    sack_reordered |= self.delivered(now, s);
                }
            }
        }
        if self.lost_end.is_some_and(|e| e <= snd_una) {
            self.lost_end = None;
        }
        self.reord_seen += u32::from(sack_reordered);
    }

    /// Steps 2-3 for one delivered segment; true when it was reordered.
    fn delivered(&mut self, now: Instant, s: &Sent) -> bool {
        let rtt = now - s.last_sent;
        // Step 2: an ACK quicker than min_RTT after a retransmission may be
        // for the original: ambiguous, so it does not advance RACK.
        if s.rexmit && self.min_rtt.is_some_and(|m| rtt < m) {
            return false;
        }
        if !s.rexmit {
            self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
        }
        let newer = self
            .latest
            .is_none_or(|(t, e)| sent_after(s.last_sent, s.end, t, e));
        if newer {
            self.rtt = rtt;
            self.latest = Some((s.last_sent, s.end));
        }
        // Step 3: delivered below the highest delivered, never resent: reordered.
        match self.fack {
            Some(f) if s.end <= f => {
                if !s.rexmit {
                    self.reordering_seen = true;
                    self.reorder_bytes = self.reorder_bytes.max(f.distance_from(s.start));
                    return true;
                }
                false
            }
            _ => {
                self.fack = Some(s.end);
                false
            }
        }
    }

    /// RFC 8985 6.2 step 4 (RACK_update_reo_wnd), first half: a DSACK widens
    /// the window once per round trip; 16 recoveries without one reset it.
    pub fn on_dsack_and_exit(
        &mut self,
        dsack: bool,
        exited_recovery: bool,
        snd_una: SeqNumber,
        snd_nxt: SeqNumber,
    ) {
        if self.dsack_round.is_some_and(|r| snd_una >= r) {
            self.dsack_round = None;
        }
        if self.dsack_round.is_none() && dsack {
            self.dsack_round = Some(snd_nxt);
            self.reo_wnd_mult = self.reo_wnd_mult.saturating_add(1);
            self.reo_wnd_persist = 16;
        } else if exited_recovery {
            self.reo_wnd_persist = self.reo_wnd_persist.saturating_sub(1);
            if self.reo_wnd_persist == 0 {
                self.reo_wnd_mult = 1;
            }
        }
    }

    /// RFC 8985 6.2 step 4, second half: RACK.reo_wnd. Zero in recovery, or
    /// with DupThresh segments SACKed, until reordering has been seen;
    /// otherwise reo_wnd_mult x min_RTT / 4, at most SRTT.
    pub fn reo_wnd(
        &self,
        in_recovery: bool,
        dupthresh_sacked: bool,
        srtt: Option<Duration>,
    ) -> Duration {
        if !self.reordering_seen && (in_recovery || dupthresh_sacked) {
            return Duration::ZERO;
        }
        let w = self.min_rtt.unwrap_or(Duration::ZERO) / 4 * self.reo_wnd_mult;
        srtt.map_or(w, |s| w.min(s))
    }

    /// RFC 8985 6.2 step 5 (RACK_detect_loss): every outstanding segment sent
    /// before RACK.xmit_ts is lost once RACK.rtt + `reo_wnd` has passed since
    /// it was sent; otherwise the remaining time feeds the reordering timer.
    pub fn detect_loss(
        &mut self,
        sent: &mut SentRecord,
        now: Instant,
        reo_wnd: Duration,
    ) -> Detection {
        let mut out = Detection::default();
        let Some((rt, re)) = self.latest else {
            return out;
        };
        let wait = self.rtt + reo_wnd;
        for s in sent.iter_mut() {
            if s.sacked || s.lost || !sent_after(rt, re, s.last_sent, s.end) {
                continue;
            }
            let due = s.last_sent + wait;
            if due <= now {
                s.lost = true;
                s.marked_lost = true;
                s.rexmit_out = false;
                out.newly_lost = true;
                if s.rexmit && out.lost_rexmit.is_none() {
                    out.lost_rexmit = Some(s.start);
                }
                self.lost_end = Some(self.lost_end.map_or(s.end, |e| e.max(s.end)));
            } else {
                let remaining = due - now;
                out.timeout = Some(out.timeout.map_or(remaining, |t| t.max(remaining)));
            }
        }
        out
    }

    /// After an RTO everything outstanding is resent from SND.UNA (go-back-N):
    /// forget the lost marks.
    pub fn on_rto(&mut self, sent: &mut SentRecord) {
        for s in sent.iter_mut() {
            s.lost = false;
            // Linux's tcp_timeout_mark_lost: all that is not SACKed is lost.
            s.marked_lost = !s.sacked;
            s.rexmit_out = false;
        }
        self.lost_end = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(n: u32) -> SeqNumber {
        SeqNumber(n)
    }
    fn ms(n: u64) -> Instant {
        Instant::from_millis(n)
    }
    fn d(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    /// RACK with the record of sent segments it reads, as a connection holds them.
    #[derive(Default)]
    struct Flight {
        rack: Rack,
        sent: SentRecord,
    }

    impl std::ops::Deref for Flight {
        type Target = Rack;
        fn deref(&self) -> &Rack {
            &self.rack
        }
    }

    impl std::ops::DerefMut for Flight {
        fn deref_mut(&mut self) -> &mut Rack {
            &mut self.rack
        }
    }

    impl Flight {
        fn on_sent(&mut self, start: SeqNumber, end: SeqNumber, now: Instant) {
            self.sent.on_sent(start, end, false, now);
        }

        /// One ACK: the cumulative part, then the SACK blocks.
        fn on_ack(&mut self, now: Instant, una: SeqNumber, blocks: &[(SeqNumber, SeqNumber)]) {
            self.rack.begin_ack();
            let rack = &mut self.rack;
            self.sent
                .on_cumulative_ack(una, now, |s| rack.on_cumulative_ack(now, s));
            self.rack.on_sack(&mut self.sent, now, una, blocks);
        }

        fn detect_loss(&mut self, now: Instant, reo_wnd: Duration) -> Detection {
            self.rack.detect_loss(&mut self.sent, now, reo_wnd)
        }

        fn on_rto(&mut self) {
            self.rack.on_rto(&mut self.sent);
        }

        fn tracked(&self) -> usize {
            self.sent.len()
        }
    }

    /// Ten 100-byte segments sent 1 ms apart from t = 0.
    fn flight() -> Flight {
        let mut r = Flight::default();
        for i in 0..10u32 {
            r.on_sent(s(i * 100), s(i * 100 + 100), ms(i as u64));
        }
        r
    }

    #[test]
    fn later_delivery_marks_earlier_segment_lost_after_rtt_plus_window() {
        let mut r = flight();
        // Cumulative ACK of the first segment at 100 ms sets min_RTT = 100 ms.
        r.on_ack(ms(100), s(100), &[]);
        // Segment 2 (sent at 1 ms) is missing; segment 3 (sent at 2 ms) is SACKed at 102 ms.
        r.on_ack(ms(102), s(100), &[(s(200), s(300))]);
        let w = r.reo_wnd(false, false, Some(d(100)));
        assert_eq!(w, d(25), "min_RTT / 4");
        let det = r.detect_loss(ms(102), w);
        assert!(
            !det.newly_lost,
            "within RACK.rtt + reo_wnd it is not lost yet"
        );
        // Due at 1 + 100 + 25 = 126 ms: the timer asks to come back in 24 ms.
        assert_eq!(det.timeout, Some(d(24)));
        let det = r.detect_loss(ms(126), w);
        assert!(det.newly_lost);
        assert_eq!(r.lost_end(), Some(s(200)));
        // Segments sent after the SACKed one are not judged.
        assert_eq!(det.timeout, None);
    }

    #[test]
    fn reordering_seen_keeps_window_in_recovery_and_zero_otherwise() {
        let mut r = flight();
        r.on_ack(ms(100), s(100), &[]);
        r.on_ack(ms(102), s(100), &[(s(200), s(300))]);
        assert!(!r.reordering_seen());
        assert_eq!(r.reo_wnd(true, false, None), Duration::ZERO);
        assert_eq!(r.reo_wnd(false, true, None), Duration::ZERO);
        // The hole is filled by the original (never retransmitted): reordering.
        r.on_ack(ms(101), s(300), &[]);
        assert!(r.reordering_seen());
        assert_eq!(r.reo_wnd(true, true, Some(d(200))), d(25));
        // Capped at SRTT.
        assert_eq!(r.reo_wnd(true, true, Some(d(10))), d(10));
    }

    #[test]
    fn reord_seen_counts_an_ack_once_per_part_as_linux() {
        let mut r = flight();
        // SACK above a hole: no reordering yet.
        r.on_ack(ms(100), s(0), &[(s(200), s(300))]);
        assert_eq!(r.reord_seen(), 0);
        // A SACK below the highest SACKed: one, however many segments.
        r.on_ack(ms(101), s(0), &[(s(0), s(100)), (s(200), s(300))]);
        assert_eq!(r.reord_seen(), 1);
        // The cumulative ACK fills the rest of the hole: one more.
        r.on_ack(ms(102), s(300), &[]);
        assert_eq!(r.reord_seen(), 2);
        assert_eq!(r.reorder_bytes(), 300);
    }

    #[test]
    fn retransmission_is_judged_by_its_new_time_and_found_lost_again() {
        let mut r = flight();
        r.on_ack(ms(100), s(100), &[(s(200), s(300))]);
        let det = r.detect_loss(ms(200), Duration::ZERO);
        assert!(det.newly_lost && det.lost_rexmit.is_none());
        // Resent at 200 ms: no longer lost, and not older than RACK.xmit_ts.
        r.on_sent(s(100), s(200), ms(200));
        assert_eq!(r.detect_loss(ms(400), Duration::ZERO), Detection::default());
        // Later new data is delivered at 320 ms: the retransmission is lost too.
        r.on_sent(s(1000), s(1100), ms(210));
        r.on_ack(ms(320), s(100), &[(s(1000), s(1100))]);
        let det = r.detect_loss(ms(320), Duration::ZERO);
        assert_eq!(det.lost_rexmit, Some(s(100)));
        // An ACK arriving sooner than min_RTT after a retransmission is
        // ambiguous and does not move RACK.xmit_ts.
        r.on_sent(s(100), s(200), ms(330));
        r.on_ack(ms(331), s(200), &[]);
        assert_eq!(r.rack.latest, Some((ms(210), s(1100))));
    }

    #[test]
    fn dsack_widens_window_per_round_and_sixteen_recoveries_reset_it() {
        let mut r = flight();
        r.on_ack(ms(100), s(100), &[]);
        r.on_ack(ms(103), s(100), &[(s(300), s(400))]);
        r.on_ack(ms(104), s(200), &[]); // reordering seen
        assert!(r.reordering_seen());
        r.on_dsack_and_exit(true, false, s(200), s(1000));
        assert_eq!(r.reo_wnd_mult(), 2);
        // A second DSACK in the same round does not widen it again.
        r.on_dsack_and_exit(true, false, s(300), s(1000));
        assert_eq!(r.reo_wnd_mult(), 2);
        assert_eq!(r.reo_wnd(false, false, None), d(50));
        // Next round: widens again.
        r.on_dsack_and_exit(true, false, s(1000), s(2000));
        assert_eq!(r.reo_wnd_mult(), 3);
        for i in 0..15 {
            r.on_dsack_and_exit(false, true, s(3000), s(3000));
            assert_eq!(r.reo_wnd_mult(), 3, "after {} recoveries", i + 1);
        }
        r.on_dsack_and_exit(false, true, s(3000), s(3000));
        assert_eq!(r.reo_wnd_mult(), 1);
    }

    #[test]
    fn cumulative_ack_forgets_segments_and_lost_marks() {
        let mut r = flight();
        r.on_ack(ms(100), s(100), &[(s(300), s(400))]);
        r.detect_loss(ms(500), Duration::ZERO);
        assert_eq!(r.lost_end(), Some(s(300)));
        r.on_ack(ms(501), s(450), &[]);
        assert_eq!(r.lost_end(), None);
        assert_eq!(r.tracked(), 6, "segments 4 (trimmed) to 9 remain");
        r.on_rto();
        assert_eq!(r.lost_end(), None);
    }
}
