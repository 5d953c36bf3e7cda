//! RFC 1106 section 2 NAKs: the receiver names the first missing byte of a gap
//! and how many MSS-sized segments are missing, never repeating itself (2.1);
//! the sender resends the named data at once and carries on where it was.

use crate::seq::SeqNumber;
use std::collections::VecDeque;

/// RFC 1106 2.1: the receiver's memory of what it has NAKed.
#[derive(Debug, Clone, Default)]
pub struct NakReceiver {
    /// Stream offset one past the last byte any NAK named.
    naked_upto: u64,
}

impl NakReceiver {
    /// RFC 1106 2.1: data arrived beyond the gap [gap_start, gap_end) (stream
    /// offsets). Returns the NAK to send as (first missing offset, segment
    /// count), or `None` when every byte of the gap was NAKed before.
    pub fn on_gap(&mut self, gap_start: u64, gap_end: u64, mss: usize) -> Option<(u64, u8)> {
        let start = gap_start.max(self.naked_upto);
        if start >= gap_end {
            return None;
        }
        let mss = mss.max(1) as u64;
        let count = (gap_end - start).div_ceil(mss).min(u64::from(u8::MAX));
        self.naked_upto = gap_end.min(start + count * mss);
        Some((start, count as u8))
    }
}

/// RFC 1106 2.1: the sender's queue of NAKed ranges still to resend.
#[derive(Debug, Clone, Default)]
pub struct NakSender {
    queue: VecDeque<(SeqNumber, SeqNumber)>,
}

impl NakSender {
    /// Queues [start, end) for retransmission (merged with the last range if they touch).
    pub fn push(&mut self, start: SeqNumber, end: SeqNumber) {
        if let Some(last) = self.queue.back_mut() {
            if start >= last.0 && start <= last.1 {
                last.1 = last.1.max(end);
                return;
            }
        }
        self.queue.push_back((start, end));
    }

    /// The next piece to resend, at most `mss` bytes, skipping what `snd_una`
    /// has acknowledged since. Removes it from the queue.
    pub fn next(&mut self, snd_una: SeqNumber, mss: usize) -> Option<(SeqNumber, usize)> {
        while let Some(&(s, e)) = self.queue.front() {
            let s = s.max(snd_una);
            if s >= e {
                self.queue.pop_front();
                continue;
            }
            let len = e.distance_from(s).min(mss);
            if len == e.distance_from(s) {
                self.queue.pop_front();
            } else {
                self.queue[0].0 = s + len;
            }
            return Some((s, len));
        }
        None
    }

    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// Sequence space still queued for resending (bounds the segments it yields).
    pub fn queued_bytes(&self) -> usize {
        self.queue.iter().map(|&(s, e)| e.distance_from(s)).sum()
    }

    /// A timeout resends everything anyway (go-back-N).
    pub fn clear(&mut self) {
        self.queue.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn receiver_never_repeats_a_nak() {
        let mut r = NakReceiver::default();
        assert_eq!(r.on_gap(0, 1000, 1000), Some((0, 1)));
        assert_eq!(r.on_gap(0, 1000, 1000), None);
        // A burst: three segments missing beyond the first gap.
        assert_eq!(r.on_gap(2000, 5000, 1000), Some((2000, 3)));
        assert_eq!(r.on_gap(2000, 5000, 1000), None);
        // A partial segment still counts as one.
        assert_eq!(r.on_gap(6000, 6500, 1000), Some((6000, 1)));
    }

    #[test]
    fn receiver_caps_the_count() {
        let mut r = NakReceiver::default();
        assert_eq!(r.on_gap(0, 300, 1), Some((0, 255)));
        assert_eq!(r.on_gap(0, 300, 1), Some((255, 45)));
    }

    #[test]
    fn sender_splits_by_mss_and_skips_acked() {
        let mut s = NakSender::default();
        s.push(SeqNumber(100), SeqNumber(350));
        assert_eq!(s.next(SeqNumber(0), 100), Some((SeqNumber(100), 100)));
        assert_eq!(s.next(SeqNumber(250), 100), Some((SeqNumber(250), 100)));
        assert_eq!(s.next(SeqNumber(250), 100), None);
        assert!(s.is_empty());
    }
}
