//! TUN offloads: the virtio-net header the kernel puts before each packet on
//! a device opened with `IFF_VNET_HDR` (struct virtio_net_hdr, Virtio 1.x
//! 5.1.6 "Device Operation"), checked on input, built on output, and the
//! grouping of our consecutive full-sized segments into one GSO super-packet
//! that the kernel cuts back into segments (TSO/GSO, as Linux's
//! `tcp_gso_segment` does for a NIC).
//!
//! Fields are in the CPU's byte order: a TUN device without `TUNSETVNETBE`/
//! `TUNSETVNETLE` uses the legacy (native) virtio layout.

use tinygram_proto::wire::{accumulate, fold};

/// Bytes of the header (`struct virtio_net_hdr`, without `num_buffers`): the
/// TUN default (`TUNGETVNETHDRSZ`).
pub const VNET_HDR_LEN: usize = 10;
/// `VIRTIO_NET_HDR_F_NEEDS_CSUM`: the checksum at csum_start + csum_offset
/// holds only the pseudo-header sum; the rest is left to the receiver.
pub const F_NEEDS_CSUM: u8 = 1;
/// `VIRTIO_NET_HDR_F_DATA_VALID`: the sender checked the checksum.
pub const F_DATA_VALID: u8 = 2;
/// `VIRTIO_NET_HDR_GSO_NONE`.
pub const GSO_NONE: u8 = 0;
/// `VIRTIO_NET_HDR_GSO_TCPV4`.
pub const GSO_TCPV4: u8 = 1;
/// `VIRTIO_NET_HDR_GSO_TCPV6`.
pub const GSO_TCPV6: u8 = 4;
/// `VIRTIO_NET_HDR_GSO_ECN`: the super-packet's CWR goes on its first segment only.
pub const GSO_ECN: u8 = 0x80;
/// The TCP checksum's offset inside the TCP header (RFC 9293 3.1).
const TCP_CSUM_OFFSET: u16 = 16;
/// Segments joined into one super-packet at most (keeps the iovec short).
pub const MAX_SEGMENTS: usize = 128;
/// The largest IPv4 packet (RFC 791 total length).
pub const MAX_IPV4: usize = 65535;

/// The virtio-net header, as the kernel reads and writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct VnetHdr {
    pub flags: u8,
    pub gso_type: u8,
    /// Bytes of headers (IP + TCP) before the payload of a GSO packet.
    pub hdr_len: u16,
    /// Payload bytes per segment of a GSO packet.
    pub gso_size: u16,
    pub csum_start: u16,
    pub csum_offset: u16,
}

/// Why a packet's virtio-net header was refused (the packet is dropped and counted).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum VnetError {
    #[error("frame of {len} bytes is shorter than the {VNET_HDR_LEN}-byte virtio-net header")]
    Truncated { len: usize },
    #[error("unknown virtio-net header flags {flags:#04x}")]
    UnknownFlags { flags: u8 },
    #[error("GSO type {gso_type:#04x} on an IPv4/TCP packet")]
    UnsupportedGso { gso_type: u8 },
    #[error("GSO packet with gso_size 0")]
    ZeroGsoSize,
    #[error("GSO on a SYN, RST or URG segment (flags {flags:#04x})")]
    GsoFlags { flags: u8 },
    #[error(
        "partial checksum at start {start} offset {offset}; the TCP checksum is at {want} + 16"
    )]
    BadCsumPlace { start: u16, offset: u16, want: u16 },
}

impl VnetHdr {
    /// Reads the header at the start of a frame.
    pub fn parse(frame: &[u8]) -> Result<VnetHdr, VnetError> {
        let Some(b) = frame.get(..VNET_HDR_LEN) else {
            return Err(VnetError::Truncated { len: frame.len() });
        };
        let u16_at = |i: usize| u16::from_ne_bytes([b[i], b[i + 1]]);
        Ok(VnetHdr {
            flags: b[0],
            gso_type: b[1],
            hdr_len: u16_at(2),
            gso_size: u16_at(4),
            csum_start: u16_at(6),
            csum_offset: u16_at(8),
        })
    }

    /// The header's bytes.
    pub fn to_bytes(&self) -> [u8; VNET_HDR_LEN] {
        let mut b = [0u8; VNET_HDR_LEN];
        b[0] = self.flags;
        b[1] = self.gso_type;
        b[2..4].copy_from_slice(&self.hdr_len.to_ne_bytes());
        b[4..6].copy_from_slice(&self.gso_size.to_ne_bytes());
        b[6..8].copy_from_slice(&self.csum_start.to_ne_bytes());
        b[8..10].copy_from_slice(&self.csum_offset.to_ne_bytes());
        b
    }

    /// The header for one packet of ours: a partial TCP checksum to finish
    /// (`partial`), or nothing to do.
    pub fn for_packet(pkt: &[u8], partial: bool) -> VnetHdr {
        if !partial {
            return VnetHdr::default();
        }
        VnetHdr {
            flags: F_NEEDS_CSUM,
            csum_start: ipv4_header_len(pkt).unwrap_or(20) as u16,
            csum_offset: TCP_CSUM_OFFSET,
            ..VnetHdr::default()
        }
    }
}

/// How to take a packet the kernel handed over.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct RxOffload {
    /// The TCP checksum field holds only the pseudo-header sum (the packet
    /// never left this machine's memory): not verified, nothing to verify.
    pub csum_partial: bool,
    /// A GSO super-packet: its payload is segments of this many bytes.
    pub gso_size: Option<u16>,
}

/// IPv4 header length of an IPv4/TCP packet, `None` for anything else (which
/// the host counts as not IPv4/TCP or malformed, whatever its header says).
fn ipv4_header_len(pkt: &[u8]) -> Option<usize> {
    let h = pkt.get(..20)?;
    if h[0] >> 4 != 4 || h[9] != 6 {
        return None;
    }
    Some(usize::from(h[0] & 0x0f) * 4)
}

/// Checks a received packet's virtio-net header against the packet: what
/// the host may skip (a partial checksum) and must do (cut a super-packet).
/// Headers that do not fit the packet are errors, never trusted.
pub fn check_rx(hdr: &VnetHdr, pkt: &[u8]) -> Result<RxOffload, VnetError> {
    if hdr.flags & !(F_NEEDS_CSUM | F_DATA_VALID) != 0 {
        return Err(VnetError::UnknownFlags { flags: hdr.flags });
    }
    let Some(ihl) = ipv4_header_len(pkt) else {
        // Not IPv4/TCP (IPv6 neighbour discovery, UDP): the host counts it.
        return Ok(RxOffload::default());
    };
    let mut rx = RxOffload::default();
    if hdr.flags & F_NEEDS_CSUM != 0 {
        if usize::from(hdr.csum_start) != ihl || hdr.csum_offset != TCP_CSUM_OFFSET {
            return Err(VnetError::BadCsumPlace {
                start: hdr.csum_start,
                offset: hdr.csum_offset,
                want: ihl as u16,
            });
        }
        rx.csum_partial = true;
    }
    match hdr.gso_type & !GSO_ECN {
        GSO_NONE => {}
        GSO_TCPV4 => {
            if hdr.gso_size == 0 {
                return Err(VnetError::ZeroGsoSize);
            }
            // SYN, RST and URG segments are never cut (Linux: tcp_gso_segment
            // only splits data; a SYN carrying options would be copied).
            let flags = pkt.get(ihl + 13).copied().unwrap_or(0);
            if flags & 0x26 != 0 {
                return Err(VnetError::GsoFlags { flags });
            }
            rx.gso_size = Some(hdr.gso_size);
        }
        other => return Err(VnetError::UnsupportedGso { gso_type: other }),
    }
    Ok(rx)
}

/// The pseudo-header sum (RFC 9293 3.1) of an IPv4 packet's TCP segment of
/// `tcp_len` bytes, folded, not complemented: what a partial checksum holds.
pub fn pseudo_partial(src: &[u8], dst: &[u8], tcp_len: usize) -> u16 {
    let base = tcp_len as u64 + 6;
    !fold(accumulate(accumulate(base, src), dst))
}

/// Where each field of an IPv4 packet of ours is (20-byte IP header).
struct Parts<'a> {
    pkt: &'a [u8],
    ihl: usize,
    thl: usize,
}

impl<'a> Parts<'a> {
    fn new(pkt: &'a [u8]) -> Option<Parts<'a>> {
        let ihl = ipv4_header_len(pkt)?;
        let total = usize::from(u16::from_be_bytes([pkt[2], pkt[3]]));
        if total != pkt.len() {
            return None;
        }
        let thl = usize::from(pkt.get(ihl + 12)? >> 4) * 4;
        if thl < 20 || ihl + thl > pkt.len() {
            return None;
        }
        Some(Parts { pkt, ihl, thl })
    }
    fn headers(&self) -> &'a [u8] {
        &self.pkt[..self.ihl + self.thl]
    }
    fn payload(&self) -> &'a [u8] {
        &self.pkt[self.ihl + self.thl..]
    }
    fn seq(&self) -> u32 {
        let t = self.ihl + 4;
        u32::from_be_bytes([
            self.pkt[t],
            self.pkt[t + 1],
            self.pkt[t + 2],
            self.pkt[t + 3],
        ])
    }
    fn flags(&self) -> u8 {
        self.pkt[self.ihl + 13]
    }
    /// Whether `next` could follow `self` in the same super-packet: the
    /// same headers but for IP length, ident and checksum and TCP sequence
    /// number, flags PSH and checksum.
    fn same_flow(&self, next: &Parts) -> bool {
        let (a, b) = (self.pkt, next.pkt);
        let (i, t) = (self.ihl, self.thl);
        i == next.ihl
            && t == next.thl
            && a[..2] == b[..2]
            && a[6..10] == b[6..10]
            && a[12..i] == b[12..i]
            && a[i..i + 4] == b[i..i + 4]
            && a[i + 8..i + 13] == b[i + 8..i + 13]
            && a[i + 14..i + 16] == b[i + 14..i + 16]
            && a[i + 18..i + t] == b[i + 18..i + t]
    }
}

/// Splits a batch of our packets into runs to write: each run is one packet,
/// or consecutive segments of one connection that the kernel can cut back
/// exactly (same headers, contiguous sequence numbers, every payload but the
/// last exactly the first's size, ACK only, PSH only on the last), at most
/// [`MAX_SEGMENTS`] and 64 KB of IP packet.
pub fn plan_runs(pkts: &[Vec<u8>]) -> Vec<std::ops::Range<usize>> {
    let mut runs = Vec::new();
    let mut i = 0;
    while i < pkts.len() {
        let mut end = i + 1;
        if let Some(first) = Parts::new(&pkts[i]) {
            let size = first.payload().len();
            let joinable = |p: &Parts| p.flags() & !0x08 == 0x10;
            if size > 0 && joinable(&first) && first.flags() & 0x08 == 0 {
                let mut total = first.pkt.len();
                let mut prev = first;
                while end < pkts.len() && end - i < MAX_SEGMENTS {
                    let Some(next) = Parts::new(&pkts[end]) else {
                        break;
                    };
                    let len = next.payload().len();
                    if prev.payload().len() != size
                        || len == 0
                        || len > size
                        || !joinable(&next)
                        || !prev.same_flow(&next)
                        || next.seq() != prev.seq().wrapping_add(size as u32)
                        || total + len > MAX_IPV4
                    {
                        break;
                    }
                    total += len;
                    end += 1;
                    if next.flags() & 0x08 != 0 || len < size {
                        break;
                    }
                    prev = next;
                }
            }
        }
        runs.push(i..end);
        i = end;
    }
    runs
}

/// The virtio-net header and the IP+TCP headers of a super-packet made of
/// `pkts` (a run from [`plan_runs`] of at least two): the first packet's
/// headers with the whole length, the last one's flags, and a partial
/// checksum the kernel finishes per segment.
pub fn super_headers(pkts: &[Vec<u8>]) -> Option<(VnetHdr, Vec<u8>)> {
    let first = Parts::new(pkts.first()?)?;
    let last = Parts::new(pkts.last()?)?;
    let payload: usize = pkts
        .iter()
        .map(|p| Parts::new(p).map_or(0, |x| x.payload().len()))
        .sum();
    let (ihl, thl) = (first.ihl, first.thl);
    let total = ihl + thl + payload;
    let total16 = u16::try_from(total).ok()?;
    let mut h = first.headers().to_vec();
    h[2..4].copy_from_slice(&total16.to_be_bytes());
    h[10..12].fill(0);
    let ip_sum = fold(accumulate(0, &h[..ihl]));
    h[10..12].copy_from_slice(&ip_sum.to_be_bytes());
    h[ihl + 13] = last.flags();
    let partial = pseudo_partial(&h[12..16], &h[16..20], thl + payload);
    h[ihl + 16..ihl + 18].copy_from_slice(&partial.to_be_bytes());
    let hdr = VnetHdr {
        flags: F_NEEDS_CSUM,
        gso_type: GSO_TCPV4,
        hdr_len: (ihl + thl) as u16,
        gso_size: first.payload().len() as u16,
        csum_start: ihl as u16,
        csum_offset: TCP_CSUM_OFFSET,
    };
    Some((hdr, h))
}

/// How many segments of `gso_size` payload bytes an IPv4/TCP packet cuts into (1 at least).
pub fn segment_count(pkt: &[u8], gso_size: u16) -> usize {
    let Some(ihl) = ipv4_header_len(pkt) else {
        return 1;
    };
    let thl = pkt.get(ihl + 12).map_or(20, |b| usize::from(b >> 4) * 4);
    let body = pkt.len().saturating_sub(ihl + thl);
    body.div_ceil(usize::from(gso_size.max(1))).max(1)
}

/// The payload of one of our packets (empty if it is not IPv4/TCP).
pub fn payload_of(pkt: &[u8]) -> &[u8] {
    Parts::new(pkt).map_or(&[][..], |p| p.payload())
}

/// Fills in a partial TCP checksum (what the kernel does with
/// `F_NEEDS_CSUM`): the sum from `csum_start` to the end, complemented.
pub fn finish_partial_checksum(pkt: &mut [u8], csum_start: usize) -> bool {
    let at = csum_start + usize::from(TCP_CSUM_OFFSET);
    if at + 2 > pkt.len() {
        return false;
    }
    let sum = fold(accumulate(0, &pkt[csum_start..]));
    pkt[at..at + 2].copy_from_slice(&sum.to_be_bytes());
    true
}

/// Cuts a GSO super-packet into the segments the kernel would put on the
/// wire (Linux `tcp_gso_segment`): IP length, ident and checksum per
/// segment, sequence numbers advanced, FIN and PSH on the last segment
/// only, CWR on the first only, full checksums. Used to check our
/// super-packets and by tests; `None` for a header that does not fit.
pub fn gso_segment(hdr: &VnetHdr, pkt: &[u8]) -> Option<Vec<Vec<u8>>> {
    let rx = check_rx(hdr, pkt).ok()?;
    let ihl = ipv4_header_len(pkt)?;
    let total = usize::from(u16::from_be_bytes([pkt[2], pkt[3]]));
    if total != pkt.len() {
        return None;
    }
    let thl = usize::from(pkt.get(ihl + 12)? >> 4) * 4;
    let headers = pkt.get(..ihl + thl)?;
    let body = &pkt[ihl + thl..];
    let size = rx.gso_size.map_or(body.len().max(1), usize::from);
    let chunks: Vec<&[u8]> = if body.is_empty() {
        vec![body]
    } else {
        body.chunks(size).collect()
    };
    let n = chunks.len();
    let seq0 = u32::from_be_bytes(headers[ihl + 4..ihl + 8].try_into().ok()?);
    let id0 = u16::from_be_bytes([headers[4], headers[5]]);
    let mut out = Vec::with_capacity(n);
    for (k, chunk) in chunks.into_iter().enumerate() {
        let mut p = headers.to_vec();
        p.extend_from_slice(chunk);
        let len = p.len() as u16;
        p[2..4].copy_from_slice(&len.to_be_bytes());
        p[4..6].copy_from_slice(&id0.wrapping_add(k as u16).to_be_bytes());
        p[10..12].fill(0);
        let s = fold(accumulate(0, &p[..ihl]));
        p[10..12].copy_from_slice(&s.to_be_bytes());
        let seq = seq0.wrapping_add((k * size) as u32);
        p[ihl + 4..ihl + 8].copy_from_slice(&seq.to_be_bytes());
        if k + 1 < n {
            p[ihl + 13] &= !0x09;
        }
        if k > 0 {
            p[ihl + 13] &= !0x80;
        }
        let partial = pseudo_partial(&p[12..16], &p[16..20], p.len() - ihl);
        p[ihl + 16..ihl + 18].copy_from_slice(&partial.to_be_bytes());
        if rx.csum_partial || rx.gso_size.is_some() {
            finish_partial_checksum(&mut p, ihl);
        }
        out.push(p);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tinygram_proto::wire::{Ipv4Repr, TcpRepr};
    use tinygram_proto::{Flags, SeqNumber};

    const SRC: [u8; 4] = [10, 7, 0, 2];
    const DST: [u8; 4] = [10, 7, 0, 1];

    /// One IPv4/TCP packet with both checksums right.
    fn packet(seq: u32, flags: Flags, payload: &[u8], ts: bool) -> Vec<u8> {
        let mut seg = TcpRepr {
            src_port: 5000,
            dst_port: 9000,
            seq: SeqNumber(seq),
            ack: SeqNumber(77),
            flags,
            window: 1000,
            urgent: 0,
            options: Default::default(),
        };
        if ts {
            seg.options.timestamps = Some(tinygram_proto::wire::Timestamps { tsval: 5, tsecr: 6 });
        }
        let tcp_len = seg.buffer_len(payload.len());
        let ip = Ipv4Repr {
            src: SRC,
            dst: DST,
            ttl: 64,
            ident: seq as u16,
            dont_frag: true,
            payload_len: tcp_len,
            ecn: 0,
        };
        let mut p = vec![0u8; 20 + tcp_len];
        let (h, t) = p.split_at_mut(20);
        ip.emit(h).unwrap();
        seg.emit(t, payload, Some(ip.checksum_ctx())).unwrap();
        p
    }

    fn tcp_checksum_ok(p: &[u8]) -> bool {
        let (ip, range) = Ipv4Repr::parse(p).expect("IPv4");
        TcpRepr::parse(&p[range], Some(ip.checksum_ctx())).is_ok()
    }

    #[test]
    fn header_round_trips() {
        let h = VnetHdr {
            flags: F_NEEDS_CSUM,
            gso_type: GSO_TCPV4,
            hdr_len: 52,
            gso_size: 1448,
            csum_start: 20,
            csum_offset: 16,
        };
        assert_eq!(VnetHdr::parse(&h.to_bytes()), Ok(h));
        assert_eq!(
            VnetHdr::parse(&[0u8; 9]),
            Err(VnetError::Truncated { len: 9 })
        );
        // Native byte order, as the legacy TUN layout has it.
        assert_eq!(&h.to_bytes()[4..6], &1448u16.to_ne_bytes());
    }

    #[test]
    fn hostile_headers_are_refused_not_trusted() {
        let p = packet(1000, Flags::ACK, &[7u8; 3000], false);
        let ok = VnetHdr {
            flags: F_NEEDS_CSUM,
            gso_type: GSO_TCPV4,
            hdr_len: 40,
            gso_size: 1000,
            csum_start: 20,
            csum_offset: 16,
        };
        assert_eq!(
            check_rx(&ok, &p),
            Ok(RxOffload {
                csum_partial: true,
                gso_size: Some(1000)
            })
        );
        let cases = [
            (
                VnetHdr { flags: 0x84, ..ok },
                VnetError::UnknownFlags { flags: 0x84 },
            ),
            (VnetHdr { gso_size: 0, ..ok }, VnetError::ZeroGsoSize),
            (
                VnetHdr {
                    gso_type: GSO_TCPV6,
                    ..ok
                },
                VnetError::UnsupportedGso {
                    gso_type: GSO_TCPV6,
                },
            ),
            (
                VnetHdr { gso_type: 3, ..ok },
                VnetError::UnsupportedGso { gso_type: 3 },
            ),
            (
                VnetHdr {
                    csum_start: 60000,
                    ..ok
                },
                VnetError::BadCsumPlace {
                    start: 60000,
                    offset: 16,
                    want: 20,
                },
            ),
            (
                VnetHdr {
                    csum_offset: 6,
                    ..ok
                },
                VnetError::BadCsumPlace {
                    start: 20,
                    offset: 6,
                    want: 20,
                },
            ),
        ];
        for (h, want) in cases {
            assert_eq!(check_rx(&h, &p), Err(want), "{h:?}");
            assert_eq!(gso_segment(&h, &p), None);
        }
        let syn = packet(1000, Flags::SYN, &[1u8; 100], false);
        assert_eq!(
            check_rx(&ok, &syn),
            Err(VnetError::GsoFlags { flags: 0x02 })
        );
        // A header on a packet that is not IPv4/TCP is left to the host,
        // which counts the packet; a truncated IPv4 header likewise.
        assert_eq!(check_rx(&ok, &[0x60; 40]), Ok(RxOffload::default()));
        assert_eq!(check_rx(&ok, &p[..10]), Ok(RxOffload::default()));
        // Plain header: a full checksum the host verifies.
        assert_eq!(check_rx(&VnetHdr::default(), &p), Ok(RxOffload::default()));
    }

    #[test]
    fn runs_join_only_what_the_kernel_cuts_back_exactly() {
        let mss = 1000usize;
        let data: Vec<u8> = (0..10_000u32).map(|i| (i * 7) as u8).collect();
        let mut pkts: Vec<Vec<u8>> = (0..5)
            .map(|k| {
                packet(
                    1000 + (k * mss) as u32,
                    Flags::ACK,
                    &data[k * mss..(k + 1) * mss],
                    true,
                )
            })
            .collect();
        // A short PSH tail joins and ends the run.
        pkts.push(packet(
            6000,
            Flags::ACK | Flags::PSH,
            &data[5000..5300],
            true,
        ));
        // A pure ACK, then two more segments of another sequence space.
        pkts.push(packet(6300, Flags::ACK, &[], true));
        pkts.push(packet(9000, Flags::ACK, &data[..mss], true));
        pkts.push(packet(9000 + mss as u32, Flags::ACK, &data[..mss], false));
        // A gap in sequence numbers.
        pkts.push(packet(50000, Flags::ACK, &data[..mss], true));
        pkts.push(packet(52000, Flags::ACK, &data[..mss], true));
        pkts.push(packet(
            52000 + mss as u32,
            Flags::FIN | Flags::ACK,
            &data[..10],
            true,
        ));
        let runs = plan_runs(&pkts);
        assert_eq!(
            runs,
            vec![0..6, 6..7, 7..8, 8..9, 9..10, 10..11, 11..12],
            "options differ between 7 and 8; FIN never joins"
        );
        // The super-packet the kernel cuts back is exactly the six packets.
        let (hdr, head) = super_headers(&pkts[0..6]).unwrap();
        assert_eq!(hdr.gso_size as usize, mss);
        assert_eq!(hdr.hdr_len as usize, head.len());
        let mut sup = head.clone();
        for p in &pkts[0..6] {
            sup.extend_from_slice(payload_of(p));
        }
        assert_eq!(check_rx(&hdr, &sup).unwrap().gso_size, Some(mss as u16));
        let segs = gso_segment(&hdr, &sup).unwrap();
        assert_eq!(segs.len(), 6);
        for (k, (got, want)) in segs.iter().zip(&pkts[0..6]).enumerate() {
            assert!(tcp_checksum_ok(got), "segment {k} checksum");
            // Identical but for the IP ident, which the kernel counts up.
            let mut g = got.clone();
            let mut w = want.clone();
            g[4..6].fill(0);
            g[10..12].fill(0);
            w[4..6].fill(0);
            w[10..12].fill(0);
            assert_eq!(g, w, "segment {k}");
        }
    }

    #[test]
    fn runs_stop_at_64k_and_segment_cap() {
        let pkts: Vec<Vec<u8>> = (0..200u32)
            .map(|k| packet(k * 1400, Flags::ACK, &[1u8; 1400], false))
            .collect();
        let runs = plan_runs(&pkts);
        assert!(runs.iter().all(|r| {
            let total: usize = 40 + r.clone().map(|i| pkts[i].len() - 40).sum::<usize>();
            total <= MAX_IPV4 && r.len() <= MAX_SEGMENTS
        }));
        assert_eq!(runs[0], 0..46, "46 x 1400 + 40 fits in 65535, 47 does not");
        assert_eq!(runs.iter().map(|r| r.len()).sum::<usize>(), 200);
    }

    #[test]
    fn partial_checksum_completes_to_the_full_one() {
        let p = packet(1, Flags::ACK | Flags::PSH, b"hello, kernel", true);
        let mut q = p.clone();
        let partial = pseudo_partial(&q[12..16], &q[16..20], q.len() - 20);
        q[36..38].copy_from_slice(&partial.to_be_bytes());
        assert!(!tcp_checksum_ok(&q));
        assert!(finish_partial_checksum(&mut q, 20));
        assert_eq!(p, q);
        assert!(!finish_partial_checksum(&mut q[..30], 20));
    }
}
