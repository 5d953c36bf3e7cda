//! The send buffer: bytes written by the application and not yet acknowledged,
//! plus where each application write ended ("end of application data",
//! Doupnik 2.0), which sets PSH and drives the send policies.

use std::cell::Cell;
use std::collections::VecDeque;

/// Unacknowledged and unsent bytes, addressed by stream offset (bytes since the
/// connection's first data byte; never wraps).
#[derive(Debug, Default)]
pub struct SendBuffer {
    data: VecDeque<u8>,
    /// Stream offset of `data[0]`: bytes already acknowledged.
    head: u64,
    /// Stream offsets (exclusive ends) where application data ends, ascending,
    /// all greater than `head`.
    boundaries: VecDeque<u64>,
    /// Index into `boundaries` of the last [`SendBuffer::next_boundary_after`]
    /// answer: SND.NXT walks forward, so the next answer is nearly always
    /// there or one further, found without a search. A hint only (every
    /// answer is checked), so 32 bits, which fit beside `cut_short`.
    finger: Cell<u32>,
    /// Offset up to which the application flushed explicitly (uncork).
    flushed: u64,
    /// The last write did not fit: the application has the rest of it to
    /// write, so the queue's tail is not pushed (BSD's TF_MORETOCOME).
    cut_short: bool,
    /// Stream offsets (exclusive ends) of records closed with MSG_EOR,
    /// ascending, all greater than `head`: no segment, new or resent, spans
    /// one (Linux's TCP_SKB_CB(skb)->eor, tcp_skb_can_collapse_to).
    records: VecDeque<u64>,
}

impl SendBuffer {
    /// Hints the CPU to fetch the oldest queued bytes and write boundaries,
    /// what sending and acknowledging touch first ([`crate::prefetch`]).
    pub(crate) fn prefetch_heap(&self) {
        let (bytes, _) = self.data.as_slices();
        crate::prefetch::prefetch_bytes(bytes.as_ptr(), bytes.len().min(128));
        let (ends, _) = self.boundaries.as_slices();
        crate::prefetch::prefetch_bytes(ends.as_ptr().cast(), core::mem::size_of_val(ends).min(64));
    }

    /// An empty buffer; its limit is the connection's (`Config::snd_buf`).
    pub fn new() -> Self {
        Self::default()
    }

    /// Stream offset of the first unacknowledged byte.
    pub fn head(&self) -> u64 {
        self.head
    }
    /// Stream offset one past the last written byte.
    pub fn end(&self) -> u64 {
        self.head + self.data.len() as u64
    }
    /// Bytes held (unacknowledged, sent or not).
    pub fn len(&self) -> usize {
        self.data.len()
    }
    /// Bytes of memory held now (grows with what is written, 0 before).
    pub fn allocated(&self) -> usize {
        self.data.capacity()
    }
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }
    /// Appends what fits in `room` (the connection decides what its limit
    /// counts); records an end of application data after it unless
    /// `more_follows` (MSG_MORE) or nothing was taken.
    pub fn write(&mut self, bytes: &[u8], more_follows: bool, room: usize) -> usize {
        let n = bytes.len().min(room);
        self.data.extend(&bytes[..n]);
        if n == bytes.len() {
            self.cut_short = false;
            if !more_follows {
                self.mark_boundary();
            }
        } else if n > 0 {
            self.cut_short = true;
        }
        n
    }

    /// Whether the last write was cut short by a full buffer, so the rest of
    /// it is still to come (and no later write or flush has ended the queue).
    pub fn write_cut_short(&self) -> bool {
        self.cut_short && !self.ends_with_boundary()
    }

    /// Ends the current data set at the last written byte (an explicit flush).
    pub fn mark_boundary(&mut self) {
        let end = self.end();
        if end > self.head && self.boundaries.back() != Some(&end) {
            self.boundaries.push_back(end);
        }
    }

    /// An explicit flush: ends the data set and releases corked data.
    pub fn flush(&mut self) {
        self.mark_boundary();
        self.flushed = self.end();
    }

    /// Releases corked data without ending the data set: no PSH for it
    /// (Linux's tcp_push_pending_frames).
    pub fn push(&mut self) {
        self.flushed = self.end();
    }

    /// Offset up to which data was flushed explicitly.
    pub fn flushed(&self) -> u64 {
        self.flushed
    }

    /// Drops `n` acknowledged bytes from the front.
    pub fn ack(&mut self, n: usize) {
        let n = n.min(self.data.len());
        self.data.drain(..n);
        self.head += n as u64;
        while self.boundaries.front().is_some_and(|&b| b <= self.head) {
            self.boundaries.pop_front();
            self.finger.set(self.finger.get().saturating_sub(1));
        }
        while self.records.front().is_some_and(|&b| b <= self.head) {
            self.records.pop_front();
        }
    }

    /// Ends a record at the last written byte (send(2) MSG_EOR): later data
    /// never shares a segment with it (Linux tcp_sendmsg_locked sets
    /// TCP_SKB_CB(skb)->eor, which tcp_skb_can_collapse_to then refuses).
    pub fn mark_record_end(&mut self) {
        let end = self.end();
        if end > self.head && self.records.back() != Some(&end) {
            self.records.push_back(end);
        }
    }

    /// First record end (MSG_EOR) strictly after stream offset `off`.
    pub fn next_record_end_after(&self, off: u64) -> Option<u64> {
        let i = self.records.partition_point(|&b| b <= off);
        self.records.get(i).copied()
    }

    /// First end of application data strictly after stream offset `off`.
    /// One queued boundary per write, so thousands with small writes and large
    /// buffers, and this runs twice per segment: the last answer's place and
    /// the one after it are tried before a binary search.
    pub fn next_boundary_after(&self, off: u64) -> Option<u64> {
        let b = &self.boundaries;
        // `i` answers `off` when every boundary before it is <= off and the
        // one at it (if any) is beyond.
        let answers = |i: usize| {
            i <= b.len() && (i == 0 || b[i - 1] <= off) && b.get(i).is_none_or(|&e| e > off)
        };
        let f = self.finger.get() as usize;
        let i = if answers(f) {
            f
        } else if answers(f + 1) {
            f + 1
        } else {
            b.partition_point(|&e| e <= off)
        };
        self.finger.set(u32::try_from(i).unwrap_or(u32::MAX));
        b.get(i).copied()
    }

    /// Whether `off` is exactly an end of application data (binary search).
    pub fn is_boundary(&self, off: u64) -> bool {
        self.boundaries.binary_search(&off).is_ok()
    }

    /// Whether the last written byte ends application data (the queue is pushed).
    pub fn ends_with_boundary(&self) -> bool {
        self.boundaries.back() == Some(&self.end())
    }

    /// Copies `len` bytes starting at stream offset `off` into `out` (appending).
    pub fn copy_out(&self, off: u64, len: usize, out: &mut Vec<u8>) {
        debug_assert!(off >= self.head && off + len as u64 <= self.end());
        let start = (off - self.head) as usize;
        let (a, b) = self.data.as_slices();
        if start < a.len() {
            let take = len.min(a.len() - start);
            out.extend_from_slice(&a[start..start + take]);
            if take < len {
                out.extend_from_slice(&b[..len - take]);
            }
        } else {
            let s = start - a.len();
            out.extend_from_slice(&b[s..s + len]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes what fits under a limit of `cap` queued bytes.
    fn put(b: &mut SendBuffer, bytes: &[u8], more: bool, cap: usize) -> usize {
        let room = cap.saturating_sub(b.len());
        b.write(bytes, more, room)
    }

    #[test]
    fn boundaries_follow_writes() {
        let mut b = SendBuffer::new();
        assert_eq!(put(&mut b, b"hello", false, 100), 5);
        assert_eq!(put(&mut b, b"wor", true, 100), 3);
        assert_eq!(put(&mut b, b"ld", false, 100), 2);
        assert!(b.is_boundary(5));
        assert!(!b.is_boundary(8));
        assert_eq!(b.next_boundary_after(5), Some(10));
        b.ack(6);
        assert_eq!(b.next_boundary_after(0), Some(10));
        let mut out = Vec::new();
        b.copy_out(6, 4, &mut out);
        assert_eq!(out, b"orld");
    }

    /// The searches agree with a linear scan over many queued writes, queried
    /// in any order, including after acknowledgements drop boundaries from the
    /// front.
    #[test]
    fn boundary_search_matches_linear_scan() {
        let mut b = SendBuffer::new();
        let mut ends = Vec::new();
        for i in 0..500u64 {
            let n = 1 + (i * 7919 % 13) as usize;
            put(&mut b, &vec![0u8; n], i % 5 == 3, 1 << 16);
            if i % 5 != 3 {
                ends.push(b.end());
            }
        }
        for acked in [0usize, 1, 37, 400] {
            b.ack(acked);
            ends.retain(|&e| e > b.head());
            // Forward (the finger's usual walk), backward, and in long jumps.
            let offs: Vec<u64> = (b.head()..=b.end() + 1)
                .chain((b.head()..=b.end() + 1).rev())
                .chain((0..2000u64).map(|k| b.head() + k * 7907 % (b.len() as u64 + 2)))
                .collect();
            for off in offs {
                let want = ends.iter().copied().find(|&e| e > off);
                assert_eq!(b.next_boundary_after(off), want, "after {off}");
                assert_eq!(b.is_boundary(off), ends.contains(&off), "at {off}");
            }
        }
        assert!(b.ends_with_boundary());
        put(&mut b, b"x", true, 1 << 16);
        assert!(!b.ends_with_boundary());
    }

    #[test]
    fn a_write_that_does_not_fit_is_cut_short_until_completed_or_flushed() {
        let mut b = SendBuffer::new();
        assert_eq!(put(&mut b, b"0123456789abc", false, 10), 10);
        assert!(b.write_cut_short());
        assert!(!b.ends_with_boundary());
        // A full buffer takes nothing and leaves the write cut short.
        assert_eq!(put(&mut b, b"abc", false, 10), 0);
        assert!(b.write_cut_short());
        b.ack(5);
        assert_eq!(put(&mut b, b"abc", false, 10), 3);
        assert!(!b.write_cut_short());
        assert!(b.ends_with_boundary());
        b.ack(8);
        assert_eq!(put(&mut b, b"0123456789abc", false, 10), 10);
        b.flush();
        assert!(!b.write_cut_short(), "a flush pushes the tail");
    }

    #[test]
    fn capacity_limits_write_and_partial_write_has_no_boundary() {
        let mut b = SendBuffer::new();
        assert_eq!(put(&mut b, b"abcdef", false, 4), 4);
        assert_eq!(b.next_boundary_after(0), None);
        b.mark_boundary();
        assert_eq!(b.next_boundary_after(0), Some(4));
        assert_eq!(put(&mut b, b"g", false, 4), 0);
    }

    #[test]
    fn record_ends_survive_until_acknowledged() {
        let mut b = SendBuffer::new();
        put(&mut b, &[0; 10], false, 100);
        b.mark_record_end();
        put(&mut b, &[0; 5], false, 100);
        assert_eq!(b.next_record_end_after(0), Some(10));
        assert_eq!(b.next_record_end_after(10), None);
        b.mark_record_end();
        assert_eq!(b.next_record_end_after(10), Some(15));
        b.ack(10);
        assert_eq!(b.next_record_end_after(0), Some(15));
        b.ack(5);
        assert_eq!(b.next_record_end_after(0), None);
    }

    #[test]
    fn copy_across_ring_wrap() {
        let mut b = SendBuffer::new();
        put(&mut b, b"abcdefgh", false, 8);
        b.ack(6);
        put(&mut b, b"ijkl", false, 8);
        let mut out = Vec::new();
        b.copy_out(6, 6, &mut out);
        assert_eq!(out, b"ghijkl");
    }
}
