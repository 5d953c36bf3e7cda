//! A capture's flows in memory bounded by their number, not by the
//! capture's size: a first pass keeps one compact summary per address pair
//! (about 110 bytes measured), the flows that matter are chosen from the summaries,
//! and a second pass keeps only their segments for the full analysis. The
//! rest stay one-line summaries.

use crate::capture::{scan, CaptureError, ReadStats, Segment, Sink};
use crate::flow::{flows, Flow};
use crate::Capture;
use indexmap::map::Entry;
use indexmap::IndexMap;
use serde::Serialize;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::Path;

/// Most address pairs a survey tracks. Each costs about 110 bytes (its
/// summary and key, 96, and the hash index), so the table stays under
/// 800 MB (7 million stay below the index's growth to 2^24 slots at
/// 7.34 million); a capture with more is refused with a message rather
/// than read into swap.
pub const MAX_TRACKED: usize = 7_000_000;
/// Flows `diagnose` analyses in full unless told otherwise (`--max-flows`).
pub const DEFAULT_MAX_FLOWS: usize = 10_000;
/// The largest `--max-flows`: analysed flows keep every segment and a full
/// report, so their number is bounded too.
pub const MAX_MAX_FLOWS: usize = 1_000_000;
/// Most segments the flows analysed hold in all: each costs about 190
/// bytes at the peak (measured), so under 1 GB; a flow that does not fit
/// is summarised, and the report says why.
pub const MAX_SEGMENTS: u64 = 5_000_000;

/// An address and port, compact (a `SocketAddr` takes 32 bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct Endpoint {
    ip: [u8; 16],
    port: u16,
    v6: bool,
}

impl From<SocketAddr> for Endpoint {
    fn from(a: SocketAddr) -> Self {
        let (ip, v6) = match a.ip() {
            IpAddr::V4(v4) => {
                let mut ip = [0; 16];
                ip[..4].copy_from_slice(&v4.octets());
                (ip, false)
            }
            IpAddr::V6(v6) => (v6.octets(), true),
        };
        Endpoint {
            ip,
            port: a.port(),
            v6,
        }
    }
}

impl Endpoint {
    fn addr(&self) -> SocketAddr {
        let ip = if self.v6 {
            IpAddr::V6(Ipv6Addr::from(self.ip))
        } else {
            IpAddr::V4(Ipv4Addr::new(
                self.ip[0], self.ip[1], self.ip[2], self.ip[3],
            ))
        };
        SocketAddr::new(ip, self.port)
    }
}

/// The two endpoints of an address pair, the lower first.
type PairKey = [Endpoint; 2];

fn key(src: SocketAddr, dst: SocketAddr) -> (PairKey, usize) {
    let (a, b) = (Endpoint::from(src), Endpoint::from(dst));
    if a <= b {
        ([a, b], 0)
    } else {
        ([b, a], 1)
    }
}

/// `Pair::bits`: the client is the key's second endpoint.
const CLIENT_IS_B: u8 = 1;
/// A bare SYN was seen.
const SAW_SYN: u8 = 2;
const SAW_SYN_ACK: u8 = 4;
const SAW_FIN: u8 = 8;
const SAW_RST: u8 = 16;
/// A FIN or RST was seen since the connection began: a bare SYN starts the next.
const CLOSING: u8 = 32;
/// Chosen for the full analysis.
const SELECTED: u8 = 64;
/// Not chosen: its segments did not fit in what the flows chosen may hold.
const TOO_BIG: u8 = 128;

/// One address pair's summary.
#[derive(Clone, Copy, Debug, Default)]
struct Pair {
    first_ns: u64,
    last_ns: u64,
    /// Payload bytes from the key's first and second endpoint.
    bytes: [u64; 2],
    segments: u32,
    /// Connections on the pair: a bare SYN after a FIN or RST starts one,
    /// as [`flows`] splits them.
    connections: u32,
    bits: u8,
}

impl Pair {
    fn has(&self, bit: u8) -> bool {
        self.bits & bit != 0
    }

    /// What the pair's packets say about its connection(s).
    fn state(&self) -> &'static str {
        if self.has(SAW_RST) {
            "reset"
        } else if self.has(SAW_FIN) {
            "closed"
        } else if self.has(SAW_SYN) && !self.has(SAW_SYN_ACK) {
            "syn_unanswered"
        } else if self.has(SAW_SYN) {
            "open"
        } else {
            "no_handshake"
        }
    }

    /// Ranks pairs for the full analysis: payload bytes, then segments,
    /// then duration (the flows that carried and waited most).
    fn weight(&self) -> (u64, u32, u64) {
        (
            self.bytes[0] + self.bytes[1],
            self.segments,
            self.last_ns - self.first_ns,
        )
    }
}

/// Every address pair of a capture, summarised, in order of first appearance.
#[derive(Debug, Default)]
pub struct FlowTable {
    pairs: IndexMap<PairKey, Pair>,
    /// The survey's counters (frames, segments, ...).
    pub stats: ReadStats,
    limit: usize,
    /// The segment budget of the last selection by size.
    max_segments: u64,
}

impl Sink for FlowTable {
    fn stats(&mut self) -> &mut ReadStats {
        &mut self.stats
    }

    fn segment(&mut self, s: &Segment) -> Result<(), CaptureError> {
        let (k, from) = key(s.src, s.dst);
        let full = self.pairs.len() >= self.limit;
        let p = match self.pairs.entry(k) {
            Entry::Occupied(o) => o.into_mut(),
            Entry::Vacant(_) if full => {
                return Err(CaptureError::TooManyFlows {
                    limit: self.limit,
                    frames: self.stats.frames,
                })
            }
            Entry::Vacant(v) => v.insert(Pair {
                first_ns: s.ts_ns,
                last_ns: s.ts_ns,
                connections: 1,
                bits: if from == 1 { CLIENT_IS_B } else { 0 },
                ..Pair::default()
            }),
        };
        p.first_ns = p.first_ns.min(s.ts_ns);
        p.last_ns = p.last_ns.max(s.ts_ns);
        p.segments = p.segments.saturating_add(1);
        p.bytes[from] += u64::from(s.payload_len);
        let f = s.flags;
        if f.syn() && !f.ack() {
            // The client is whoever sent a bare SYN, as `flows` decides.
            if !p.has(SAW_SYN) {
                p.bits = (p.bits & !CLIENT_IS_B) | if from == 1 { CLIENT_IS_B } else { 0 };
            }
            p.bits |= SAW_SYN;
            if p.has(CLOSING) {
                p.connections = p.connections.saturating_add(1);
                p.bits &= !CLOSING;
            }
        }
        if f.syn() && f.ack() {
            p.bits |= SAW_SYN_ACK;
        }
        if f.fin() {
            p.bits |= SAW_FIN | CLOSING;
        }
        if f.rst() {
            p.bits |= SAW_RST | CLOSING;
        }
        Ok(())
    }
}

/// The flows chosen for the full analysis, with their numbers.
#[derive(Debug)]
pub struct Selected {
    /// The second pass's counters (the whole capture's, like the survey's).
    pub stats: ReadStats,
    /// (flow number from 1, as `diagnose` lists flows; the flow), in capture order.
    pub flows: Vec<(usize, Flow)>,
}

/// A flow not analysed: one line of what its packets show.
#[derive(Clone, Debug, Serialize)]
pub struct FlowSummary {
    /// Its number, as `diagnose` lists flows.
    pub flow: usize,
    /// Connections on the address pair (numbered `flow` onwards), when more than one.
    #[serde(skip_serializing_if = "is_one")]
    pub connections: u32,
    pub client: SocketAddr,
    pub server: SocketAddr,
    pub start_s: f64,
    pub duration_s: f64,
    pub segments: u32,
    pub client_bytes: u64,
    pub server_bytes: u64,
    /// "syn_unanswered", "open", "closed", "reset" or "no_handshake".
    pub state: &'static str,
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

/// What the flows past the limit add up to.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Summarised {
    /// The limit of flows analysed in full (`--max-flows`).
    pub max_flows: usize,
    /// Flows summarised, not analysed.
    pub flows: u64,
    pub segments: u64,
    pub payload_bytes: u64,
    /// Of them, flows whose SYN went unanswered.
    pub syn_unanswered: u64,
    /// Of them, flows left out because their segments did not fit in the
    /// [`MAX_SEGMENTS`] the flows analysed may hold.
    pub too_big: u64,
    /// That budget.
    pub max_segments: u64,
}

impl FlowTable {
    /// Reads a capture file's flow summaries (the first pass).
    pub fn survey(path: &Path, progress: &mut dyn FnMut(u64)) -> Result<Self, CaptureError> {
        Self::survey_with(path, MAX_TRACKED, progress)
    }

    /// [`FlowTable::survey`] with a bound of `limit` address pairs.
    pub fn survey_with(
        path: &Path,
        limit: usize,
        progress: &mut dyn FnMut(u64),
    ) -> Result<Self, CaptureError> {
        let mut t = FlowTable {
            limit,
            ..FlowTable::default()
        };
        scan(open(path)?, &path.display().to_string(), &mut t, progress)?;
        Ok(t)
    }

    /// Flows in the capture (connections, as [`flows`] splits them).
    pub fn flow_count(&self) -> u64 {
        self.pairs.values().map(|p| u64::from(p.connections)).sum()
    }

    /// Address pairs in the capture.
    pub fn pairs(&self) -> usize {
        self.pairs.len()
    }

    /// Chooses up to `max_flows` flows for the full analysis, those that
    /// carried most payload (then most segments, then the longest), whole
    /// address pairs at a time, holding at most [`MAX_SEGMENTS`] segments
    /// in all; every flow when they fit.
    pub fn select_busiest(&mut self, max_flows: usize) {
        self.select_busiest_within(max_flows, MAX_SEGMENTS);
    }

    /// [`FlowTable::select_busiest`] with a budget of `max_segments`: a
    /// pair among the busiest `max_flows` whose segments do not fit in what
    /// is left is summarised and counted as too big ([`Summarised::too_big`]).
    pub fn select_busiest_within(&mut self, max_flows: usize, max_segments: u64) {
        self.max_segments = max_segments;
        let max = max_flows as u64;
        let segments: u64 = self.pairs.values().map(|p| u64::from(p.segments)).sum();
        if self.flow_count() <= max && segments <= max_segments {
            self.pairs.values_mut().for_each(|p| p.bits |= SELECTED);
            return;
        }
        let mut order: Vec<u32> = (0..self.pairs.len() as u32).collect();
        let w = |i: u32| self.pairs[i as usize].weight();
        order.sort_unstable_by(|&a, &b| w(b).cmp(&w(a)).then(a.cmp(&b)));
        let (mut taken, mut held) = (0, 0);
        for i in order {
            let p = &mut self.pairs[i as usize];
            let (c, n) = (u64::from(p.connections), u64::from(p.segments));
            if taken + c > max {
                continue;
            }
            // A flow too big for what is left keeps its place among the
            // busiest `max_flows`, summarised.
            taken += c;
            if held + n > max_segments {
                p.bits |= TOO_BIG;
            } else {
                held += n;
                p.bits |= SELECTED;
            }
            if taken == max {
                break;
            }
        }
    }

    /// Chooses the address pair of flow `n` (numbered from 1); false if
    /// the capture has no such flow.
    pub fn select_number(&mut self, n: usize) -> bool {
        let mut next = 1usize;
        for p in self.pairs.values_mut() {
            let c = p.connections as usize;
            if (next..next + c).contains(&n) {
                p.bits |= SELECTED;
                return true;
            }
            next += c;
        }
        false
    }

    /// Whether every flow is chosen.
    pub fn all_selected(&self) -> bool {
        self.pairs.values().all(|p| p.has(SELECTED))
    }

    /// Reads the chosen flows' segments from the file the survey read (the
    /// second pass) and groups them into flows, numbered as [`flows`]
    /// numbers a whole capture's.
    pub fn read_selected(
        &mut self,
        path: &Path,
        progress: &mut dyn FnMut(u64),
    ) -> Result<Selected, CaptureError> {
        let mut c = Collect {
            table: self,
            cap: Capture::default(),
        };
        scan(open(path)?, &path.display().to_string(), &mut c, progress)?;
        let mut cap = c.cap;
        cap.finish();
        let found = flows(&cap);
        Ok(Selected {
            flows: self.number(found),
            stats: cap.stats,
        })
    }

    /// Numbers the chosen pairs' flows: every pair before them counts its
    /// connections. A chosen pair's count becomes the one [`flows`] found
    /// (the survey counts in file order, `flows` in time order).
    fn number(&mut self, found: Vec<Flow>) -> Vec<(usize, Flow)> {
        let mut out = Vec::with_capacity(found.len());
        let mut found = found.into_iter().peekable();
        let mut next = 1usize;
        for (k, p) in self.pairs.iter_mut() {
            if !p.has(SELECTED) {
                next += p.connections as usize;
                continue;
            }
            let mut n = 0u32;
            while let Some(f) = found.next_if(|f| key(f.addr(0), f.addr(1)).0 == *k) {
                out.push((next, f));
                next += 1;
                n += 1;
            }
            p.connections = n;
        }
        out
    }

    /// The flows not chosen, one summary each, in capture order.
    pub fn summaries(&self) -> impl Iterator<Item = FlowSummary> + '_ {
        let t0 = self.stats.start_ns;
        let mut next = 1usize;
        self.pairs.iter().filter_map(move |(k, p)| {
            let flow = next;
            next += p.connections as usize;
            if p.has(SELECTED) {
                return None;
            }
            let c = usize::from(p.has(CLIENT_IS_B));
            Some(FlowSummary {
                flow,
                connections: p.connections,
                client: k[c].addr(),
                server: k[1 - c].addr(),
                start_s: p.first_ns.saturating_sub(t0) as f64 * 1e-9,
                duration_s: (p.last_ns - p.first_ns) as f64 * 1e-9,
                segments: p.segments,
                client_bytes: p.bytes[c],
                server_bytes: p.bytes[1 - c],
                state: p.state(),
            })
        })
    }

    /// What the flows not chosen add up to; `None` when every flow is chosen.
    pub fn summarised(&self, max_flows: usize) -> Option<Summarised> {
        let mut s = Summarised {
            max_flows,
            max_segments: self.max_segments,
            ..Summarised::default()
        };
        for p in self.pairs.values().filter(|p| !p.has(SELECTED)) {
            s.flows += u64::from(p.connections);
            s.segments += u64::from(p.segments);
            s.payload_bytes += p.bytes[0] + p.bytes[1];
            s.syn_unanswered += u64::from(p.state() == "syn_unanswered");
            s.too_big += u64::from(p.connections) * u64::from(p.has(TOO_BIG));
        }
        (s.flows > 0).then_some(s)
    }
}

/// The second pass's sink: keeps the segments of the chosen pairs.
struct Collect<'t> {
    table: &'t FlowTable,
    cap: Capture,
}

impl Sink for Collect<'_> {
    fn stats(&mut self) -> &mut ReadStats {
        &mut self.cap.stats
    }

    fn segment(&mut self, s: &Segment) -> Result<(), CaptureError> {
        let (k, _) = key(s.src, s.dst);
        if self.table.pairs.get(&k).is_some_and(|p| p.has(SELECTED)) {
            self.cap.push(s);
        }
        Ok(())
    }
}

/// Opens a capture file for one pass; a pipe cannot be read twice.
fn open(path: &Path) -> Result<std::fs::File, CaptureError> {
    let io = |err| CaptureError::Io {
        path: path.display().to_string(),
        err,
    };
    let f = std::fs::File::open(path).map_err(io)?;
    if !f.metadata().map_err(io)?.is_file() {
        return Err(io(std::io::Error::other(
            "not a regular file: the capture is read twice (its flows, then the segments of those analysed), so give a file, not a pipe",
        )));
    }
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The per-flow cost `MAX_TRACKED` is sized by: the key and summary
    /// (96 bytes with the entry's hash) and 9 bytes of index per slot.
    #[test]
    fn a_flow_summary_stays_compact() {
        assert_eq!(std::mem::size_of::<PairKey>(), 40);
        assert!(std::mem::size_of::<Pair>() <= 48);
    }

    #[test]
    fn endpoints_survive_the_compact_form() {
        for a in [
            "10.1.2.3:80",
            "[2001:db8::1]:443",
            "0.0.0.0:0",
            "[::ffff:10.0.0.1]:7",
        ] {
            let a: SocketAddr = a.parse().unwrap();
            assert_eq!(Endpoint::from(a).addr(), a);
        }
        // An IPv4 address and its IPv6-mapped form are different endpoints.
        let v4: SocketAddr = "10.0.0.1:7".parse().unwrap();
        let mapped: SocketAddr = "[::ffff:10.0.0.1]:7".parse().unwrap();
        assert_ne!(Endpoint::from(v4), Endpoint::from(mapped));
    }
}
