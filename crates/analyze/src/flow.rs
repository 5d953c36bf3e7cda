//! TCP flows: a capture's segments grouped by connection, with sequence
//! numbers made relative to each side's initial sequence number and unwrapped
//! to 64 bits, and windows scaled as the handshake negotiated (RFC 7323 2.3).

use crate::capture::{Capture, Packet};
use std::collections::HashMap;
use std::net::SocketAddr;
use tinygram_proto::wire::Flags;
use tinygram_proto::SeqNumber;

/// Direction index: 0 from the connection's initiator (the client), 1 from the responder.
pub type Dir = usize;

/// One segment of a flow, in relative, unwrapped sequence space.
#[derive(Clone, Debug)]
pub struct Seg {
    /// Seconds since the first packet of the capture.
    pub t: f64,
    pub dir: Dir,
    /// First sequence number (relative to the sender's ISN; the SYN is 0).
    pub seq: u64,
    /// Payload bytes.
    pub len: usize,
    pub flags: Flags,
    /// Cumulative ACK (relative to the peer's ISN), when the ACK flag is set.
    pub ack: Option<u64>,
    /// Receive window in bytes (scaled, RFC 1106 big-window upper bits applied).
    pub win: u64,
    /// SACK blocks, relative to the peer's ISN.
    pub sacks: Vec<(u64, u64)>,
    /// RFC 1106 NAK: first missing byte (relative to the peer's ISN) and segment count.
    pub nak: Option<(u64, u8)>,
    /// Header bytes on the wire below the payload: IP + TCP.
    pub header_bytes: usize,
    /// Sends a byte range already sent before (retransmission).
    pub retransmit: bool,
    /// A copy the network made of the previous segment in this direction
    /// (same header, same IPv4 identification), not a retransmission.
    pub duplicate: bool,
    /// An original that the network delivered after later segments (its IPv4
    /// identification is older than one already seen, on a sender whose
    /// identifications count up), not a retransmission.
    pub reordered: bool,
}

impl Seg {
    /// Sequence number after this segment's payload.
    pub fn end(&self) -> u64 {
        self.seq + self.len as u64
    }
    pub fn is_pure_ack(&self) -> bool {
        self.len == 0 && !self.flags.syn() && !self.flags.fin() && !self.flags.rst()
    }
}

/// Per-direction facts from the handshake and the traffic.
#[derive(Clone, Debug, Default)]
pub struct Side {
    pub addr: Option<SocketAddr>,
    /// MSS option this side announced in its SYN.
    pub mss_option: Option<u16>,
    pub window_scale: Option<u8>,
    pub timestamps: bool,
    pub sack_permitted: bool,
    /// RFC 1106 NAK-permitted in this side's SYN.
    pub nak_permitted: bool,
    /// RFC 1106 Big Window offered in this side's SYN.
    pub big_window: bool,
    /// Largest payload this side sent.
    pub max_payload: usize,
    /// Fewest TCP option bytes on a data segment this side sent (timestamps,
    /// RFC 1106's Big Window upper bits, ...): the MSS counts them.
    pub data_option_bytes: Option<usize>,
    /// Payload bytes sent (retransmissions included).
    pub bytes: u64,
    pub data_segments: u64,
    pub retransmits: u64,
}

/// One TCP connection.
#[derive(Clone, Debug)]
pub struct Flow {
    /// `sides[0]` is the client (sent the SYN, or the first packet seen).
    pub sides: [Side; 2],
    pub segs: Vec<Seg>,
    /// The handshake was in the capture.
    pub saw_syn: bool,
}

impl Flow {
    pub fn addr(&self, d: Dir) -> SocketAddr {
        self.sides[d].addr.expect("every flow has both addresses")
    }

    /// The segment size direction `d` sends when it sends a full segment: the
    /// MSS the peer announced less the option bytes every data segment
    /// carries (RFC 6691: timestamps' 12, RFC 1106 Big Window's 8, ...), as
    /// observed; a stack that does not subtract them sends more, so the
    /// largest payload seen, up to the MSS, wins. Without the handshake in the
    /// capture, the largest payload seen.
    pub fn smss(&self, d: Dir) -> usize {
        let me = &self.sides[d];
        let Some(m) = self.sides[1 - d].mss_option.map(usize::from) else {
            return me.max_payload.max(1);
        };
        // No data seen: the options the handshake put on every segment
        // (timestamps 12 bytes, Big Window's upper bits 8 with padding).
        let both = |x: fn(&Side) -> bool| x(me) && x(&self.sides[1 - d]);
        let negotiated =
            12 * usize::from(both(|s| s.timestamps)) + 8 * usize::from(both(|s| s.big_window));
        let opts = me.data_option_bytes.unwrap_or(negotiated);
        let full = m.saturating_sub(opts);
        if me.max_payload > full {
            me.max_payload.min(m)
        } else {
            full
        }
        .max(1)
    }

    /// Time span of the flow in seconds.
    pub fn span(&self) -> (f64, f64) {
        match (self.segs.first(), self.segs.last()) {
            (Some(a), Some(b)) => (a.t, b.t),
            _ => (0.0, 0.0),
        }
    }
}

/// Whether a sender's IPv4 identifications count up (Linux and Windows do, per
/// connection or per host; some stacks randomize them or send zero): nearly
/// every packet's is a little above the one before.
fn ids_count_up<'a>(pkts: impl Iterator<Item = &'a &'a Packet>) -> bool {
    let ids: Vec<u16> = pkts.filter_map(|p| p.ip_id).collect();
    let pairs = ids.len().saturating_sub(1);
    let up = ids
        .windows(2)
        .filter(|w| (1..1024).contains(&w[1].wrapping_sub(w[0])))
        .count();
    pairs >= 4 && up * 10 >= pairs * 9
}

/// Unwraps 32-bit sequence numbers into a 64-bit space relative to a base.
#[derive(Clone, Copy, Debug)]
struct Unwrap {
    last: SeqNumber,
    last_rel: i64,
}

impl Unwrap {
    fn new(base: SeqNumber) -> Self {
        Unwrap {
            last: base,
            last_rel: 0,
        }
    }
    fn rel(&mut self, s: SeqNumber) -> u64 {
        let d = s.0.wrapping_sub(self.last.0) as i32 as i64;
        let r = self.last_rel + d;
        if d > 0 {
            self.last = s;
            self.last_rel = r;
        }
        r.max(0) as u64
    }
}

/// Groups a capture's segments into flows, in order of first appearance.
pub fn flows(cap: &Capture) -> Vec<Flow> {
    let packets = &cap.packets;
    // Times count from the capture's first TCP segment, which a capture
    // holding only some flows' segments did not keep.
    let t0 = if cap.stats.tcp_segments > 0 {
        cap.stats.start_ns
    } else {
        packets.iter().map(|p| p.ts_ns).min().unwrap_or(0)
    };
    let mut index: HashMap<(u32, u32), usize> = HashMap::new();
    let mut raw: Vec<Vec<&Packet>> = Vec::new();
    for p in packets {
        let key = if p.src <= p.dst {
            (p.src, p.dst)
        } else {
            (p.dst, p.src)
        };
        let i = *index.entry(key).or_insert_with(|| {
            raw.push(Vec::new());
            raw.len() - 1
        });
        raw[i].push(p);
    }
    raw.into_iter()
        .flat_map(|mut pkts| {
            pkts.sort_by_key(|p| p.ts_ns);
            split_connections(pkts)
        })
        .map(|pkts| build(cap, &pkts, t0))
        .collect()
}

/// Splits one address pair's packets into connections: a new SYN (without
/// ACK) after the previous connection's FIN or RST starts a new one.
fn split_connections(pkts: Vec<&Packet>) -> Vec<Vec<&Packet>> {
    let mut out: Vec<Vec<&Packet>> = vec![Vec::new()];
    let mut closing = false;
    for p in pkts {
        let f = p.flags;
        let cur = out.last_mut().expect("non-empty");
        if f.syn() && !f.ack() && closing && !cur.is_empty() {
            out.push(Vec::new());
            closing = false;
        }
        if f.fin() || f.rst() {
            closing = true;
        }
        out.last_mut().expect("non-empty").push(p);
    }
    out
}

fn build(cap: &Capture, pkts: &[&Packet], t0: u64) -> Flow {
    // The client is whoever sent a bare SYN; else the sender of the first packet.
    let client = pkts
        .iter()
        .find(|p| p.flags.syn() && !p.flags.ack())
        .or_else(|| pkts.first())
        .map(|p| p.src)
        .expect("a flow has packets");
    let dir_of = |p: &Packet| if p.src == client { 0 } else { 1 };
    let mut sides = [Side::default(), Side::default()];
    let mut saw_syn = false;
    // Handshake options and each side's ISN.
    let mut isn: [Option<SeqNumber>; 2] = [None, None];
    for p in pkts {
        let d = dir_of(p);
        let s = &mut sides[d];
        s.addr = Some(cap.endpoint(p.src));
        if p.flags.syn() {
            saw_syn = true;
            isn[d] = Some(p.seq);
            let o = cap.options_of(p).copied().unwrap_or_default();
            s.mss_option = o.mss;
            s.window_scale = o.window_scale;
            s.timestamps = o.timestamps.is_some();
            s.sack_permitted = o.sack_permitted;
            s.nak_permitted = o.nak_permitted;
            s.big_window = o.big_window_offer.is_some();
        }
    }
    if sides[1].addr.is_none() {
        sides[1].addr = pkts.first().map(|p| cap.endpoint(p.dst));
    }
    #[allow(clippy::needless_range_loop)]
    for d in 0..2 {
        if isn[d].is_none() {
            // No SYN: the lowest sequence number seen (or acknowledged) is the base.
            isn[d] = pkts
                .iter()
                .filter(|p| dir_of(p) == d)
                .map(|p| SeqNumber(p.seq.0.wrapping_sub(1)))
                .next()
                .or_else(|| {
                    pkts.iter()
                        .filter(|p| dir_of(p) != d && p.flags.ack())
                        .map(|p| SeqNumber(p.ack.0.wrapping_sub(1)))
                        .next()
                });
        }
    }
    // Window scaling applies only when both SYNs carried the option (RFC 7323 2.2).
    let scaling = sides[0].window_scale.is_some() && sides[1].window_scale.is_some();
    let mut seq_u = [
        Unwrap::new(isn[0].unwrap_or_default()),
        Unwrap::new(isn[1].unwrap_or_default()),
    ];
    let mut ack_u = seq_u;
    let mut high = [0u64; 2];
    let mut segs = Vec::with_capacity(pkts.len());
    // The latest packets each way, to spot the network's duplicates.
    let mut prev: [std::collections::VecDeque<&Packet>; 2] = Default::default();
    let counts_up = [0, 1].map(|d| ids_count_up(pkts.iter().filter(|p| dir_of(p) == d)));
    let mut newest_id: [Option<u16>; 2] = [None, None];
    for p in pkts {
        let d = dir_of(p);
        // Stacks that zero the identification of DF packets cannot be told apart.
        let duplicate = p.ip_id.is_some_and(|i| i != 0)
            && prev[d].iter().any(|q| {
                q.ip_id == p.ip_id
                    && q.header_hash == p.header_hash
                    && q.payload_len == p.payload_len
            });
        if prev[d].len() == 8 {
            prev[d].pop_front();
        }
        prev[d].push_back(p);
        let seq = seq_u[d].rel(p.seq);
        let ack = p.flags.ack().then(|| ack_u[1 - d].rel(p.ack));
        let mut win = u64::from(p.window);
        if !p.flags.syn() {
            if scaling {
                win <<= sides[d].window_scale.unwrap_or(0).min(14);
            }
            if let Some(up) = p.big_window_upper {
                win |= u64::from(up) << 16;
            }
        }
        let opts = cap.options_of(p);
        let sacks = opts
            .map(|o| o.sack_blocks.as_slice())
            .unwrap_or_default()
            .iter()
            .map(|&(a, b)| {
                let mut u = ack_u[1 - d];
                (u.rel(a), u.rel(b))
            })
            .collect();
        let nak = opts.and_then(|o| o.nak).map(|n| {
            let mut u = ack_u[1 - d];
            (u.rel(n.seq), n.count)
        });
        // Payload starts one past the SYN's sequence number.
        let data_seq = seq + u64::from(p.flags.syn());
        let len = p.payload_len as usize;
        let end = data_seq + len as u64;
        let older = match (p.ip_id, newest_id[d]) {
            (Some(i), Some(n)) => (i.wrapping_sub(n) as i16) < 0,
            _ => false,
        };
        if !older && !duplicate {
            newest_id[d] = p.ip_id.or(newest_id[d]);
        }
        let reordered = len > 0 && data_seq < high[d] && counts_up[d] && older && !duplicate;
        let retransmit = len > 0 && data_seq < high[d] && !duplicate && !reordered;
        if len > 0 && !duplicate {
            let s = &mut sides[d];
            s.bytes += len as u64;
            s.data_segments += 1;
            s.max_payload = s.max_payload.max(len);
            if !p.flags.syn() {
                let opts = usize::from(p.header_len).saturating_sub(20);
                s.data_option_bytes = Some(s.data_option_bytes.map_or(opts, |o| o.min(opts)));
            }
            s.retransmits += u64::from(retransmit);
        }
        high[d] = high[d].max(end);
        segs.push(Seg {
            t: (p.ts_ns.saturating_sub(t0)) as f64 * 1e-9,
            dir: d,
            seq: data_seq,
            len,
            flags: p.flags,
            ack,
            win,
            sacks,
            nak,
            header_bytes: usize::from(p.ip_header_len) + usize::from(p.header_len),
            retransmit,
            duplicate,
            reordered,
        });
    }
    Flow {
        sides,
        segs,
        saw_syn,
    }
}

/// Segments and flows written by hand, for the detectors' unit tests.
#[cfg(test)]
pub(crate) mod fixture {
    use super::{Dir, Flow, Seg, Side};
    use tinygram_proto::wire::Flags;

    /// An ACK-flagged segment `t_ms` into a flow: `dir`, first byte `seq`,
    /// `len` payload bytes, cumulative `ack`, a 65,535-byte window.
    pub fn seg(t_ms: f64, dir: Dir, seq: u64, len: usize, ack: u64) -> Seg {
        Seg {
            t: t_ms * 1e-3,
            dir,
            seq,
            len,
            flags: Flags::ACK,
            ack: Some(ack),
            win: 65_535,
            sacks: Vec::new(),
            nak: None,
            header_bytes: 40,
            retransmit: false,
            duplicate: false,
            reordered: false,
        }
    }

    /// A flow without handshake whose sides announced MSS `mss`.
    pub fn flow(mss: u16, segs: Vec<Seg>) -> Flow {
        let side = Side {
            mss_option: Some(mss),
            ..Side::default()
        };
        Flow {
            sides: [side.clone(), side],
            segs,
            saw_syn: false,
        }
    }
}
