//! Queue disciplines of the shared bottleneck link: drop-tail, CoDel
//! (RFC 8289) and FQ-CoDel (RFC 8290), each optionally marking ECN-capable
//! packets Congestion Experienced instead of dropping them (RFC 3168 5).
//!
//! Unlike the access links' [`crate::link::Link`], which answers every frame's
//! fate when it is offered, a qdisc holds packets: the world enqueues a packet
//! when it reaches the bottleneck and dequeues the next one each time the
//! serializer goes idle, so CoDel measures real sojourn times and FQ-CoDel can
//! reorder flows.

use crate::metrics::LatencyHistogram;
use serde::Serialize;
use std::collections::VecDeque;
use std::fmt;
use std::time::Duration;
use tinygram_proto::Instant;

/// The two ECN bits of the IPv4 TOS byte (RFC 3168 5).
pub mod ecn {
    /// Not ECN-Capable Transport.
    pub const NOT_ECT: u8 = 0b00;
    /// ECN-Capable Transport, ECT(1).
    pub const ECT1: u8 = 0b01;
    /// ECN-Capable Transport, ECT(0).
    pub const ECT0: u8 = 0b10;
    /// Congestion Experienced.
    pub const CE: u8 = 0b11;

    /// The ECN field of an IPv4 TOS byte.
    pub fn of_tos(tos: u8) -> u8 {
        tos & 0b11
    }

    /// The TOS byte with its ECN field set to `codepoint`.
    pub fn with_tos(tos: u8, codepoint: u8) -> u8 {
        (tos & !0b11) | (codepoint & 0b11)
    }

    /// Whether a packet with this ECN field may be marked instead of dropped.
    pub fn capable(codepoint: u8) -> bool {
        matches!(codepoint, ECT0 | ECT1)
    }
}

/// Which discipline a queue runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum QdiscKind {
    /// FIFO; a packet that does not fit in the byte limit is dropped.
    #[default]
    DropTail,
    /// Controlled Delay (RFC 8289) on one FIFO.
    Codel,
    /// Flow-queue CoDel (RFC 8290): per-flow queues served by deficit round robin, CoDel on each.
    FqCodel,
}

impl QdiscKind {
    /// Names accepted in scenario files.
    pub const NAMES: [&'static str; 3] = ["drop-tail", "codel", "fq-codel"];

    /// The name used in scenario files.
    pub fn name(self) -> &'static str {
        match self {
            QdiscKind::DropTail => "drop-tail",
            QdiscKind::Codel => "codel",
            QdiscKind::FqCodel => "fq-codel",
        }
    }
}

impl fmt::Display for QdiscKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for QdiscKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "drop-tail" | "droptail" | "fifo" => Ok(QdiscKind::DropTail),
            "codel" => Ok(QdiscKind::Codel),
            "fq-codel" | "fq_codel" => Ok(QdiscKind::FqCodel),
            _ => Err(format!(
                "unknown queue discipline {s:?}{} (expected \"drop-tail\", \"codel\" or \"fq-codel\")",
                tinygram_proto::suggest::did_you_mean(s, QdiscKind::NAMES)
            )),
        }
    }
}

/// Settings of one queue.
#[derive(Clone, Debug, PartialEq)]
pub struct QdiscConfig {
    pub kind: QdiscKind,
    /// Wire bytes the queue may hold (the packet being serialized excluded); 0 = unlimited.
    pub limit_bytes: usize,
    /// CoDel's acceptable standing queue delay (RFC 8289 4: 5 ms).
    pub target: Duration,
    /// CoDel's sliding window, about a worst-case RTT (RFC 8289 4: 100 ms).
    pub interval: Duration,
    /// Mark ECN-capable packets CE instead of dropping them (RFC 3168 5, RFC 8289 5).
    pub ecn: bool,
    /// FQ-CoDel: bytes a queue may send per round (RFC 8290 4: one MTU, 1514).
    pub quantum: usize,
    /// FQ-CoDel: number of flow queues packets are hashed into (RFC 8290 4: 1024).
    pub flows: usize,
    /// The largest packet (wire bytes): CoDel never drops when no more than this is queued.
    pub mtu: usize,
}

impl Default for QdiscConfig {
    fn default() -> Self {
        QdiscConfig {
            kind: QdiscKind::DropTail,
            limit_bytes: 256_000,
            target: Duration::from_millis(5),
            interval: Duration::from_millis(100),
            ecn: false,
            quantum: 1514,
            flows: 1024,
            mtu: 1538,
        }
    }
}

/// A packet as a queue sees it: the world's packet id plus what the queue reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueuedPacket {
    /// The world's handle for the packet.
    pub id: u32,
    /// Wire bytes it occupies.
    pub wire: usize,
    /// Which flow it belongs to (any stable number per 5-tuple); FQ-CoDel hashes it.
    pub flow: u64,
    /// The IPv4 ECN field (see [`ecn`]); a marking queue sets it to CE.
    pub ecn: u8,
    /// When it was enqueued (set by the queue).
    pub enqueued: Instant,
}

/// Counters of one queue.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct QdiscStats {
    /// Packets offered.
    pub enqueued: u64,
    /// Packets handed to the serializer.
    pub dequeued: u64,
    /// Packets dropped because the byte limit was reached.
    pub dropped_overflow: u64,
    /// Packets CoDel dropped to bring the standing delay down.
    pub dropped_aqm: u64,
    /// Packets marked CE instead of dropped.
    pub marked: u64,
    /// Largest number of bytes held.
    pub max_bytes: usize,
    /// Queueing delay of dequeued packets.
    #[serde(skip)]
    pub sojourn: LatencyHistogram,
}

/// CoDel's state for one queue (RFC 8289 5).
#[derive(Clone, Debug, Default)]
struct Codel {
    /// When the sojourn time first stayed above target (plus an interval); `None` when below.
    first_above_time: Option<Instant>,
    drop_next: Instant,
    count: u32,
    lastcount: u32,
    dropping: bool,
}

/// One FIFO with its CoDel state and, under FQ-CoDel, its DRR deficit.
#[derive(Clone, Debug, Default)]
struct SubQueue {
    pkts: VecDeque<QueuedPacket>,
    bytes: usize,
    codel: Codel,
    deficit: i64,
    /// Listed in new_flows or old_flows.
    active: bool,
}

impl SubQueue {
    fn pop(&mut self) -> Option<QueuedPacket> {
        let p = self.pkts.pop_front()?;
        self.bytes -= p.wire;
        Some(p)
    }
}

/// A queue discipline instance.
#[derive(Clone, Debug)]
pub struct Qdisc {
    cfg: QdiscConfig,
    queues: Vec<SubQueue>,
    new_flows: VecDeque<usize>,
    old_flows: VecDeque<usize>,
    bytes: usize,
    packets: usize,
    stats: QdiscStats,
}

impl Qdisc {
    /// An empty queue.
    pub fn new(cfg: QdiscConfig) -> Qdisc {
        let n = if cfg.kind == QdiscKind::FqCodel {
            cfg.flows.max(1)
        } else {
            1
        };
        Qdisc {
            queues: vec![SubQueue::default(); n],
            cfg,
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            bytes: 0,
            packets: 0,
            stats: QdiscStats::default(),
        }
    }

    /// The settings.
    pub fn config(&self) -> &QdiscConfig {
        &self.cfg
    }

    /// The counters.
    pub fn stats(&self) -> &QdiscStats {
        &self.stats
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Packets held.
    pub fn len(&self) -> usize {
        self.packets
    }

    /// True when nothing is held.
    pub fn is_empty(&self) -> bool {
        self.packets == 0
    }

    fn bucket(&self, flow: u64) -> usize {
        if self.queues.len() == 1 {
            return 0;
        }
        // splitmix64 finalizer: a fixed hash, so runs are reproducible.
        let mut z = flow.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        (z % self.queues.len() as u64) as usize
    }

    /// Offers `pkt` at `now`; packets dropped to make room go to `dropped`
    /// (the new packet itself under drop-tail and CoDel, the head of the
    /// fattest queue under FQ-CoDel, RFC 8290 4.1).
    pub fn enqueue(
        &mut self,
        now: Instant,
        mut pkt: QueuedPacket,
        dropped: &mut Vec<QueuedPacket>,
    ) {
        self.stats.enqueued += 1;
        pkt.enqueued = now;
        let limit = self.cfg.limit_bytes;
        if self.cfg.kind != QdiscKind::FqCodel && limit > 0 && self.bytes + pkt.wire > limit {
            self.stats.dropped_overflow += 1;
            dropped.push(pkt);
            return;
        }
        let b = self.bucket(pkt.flow);
        let q = &mut self.queues[b];
        q.pkts.push_back(pkt);
        q.bytes += pkt.wire;
        self.bytes += pkt.wire;
        self.packets += 1;
        if self.cfg.kind == QdiscKind::FqCodel && !q.active {
            q.active = true;
            q.deficit = self.cfg.quantum as i64;
            self.new_flows.push_back(b);
        }
        while self.cfg.kind == QdiscKind::FqCodel && limit > 0 && self.bytes > limit {
            let fattest = (0..self.queues.len())
                .max_by_key(|&i| (self.queues[i].bytes, std::cmp::Reverse(i)))
                .unwrap_or(0);
            let Some(p) = self.queues[fattest].pop() else {
                break;
            };
            self.bytes -= p.wire;
            self.packets -= 1;
            self.stats.dropped_overflow += 1;
            dropped.push(p);
        }
        self.stats.max_bytes = self.stats.max_bytes.max(self.bytes);
    }

    /// The next packet to serialize at `now`, if any; packets CoDel drops on
    /// the way go to `dropped`. A returned packet may carry a CE mark.
    pub fn dequeue(
        &mut self,
        now: Instant,
        dropped: &mut Vec<QueuedPacket>,
    ) -> Option<QueuedPacket> {
        let p = match self.cfg.kind {
            QdiscKind::DropTail => {
                let p = self.queues[0].pop();
                if let Some(p) = &p {
                    self.bytes -= p.wire;
                    self.packets -= 1;
                }
                p
            }
            QdiscKind::Codel => self.codel_dequeue(0, now, dropped),
            QdiscKind::FqCodel => self.fq_dequeue(now, dropped),
        }?;
        self.stats.dequeued += 1;
        self.stats.sojourn.record(now - p.enqueued);
        Some(p)
    }

    /// RFC 8290 4.2: new flows first, then old ones, each spending its quantum.
    fn fq_dequeue(
        &mut self,
        now: Instant,
        dropped: &mut Vec<QueuedPacket>,
    ) -> Option<QueuedPacket> {
        loop {
            let (b, from_new) = match self.new_flows.front() {
                Some(&b) => (b, true),
                None => (*self.old_flows.front()?, false),
            };
            if self.queues[b].deficit <= 0 {
                self.queues[b].deficit += self.cfg.quantum as i64;
                if from_new {
                    self.new_flows.pop_front();
                } else {
                    self.old_flows.pop_front();
                }
                self.old_flows.push_back(b);
                continue;
            }
            match self.codel_dequeue(b, now, dropped) {
                Some(p) => {
                    self.queues[b].deficit -= p.wire as i64;
                    return Some(p);
                }
                None => {
                    if from_new {
                        self.new_flows.pop_front();
                        if !self.old_flows.is_empty() {
                            // An emptied new flow goes to the old list, so a flow
                            // cannot stay "new" by sending one packet at a time.
                            self.old_flows.push_back(b);
                            continue;
                        }
                    } else {
                        self.old_flows.pop_front();
                    }
                    self.queues[b].active = false;
                }
            }
        }
    }

    /// RFC 8289 5 `dodequeue`: the head packet and whether CoDel may drop it.
    fn do_dequeue(&mut self, b: usize, now: Instant) -> (Option<QueuedPacket>, bool) {
        let (target, interval, mtu) = (self.cfg.target, self.cfg.interval, self.cfg.mtu);
        let q = &mut self.queues[b];
        let Some(p) = q.pop() else {
            q.codel.first_above_time = None;
            return (None, false);
        };
        self.bytes -= p.wire;
        self.packets -= 1;
        let sojourn = now - p.enqueued;
        let mut ok_to_drop = false;
        if sojourn < target || q.bytes <= mtu {
            q.codel.first_above_time = None;
        } else {
            match q.codel.first_above_time {
                None => q.codel.first_above_time = Some(now + interval),
                Some(t) if now >= t => ok_to_drop = true,
                Some(_) => {}
            }
        }
        (Some(p), ok_to_drop)
    }

    /// RFC 8289 5 control law: the next drop `interval / sqrt(count)` after `t`.
    fn control_law(&self, t: Instant, count: u32) -> Instant {
        let secs = self.cfg.interval.as_secs_f64() / f64::from(count.max(1)).sqrt();
        t + Duration::from_nanos((secs * 1e9).round() as u64)
    }

    /// Drops `p`, or marks it CE and keeps it when ECN allows (RFC 8289 5, RFC 3168 5).
    /// Returns the packet if it was marked.
    fn congestion_signal(
        &mut self,
        mut p: QueuedPacket,
        dropped: &mut Vec<QueuedPacket>,
    ) -> Option<QueuedPacket> {
        if self.cfg.ecn && ecn::capable(p.ecn) {
            p.ecn = ecn::CE;
            self.stats.marked += 1;
            Some(p)
        } else {
            self.stats.dropped_aqm += 1;
            dropped.push(p);
            None
        }
    }

    /// RFC 8289 5 `dequeue` on sub-queue `b`.
    fn codel_dequeue(
        &mut self,
        b: usize,
        now: Instant,
        dropped: &mut Vec<QueuedPacket>,
    ) -> Option<QueuedPacket> {
        let (mut p, mut ok_to_drop) = self.do_dequeue(b, now);
        let Some(mut pkt) = p else {
            self.queues[b].codel.dropping = false;
            return None;
        };
        if self.queues[b].codel.dropping {
            if !ok_to_drop {
                self.queues[b].codel.dropping = false;
            }
            while self.queues[b].codel.dropping && now >= self.queues[b].codel.drop_next {
                self.queues[b].codel.count += 1;
                let next =
                    self.control_law(self.queues[b].codel.drop_next, self.queues[b].codel.count);
                if let Some(marked) = self.congestion_signal(pkt, dropped) {
                    // A marked packet is sent: schedule the next signal and stop.
                    self.queues[b].codel.drop_next = next;
                    return Some(marked);
                }
                (p, ok_to_drop) = self.do_dequeue(b, now);
                match p {
                    None => {
                        self.queues[b].codel.dropping = false;
                        return None;
                    }
                    Some(np) => pkt = np,
                }
                if !ok_to_drop {
                    self.queues[b].codel.dropping = false;
                } else {
                    self.queues[b].codel.drop_next = next;
                }
            }
            Some(pkt)
        } else if ok_to_drop {
            let c = &self.queues[b].codel;
            let delta = c.count.saturating_sub(c.lastcount);
            // RFC 8289 5: resume near the last drop rate if dropping stopped only recently.
            let recent = now.saturating_duration_since(c.drop_next) < self.cfg.interval * 16;
            let count = if delta > 1 && recent { delta } else { 1 };
            let drop_next = self.control_law(now, count);
            {
                let c = &mut self.queues[b].codel;
                c.dropping = true;
                c.count = count;
                c.lastcount = count;
                c.drop_next = drop_next;
            }
            if let Some(marked) = self.congestion_signal(pkt, dropped) {
                return Some(marked);
            }
            self.do_dequeue(b, now).0
        } else {
            Some(pkt)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(id: u32, wire: usize, flow: u64, ecn: u8) -> QueuedPacket {
        QueuedPacket {
            id,
            wire,
            flow,
            ecn,
            enqueued: Instant::ZERO,
        }
    }

    fn cfg(kind: QdiscKind) -> QdiscConfig {
        QdiscConfig {
            kind,
            ..QdiscConfig::default()
        }
    }

    #[test]
    fn ecn_bits_of_the_tos_byte() {
        assert_eq!(ecn::of_tos(0b1011_1010), ecn::ECT0);
        assert_eq!(ecn::with_tos(0b1011_1010, ecn::CE), 0b1011_1011);
        assert!(ecn::capable(ecn::ECT0) && ecn::capable(ecn::ECT1));
        assert!(!ecn::capable(ecn::NOT_ECT) && !ecn::capable(ecn::CE));
    }

    #[test]
    fn drop_tail_drops_what_does_not_fit() {
        let mut q = Qdisc::new(QdiscConfig {
            limit_bytes: 3000,
            ..cfg(QdiscKind::DropTail)
        });
        let mut dropped = Vec::new();
        for i in 0..4 {
            q.enqueue(Instant::ZERO, pkt(i, 1000, 0, 0), &mut dropped);
        }
        assert_eq!(dropped.iter().map(|p| p.id).collect::<Vec<_>>(), [3]);
        assert_eq!((q.len(), q.bytes()), (3, 3000));
        let order: Vec<u32> = std::iter::from_fn(|| q.dequeue(Instant::ZERO, &mut dropped))
            .map(|p| p.id)
            .collect();
        assert_eq!(order, [0, 1, 2]);
        assert_eq!(q.stats().dropped_overflow, 1);
    }

    /// Feeds a queue faster than it drains (a standing queue) and returns the
    /// packets CoDel let through and dropped, with the queue itself.
    fn standing_queue(ecn: u8, mark: bool) -> (Qdisc, Vec<QueuedPacket>, Vec<QueuedPacket>) {
        let mut q = Qdisc::new(QdiscConfig {
            limit_bytes: 0,
            ecn: mark,
            ..cfg(QdiscKind::Codel)
        });
        let (mut sent, mut dropped) = (Vec::new(), Vec::new());
        // 1500-byte packets every 1 ms, served every 1.2 ms: the queue grows for 2 s.
        let mut id = 0;
        let mut next_in = Instant::ZERO;
        let mut next_out = Instant::ZERO;
        let end = Instant::from_millis(2000);
        while next_in < end || next_out < end {
            if next_in <= next_out {
                q.enqueue(next_in, pkt(id, 1500, 1, ecn), &mut dropped);
                id += 1;
                next_in += Duration::from_millis(1);
            } else {
                if let Some(p) = q.dequeue(next_out, &mut dropped) {
                    sent.push(p);
                }
                next_out += Duration::from_micros(1200);
            }
        }
        (q, sent, dropped)
    }

    #[test]
    fn codel_drops_once_the_delay_stays_above_target_for_an_interval() {
        let (q, sent, dropped) = standing_queue(ecn::NOT_ECT, false);
        assert!(!dropped.is_empty(), "a standing queue must be dropped from");
        // No drop before the sojourn time first exceeded target plus one interval:
        // at +0.2 ms per packet, 5 ms is reached after 25 packets (~30 ms).
        let first = dropped.iter().map(|p| p.id).min().unwrap();
        assert!(first >= 100, "first drop was packet {first}");
        assert_eq!(q.stats().dropped_aqm, dropped.len() as u64);
        assert_eq!(q.stats().marked, 0);
        // An unresponsive source: CoDel answers with ever closer drops
        // (interval / sqrt(count), RFC 8289 5), so the gaps shrink...
        let ids: Vec<u32> = dropped.iter().map(|p| p.id).collect();
        let (first_gap, last_gap) = (ids[1] - ids[0], ids[ids.len() - 1] - ids[ids.len() - 2]);
        assert!(last_gap < first_gap, "gaps {first_gap} then {last_gap}");
        // ...and the delay stays under the unmanaged FIFO's 2 s x (0.2/1.2) = 333 ms.
        let delay = q.stats().sojourn.percentiles();
        assert!(delay.max < 300.0, "max sojourn {} ms", delay.max);
        assert!(sent.iter().all(|p| p.ecn == ecn::NOT_ECT));
    }

    #[test]
    fn codel_marks_ect_packets_instead_of_dropping_them() {
        for ect in [ecn::ECT0, ecn::ECT1] {
            let (q, sent, dropped) = standing_queue(ect, true);
            assert!(dropped.is_empty(), "ECT packets are marked, not dropped");
            let marked = sent.iter().filter(|p| p.ecn == ecn::CE).count();
            assert!(marked > 0);
            assert_eq!(q.stats().marked, marked as u64);
            assert_eq!(q.stats().dropped_aqm, 0);
        }
        // Not-ECT packets are still dropped on a marking queue.
        let (q, sent, dropped) = standing_queue(ecn::NOT_ECT, true);
        assert!(!dropped.is_empty());
        assert!(sent.iter().all(|p| p.ecn == ecn::NOT_ECT));
        assert_eq!(q.stats().marked, 0);
    }

    #[test]
    fn fq_codel_serves_a_sparse_flow_before_a_backlogged_one() {
        let mut q = Qdisc::new(QdiscConfig {
            limit_bytes: 0,
            ..cfg(QdiscKind::FqCodel)
        });
        let mut dropped = Vec::new();
        for i in 0..100 {
            q.enqueue(Instant::ZERO, pkt(i, 1500, 7, 0), &mut dropped);
        }
        let _ = q.dequeue(Instant::ZERO, &mut dropped);
        // A new flow's first packet goes ahead of the 99 queued bulk packets.
        q.enqueue(Instant::ZERO, pkt(1000, 100, 8, 0), &mut dropped);
        let next: Vec<u32> = (0..2)
            .filter_map(|_| q.dequeue(Instant::ZERO, &mut dropped))
            .map(|p| p.id)
            .collect();
        assert!(next.contains(&1000), "{next:?}");
        assert_eq!(q.len(), 98);
    }

    #[test]
    fn fq_codel_overflow_drops_from_the_fattest_flow() {
        let mut q = Qdisc::new(QdiscConfig {
            limit_bytes: 10_000,
            ..cfg(QdiscKind::FqCodel)
        });
        let mut dropped = Vec::new();
        for i in 0..6 {
            q.enqueue(Instant::ZERO, pkt(i, 1500, 1, 0), &mut dropped);
        }
        q.enqueue(Instant::ZERO, pkt(100, 1500, 2, 0), &mut dropped);
        // 7 x 1500 > 10,000: the head of flow 1 (the fattest) goes, not flow 2's packet.
        assert_eq!(dropped.iter().map(|p| p.id).collect::<Vec<_>>(), [0]);
        assert_eq!(q.bytes(), 9000);
    }

    #[test]
    fn qdisc_names() {
        for k in [QdiscKind::DropTail, QdiscKind::Codel, QdiscKind::FqCodel] {
            assert_eq!(k.name().parse::<QdiscKind>(), Ok(k));
        }
        let e = "fq-codle".parse::<QdiscKind>().unwrap_err();
        assert!(e.contains("fq-codel"), "{e}");
    }
}
