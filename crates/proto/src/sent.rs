//! The sender's one record of the segments it sent and has not yet had
//! cumulatively acknowledged, keyed by sequence range as each range was
//! first sent. Three readers share it: RACK's per-segment variables (RFC 8985
//! 6.1), the congestion module's per-ACK RTT sample that HyStart and CUBIC
//! read (Linux tcp_input.c tcp_clean_rtx_queue, ca_rtt_us), and the count
//! of segments delivered (Linux's tp->delivered, TCP_INFO's tcpi_delivered).
//!
//! Only the cumulative ACK removes entries, and an entry is made only for
//! sequence space sent beyond the last one, so the record never holds more
//! entries than sequence numbers in flight (SND.MAX - SND.UNA), which the
//! send buffer bounds; nothing a peer sends adds an entry.

use std::collections::VecDeque;

use crate::seq::SeqNumber;
use crate::time::{Duration, Instant};

/// One range of sequence space as first sent: data, a FIN, or data and FIN.
#[derive(Debug, Clone, Copy)]
pub struct Sent {
    /// First sequence number not yet cumulatively acknowledged.
    pub(crate) start: SeqNumber,
    /// End of the range, the FIN's sequence number included.
    pub(crate) end: SeqNumber,
    /// When the range first went out (the congestion module's sample, which
    /// Karn's rule keeps to ranges never resent).
    pub(crate) first_sent: Instant,
    /// RFC 8985 6.1 Segment.xmit_ts: when it last went out.
    pub(crate) last_sent: Instant,
    /// RFC 8985 6.1 Segment.retransmitted: some retransmission covered it,
    /// a FIN sent again alone included.
    pub(crate) rexmit: bool,
    /// A retransmission carried this range's data (Karn's rule for the
    /// congestion module's sample, RFC 6298 3; a bare FIN resent does not count).
    pub(crate) data_rexmit: bool,
    /// The range ends with our FIN.
    pub(crate) fin: bool,
    /// Its end is the end of a segment counted once delivered (Linux counts
    /// a Fast Open SYN's data as one segment, however it is resent).
    pub(crate) counted: bool,
    /// Delivered by a SACK block, not yet by the cumulative ACK.
    pub(crate) sacked: bool,
    /// RFC 8985 6.1 Segment.lost: marked lost and not retransmitted since.
    pub(crate) lost: bool,
    /// Marked lost at some point and not delivered since, retransmitted or
    /// not (Linux's TCPCB_LOST, counted in lost_out / tcpi_lost).
    pub(crate) marked_lost: bool,
    /// Retransmitted and neither delivered nor marked lost again since
    /// (Linux's TCPCB_SACKED_RETRANS, counted in retrans_out / tcpi_retrans).
    pub(crate) rexmit_out: bool,
}

impl Sent {
    /// Where its data ends (before the FIN).
    fn data_end(&self) -> SeqNumber {
        if self.fin {
            self.end - 1
        } else {
            self.end
        }
    }

    /// Whether any of its data is not yet cumulatively acknowledged.
    fn has_data(&self) -> bool {
        self.data_end() > self.start
    }
}

/// What a cumulative ACK took off the record.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Acked {
    /// RTT from the first send of the newest data the ACK covers, wholly or in
    /// part; none if any data it covers was resent (Linux's ca_rtt_us, Karn).
    pub rtt: Option<Duration>,
    /// Segments whose end it acknowledged (Linux's tp->delivered increment).
    pub segments: u64,
}

/// Transmitted, not cumulatively acknowledged sequence space (see the module docs).
#[derive(Debug, Clone, Default)]
pub struct SentRecord {
    /// Data and FIN ranges in sequence order.
    segs: VecDeque<Sent>,
    /// Ends of the handshake's segments not yet acknowledged, counted once
    /// delivered: the SYN's, then that of the data a Fast Open SYN carried.
    syn_end: Option<SeqNumber>,
    syn_data_end: Option<SeqNumber>,
}

impl SentRecord {
    /// Entries held (Linux's packets_out).
    pub fn len(&self) -> usize {
        self.segs.len()
    }

    /// Whether nothing sent is outstanding.
    pub fn is_empty(&self) -> bool {
        self.segs.is_empty()
    }

    /// Whether data is in flight (a FIN alone does not count): Linux's
    /// tcp_event_data_sent starts a transmission after idle when none is.
    pub fn data_in_flight(&self) -> bool {
        // Only the last entry can end with the FIN, so a front without data is alone.
        self.segs.front().is_some_and(Sent::has_data)
    }

    /// The entries, in sequence order.
    pub fn iter(&self) -> impl Iterator<Item = &Sent> {
        self.segs.iter()
    }

    pub(crate) fn iter_mut(&mut self) -> impl Iterator<Item = &mut Sent> {
        self.segs.iter_mut()
    }

    /// The entries overlapping [l, r).
    pub(crate) fn overlapping_mut(
        &mut self,
        l: SeqNumber,
        r: SeqNumber,
    ) -> impl Iterator<Item = &mut Sent> {
        let i = self.segs.partition_point(|s| s.end <= l);
        self.segs.range_mut(i..).take_while(move |s| s.start < r)
    }

    /// The SYN (or SYN-ACK) ending at `end` went out: counted once
    /// delivered, if it is the connection's first (Linux counts a passive
    /// open's in tcp_rcv_state_process, SYN-RECV).
    pub fn on_syn_sent(&mut self, end: SeqNumber) {
        if self.syn_end.is_none() && self.syn_data_end.is_none() && self.segs.is_empty() {
            self.syn_end = Some(end);
        }
    }

    /// A Fast Open SYN carried data up to `end`: Linux queues it as a
    /// segment of its own (tcp_send_syn_data).
    pub fn on_syn_data_sent(&mut self, end: SeqNumber) {
        self.syn_data_end = Some(end);
    }

    /// tcp_rcv_fastopen_synack: the SYN and its data, acknowledged
    /// together, count as one delivered segment; the SYN's own end is dropped.
    pub fn on_syn_acked_with_data(&mut self) {
        if self.syn_end.take().is_none() {
            self.syn_data_end = None;
        }
    }

    /// Handshake segments SND.UNA = `una` now covers, in order; returns how many.
    pub fn on_handshake_ack(&mut self, una: SeqNumber) -> u64 {
        let mut n = 0;
        for end in [&mut self.syn_end, &mut self.syn_data_end] {
            match *end {
                Some(e) if e <= una => {
                    *end = None;
                    n += 1;
                }
                Some(_) => break,
                None => {}
            }
        }
        n
    }

    /// [start, end) went out at `now`, `fin` if it ends with our FIN (RFC
    /// 8985 6.1). Space beyond the last entry becomes a new one; a
    /// retransmission marks (and re-times, for RACK) the entries it covers.
    pub fn on_sent(&mut self, start: SeqNumber, end: SeqNumber, fin: bool, now: Instant) {
        if start >= end {
            return;
        }
        let data_end = if fin { end - 1 } else { end };
        let mut from = start;
        if let Some(tail) = self.segs.back().map(|s| s.end).filter(|&t| start < t) {
            for s in self.overlapping_mut(start, end) {
                s.last_sent = now;
                s.rexmit = true;
                s.rexmit_out = true;
                s.lost = false;
                if s.has_data() && s.start < data_end && s.data_end() > start {
                    s.data_rexmit = true;
                }
            }
            from = tail;
        }
        if from < end {
            let counted = [self.syn_end, self.syn_data_end]
                .into_iter()
                .flatten()
                .all(|h| end > h);
            self.segs.push_back(Sent {
                start: from,
                end,
                first_sent: now,
                last_sent: now,
                rexmit: false,
                data_rexmit: false,
                fin,
                counted,
                sacked: false,
                lost: false,
                marked_lost: false,
                rexmit_out: false,
            });
        }
    }

    /// SND.UNA moved to `una` at `now`: removes what it covers, trims an
    /// entry it covers in part, and hands each removed entry to `delivered`
    /// (RACK's steps 2-3 for the cumulative ACK).
    pub fn on_cumulative_ack(
        &mut self,
        una: SeqNumber,
        now: Instant,
        mut delivered: impl FnMut(&Sent),
    ) -> Acked {
        let mut newest = None;
        let mut resent = false;
        let mut segments = 0;
        while let Some(s) = self.segs.front_mut() {
            if s.start >= una {
                break;
            }
            if s.has_data() {
                resent |= s.data_rexmit;
                newest = Some(s.first_sent);
            }
            if s.end > una {
                s.start = una;
                break;
            }
            let s = *s;
            self.segs.pop_front();
            segments += s.counted as u64;
            delivered(&s);
        }
        Acked {
            rtt: newest
                .filter(|_| !resent)
                .map(|at| now.saturating_duration_since(at)),
            segments,
        }
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

    fn ack(r: &mut SentRecord, una: u32, at: u64) -> Acked {
        r.on_cumulative_ack(s(una), ms(at), |_| {})
    }

    #[test]
    fn rtt_from_the_newest_segment_acked_and_none_after_a_retransmission() {
        let mut r = SentRecord::default();
        r.on_sent(s(0), s(1000), false, ms(0));
        r.on_sent(s(1000), s(2000), false, ms(10));
        r.on_sent(s(2000), s(3000), false, ms(20));
        // Covers the first two: the sample is from the second's send time.
        assert_eq!(ack(&mut r, 2000, 110).rtt, Some(Duration::from_millis(100)));
        // A partial ACK samples the segment it reaches into.
        assert_eq!(ack(&mut r, 2500, 125).rtt, Some(Duration::from_millis(105)));
        r.on_sent(s(3000), s(4000), false, ms(130));
        r.on_sent(s(2500), s(3000), false, ms(140)); // retransmitted
        assert_eq!(ack(&mut r, 4000, 200).rtt, None);
        assert!(r.is_empty());
    }

    #[test]
    fn a_fin_resent_alone_is_no_retransmission_of_the_data_before_it() {
        let mut r = SentRecord::default();
        r.on_sent(s(0), s(101), true, ms(0));
        assert!(r.data_in_flight());
        r.on_sent(s(100), s(101), true, ms(50));
        let seg = *r.iter().next().unwrap();
        assert!(
            seg.rexmit && !seg.data_rexmit,
            "RACK sees it resent, Karn does not"
        );
        assert_eq!(seg.last_sent, ms(50));
        // The data's ACK samples its first send; the FIN is left alone.
        let a = ack(&mut r, 100, 80);
        assert_eq!((a.rtt, a.segments), (Some(Duration::from_millis(80)), 0));
        assert!(!r.data_in_flight() && r.len() == 1);
        // The FIN's ACK gives no sample and ends the segment.
        let a = ack(&mut r, 101, 90);
        assert_eq!((a.rtt, a.segments), (None, 1));
    }

    #[test]
    fn delivered_counts_segment_ends_and_fast_open_data_once() {
        let mut r = SentRecord::default();
        r.on_syn_sent(s(1));
        r.on_syn_data_sent(s(501));
        r.on_syn_sent(s(1)); // a retransmitted SYN adds nothing
                             // The SYN-ACK covers the SYN and 200 bytes: the SYN counts.
        assert_eq!(r.on_handshake_ack(s(201)), 1);
        // The rest of the SYN's data goes again as two segments, then new data.
        r.on_sent(s(201), s(401), false, ms(10));
        r.on_sent(s(401), s(501), false, ms(10));
        r.on_sent(s(501), s(601), false, ms(10));
        let a = ack(&mut r, 501, 20);
        assert_eq!(a.segments, 0, "the SYN's data ends at its own end");
        assert_eq!(r.on_handshake_ack(s(501)), 1);
        assert_eq!(ack(&mut r, 601, 30).segments, 1);
        // Acknowledged with the SYN, SYN and data count once.
        let mut r = SentRecord::default();
        r.on_syn_sent(s(1));
        r.on_syn_data_sent(s(501));
        r.on_syn_acked_with_data();
        assert_eq!(r.on_handshake_ack(s(501)), 1);
    }

    #[test]
    fn entries_never_outnumber_the_sequence_space_in_flight() {
        let mut r = SentRecord::default();
        // One-byte segments, resent many times over, acknowledged a byte at a time.
        for i in 0..100u32 {
            r.on_sent(s(i), s(i + 1), false, ms(i as u64));
        }
        for round in 0..10u32 {
            r.on_sent(s(0), s(100), false, ms(200 + round as u64));
        }
        assert_eq!(r.len(), 100);
        for una in 1..=100u32 {
            ack(&mut r, una, 400);
            assert!(r.len() <= (100 - una) as usize);
        }
        assert!(r.is_empty());
    }
}
