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
use tinygram_proto::wire::Ipv4Repr;

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
    let (src_mac, dst_mac, src, dst) = if ev.dir == 0 {
        (CLIENT_MAC, SERVER_MAC, CLIENT_IP, SERVER_IP)
    } else {
        (SERVER_MAC, CLIENT_MAC, SERVER_IP, CLIENT_IP)
    };
    let tcp_len = ev.repr.buffer_len(payload.len());
    let ip = Ipv4Repr {
        src,
        dst,
        ttl: 64,
        ident,
        dont_frag: true,
        payload_len: tcp_len,
        ecn: 0,
    };
    let mut f = vec![0u8; 14 + Ipv4Repr::HEADER_LEN + tcp_len];
    f[0..6].copy_from_slice(&dst_mac);
    f[6..12].copy_from_slice(&src_mac);
    f[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
    ip.emit(&mut f[14..14 + Ipv4Repr::HEADER_LEN])
        .map_err(|e| PcapWriteError(format!("IPv4 header: {e}")))?;
    ev.repr
        .emit(
            &mut f[14 + Ipv4Repr::HEADER_LEN..],
            payload,
            Some(ip.checksum_ctx()),
        )
        .map_err(|e| PcapWriteError(format!("TCP segment at {}: {e}", ev.at)))?;
    Ok(f)
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
    let header = PcapHeader {
        version_major: 2,
        version_minor: 4,
        ts_correction: 0,
        ts_accuracy: 0,
        snaplen: 262_144,
        datalink: DataLink::ETHERNET,
        ts_resolution: TsResolution::NanoSecond,
        endianness: Endianness::native(),
    };
    let mut w = PcapWriter::with_header(out, header).map_err(|e| PcapWriteError(e.to_string()))?;
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
