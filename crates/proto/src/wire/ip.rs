//! Minimal IPv4 (RFC 791) and IPv6 (RFC 8200) headers around TCP, for the TUN
//! driver and the pcap writer. TCP only; no fragments, no IPv6 extension headers.

use super::checksum::{fold, internet_checksum, ChecksumCtx, IP_PROTO_TCP};
use super::error::WireError;
use core::ops::Range;

/// IPv4 "don't fragment" flag in the flags/fragment-offset word (RFC 791 3.1).
const IPV4_DF: u16 = 0x4000;
/// IPv4 "more fragments" flag (RFC 791 3.1).
const IPV4_MF: u16 = 0x2000;
/// IPv4 fragment offset mask (RFC 791 3.1).
const IPV4_FRAG_OFFSET: u16 = 0x1fff;

/// An IPv4 header carrying TCP (RFC 791 3.1). The DSCP bits are emitted as
/// zero and ignored on parse; the ECN field is kept (RFC 3168 5); options are
/// skipped on parse and never emitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Ipv4Repr {
    /// Source address.
    pub src: [u8; 4],
    /// Destination address.
    pub dst: [u8; 4],
    /// Time to live.
    pub ttl: u8,
    /// Identification.
    pub ident: u16,
    /// Don't-fragment flag (RFC 791 3.1); Linux sets it on TCP for PMTU discovery.
    pub dont_frag: bool,
    /// Bytes after the IPv4 header (the TCP segment).
    pub payload_len: usize,
    /// The ECN field, the TOS byte's low two bits (RFC 3168 5: 0 Not-ECT,
    /// 2 ECT(0), 1 ECT(1), 3 CE).
    pub ecn: u8,
}

/// RFC 3168 5: ECT(0) codepoint.
pub const ECN_ECT0: u8 = 0b10;
/// RFC 3168 5: CE codepoint.
pub const ECN_CE: u8 = 0b11;

impl Ipv4Repr {
    /// Length of the header emit writes (no options, RFC 791 3.1).
    pub const HEADER_LEN: usize = 20;

    /// Parses an IPv4 header (RFC 791 3.1): version 4, IHL >= 5 (options
    /// skipped), valid header checksum, no fragment, protocol TCP. Returns the
    /// header and the payload's byte range (bytes beyond total length, such as
    /// link padding, are excluded).
    pub fn parse(bytes: &[u8]) -> Result<(Ipv4Repr, Range<usize>), WireError> {
        let Some(h) = bytes.get(..Self::HEADER_LEN) else {
            return Err(WireError::Truncated);
        };
        let be16 = |i: usize| u16::from_be_bytes([h[i], h[i + 1]]);
        let version = h[0] >> 4;
        if version != 4 {
            return Err(WireError::BadVersion { version });
        }
        let hl = usize::from(h[0] & 0x0f) * 4;
        if hl < Self::HEADER_LEN {
            return Err(WireError::BadHeaderLen);
        }
        let Some(full_header) = bytes.get(..hl) else {
            return Err(WireError::Truncated);
        };
        let total = usize::from(be16(2));
        if total < hl {
            return Err(WireError::BadHeaderLen);
        }
        if total > bytes.len() {
            return Err(WireError::Truncated);
        }
        if internet_checksum(full_header) != 0 {
            return Err(WireError::BadChecksum);
        }
        let frag = be16(6);
        if frag & (IPV4_MF | IPV4_FRAG_OFFSET) != 0 {
            return Err(WireError::Fragmented);
        }
        if h[9] != IP_PROTO_TCP {
            return Err(WireError::NotTcp { protocol: h[9] });
        }
        let repr = Ipv4Repr {
            src: [h[12], h[13], h[14], h[15]],
            dst: [h[16], h[17], h[18], h[19]],
            ttl: h[8],
            ident: be16(4),
            dont_frag: frag & IPV4_DF != 0,
            payload_len: total - hl,
            ecn: h[1] & 0b11,
        };
        Ok((repr, hl..total))
    }

    /// Writes the 20-byte header, checksum included, into the first
    /// [`HEADER_LEN`](Self::HEADER_LEN) bytes of `buf` (RFC 791 3.1).
    pub fn emit(&self, buf: &mut [u8]) -> Result<(), WireError> {
        let total = Self::HEADER_LEN + self.payload_len;
        let Ok(total) = u16::try_from(total) else {
            return Err(WireError::PayloadTooLong {
                len: self.payload_len,
            });
        };
        let Some(h) = buf.get_mut(..Self::HEADER_LEN) else {
            return Err(WireError::BufferLength {
                expected: Self::HEADER_LEN,
                actual: buf.len(),
            });
        };
        let frag = if self.dont_frag { IPV4_DF } else { 0 };
        h[0] = 0x45;
        h[1] = self.ecn & 0b11;
        h[2..4].copy_from_slice(&total.to_be_bytes());
        h[4..6].copy_from_slice(&self.ident.to_be_bytes());
        h[6..8].copy_from_slice(&frag.to_be_bytes());
        h[8] = self.ttl;
        h[9] = IP_PROTO_TCP;
        h[12..16].copy_from_slice(&self.src);
        h[16..20].copy_from_slice(&self.dst);
        // The sum of the header's 16-bit words (RFC 1071), taken from the
        // values rather than read back from `h`: a load spanning the small
        // stores just made cannot be forwarded from them and waits.
        let w = |b: [u8; 2]| u64::from(u16::from_be_bytes(b));
        let sum = w([0x45, self.ecn & 0b11])
            + u64::from(total)
            + u64::from(self.ident)
            + u64::from(frag)
            + w([self.ttl, IP_PROTO_TCP])
            + w([self.src[0], self.src[1]])
            + w([self.src[2], self.src[3]])
            + w([self.dst[0], self.dst[1]])
            + w([self.dst[2], self.dst[3]]);
        h[10..12].copy_from_slice(&fold(sum).to_be_bytes());
        Ok(())
    }

    /// The TCP pseudo-header for a segment inside this packet (RFC 9293 3.1).
    #[inline]
    pub fn checksum_ctx(&self) -> ChecksumCtx {
        ChecksumCtx::V4 {
            src: self.src,
            dst: self.dst,
        }
    }
}

/// An IPv6 fixed header carrying TCP directly (RFC 8200 3). Traffic class and
/// flow label are emitted as zero and ignored on parse.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Ipv6Repr {
    /// Source address.
    pub src: [u8; 16],
    /// Destination address.
    pub dst: [u8; 16],
    /// Hop limit.
    pub hop_limit: u8,
    /// Payload length: bytes after the fixed header (the TCP segment).
    pub payload_len: usize,
}

/// Next-header values that are IPv6 extension headers (RFC 8200 4, IANA registry).
const IPV6_EXTENSION_HEADERS: [u8; 10] = [0, 43, 44, 50, 51, 60, 135, 139, 140, 253];

impl Ipv6Repr {
    /// Length of the fixed header (RFC 8200 3).
    pub const HEADER_LEN: usize = 40;

    /// Parses the fixed header (RFC 8200 3): version 6, next header TCP
    /// (extension headers are reported unsupported). Returns the header and the
    /// payload's byte range.
    pub fn parse(bytes: &[u8]) -> Result<(Ipv6Repr, Range<usize>), WireError> {
        let Some(h) = bytes.get(..Self::HEADER_LEN) else {
            return Err(WireError::Truncated);
        };
        let version = h[0] >> 4;
        if version != 6 {
            return Err(WireError::BadVersion { version });
        }
        let next_header = h[6];
        if IPV6_EXTENSION_HEADERS.contains(&next_header) {
            return Err(WireError::Ipv6ExtensionHeader { next_header });
        }
        if next_header != IP_PROTO_TCP {
            return Err(WireError::NotTcp {
                protocol: next_header,
            });
        }
        let payload_len = usize::from(u16::from_be_bytes([h[4], h[5]]));
        let end = Self::HEADER_LEN + payload_len;
        if end > bytes.len() {
            return Err(WireError::Truncated);
        }
        let mut src = [0; 16];
        let mut dst = [0; 16];
        src.copy_from_slice(&h[8..24]);
        dst.copy_from_slice(&h[24..40]);
        let repr = Ipv6Repr {
            src,
            dst,
            hop_limit: h[7],
            payload_len,
        };
        Ok((repr, Self::HEADER_LEN..end))
    }

    /// Writes the 40-byte fixed header into the first [`HEADER_LEN`](Self::HEADER_LEN)
    /// bytes of `buf` (RFC 8200 3).
    pub fn emit(&self, buf: &mut [u8]) -> Result<(), WireError> {
        let Ok(len) = u16::try_from(self.payload_len) else {
            return Err(WireError::PayloadTooLong {
                len: self.payload_len,
            });
        };
        let Some(h) = buf.get_mut(..Self::HEADER_LEN) else {
            return Err(WireError::BufferLength {
                expected: Self::HEADER_LEN,
                actual: buf.len(),
            });
        };
        h[0..4].copy_from_slice(&[0x60, 0, 0, 0]);
        h[4..6].copy_from_slice(&len.to_be_bytes());
        h[6] = IP_PROTO_TCP;
        h[7] = self.hop_limit;
        h[8..24].copy_from_slice(&self.src);
        h[24..40].copy_from_slice(&self.dst);
        Ok(())
    }

    /// The TCP pseudo-header for a segment inside this packet (RFC 8200 8.1).
    #[inline]
    pub fn checksum_ctx(&self) -> ChecksumCtx {
        ChecksumCtx::V6 {
            src: self.src,
            dst: self.dst,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::TcpRepr;
    use proptest::prelude::*;

    /// The well-known example header (Wikipedia, "IPv4 header checksum"): UDP,
    /// 192.168.0.1 -> 192.168.0.199, checksum 0xb861.
    const UDP_EXAMPLE: [u8; 20] = [
        0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0xb8, 0x61, 0xc0, 0xa8, 0x00,
        0x01, 0xc0, 0xa8, 0x00, 0xc7,
    ];

    #[test]
    fn known_ipv4_checksum() {
        assert_eq!(internet_checksum(&UDP_EXAMPLE), 0);
        let mut b = UDP_EXAMPLE.to_vec();
        b.resize(0x73, 0);
        // The checksum verifies, so the error is about the protocol.
        assert_eq!(Ipv4Repr::parse(&b), Err(WireError::NotTcp { protocol: 17 }));
        // Same header as TCP: emit reproduces the known bytes with checksum
        // adjusted by exactly the protocol difference (0x11 - 0x06).
        let r = Ipv4Repr {
            src: [192, 168, 0, 1],
            dst: [192, 168, 0, 199],
            ttl: 64,
            ident: 0,
            dont_frag: true,
            payload_len: 0x73 - 20,
            ecn: 0,
        };
        let mut out = [0u8; 20];
        r.emit(&mut out).unwrap();
        let mut want = UDP_EXAMPLE;
        want[9] = 6;
        want[10..12].copy_from_slice(&(0xb861u16 + 0x11 - 0x06).to_be_bytes());
        assert_eq!(out, want);
    }

    #[test]
    fn ipv4_roundtrip_with_tcp() {
        let ip = Ipv4Repr {
            src: [10, 0, 0, 1],
            dst: [10, 0, 0, 2],
            ttl: 64,
            ident: 0xbeef,
            dont_frag: true,
            payload_len: 0,
            ecn: 0,
        };
        let tcp = TcpRepr {
            src_port: 1,
            dst_port: 2,
            ..Default::default()
        };
        let payload = b"abc";
        let tcp_len = tcp.buffer_len(payload.len());
        let ip = Ipv4Repr {
            payload_len: tcp_len,
            ecn: 0,
            ..ip
        };
        let mut pkt = vec![0u8; Ipv4Repr::HEADER_LEN + tcp_len];
        let (h, seg) = pkt.split_at_mut(Ipv4Repr::HEADER_LEN);
        ip.emit(h).unwrap();
        tcp.emit(seg, payload, Some(ip.checksum_ctx())).unwrap();
        pkt.extend([0, 0]); // link-layer padding is ignored
        let (p, range) = Ipv4Repr::parse(&pkt).unwrap();
        assert_eq!(p, ip);
        let (t, pr) = TcpRepr::parse(&pkt[range.clone()], Some(p.checksum_ctx())).unwrap();
        assert_eq!(t, tcp);
        assert_eq!(&pkt[range][pr], payload);
    }

    fn v4_bytes(r: &Ipv4Repr) -> Vec<u8> {
        let mut b = vec![0u8; Ipv4Repr::HEADER_LEN + r.payload_len];
        r.emit(&mut b).unwrap();
        b
    }

    fn refill_checksum(b: &mut [u8]) {
        let hl = usize::from(b[0] & 0xf) * 4;
        b[10..12].fill(0);
        let sum = internet_checksum(&b[..hl]);
        b[10..12].copy_from_slice(&sum.to_be_bytes());
    }

    #[test]
    fn ipv4_options_skipped() {
        // IHL 6 with a 4-byte option (NOP NOP NOP EOL).
        let r = Ipv4Repr {
            ttl: 1,
            payload_len: 4,
            ecn: 0,
            ..Default::default()
        };
        let mut b = v4_bytes(&r);
        b[0] = 0x46;
        b[20..24].copy_from_slice(&[1, 1, 1, 0]);
        b[2..4].copy_from_slice(&24u16.to_be_bytes());
        refill_checksum(&mut b);
        let (p, range) = Ipv4Repr::parse(&b).unwrap();
        assert_eq!(range, 24..24);
        assert_eq!(p.payload_len, 0);
    }

    #[test]
    fn ipv4_malformed() {
        let r = Ipv4Repr {
            ttl: 9,
            payload_len: 8,
            ecn: 0,
            ..Default::default()
        };
        let good = v4_bytes(&r);
        assert!(Ipv4Repr::parse(&good).is_ok());
        assert_eq!(Ipv4Repr::parse(&good[..19]), Err(WireError::Truncated));
        assert_eq!(Ipv4Repr::parse(&good[..27]), Err(WireError::Truncated));
        let mut b = good.clone();
        b[0] = 0x65;
        assert_eq!(
            Ipv4Repr::parse(&b),
            Err(WireError::BadVersion { version: 6 })
        );
        let mut b = good.clone();
        b[0] = 0x44;
        assert_eq!(Ipv4Repr::parse(&b), Err(WireError::BadHeaderLen));
        let mut b = good.clone();
        b[0] = 0x4f; // 60-byte header in a 28-byte packet
        assert_eq!(Ipv4Repr::parse(&b), Err(WireError::Truncated));
        let mut b = good.clone();
        b[2..4].copy_from_slice(&19u16.to_be_bytes());
        refill_checksum(&mut b);
        assert_eq!(Ipv4Repr::parse(&b), Err(WireError::BadHeaderLen));
        let mut b = good.clone();
        b[8] ^= 1;
        assert_eq!(Ipv4Repr::parse(&b), Err(WireError::BadChecksum));
        for frag in [IPV4_MF, 1, IPV4_DF | 0x100] {
            let mut b = good.clone();
            b[6..8].copy_from_slice(&frag.to_be_bytes());
            refill_checksum(&mut b);
            assert_eq!(Ipv4Repr::parse(&b), Err(WireError::Fragmented));
        }
        assert_eq!(
            Ipv4Repr {
                payload_len: 65516,
                ecn: 0,
                ..r
            }
            .emit(&mut [0; 20]),
            Err(WireError::PayloadTooLong { len: 65516 })
        );
        assert_eq!(
            r.emit(&mut [0; 19]),
            Err(WireError::BufferLength {
                expected: 20,
                actual: 19
            })
        );
    }

    #[test]
    fn ipv6_roundtrip_and_errors() {
        let r = Ipv6Repr {
            src: [0xfe; 16],
            dst: [1; 16],
            hop_limit: 64,
            payload_len: 3,
        };
        let mut b = vec![0u8; 43];
        r.emit(&mut b).unwrap();
        assert_eq!(&b[..8], &[0x60, 0, 0, 0, 0, 3, 6, 64]);
        assert_eq!(Ipv6Repr::parse(&b), Ok((r, 40..43)));
        assert_eq!(Ipv6Repr::parse(&b[..42]), Err(WireError::Truncated));
        assert_eq!(Ipv6Repr::parse(&b[..39]), Err(WireError::Truncated));
        let mut x = b.clone();
        x[6] = 44;
        assert_eq!(
            Ipv6Repr::parse(&x),
            Err(WireError::Ipv6ExtensionHeader { next_header: 44 })
        );
        x[6] = 17;
        assert_eq!(Ipv6Repr::parse(&x), Err(WireError::NotTcp { protocol: 17 }));
        x[0] = 0x45;
        assert_eq!(
            Ipv6Repr::parse(&x),
            Err(WireError::BadVersion { version: 4 })
        );
        assert_eq!(
            Ipv6Repr {
                payload_len: 65536,
                ..r
            }
            .emit(&mut b),
            Err(WireError::PayloadTooLong { len: 65536 })
        );
    }

    proptest! {
        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..80)) {
            let _ = Ipv4Repr::parse(&bytes);
            let _ = Ipv6Repr::parse(&bytes);
            // Also with a plausible first byte, to get past the version check.
            let mut b = bytes.clone();
            if let Some(first) = b.first_mut() {
                *first = 0x40 | (*first & 0x0f);
            }
            let _ = Ipv4Repr::parse(&b);
        }

        #[test]
        fn ipv4_roundtrip(
            src in any::<[u8; 4]>(), dst in any::<[u8; 4]>(), ttl in any::<u8>(),
            ident in any::<u16>(), dont_frag in any::<bool>(), payload_len in 0usize..64,
            ecn in 0u8..4,
        ) {
            let r = Ipv4Repr { src, dst, ttl, ident, dont_frag, payload_len, ecn };
            let b = v4_bytes(&r);
            prop_assert_eq!(Ipv4Repr::parse(&b), Ok((r, 20..20 + payload_len)));
        }

        /// The checksum emit takes from the field values is the one summed
        /// over the written header, for every total length.
        #[test]
        fn ipv4_checksum_from_fields(
            src in any::<[u8; 4]>(), dst in any::<[u8; 4]>(), ttl in any::<u8>(),
            ident in any::<u16>(), dont_frag in any::<bool>(), payload_len in 0usize..=65515,
            ecn in any::<u8>(),
        ) {
            let r = Ipv4Repr { src, dst, ttl, ident, dont_frag, payload_len, ecn };
            let mut h = [0xa5u8; 20];
            r.emit(&mut h).unwrap();
            prop_assert_eq!(internet_checksum(&h), 0);
            let mut zeroed = h;
            zeroed[10..12].fill(0);
            prop_assert_eq!(internet_checksum(&zeroed).to_be_bytes(), [h[10], h[11]]);
        }
    }
}
