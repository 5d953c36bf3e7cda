//! A capture of `n` one-SYN flows (a SYN flood's shape, the worst case for
//! memory per byte of capture): raw-IP pcap, one 40-byte IPv4 + TCP SYN per
//! flow, each from its own address and port to 192.0.2.1:80, a microsecond
//! apart, checksums correct. 56 bytes of file per flow.

use std::io::{self, Write};

/// The Internet checksum (RFC 1071) of `parts` concatenated.
fn checksum(parts: &[&[u8]]) -> u16 {
    let mut sum = 0u32;
    for p in parts {
        for c in p.chunks(2) {
            sum += u32::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]));
        }
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// Flow `i`'s client: 10.x.y.z (the flow number over 64,512) and a port from 1024.
pub fn client(i: u64) -> ([u8; 4], u16) {
    let host = 0x0a00_0000 | (i / 64_512) as u32;
    (host.to_be_bytes(), 1024 + (i % 64_512) as u16)
}

/// Writes the capture of `n` one-SYN flows (at most 2^24 x 64,512).
pub fn write_syn_flows(w: impl Write, n: u64) -> io::Result<()> {
    write_flows(w, n, |_| 0)
}

/// The same, with `payload(i)` bytes of data on flow `i`'s SYN (as TCP Fast
/// Open carries), to make some flows busier than others.
pub fn write_flows(mut w: impl Write, n: u64, payload: impl Fn(u64) -> u16) -> io::Result<()> {
    // pcap header: microseconds, version 2.4, snap length 65535, LINKTYPE_RAW (101).
    let mut head = vec![0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0];
    head.extend([0; 8]);
    head.extend(65_535u32.to_le_bytes());
    head.extend(101u32.to_le_bytes());
    w.write_all(&head)?;
    let dst = [192, 0, 2, 1];
    for i in 0..n {
        let data = usize::from(payload(i).min(1400));
        let mut rec = vec![0u8; 56 + data];
        let len = 40 + data as u32;
        let (src, port) = client(i);
        let (sec, usec) = ((i / 1_000_000) as u32, (i % 1_000_000) as u32);
        rec[..4].copy_from_slice(&sec.to_le_bytes());
        rec[4..8].copy_from_slice(&usec.to_le_bytes());
        rec[8..12].copy_from_slice(&len.to_le_bytes());
        rec[12..16].copy_from_slice(&len.to_le_bytes());
        let ip = &mut rec[16..36];
        ip.copy_from_slice(&[
            0x45, 0, 0, 40, 0, 1, 0x40, 0, 64, 6, 0, 0, src[0], src[1], src[2], src[3], dst[0],
            dst[1], dst[2], dst[3],
        ]);
        ip[2..4].copy_from_slice(&(len as u16).to_be_bytes());
        ip[4..6].copy_from_slice(&(i as u16).to_be_bytes());
        let c = checksum(&[ip]);
        ip[10..12].copy_from_slice(&c.to_be_bytes());
        for (k, b) in rec[56..].iter_mut().enumerate() {
            *b = (i as usize + k) as u8;
        }
        let tcp = &mut rec[36..56];
        tcp[..2].copy_from_slice(&port.to_be_bytes());
        tcp[2..4].copy_from_slice(&80u16.to_be_bytes());
        tcp[4..8].copy_from_slice(&(i as u32).wrapping_mul(2_654_435_761).to_be_bytes());
        tcp[12] = 5 << 4;
        tcp[13] = 0x02; // SYN
        tcp[14..16].copy_from_slice(&64_240u16.to_be_bytes());
        let tl = (20 + data as u16).to_be_bytes();
        let pseudo = [
            src[0], src[1], src[2], src[3], dst[0], dst[1], dst[2], dst[3], 0, 6, tl[0], tl[1],
        ];
        let c = checksum(&[&pseudo, &rec[36..]]);
        rec[52..54].copy_from_slice(&c.to_be_bytes());
        w.write_all(&rec)?;
    }
    Ok(())
}
