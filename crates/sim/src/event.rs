//! Event queues keyed by (time, insertion sequence), so events at the same
//! instant pop in the order they were pushed and every run with the same
//! inputs is identical (ARCHITECTURE.md, "Invariants"): [`CalendarQueue`],
//! which every run uses, and [`EventQueue`], a plain binary heap with the
//! same order (the reference the calendar is tested against).

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

    /// As [`CalendarQueue::for_upcoming`]: up to `n` events from the heap's front.
    pub fn for_upcoming(&self, n: usize, mut f: impl FnMut(Instant, &E)) {
        for e in self.heap.as_slice().iter().take(n) {
            f(e.at, &e.ev);
        }
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

/// Bucket width of [`CalendarQueue`]: 2^20 ns, about one millisecond.
const SLOT_SHIFT: u32 = 20;
/// Buckets in the calendar: 4096 of about 1 ms, a horizon of about 4.4 s.
const SLOTS: usize = 4096;
const _: () = assert!(
    SLOTS / 64 == 64,
    "`summary` has one bit per word of `occupied`"
);

/// The event queue of every run: the same (time, insertion) order as
/// [`EventQueue`], but only events due within the current millisecond sit
/// in a binary heap; later ones wait in a calendar of 1 ms buckets (O(1)
/// append; Brown, "Calendar queues", CACM 31(10), 1988) and those beyond
/// its 4.4 s horizon in an overflow heap. With 100,000 connections each
/// holding a timer and an application wake-up, the heap stays the size of
/// one millisecond's events instead of every connection's, so pops and
/// pushes stay in cache.
pub struct CalendarQueue<E> {
    /// The events of the last bucket taken from the wheel (slot `cur - 1`),
    /// sorted latest first: popping from the end gives them in order, and
    /// the next few are known (for prefetching).
    ready: Vec<Entry<E>>,
    /// Events pushed since for slots before `cur` (due before the calendar's start).
    near: BinaryHeap<Entry<E>>,
    /// Bucket `s % SLOTS` holds events of slot `s`, for `cur <= s < cur + SLOTS`.
    wheel: Vec<Vec<Entry<E>>>,
    /// One bit per bucket: set when it holds events.
    occupied: [u64; SLOTS / 64],
    /// One bit per word of `occupied`: set when the word is not zero, so
    /// the next occupied bucket is found in a few steps however long the
    /// calendar has been idle (one connection spends most of its time so).
    summary: u64,
    /// Events of slots at or beyond `cur + SLOTS`.
    far: BinaryHeap<Entry<E>>,
    /// The first slot the calendar covers.
    cur: u64,
    in_wheel: usize,
    next_seq: u64,
}

impl<E> Default for CalendarQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> CalendarQueue<E> {
    /// An empty queue.
    pub fn new() -> Self {
        CalendarQueue {
            ready: Vec::new(),
            near: BinaryHeap::new(),
            wheel: (0..SLOTS).map(|_| Vec::new()).collect(),
            occupied: [0; SLOTS / 64],
            summary: 0,
            far: BinaryHeap::new(),
            cur: 0,
            in_wheel: 0,
            next_seq: 0,
        }
    }

    fn slot(at: Instant) -> u64 {
        at.as_nanos() >> SLOT_SHIFT
    }

    /// Schedules `ev` at `at`; after every event already scheduled at the same instant.
    pub fn push(&mut self, at: Instant, ev: E) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.insert(at, seq, ev);
    }

    /// Files an event by its slot. Takes the fields, not an `Entry`: one
    /// passed by reference was read back right after the caller stored it,
    /// a store-forwarding stall on every push.
    fn insert(&mut self, at: Instant, seq: u64, ev: E) {
        let e = Entry { at, seq, ev };
        let s = Self::slot(at);
        if s < self.cur {
            self.near.push(e);
        } else if s - self.cur < SLOTS as u64 {
            let b = (s % SLOTS as u64) as usize;
            self.wheel[b].push(e);
            self.occupied[b / 64] |= 1 << (b % 64);
            self.summary |= 1 << (b / 64);
            self.in_wheel += 1;
        } else {
            self.far.push(e);
        }
    }

    /// Moves overflow events that the calendar now covers into it.
    fn pull_far(&mut self) {
        while self
            .far
            .peek()
            .is_some_and(|e| Self::slot(e.at) - self.cur < SLOTS as u64)
        {
            let e = self.far.pop().expect("peeked");
            self.insert(e.at, e.seq, e.ev);
        }
    }

    /// The first occupied bucket at or after `cur`, as a slot number.
    fn next_occupied(&self) -> Option<u64> {
        const WORDS: usize = SLOTS / 64;
        let start = (self.cur % SLOTS as u64) as usize;
        let w0 = start / 64;
        // Buckets at or after `start` in its word; else the first non-empty
        // word after it (wrapping round to `w0` itself, whose bits left are
        // then those before `start`).
        let mut bits = self.occupied[w0] & (u64::MAX << (start % 64));
        let mut w = w0;
        if bits == 0 {
            let after = self.summary.rotate_right(((w0 + 1) % WORDS) as u32);
            if after == 0 {
                return None;
            }
            w = (w0 + 1 + after.trailing_zeros() as usize) % WORDS;
            bits = self.occupied[w];
        }
        let b = w * 64 + bits.trailing_zeros() as usize;
        let ahead = (b + SLOTS - start) % SLOTS;
        Some(self.cur + ahead as u64)
    }

    /// Makes `ready` or `near` hold the earliest events when there are any.
    fn refill(&mut self) {
        if !self.ready.is_empty() || !self.near.is_empty() {
            return;
        }
        if self.in_wheel == 0 {
            let Some(first) = self.far.peek().map(|e| Self::slot(e.at)) else {
                return;
            };
            self.cur = first;
            self.pull_far();
        }
        let s = self.next_occupied().expect("the calendar holds events");
        let b = (s % SLOTS as u64) as usize;
        self.cur = s + 1;
        self.occupied[b / 64] &= !(1 << (b % 64));
        if self.occupied[b / 64] == 0 {
            self.summary &= !(1 << (b / 64));
        }
        // The bucket becomes `ready` (sorted once, which costs less than a
        // heap's pops) and the emptied `ready` takes its place, so neither
        // allocation is lost. Its events were appended in push order, mostly
        // in time order too, so it is sorted ascending (nearly in place; a
        // descending sort would start from insertion sort's worst case) and
        // reversed. Keys are unique, so the order is the same.
        let mut bucket = std::mem::take(&mut self.wheel[b]);
        self.in_wheel -= bucket.len();
        bucket.sort_unstable_by_key(|e| (e.at, e.seq));
        bucket.reverse();
        std::mem::swap(&mut self.ready, &mut bucket);
        self.wheel[b] = bucket;
        self.pull_far();
    }

    /// Whether the earliest event is the end of `ready` (else the top of `near`).
    fn ready_first(&self) -> bool {
        match (self.ready.last(), self.near.peek()) {
            (Some(r), Some(n)) => (r.at, r.seq) < (n.at, n.seq),
            (r, _) => r.is_some(),
        }
    }

    /// Calls `f` on up to `n` events due soon, in order (the next of the
    /// current bucket; events pushed since are left out, and there is no
    /// refill): a hint of what comes next, for prefetching.
    pub fn for_upcoming(&self, n: usize, mut f: impl FnMut(Instant, &E)) {
        for e in self.ready.iter().rev().take(n) {
            f(e.at, &e.ev);
        }
    }

    /// Removes and returns the earliest event (the first pushed among equal times).
    pub fn pop(&mut self) -> Option<(Instant, E)> {
        self.refill();
        let e = if self.ready_first() {
            self.ready.pop()
        } else {
            self.near.pop()
        };
        e.map(|e| (e.at, e.ev))
    }

    /// The time of the earliest event, without removing it.
    pub fn peek_time(&mut self) -> Option<Instant> {
        self.refill();
        if self.ready_first() {
            self.ready.last().map(|e| e.at)
        } else {
            self.near.peek().map(|e| e.at)
        }
    }

    /// Number of scheduled events.
    pub fn len(&self) -> usize {
        self.ready.len() + self.near.len() + self.in_wheel + self.far.len()
    }

    /// True when nothing is scheduled.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
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

    /// The calendar pops exactly what the plain heap pops, over times that
    /// span same-slot ties, many buckets, wrap-around and the overflow heap.
    #[test]
    fn calendar_matches_the_heap() {
        let mut heap = EventQueue::new();
        let mut cal = CalendarQueue::new();
        let mut state = 7u64;
        let mut next = move || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            state >> 33
        };
        let mut now = 0u64;
        let mut id = 0u32;
        for round in 0..20_000 {
            // Mostly near (same slot, next ms), some seconds ahead, some beyond the horizon.
            let pushes = 1 + next() % 3;
            for _ in 0..pushes {
                let ahead = match next() % 10 {
                    0 => 0,
                    1..=4 => next() % 2_000_000,
                    5..=7 => next() % 1_500_000_000,
                    8 => 4_000_000_000 + next() % 6_000_000_000,
                    _ => next() % (1 << 20) * 3,
                };
                let at = Instant::from_nanos(now + ahead);
                heap.push(at, id);
                cal.push(at, id);
                id += 1;
            }
            let pops = if round % 50 == 0 { 0 } else { 1 + next() % 3 };
            for _ in 0..pops {
                assert_eq!(cal.len(), heap.len());
                assert_eq!(cal.peek_time(), heap.peek_time());
                let (a, b) = (cal.pop(), heap.pop());
                assert_eq!(a, b);
                if let Some((t, _)) = a {
                    now = t.as_nanos();
                }
            }
        }
        while let Some(e) = heap.pop() {
            assert_eq!(cal.pop(), Some(e));
        }
        assert!(cal.is_empty());
        assert_eq!(cal.pop(), None);
    }

    #[test]
    fn upcoming_events_are_the_next_pops() {
        let mut q = CalendarQueue::new();
        for (i, us) in [900u64, 300, 700, 300, 5_000].into_iter().enumerate() {
            q.push(Instant::from_micros(us), i);
        }
        assert_eq!(q.pop(), Some((Instant::from_micros(300), 1)));
        let mut next = Vec::new();
        q.for_upcoming(2, |at, &i| next.push((at, i)));
        assert_eq!(
            next,
            [
                (Instant::from_micros(300), 3),
                (Instant::from_micros(700), 2)
            ]
        );
        assert_eq!(q.pop(), Some(next[0]));
        assert_eq!(q.pop(), Some(next[1]));
    }

    /// Events whose buckets lie behind the calendar's start: in an earlier
    /// word of the occupancy bitmap, and in the start's own word (the search
    /// wraps all the way round to it).
    #[test]
    fn calendar_finds_buckets_behind_its_start() {
        let slot = |s: u64| Instant::from_nanos(s << SLOT_SHIFT);
        let mut q = CalendarQueue::new();
        q.push(slot(10), 'a');
        assert_eq!(q.pop(), Some((slot(10), 'a')));
        // The calendar starts at slot 11 (word 0); 4,093 slots on is bucket 8.
        q.push(slot(11 + 4_093), 'c');
        q.push(slot(81), 'b');
        assert_eq!(q.pop(), Some((slot(81), 'b')));
        assert_eq!(q.pop(), Some((slot(4_104), 'c')));
        // Now at slot 4,105 (bucket 9, word 0): bucket 5, in the same word
        // and behind it, is slot 4,101 + 4,096.
        q.push(slot(4_101 + 4_096), 'd');
        assert_eq!(q.pop(), Some((slot(8_197), 'd')));
        assert_eq!(q.pop(), None);
    }

    #[test]
    fn calendar_jumps_over_long_idle_gaps() {
        let mut q = CalendarQueue::new();
        q.push(Instant::from_millis(100_000), 'b');
        q.push(Instant::from_millis(5), 'a');
        q.push(Instant::from_millis(100_000), 'c');
        assert_eq!(q.pop(), Some((Instant::from_millis(5), 'a')));
        assert_eq!(q.peek_time(), Some(Instant::from_millis(100_000)));
        // Pushed "in the past" of the calendar's window: still in order.
        q.push(Instant::from_millis(6), 'z');
        assert_eq!(q.pop(), Some((Instant::from_millis(6), 'z')));
        assert_eq!(q.pop(), Some((Instant::from_millis(100_000), 'b')));
        assert_eq!(q.pop(), Some((Instant::from_millis(100_000), 'c')));
        assert_eq!(q.pop(), None);
    }
}
