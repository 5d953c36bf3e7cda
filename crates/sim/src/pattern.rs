//! The seeded byte pattern every workload writes, so the receiver can check
//! that each byte arrived exactly once and in order (`integrity_ok`).

use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Pattern period: a prime, so a slip by any count under it shows as a mismatch.
pub const PERIOD: usize = 1_048_573;

/// A stream's content: byte `i` is `table[i % PERIOD]`, drawn from a seeded RNG.
#[derive(Debug)]
pub struct Pattern {
    table: Vec<u8>,
}

impl Pattern {
    /// The pattern for one direction of one run.
    pub fn new(seed: u64, stream: u64) -> Pattern {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ stream.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let mut table = vec![0u8; PERIOD];
        rng.fill_bytes(&mut table);
        Pattern { table }
    }

    /// Up to `max` bytes of the stream starting at offset `off` (one contiguous piece).
    pub fn slice(&self, off: u64, max: usize) -> &[u8] {
        let at = (off % PERIOD as u64) as usize;
        let end = at + max.min(PERIOD - at);
        &self.table[at..end]
    }

    /// Whether `bytes` equal the stream from offset `off`.
    pub fn matches(&self, mut off: u64, mut bytes: &[u8]) -> bool {
        while !bytes.is_empty() {
            let want = self.slice(off, bytes.len());
            if want != &bytes[..want.len()] {
                return false;
            }
            off += want.len() as u64;
            bytes = &bytes[want.len()..];
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_shift_and_wraps_period() {
        let p = Pattern::new(1, 0);
        let mut v = Vec::new();
        let mut off = PERIOD as u64 - 10;
        while v.len() < 30 {
            let s = p.slice(off, 30 - v.len());
            off += s.len() as u64;
            v.extend_from_slice(s);
        }
        assert!(p.matches(PERIOD as u64 - 10, &v));
        assert!(!p.matches(PERIOD as u64 - 9, &v));
        assert_ne!(Pattern::new(1, 1).slice(0, 16), p.slice(0, 16));
    }
}
