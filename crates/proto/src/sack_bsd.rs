//! The receiver's SACK list kept the way FreeBSD keeps it (tcp_sack.c
//! tcp_update_sack_list, tcp_update_dsack_list, tcp_clean_dsack_blocks),
//! with D-SACK (RFC 2883): a duplicate segment is reported in the first
//! block, followed by the block it falls in (RFC 2883 4.1.2), then the other
//! blocks, most recent first (RFC 2018 4). Positions are stream offsets
//! (bytes since the peer's ISN + 1), so no wrap-around arithmetic is needed.

/// FreeBSD's MAX_SACK_BLKS: blocks remembered (tcp_var.h).
pub const MAX_BLOCKS: usize = 6;

/// The receiver's SACK blocks, first reported first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BsdSackList {
    blocks: Vec<(u64, u64)>,
}

impl BsdSackList {
    /// The blocks to report, first to last.
    pub fn blocks(&self) -> &[(u64, u64)] {
        &self.blocks
    }

    /// Whether there is anything to report.
    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }

    /// Forgets everything (a new connection).
    pub fn clear(&mut self) {
        self.blocks.clear();
    }

    /// New data `[start, end)` arrived out of order, or `[start, end)` below
    /// `rcv_nxt` was a duplicate: it goes first, merged with the blocks it
    /// touches; blocks `rcv_nxt` has passed are dropped (tcp_update_sack_list).
    pub fn update(&mut self, rcv_nxt: u64, start: u64, end: u64) {
        let mut head = (start, end);
        let mut saved: Vec<(u64, u64)> = Vec::with_capacity(MAX_BLOCKS);
        let push = |saved: &mut Vec<(u64, u64)>, b: (u64, u64)| {
            // A block that covers the last one saved replaces it.
            if saved.last().is_some_and(|l| l.0 >= b.0 && l.1 <= b.1) {
                saved.pop();
            }
            saved.push(b);
        };
        for &(s, e) in &self.blocks {
            if s >= e || s <= rcv_nxt {
                continue;
            }
            if head.0 <= e && head.1 >= s {
                if head.0 == e {
                    head.0 = s;
                } else if head.1 == s {
                    head.1 = e;
                } else {
                    // One contains the other: the smaller is the duplicate
                    // and stays first; the larger is kept behind it.
                    let (lo, hi) = (s.min(head.0), e.max(head.1));
                    head = (s.max(head.0), e.min(head.1));
                    if (lo, hi) != head {
                        push(&mut saved, (lo, hi));
                    }
                }
            } else {
                push(&mut saved, (s, e));
            }
        }
        let mut out = Vec::with_capacity(MAX_BLOCKS);
        if start < end {
            out.push(head);
            saved.truncate(MAX_BLOCKS - 1);
        }
        out.extend(saved);
        self.blocks = out;
    }

    /// `[start, end)` arrived: if it overlaps data already held (or is below
    /// `rcv_nxt`), that overlap is reported first as a D-SACK, then the block
    /// the segment now belongs to, then the rest (tcp_update_dsack_list).
    pub fn update_dsack(&mut self, rcv_nxt: u64, start: u64, end: u64) {
        let first_ends_at_nxt = self.blocks.first().is_some_and(|b| b.1 == rcv_nxt);
        let mut dsack = if end < rcv_nxt || (end == rcv_nxt && first_ends_at_nxt) {
            (start, end)
        } else {
            (0, 0)
        };
        let mut head: Option<(u64, u64)> = None;
        let mut mid = (start, end);
        let mut identical = false;
        for &(s, e) in &self.blocks {
            if end < s || start > e {
                continue;
            }
            if rcv_nxt > e {
                let (lo, hi) = (start.max(s), end.min(e));
                if lo != hi && head.is_none_or(|h| h.0 > lo) {
                    head = Some((lo, hi));
                }
                continue;
            }
            if head.is_none_or(|h| s < h.0) && e > start && s <= end {
                head = Some((s, e));
            }
            mid = (mid.0.min(s), mid.1.max(e));
            if mid == (s, e) {
                identical = true;
            }
        }
        if let Some(h) = head.filter(|h| h.0 < h.1) {
            dsack = (start.max(h.0), end.min(h.1));
        }
        let mut out = vec![dsack];
        if (rcv_nxt < mid.1 && mid != dsack) || identical {
            out.push(mid);
        }
        for &(s, e) in &self.blocks {
            if out.len() >= MAX_BLOCKS {
                break;
            }
            if (e < mid.0 || s > mid.1) && s > rcv_nxt {
                out.push((s, e));
            }
        }
        out.retain(|b| b.0 < b.1);
        self.blocks = out;
    }

    /// After a segment carried the list: D-SACK blocks (at or below
    /// `rcv_nxt`) have been said and go (tcp_output.c, tcp_clean_dsack_blocks).
    pub fn clean_dsack(&mut self, rcv_nxt: u64) {
        self.blocks.retain(|&(s, e)| s < e && s > rcv_nxt);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Blocks as FreeBSD's overlap tests show them: 1..100 delivered, then
    /// 200..300, 400..500 and 600..700 out of order.
    fn three_blocks() -> BsdSackList {
        let mut l = BsdSackList::default();
        for (s, e) in [(200, 300), (400, 500), (600, 700)] {
            l.update_dsack(100, s, e);
        }
        assert_eq!(l.blocks(), &[(600, 700), (400, 500), (200, 300)]);
        l
    }

    #[test]
    fn a_duplicate_below_rcv_nxt_goes_first_then_is_cleaned() {
        let mut l = three_blocks();
        l.update(100, 50, 75);
        assert_eq!(l.blocks(), &[(50, 75), (600, 700), (400, 500), (200, 300)]);
        l.clean_dsack(100);
        assert_eq!(l.blocks(), &[(600, 700), (400, 500), (200, 300)]);
    }

    #[test]
    fn a_duplicate_inside_a_block_is_followed_by_that_block() {
        let mut l = three_blocks();
        l.update_dsack(100, 200, 275);
        assert_eq!(
            l.blocks(),
            &[(200, 275), (200, 300), (600, 700), (400, 500)]
        );
    }

    #[test]
    fn a_segment_spanning_blocks_reports_the_lowest_overlap_and_the_merge() {
        let mut l = three_blocks();
        l.update_dsack(100, 150, 475);
        assert_eq!(l.blocks(), &[(200, 300), (150, 500), (600, 700)]);
    }

    #[test]
    fn filling_the_hole_leaves_only_the_duplicate_head() {
        let mut l = three_blocks();
        // 1..800 arrives with rcv_nxt 100: 1..100 was a duplicate.
        l.update(100, 1, 100);
        assert_eq!(l.blocks()[0], (1, 100));
        // Delivered up to 800: every other block is passed.
        l.update(800, 1, 100);
        assert_eq!(l.blocks(), &[(1, 100)]);
        l.clean_dsack(800);
        assert!(l.is_empty());
    }
}
