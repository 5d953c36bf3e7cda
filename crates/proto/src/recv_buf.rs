//! The receive buffer: in-order bytes waiting for the application, plus
//! out-of-order segments held for reassembly (RFC 9293 3.10.7.4, "segment text").
//! Out-of-order ranges live in an ordered map, so each segment costs O(log n)
//! work, and their number is capped (FreeBSD's net.inet.tcp.reass.maxqueuelen).
//!
//! Overlaps keep the first copy of every byte: tinygram's own policy,
//! stricter than Linux's (tcp_data_queue_ofo drops a fully covered duplicate
//! but lets a new segment replace a queued one it covers from the same
//! start), so a forged segment that passes the checks can never replace real
//! bytes still waiting; overlaps whose bytes differ are counted.

use std::collections::BTreeMap;

/// Default cap on out-of-order ranges held (FreeBSD's reassembly queue
/// default is 100 segments per connection).
pub const DEFAULT_MAX_OOO_RANGES: usize = 100;
/// The smallest storage a receive buffer allocates: room for a few small
/// messages, so 100,000 connections of request/response traffic hold 512 B
/// each instead of whole pages (a bulk flow doubles past it in a few steps).
const MIN_STORAGE: usize = 512;

/// A ring of `capacity` bytes addressed by stream offset (bytes since the
/// peer's first data byte). Bytes before `nxt` are readable; ranges after it
/// are out-of-order data already stored at their place in the ring.
#[derive(Debug)]
pub struct RecvBuffer {
    /// The ring's bytes, grown on demand up to `cap` (see `grow_to_hold`):
    /// a connection that never receives data holds none.
    storage: Vec<u8>,
    /// The configured capacity: what the window and every limit use.
    cap: usize,
    /// Stream offset of the first unread byte.
    read: u64,
    /// Stream offset of the first byte not yet received in order (RCV.NXT).
    nxt: u64,
    /// Out-of-order ranges start -> end ([start, end)) beyond `nxt`:
    /// disjoint and non-adjacent.
    ooo: BTreeMap<u64, u64>,
    /// Most out-of-order ranges held; a segment that would add one more is dropped.
    max_ranges: usize,
    /// Stream offset stored at `storage[0]` (mod capacity). Moved to the read
    /// point whenever the buffer empties, so a promptly read stream reuses the
    /// same few cache-hot bytes instead of walking the whole ring.
    base: u64,
}

/// What inserting a segment did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Insert {
    /// Bytes newly stored (in order or not).
    pub new_bytes: usize,
    /// Bytes that were already here (duplicates).
    pub dup_bytes: usize,
    /// How far the in-order point advanced.
    pub advanced: usize,
    /// The segment started beyond the in-order point.
    pub out_of_order: bool,
    /// The segment filled (part of) a gap below held out-of-order data.
    pub filled_gap: bool,
    /// The segment would have started a new out-of-order range beyond the cap
    /// and was dropped (nothing stored).
    pub range_dropped: bool,
    /// Bytes of the segment that overlapped stored, unread bytes with a
    /// different value: the stored copy was kept (first copy wins).
    pub conflict_bytes: usize,
}

impl RecvBuffer {
    /// A buffer of `capacity` bytes holding at most `max_ranges` (at least 1)
    /// out-of-order ranges.
    pub fn new(capacity: usize, max_ranges: usize) -> Self {
        RecvBuffer {
            storage: Vec::new(),
            cap: capacity.max(1),
            read: 0,
            nxt: 0,
            ooo: BTreeMap::new(),
            max_ranges: max_ranges.max(1),
            base: 0,
        }
    }

    /// Hints the CPU to fetch the bytes the next arrival and read touch
    /// ([`crate::prefetch`]).
    pub(crate) fn prefetch_heap(&self) {
        if !self.storage.is_empty() && self.nxt >= self.base {
            let at = self.pos(self.nxt);
            let rest = &self.storage[at..];
            crate::prefetch::prefetch_bytes(rest.as_ptr(), rest.len().min(128));
        }
    }

    fn pos(&self, off: u64) -> usize {
        let d = off - self.base;
        let len = self.storage.len() as u64;
        // Within the first turn of the ring (`base` follows the read point
        // whenever the buffer empties) no 64-bit division is needed.
        (if d < len { d } else { d % len }) as usize
    }

    /// Nothing is stored: the next byte may go to the start of the ring.
    fn rebase_if_empty(&mut self) {
        if self.read == self.nxt && self.ooo.is_empty() {
            self.base = self.read;
        }
    }
    pub fn capacity(&self) -> usize {
        self.cap
    }
    /// Bytes of memory the ring holds now (at most `capacity`, 0 until data arrives).
    pub fn allocated(&self) -> usize {
        self.storage.capacity()
    }

    /// Makes room for stream offsets up to `end` (exclusive): below full
    /// size the stored bytes never wrap, so they move to the front and the
    /// storage doubles (at least [`MIN_STORAGE`], at most `cap`); at full size it is
    /// the ring it always was. Memory only: capacity and windows are unchanged.
    fn grow_to_hold(&mut self, end: u64) {
        let len = self.storage.len();
        if len == self.cap || end - self.base <= len as u64 {
            return;
        }
        let top = self
            .ooo
            .last_key_value()
            .map_or(self.nxt, |(_, &e)| e)
            .max(self.nxt);
        let (from, to) = ((self.read - self.base) as usize, (top - self.base) as usize);
        self.storage.copy_within(from..to, 0);
        self.base = self.read;
        let need = (end - self.base) as usize;
        let new_len = need.max(2 * len).max(MIN_STORAGE).min(self.cap);
        self.storage.reserve_exact(new_len - len);
        self.storage.resize(new_len, 0);
    }
    /// In-order bytes the application can read.
    pub fn readable(&self) -> usize {
        (self.nxt - self.read) as usize
    }
    /// Space after the in-order point: the most we may advertise.
    pub fn free(&self) -> usize {
        self.capacity() - self.readable()
    }
    /// Stream offset of RCV.NXT.
    pub fn nxt(&self) -> u64 {
        self.nxt
    }
    /// Whether out-of-order data is held.
    pub fn has_ooo(&self) -> bool {
        !self.ooo.is_empty()
    }
    /// Out-of-order ranges in order, for SACK and NAK.
    pub fn ooo_ranges(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.ooo.iter().map(|(&s, &e)| (s, e))
    }
    /// How many out-of-order ranges are held.
    pub fn ooo_count(&self) -> usize {
        self.ooo.len()
    }
    /// The held out-of-order range containing stream offset `off`.
    pub fn ooo_containing(&self, off: u64) -> Option<(u64, u64)> {
        self.ooo
            .range(..=off)
            .next_back()
            .filter(|&(_, &e)| e > off)
            .map(|(&s, &e)| (s, e))
    }
    /// The gap just below the held range containing `off`: (gap start, range start).
    pub fn gap_below(&self, off: u64) -> Option<(u64, u64)> {
        let (s, _) = self.ooo_containing(off)?;
        let gap_start = self
            .ooo
            .range(..s)
            .next_back()
            .map_or(self.nxt, |(_, &e)| e);
        Some((gap_start, s))
    }

    fn put(&mut self, off: u64, bytes: &[u8]) {
        self.grow_to_hold(off + bytes.len() as u64);
        let cap = self.storage.len();
        let at = self.pos(off);
        let first = bytes.len().min(cap - at);
        self.storage[at..at + first].copy_from_slice(&bytes[..first]);
        self.storage[..bytes.len() - first].copy_from_slice(&bytes[first..]);
    }

    /// How many of `claim`'s bytes differ from those stored from stream
    /// offset `off` on (all of which are stored and unread).
    fn differing(&self, off: u64, claim: &[u8]) -> usize {
        let cap = self.storage.len();
        let at = self.pos(off);
        let first = claim.len().min(cap - at);
        let count = |held: &[u8], new: &[u8]| held.iter().zip(new).filter(|(a, b)| a != b).count();
        count(&self.storage[at..at + first], &claim[..first])
            + count(&self.storage[..claim.len() - first], &claim[first..])
    }

    /// Stores `bytes` at stream offset `off`, keeping any byte already held
    /// (first copy wins, see the module's note). The caller has trimmed the segment
    /// to the window; anything beyond the buffer is cut here as a last guard.
    pub fn insert(&mut self, off: u64, bytes: &[u8]) -> Insert {
        let limit = self.read + self.capacity() as u64;
        if off == self.nxt && self.ooo.is_empty() {
            return self.append(off, bytes, limit);
        }
        if let Some(r) = self.extend_last_range(off, bytes, limit) {
            return r;
        }
        self.insert_general(off, bytes, limit)
    }

    /// `insert` of the bytes that continue the highest out-of-order range,
    /// nearly every segment that arrives behind a hole: that range grows in
    /// place, with no search or merge (`None`: not that case).
    fn extend_last_range(&mut self, off: u64, bytes: &[u8], limit: u64) -> Option<Insert> {
        let (_, &top) = self.ooo.last_key_value()?;
        if top != off || off <= self.nxt || off >= limit || bytes.is_empty() {
            return None;
        }
        // Stored before the range grows: growing the storage keeps the bytes
        // up to the highest range's end.
        let n = self.put_within(off, bytes, limit);
        if let Some(mut last) = self.ooo.last_entry() {
            *last.get_mut() = off + n as u64;
        }
        Some(Insert {
            new_bytes: n,
            out_of_order: true,
            ..Insert::default()
        })
    }

    /// `insert` in every case: trims what is already held or beyond the
    /// buffer, stores the rest and merges the out-of-order ranges.
    fn insert_general(&mut self, off: u64, bytes: &[u8], limit: u64) -> Insert {
        let mut r = Insert::default();
        let (mut start, mut end) = (off, off + bytes.len() as u64);
        if end > limit {
            end = limit;
        }
        if start < self.nxt {
            let dup_end = self.nxt.min(end);
            r.dup_bytes += (dup_end - start) as usize;
            // Bytes still unread are compared with what the segment claims.
            let from = start.max(self.read);
            if from < dup_end {
                r.conflict_bytes += self.differing(
                    from,
                    &bytes[(from - off) as usize..(dup_end - off) as usize],
                );
            }
            start = self.nxt;
        }
        if start >= end {
            return r;
        }
        r.out_of_order = start > self.nxt;
        // Bytes already held out of order count as duplicates. Only ranges
        // overlapping [start, end) are visited: the one starting before `start`
        // and those starting inside.
        let first = self
            .ooo
            .range(..start)
            .next_back()
            .filter(|&(_, &e)| e >= start)
            .map_or(start, |(&s, _)| s);
        let mut held = 0u64;
        let mut touching = 0usize;
        // The parts of [start, end) not yet held: only these are stored.
        let mut gaps: Vec<(u64, u64)> = Vec::new();
        let mut at = start;
        for (&s, &e) in self.ooo.range(first..=end) {
            touching += 1;
            let (a, b) = (s.max(start), e.min(end));
            if a < b {
                held += b - a;
                if at < a {
                    gaps.push((at, a));
                }
                at = b;
                let claim = &bytes[(a - off) as usize..(b - off) as usize];
                r.conflict_bytes += self.differing(a, claim);
            }
        }
        // The last gap stays out of the list: in order with nothing held
        // beyond (nearly every segment) it is the only one, and no list is allocated.
        let last_gap = (at < end).then_some((at, end));
        if r.out_of_order && touching == 0 && self.ooo.len() >= self.max_ranges {
            // A new range beyond the cap: drop it (the sender will resend).
            r.range_dropped = true;
            return r;
        }
        r.dup_bytes += held as usize;
        r.new_bytes = (end - start - held) as usize;
        for (a, b) in gaps.into_iter().chain(last_gap) {
            self.put(a, &bytes[(a - off) as usize..(b - off) as usize]);
        }
        if start == self.nxt {
            r.filled_gap = !self.ooo.is_empty();
            self.nxt = end;
            // Absorb out-of-order ranges now contiguous.
            while let Some(entry) = self.ooo.first_entry() {
                if *entry.key() > self.nxt {
                    break;
                }
                let e = entry.remove();
                self.nxt = self.nxt.max(e);
            }
            r.advanced = (self.nxt - start) as usize;
        } else {
            self.add_range(start, end, first);
        }
        r
    }

    /// `insert` of the next in-order bytes with nothing held beyond: stored
    /// at once, no reassembly (the receive half of Jacobson's header
    /// prediction: FreeBSD tcp_do_segment appends to the socket buffer
    /// without tcp_reass; Linux tcp_rcv_established queues with tcp_queue_rcv).
    fn append(&mut self, off: u64, bytes: &[u8], limit: u64) -> Insert {
        let n = self.put_within(off, bytes, limit);
        if n == 0 {
            return Insert::default();
        }
        self.nxt = off + n as u64;
        Insert {
            new_bytes: n,
            advanced: n,
            ..Insert::default()
        }
    }

    /// Stores what of `bytes` (at stream offset `off`) lies below `limit`;
    /// how many bytes that was.
    fn put_within(&mut self, off: u64, bytes: &[u8], limit: u64) -> usize {
        let n = limit.saturating_sub(off).min(bytes.len() as u64) as usize;
        if n > 0 {
            self.put(off, &bytes[..n]);
        }
        n
    }

    /// Adds [s, e), merging the ranges it touches; `first` is the start of the
    /// first range that may touch it.
    fn add_range(&mut self, mut s: u64, mut e: u64, first: u64) {
        // Each touching range is found afresh after the last one merged (no
        // list allocated); the ranges are disjoint, so growing `e` finds no
        // range the first search would not have.
        while let Some((&a, &b)) = self.ooo.range(first..=e).find(|&(_, &b)| b >= s) {
            self.ooo.remove(&a);
            s = s.min(a);
            e = e.max(b);
        }
        self.ooo.insert(s, e);
    }

    /// Copies up to `buf.len()` readable bytes out and frees their space.
    pub fn read(&mut self, buf: &mut [u8]) -> usize {
        let n = buf.len().min(self.readable());
        if n == 0 {
            return 0;
        }
        let cap = self.storage.len();
        let at = self.pos(self.read);
        let first = n.min(cap - at);
        buf[..first].copy_from_slice(&self.storage[at..at + first]);
        buf[first..n].copy_from_slice(&self.storage[..n - first]);
        self.read += n as u64;
        self.rebase_if_empty();
        n
    }

    /// Discards up to `n` readable bytes (a reader that only counts).
    pub fn consume(&mut self, n: usize) -> usize {
        let n = n.min(self.readable());
        self.read += n as u64;
        self.rebase_if_empty();
        n
    }

    /// Calls `f` with the readable bytes (one or two slices) without consuming them.
    pub fn peek(&self, mut f: impl FnMut(&[u8])) {
        let n = self.readable();
        if n == 0 {
            return;
        }
        let cap = self.storage.len();
        let at = self.pos(self.read);
        let first = n.min(cap - at);
        f(&self.storage[at..at + first]);
        if n > first {
            f(&self.storage[..n - first]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_all(b: &mut RecvBuffer) -> Vec<u8> {
        let mut v = vec![0; b.readable()];
        b.read(&mut v);
        v
    }

    #[test]
    fn in_order_and_reassembly() {
        let mut b = RecvBuffer::new(16, DEFAULT_MAX_OOO_RANGES);
        let r = b.insert(4, b"efgh");
        assert!(r.out_of_order);
        assert_eq!(b.readable(), 0);
        let r = b.insert(0, b"abcd");
        assert!(r.filled_gap);
        assert_eq!(r.advanced, 8);
        assert_eq!(read_all(&mut b), b"abcdefgh");
    }

    #[test]
    fn duplicates_and_overlaps_are_trimmed() {
        let mut b = RecvBuffer::new(16, DEFAULT_MAX_OOO_RANGES);
        b.insert(0, b"abcd");
        let r = b.insert(2, b"cdef");
        assert_eq!((r.dup_bytes, r.new_bytes), (2, 2));
        b.insert(8, b"ij");
        let r = b.insert(7, b"hijk");
        assert_eq!((r.dup_bytes, r.new_bytes), (2, 2));
        let r = b.insert(6, b"g");
        assert_eq!(r.advanced, 5); // g plus the held h..k
        assert_eq!(read_all(&mut b), b"abcdefghijk");
    }

    #[test]
    fn wraps_around_the_ring_and_limits_to_capacity() {
        let mut b = RecvBuffer::new(8, DEFAULT_MAX_OOO_RANGES);
        b.insert(0, b"abcdef");
        let mut tmp = [0; 5];
        assert_eq!(b.read(&mut tmp), 5);
        b.insert(6, b"ghijklmnop");
        assert_eq!(b.readable(), 8); // the ring holds offsets 5..13
        assert_eq!(read_all(&mut b), b"fghijklm");
    }

    #[test]
    fn rebases_when_empty_and_keeps_data_intact() {
        let mut b = RecvBuffer::new(8, DEFAULT_MAX_OOO_RANGES);
        b.insert(0, b"abcde");
        assert_eq!(read_all(&mut b), b"abcde");
        // Empty: the next bytes go to the start of the ring, no wrap needed.
        b.insert(5, b"fghijklm");
        assert_eq!(b.readable(), 8);
        assert_eq!(read_all(&mut b), b"fghijklm");
        // Not empty (out-of-order data held): no rebase may move it.
        b.insert(15, b"p");
        let mut one = [0u8; 0];
        b.read(&mut one);
        b.insert(13, b"no");
        assert_eq!(read_all(&mut b), b"nop");
    }

    /// Memory follows the data: none before the first byte, growth as the
    /// stored span widens (moving held bytes, in and out of order, intact),
    /// never past the capacity, which with the free space stays as configured.
    #[test]
    fn storage_grows_with_the_data_up_to_capacity() {
        let mut b = RecvBuffer::new(65536, DEFAULT_MAX_OOO_RANGES);
        assert_eq!((b.allocated(), b.capacity(), b.free()), (0, 65536, 65536));
        let mut none = [0u8; 8];
        assert_eq!(b.read(&mut none), 0);
        b.insert(0, b"abc");
        assert!(
            b.allocated() >= 3 && b.allocated() <= 4096,
            "{}",
            b.allocated()
        );
        let mut two = [0u8; 2];
        b.read(&mut two);
        // Out of order beyond the first 4 KiB: storage grows, held bytes move.
        let far: Vec<u8> = (0..100u8).collect();
        b.insert(10_000, &far);
        assert!(b.allocated() >= 10_100 - 2 && b.allocated() < 65536);
        assert_eq!(b.free(), 65536 - 1);
        let gap: Vec<u8> = (0..10_000 - 3).map(|i| (i % 251) as u8).collect();
        b.insert(3, &gap);
        let mut want = b"c".to_vec();
        want.extend(&gap);
        want.extend(&far);
        assert_eq!(read_all(&mut b), want);
        // A full window: the storage reaches the capacity and no further.
        let full = vec![7u8; 70_000];
        let r = b.insert(10_100, &full);
        assert_eq!(r.new_bytes, 65536);
        assert_eq!(b.allocated(), 65536);
        assert_eq!(read_all(&mut b), vec![7u8; 65536]);
    }

    /// The first copy of every byte is kept, out of order and in order,
    /// and bytes that differ from the held copy are counted.
    #[test]
    fn overlaps_keep_the_first_copy_and_count_conflicts() {
        let mut b = RecvBuffer::new(64, DEFAULT_MAX_OOO_RANGES);
        b.insert(10, &[b'a'; 10]);
        let r = b.insert(10, &[b'b'; 10]);
        assert_eq!((r.dup_bytes, r.new_bytes, r.conflict_bytes), (10, 0, 10));
        // Straddling a held range: only the gaps around it are stored.
        let r = b.insert(5, &[b'd'; 20]);
        assert_eq!((r.dup_bytes, r.new_bytes, r.conflict_bytes), (10, 10, 10));
        // An in-order segment covering held bytes keeps them too.
        let r = b.insert(0, &[b'c'; 28]);
        assert_eq!((r.dup_bytes, r.new_bytes, r.conflict_bytes), (20, 8, 20));
        let mut want = vec![b'c'; 5];
        want.extend([b'd'; 5]);
        want.extend([b'a'; 10]);
        want.extend([b'd'; 5]);
        want.extend([b'c'; 3]);
        assert_eq!(read_all(&mut b), want);
        // Unread in-order bytes are compared too; read ones cannot be.
        b.insert(28, b"xyz");
        let r = b.insert(26, b"ccxyzQ");
        assert_eq!((r.dup_bytes, r.conflict_bytes, r.new_bytes), (5, 0, 1));
        let r = b.insert(28, b"xYz");
        assert_eq!(r.conflict_bytes, 1);
        assert_eq!(read_all(&mut b), b"xyzQ");
        // Identical retransmissions are duplicates, never conflicts.
        b.insert(40, b"same");
        assert_eq!(b.insert(40, b"same").conflict_bytes, 0);
    }

    #[test]
    fn merges_out_of_order_ranges() {
        let mut b = RecvBuffer::new(32, DEFAULT_MAX_OOO_RANGES);
        b.insert(10, b"kl");
        b.insert(4, b"ef");
        b.insert(6, b"ghij");
        assert_eq!(b.ooo_ranges().collect::<Vec<_>>(), [(4, 12)]);
        b.insert(0, b"abcd");
        assert!(!b.has_ooo());
        assert_eq!(read_all(&mut b), b"abcdefghijkl");
    }

    #[test]
    fn caps_out_of_order_ranges_but_never_in_order_data() {
        let mut b = RecvBuffer::new(64, 3);
        for off in [2, 4, 6] {
            assert!(!b.insert(off, b"x").range_dropped);
        }
        // A fourth separate range is dropped...
        let r = b.insert(8, b"y");
        assert!(r.range_dropped);
        assert_eq!(r.new_bytes, 0);
        assert_eq!(b.ooo_count(), 3);
        // ...but one that extends or merges held ranges is kept,
        assert!(!b.insert(5, b"z").range_dropped);
        assert_eq!(b.ooo_ranges().collect::<Vec<_>>(), [(2, 3), (4, 7)]);
        // and in-order data always goes in, absorbing what follows.
        let r = b.insert(0, b"ab");
        assert_eq!(r.advanced, 3);
        assert_eq!(b.ooo_containing(5), Some((4, 7)));
        assert_eq!(b.gap_below(6), Some((3, 4)));
        b.insert(3, b"d");
        assert_eq!(read_all(&mut b), b"abxdxzx");
    }

    #[test]
    fn many_disjoint_ranges_cost_logarithmic_work() {
        // 100,000 one-byte ranges with gaps: quadratic reassembly would take
        // minutes here; the ordered map takes milliseconds.
        let n = 100_000u64;
        let mut b = RecvBuffer::new(4 * n as usize, usize::MAX);
        for i in (1..n).rev() {
            b.insert(2 * i, &[i as u8]);
        }
        assert_eq!(b.ooo_count(), n as usize - 1);
        // Filling every gap but the first merges them all into one range.
        for i in 0..n {
            b.insert(2 * i + 1, b"-");
        }
        assert_eq!(b.ooo_count(), 1);
        b.insert(0, b"0");
        assert_eq!(b.ooo_count(), 0);
        assert_eq!(b.readable(), 2 * n as usize);
    }

    proptest::proptest! {
        /// Any arrival order of overlapping segments, some with bytes that
        /// differ from the first copy, stores what a byte map that keeps each
        /// first copy holds: every gap between held ranges filled, none overwritten.
        #[test]
        fn matches_a_first_copy_byte_map(
            segs in proptest::collection::vec((0u64..200, 1usize..40, proptest::prelude::any::<u8>()), 1..40)
        ) {
            let mut b = RecvBuffer::new(256, DEFAULT_MAX_OOO_RANGES);
            let mut model: Vec<Option<u8>> = vec![None; 256];
            for (off, len, salt) in segs {
                let bytes: Vec<u8> = (0..len).map(|i| (off as usize + i) as u8 ^ salt).collect();
                let r = b.insert(off, &bytes);
                proptest::prop_assert!(!r.range_dropped);
                for (i, &v) in bytes.iter().enumerate() {
                    model[off as usize + i].get_or_insert(v);
                }
                let nxt = model.iter().position(Option::is_none).unwrap_or(256);
                proptest::prop_assert_eq!(b.nxt(), nxt as u64);
            }
            let want: Vec<u8> = model.iter().map_while(|v| *v).collect();
            proptest::prop_assert_eq!(read_all(&mut b), want);
        }

        /// The short paths (`append`, `extend_last_range`) report and store
        /// exactly what the general path does, over arrivals that keep
        /// continuing the highest range, as segments behind a hole do.
        #[test]
        fn short_paths_match_the_general_path(
            segs in proptest::collection::vec((0u64..240, 1usize..40, 0u8..3), 1..60)
        ) {
            let mut fast = RecvBuffer::new(256, DEFAULT_MAX_OOO_RANGES);
            let mut full = RecvBuffer::new(256, DEFAULT_MAX_OOO_RANGES);
            let mut next_off = 0u64;
            for (off, len, kind) in segs {
                // Kind 0: right after the last segment (often the top range's end).
                let off = if kind == 0 { next_off } else { off };
                next_off = off + len as u64;
                let bytes: Vec<u8> = (0..len).map(|i| (off as usize + i) as u8).collect();
                let limit = full.read + full.capacity() as u64;
                let want = full.insert_general(off, &bytes, limit);
                proptest::prop_assert_eq!(fast.insert(off, &bytes), want);
                proptest::prop_assert_eq!(fast.nxt(), full.nxt());
                proptest::prop_assert_eq!(&fast.ooo, &full.ooo);
                if kind == 2 {
                    let (a, b) = (read_all(&mut fast), read_all(&mut full));
                    proptest::prop_assert_eq!(a, b);
                }
            }
            proptest::prop_assert_eq!(read_all(&mut fast), read_all(&mut full));
        }
    }
}
