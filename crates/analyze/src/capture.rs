//! Reading captures: pcap (micro- or nanosecond) and pcapng, with Ethernet
//! (VLAN too), Linux cooked (SLL, SLL2), raw IP and BSD loopback link types,
//! IPv4 and IPv6. The link and IP layers go through `etherparse`; the TCP header
//! and its options through our own codec ([`TcpRepr::parse`]), which keeps
//! options etherparse does not know.

use etherparse::{EtherType, LaxNetSlice, LaxSlicedPacket};
use pcap_file::pcap::PcapParser;
use pcap_file::pcapng::blocks::interface_description::InterfaceDescriptionOption;
use pcap_file::pcapng::{Block, PcapNgParser};
use pcap_file::{DataLink, PcapError};
use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use tinygram_proto::wire::{ChecksumCtx, TcpSegment};
use tinygram_proto::TcpRepr;

/// One TCP segment found in a capture.
#[derive(Clone, Debug)]
pub struct Packet {
    /// Capture timestamp, nanoseconds since the Unix epoch (or since the
    /// simulation's start for tinygram's own captures).
    pub ts_ns: u64,
    pub src: SocketAddr,
    pub dst: SocketAddr,
    pub repr: TcpRepr,
    /// TCP payload bytes (from the IP length, so snap-length truncation does not shrink it).
    pub payload_len: usize,
    /// TCP header length, options included.
    pub header_len: usize,
    /// IP header length (IPv4 with options, IPv6 with extension headers).
    pub ip_header_len: usize,
    /// `Some(false)` when the TCP checksum does not verify (often checksum
    /// offload on the capturing host); `None` when the frame was cut short by
    /// the snap length and could not be checked.
    pub checksum_ok: Option<bool>,
    /// IPv4 identification (`None` for IPv6): a network duplicate repeats it,
    /// a TCP retransmission normally does not.
    pub ip_id: Option<u16>,
}

/// What reading a capture found besides TCP segments.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct ReadStats {
    /// "pcap" or "pcapng".
    pub format: &'static str,
    /// Link types seen (pcap-file's names, e.g. "ETHERNET", "LINUX_SLL2").
    pub link_types: Vec<String>,
    /// Frames in the file.
    pub frames: u64,
    /// Frames holding a TCP segment we could parse.
    pub tcp_segments: u64,
    /// Frames that were not TCP over IP (ARP, UDP, ...).
    pub other_frames: u64,
    /// TCP segments whose header we could not parse (truncated or malformed).
    pub malformed: u64,
    /// TCP segments with a checksum that does not verify.
    pub bad_checksums: u64,
    /// Timestamp of the first TCP segment (ns); reported times count from it.
    pub start_ns: u64,
}

/// Why a capture could not be read.
#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    #[error("cannot read {path}: {err}")]
    Io { path: String, err: std::io::Error },
    #[error("not a capture file: no pcap or pcapng magic number at its start")]
    NotACapture,
    #[error("the capture is truncated: it ends inside {what} after {frames} complete frame(s)")]
    Truncated { what: &'static str, frames: u64 },
    #[error("the capture is damaged after {frames} frame(s): {err}")]
    Damaged { frames: u64, err: String },
    #[error("unsupported link type {0} (supported: Ethernet, Linux cooked SLL/SLL2, raw IP, BSD loopback)")]
    UnsupportedLink(String),
}

/// A capture read into memory.
#[derive(Clone, Debug, Default)]
pub struct Capture {
    pub packets: Vec<Packet>,
    pub stats: ReadStats,
}

const PCAP_MAGICS: [[u8; 4]; 4] = [
    [0xd4, 0xc3, 0xb2, 0xa1],
    [0xa1, 0xb2, 0xc3, 0xd4],
    [0x4d, 0x3c, 0xb2, 0xa1],
    [0xa1, 0xb2, 0x3c, 0x4d],
];
const PCAPNG_MAGIC: [u8; 4] = [0x0a, 0x0d, 0x0d, 0x0a];

/// Reads a pcap or pcapng file.
pub fn read_file(path: &Path) -> Result<Capture, CaptureError> {
    let bytes = std::fs::read(path).map_err(|err| CaptureError::Io {
        path: path.display().to_string(),
        err,
    })?;
    read_bytes(&bytes)
}

/// Reads a pcap or pcapng capture held in memory.
pub fn read_bytes(bytes: &[u8]) -> Result<Capture, CaptureError> {
    let Some(magic) = bytes.get(..4) else {
        return Err(CaptureError::NotACapture);
    };
    let mut cap = Capture::default();
    if PCAP_MAGICS.iter().any(|m| m == magic) {
        read_pcap(bytes, &mut cap)?;
    } else if magic == PCAPNG_MAGIC {
        read_pcapng(bytes, &mut cap)?;
    } else {
        return Err(CaptureError::NotACapture);
    }
    Ok(cap)
}

fn map_err(e: PcapError, frames: u64, what: &'static str) -> CaptureError {
    match e {
        PcapError::IncompleteBuffer => CaptureError::Truncated { what, frames },
        other => CaptureError::Damaged {
            frames,
            err: other.to_string(),
        },
    }
}

fn read_pcap(bytes: &[u8], cap: &mut Capture) -> Result<(), CaptureError> {
    cap.stats.format = "pcap";
    let (mut rest, parser) = match PcapParser::new(bytes) {
        Ok(x) => x,
        Err(PcapError::IncompleteBuffer) => {
            return Err(CaptureError::Truncated {
                what: "the file header",
                frames: 0,
            })
        }
        Err(_) => return Err(CaptureError::NotACapture),
    };
    let link = parser.header().datalink;
    check_link(link)?;
    cap.stats.link_types.push(format!("{link:?}"));
    let frac_ns = match parser.header().ts_resolution {
        pcap_file::TsResolution::MicroSecond => 1000,
        pcap_file::TsResolution::NanoSecond => 1,
    };
    while !rest.is_empty() {
        // Raw records: pcap-file's checked packets refuse an original length
        // above the snap length, which is every frame a short snap length cut.
        let (r, pkt) = parser
            .next_raw_packet(rest)
            .map_err(|e| map_err(e, cap.stats.frames, "a packet record"))?;
        rest = r;
        let ts = u64::from(pkt.ts_sec) * 1_000_000_000 + u64::from(pkt.ts_frac) * frac_ns;
        cap.push_frame(link, ts, &pkt.data);
    }
    cap.finish();
    Ok(())
}

/// Interface of a pcapng section: link type and timestamp units.
struct Iface {
    link: DataLink,
    /// Multiply the raw 64-bit timestamp by num/den to get nanoseconds.
    num: u128,
    den: u128,
    /// if_tsoffset (pcapng 4.2): signed seconds added to every timestamp, in ns.
    offset_ns: i128,
}

fn read_pcapng(bytes: &[u8], cap: &mut Capture) -> Result<(), CaptureError> {
    cap.stats.format = "pcapng";
    let (mut rest, mut parser) = match PcapNgParser::new(bytes) {
        Ok(x) => x,
        Err(PcapError::IncompleteBuffer) => {
            return Err(CaptureError::Truncated {
                what: "the section header",
                frames: 0,
            })
        }
        Err(_) => return Err(CaptureError::NotACapture),
    };
    let mut ifaces: Vec<Iface> = Vec::new();
    while !rest.is_empty() {
        let (r, block) = parser
            .next_block(rest)
            .map_err(|e| map_err(e, cap.stats.frames, "a block"))?;
        rest = r;
        match block {
            Block::SectionHeader(_) => ifaces.clear(),
            Block::InterfaceDescription(idb) => {
                check_link(idb.linktype)?;
                let name = format!("{:?}", idb.linktype);
                if !cap.stats.link_types.contains(&name) {
                    cap.stats.link_types.push(name);
                }
                // if_tsresol (pcapng 4.2): 10^-n seconds, or 2^-n with the top bit set; default 10^-6.
                let (mut num, mut den) = (1000u128, 1u128);
                let mut offset_ns = 0;
                for opt in &idb.options {
                    match *opt {
                        InterfaceDescriptionOption::IfTsResol(r) => {
                            if r & 0x80 != 0 {
                                (num, den) = (1_000_000_000, 1u128 << (r & 0x7f).min(100));
                            } else {
                                let p = i32::from(r) - 9;
                                (num, den) = if p <= 0 {
                                    (10u128.pow((-p) as u32), 1)
                                } else {
                                    (1, 10u128.pow(p.min(30) as u32))
                                };
                            }
                        }
                        // A signed 64-bit count of seconds (pcapng 4.2), which
                        // pcap-file hands over unsigned.
                        InterfaceDescriptionOption::IfTsOffset(s) => {
                            offset_ns = i128::from(s as i64) * 1_000_000_000
                        }
                        _ => {}
                    }
                }
                ifaces.push(Iface {
                    link: idb.linktype,
                    num,
                    den,
                    offset_ns,
                });
            }
            Block::EnhancedPacket(epb) => {
                let Some(ifc) = ifaces.get(epb.interface_id as usize) else {
                    return Err(CaptureError::Damaged {
                        frames: cap.stats.frames,
                        err: format!("packet on undeclared interface {}", epb.interface_id),
                    });
                };
                // pcap-file hands the raw 64-bit timestamp over as if it were nanoseconds.
                let raw = epb.timestamp.as_nanos();
                let ts = packet_time_ns(raw, ifc).ok_or_else(|| CaptureError::Damaged {
                    frames: cap.stats.frames,
                    err: format!(
                        "packet timestamp {raw} (x{}/{} ns, if_tsoffset {} s) lies outside 1970..2554",
                        ifc.num,
                        ifc.den,
                        ifc.offset_ns / 1_000_000_000
                    ),
                })?;
                cap.push_frame(ifc.link, ts, &epb.data);
            }
            Block::SimplePacket(spb) => {
                if let Some(ifc) = ifaces.first() {
                    cap.push_frame(ifc.link, 0, &spb.data);
                }
            }
            _ => {}
        }
    }
    cap.finish();
    Ok(())
}

/// A pcapng packet's time in ns since 1970: the raw timestamp in the
/// interface's units plus its offset. `None` if that falls before 1970 or
/// past what 64 bits of nanoseconds hold (year 2554), instead of wrapping.
fn packet_time_ns(raw: u128, ifc: &Iface) -> Option<u64> {
    // raw < 2^64 and num <= 10^9, so the product fits easily in 128 bits.
    let scaled = i128::try_from(raw * ifc.num / ifc.den).ok()?;
    u64::try_from(scaled.checked_add(ifc.offset_ns)?).ok()
}

fn check_link(link: DataLink) -> Result<(), CaptureError> {
    match link {
        DataLink::ETHERNET
        | DataLink::LINUX_SLL
        | DataLink::LINUX_SLL2
        | DataLink::RAW
        | DataLink::IPV4
        | DataLink::IPV6
        | DataLink::NULL
        | DataLink::LOOP => Ok(()),
        other => Err(CaptureError::UnsupportedLink(format!("{other:?}"))),
    }
}

impl Capture {
    fn finish(&mut self) {
        self.stats.start_ns = self.packets.iter().map(|p| p.ts_ns).min().unwrap_or(0);
    }

    fn push_frame(&mut self, link: DataLink, ts_ns: u64, frame: &[u8]) {
        self.stats.frames += 1;
        match parse_frame(link, ts_ns, frame) {
            Frame::Tcp(p) => {
                self.stats.tcp_segments += 1;
                if p.checksum_ok == Some(false) {
                    self.stats.bad_checksums += 1;
                }
                self.packets.push(*p);
            }
            Frame::Other => self.stats.other_frames += 1,
            Frame::Malformed => self.stats.malformed += 1,
        }
    }
}

enum Frame {
    Tcp(Box<Packet>),
    Other,
    Malformed,
}

fn parse_frame(link: DataLink, ts_ns: u64, frame: &[u8]) -> Frame {
    let sliced = match link {
        DataLink::ETHERNET => LaxSlicedPacket::from_ethernet(frame).ok(),
        // Linux cooked v1: 16-byte header, protocol in the last two bytes.
        DataLink::LINUX_SLL => frame.get(16..).map(|rest| {
            LaxSlicedPacket::from_ether_type(
                EtherType(u16::from_be_bytes([frame[14], frame[15]])),
                rest,
            )
        }),
        // Linux cooked v2: 20-byte header, protocol in the first two bytes.
        DataLink::LINUX_SLL2 => frame.get(20..).map(|rest| {
            LaxSlicedPacket::from_ether_type(
                EtherType(u16::from_be_bytes([frame[0], frame[1]])),
                rest,
            )
        }),
        DataLink::NULL | DataLink::LOOP => frame
            .get(4..)
            .and_then(|r| LaxSlicedPacket::from_ip(r).ok()),
        _ => LaxSlicedPacket::from_ip(frame).ok(),
    };
    let Some(sliced) = sliced else {
        return Frame::Other;
    };
    let (src, dst, ip_hl, payload, incomplete, ctx, ip_id) = match &sliced.net {
        Some(LaxNetSlice::Ipv4(v4)) => {
            let h = v4.header();
            let p = v4.payload();
            if p.fragmented {
                return Frame::Other;
            }
            let (s, d) = (h.source(), h.destination());
            (
                IpAddr::from(s),
                IpAddr::from(d),
                h.slice().len(),
                p,
                p.incomplete,
                ChecksumCtx::V4 { src: s, dst: d },
                Some(h.identification()),
            )
        }
        Some(LaxNetSlice::Ipv6(v6)) => {
            let h = v6.header();
            let p = v6.payload();
            if p.fragmented {
                return Frame::Other;
            }
            let (s, d) = (h.source(), h.destination());
            let ext = v6.extensions().slice().len();
            (
                IpAddr::from(s),
                IpAddr::from(d),
                h.slice().len() + ext,
                p,
                p.incomplete,
                ChecksumCtx::V6 { src: s, dst: d },
                None,
            )
        }
        _ => return Frame::Other,
    };
    if payload.ip_number != etherparse::IpNumber::TCP {
        return Frame::Other;
    }
    let bytes = payload.payload;
    let Ok(seg) = TcpSegment::new_checked(bytes) else {
        return Frame::Malformed;
    };
    let header_len = seg.header_len();
    // The IP length says how long the segment was on the wire, even where the
    // snap length cut the frame short.
    let ip_payload_len = ip_payload_len_from_header(&sliced).unwrap_or(bytes.len());
    let incomplete = incomplete || ip_payload_len > bytes.len();
    let checksum_ok = (!incomplete).then(|| seg.verify_checksum(&ctx));
    let head = &bytes[..header_len];
    let Ok((repr, _)) = TcpRepr::parse(head, None) else {
        return Frame::Malformed;
    };
    Frame::Tcp(Box::new(Packet {
        ts_ns,
        src: SocketAddr::new(src, repr.src_port),
        dst: SocketAddr::new(dst, repr.dst_port),
        repr,
        payload_len: ip_payload_len.saturating_sub(header_len),
        header_len,
        ip_header_len: ip_hl,
        checksum_ok,
        ip_id,
    }))
}

/// The TCP segment's length as the IP header states it.
fn ip_payload_len_from_header(s: &LaxSlicedPacket) -> Option<usize> {
    match &s.net {
        Some(LaxNetSlice::Ipv4(v4)) => {
            let h = v4.header();
            Some(usize::from(h.total_len()).saturating_sub(h.slice().len()))
        }
        Some(LaxNetSlice::Ipv6(v6)) => Some(
            usize::from(v6.header().payload_length()).saturating_sub(v6.extensions().slice().len()),
        ),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn garbage_is_not_a_capture() {
        assert!(matches!(
            read_bytes(b"hello world, not a pcap"),
            Err(CaptureError::NotACapture)
        ));
        assert!(matches!(read_bytes(b""), Err(CaptureError::NotACapture)));
    }

    #[test]
    fn truncated_header_is_reported() {
        let e = read_bytes(&[0xd4, 0xc3, 0xb2, 0xa1, 2, 0]).unwrap_err();
        assert!(matches!(e, CaptureError::Truncated { .. }), "{e}");
    }

    /// One pcapng block: type, length, body padded to 4, length again.
    fn block(kind: u32, mut body: Vec<u8>) -> Vec<u8> {
        body.resize(body.len().div_ceil(4) * 4, 0);
        let len = (12 + body.len()) as u32;
        [
            &kind.to_le_bytes()[..],
            &len.to_le_bytes(),
            &body,
            &len.to_le_bytes(),
        ]
        .concat()
    }

    /// A pcapng file: one raw-IP interface with microsecond timestamps and the
    /// given if_tsoffset (seconds), and one IPv4 TCP packet stamped `ts_us`.
    fn pcapng_with_offset(offset_s: i64, ts_us: u64) -> Vec<u8> {
        let shb = block(
            0x0a0d_0d0a,
            [
                &0x1a2b_3c4du32.to_le_bytes()[..],
                &[1, 0, 0, 0],
                &(-1i64).to_le_bytes(),
            ]
            .concat(),
        );
        let idb = block(
            1,
            [
                &101u16.to_le_bytes()[..], // LINKTYPE_RAW
                &[0, 0],
                &65535u32.to_le_bytes(),
                &14u16.to_le_bytes(), // if_tsoffset
                &8u16.to_le_bytes(),
                &offset_s.to_le_bytes(),
                &[0, 0, 0, 0], // opt_endofopt
            ]
            .concat(),
        );
        let mut ip = vec![
            0x45, 0, 0, 40, 0, 1, 0, 0, 64, 6, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
        ];
        let mut tcp = vec![0u8; 20];
        tcp[..4].copy_from_slice(&[0x9c, 0x40, 0, 80]);
        tcp[12] = 5 << 4;
        tcp[13] = 0x02;
        ip.extend_from_slice(&tcp);
        let epb = block(
            6,
            [
                &0u32.to_le_bytes()[..],
                &((ts_us >> 32) as u32).to_le_bytes(),
                &(ts_us as u32).to_le_bytes(),
                &(ip.len() as u32).to_le_bytes(),
                &(ip.len() as u32).to_le_bytes(),
                &ip,
            ]
            .concat(),
        );
        [shb, idb, epb].concat()
    }

    #[test]
    fn pcapng_tsoffset_is_signed_seconds() {
        let cap = read_bytes(&pcapng_with_offset(10, 5_000_000)).unwrap();
        assert_eq!(cap.packets[0].ts_ns, 15_000_000_000);
        let cap = read_bytes(&pcapng_with_offset(-3, 5_000_000)).unwrap();
        assert_eq!(cap.packets[0].ts_ns, 2_000_000_000);
    }

    /// An offset that would carry the time outside 64-bit nanoseconds since
    /// 1970 is refused with a message, not wrapped (release) or panicking (debug).
    #[test]
    fn pcapng_tsoffset_out_of_range_is_refused() {
        for (offset, ts) in [(i64::MAX, 0), (-6, 5_000_000), (i64::MIN, u64::MAX)] {
            let e = read_bytes(&pcapng_with_offset(offset, ts)).unwrap_err();
            assert!(
                matches!(&e, CaptureError::Damaged { err, .. } if err.contains("if_tsoffset")),
                "offset {offset}: {e}"
            );
        }
    }
}
