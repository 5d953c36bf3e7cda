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

/// Adds `data` to a running one's-complement sum (RFC 1071 4.1), in parallel lanes.
///
/// Only the last chunk of a message may have odd length; it is padded with a
/// zero byte as RFC 1071 asks. The result is congruent, modulo 0xffff, to the
/// big-endian 16-bit word sum, which is all [`fold`] needs; it cannot overflow
/// for any `acc` below 2^63.
#[inline]
pub fn accumulate(acc: u64, data: &[u8]) -> u64 {
    if data.len() < BLOCK {
        // Headers and addresses: no lanes to set up.
        return acc + to_be16(words(data));
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, checked just above.
        return acc + unsafe { sum_avx2(data) };
    }
    acc + sum(data)
}

/// Bytes summed per step of the lane loop: 16 native-order 32-bit words.
const BLOCK: usize = 64;

/// The same loop as [`sum`] compiled for AVX2: four 256-bit adds per block
/// instead of eight 128-bit ones (SSE2 is all x86-64 guarantees).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn sum_avx2(data: &[u8]) -> u64 {
    sum(data)
}

/// The one's-complement sum of `data`, folded to 16 bits and byte-ordered as
/// a big-endian word sum.
///
/// Each native-order 32-bit word is added into its own 64-bit lane, as
/// RFC 1071 2(C) and 2(D) allow (parallel summation, deferred carries): 2^16 is 1
/// modulo 0xffff, so a 32-bit word is congruent to the sum of its 16-bit
/// halves, and a lane cannot carry out. The compiler vectorises the lane
/// loop; a serial add-with-carry chain does one word per cycle at best.
#[inline(always)]
fn sum(data: &[u8]) -> u64 {
    let mut s = 0u64;
    // Each lane gains less than 2^32 per block, so a part of 2^30 bytes keeps
    // every lane below 2^56 and their total below 2^60.
    for part in data.chunks(1 << 30) {
        let mut lanes = [0u64; BLOCK / 4];
        let mut blocks = part.chunks_exact(BLOCK);
        for blk in &mut blocks {
            for (lane, w) in lanes.iter_mut().zip(blk.chunks_exact(4)) {
                *lane += u64::from(word(w));
            }
        }
        let t: u64 = lanes.iter().sum::<u64>() + words(blocks.remainder());
        s += fold16(t);
    }
    to_be16(s)
}

/// The sum of fewer than [`BLOCK`] bytes as native-order 32-bit words and a
/// zero-padded tail: below 2^36.
#[inline(always)]
fn words(data: &[u8]) -> u64 {
    let mut t = 0u64;
    let mut words = data.chunks_exact(4);
    for w in &mut words {
        t += u64::from(word(w));
    }
    t + tail(words.remainder())
}

/// A native-order sum, folded to 16 bits and read as big-endian: byte-swapped
/// on little-endian machines, which keeps it congruent (RFC 1071 2(B)).
#[inline(always)]
fn to_be16(s: u64) -> u64 {
    u64::from(u16::from_be(fold16(s) as u16))
}

/// Folds a sum below 2^63 to at most 16 bits, congruent modulo 0xffff.
#[inline(always)]
fn fold16(s: u64) -> u64 {
    let mut x = (s >> 32) + (s & 0xffff_ffff);
    x = (x >> 16) + (x & 0xffff);
    x = (x >> 16) + (x & 0xffff);
    (x >> 16) + (x & 0xffff)
}

/// One native-order 32-bit word of a 4-byte slice.
#[inline(always)]
fn word(w: &[u8]) -> u32 {
    u32::from_ne_bytes([w[0], w[1], w[2], w[3]])
}

/// The last 0 to 3 bytes, zero-padded (RFC 1071 4.1), as a value congruent to
/// their native-order word: each piece starts at an even offset, so it lands on
/// the same byte lanes of a 16-bit word, and 2^16 = 1 modulo 0xffff.
#[inline(always)]
fn tail(rest: &[u8]) -> u64 {
    let n = rest.len();
    debug_assert!(n < 4);
    let mut t = 0u64;
    if n & 2 != 0 {
        t += u64::from(u16::from_ne_bytes([rest[0], rest[1]]));
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
        // The largest words: the lanes and every fold carry the most.
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

        /// The portable lane loop alone, whichever path `accumulate` takes on this CPU.
        #[test]
        fn portable_sum_matches_naive(data in proptest::collection::vec(any::<u8>(), 0..2000)) {
            prop_assert_eq!(fold(sum(&data)), naive(&data));
        }

        /// Bytes near 0xff: the lanes grow fastest and every fold carries.
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
