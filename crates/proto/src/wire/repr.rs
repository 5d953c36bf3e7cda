//! Owned TCP header representation: what the engine consumes and produces.

use crate::seq::SeqNumber;
use core::fmt;

/// TCP header flags (RFC 9293 3.1), as the low byte of the flags field.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Flags(pub u8);

impl Flags {
    pub const FIN: Flags = Flags(0x01);
    pub const SYN: Flags = Flags(0x02);
    pub const RST: Flags = Flags(0x04);
    pub const PSH: Flags = Flags(0x08);
    pub const ACK: Flags = Flags(0x10);
    pub const URG: Flags = Flags(0x20);
    pub const ECE: Flags = Flags(0x40);
    pub const CWR: Flags = Flags(0x80);
    pub const NONE: Flags = Flags(0);

    #[inline]
    pub fn contains(self, f: Flags) -> bool {
        self.0 & f.0 == f.0
    }
    #[inline]
    pub fn set(&mut self, f: Flags, on: bool) {
        if on {
            self.0 |= f.0
        } else {
            self.0 &= !f.0
        }
    }
    #[inline]
    pub fn fin(self) -> bool {
        self.contains(Flags::FIN)
    }
    #[inline]
    pub fn syn(self) -> bool {
        self.contains(Flags::SYN)
    }
    #[inline]
    pub fn rst(self) -> bool {
        self.contains(Flags::RST)
    }
    #[inline]
    pub fn psh(self) -> bool {
        self.contains(Flags::PSH)
    }
    #[inline]
    pub fn ack(self) -> bool {
        self.contains(Flags::ACK)
    }
}

impl core::ops::BitOr for Flags {
    type Output = Flags;
    fn bitor(self, o: Flags) -> Flags {
        Flags(self.0 | o.0)
    }
}

impl fmt::Debug for Flags {
    /// tcpdump/packetdrill style: `S`, `.`, `P`, `F`, `R`, `U`, `E`, `W`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        for (flag, c) in [
            (Flags::SYN, 'S'),
            (Flags::FIN, 'F'),
            (Flags::RST, 'R'),
            (Flags::PSH, 'P'),
            (Flags::URG, 'U'),
            (Flags::ECE, 'E'),
            (Flags::CWR, 'W'),
        ] {
            if self.contains(flag) {
                s.push(c);
            }
        }
        if self.ack() {
            s.push('.');
        }
        if s.is_empty() {
            s.push('-');
        }
        f.write_str(&s)
    }
}

/// RFC 7323 section 3 timestamps option.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Timestamps {
    pub tsval: u32,
    pub tsecr: u32,
}

/// Up to four SACK blocks (RFC 2018 section 3), inline so a header never allocates.
/// Equality compares only the blocks in use (not stale slots left by `clear`).
#[derive(Clone, Copy, Default)]
pub struct SackBlocks {
    blocks: [(SeqNumber, SeqNumber); 4],
    len: u8,
}

impl SackBlocks {
    pub const MAX: usize = 4;
    /// Appends a block `[left, right)`; returns false when full.
    pub fn push(&mut self, left: SeqNumber, right: SeqNumber) -> bool {
        if (self.len as usize) < Self::MAX {
            self.blocks[self.len as usize] = (left, right);
            self.len += 1;
            true
        } else {
            false
        }
    }
    pub fn as_slice(&self) -> &[(SeqNumber, SeqNumber)] {
        &self.blocks[..self.len as usize]
    }
    pub fn len(&self) -> usize {
        self.len as usize
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    pub fn clear(&mut self) {
        self.len = 0;
    }
}

impl PartialEq for SackBlocks {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}
impl Eq for SackBlocks {}

impl fmt::Debug for SackBlocks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

/// RFC 1106 section 2.1 NAK: the first missing byte and how many MSS-sized
/// segments from there are missing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Nak {
    pub seq: SeqNumber,
    pub count: u8,
}

/// Options we do not interpret, kept verbatim as raw kind-length-value bytes so
/// captures round-trip. Inline: the option space is at most 40 bytes.
/// Equality compares only the bytes in use.
#[derive(Clone, Copy)]
pub struct RawOptions {
    bytes: [u8; 40],
    len: u8,
}

impl Default for RawOptions {
    fn default() -> Self {
        RawOptions {
            bytes: [0; 40],
            len: 0,
        }
    }
}

impl RawOptions {
    /// Appends one whole option (kind, length, data). Returns false if it does not fit.
    pub fn push(&mut self, kind: u8, data: &[u8]) -> bool {
        let need = 2 + data.len();
        let at = self.len as usize;
        if at + need > self.bytes.len() || need > 255 {
            return false;
        }
        self.bytes[at] = kind;
        self.bytes[at + 1] = need as u8;
        self.bytes[at + 2..at + need].copy_from_slice(data);
        self.len += need as u8;
        true
    }
    /// The raw bytes of all kept options.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }
    /// Iterates (kind, data) pairs.
    pub fn iter(&self) -> impl Iterator<Item = (u8, &[u8])> {
        let b = self.as_bytes();
        let mut i = 0;
        core::iter::from_fn(move || {
            if i + 2 > b.len() {
                return None;
            }
            let (kind, len) = (b[i], b[i + 1] as usize);
            let item = (kind, &b[i + 2..i + len]);
            i += len;
            Some(item)
        })
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl PartialEq for RawOptions {
    fn eq(&self, other: &Self) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}
impl Eq for RawOptions {}

impl fmt::Debug for RawOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// Every TCP option the engine understands, decoded. `None`/`false` = absent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct TcpOptions {
    /// RFC 9293 3.7.1 maximum segment size (SYN only).
    pub mss: Option<u16>,
    /// RFC 7323 2.2 window scale shift (SYN only).
    pub window_scale: Option<u8>,
    /// RFC 2018 2 SACK-permitted (SYN only).
    pub sack_permitted: bool,
    /// RFC 2018 3 SACK blocks.
    pub sack_blocks: SackBlocks,
    /// RFC 7323 3.2 timestamps.
    pub timestamps: Option<Timestamps>,
    /// RFC 1106 3 option B: our 30-bit receive window, offered in SYN / SYN-ACK.
    pub big_window_offer: Option<u32>,
    /// RFC 1106 3.1 option C: upper 15 bits of the receive window, on every
    /// segment once big windows are in use.
    pub big_window_upper: Option<u16>,
    /// RFC 1106 2 NAK-permitted, offered in SYN / SYN-ACK (negotiated like SACK-permitted).
    pub nak_permitted: bool,
    /// RFC 1106 2.1 option A: a NAK.
    pub nak: Option<Nak>,
    /// RFC 7413 4.1.1 Fast Open option (kind 34 or experimental 254): a
    /// cookie request (empty) or a cookie.
    pub fast_open: Option<crate::fastopen::FastOpenOption>,
    /// Options we do not interpret, verbatim.
    pub unknown: RawOptions,
}

/// An owned TCP header. The payload travels beside it as a byte slice.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct TcpRepr {
    pub src_port: u16,
    pub dst_port: u16,
    pub seq: SeqNumber,
    /// Meaningful only when `flags` has ACK.
    pub ack: SeqNumber,
    pub flags: Flags,
    /// The raw 16-bit window field (before any scaling).
    pub window: u16,
    pub urgent: u16,
    pub options: TcpOptions,
}

/// TCP header size without options (RFC 9293 3.1).
pub const TCP_HEADER_LEN: usize = 20;
/// IPv4 header size without options.
pub const IPV4_HEADER_LEN: usize = 20;

impl TcpRepr {
    /// Sequence space this segment occupies: payload plus one each for SYN and FIN.
    #[inline]
    pub fn segment_len(&self, payload_len: usize) -> usize {
        payload_len + self.flags.syn() as usize + self.flags.fin() as usize
    }

    /// Encoded option bytes, padded to a multiple of four: exactly what the codec
    /// emits (Linux-like layout, each option NOP-aligned to 4 bytes; see
    /// [`TcpOptions::encoded_len`]). Can exceed 40, which emit then refuses.
    #[inline]
    pub fn options_len(&self) -> usize {
        self.options.encoded_len()
    }

    /// TCP header length including options.
    #[inline]
    pub fn header_len(&self) -> usize {
        TCP_HEADER_LEN + self.options_len()
    }
}

/// RFC 6994 experimental option kind that carries RFC 1106's options.
pub const TCPOPT_EXPERIMENTAL: u8 = 253;
/// The ExID tinygram uses for all RFC 1106 options; one more byte after it names
/// the RFC 1106 option ('A' NAK, 'B' big-window offer, 'C' window upper bits,
/// 'P' NAK-permitted).
pub const RFC1106_EXID: u16 = 0x1106;
/// kind, len, ExID(2), 'B', 30-bit window(4).
pub const RFC1106_BIGWIN_OFFER_LEN: usize = 9;
/// kind, len, ExID(2), 'C', upper 15 bits(2).
pub const RFC1106_BIGWIN_UPPER_LEN: usize = 7;
/// kind, len, ExID(2), 'P'.
pub const RFC1106_NAK_PERMITTED_LEN: usize = 5;
/// kind, len, ExID(2), 'A', seq(4), count(1).
pub const RFC1106_NAK_LEN: usize = 10;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_len_pads_options() {
        let mut r = TcpRepr::default();
        assert_eq!(r.header_len(), 20);
        r.options.mss = Some(1460);
        r.options.window_scale = Some(7);
        assert_eq!(r.header_len(), 28);
        r.options.timestamps = Some(Timestamps::default());
        assert_eq!(r.header_len(), 40);
    }

    #[test]
    fn raw_options_iterate() {
        let mut raw = RawOptions::default();
        assert!(raw.push(99, &[1, 2]));
        assert!(raw.push(100, &[]));
        let v: Vec<_> = raw.iter().collect();
        assert_eq!(v, vec![(99u8, &[1u8, 2][..]), (100, &[][..])]);
        assert!(!raw.push(1, &[0; 40]));
    }

    #[test]
    fn sack_blocks_equality_ignores_cleared_slots() {
        let mut a = SackBlocks::default();
        a.push(SeqNumber(1), SeqNumber(2));
        a.clear();
        assert_eq!(a, SackBlocks::default());
    }

    #[test]
    fn flags_debug_like_packetdrill() {
        assert_eq!(format!("{:?}", Flags::SYN | Flags::ACK), "S.");
        assert_eq!(format!("{:?}", Flags::PSH | Flags::ACK), "P.");
        assert_eq!(format!("{:?}", Flags::NONE), "-");
    }
}
