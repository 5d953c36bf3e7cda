//! Linux's skb boundaries in the send queue: tcp_sendmsg_locked cuts written
//! data into skbs of its size goal, and tcp_write_xmit never puts two skbs in
//! one packet, so a TSO packet (see [`crate::tso`]) ends where an skb does.
//!
//! Cut lazily, when data is about to be sent: a write that meets an unsent
//! tail skb with room fills it first (tcp_sendmsg_locked appends to the write
//! queue's tail), so cutting the queued bytes at once gives the same skbs as
//! cutting them write by write.
//!
//! Zerocopy data (MSG_ZEROCOPY) is held as pinned user pages, one page
//! fragment each, and an skb holds at most [`MAX_SKB_FRAGS`]: one that runs
//! out is pushed and the rest goes in a new skb. Copied data is not counted.

use std::collections::VecDeque;

/// Page fragments one skb holds (Linux include/linux/skbuff.h MAX_SKB_FRAGS,
/// CONFIG_MAX_SKB_FRAGS's default).
pub const MAX_SKB_FRAGS: usize = 17;

/// Zerocopy fragments remembered at most; beyond it data counts as copied
/// (Linux bounds them by charging each pinned page to the send buffer).
const MAX_QUEUED_FRAGS: usize = 65536;

/// Where the skbs of the send queue end, and where it was last cut.
#[derive(Debug, Default)]
pub struct SkbQueue {
    /// Stream offsets (exclusive ends) of skbs, ascending.
    ends: VecDeque<u64>,
    /// Offset up to which the queue is cut into skbs.
    cut: u64,
    /// Start of the last skb cut (the queue's tail skb).
    tail_start: u64,
    /// Zerocopy fragments, kept only while a connection has some queued.
    zerocopy: Option<Box<Frags>>,
}

/// The zerocopy fragments of the send queue.
#[derive(Debug, Default)]
struct Frags {
    /// Page fragments of queued data: (start, end) stream offsets,
    /// ascending and disjoint.
    pieces: VecDeque<(u64, u64)>,
    /// Ends of skbs that ran out of fragments, ascending.
    full: VecDeque<u64>,
}

impl SkbQueue {
    /// The SYN carried the first `end` bytes: they are an skb of their own
    /// (Linux tcp_send_syn_data).
    pub fn on_syn_data(&mut self, end: u64) {
        if end > self.cut {
            self.ends.push_back(end);
            self.cut = end;
            self.tail_start = end;
        }
    }

    /// The bytes queued just before `end` came as zerocopy pieces of these
    /// lengths, in order, each one page fragment (tcp_sendmsg_locked's
    /// skb_zerocopy_iter_stream pins each page of the caller's buffers).
    pub fn add_frags(&mut self, end: u64, lens: &[usize]) {
        let total: u64 = lens.iter().map(|&l| l as u64).sum();
        if end.saturating_sub(self.cut) == 0 || total == 0 {
            return;
        }
        let mut start = end.saturating_sub(total);
        let z = self.zerocopy.get_or_insert_with(Default::default);
        for &l in lens {
            let piece = (start, start + l as u64);
            start = piece.1;
            let after_last = z.pieces.back().is_none_or(|&(_, e)| e <= piece.0);
            if l > 0 && piece.1 > self.cut && after_last && z.pieces.len() < MAX_QUEUED_FRAGS {
                z.pieces.push_back(piece);
            }
        }
    }

    /// End of the `MAX_SKB_FRAGS`th zerocopy fragment overlapping an skb from
    /// `pos` to `skb_end`, when more than that many overlap it.
    fn frag_limit(&self, pos: u64, skb_end: u64) -> Option<u64> {
        let pieces = &self.zerocopy.as_ref()?.pieces;
        let first = pieces.partition_point(|&(_, e)| e <= pos);
        let mut overlapping = pieces.range(first..).take_while(|&&(s, _)| s < skb_end);
        let last_fitting = overlapping.nth(MAX_SKB_FRAGS - 1)?;
        overlapping.next()?;
        Some(last_fitting.1.min(skb_end))
    }

    /// Whether the skb ending at `off` ran out of fragments: it carries PSH
    /// (tcp_mark_push) and no later data shares a segment with it.
    pub fn is_full_end(&self, off: u64) -> bool {
        self.zerocopy
            .as_ref()
            .is_some_and(|z| z.full.binary_search(&off).is_ok())
    }

    /// First end of an skb that ran out of fragments strictly after `off`.
    pub fn next_full_end_after(&self, off: u64) -> Option<u64> {
        let full = &self.zerocopy.as_ref()?.full;
        full.get(full.partition_point(|&b| b <= off)).copied()
    }

    /// Cuts the bytes queued up to `end` into skbs of `goal` bytes; `sent` is
    /// the offset one past the last byte ever sent and `next_record_end(o)` the
    /// first MSG_EOR record end after `o`, which no skb spans. An unsent tail
    /// skb with room is refilled first (tcp_sendmsg_locked, tcp_skb_can_collapse_to).
    pub fn cut(
        &mut self,
        end: u64,
        sent: u64,
        goal: usize,
        next_record_end: impl Fn(u64) -> Option<u64>,
    ) {
        if end <= self.cut {
            return;
        }
        let goal = goal.max(1) as u64;
        let mut pos = self.cut;
        // What tso_fragment left of a partly sent tail skb is an skb of its own.
        let tail_from = self.tail_start.max(sent);
        if self.cut > tail_from
            && self.cut - tail_from < goal
            && next_record_end(self.cut - 1) != Some(self.cut)
            && !self.is_full_end(self.cut)
        {
            if self.ends.back() == Some(&self.cut) {
                self.ends.pop_back();
            }
            pos = tail_from;
        }
        while pos < end {
            let mut skb_end = (pos + goal).min(end);
            if let Some(e) = next_record_end(pos).filter(|&e| e < skb_end) {
                skb_end = e;
            }
            if let Some(e) = self.frag_limit(pos, skb_end) {
                // skb_zerocopy_iter_stream's -EMSGSIZE: tcp_mark_push, new skb.
                skb_end = e;
                if let Some(z) = self.zerocopy.as_mut() {
                    z.full.push_back(e);
                }
            }
            self.ends.push_back(skb_end);
            self.tail_start = pos;
            pos = skb_end;
        }
        self.cut = end;
    }

    /// Whether an skb ends at stream offset `off`.
    pub fn is_end(&self, off: u64) -> bool {
        self.ends.binary_search(&off).is_ok()
    }

    /// Forgets what lies at or before the acknowledged offset `head`.
    pub fn ack(&mut self, head: u64) {
        while self.ends.front().is_some_and(|&b| b <= head) {
            self.ends.pop_front();
        }
        if let Some(z) = self.zerocopy.as_mut() {
            while z.full.front().is_some_and(|&b| b <= head) {
                z.full.pop_front();
            }
            while z.pieces.front().is_some_and(|&(_, e)| e <= head) {
                z.pieces.pop_front();
            }
            if z.full.is_empty() && z.pieces.is_empty() {
                self.zerocopy = None;
            }
        }
    }
}

/// Linux's size goal in bytes: `segs` segments of `mss`, no more than half the
/// largest window the peer offered (all of it when that is under 536 bytes),
/// and at least one segment (tcp.c tcp_xmit_size_goal, tcp_bound_to_half_wnd).
pub fn size_goal(mss: usize, segs: u32, max_window: usize) -> usize {
    let mss = mss.max(1);
    let mut goal = (segs as usize).saturating_mul(mss);
    let cutoff = if max_window > 536 {
        max_window / 2
    } else {
        max_window
    };
    if cutoff > 0 && goal > cutoff {
        goal = cutoff;
    }
    (goal / mss * mss).max(mss)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_records(_: u64) -> Option<u64> {
        None
    }

    fn ends(q: &SkbQueue) -> Vec<u64> {
        q.ends.iter().copied().collect()
    }

    #[test]
    fn a_long_write_is_cut_at_the_goal() {
        let mut q = SkbQueue::default();
        q.cut(7000, 0, 2000, no_records);
        assert_eq!(ends(&q), [2000, 4000, 6000, 7000]);
        assert!(q.is_end(4000));
        assert!(!q.is_end(5000));
    }

    #[test]
    fn a_write_meeting_an_unsent_tail_fills_it() {
        let mut q = SkbQueue::default();
        q.cut(500, 0, 2000, no_records);
        q.cut(1000, 0, 2000, no_records);
        assert_eq!(ends(&q), [1000]);
    }

    #[test]
    fn a_sent_tail_is_not_refilled() {
        let mut q = SkbQueue::default();
        q.cut(500, 0, 2000, no_records);
        q.cut(1000, 500, 2000, no_records);
        assert_eq!(ends(&q), [500, 1000]);
    }

    #[test]
    fn a_partly_sent_tail_is_refilled_from_what_is_unsent() {
        let mut q = SkbQueue::default();
        q.cut(1500, 0, 2000, no_records);
        q.cut(4000, 1000, 2000, no_records);
        assert_eq!(ends(&q), [3000, 4000]);
    }

    #[test]
    fn a_record_end_is_never_crossed_nor_refilled() {
        let mut q = SkbQueue::default();
        let eor = |o: u64| (o < 500).then_some(500);
        q.cut(500, 0, 2000, eor);
        q.cut(800, 0, 2000, eor);
        assert_eq!(ends(&q), [500, 800]);
        let mut q = SkbQueue::default();
        q.cut(3000, 0, 2000, |o| (o < 700).then_some(700));
        assert_eq!(ends(&q), [700, 2700, 3000]);
    }

    #[test]
    fn syn_data_is_an_skb_of_its_own() {
        let mut q = SkbQueue::default();
        q.on_syn_data(1420);
        q.cut(5000, 1420, 2920, no_records);
        assert_eq!(ends(&q), [1420, 4340, 5000]);
    }

    #[test]
    fn acknowledged_ends_are_forgotten() {
        let mut q = SkbQueue::default();
        q.cut(4000, 0, 2000, no_records);
        q.ack(2000);
        assert!(!q.is_end(2000));
        assert!(q.is_end(4000));
    }

    #[test]
    fn an_skb_out_of_fragments_ends_and_is_pushed() {
        let mut q = SkbQueue::default();
        q.add_frags(40, &[1; 40]);
        q.cut(40, 0, 2000, no_records);
        assert_eq!(ends(&q), [17, 34, 40]);
        assert!(q.is_full_end(17) && q.is_full_end(34) && !q.is_full_end(40));
        assert_eq!(q.next_full_end_after(17), Some(34));
        q.ack(20);
        assert!(!q.is_full_end(17));
        assert_eq!(q.next_full_end_after(0), Some(34));
    }

    #[test]
    fn fragments_count_again_in_each_skb() {
        let mut q = SkbQueue::default();
        q.add_frags(4000, &[200; 20]);
        q.cut(4000, 0, 2000, no_records);
        assert_eq!(ends(&q), [2000, 4000]);
        assert_eq!(q.next_full_end_after(0), None);
        // A page cut by the size goal is a fragment in both skbs.
        let mut lens = vec![1001];
        lens.extend([1; 17]);
        let mut q = SkbQueue::default();
        q.add_frags(1018, &lens);
        q.cut(1018, 0, 1000, no_records);
        assert_eq!(ends(&q), [1000, 1017, 1018]);
    }

    #[test]
    fn a_full_tail_is_not_refilled_and_copied_data_counts_no_fragment() {
        let mut q = SkbQueue::default();
        q.add_frags(18, &[1; 18]);
        q.cut(18, 0, 2000, no_records);
        // 500 copied bytes join the unsent tail skb of one fragment.
        q.cut(518, 0, 2000, no_records);
        assert_eq!(ends(&q), [17, 518]);
    }

    #[test]
    fn size_goal_is_bounded_by_half_the_window() {
        assert_eq!(size_goal(1000, 2, 65535), 2000);
        assert_eq!(size_goal(1460, 2, 5840), 2920);
        assert_eq!(size_goal(1460, 10, 5840), 2920);
        assert_eq!(size_goal(1460, 2, 2000), 1460);
        assert_eq!(size_goal(1000, 2, 0), 2000);
        assert_eq!(size_goal(974, 2, 500), 974);
    }
}
