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

/// Adds `data` to a running one's-complement sum (RFC 1071 4.1), 32 bits at a time.
///
/// Only the last chunk of a message may have odd length; it is padded with a
/// zero byte as RFC 1071 asks. The u64 accumulator cannot overflow for any
/// buffer shorter than 2^32 words.
#[inline]
pub fn accumulate(mut acc: u64, data: &[u8]) -> u64 {
    // Summing big-endian 32-bit words and folding gives the same result as
    // summing 16-bit words, because 2^16 == 1 modulo 0xffff (RFC 1071 2(B)).
    // LLVM vectorizes this loop; 64-bit words with end-around carry do not
    // vectorize and measured slower (benches: wire/encode_and_parse).
    let mut words = data.chunks_exact(4);
    for w in &mut words {
        acc += u64::from(u32::from_be_bytes([w[0], w[1], w[2], w[3]]));
    }
    let rest = words.remainder();
    let mut tail = [0u8; 4];
    tail[..rest.len()].copy_from_slice(rest);
    acc + u64::from(u32::from_be_bytes(tail))
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

        /// Summing a message in pieces (even-length pieces but the last) is the same as whole.
        #[test]
        fn accumulates_in_pieces(data in proptest::collection::vec(any::<u8>(), 0..600), cut in 0usize..300) {
            let cut = (cut * 2).min(data.len() & !1);
            let (a, b) = data.split_at(cut);
            prop_assert_eq!(fold(accumulate(accumulate(0, a), b)), naive(&data));
        }
    }
}
