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
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::io::Read;
use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use tinygram_proto::wire::{ChecksumCtx, Flags, TcpOptions, TcpSegment};
use tinygram_proto::{SeqNumber, TcpRepr};

/// One TCP segment found in a capture, kept compact (about 56 bytes; a
/// 1 GB capture holds about a million of them): addresses and the options
/// the analysis reads live in [`Capture`]'s side tables.
#[derive(Clone, Copy, Debug)]
pub struct Packet {
    /// Capture timestamp, nanoseconds since the Unix epoch (or since the
    /// simulation's start for tinygram's own captures).
    pub ts_ns: u64,
    /// Hash of the TCP header's bytes with the checksum zeroed: a copy the
    /// network made has the same one; a retransmission differs somewhere
    /// (timestamps, window, ACK) nearly always.
    pub header_hash: u64,
    pub seq: SeqNumber,
    /// Meaningful only when `flags` has ACK.
    pub ack: SeqNumber,
    /// Source and destination: indices into [`Capture::endpoints`].
    pub src: u32,
    pub dst: u32,
    /// TCP payload bytes (from the IP length, so snap-length truncation does not shrink it).
    pub payload_len: u32,
    /// Index into [`Capture::options`] when the segment carries options the
    /// analysis reads (a SYN's, SACK blocks, an RFC 1106 NAK); `u32::MAX` when not.
    pub options: u32,
    /// The raw 16-bit window field (before any scaling).
    pub window: u16,
    /// RFC 1106 Big Window option's upper window bits, when present.
    pub big_window_upper: Option<u16>,
    /// IPv4 identification (`None` for IPv6): a network duplicate repeats it,
    /// a TCP retransmission normally does not.
    pub ip_id: Option<u16>,
    /// IP header length (IPv4 with options, IPv6 with extension headers).
    pub ip_header_len: u16,
    /// TCP header length, options included.
    pub header_len: u8,
    pub flags: Flags,
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
    /// Nanoseconds per timestamp tick (1000 for a microsecond pcap, 1 for a
    /// nanosecond one; the coarsest interface of a pcapng): reported times
    /// are rounded to it. 0 when no header said.
    pub ts_resolution_ns: u64,
    /// Set when the file ends inside a record (a capture cut short, e.g. tcpdump
    /// killed mid-write): what it ends inside. Every complete frame before it
    /// is read; `frames` counts them.
    pub truncated: Option<String>,
}

impl ReadStats {
    /// The warning for a capture cut short, if it was.
    pub fn truncation_warning(&self) -> Option<String> {
        self.truncated.as_ref().map(|what| {
            format!(
                "the file ends inside {what} after {} complete frame(s); analysed those, the rest is lost",
                self.frames
            )
        })
    }
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
    #[error("the capture holds more than {limit} TCP flows (address pairs; frame {frames} began one more): diagnose keeps a summary of each, about 110 bytes, and stops here rather than use more memory; split the capture (editcap -c N) or filter it (tcpdump -r IN -w OUT 'host A')")]
    TooManyFlows { limit: usize, frames: u64 },
}

/// A capture's TCP segments, read into compact records (not the frames).
#[derive(Clone, Debug, Default)]
pub struct Capture {
    pub packets: Vec<Packet>,
    /// Every address:port seen, in order of first appearance.
    pub endpoints: Vec<SocketAddr>,
    /// Options of the segments that carry ones the analysis reads.
    pub options: Vec<TcpOptions>,
    pub stats: ReadStats,
    endpoint_ids: HashMap<SocketAddr, u32>,
}

impl Capture {
    /// The address of an endpoint index from a [`Packet`].
    pub fn endpoint(&self, i: u32) -> SocketAddr {
        self.endpoints[i as usize]
    }

    /// The options the analysis reads of a segment, if it carries any.
    pub fn options_of(&self, p: &Packet) -> Option<&TcpOptions> {
        self.options.get(p.options as usize)
    }
}

const PCAP_MAGICS: [[u8; 4]; 4] = [
    [0xd4, 0xc3, 0xb2, 0xa1],
    [0xa1, 0xb2, 0xc3, 0xd4],
    [0x4d, 0x3c, 0xb2, 0xa1],
    [0xa1, 0xb2, 0x3c, 0x4d],
];
const PCAPNG_MAGIC: [u8; 4] = [0x0a, 0x0d, 0x0d, 0x0a];

/// Reads a pcap or pcapng file, streaming it: memory holds one record at a
/// time plus the compact per-segment records, not the file.
pub fn read_file(path: &Path) -> Result<Capture, CaptureError> {
    let name = path.display().to_string();
    let file = std::fs::File::open(path).map_err(|err| CaptureError::Io {
        path: name.clone(),
        err,
    })?;
    read(file, &name)
}

/// Reads a pcap or pcapng capture held in memory.
pub fn read_bytes(bytes: &[u8]) -> Result<Capture, CaptureError> {
    read(bytes, "the capture")
}

/// Reads a pcap or pcapng capture from any reader, a chunk at a time; `name`
/// says what it is in an I/O error.
pub fn read<R: Read>(src: R, name: &str) -> Result<Capture, CaptureError> {
    let mut cap = Capture::default();
    scan(src, name, &mut cap, &mut |_| {})?;
    cap.finish();
    Ok(cap)
}

/// One TCP segment as the reader parsed it, handed to a [`Sink`].
pub struct Segment<'a> {
    /// Capture timestamp, nanoseconds (as [`Packet::ts_ns`]).
    pub ts_ns: u64,
    pub src: SocketAddr,
    pub dst: SocketAddr,
    pub flags: Flags,
    /// TCP payload bytes, from the IP length.
    pub payload_len: u32,
    tcp: &'a Tcp,
}

/// What a read does with each TCP segment: a [`Capture`] keeps every one;
/// other sinks keep a summary, or only some flows' segments.
pub trait Sink {
    /// The read's counters, which the reader keeps up to date.
    fn stats(&mut self) -> &mut ReadStats;
    /// One TCP segment; an error ends the read with it.
    fn segment(&mut self, s: &Segment) -> Result<(), CaptureError>;
}

/// Reads a pcap or pcapng capture from any reader into `sink`, a chunk at a
/// time; `progress(bytes)` hears how far the read got after each chunk.
pub fn scan<R: Read>(
    src: R,
    name: &str,
    sink: &mut impl Sink,
    progress: &mut dyn FnMut(u64),
) -> Result<(), CaptureError> {
    let mut feed = Feed::new(src, name, progress);
    let magic = feed.peek(4)?;
    if PCAP_MAGICS.iter().any(|m| m[..] == *magic) {
        read_pcap(&mut feed, sink)
    } else if magic == PCAPNG_MAGIC {
        read_pcapng(&mut feed, sink)
    } else {
        Err(CaptureError::NotACapture)
    }
}

/// Bytes read per `read` call.
const CHUNK: usize = 256 * 1024;
/// The longest record we buffer: far above any real snap length (pcapng's
/// largest is 256 KiB), so only a damaged length field gets there.
const MAX_RECORD: usize = 64 * 1024 * 1024;

/// Feeds a capture's records to a parser from a reader, holding only the
/// bytes not parsed yet: one chunk, or one record when a record is longer.
struct Feed<'n, R> {
    src: R,
    name: &'n str,
    /// Told the bytes read so far after each read.
    progress: &'n mut dyn FnMut(u64),
    read: u64,
    buf: Vec<u8>,
    /// Unparsed bytes are `buf[start..end]`.
    start: usize,
    end: usize,
    eof: bool,
}

/// What [`Feed::next`] found.
enum Fed {
    /// The parser took a record.
    Record,
    /// The input ended between records.
    End,
    /// The input ended inside a record.
    Cut,
}

/// Why [`Feed::next`] stopped other than at a record or the end.
enum FeedError {
    Capture(CaptureError),
    Parse(PcapError),
    /// The sink refused a segment.
    Sink(CaptureError),
}

impl<'n, R: Read> Feed<'n, R> {
    fn new(src: R, name: &'n str, progress: &'n mut dyn FnMut(u64)) -> Self {
        Feed {
            src,
            name,
            progress,
            read: 0,
            buf: Vec::new(),
            start: 0,
            end: 0,
            eof: false,
        }
    }

    /// The next `n` unparsed bytes, or fewer where the input ends first.
    fn peek(&mut self, n: usize) -> Result<&[u8], CaptureError> {
        while self.end - self.start < n && !self.eof {
            self.fill()?;
        }
        Ok(&self.buf[self.start..self.end.min(self.start + n)])
    }

    /// Reads more input after the unparsed bytes, first moving them to the
    /// buffer's start, and growing the buffer only when they fill it.
    fn fill(&mut self) -> Result<(), CaptureError> {
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.end == self.buf.len() {
            if self.buf.len() >= MAX_RECORD {
                return Err(CaptureError::Damaged {
                    frames: 0,
                    err: format!("a record claims more than {} MiB", MAX_RECORD >> 20),
                });
            }
            self.buf.resize((self.buf.len() * 2).max(CHUNK), 0);
        }
        loop {
            match self.src.read(&mut self.buf[self.end..]) {
                Ok(0) => self.eof = true,
                Ok(n) => {
                    self.end += n;
                    self.read += n as u64;
                    (self.progress)(self.read);
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(err) => {
                    return Err(CaptureError::Io {
                        path: self.name.to_string(),
                        err,
                    })
                }
            }
            return Ok(());
        }
    }

    /// Hands the unparsed bytes to `parse`, which returns how many it took
    /// for one record, or `IncompleteBuffer` when the record needs more:
    /// then more is read and `parse` runs again on the longer slice.
    fn next(
        &mut self,
        mut parse: impl FnMut(&[u8]) -> Result<usize, PcapError>,
    ) -> Result<Fed, FeedError> {
        loop {
            if self.start == self.end {
                if self.eof {
                    return Ok(Fed::End);
                }
                self.fill().map_err(FeedError::Capture)?;
                continue;
            }
            match parse(&self.buf[self.start..self.end]) {
                Ok(n) => {
                    self.start += n;
                    return Ok(Fed::Record);
                }
                Err(PcapError::IncompleteBuffer) if self.eof => return Ok(Fed::Cut),
                Err(PcapError::IncompleteBuffer) => self.fill().map_err(FeedError::Capture)?,
                Err(e) => return Err(FeedError::Parse(e)),
            }
        }
    }
}

/// A parse failure after `frames` complete frames, inside `what`.
fn feed_err(e: FeedError, frames: u64, what: &'static str) -> CaptureError {
    match e {
        FeedError::Capture(CaptureError::Damaged { err, .. }) => {
            CaptureError::Damaged { frames, err }
        }
        FeedError::Sink(e) => e,
        FeedError::Capture(e) => e,
        FeedError::Parse(e) => map_err(e, frames, what),
    }
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

fn read_pcap<R: Read>(feed: &mut Feed<R>, cap: &mut impl Sink) -> Result<(), CaptureError> {
    cap.stats().format = "pcap";
    let mut parser = None;
    let header = feed.next(|b| {
        let (rest, p) = PcapParser::new(b)?;
        parser = Some(p);
        Ok(b.len() - rest.len())
    });
    let parser = match (header, parser) {
        (Ok(Fed::Record), Some(p)) => p,
        (Ok(Fed::Cut), _) => {
            return Err(CaptureError::Truncated {
                what: "the file header",
                frames: 0,
            })
        }
        (Err(FeedError::Capture(e)), _) => return Err(e),
        _ => return Err(CaptureError::NotACapture),
    };
    let link = parser.header().datalink;
    check_link(link)?;
    cap.stats().link_types.push(format!("{link:?}"));
    let frac_ns = match parser.header().ts_resolution {
        pcap_file::TsResolution::MicroSecond => 1000,
        pcap_file::TsResolution::NanoSecond => 1,
    };
    cap.stats().ts_resolution_ns = frac_ns;
    loop {
        // Raw records: pcap-file's checked packets refuse an original length
        // above the snap length, which is every frame a short snap length cut.
        let mut refused = None;
        let fed = feed.next(|b| {
            let (rest, pkt) = parser.next_raw_packet(b)?;
            let ts = u64::from(pkt.ts_sec) * 1_000_000_000 + u64::from(pkt.ts_frac) * frac_ns;
            refused = push_frame(cap, link, ts, &pkt.data).err();
            Ok(b.len() - rest.len())
        });
        let fed = match refused {
            Some(e) => Err(FeedError::Sink(e)),
            None => fed,
        };
        let frames = cap.stats().frames;
        match fed.map_err(|e| feed_err(e, frames, "a packet record"))? {
            Fed::Record => {}
            Fed::End => break,
            Fed::Cut => {
                cap.stats().truncated = Some("a packet record".into());
                break;
            }
        }
    }
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

fn read_pcapng<R: Read>(feed: &mut Feed<R>, cap: &mut impl Sink) -> Result<(), CaptureError> {
    cap.stats().format = "pcapng";
    let mut parser = None;
    let header = feed.next(|b| {
        let (rest, p) = PcapNgParser::new(b)?;
        parser = Some(p);
        Ok(b.len() - rest.len())
    });
    let mut parser = match (header, parser) {
        (Ok(Fed::Record), Some(p)) => p,
        (Ok(Fed::Cut), _) => {
            return Err(CaptureError::Truncated {
                what: "the section header",
                frames: 0,
            })
        }
        (Err(FeedError::Capture(e)), _) => return Err(e),
        _ => return Err(CaptureError::NotACapture),
    };
    let mut ifaces: Vec<Iface> = Vec::new();
    loop {
        // A block the parser took but we refuse (an unsupported link type, ...).
        let mut refused = None;
        let fed = feed.next(|b| {
            let (rest, block) = parser.next_block(b)?;
            refused = pcapng_block(block, &mut ifaces, cap).err();
            Ok(b.len() - rest.len())
        });
        if let Some(e) = refused {
            return Err(e);
        }
        let frames = cap.stats().frames;
        match fed.map_err(|e| feed_err(e, frames, "a block"))? {
            Fed::Record => {}
            Fed::End => break,
            Fed::Cut => {
                cap.stats().truncated = Some("a block".into());
                break;
            }
        }
    }
    Ok(())
}

/// Takes in one pcapng block: an interface's description, or a packet on one.
fn pcapng_block(
    block: Block,
    ifaces: &mut Vec<Iface>,
    cap: &mut impl Sink,
) -> Result<(), CaptureError> {
    match block {
        Block::SectionHeader(_) => ifaces.clear(),
        Block::InterfaceDescription(idb) => {
            check_link(idb.linktype)?;
            let name = format!("{:?}", idb.linktype);
            if !cap.stats().link_types.contains(&name) {
                cap.stats().link_types.push(name);
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
            // Whole nanoseconds per tick, at least one (times are kept in ns).
            let tick_ns = num.div_ceil(den).clamp(1, u128::from(u64::MAX)) as u64;
            let st = cap.stats();
            st.ts_resolution_ns = st.ts_resolution_ns.max(tick_ns);
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
                    frames: cap.stats().frames,
                    err: format!("packet on undeclared interface {}", epb.interface_id),
                });
            };
            // pcap-file hands the raw 64-bit timestamp over as if it were nanoseconds.
            let raw = epb.timestamp.as_nanos();
            let frames = cap.stats().frames;
            let ts = packet_time_ns(raw, ifc).ok_or_else(|| CaptureError::Damaged {
                frames,
                err: format!(
                    "packet timestamp {raw} (x{}/{} ns, if_tsoffset {} s) lies outside 1970..2554",
                    ifc.num,
                    ifc.den,
                    ifc.offset_ns / 1_000_000_000
                ),
            })?;
            push_frame(cap, ifc.link, ts, &epb.data)?;
        }
        Block::SimplePacket(spb) => {
            if let Some(ifc) = ifaces.first() {
                push_frame(cap, ifc.link, 0, &spb.data)?;
            }
        }
        _ => {}
    }
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

/// Counts one frame and hands its TCP segment, if it holds one, to the sink.
fn push_frame(
    sink: &mut impl Sink,
    link: DataLink,
    ts_ns: u64,
    frame: &[u8],
) -> Result<(), CaptureError> {
    let stats = sink.stats();
    stats.frames += 1;
    match parse_frame(link, frame) {
        Frame::Tcp(t) => {
            stats.tcp_segments += 1;
            if t.checksum_ok == Some(false) {
                stats.bad_checksums += 1;
            }
            stats.start_ns = if stats.tcp_segments == 1 {
                ts_ns
            } else {
                stats.start_ns.min(ts_ns)
            };
            sink.segment(&Segment {
                ts_ns,
                src: t.src,
                dst: t.dst,
                flags: t.repr.flags,
                payload_len: t.payload_len,
                tcp: &t,
            })
        }
        Frame::Other => {
            stats.other_frames += 1;
            Ok(())
        }
        Frame::Malformed => {
            stats.malformed += 1;
            Ok(())
        }
    }
}

impl Sink for Capture {
    fn stats(&mut self) -> &mut ReadStats {
        &mut self.stats
    }

    fn segment(&mut self, s: &Segment) -> Result<(), CaptureError> {
        self.push(s);
        Ok(())
    }
}

impl Capture {
    /// Keeps one segment as a compact record.
    pub fn push(&mut self, s: &Segment) {
        let t = s.tcp;
        let (src, dst) = (self.endpoint_id(t.src), self.endpoint_id(t.dst));
        let r = &t.repr;
        let o = &r.options;
        // Only a SYN's options, SACK blocks and NAKs are read later.
        let options = if r.flags.syn() || !o.sack_blocks.is_empty() || o.nak.is_some() {
            self.options.push(*o);
            (self.options.len() - 1) as u32
        } else {
            u32::MAX
        };
        self.packets.push(Packet {
            ts_ns: s.ts_ns,
            header_hash: t.header_hash,
            seq: r.seq,
            ack: r.ack,
            src,
            dst,
            payload_len: t.payload_len,
            options,
            window: r.window,
            big_window_upper: o.big_window_upper,
            ip_id: t.ip_id,
            ip_header_len: t.ip_header_len,
            header_len: t.header_len,
            flags: r.flags,
        });
    }

    /// Frees what only reading needed (the address index) and spare capacity.
    pub fn finish(&mut self) {
        self.packets.shrink_to_fit();
        self.options.shrink_to_fit();
        self.endpoint_ids = HashMap::new();
    }

    fn endpoint_id(&mut self, a: SocketAddr) -> u32 {
        *self.endpoint_ids.entry(a).or_insert_with(|| {
            self.endpoints.push(a);
            (self.endpoints.len() - 1) as u32
        })
    }
}

/// A TCP segment parsed out of a frame, before it is made compact.
struct Tcp {
    src: SocketAddr,
    dst: SocketAddr,
    repr: TcpRepr,
    header_hash: u64,
    payload_len: u32,
    header_len: u8,
    ip_header_len: u16,
    checksum_ok: Option<bool>,
    ip_id: Option<u16>,
}

enum Frame {
    Tcp(Box<Tcp>),
    Other,
    Malformed,
}

fn parse_frame(link: DataLink, frame: &[u8]) -> Frame {
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
    // Checksum zeroed: a network copy has the same header bytes, checksum too,
    // but a hash of everything else is what duplicate detection compares.
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    head[..16].hash(&mut hasher);
    head[18..].hash(&mut hasher);
    Frame::Tcp(Box::new(Tcp {
        src: SocketAddr::new(src, repr.src_port),
        dst: SocketAddr::new(dst, repr.dst_port),
        repr,
        header_hash: hasher.finish(),
        payload_len: u32::try_from(ip_payload_len.saturating_sub(header_len)).unwrap_or(u32::MAX),
        header_len: u8::try_from(header_len).unwrap_or(u8::MAX),
        ip_header_len: u16::try_from(ip_hl).unwrap_or(u16::MAX),
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

    /// A pcap of a bulk transfer several times longer than the read chunk.
    fn bulk_pcap() -> Vec<u8> {
        use tinygram_sim::pcap::{write_pcap, Vantage};
        let sc = tinygram_sim::scenario::Scenario::from_str(
            "[workload]\ntype = \"bulk\"\nbytes = \"2MB\"\n",
            "t.toml",
            &[],
        )
        .unwrap();
        let mut sim = tinygram_sim::world::Sim::new(&sc);
        sim.enable_capture(true);
        sim.run(&mut |_, _| {});
        let (events, payloads) = sim.capture();
        let mut pcap = Vec::new();
        write_pcap(&mut pcap, events, payloads, Vantage::Client).unwrap();
        assert!(pcap.len() > 6 * CHUNK, "{} bytes", pcap.len());
        pcap
    }

    /// Hands out at most `step` bytes per read, cycling through 1..=step, so
    /// records arrive split at every possible offset.
    struct Dribble<'a> {
        rest: &'a [u8],
        step: usize,
        next: usize,
    }

    impl Read for Dribble<'_> {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            self.next = self.next % self.step + 1;
            let n = self.next.min(out.len()).min(self.rest.len());
            out[..n].copy_from_slice(&self.rest[..n]);
            self.rest = &self.rest[n..];
            Ok(n)
        }
    }

    fn same(a: &Capture, b: &Capture) {
        assert_eq!(a.packets.len(), b.packets.len());
        for (p, q) in a.packets.iter().zip(&b.packets) {
            assert_eq!(format!("{p:?}"), format!("{q:?}"));
        }
        assert_eq!(a.endpoints, b.endpoints);
        assert_eq!(a.options, b.options);
        assert_eq!(format!("{:?}", a.stats), format!("{:?}", b.stats));
    }

    #[test]
    fn the_reader_holds_one_chunk_not_the_file() {
        let pcap = bulk_pcap();
        let mut quiet = |_| {};
        let mut feed = Feed::new(&pcap[..], "bulk", &mut quiet);
        let mut cap = Capture::default();
        read_pcap(&mut feed, &mut cap).unwrap();
        assert_eq!(feed.buf.len(), CHUNK, "the buffer grew past one chunk");
        assert!(cap.stats.frames > 1000 && cap.stats.truncated.is_none());
        assert_eq!(cap.stats.frames, cap.stats.tcp_segments);
    }

    #[test]
    fn records_split_across_reads_parse_as_whole_ones() {
        let pcap = bulk_pcap();
        let whole = read_bytes(&pcap).unwrap();
        let dribbled = read(
            Dribble {
                rest: &pcap,
                step: 7,
                next: 0,
            },
            "dribble",
        )
        .unwrap();
        same(&whole, &dribbled);
        // Cut inside a record, fed in pieces: still the complete frames, and a warning.
        let cut = &pcap[..pcap.len() / 2];
        let a = read_bytes(cut).unwrap();
        let b = read(
            Dribble {
                rest: cut,
                step: 5,
                next: 0,
            },
            "dribble",
        )
        .unwrap();
        assert!(a.stats.truncated.is_some() && a.stats.frames < whole.stats.frames);
        same(&a, &b);
    }

    #[test]
    fn a_read_error_names_the_input() {
        struct Failing(usize);
        impl Read for Failing {
            fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
                if self.0 == 0 {
                    return Err(std::io::Error::other("disk on fire"));
                }
                let n = self.0.min(out.len());
                // A little-endian microsecond pcap header, then zeros.
                let header = [0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0];
                for (i, b) in out[..n].iter_mut().enumerate() {
                    *b = header.get(i).copied().unwrap_or(0);
                }
                self.0 = 0;
                Ok(n)
            }
        }
        let e = read(Failing(30), "dump.pcap").unwrap_err();
        assert!(
            e.to_string().contains("dump.pcap") && e.to_string().contains("disk on fire"),
            "{e}"
        );
    }

    #[test]
    fn a_record_claiming_gigabytes_is_refused_not_buffered() {
        // pcap header (Ethernet, snap length 65535), then a record claiming
        // 4 GiB of frame, then an endless stream.
        let mut head = vec![0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0];
        head.extend([0; 8]);
        head.extend(65535u32.to_le_bytes());
        head.extend(1u32.to_le_bytes());
        head.extend([0; 8]);
        head.extend(u32::MAX.to_le_bytes());
        head.extend(u32::MAX.to_le_bytes());
        let e = read(head.as_slice().chain(std::io::repeat(0)), "huge").unwrap_err();
        assert!(
            matches!(&e, CaptureError::Damaged { frames: 0, err } if err.contains("MiB")),
            "{e}"
        );
    }

    #[test]
    fn a_segment_record_stays_compact() {
        // A million of these per gigabyte of capture.
        assert!(std::mem::size_of::<Packet>() <= 56);
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
