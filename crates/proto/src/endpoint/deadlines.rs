//! Every connection's next deadline in one min-heap, so a host's step
//! touches only the connections whose timer is due, not all of them.
//!
//! A connection's deadline moves on nearly every segment (the RTO restarts
//! on each ACK); rather than find and move its heap entry, a new entry is
//! pushed and the old one left behind as stale: the owner keeps the one
//! deadline each connection is armed for, and an entry popped for another
//! time is skipped.

use crate::time::Instant;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Deadlines of the connections keyed by `K`, earliest first.
#[derive(Debug)]
pub struct Deadlines<K> {
    heap: BinaryHeap<Reverse<(Instant, K)>>,
}

impl<K: Ord + Copy> Default for Deadlines<K> {
    fn default() -> Self {
        Deadlines {
            heap: BinaryHeap::new(),
        }
    }
}

impl<K: Ord + Copy> Deadlines<K> {
    /// Arms `key` for `next` (its engine's `poll_timeout`) if that is not
    /// what it is armed for already (`armed`, which the owner keeps per connection).
    pub fn arm(&mut self, key: K, armed: &mut Option<Instant>, next: Option<Instant>) {
        if next != *armed {
            *armed = next;
            if let Some(t) = next {
                self.heap.push(Reverse((t, key)));
            }
        }
    }

    /// The earliest entry due at `now`, taken out: (its time, its key). It
    /// is stale when the key is no longer armed for that time.
    pub fn pop_due(&mut self, now: Instant) -> Option<(Instant, K)> {
        match self.heap.peek() {
            Some(&Reverse((t, key))) if t <= now => {
                self.heap.pop();
                Some((t, key))
            }
            _ => None,
        }
    }

    /// The earliest deadline (possibly a stale one, which only wakes the owner early).
    pub fn next(&self) -> Option<Instant> {
        self.heap.peek().map(|Reverse((t, _))| *t)
    }

    /// Entries in the heap, stale ones included.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Forgets every deadline.
    pub fn clear(&mut self) {
        self.heap.clear();
    }

    /// Rebuilds the heap from the deadlines connections are armed for, once
    /// stale entries outnumber `live` connections well (a busy connection
    /// re-arms on every ACK).
    pub fn compact(&mut self, live: usize, armed: impl Iterator<Item = (Instant, K)>) {
        if self.heap.len() > 4 * live + 1024 {
            self.heap = armed.map(Reverse).collect();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(ms: u64) -> Instant {
        Instant::from_millis(ms)
    }

    /// Entries come out earliest first and only when due; re-arming leaves
    /// the old entry stale, and arming for the same time pushes nothing.
    #[test]
    fn due_entries_come_out_in_order_and_rearming_leaves_stale_ones() {
        let mut d = Deadlines::default();
        let (mut a, mut b) = (None, None);
        d.arm(1u32, &mut a, Some(t(30)));
        d.arm(2u32, &mut b, Some(t(10)));
        d.arm(2u32, &mut b, Some(t(10)));
        assert_eq!(d.len(), 2, "the same deadline is not pushed twice");
        d.arm(1u32, &mut a, Some(t(20)));
        assert_eq!((d.len(), d.next()), (3, Some(t(10))));
        assert_eq!(d.pop_due(t(5)), None, "nothing due yet");
        assert_eq!(d.pop_due(t(40)), Some((t(10), 2)));
        assert_eq!(d.pop_due(t(40)), Some((t(20), 1)));
        let stale = d.pop_due(t(40)).unwrap();
        assert_eq!(stale, (t(30), 1));
        assert_ne!(
            a,
            Some(stale.0),
            "key 1 is armed for 20 ms: the 30 ms entry is stale"
        );
        assert!(d.is_empty());
    }

    #[test]
    fn compaction_keeps_only_armed_deadlines() {
        let mut d = Deadlines::default();
        let mut armed = None;
        for ms in (0..3000).rev() {
            d.arm(7u32, &mut armed, Some(t(ms)));
        }
        d.compact(1, [(t(0), 7u32)].into_iter());
        assert_eq!(d.len(), 1);
        assert_eq!(d.pop_due(t(0)), Some((t(0), 7)));
    }
}
