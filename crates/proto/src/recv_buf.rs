//! The receive buffer: in-order bytes waiting for the application, plus
//! out-of-order segments held for reassembly (RFC 9293 3.10.7.4, "segment text").

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
    /// Out-of-order ranges [start, end) beyond `nxt`, sorted, disjoint, non-adjacent.
    ooo: Vec<(u64, u64)>,
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
}

impl RecvBuffer {
    pub fn new(capacity: usize) -> Self {
        RecvBuffer {
            storage: Vec::new(),
            cap: capacity.max(1),
            read: 0,
            nxt: 0,
            ooo: Vec::new(),
            base: 0,
        }
    }

    fn pos(&self, off: u64) -> usize {
        ((off - self.base) % self.storage.len() as u64) as usize
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
    /// storage doubles (at least 4 KiB, at most `cap`); at full size it is
    /// the ring it always was. Memory only: capacity and windows are unchanged.
    fn grow_to_hold(&mut self, end: u64) {
        let len = self.storage.len();
        if len == self.cap || end - self.base <= len as u64 {
            return;
        }
        let top = self.ooo.last().map_or(self.nxt, |r| r.1).max(self.nxt);
        let (from, to) = ((self.read - self.base) as usize, (top - self.base) as usize);
        self.storage.copy_within(from..to, 0);
        self.base = self.read;
        let need = (end - self.base) as usize;
        let new_len = need.max(2 * len).max(4096).min(self.cap);
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
    /// Out-of-order ranges, for SACK and NAK.
    pub fn ooo_ranges(&self) -> &[(u64, u64)] {
        &self.ooo
    }

    fn put(&mut self, off: u64, bytes: &[u8]) {
        self.grow_to_hold(off + bytes.len() as u64);
        let cap = self.storage.len();
        let at = self.pos(off);
        let first = bytes.len().min(cap - at);
        self.storage[at..at + first].copy_from_slice(&bytes[..first]);
        self.storage[..bytes.len() - first].copy_from_slice(&bytes[first..]);
    }

    /// Stores `bytes` at stream offset `off`. The caller has trimmed the segment
    /// to the window; anything beyond the buffer is cut here as a last guard.
    pub fn insert(&mut self, off: u64, bytes: &[u8]) -> Insert {
        let mut r = Insert::default();
        let limit = self.read + self.capacity() as u64;
        let (mut start, mut end) = (off, off + bytes.len() as u64);
        if end > limit {
            end = limit;
        }
        if start < self.nxt {
            let dup = (self.nxt.min(end) - start) as usize;
            r.dup_bytes += dup;
            start = self.nxt;
        }
        if start >= end {
            return r;
        }
        r.out_of_order = start > self.nxt;
        // Count bytes already held out of order as duplicates.
        let mut held = 0u64;
        for &(s, e) in &self.ooo {
            let (a, b) = (s.max(start), e.min(end));
            if a < b {
                held += b - a;
            }
        }
        r.dup_bytes += held as usize;
        r.new_bytes = (end - start - held) as usize;
        let src = &bytes[(start - off) as usize..(end - off) as usize];
        self.put(start, src);
        if start == self.nxt {
            r.filled_gap = !self.ooo.is_empty();
            self.nxt = end;
            // Absorb out-of-order ranges now contiguous.
            let mut i = 0;
            while i < self.ooo.len() && self.ooo[i].0 <= self.nxt {
                self.nxt = self.nxt.max(self.ooo[i].1);
                i += 1;
            }
            self.ooo.drain(..i);
            r.advanced = (self.nxt - start) as usize;
        } else {
            self.add_range(start, end);
        }
        r
    }

    fn add_range(&mut self, mut s: u64, mut e: u64) {
        let mut i = 0;
        while i < self.ooo.len() && self.ooo[i].1 < s {
            i += 1;
        }
        let mut j = i;
        while j < self.ooo.len() && self.ooo[j].0 <= e {
            s = s.min(self.ooo[j].0);
            e = e.max(self.ooo[j].1);
            j += 1;
        }
        self.ooo.splice(i..j, [(s, e)]);
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
        let mut b = RecvBuffer::new(16);
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
        let mut b = RecvBuffer::new(16);
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
        let mut b = RecvBuffer::new(8);
        b.insert(0, b"abcdef");
        let mut tmp = [0; 5];
        assert_eq!(b.read(&mut tmp), 5);
        b.insert(6, b"ghijklmnop");
        assert_eq!(b.readable(), 8); // the ring holds offsets 5..13
        assert_eq!(read_all(&mut b), b"fghijklm");
    }

    #[test]
    fn rebases_when_empty_and_keeps_data_intact() {
        let mut b = RecvBuffer::new(8);
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
        let mut b = RecvBuffer::new(65536);
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

    #[test]
    fn merges_out_of_order_ranges() {
        let mut b = RecvBuffer::new(32);
        b.insert(10, b"kl");
        b.insert(4, b"ef");
        b.insert(6, b"ghij");
        assert_eq!(b.ooo_ranges(), &[(4, 12)]);
        b.insert(0, b"abcd");
        assert!(!b.has_ooo());
        assert_eq!(read_all(&mut b), b"abcdefghijkl");
    }
}
