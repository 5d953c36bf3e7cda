//! TCP header bytes (RFC 9293 3.1): a checked view, [`TcpSegment`], and the
//! parse/emit of the owned [`TcpRepr`].

use super::checksum::{accumulate, fold, ChecksumCtx};
use super::error::WireError;
use super::options::MAX_OPTIONS_LEN;
use super::repr::{Flags, TcpOptions, TcpRepr, TCP_HEADER_LEN};
use crate::seq::SeqNumber;
use core::ops::Range;

/// Byte offsets of the TCP header fields (RFC 9293 3.1), in one place.
pub mod field {
    use core::ops::Range;
    /// Source port.
    pub const SRC_PORT: Range<usize> = 0..2;
    /// Destination port.
    pub const DST_PORT: Range<usize> = 2..4;
    /// Sequence number.
    pub const SEQ: Range<usize> = 4..8;
    /// Acknowledgment number.
    pub const ACK: Range<usize> = 8..12;
    /// Data offset (high nibble, in 32-bit words), reserved bits and AE (low nibble).
    pub const DATA_OFFSET: usize = 12;
    /// Control bits CWR..FIN.
    pub const FLAGS: usize = 13;
    /// Window.
    pub const WINDOW: Range<usize> = 14..16;
    /// Checksum.
    pub const CHECKSUM: Range<usize> = 16..18;
    /// Urgent pointer.
    pub const URGENT: Range<usize> = 18..20;
    /// First option byte.
    pub const OPTIONS: usize = 20;
}

/// A view of a TCP segment's bytes (RFC 9293 3.1). Once made with
/// [`new_checked`](Self::new_checked) no accessor can panic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpSegment<T: AsRef<[u8]>> {
    buffer: T,
}

#[inline]
fn get16(b: &[u8], r: Range<usize>) -> u16 {
    let s = &b[r];
    u16::from_be_bytes([s[0], s[1]])
}

#[inline]
fn get32(b: &[u8], r: Range<usize>) -> u32 {
    let s = &b[r];
    u32::from_be_bytes([s[0], s[1], s[2], s[3]])
}

impl<T: AsRef<[u8]>> TcpSegment<T> {
    /// Wraps bytes without checking; accessors may panic on a short buffer.
    #[inline]
    pub const fn new_unchecked(buffer: T) -> Self {
        TcpSegment { buffer }
    }

    /// Wraps bytes after [`check_len`](Self::check_len): data offset >= 5 and the
    /// whole header inside the buffer (RFC 9293 3.1).
    #[inline]
    pub fn new_checked(buffer: T) -> Result<Self, WireError> {
        let seg = Self::new_unchecked(buffer);
        seg.check_len()?;
        Ok(seg)
    }

    /// Checks the fixed header fits, data offset >= 5, and the options fit (RFC 9293 3.1).
    pub fn check_len(&self) -> Result<(), WireError> {
        let b = self.buffer.as_ref();
        let Some(&off) = b.get(field::DATA_OFFSET) else {
            return Err(WireError::Truncated);
        };
        if b.len() < TCP_HEADER_LEN {
            return Err(WireError::Truncated);
        }
        let words = off >> 4;
        if words < 5 {
            return Err(WireError::BadDataOffset { words });
        }
        if usize::from(words) * 4 > b.len() {
            return Err(WireError::Truncated);
        }
        Ok(())
    }

    /// The underlying buffer.
    #[inline]
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// Source port (RFC 9293 3.1).
    #[inline]
    pub fn src_port(&self) -> u16 {
        get16(self.buffer.as_ref(), field::SRC_PORT)
    }
    /// Destination port (RFC 9293 3.1).
    #[inline]
    pub fn dst_port(&self) -> u16 {
        get16(self.buffer.as_ref(), field::DST_PORT)
    }
    /// Sequence number (RFC 9293 3.1).
    #[inline]
    pub fn seq_number(&self) -> SeqNumber {
        SeqNumber(get32(self.buffer.as_ref(), field::SEQ))
    }
    /// Acknowledgment number, meaningful only with ACK set (RFC 9293 3.1).
    #[inline]
    pub fn ack_number(&self) -> SeqNumber {
        SeqNumber(get32(self.buffer.as_ref(), field::ACK))
    }
    /// Data offset in 32-bit words (RFC 9293 3.1).
    #[inline]
    pub fn data_offset(&self) -> u8 {
        self.buffer.as_ref()[field::DATA_OFFSET] >> 4
    }
    /// Header length in bytes, options included (RFC 9293 3.1).
    #[inline]
    pub fn header_len(&self) -> usize {
        usize::from(self.data_offset()) * 4
    }
    /// Control bits CWR..FIN (RFC 9293 3.1); the AE/reserved bits are not included.
    #[inline]
    pub fn flags(&self) -> Flags {
        Flags(self.buffer.as_ref()[field::FLAGS])
    }
    /// Raw, unscaled window (RFC 9293 3.1).
    #[inline]
    pub fn window(&self) -> u16 {
        get16(self.buffer.as_ref(), field::WINDOW)
    }
    /// Checksum field as on the wire (RFC 9293 3.1).
    #[inline]
    pub fn checksum(&self) -> u16 {
        get16(self.buffer.as_ref(), field::CHECKSUM)
    }
    /// Urgent pointer (RFC 9293 3.1).
    #[inline]
    pub fn urgent(&self) -> u16 {
        get16(self.buffer.as_ref(), field::URGENT)
    }
    /// The option bytes, padding included (RFC 9293 3.1).
    #[inline]
    pub fn options(&self) -> &[u8] {
        &self.buffer.as_ref()[field::OPTIONS..self.header_len()]
    }
    /// The payload: everything after the header.
    #[inline]
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[self.header_len()..]
    }
    /// Whether the checksum over pseudo-header, header and payload verifies (RFC 9293 3.1).
    #[inline]
    pub fn verify_checksum(&self, ctx: &ChecksumCtx) -> bool {
        let b = self.buffer.as_ref();
        fold(accumulate(ctx.pseudo_sum(b.len()), b)) == 0
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> TcpSegment<T> {
    #[inline]
    fn put(&mut self, r: Range<usize>, v: &[u8]) {
        self.buffer.as_mut()[r].copy_from_slice(v);
    }
    /// Sets the source port.
    #[inline]
    pub fn set_src_port(&mut self, v: u16) {
        self.put(field::SRC_PORT, &v.to_be_bytes());
    }
    /// Sets the destination port.
    #[inline]
    pub fn set_dst_port(&mut self, v: u16) {
        self.put(field::DST_PORT, &v.to_be_bytes());
    }
    /// Sets the sequence number.
    #[inline]
    pub fn set_seq_number(&mut self, v: SeqNumber) {
        self.put(field::SEQ, &v.0.to_be_bytes());
    }
    /// Sets the acknowledgment number.
    #[inline]
    pub fn set_ack_number(&mut self, v: SeqNumber) {
        self.put(field::ACK, &v.0.to_be_bytes());
    }
    /// Sets the data offset from a header length in bytes (multiple of 4,
    /// 20..=60), clearing the reserved and AE bits.
    #[inline]
    pub fn set_header_len(&mut self, len: usize) {
        debug_assert!(len & 3 == 0 && (TCP_HEADER_LEN..=60).contains(&len));
        self.buffer.as_mut()[field::DATA_OFFSET] = ((len / 4) as u8) << 4;
    }
    /// Sets the control bits CWR..FIN.
    #[inline]
    pub fn set_flags(&mut self, v: Flags) {
        self.buffer.as_mut()[field::FLAGS] = v.0;
    }
    /// Sets the raw window.
    #[inline]
    pub fn set_window(&mut self, v: u16) {
        self.put(field::WINDOW, &v.to_be_bytes());
    }
    /// Sets the checksum field.
    #[inline]
    pub fn set_checksum(&mut self, v: u16) {
        self.put(field::CHECKSUM, &v.to_be_bytes());
    }
    /// Sets the urgent pointer.
    #[inline]
    pub fn set_urgent(&mut self, v: u16) {
        self.put(field::URGENT, &v.to_be_bytes());
    }
    /// The payload, mutable.
    #[inline]
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let hl = self.header_len();
        &mut self.buffer.as_mut()[hl..]
    }
    /// Computes and writes the checksum over pseudo-header, header and payload (RFC 9293 3.1).
    #[inline]
    pub fn fill_checksum(&mut self, ctx: &ChecksumCtx) {
        self.set_checksum(0);
        let b = self.buffer.as_ref();
        let sum = fold(accumulate(ctx.pseudo_sum(b.len()), b));
        self.set_checksum(sum);
    }
}

impl TcpRepr {
    /// Parses a TCP segment (RFC 9293 3.1), verifying the checksum when a
    /// pseudo-header is given. Returns the header and the payload's byte range.
    pub fn parse(
        bytes: &[u8],
        checksum: Option<ChecksumCtx>,
    ) -> Result<(TcpRepr, Range<usize>), WireError> {
        let mut repr = TcpRepr::default();
        let range = Self::parse_into(bytes, checksum, &mut repr)?;
        Ok((repr, range))
    }

    /// [`parse`](Self::parse) writing the header into `out` (every field set
    /// on success; unspecified on error): a receive path that keeps one
    /// header never copies the 160-byte struct it just filled.
    pub fn parse_into(
        bytes: &[u8],
        checksum: Option<ChecksumCtx>,
        out: &mut TcpRepr,
    ) -> Result<Range<usize>, WireError> {
        let seg = TcpSegment::new_checked(bytes)?;
        if let Some(ctx) = checksum {
            if !seg.verify_checksum(&ctx) {
                return Err(WireError::BadChecksum);
            }
        }
        // A bare 20-byte header (most data segments and ACKs without
        // timestamps) skips the option parser: no options is its default.
        out.options = if seg.header_len() == TCP_HEADER_LEN {
            TcpOptions::default()
        } else {
            TcpOptions::parse(seg.options())?
        };
        out.src_port = seg.src_port();
        out.dst_port = seg.dst_port();
        out.seq = seg.seq_number();
        out.ack = seg.ack_number();
        out.flags = seg.flags();
        out.window = seg.window();
        out.urgent = seg.urgent();
        Ok(seg.header_len()..bytes.len())
    }

    /// Bytes needed to emit this header with a payload of `payload_len` bytes.
    #[inline]
    pub fn buffer_len(&self, payload_len: usize) -> usize {
        self.header_len() + payload_len
    }

    /// Writes header and payload into `buf`, which must be exactly
    /// [`buffer_len`](Self::buffer_len)`(payload.len())` bytes (RFC 9293 3.1).
    /// Fills the checksum if a pseudo-header is given, else writes zero there.
    /// Fails if the options exceed 40 bytes or hold an unencodable RFC 1106 value.
    pub fn emit(
        &self,
        buf: &mut [u8],
        payload: &[u8],
        checksum: Option<ChecksumCtx>,
    ) -> Result<(), WireError> {
        let hl = self.checked_header_len()?;
        let expected = hl + payload.len();
        if buf.len() != expected {
            return Err(WireError::BufferLength {
                expected,
                actual: buf.len(),
            });
        }
        buf[hl..].copy_from_slice(payload);
        self.emit_header(buf, hl, checksum)
    }

    /// Writes the header in front of a payload already in place: `segment` is
    /// [`header_len`](Self::header_len) bytes of room followed by the payload.
    /// The same bytes as [`emit`](Self::emit), without copying the payload,
    /// for drivers that had the engine write it behind reserved room.
    pub fn emit_in_place(
        &self,
        segment: &mut [u8],
        checksum: Option<ChecksumCtx>,
    ) -> Result<(), WireError> {
        let hl = self.checked_header_len()?;
        if segment.len() < hl {
            return Err(WireError::BufferLength {
                expected: hl,
                actual: segment.len(),
            });
        }
        self.emit_header(segment, hl, checksum)
    }

    /// The header length the options need, or why they cannot be encoded.
    fn checked_header_len(&self) -> Result<usize, WireError> {
        let opt_len = self.options.encoded_len();
        if opt_len > MAX_OPTIONS_LEN {
            return Err(WireError::OptionsTooLong { len: opt_len });
        }
        Ok(TCP_HEADER_LEN + opt_len)
    }

    /// Fills the `hl`-byte header of `buf` (payload already behind it) and the checksum.
    fn emit_header(
        &self,
        buf: &mut [u8],
        hl: usize,
        checksum: Option<ChecksumCtx>,
    ) -> Result<(), WireError> {
        // No option bytes: nothing to write, and nothing that could fail (an
        // unencodable RFC 1106 value always takes room).
        if hl > TCP_HEADER_LEN {
            self.options.emit(&mut buf[field::OPTIONS..hl])?;
        }
        let mut seg = TcpSegment::new_unchecked(buf);
        seg.set_src_port(self.src_port);
        seg.set_dst_port(self.dst_port);
        seg.set_seq_number(self.seq);
        seg.set_ack_number(self.ack);
        seg.set_header_len(hl);
        seg.set_flags(self.flags);
        seg.set_window(self.window);
        seg.set_urgent(self.urgent);
        match checksum {
            Some(ctx) => seg.fill_checksum(&ctx),
            None => seg.set_checksum(0),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::options::tests::arb_options;
    use crate::wire::{Nak, RawOptions, Timestamps, RFC1106_BIGWIN_MAX};
    use proptest::prelude::*;

    const V4: ChecksumCtx = ChecksumCtx::V4 {
        src: [10, 0, 0, 1],
        dst: [10, 0, 0, 2],
    };

    /// A Linux SYN, 10.0.0.1:54321 -> 10.0.0.2:8080, written out by hand:
    /// seq 0x12345678, win 64240, MSS 1460, SACK_PERM, TS val 0x000a1b2c ecr 0, NOP, WS 7.
    /// Checksum 0xc168 computed independently (Python) with the textbook 16-bit loop.
    const LINUX_SYN: [u8; 40] = [
        0xd4, 0x31, 0x1f, 0x90, // ports
        0x12, 0x34, 0x56, 0x78, // seq
        0x00, 0x00, 0x00, 0x00, // ack
        0xa0, 0x02, 0xfa, 0xf0, // doff 10, SYN, window 64240
        0xc1, 0x68, 0x00, 0x00, // checksum, urgent
        0x02, 0x04, 0x05, 0xb4, // MSS 1460
        0x04, 0x02, 0x08, 0x0a, // SACK_PERM, TS
        0x00, 0x0a, 0x1b, 0x2c, // tsval
        0x00, 0x00, 0x00, 0x00, // tsecr
        0x01, 0x03, 0x03, 0x07, // NOP, WS 7
    ];

    fn linux_syn_repr() -> TcpRepr {
        TcpRepr {
            src_port: 54321,
            dst_port: 8080,
            seq: SeqNumber(0x1234_5678),
            ack: SeqNumber(0),
            flags: Flags::SYN,
            window: 64240,
            urgent: 0,
            options: TcpOptions {
                mss: Some(1460),
                sack_permitted: true,
                timestamps: Some(Timestamps {
                    tsval: 0x000a_1b2c,
                    tsecr: 0,
                }),
                window_scale: Some(7),
                ..Default::default()
            },
        }
    }

    fn emit_vec(r: &TcpRepr, payload: &[u8], ctx: Option<ChecksumCtx>) -> Vec<u8> {
        let mut v = vec![0xee; r.buffer_len(payload.len())];
        r.emit(&mut v, payload, ctx).expect("emit");
        v
    }

    #[test]
    fn linux_syn_parses() {
        let (r, payload) = TcpRepr::parse(&LINUX_SYN, Some(V4)).unwrap();
        assert_eq!(r, linux_syn_repr());
        assert_eq!(payload, 40..40);
        let seg = TcpSegment::new_checked(&LINUX_SYN[..]).unwrap();
        assert_eq!(seg.checksum(), 0xc168);
        assert_eq!(seg.header_len(), 40);
        assert!(seg.verify_checksum(&V4));
    }

    #[test]
    fn linux_syn_emits_same_bytes() {
        assert_eq!(emit_vec(&linux_syn_repr(), &[], Some(V4)), LINUX_SYN);
    }

    #[test]
    fn checksum_is_checked() {
        let mut b = LINUX_SYN;
        b[5] ^= 1;
        assert_eq!(TcpRepr::parse(&b, Some(V4)), Err(WireError::BadChecksum));
        // Without a context, no verification.
        assert!(TcpRepr::parse(&b, None).is_ok());
        let other = ChecksumCtx::V4 {
            src: [10, 0, 0, 1],
            dst: [10, 0, 0, 3],
        };
        assert_eq!(
            TcpRepr::parse(&LINUX_SYN, Some(other)),
            Err(WireError::BadChecksum)
        );
    }

    #[test]
    fn checksum_v6_and_odd_payload() {
        let ctx = ChecksumCtx::V6 {
            src: [0xfe; 16],
            dst: [0x20; 16],
        };
        let r = TcpRepr {
            flags: Flags::ACK | Flags::PSH,
            ..linux_syn_repr()
        };
        let b = emit_vec(&r, b"hello", Some(ctx));
        let (p, range) = TcpRepr::parse(&b, Some(ctx)).unwrap();
        assert_eq!(p, r);
        assert_eq!(&b[range], b"hello");
        assert!(TcpRepr::parse(&b, Some(V4)).is_err());
    }

    #[test]
    fn malformed_segments() {
        assert_eq!(TcpRepr::parse(&[], None), Err(WireError::Truncated));
        assert_eq!(
            TcpRepr::parse(&LINUX_SYN[..19], None),
            Err(WireError::Truncated)
        );
        // Data offset 10 words but only 36 bytes.
        assert_eq!(
            TcpRepr::parse(&LINUX_SYN[..36], None),
            Err(WireError::Truncated)
        );
        let mut b = LINUX_SYN;
        b[12] = 0x40;
        assert_eq!(
            TcpRepr::parse(&b, None),
            Err(WireError::BadDataOffset { words: 4 })
        );
        b[12] = 0xf0;
        assert_eq!(TcpRepr::parse(&b, None), Err(WireError::Truncated));
        let mut b = LINUX_SYN;
        b[21] = 3; // MSS length 3
        assert!(matches!(
            TcpRepr::parse(&b, None),
            Err(WireError::BadOption { kind: 2, .. })
        ));
    }

    #[test]
    fn emit_refusals() {
        let r = linux_syn_repr();
        assert_eq!(
            r.emit(&mut [0; 41], &[], None),
            Err(WireError::BufferLength {
                expected: 40,
                actual: 41
            })
        );
        let mut big = r;
        for i in 0..3 {
            big.options.sack_blocks.push(SeqNumber(i), SeqNumber(i + 1));
        }
        assert_eq!(big.header_len(), 68);
        assert_eq!(
            big.emit(&mut [0; 68], &[], None),
            Err(WireError::OptionsTooLong { len: 48 })
        );
    }

    #[test]
    fn reserved_bits_ignored_on_parse() {
        let mut b = LINUX_SYN;
        b[12] |= 0x0f; // reserved + AE
        let (r, _) = TcpRepr::parse(&b, None).unwrap();
        assert_eq!(r, linux_syn_repr());
    }

    #[test]
    fn roundtrip_hand_built() {
        let mut unknown = RawOptions::default();
        unknown.push(30, &[9, 9, 9]);
        unknown.push(253, &[0xbe, 0xef]);
        let mut sack = crate::wire::SackBlocks::default();
        let base = TcpRepr {
            src_port: 1,
            dst_port: 65535,
            seq: SeqNumber(u32::MAX),
            ack: SeqNumber(7),
            flags: Flags::ACK,
            window: 1,
            urgent: 3,
            options: TcpOptions::default(),
        };
        let mut cases = vec![base, linux_syn_repr()];
        for n in 1..=4u32 {
            sack.push(SeqNumber(n), SeqNumber(n + 100));
            let mut r = base;
            r.options.sack_blocks = sack;
            cases.push(r);
        }
        let mut r = base;
        r.options.unknown = unknown;
        r.options.timestamps = Some(Timestamps { tsval: 5, tsecr: 6 });
        cases.push(r);
        let mut r = base;
        r.flags = Flags::SYN | Flags::ACK | Flags::ECE;
        r.options.nak_permitted = true;
        r.options.big_window_offer = Some(123_456_789);
        r.options.mss = Some(9000);
        cases.push(r);
        let mut r = base;
        r.options.big_window_upper = Some(0x1234);
        r.options.nak = Some(Nak {
            seq: SeqNumber(42),
            count: 2,
        });
        r.options.timestamps = Some(Timestamps { tsval: 1, tsecr: 1 });
        cases.push(r);
        for r in cases {
            for payload in [&b""[..], b"x", b"0123456789abcdef"] {
                let b = emit_vec(&r, payload, Some(V4));
                assert_eq!(b.len(), r.header_len() + payload.len());
                let (p, range) = TcpRepr::parse(&b, Some(V4)).unwrap();
                assert_eq!(p, r);
                assert_eq!(&b[range], payload);
                // The payload already in place behind stale header bytes: same segment.
                let mut in_place = vec![0xa5; r.header_len()];
                in_place.extend_from_slice(payload);
                r.emit_in_place(&mut in_place, Some(V4)).unwrap();
                assert_eq!(in_place, b, "emit_in_place differs from emit");
            }
        }
        let r = linux_syn_repr();
        let mut short = vec![0; r.header_len() - 1];
        assert_eq!(
            r.emit_in_place(&mut short, Some(V4)),
            Err(WireError::BufferLength {
                expected: r.header_len(),
                actual: r.header_len() - 1
            })
        );
    }

    #[test]
    fn bare_header_skips_options_both_ways() {
        let r = TcpRepr {
            src_port: 7,
            dst_port: 40000,
            seq: SeqNumber(9),
            ack: SeqNumber(1_000_001),
            flags: Flags::ACK,
            window: 512,
            ..Default::default()
        };
        let b = emit_vec(&r, b"xy", Some(V4));
        assert_eq!(b.len(), 22);
        assert_eq!(b[12], 5 << 4, "data offset 5 words");
        assert_eq!(TcpRepr::parse(&b, Some(V4)).unwrap(), (r, 20..22));
        // An unencodable option still takes room, so it still reaches the check.
        let mut bad = r;
        bad.options.big_window_offer = Some(RFC1106_BIGWIN_MAX + 1);
        let mut buf = vec![0; bad.buffer_len(0)];
        assert!(matches!(
            bad.emit(&mut buf, &[], None),
            Err(WireError::BadOption { .. })
        ));
    }

    fn arb_repr() -> impl Strategy<Value = TcpRepr> {
        (any::<(u16, u16, u32, u32, u8, u16, u16)>(), arb_options()).prop_map(
            |((sp, dp, seq, ack, flags, win, urg), options)| TcpRepr {
                src_port: sp,
                dst_port: dp,
                seq: SeqNumber(seq),
                ack: SeqNumber(ack),
                flags: Flags(flags),
                window: win,
                urgent: urg,
                options,
            },
        )
    }

    /// Bytes that look like a TCP header: a plausible data offset byte and option
    /// bytes drawn mostly from known kinds and small lengths.
    fn arb_header_like() -> impl Strategy<Value = Vec<u8>> {
        let byte = prop_oneof![0u8..=12, Just(253u8), Just(0x11), Just(0x06), any::<u8>()];
        (
            proptest::collection::vec(any::<u8>(), 20),
            5u8..=15,
            proptest::collection::vec(byte, 0..50),
        )
            .prop_map(|(mut h, words, tail)| {
                h[12] = words << 4;
                h.extend(tail);
                h
            })
    }

    proptest! {
        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..100)) {
            if let Ok(seg) = TcpSegment::new_checked(&bytes[..]) {
                let _ = (seg.src_port(), seg.dst_port(), seq_ack(&seg), seg.flags());
                let _ = (seg.window(), seg.checksum(), seg.urgent());
                let _ = (seg.options(), seg.payload(), seg.verify_checksum(&V4));
            }
            let _ = TcpRepr::parse(&bytes, Some(V4));
            let _ = TcpRepr::parse(&bytes, None);
        }

        #[test]
        fn header_like_bytes_never_panic(bytes in arb_header_like()) {
            if let Ok(seg) = TcpSegment::new_checked(&bytes[..]) {
                let _ = (seg.options(), seg.payload());
            }
            if let Ok((r, range)) = TcpRepr::parse(&bytes, None) {
                prop_assert!(range.start <= bytes.len());
                // Whatever parses re-emits (it may be laid out differently).
                if r.options_len() <= MAX_OPTIONS_LEN {
                    let b = emit_vec(&r, &bytes[range], None);
                    prop_assert_eq!(TcpRepr::parse(&b, None).map(|x| x.0), Ok(r));
                }
            }
        }

        #[test]
        fn random_reprs_roundtrip(
            r in arb_repr(),
            payload in proptest::collection::vec(any::<u8>(), 0..64),
        ) {
            let b = emit_vec(&r, &payload, Some(V4));
            prop_assert_eq!(b.len(), r.header_len() + payload.len());
            let (p, range) = TcpRepr::parse(&b, Some(V4)).unwrap();
            prop_assert_eq!(p, r);
            prop_assert_eq!(&b[range], &payload[..]);
        }
    }

    fn seq_ack(seg: &TcpSegment<&[u8]>) -> (SeqNumber, SeqNumber) {
        (seg.seq_number(), seg.ack_number())
    }
}
