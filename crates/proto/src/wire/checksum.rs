//! The Internet checksum (RFC 1071) and the TCP pseudo-header (RFC 9293 3.1,
//! RFC 8200 8.1).

/// The pseudo-header a TCP checksum covers: the IP addresses around the segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ChecksumCtx {
    /// IPv4 pseudo-header (RFC 9293 3.1): source, destination, zero, protocol, TCP length.
    V4 {
        /// Source address.
        src: [u8; 4],
        /// Destination address.
        dst: [u8; 4],
    },
    /// IPv6 pseudo-header (RFC 8200 8.1): source, destination, length, zero, next header.
    V6 {
        /// Source address.
        src: [u8; 16],
        /// Destination address.
        dst: [u8; 16],
    },
}

/// IP protocol number of TCP (RFC 9293 3.1).
pub const IP_PROTO_TCP: u8 = 6;

impl ChecksumCtx {
    /// The unfolded one's-complement sum of the pseudo-header for a TCP segment of `tcp_len` bytes.
    #[inline]
    pub(crate) fn pseudo_sum(&self, tcp_len: usize) -> u64 {
        // Adding the length (and the protocol) as one wide number is congruent,
        // modulo 0xffff, to adding its 16-bit halves, which is all the fold needs.
        let base = tcp_len as u64 + u64::from(IP_PROTO_TCP);
        match self {
            ChecksumCtx::V4 { src, dst } => accumulate(accumulate(base, src), dst),
            ChecksumCtx::V6 { src, dst } => accumulate(accumulate(base, src), dst),
        }
    }
}

/// Adds `data` to a running one's-complement sum (RFC 1071 4.1), 64 bits at a time.
///
/// Only the last chunk of a message may have odd length; it is padded with a
/// zero byte as RFC 1071 asks. The result is congruent, modulo 0xffff, to the
/// big-endian 16-bit word sum, which is all [`fold`] needs; it cannot overflow
/// for any `acc` below 2^63.
#[inline]
pub fn accumulate(acc: u64, data: &[u8]) -> u64 {
    // Native-order 64-bit words in one add-with-carry chain (RFC 1071 4.1's
    // "add with end-around carry", 64 bits wide as Linux's x86-64 csum_partial
    // does): the compiler emits one `adc` per word with a memory operand, about
    // half the instructions of a two-word (u128) accumulator. The one's-complement
    // sum does not depend on byte order except for a final byte swap of the
    // folded 16 bits (RFC 1071 2(B)).
    let mut sum = 0u64;
    let mut carry = false;
    let mut blocks = data.chunks_exact(64);
    for blk in &mut blocks {
        let mut c = false;
        for w in blk.chunks_exact(8) {
            (sum, c) = add_with_carry(sum, word(w), c);
        }
        (sum, carry) = add_with_carry(sum, u64::from(carry), c);
    }
    let mut words = blocks.remainder().chunks_exact(8);
    for w in &mut words {
        (sum, carry) = add_with_carry(sum, word(w), carry);
    }
    (sum, carry) = add_with_carry(sum, tail(words.remainder()), carry);
    // End-around carry, then 64 to 16 bits. `sum` + 1 cannot carry again: the
    // tail is below 2^34, so a carry out of its add leaves `sum` below 2^34.
    let s = sum + u64::from(carry);
    let mut x = (s >> 32) + (s & 0xffff_ffff);
    x = (x >> 16) + (x & 0xffff);
    x = (x >> 16) + (x & 0xffff);
    x = (x >> 16) + (x & 0xffff);
    // A native-order sum read as big-endian: swapped on little-endian machines.
    acc + u64::from(u16::from_be(x as u16))
}

/// `a + b + carry` and the carry out: the pattern the compiler turns into `adc`.
#[inline(always)]
fn add_with_carry(a: u64, b: u64, carry: bool) -> (u64, bool) {
    let (s, c1) = a.overflowing_add(b);
    let (s, c2) = s.overflowing_add(u64::from(carry));
    (s, c1 | c2)
}

/// One native-order 64-bit word of an 8-byte slice.
#[inline(always)]
fn word(w: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(w);
    u64::from_ne_bytes(b)
}

/// The last 0 to 7 bytes, zero-padded (RFC 1071 4.1), as a value congruent to
/// their native-order word: each piece starts at an even offset, so it lands on
/// the same byte lanes of a 16-bit word whatever 32-bit shift it is read at, and
/// 2^16 = 1 modulo 0xffff. No call to `memcpy` for a few bytes.
#[inline(always)]
fn tail(rest: &[u8]) -> u64 {
    let n = rest.len();
    debug_assert!(n < 8);
    let mut t = 0u64;
    if n & 4 != 0 {
        t += u64::from(u32::from_ne_bytes([rest[0], rest[1], rest[2], rest[3]]));
    }
    if n & 2 != 0 {
        let i = n & 4;
        t += u64::from(u16::from_ne_bytes([rest[i], rest[i + 1]]));
    }
    if n & 1 != 0 {
        t += u64::from(u16::from_ne_bytes([rest[n - 1], 0]));
    }
    t
}

/// Folds a running sum to 16 bits and complements it: the value to put on the wire (RFC 1071 4.1).
#[inline]
pub fn fold(mut acc: u64) -> u16 {
    while acc >> 16 != 0 {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    !(acc as u16)
}

/// The Internet checksum of one buffer (RFC 1071). A buffer that already holds
/// its correct checksum sums to zero.
#[inline]
pub fn internet_checksum(data: &[u8]) -> u16 {
    fold(accumulate(0, data))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The textbook 16-bit word loop, as an independent oracle.
    fn naive(data: &[u8]) -> u16 {
        let mut sum: u32 = 0;
        for pair in data.chunks(2) {
            let hi = u32::from(pair[0]) << 8;
            let lo = pair.get(1).copied().map_or(0, u32::from);
            sum += hi | lo;
            sum = (sum & 0xffff) + (sum >> 16);
        }
        !(sum as u16)
    }

    #[test]
    fn rfc1071_example() {
        // RFC 1071 3: bytes 00 01 f2 03 f4 f5 f6 f7 sum to ddf2 (before complement).
        let data = [0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7];
        assert_eq!(internet_checksum(&data), !0xddf2);
    }

    #[test]
    fn odd_length_pads_with_zero() {
        assert_eq!(internet_checksum(&[0xab]), !0xab00);
        assert_eq!(internet_checksum(&[0x12, 0x34, 0x56]), !(0x1234 + 0x5600));
    }

    #[test]
    fn all_ones_carries_wrap_around() {
        // Every 64-bit add carries; the end-around carry must not lose any.
        for n in [0, 1, 7, 8, 15, 16, 17, 1500, 65535] {
            let data = vec![0xffu8; n];
            assert_eq!(internet_checksum(&data), naive(&data), "{n} bytes");
        }
    }

    #[test]
    fn fold_of_extreme_sums() {
        assert_eq!(fold(u64::MAX), !0xffff);
        assert_eq!(fold(0), 0xffff);
        assert_eq!(fold(0x1_0000), !1);
    }

    proptest! {
        #[test]
        fn matches_naive(data in proptest::collection::vec(any::<u8>(), 0..2000)) {
            prop_assert_eq!(internet_checksum(&data), naive(&data));
        }

        /// Bytes near 0xff make almost every 64-bit add carry, stressing the chain.
        #[test]
        fn carries_match_naive(data in proptest::collection::vec(0xf0u8..=0xff, 0..2000)) {
            prop_assert_eq!(internet_checksum(&data), naive(&data));
        }

        /// Any start offset and length, so every alignment and tail length is covered.
        #[test]
        fn any_slice_matches_naive(data in proptest::collection::vec(any::<u8>(), 0..300), start in 0usize..300) {
            let d = &data[start.min(data.len())..];
            prop_assert_eq!(internet_checksum(d), naive(d));
        }

        /// Summing a message in pieces (even-length pieces but the last) is the same as whole.
        #[test]
        fn accumulates_in_pieces(data in proptest::collection::vec(any::<u8>(), 0..600), cut in 0usize..300) {
            let cut = (cut * 2).min(data.len() & !1);
            let (a, b) = data.split_at(cut);
            prop_assert_eq!(fold(accumulate(accumulate(0, a), b)), naive(&data));
        }
    }
}
