//! The discrete-event queue: a `BinaryHeap` keyed by (time, insertion sequence),
//! so events at the same instant pop in the order they were pushed and every
//! run with the same inputs is identical (ARCHITECTURE.md, "Invariants").

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use tinygram_proto::Instant;

/// One scheduled event; ordered by (at, seq) only, so `E` needs no `Ord`.
#[derive(Debug)]
struct Entry<E> {
    at: Instant,
    seq: u64,
    ev: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.at == other.at && self.seq == other.seq
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Entry<E> {
    /// Reversed: `BinaryHeap` is a max-heap and we want the earliest (at, seq) first.
    fn cmp(&self, other: &Self) -> Ordering {
        (other.at, other.seq).cmp(&(self.at, self.seq))
    }
}

/// A min-queue of events by time; ties pop in insertion (FIFO) order.
#[derive(Debug)]
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    next_seq: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    /// An empty queue.
    pub fn new() -> Self {
        EventQueue {
            heap: BinaryHeap::new(),
            next_seq: 0,
        }
    }

    /// An empty queue with room for `n` events before it reallocates.
    pub fn with_capacity(n: usize) -> Self {
        EventQueue {
            heap: BinaryHeap::with_capacity(n),
            next_seq: 0,
        }
    }

    /// Schedules `ev` at `at`; after every event already scheduled at the same instant.
    pub fn push(&mut self, at: Instant, ev: E) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Entry { at, seq, ev });
    }

    /// Removes and returns the earliest event (the first pushed among equal times).
    pub fn pop(&mut self) -> Option<(Instant, E)> {
        self.heap.pop().map(|e| (e.at, e.ev))
    }

    /// The time of the earliest event, without removing it.
    pub fn peek_time(&self) -> Option<Instant> {
        self.heap.peek().map(|e| e.at)
    }

    /// Number of scheduled events.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// True when nothing is scheduled.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Drops every scheduled event (keeps the allocation and the sequence counter).
    pub fn clear(&mut self) {
        self.heap.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_time_order() {
        let mut q = EventQueue::new();
        assert!(q.is_empty());
        assert_eq!(q.pop(), None);
        assert_eq!(q.peek_time(), None);
        q.push(Instant::from_millis(30), "c");
        q.push(Instant::from_millis(10), "a");
        q.push(Instant::from_millis(20), "b");
        assert_eq!(q.len(), 3);
        assert_eq!(q.peek_time(), Some(Instant::from_millis(10)));
        assert_eq!(q.pop(), Some((Instant::from_millis(10), "a")));
        assert_eq!(q.pop(), Some((Instant::from_millis(20), "b")));
        assert_eq!(q.pop(), Some((Instant::from_millis(30), "c")));
        assert!(q.is_empty());
    }

    #[test]
    fn ties_pop_in_insertion_order() {
        let mut q = EventQueue::new();
        let t = Instant::from_micros(5);
        for i in 0..100u32 {
            q.push(t, i);
            // Interleave later and earlier events to exercise the heap.
            q.push(Instant::from_micros(9), 1000 + i);
        }
        q.push(Instant::from_micros(1), 9999);
        assert_eq!(q.pop(), Some((Instant::from_micros(1), 9999)));
        for i in 0..100u32 {
            assert_eq!(q.pop(), Some((t, i)));
        }
        for i in 0..100u32 {
            assert_eq!(q.pop(), Some((Instant::from_micros(9), 1000 + i)));
        }
        assert!(q.pop().is_none());
    }

    #[test]
    fn push_during_drain_keeps_fifo_among_equals() {
        let mut q = EventQueue::new();
        let t = Instant::from_millis(1);
        q.push(t, 1);
        q.push(t, 2);
        let (_, first) = q.pop().unwrap();
        assert_eq!(first, 1);
        // An event scheduled "now" while handling one goes after those already queued.
        q.push(t, 3);
        assert_eq!(q.pop(), Some((t, 2)));
        assert_eq!(q.pop(), Some((t, 3)));
    }

    #[test]
    fn events_need_no_ord() {
        #[derive(Debug, PartialEq)]
        struct NotOrd(f64);
        let mut q = EventQueue::with_capacity(4);
        q.push(Instant::ZERO, NotOrd(1.5));
        assert_eq!(q.pop(), Some((Instant::ZERO, NotOrd(1.5))));
    }
}
