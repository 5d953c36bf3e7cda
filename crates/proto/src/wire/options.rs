//! TCP option bytes <-> [`TcpOptions`] (RFC 9293 3.1 option format, RFC 7323,
//! RFC 2018, RFC 6994 for the RFC 1106 options).
//!
//! Emission uses a Linux-like layout in which every option starts on a 4-byte
//! boundary (NOP padding before it) and the total is padded with EOL to a
//! multiple of four. A Linux SYN's options come out byte for byte:
//! `MSS, SACK_PERM, TS, NOP, WS`.

use super::error::WireError;
use super::repr::{
    Nak, SackBlocks, TcpOptions, Timestamps, RFC1106_BIGWIN_OFFER_LEN, RFC1106_BIGWIN_UPPER_LEN,
    RFC1106_EXID, RFC1106_NAK_LEN, RFC1106_NAK_PERMITTED_LEN, TCPOPT_EXPERIMENTAL,
};
use crate::fastopen::{self, FastOpenOption, TfoCookie};
use crate::seq::SeqNumber;

/// Most option bytes a TCP header can carry: 4-bit data offset, 15 words, minus 5 (RFC 9293 3.1).
pub const MAX_OPTIONS_LEN: usize = 40;
/// Largest window scale shift; larger received values are clamped to it (RFC 7323 2.3).
pub const MAX_WINDOW_SCALE: u8 = 14;
/// Largest value of the RFC 1106 option B window (30 bits, RFC 1106 3).
pub const RFC1106_BIGWIN_MAX: u32 = (1 << 30) - 1;
/// Largest value of the RFC 1106 option C upper window bits (15 bits, RFC 1106 3.1).
pub const RFC1106_BIGWIN_UPPER_MAX: u16 = (1 << 15) - 1;

/// TCP option kinds (IANA registry, RFC 9293 3.1).
pub mod kind {
    /// End of option list (RFC 9293 3.1).
    pub const EOL: u8 = 0;
    /// No-operation, used for alignment (RFC 9293 3.1).
    pub const NOP: u8 = 1;
    /// Maximum segment size (RFC 9293 3.7.1).
    pub const MSS: u8 = 2;
    /// Window scale (RFC 7323 2.2).
    pub const WINDOW_SCALE: u8 = 3;
    /// SACK permitted (RFC 2018 2).
    pub const SACK_PERMITTED: u8 = 4;
    /// SACK blocks (RFC 2018 3).
    pub const SACK: u8 = 5;
    /// Timestamps (RFC 7323 3.2).
    pub const TIMESTAMPS: u8 = 8;
    /// TCP MD5 signature (RFC 2385 3.0); never interpreted, only recognised.
    pub const MD5SIG: u8 = 19;
    /// RFC 6994 shared experimental option; tinygram carries RFC 1106 in it.
    pub const EXPERIMENTAL: u8 = super::TCPOPT_EXPERIMENTAL;
}

/// The byte after the RFC 1106 ExID naming which RFC 1106 option follows.
pub mod rfc1106 {
    /// Option A, a NAK (RFC 1106 2.1).
    pub const NAK: u8 = b'A';
    /// Option B, big-window offer (RFC 1106 3).
    pub const BIGWIN_OFFER: u8 = b'B';
    /// Option C, upper window bits (RFC 1106 3.1).
    pub const BIGWIN_UPPER: u8 = b'C';
    /// NAK-permitted (RFC 1106 2).
    pub const NAK_PERMITTED: u8 = b'P';
}

const EXID: [u8; 2] = RFC1106_EXID.to_be_bytes();

#[inline]
fn bad(kind: u8, reason: &'static str) -> WireError {
    WireError::BadOption { kind, reason }
}

impl TcpOptions {
    /// Bytes [`TcpOptions::emit`] writes: each option NOP-aligned to 4 bytes,
    /// unknown options verbatim, padded to a multiple of 4 (RFC 9293 3.1).
    /// May exceed [`MAX_OPTIONS_LEN`], in which case emit refuses.
    #[inline]
    pub fn encoded_len(&self) -> usize {
        let mut n = 0;
        if self.mss.is_some() {
            n += 4; // MSS
        }
        if self.timestamps.is_some() {
            n += 12; // SACK_PERM TS, or NOP NOP TS
        } else if self.sack_permitted {
            n += 4; // NOP NOP SACK_PERM
        }
        if self.window_scale.is_some() {
            n += 4; // NOP WS
        }
        if !self.sack_blocks.is_empty() {
            n += 4 + 8 * self.sack_blocks.len(); // NOP NOP SACK
        }
        if self.nak_permitted {
            n += 8; // 3 NOP + 5
        }
        if self.big_window_offer.is_some() {
            n += 12; // 3 NOP + 9
        }
        if self.big_window_upper.is_some() {
            n += 8; // 1 NOP + 7
        }
        if self.nak.is_some() {
            n += 12; // 2 NOP + 10
        }
        if let Some(fo) = &self.fast_open {
            n += fo.encoded_len();
        }
        n + ((self.unknown.as_bytes().len() + 3) & !3)
    }

    /// Parses the option bytes of a TCP header (RFC 9293 3.1). Bytes after EOL
    /// are padding. Window scale above 14 is clamped to 14, not rejected (RFC 7323 2.3).
    /// If an option appears twice the last one wins. Unknown kinds, and kind 253
    /// with another ExID or an unknown RFC 1106 letter, are kept verbatim in `unknown`.
    pub fn parse(bytes: &[u8]) -> Result<TcpOptions, WireError> {
        // A TCP header holds at most 40 option bytes (RFC 9293 3.1); more
        // cannot come from a segment, and would overflow the inline storage.
        if bytes.len() > MAX_OPTIONS_LEN {
            return Err(WireError::OptionsTooLong { len: bytes.len() });
        }
        let mut o = TcpOptions::default();
        let mut rest = bytes;
        loop {
            let (kind, len) = match rest {
                [] | [kind::EOL, ..] => break,
                [kind::NOP, tail @ ..] => {
                    rest = tail;
                    continue;
                }
                [kind] => return Err(bad(*kind, "no length byte")),
                [kind, len, ..] => (*kind, *len as usize),
            };
            if len < 2 {
                return Err(bad(kind, "length below 2"));
            }
            let Some((opt, tail)) = rest.split_at_checked(len) else {
                return Err(bad(kind, "runs past the end of the options"));
            };
            rest = tail;
            let data = opt.get(2..).unwrap_or_default();
            match kind {
                kind::MSS => {
                    let d: [u8; 2] = data
                        .try_into()
                        .map_err(|_| bad(kind, "MSS length must be 4"))?;
                    o.mss = Some(u16::from_be_bytes(d));
                }
                kind::WINDOW_SCALE => {
                    let [shift]: [u8; 1] = data
                        .try_into()
                        .map_err(|_| bad(kind, "window scale length must be 3"))?;
                    o.window_scale = Some(shift.min(MAX_WINDOW_SCALE));
                }
                kind::SACK_PERMITTED => {
                    if !data.is_empty() {
                        return Err(bad(kind, "SACK-permitted length must be 2"));
                    }
                    o.sack_permitted = true;
                }
                kind::SACK => o.sack_blocks = parse_sack(data)?,
                kind::TIMESTAMPS => {
                    let d: [u8; 8] = data
                        .try_into()
                        .map_err(|_| bad(kind, "timestamps length must be 10"))?;
                    o.timestamps = Some(Timestamps {
                        tsval: u32::from_be_bytes([d[0], d[1], d[2], d[3]]),
                        tsecr: u32::from_be_bytes([d[4], d[5], d[6], d[7]]),
                    });
                }
                kind::EXPERIMENTAL if data.starts_with(&EXID) => {
                    if !parse_rfc1106(&mut o, opt)? {
                        keep_unknown(&mut o, kind, data);
                    }
                }
                fastopen::KIND_TFO if data.is_empty() || data.len() >= fastopen::COOKIE_MIN => {
                    match TfoCookie::new(data) {
                        Some(cookie) => {
                            o.fast_open = Some(FastOpenOption {
                                experimental: false,
                                cookie,
                            })
                        }
                        None => keep_unknown(&mut o, kind, data),
                    }
                }
                fastopen::KIND_EXP if data.starts_with(&fastopen::EXP_MAGIC) => {
                    match TfoCookie::new(&data[2..]) {
                        Some(cookie) => {
                            o.fast_open = Some(FastOpenOption {
                                experimental: true,
                                cookie,
                            })
                        }
                        None => keep_unknown(&mut o, kind, data),
                    }
                }
                _ => keep_unknown(&mut o, kind, data),
            }
        }
        Ok(o)
    }

    /// Writes the options into `buf`, which must be exactly [`encoded_len`](Self::encoded_len)
    /// bytes, at most [`MAX_OPTIONS_LEN`] (RFC 9293 3.1). Refuses RFC 1106 values
    /// wider than their fields; window scale is written as given, even above 14.
    /// Unknown options go out verbatim.
    pub fn emit(&self, buf: &mut [u8]) -> Result<(), WireError> {
        let len = self.encoded_len();
        if len > MAX_OPTIONS_LEN {
            return Err(WireError::OptionsTooLong { len });
        }
        if buf.len() != len {
            return Err(WireError::BufferLength {
                expected: len,
                actual: buf.len(),
            });
        }
        if self
            .big_window_offer
            .is_some_and(|w| w > RFC1106_BIGWIN_MAX)
        {
            return Err(bad(
                kind::EXPERIMENTAL,
                "RFC 1106 window offer exceeds 30 bits",
            ));
        }
        if self
            .big_window_upper
            .is_some_and(|w| w > RFC1106_BIGWIN_UPPER_MAX)
        {
            return Err(bad(
                kind::EXPERIMENTAL,
                "RFC 1106 upper window exceeds 15 bits",
            ));
        }
        let mut w = Writer { buf, at: 0 };
        const NOP: u8 = kind::NOP;
        if let Some(mss) = self.mss {
            w.put(&[kind::MSS, 4]);
            w.put(&mss.to_be_bytes());
        }
        if let Some(ts) = self.timestamps {
            if self.sack_permitted {
                w.put(&[kind::SACK_PERMITTED, 2]);
            } else {
                w.put(&[NOP, NOP]);
            }
            w.put(&[kind::TIMESTAMPS, 10]);
            w.put(&ts.tsval.to_be_bytes());
            w.put(&ts.tsecr.to_be_bytes());
        } else if self.sack_permitted {
            w.put(&[NOP, NOP, kind::SACK_PERMITTED, 2]);
        }
        if let Some(shift) = self.window_scale {
            w.put(&[NOP, kind::WINDOW_SCALE, 3, shift]);
        }
        if !self.sack_blocks.is_empty() {
            let n = self.sack_blocks.len() as u8;
            w.put(&[NOP, NOP, kind::SACK, 2 + 8 * n]);
            for (left, right) in self.sack_blocks.as_slice() {
                w.put(&left.0.to_be_bytes());
                w.put(&right.0.to_be_bytes());
            }
        }
        if self.nak_permitted {
            w.put(&[NOP, NOP, NOP]);
            w.rfc1106(RFC1106_NAK_PERMITTED_LEN, rfc1106::NAK_PERMITTED);
        }
        if let Some(win) = self.big_window_offer {
            w.put(&[NOP, NOP, NOP]);
            w.rfc1106(RFC1106_BIGWIN_OFFER_LEN, rfc1106::BIGWIN_OFFER);
            w.put(&win.to_be_bytes());
        }
        if let Some(upper) = self.big_window_upper {
            w.put(&[NOP]);
            w.rfc1106(RFC1106_BIGWIN_UPPER_LEN, rfc1106::BIGWIN_UPPER);
            w.put(&upper.to_be_bytes());
        }
        if let Some(nak) = self.nak {
            w.put(&[NOP, NOP]);
            w.rfc1106(RFC1106_NAK_LEN, rfc1106::NAK);
            w.put(&nak.seq.0.to_be_bytes());
            w.put(&[nak.count]);
        }
        if let Some(fo) = &self.fast_open {
            // Linux's layout: the option, then NOPs to the next 4-byte boundary.
            let cookie = fo.cookie.as_bytes();
            let start = w.at;
            if fo.experimental {
                w.put(&[fastopen::KIND_EXP, 4 + cookie.len() as u8]);
                w.put(&fastopen::EXP_MAGIC);
            } else {
                w.put(&[fastopen::KIND_TFO, 2 + cookie.len() as u8]);
            }
            w.put(cookie);
            while w.at < start + fo.encoded_len() {
                w.put(&[NOP]);
            }
        }
        w.put(self.unknown.as_bytes());
        let Writer { buf, at } = w;
        debug_assert!(at <= buf.len(), "encoded_len disagrees with emit");
        if let Some(pad) = buf.get_mut(at..) {
            pad.fill(kind::EOL);
        }
        Ok(())
    }
}

/// RFC 2018 3: length 2 + 8n, n = 1..=4 (n > 4 cannot fit in 40 bytes anyway).
fn parse_sack(data: &[u8]) -> Result<SackBlocks, WireError> {
    if data.is_empty() || data.len() & 7 != 0 || data.len() > 8 * SackBlocks::MAX {
        return Err(bad(kind::SACK, "SACK length must be 2 + 8n, n = 1..4"));
    }
    let mut blocks = SackBlocks::default();
    for b in data.chunks_exact(8) {
        let left = u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
        let right = u32::from_be_bytes([b[4], b[5], b[6], b[7]]);
        blocks.push(SeqNumber(left), SeqNumber(right));
    }
    Ok(blocks)
}

/// Parses one kind-253 option whose ExID is RFC 1106's (RFC 6994 2). `opt` is the
/// whole option. Returns Ok(false) for a letter we do not know (kept verbatim).
fn parse_rfc1106(o: &mut TcpOptions, opt: &[u8]) -> Result<bool, WireError> {
    const K: u8 = kind::EXPERIMENTAL;
    let Some(&letter) = opt.get(4) else {
        return Err(bad(K, "RFC 1106 option without its letter"));
    };
    let value = opt.get(5..).unwrap_or_default();
    match letter {
        rfc1106::NAK => {
            let [s0, s1, s2, s3, count]: [u8; 5] = value
                .try_into()
                .map_err(|_| bad(K, "RFC 1106 NAK length must be 10"))?;
            o.nak = Some(Nak {
                seq: SeqNumber(u32::from_be_bytes([s0, s1, s2, s3])),
                count,
            });
        }
        rfc1106::BIGWIN_OFFER => {
            let d: [u8; 4] = value
                .try_into()
                .map_err(|_| bad(K, "RFC 1106 window offer length must be 9"))?;
            let win = u32::from_be_bytes(d);
            if win > RFC1106_BIGWIN_MAX {
                return Err(bad(K, "RFC 1106 window offer exceeds 30 bits"));
            }
            o.big_window_offer = Some(win);
        }
        rfc1106::BIGWIN_UPPER => {
            let d: [u8; 2] = value
                .try_into()
                .map_err(|_| bad(K, "RFC 1106 upper window length must be 7"))?;
            let upper = u16::from_be_bytes(d);
            if upper > RFC1106_BIGWIN_UPPER_MAX {
                return Err(bad(K, "RFC 1106 upper window exceeds 15 bits"));
            }
            o.big_window_upper = Some(upper);
        }
        rfc1106::NAK_PERMITTED => {
            if !value.is_empty() {
                return Err(bad(K, "RFC 1106 NAK-permitted length must be 5"));
            }
            o.nak_permitted = true;
        }
        _ => return Ok(false),
    }
    Ok(true)
}

fn keep_unknown(o: &mut TcpOptions, kind: u8, data: &[u8]) {
    // Cannot fail: kept options are a subset of at most 40 bytes of option space.
    let kept = o.unknown.push(kind, data);
    debug_assert!(kept, "unknown options overflowed 40 bytes");
}

/// A cursor that never panics; emit sizes the buffer beforehand.
struct Writer<'a> {
    buf: &'a mut [u8],
    at: usize,
}

impl Writer<'_> {
    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        let end = self.at + bytes.len();
        if let Some(dst) = self.buf.get_mut(self.at..end) {
            dst.copy_from_slice(bytes);
        }
        self.at = end;
    }
    #[inline]
    fn rfc1106(&mut self, len: usize, letter: u8) {
        self.put(&[kind::EXPERIMENTAL, len as u8, EXID[0], EXID[1], letter]);
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::wire::RawOptions;
    use proptest::prelude::*;

    fn emit_vec(o: &TcpOptions) -> Vec<u8> {
        let mut v = vec![0xee; o.encoded_len()];
        o.emit(&mut v).expect("emit");
        v
    }

    fn roundtrip(o: TcpOptions) {
        let bytes = emit_vec(&o);
        assert_eq!(bytes.len() % 4, 0);
        assert_eq!(TcpOptions::parse(&bytes), Ok(o), "bytes {bytes:02x?}");
    }

    fn sack(n: u32) -> SackBlocks {
        let mut s = SackBlocks::default();
        for i in 0..n {
            s.push(SeqNumber(1000 * i + 1), SeqNumber(1000 * i + 500));
        }
        s
    }

    /// RFC 7413 4.1.1: kind 34 and kind 254/0xF989, request and cookie, in
    /// Linux's layout (option then NOPs), round trip; bad lengths stay unknown.
    #[test]
    fn fast_open_option_round_trips() {
        let fo = |experimental, c: &[u8]| FastOpenOption {
            experimental,
            cookie: TfoCookie::new(c).unwrap(),
        };
        let cases: [(FastOpenOption, &[u8]); 3] = [
            (fo(false, &[]), &[34, 2, 1, 1]),
            (
                fo(false, &[0xab, 0xcd, 0x12, 0x34]),
                &[34, 6, 0xab, 0xcd, 0x12, 0x34, 1, 1],
            ),
            (fo(true, &[]), &[254, 4, 0xf9, 0x89]),
        ];
        for (opt, bytes) in cases {
            let o = TcpOptions {
                fast_open: Some(opt),
                ..TcpOptions::default()
            };
            let mut buf = vec![0; o.encoded_len()];
            o.emit(&mut buf).unwrap();
            assert_eq!(buf, bytes);
            assert_eq!(TcpOptions::parse(&buf).unwrap(), o);
        }
        let o = TcpOptions::parse(&[34, 4, 1, 2]).unwrap();
        assert!(o.fast_open.is_none());
        assert!(!o.unknown.is_empty());
        let o = TcpOptions::parse(&[254, 4, 0x12, 0x34]).unwrap();
        assert!(o.fast_open.is_none());
    }

    #[test]
    fn linux_syn_options() {
        // MSS 1460, SACK_PERM, TS val 0x000a1b2c ecr 0, NOP, WS 7.
        let bytes = [
            0x02, 0x04, 0x05, 0xb4, 0x04, 0x02, 0x08, 0x0a, 0x00, 0x0a, 0x1b, 0x2c, 0x00, 0x00,
            0x00, 0x00, 0x01, 0x03, 0x03, 0x07,
        ];
        let o = TcpOptions::parse(&bytes).unwrap();
        let want = TcpOptions {
            mss: Some(1460),
            sack_permitted: true,
            timestamps: Some(Timestamps {
                tsval: 0x000a_1b2c,
                tsecr: 0,
            }),
            window_scale: Some(7),
            ..Default::default()
        };
        assert_eq!(o, want);
        // And we emit exactly Linux's layout.
        assert_eq!(emit_vec(&want), bytes);
    }

    #[test]
    fn linux_data_segment_layouts() {
        let ts = Some(Timestamps { tsval: 1, tsecr: 2 });
        let o = TcpOptions {
            timestamps: ts,
            ..Default::default()
        };
        assert_eq!(emit_vec(&o), [1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2]);
        let o = TcpOptions {
            timestamps: ts,
            sack_blocks: sack(3),
            ..Default::default()
        };
        let b = emit_vec(&o);
        assert_eq!(b.len(), 40);
        assert_eq!(&b[12..16], &[1, 1, 5, 26]);
    }

    #[test]
    fn roundtrip_each_option() {
        let base = TcpOptions::default();
        roundtrip(base);
        roundtrip(TcpOptions {
            mss: Some(536),
            ..base
        });
        roundtrip(TcpOptions {
            window_scale: Some(14),
            ..base
        });
        roundtrip(TcpOptions {
            sack_permitted: true,
            ..base
        });
        for n in 1..=4 {
            roundtrip(TcpOptions {
                sack_blocks: sack(n),
                ..base
            });
        }
        roundtrip(TcpOptions {
            timestamps: Some(Timestamps {
                tsval: u32::MAX,
                tsecr: 7,
            }),
            ..base
        });
        roundtrip(TcpOptions {
            nak_permitted: true,
            ..base
        });
        roundtrip(TcpOptions {
            big_window_offer: Some(RFC1106_BIGWIN_MAX),
            ..base
        });
        roundtrip(TcpOptions {
            big_window_upper: Some(RFC1106_BIGWIN_UPPER_MAX),
            ..base
        });
        roundtrip(TcpOptions {
            nak: Some(Nak {
                seq: SeqNumber(0xdead_beef),
                count: 3,
            }),
            ..base
        });
        let mut unknown = RawOptions::default();
        assert!(unknown.push(30, &[1, 2, 3]));
        assert!(unknown.push(kind::EXPERIMENTAL, &[0x12, 0x34, 9]));
        assert!(unknown.push(kind::EXPERIMENTAL, &[0x11, 0x06, b'Z']));
        assert!(unknown.push(kind::EXPERIMENTAL, &[]));
        assert!(unknown.push(99, &[]));
        roundtrip(TcpOptions { unknown, ..base });
        // A full RFC 1106 SYN: MSS, SACK_PERM, TS, WS, P, B = 4+12+4+8+12 = 40.
        roundtrip(TcpOptions {
            mss: Some(1460),
            sack_permitted: true,
            timestamps: Some(Timestamps::default()),
            window_scale: Some(0),
            nak_permitted: true,
            big_window_offer: Some(1 << 29),
            ..base
        });
    }

    #[test]
    fn eol_ends_parsing() {
        let o = TcpOptions::parse(&[2, 4, 1, 0, 0, 2, 4, 9]).unwrap();
        assert_eq!(o.mss, Some(256));
        // Garbage after EOL is padding, even if it would be malformed.
        assert_eq!(TcpOptions::parse(&[0, 2, 3]), Ok(TcpOptions::default()));
        assert_eq!(TcpOptions::parse(&[1, 1, 1]), Ok(TcpOptions::default()));
    }

    #[test]
    fn window_scale_clamped() {
        let o = TcpOptions::parse(&[3, 3, 15, 0]).unwrap();
        assert_eq!(o.window_scale, Some(14));
        let o = TcpOptions::parse(&[3, 3, 255, 0]).unwrap();
        assert_eq!(o.window_scale, Some(14));
    }

    fn err(bytes: &[u8]) -> (u8, &'static str) {
        match TcpOptions::parse(bytes) {
            Err(WireError::BadOption { kind, reason }) => (kind, reason),
            other => panic!("expected BadOption for {bytes:?}, got {other:?}"),
        }
    }

    #[test]
    fn malformed_options() {
        assert_eq!(err(&[30]), (30, "no length byte"));
        assert_eq!(err(&[30, 1]), (30, "length below 2"));
        assert_eq!(err(&[30, 0, 0, 0]), (30, "length below 2"));
        assert_eq!(
            err(&[30, 5, 0, 0]),
            (30, "runs past the end of the options")
        );
        assert_eq!(err(&[2, 3, 5, 0]).1, "MSS length must be 4");
        assert_eq!(err(&[2, 5, 5, 0, 0]).1, "MSS length must be 4");
        assert_eq!(err(&[3, 2, 0, 0]).1, "window scale length must be 3");
        assert_eq!(err(&[4, 3, 0, 0]).1, "SACK-permitted length must be 2");
        assert_eq!(err(&[5, 2, 0, 0]).0, kind::SACK);
        assert_eq!(err(&[5, 9, 0, 0, 0, 0, 0, 0, 0]).0, kind::SACK);
        // Five SACK blocks (42 bytes) cannot fit in a TCP header at all.
        let mut five = vec![5u8, 42];
        five.extend([0; 40]);
        assert_eq!(
            TcpOptions::parse(&five),
            Err(WireError::OptionsTooLong { len: 42 })
        );
        assert_eq!(
            err(&[8, 8, 0, 0, 0, 0, 0, 0]).1,
            "timestamps length must be 10"
        );
        assert_eq!(
            err(&[253, 4, 0x11, 0x06]).1,
            "RFC 1106 option without its letter"
        );
        assert_eq!(
            err(&[253, 9, 0x11, 0x06, b'A', 0, 0, 0, 1]).1,
            "RFC 1106 NAK length must be 10"
        );
        assert_eq!(
            err(&[253, 9, 0x11, 0x06, b'B', 0x40, 0, 0, 0]).1,
            "RFC 1106 window offer exceeds 30 bits"
        );
        assert_eq!(
            err(&[253, 8, 0x11, 0x06, b'B', 0, 0, 0]).1,
            "RFC 1106 window offer length must be 9"
        );
        assert_eq!(
            err(&[253, 7, 0x11, 0x06, b'C', 0x80, 0]).1,
            "RFC 1106 upper window exceeds 15 bits"
        );
        assert_eq!(
            err(&[253, 6, 0x11, 0x06, b'C', 0]).1,
            "RFC 1106 upper window length must be 7"
        );
        assert_eq!(
            err(&[253, 6, 0x11, 0x06, b'P', 0]).1,
            "RFC 1106 NAK-permitted length must be 5"
        );
    }

    #[test]
    fn more_than_40_option_bytes_are_refused() {
        // Found by the options fuzz twin: 44 bytes of unknown options tripped
        // the inline store's debug assertion (release builds dropped them).
        let mut bytes = vec![6u8, 20];
        bytes.resize(44, 0);
        bytes[20] = 7;
        bytes[21] = 20;
        assert_eq!(
            TcpOptions::parse(&bytes),
            Err(WireError::OptionsTooLong { len: 44 })
        );
        assert!(TcpOptions::parse(&bytes[..40]).is_ok());
    }

    #[test]
    fn emit_refusals() {
        let o = TcpOptions {
            timestamps: Some(Timestamps::default()),
            sack_blocks: sack(4),
            ..Default::default()
        };
        assert_eq!(o.encoded_len(), 48);
        assert_eq!(
            o.emit(&mut [0; 48]),
            Err(WireError::OptionsTooLong { len: 48 })
        );
        let o = TcpOptions {
            mss: Some(1),
            ..Default::default()
        };
        assert_eq!(
            o.emit(&mut [0; 8]),
            Err(WireError::BufferLength {
                expected: 4,
                actual: 8
            })
        );
        let o = TcpOptions {
            big_window_offer: Some(1 << 30),
            ..Default::default()
        };
        assert!(matches!(
            o.emit(&mut [0; 12]),
            Err(WireError::BadOption { kind: 253, .. })
        ));
        let o = TcpOptions {
            big_window_upper: Some(0x8000),
            ..Default::default()
        };
        assert!(matches!(
            o.emit(&mut [0; 8]),
            Err(WireError::BadOption { kind: 253, .. })
        ));
    }

    /// Unknown options that parse back as unknown: not EOL/NOP/known kinds
    /// (Fast Open's 34, and 254 with its magic, are known), and kind 253 only
    /// with a foreign ExID or an unknown RFC 1106 letter.
    fn arb_unknown() -> impl Strategy<Value = (u8, Vec<u8>)> {
        let plain = (
            prop_oneof![Just(6u8), Just(7u8), 9u8..=252, Just(254u8), Just(255u8)],
            proptest::collection::vec(any::<u8>(), 0..6),
        )
            .prop_filter("not Fast Open", |(k, d)| {
                *k != fastopen::KIND_TFO
                    && !(*k == fastopen::KIND_EXP && d.starts_with(&fastopen::EXP_MAGIC))
            });
        let foreign = (
            any::<u16>().prop_filter("not ours", |x| *x != RFC1106_EXID),
            proptest::collection::vec(any::<u8>(), 0..4),
        )
            .prop_map(|(exid, rest)| {
                let mut d = exid.to_be_bytes().to_vec();
                d.extend(rest);
                (kind::EXPERIMENTAL, d)
            });
        let letter =
            (b'D'..=b'O', proptest::collection::vec(any::<u8>(), 0..3)).prop_map(|(l, rest)| {
                let mut d = vec![0x11, 0x06, l];
                d.extend(rest);
                (kind::EXPERIMENTAL, d)
            });
        prop_oneof![plain, foreign, letter]
    }

    /// Any valid options whose encoding fits 40 bytes.
    pub(crate) fn arb_options() -> impl Strategy<Value = TcpOptions> {
        let sack = proptest::collection::vec((any::<u32>(), any::<u32>()), 0..=4);
        let unknown = proptest::collection::vec(arb_unknown(), 0..3);
        (
            (
                proptest::option::of(any::<u16>()),
                proptest::option::of(0u8..=14),
                any::<bool>(),
                sack,
                proptest::option::of(any::<(u32, u32)>()),
            ),
            (
                proptest::option::of(0..=RFC1106_BIGWIN_MAX),
                proptest::option::of(0..=RFC1106_BIGWIN_UPPER_MAX),
                any::<bool>(),
                proptest::option::of(any::<(u32, u8)>()),
                unknown,
            ),
        )
            .prop_map(|((mss, ws, sp, sack, ts), (bwo, bwu, np, nak, unknown))| {
                let mut o = TcpOptions {
                    mss,
                    window_scale: ws,
                    sack_permitted: sp,
                    timestamps: ts.map(|(tsval, tsecr)| Timestamps { tsval, tsecr }),
                    big_window_offer: bwo,
                    big_window_upper: bwu,
                    nak_permitted: np,
                    nak: nak.map(|(s, count)| Nak {
                        seq: SeqNumber(s),
                        count,
                    }),
                    ..Default::default()
                };
                for (l, r) in sack {
                    o.sack_blocks.push(SeqNumber(l), SeqNumber(r));
                }
                for (k, d) in unknown {
                    o.unknown.push(k, &d);
                }
                fit(o)
            })
    }

    /// Drops options, least important first, until the encoding fits 40 bytes.
    fn fit(mut o: TcpOptions) -> TcpOptions {
        let steps: [fn(&mut TcpOptions); 9] = [
            |o| o.unknown = RawOptions::default(),
            |o| o.nak = None,
            |o| o.big_window_upper = None,
            |o| o.big_window_offer = None,
            |o| o.nak_permitted = false,
            |o| o.sack_blocks.clear(),
            |o| o.window_scale = None,
            |o| o.timestamps = None,
            |o| o.sack_permitted = false,
        ];
        for step in steps {
            if o.encoded_len() <= MAX_OPTIONS_LEN {
                break;
            }
            step(&mut o);
        }
        o
    }

    proptest! {
        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..=40)) {
            let _ = TcpOptions::parse(&bytes);
        }

        #[test]
        fn random_options_roundtrip(o in arb_options()) {
            let bytes = emit_vec(&o);
            prop_assert_eq!(bytes.len(), o.encoded_len());
            prop_assert_eq!(TcpOptions::parse(&bytes), Ok(o));
        }
    }
}
