//! pcap files of what crossed the simulated wire: Ethernet II + IPv4 + TCP,
//! both checksums correct, nanosecond timestamps, every TCP option encoded by
//! the engine's own codec exactly as it would go on a real wire.
//!
//! **Capture point.** Like tcpdump on one host's interface (the client's by
//! default): frames that host sends are stamped when its engine hands them to
//! the link (recorded even if the link then loses them); frames it receives
//! are stamped when they arrive (lost ones never appear, a duplicated one
//! appears twice).
//!
//! **Addresses.** The simulator's hosts have none; captures use fixed ones:
//! client 10.0.0.1 port 40000, MAC 02:00:00:00:00:01; server 10.0.0.2 port
//! 7, MAC 02:00:00:00:00:02. IPv4 TTL 64, don't-fragment set, identification
//! counting up per sender. Port 7 (echo) because Wireshark shows its payload
//! as plain data with default settings: the payload is a seeded byte pattern,
//! not any protocol a dissector should try to parse.

use crate::world::{WireEvent, CLIENT_PORT, SERVER_PORT};
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::{DataLink, Endianness, TsResolution};
use std::io::Write;
use tinygram_proto::wire::{Ipv4Repr, TcpRepr};
use tinygram_proto::Instant;

/// The client's IPv4 address in captures.
pub const CLIENT_IP: [u8; 4] = [10, 0, 0, 1];
/// The server's IPv4 address in captures.
pub const SERVER_IP: [u8; 4] = [10, 0, 0, 2];
/// The client's MAC address (locally administered).
pub const CLIENT_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0x01];
/// The server's MAC address (locally administered).
pub const SERVER_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0x02];
const _: () = assert!(CLIENT_PORT == 40_000 && SERVER_PORT == 7);

/// Which host's interface the capture is taken at.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Vantage {
    #[default]
    Client,
    Server,
}

impl Vantage {
    fn host(self) -> u8 {
        match self {
            Vantage::Client => 0,
            Vantage::Server => 1,
        }
    }
}

/// Why a capture could not be written.
#[derive(Debug)]
pub struct PcapWriteError(pub String);

impl std::fmt::Display for PcapWriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PcapWriteError {}

/// Builds the Ethernet frame of captured event `ev` sent by host `ev.dir`.
pub fn frame(ev: &WireEvent, payload: &[u8], ident: u16) -> Result<Vec<u8>, PcapWriteError> {
    let ends = if ev.dir == 0 {
        (CLIENT_MAC, SERVER_MAC, CLIENT_IP, SERVER_IP)
    } else {
        (SERVER_MAC, CLIENT_MAC, SERVER_IP, CLIENT_IP)
    };
    frame_between(ends, &ev.repr, payload, ident, 0, ev.at)
}

/// Builds an Ethernet II + IPv4 + TCP frame from (source MAC, destination
/// MAC, source address, destination address), both checksums filled in.
fn frame_between(
    (src_mac, dst_mac, src, dst): ([u8; 6], [u8; 6], [u8; 4], [u8; 4]),
    repr: &TcpRepr,
    payload: &[u8],
    ident: u16,
    ecn: u8,
    at: Instant,
) -> Result<Vec<u8>, PcapWriteError> {
    let tcp_len = repr.buffer_len(payload.len());
    let ip = Ipv4Repr {
        src,
        dst,
        ttl: 64,
        ident,
        dont_frag: true,
        payload_len: tcp_len,
        ecn,
    };
    let mut f = vec![0u8; 14 + Ipv4Repr::HEADER_LEN + tcp_len];
    f[0..6].copy_from_slice(&dst_mac);
    f[6..12].copy_from_slice(&src_mac);
    f[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
    ip.emit(&mut f[14..14 + Ipv4Repr::HEADER_LEN])
        .map_err(|e| PcapWriteError(format!("IPv4 header: {e}")))?;
    repr.emit(
        &mut f[14 + Ipv4Repr::HEADER_LEN..],
        payload,
        Some(ip.checksum_ctx()),
    )
    .map_err(|e| PcapWriteError(format!("TCP segment at {at}: {e}")))?;
    Ok(f)
}

/// The pcap header of every capture: Ethernet, nanosecond timestamps.
fn pcap_header() -> PcapHeader {
    PcapHeader {
        version_major: 2,
        version_minor: 4,
        ts_correction: 0,
        ts_accuracy: 0,
        snaplen: 262_144,
        datalink: DataLink::ETHERNET,
        ts_resolution: TsResolution::NanoSecond,
        endianness: Endianness::native(),
    }
}

/// Writes the captured events as a pcap file (nanosecond timestamps) seen at
/// `vantage`. `payloads`, if given, holds each event's payload bytes; without
/// it payloads are zeros of the right length (checksums still correct).
pub fn write_pcap<W: Write>(
    out: W,
    events: &[WireEvent],
    payloads: Option<&[Vec<u8>]>,
    vantage: Vantage,
) -> Result<(), PcapWriteError> {
    let mut w =
        PcapWriter::with_header(out, pcap_header()).map_err(|e| PcapWriteError(e.to_string()))?;
    // (timestamp in ns, event index, IP identification).
    let mut records: Vec<(u64, usize, u16)> = Vec::with_capacity(events.len());
    let mut ident = [0u16; 2];
    for (i, ev) in events.iter().enumerate() {
        let id = ident[ev.dir as usize];
        ident[ev.dir as usize] = id.wrapping_add(1);
        if ev.dir == vantage.host() {
            records.push((ev.at.as_nanos(), i, id));
        } else {
            for t in [ev.arrived, ev.duplicate_arrived].into_iter().flatten() {
                records.push((t.as_nanos(), i, id));
            }
        }
    }
    records.sort_by_key(|r| r.0);
    let zeros = vec![0u8; 65_536];
    for (t, i, id) in records {
        let ev = &events[i];
        let payload: &[u8] = match payloads {
            Some(p) => &p[i],
            None => &zeros[..ev.payload_len.min(zeros.len())],
        };
        let f = frame(ev, payload, id)?;
        w.write_packet(&PcapPacket::new(
            std::time::Duration::from_nanos(t),
            f.len() as u32,
            &f,
        ))
        .map_err(|e| PcapWriteError(e.to_string()))?;
    }
    Ok(())
}

/// The IPv4 address of many-flow host `i` (the index of
/// [`crate::flows::FlowSim::host_names`]) in captures: 10.0.0.0/8 counted
/// from 10.0.0.1.
pub fn host_ip(i: u32) -> [u8; 4] {
    let n = i + 1;
    [10, (n >> 16) as u8, (n >> 8) as u8, n as u8]
}

/// The MAC address of many-flow host `i` (locally administered, 02:00:00 and
/// the last three bytes of its address).
pub fn host_mac(i: u32) -> [u8; 6] {
    let ip = host_ip(i);
    [0x02, 0, 0, ip[1], ip[2], ip[3]]
}

/// A pcap file written as a many-flow run goes: one frame for each packet as
/// it starts onto the shared bottleneck link, both directions (a mirror port
/// on that link: packets the queue drops never appear, nor do losses on
/// access links after it). Addresses come from [`host_ip`]; ports are the
/// flows' own; IPv4 ECN is the field as the queue left it.
pub struct FlowCapture<W: Write> {
    w: PcapWriter<W>,
    /// Next IPv4 identification per sending host.
    ident: Vec<u16>,
    frames: u64,
    error: Option<PcapWriteError>,
}

impl<W: Write> FlowCapture<W> {
    /// Starts a capture, writing the pcap header to `out`.
    pub fn new(out: W) -> Result<Self, PcapWriteError> {
        let w = PcapWriter::with_header(out, pcap_header())
            .map_err(|e| PcapWriteError(e.to_string()))?;
        Ok(FlowCapture {
            w,
            ident: Vec::new(),
            frames: 0,
            error: None,
        })
    }

    /// Records a packet from host `src` to host `dst` at `at`; after a write
    /// error, nothing more is written and [`Self::finish`] reports it.
    pub fn record(
        &mut self,
        at: Instant,
        src: u32,
        dst: u32,
        repr: &TcpRepr,
        payload: &[u8],
        ecn: u8,
    ) {
        if self.error.is_some() {
            return;
        }
        let s = src as usize;
        if self.ident.len() <= s {
            self.ident.resize(s + 1, 0);
        }
        let id = self.ident[s];
        self.ident[s] = id.wrapping_add(1);
        let ends = (host_mac(src), host_mac(dst), host_ip(src), host_ip(dst));
        let written = frame_between(ends, repr, payload, id, ecn, at).and_then(|f| {
            self.w
                .write_packet(&PcapPacket::new(
                    std::time::Duration::from_nanos(at.as_nanos()),
                    f.len() as u32,
                    &f,
                ))
                .map_err(|e| PcapWriteError(e.to_string()))
        });
        match written {
            Ok(_) => self.frames += 1,
            Err(e) => self.error = Some(e),
        }
    }

    /// Flushes the file; the frames written, or the first error.
    pub fn finish(self) -> Result<u64, PcapWriteError> {
        if let Some(e) = self.error {
            return Err(e);
        }
        let mut out = self.w.into_writer();
        out.flush().map_err(|e| PcapWriteError(e.to_string()))?;
        Ok(self.frames)
    }
}
