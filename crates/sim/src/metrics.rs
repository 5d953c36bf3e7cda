//! A run's results: the JSON fields users depend on, plus more counters.

use serde::ser::{SerializeStruct, Serializer};
use serde::Serialize;
use tinygram_proto::Duration;

/// Completion-time summary in milliseconds: nearest-rank p50 and p99 to 3
/// significant digits (see [`LatencyHistogram`]), exact max and mean.
/// With no samples it serializes as JSON `null` (there is no completion time
/// to report, and 0 would read as "instant").
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Percentiles {
    pub p50: f64,
    pub p99: f64,
    pub max: f64,
    pub mean: f64,
    /// Completion times summarised (0: none, and the figures above are 0).
    pub samples: usize,
}

impl Serialize for Percentiles {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.is_empty() {
            return s.serialize_none();
        }
        let mut st = s.serialize_struct("Percentiles", 4)?;
        st.serialize_field("p50", &self.p50)?;
        st.serialize_field("p99", &self.p99)?;
        st.serialize_field("max", &self.max)?;
        st.serialize_field("mean", &self.mean)?;
        st.end()
    }
}

impl Percentiles {
    /// No completion time was measured.
    pub fn is_empty(&self) -> bool {
        self.samples == 0
    }

    /// Summarises durations (any order) through a [`LatencyHistogram`], so
    /// p50 and p99 carry its precision; all zero (and
    /// [`is_empty`](Self::is_empty)) when empty.
    pub fn of(samples: &[Duration]) -> Percentiles {
        let mut h = LatencyHistogram::default();
        for &d in samples {
            h.record(d);
        }
        h.percentiles()
    }
}

/// Completion times in constant memory: each sample is kept to
/// [`SIGNIFICANT_DIGITS`](Self::SIGNIFICANT_DIGITS) significant digits of
/// nanoseconds (rounded down; exact below 1 us), so a bucket's width is under
/// 1% of its value and at most 900 buckets exist per decade however long the
/// run. Count, sum (for the mean) and maximum are exact. Deterministic: a
/// `BTreeMap`, no hashing or clock. Samples in the same bucket as the one
/// before wait beside the map, counted, so a run of similar completion times
/// (a many-flow run's common case) does not walk the map's nodes each time.
#[derive(Clone, Debug, Default)]
pub struct LatencyHistogram {
    /// Bucket floor (ns) -> samples in it, the pending ones aside.
    buckets: std::collections::BTreeMap<u64, u64>,
    /// The latest sample's bucket ([`Self::code`]) and samples in it not
    /// yet in `buckets`: 32 bits each, so the histogram stays one cache line.
    pending: u32,
    pending_n: u32,
    count: u64,
    sum_ns: u128,
    max_ns: u64,
}

impl PartialEq for LatencyHistogram {
    /// Equal samples, wherever they wait.
    fn eq(&self, other: &Self) -> bool {
        (self.count, self.sum_ns, self.max_ns) == (other.count, other.sum_ns, other.max_ns)
            && self.iter().eq(other.iter())
    }
}

impl LatencyHistogram {
    /// Precision of p50 and p99: 3 significant digits (relative error below 1%).
    pub const SIGNIFICANT_DIGITS: u32 = 3;

    /// `ns` with everything below its three leading decimal digits cleared:
    /// the bucket's floor, as `floor(code(ns))` computes it.
    #[cfg(test)]
    fn bucket(ns: u64) -> u64 {
        let digits = ns.checked_ilog10().unwrap_or(0) + 1;
        if digits <= Self::SIGNIFICANT_DIGITS {
            return ns;
        }
        let unit = 10u64.pow(digits - Self::SIGNIFICANT_DIGITS);
        ns / unit * unit
    }

    /// The bucket of `ns` in 32 bits: `ns` itself below 1000, else 1000 x
    /// (the digits cleared below its three leading ones) + those three.
    fn code(ns: u64) -> u32 {
        if ns < 1000 {
            return ns as u32;
        }
        let zeros = ns.ilog10() + 1 - Self::SIGNIFICANT_DIGITS;
        zeros * 1000 + (ns / 10u64.pow(zeros)) as u32
    }

    /// The bucket floor [`Self::code`] encoded.
    fn floor(code: u32) -> u64 {
        u64::from(code % 1000) * 10u64.pow(code / 1000)
    }

    pub fn record(&mut self, d: Duration) {
        // Simulated times fit in u64 ns (584 years); saturate rather than wrap.
        let ns = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        let c = Self::code(ns);
        if self.pending_n > 0 && self.pending == c && self.pending_n < u32::MAX {
            self.pending_n += 1;
        } else {
            self.settle();
            (self.pending, self.pending_n) = (c, 1);
        }
        self.count += 1;
        self.sum_ns += u128::from(ns);
        self.max_ns = self.max_ns.max(ns);
    }

    /// Moves the pending samples into the map.
    fn settle(&mut self) {
        if self.pending_n > 0 {
            let b = Self::floor(self.pending);
            *self.buckets.entry(b).or_insert(0) += u64::from(self.pending_n);
            self.pending_n = 0;
        }
    }

    /// (bucket floor, samples) in ascending order, the pending ones included.
    fn iter(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        use std::ops::Bound::{Excluded, Unbounded};
        let (p, n) = (Self::floor(self.pending), u64::from(self.pending_n));
        let below = self.buckets.range(..p).map(|(&b, &c)| (b, c));
        let in_map = self.buckets.get(&p).copied();
        let at = (n > 0 || in_map.is_some()).then(|| (p, in_map.unwrap_or(0) + n));
        let above = self
            .buckets
            .range((Excluded(p), Unbounded))
            .map(|(&b, &c)| (b, c));
        below.chain(at).chain(above)
    }

    /// Adds every sample of `other` (e.g. the server's to the client's).
    pub fn merge(&mut self, other: &LatencyHistogram) {
        self.settle();
        for (b, n) in other.iter() {
            *self.buckets.entry(b).or_insert(0) += n;
        }
        self.count += other.count;
        self.sum_ns += other.sum_ns;
        self.max_ns = self.max_ns.max(other.max_ns);
    }

    /// Samples recorded.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Buckets in use: what the histogram's memory grows with (bounded).
    pub fn buckets(&self) -> usize {
        let p = Self::floor(self.pending);
        self.buckets.len() + usize::from(self.pending_n > 0 && !self.buckets.contains_key(&p))
    }

    /// Nearest-rank quantile `p` (0 to 1) in ms: the floor of its bucket (0 with no samples).
    pub fn quantile_ms(&self, p: f64) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        let want = ((p * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0;
        for (b, n) in self.iter() {
            seen += n;
            if seen >= want {
                return b as f64 / 1e6;
            }
        }
        self.max_ns as f64 / 1e6
    }

    /// Nearest-rank p50 and p99 (bucket floors), exact max and mean, in ms.
    pub fn percentiles(&self) -> Percentiles {
        if self.count == 0 {
            return Percentiles::default();
        }
        let ms = |ns: u64| ns as f64 / 1e6;
        let rank = |p: f64| {
            let want = ((p * self.count as f64).ceil() as u64).clamp(1, self.count);
            let mut seen = 0;
            for (b, n) in self.iter() {
                seen += n;
                if seen >= want {
                    return ms(b);
                }
            }
            ms(self.max_ns)
        };
        Percentiles {
            p50: rank(0.50),
            p99: rank(0.99),
            max: ms(self.max_ns),
            mean: self.sum_ns as f64 / self.count as f64 / 1e6,
            samples: self.count as usize,
        }
    }
}

/// What one host sent and how its engine behaved.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct HostResult {
    /// Segments carrying payload (retransmissions included).
    pub data_segments: u64,
    /// Data segments with payload under the effective MSS.
    pub small_segments: u64,
    /// ACKs without payload, SYN, FIN or RST.
    pub pure_acks: u64,
    /// Data segments sent again.
    pub retransmits: u64,
    /// RFC 1106 NAKs sent.
    pub naks_sent: u64,
    /// Bytes this host put on the wire, framing included.
    pub wire_bytes: u64,
    pub segments: u64,
    pub bytes_sent: u64,
    /// Application bytes this host read (checked against the peer's pattern).
    pub app_bytes_read: u64,
    /// Application bytes this host handed to its engine.
    pub app_bytes_written: u64,
    pub timeouts: u64,
    pub fast_retransmits: u64,
    pub dup_acks_received: u64,
    pub delack_timer_fired: u64,
    pub window_probes: u64,
    pub policy_holds: u64,
    pub window_updates: u64,
    /// Frames this host sent that the link lost.
    pub frames_dropped: u64,
    /// Connection state at the end of the run.
    pub state: String,
    pub error: Option<String>,
    /// Effective send MSS.
    pub mss: usize,
    pub srtt_ms: Option<f64>,
    /// RFC 1106 NAKs received (as data sender).
    pub naks_received: u64,
    /// Retransmissions answering a NAK (RFC 1106 2.1).
    pub nak_retransmits: u64,
    /// Retransmissions chosen from the SACK scoreboard (RFC 6675).
    pub sack_retransmits: u64,
    /// Duplicate-ACK fast retransmits not done because NAKs are in use (RFC 1106 4.3).
    pub fast_retransmits_suppressed: u64,
    /// Segments dropped by PAWS (RFC 7323 5.3).
    pub paws_rejected: u64,
    /// Segments whose bytes could not be parsed.
    pub invalid_segments: u64,
    /// Challenge ACKs sent (RFC 5961 3.2, 4.2, 5.2).
    pub challenge_acks: u64,
    /// Challenge ACKs withheld by the rate limit (RFC 5961 7).
    pub challenge_acks_suppressed: u64,
    /// Replies to unacceptable segments withheld by the rate limit.
    pub invalid_acks_suppressed: u64,
    /// Segments dropped for an ACK outside SND.UNA - MAX.SND.WND ..= SND.MAX (RFC 5961 5.2).
    pub unacceptable_acks: u64,
    /// Out-of-order segments dropped past the cap on out-of-order ranges.
    pub ooo_ranges_dropped: u64,
    /// Times the peer's MSS was raised to the floor of 48 bytes.
    pub peer_mss_floored: u64,
    /// Receive buffer granted within the memory caps (RFC 1106 5).
    pub rcv_buf: usize,
    /// Options in use after the handshake: mss, wscale, timestamps, sack, bigwin, nak.
    pub options: Vec<&'static str>,
}

/// Why a run stopped.
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RunEnd {
    /// The workload reached its end.
    Finished,
    /// Simulated time reached `duration` with events still to come.
    DurationCap,
    /// Nothing was left to happen before the cap: no packet in flight, no
    /// timer armed, no write due (a connection aborted, or both sat idle).
    Idle,
}

/// One direction's application bytes: written by one side, delivered (read,
/// checked, in order) by the other.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq, Eq)]
pub struct Flow {
    pub bytes_written: u64,
    pub bytes_delivered: u64,
}

impl Flow {
    /// Written but not (yet) delivered.
    pub fn undelivered(&self) -> u64 {
        self.bytes_written.saturating_sub(self.bytes_delivered)
    }
}

/// Application bytes each way.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq, Eq)]
pub struct Delivery {
    pub client_to_server: Flow,
    pub server_to_client: Flow,
}

/// How `integrity_ok` is decided, for `tinygram scenario` and the README.
pub const INTEGRITY_RULE: &str = "\
integrity_ok: every byte delivered exactly once and in order. Each byte an
application reads is checked against the seeded pattern the peer wrote at that
offset, no side may read more than the peer wrote, and no written byte may be
lost: if a connection aborted (timeout, reset, refusal) or closed, or the run
went idle with nothing left to happen, every byte written must have been
delivered. A run stopped at the duration cap, or at the workload's end, with
both connections alive leaves the rest in flight, which is not a failure
(JSON: delivery.*.bytes_written / bytes_delivered show how much).";

/// The result of one `tinygram run`. Field names are stable: users' scripts read them.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct RunResult {
    pub name: String,
    pub seed: u64,
    /// Simulated time the run covered.
    pub sim_time_s: f64,
    /// The workload reached its end before the duration cap.
    pub finished: bool,
    /// Why the run stopped.
    pub ended: RunEnd,
    /// What left nothing to do, for a run that ended [`RunEnd::Idle`].
    pub ended_why: Option<String>,
    pub transactions: u64,
    pub transactions_per_s: f64,
    /// Application bytes read, both directions, per simulated second.
    pub goodput_bytes_per_s: f64,
    /// `null` in JSON when no transaction completed.
    pub completion_ms: Percentiles,
    /// Every byte delivered exactly once and in order (see [`INTEGRITY_RULE`]).
    pub integrity_ok: bool,
    /// Why `integrity_ok` is false.
    pub integrity_error: Option<String>,
    /// Application bytes written and delivered, each direction.
    pub delivery: Delivery,
    pub client: HostResult,
    pub server: HostResult,
    /// Simulator events processed.
    pub events: u64,
}

/// Aggregate completion times of many flows in ms: nearest-rank p50, p99 and
/// p99.9 to 3 significant digits, exact max and mean; `null` in JSON when empty.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tail {
    pub p50: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
    pub mean: f64,
    pub samples: u64,
}

impl Tail {
    /// The tail of a histogram's samples.
    pub fn of(h: &LatencyHistogram) -> Tail {
        let p = h.percentiles();
        Tail {
            p50: p.p50,
            p99: p.p99,
            p999: h.quantile_ms(0.999),
            max: p.max,
            mean: p.mean,
            samples: h.count(),
        }
    }
}

impl Serialize for Tail {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.samples == 0 {
            return s.serialize_none();
        }
        let mut st = s.serialize_struct("Tail", 6)?;
        st.serialize_field("p50", &self.p50)?;
        st.serialize_field("p99", &self.p99)?;
        st.serialize_field("p999", &self.p999)?;
        st.serialize_field("max", &self.max)?;
        st.serialize_field("mean", &self.mean)?;
        st.serialize_field("samples", &self.samples)?;
        st.end()
    }
}

/// Equal-width bins over the range of some per-flow figure.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Histogram {
    pub min: f64,
    pub max: f64,
    /// Flows in each of the equal-width bins from `min` to `max`.
    pub counts: Vec<u64>,
}

impl Histogram {
    /// `bins` equal-width bins of `values` (one bin when all are equal).
    pub fn of(values: &[f64], bins: usize) -> Histogram {
        let min = values.iter().copied().fold(f64::INFINITY, f64::min);
        let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if values.is_empty() {
            return Histogram::default();
        }
        let n = if max > min { bins.max(1) } else { 1 };
        let mut counts = vec![0; n];
        for &v in values {
            let i = if max > min {
                (((v - min) / (max - min)) * n as f64) as usize
            } else {
                0
            };
            counts[i.min(n - 1)] += 1;
        }
        Histogram { min, max, counts }
    }
}

/// One connection of a many-flow run.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct FlowResult {
    /// Its number, from 0 in `[[flows]]` order.
    pub id: u32,
    /// Its `[[flows]]` group.
    pub group: String,
    /// `host:port` of each end.
    pub client: String,
    pub server: String,
    /// When it opened and when its workload ended (`null`: did not end).
    pub start_s: f64,
    pub done_s: Option<f64>,
    pub transactions: u64,
    pub completion_ms: Percentiles,
    /// Application bytes read both ways per second from its start to its end (or the run's).
    pub goodput_bytes_per_s: f64,
    pub delivery: Delivery,
    /// Segments both ends sent, data segments, retransmissions, RTO expiries.
    pub segments: u64,
    pub data_segments: u64,
    pub retransmits: u64,
    pub timeouts: u64,
    /// Sends held by the send policy, both ends.
    pub policy_holds: u64,
    pub delack_timer_fired: u64,
    pub client_state: String,
    pub error: Option<String>,
    pub integrity_ok: bool,
    pub integrity_error: Option<String>,
}

/// Totals of one `[[flows]]` group.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct GroupResult {
    pub name: String,
    pub flows: u64,
    pub transactions: u64,
    pub completion_ms: Tail,
    /// Sum of the group's per-flow goodputs.
    pub goodput_bytes_per_s: f64,
    /// Jain's index of the group's per-flow goodputs.
    pub jain_fairness: f64,
    pub policy_holds: u64,
    pub retransmits: u64,
    pub integrity_failures: u64,
}

/// One direction of the bottleneck.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct QueueResult {
    pub direction: &'static str,
    pub qdisc: &'static str,
    pub enqueued: u64,
    pub dequeued: u64,
    pub dropped_overflow: u64,
    pub dropped_aqm: u64,
    pub marked: u64,
    pub max_bytes: usize,
    pub wire_bytes: u64,
    /// Queueing delay of the packets sent.
    pub sojourn_ms: Percentiles,
}

impl QueueResult {
    /// The figures of `q`, a queue of `direction`.
    pub fn new(direction: &'static str, q: &crate::qdisc::Qdisc, wire_bytes: u64) -> QueueResult {
        let s = q.stats();
        QueueResult {
            direction,
            qdisc: q.config().kind.name(),
            enqueued: s.enqueued,
            dequeued: s.dequeued,
            dropped_overflow: s.dropped_overflow,
            dropped_aqm: s.dropped_aqm,
            marked: s.marked,
            max_bytes: s.max_bytes,
            wire_bytes,
            sojourn_ms: s.sojourn.percentiles(),
        }
    }
}

/// One direction of a host's access link.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct LinkDrops {
    pub host: String,
    /// "up" (host to bottleneck) or "down".
    pub direction: &'static str,
    pub wire_bytes: u64,
    pub dropped_queue: u64,
    pub dropped_loss: u64,
    pub dropped_ber: u64,
}

/// What the servers' listeners did past their backlog (RFC 4987), summed
/// over hosts; in a result only when a cookie, a dropped SYN or a flood happened.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct ListenResult {
    /// SYNs answered with a SYN cookie: the backlog was full.
    pub syn_cookies_sent: u64,
    /// Connections built from an ACK that returned a valid cookie.
    pub syn_cookies_accepted: u64,
    /// ACKs whose cookie did not verify, answered with a RST.
    pub syn_cookies_rejected: u64,
    /// SYNs dropped unanswered: the backlog was full and `syn_cookies` off.
    pub syns_dropped: u64,
    /// The most half-open connections one host's listeners held at once.
    pub most_half_open: u64,
    /// SYNs a flood sent from spoofed sources ([`crate::flood`]).
    pub flood_syns: u64,
}

impl ListenResult {
    /// Adds `o`'s counts (the largest `most_half_open`).
    pub fn add(&mut self, o: &ListenResult) {
        self.syn_cookies_sent += o.syn_cookies_sent;
        self.syn_cookies_accepted += o.syn_cookies_accepted;
        self.syn_cookies_rejected += o.syn_cookies_rejected;
        self.syns_dropped += o.syns_dropped;
        self.most_half_open = self.most_half_open.max(o.most_half_open);
        self.flood_syns += o.flood_syns;
    }

    /// Whether anything past a backlog happened.
    pub fn any(&self) -> bool {
        self.syn_cookies_sent + self.syns_dropped + self.syn_cookies_rejected + self.flood_syns > 0
    }
}

/// The result of a many-flow run (`[bottleneck]`, `[[flows]]`).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct FlowsResult {
    pub name: String,
    pub seed: u64,
    pub sim_time_s: f64,
    /// Every flow's workload reached its end before the duration cap.
    pub finished: bool,
    pub ended: RunEnd,
    pub flow_count: u64,
    pub flows_done: u64,
    pub transactions: u64,
    pub transactions_per_s: f64,
    /// Application bytes read, all flows, both directions, per simulated second.
    pub goodput_bytes_per_s: f64,
    /// Completion times of all flows' transactions.
    pub completion_ms: Tail,
    /// Jain's index of the per-flow goodputs (1: all equal).
    pub jain_fairness: f64,
    /// Every flow passed the integrity check.
    pub integrity_ok: bool,
    /// The first failing flow, named, and how many more failed.
    pub integrity_error: Option<String>,
    pub integrity_failures: u64,
    pub groups: Vec<GroupResult>,
    /// The bottleneck's two directions.
    pub queues: Vec<QueueResult>,
    pub access_links: Vec<LinkDrops>,
    /// RSTs sent for segments that matched no connection.
    pub rsts_sent: u64,
    /// Listen backlogs, SYN cookies and floods, when any of them acted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub listen: Option<ListenResult>,
    pub segments: u64,
    pub data_segments: u64,
    pub policy_holds: u64,
    /// Integrity failures first, then the slowest p99 completion, then the least goodput.
    pub worst_flows: Vec<FlowResult>,
    /// Above [`crate::flows::LIST_FLOWS_UP_TO`] flows: per-flow goodput and p99 completion histograms.
    pub goodput_histogram: Option<Histogram>,
    pub p99_completion_histogram: Option<Histogram>,
    /// Every flow, up to [`crate::flows::LIST_FLOWS_UP_TO`]; `null` above.
    pub flows: Option<Vec<FlowResult>>,
    pub events: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_and_histogram() {
        let mut h = LatencyHistogram::default();
        for ms in 1..=1000u64 {
            h.record(Duration::from_millis(ms));
        }
        let t = Tail::of(&h);
        assert_eq!((t.p50, t.p99, t.p999, t.max), (500.0, 990.0, 999.0, 1000.0));
        assert_eq!(serde_json::to_string(&Tail::default()).unwrap(), "null");
        let g = Histogram::of(&[0.0, 1.0, 2.0, 10.0], 5);
        assert_eq!(g.counts, [2, 1, 0, 0, 1]);
        assert_eq!(Histogram::of(&[3.0, 3.0], 5).counts, [2]);
    }

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<Duration> = (1..=100).map(Duration::from_millis).collect();
        let p = Percentiles::of(&v);
        assert_eq!((p.p50, p.p99, p.max), (50.0, 99.0, 100.0));
        assert_eq!(p.mean, 50.5);
        assert_eq!(Percentiles::of(&[]), Percentiles::default());
    }

    #[test]
    fn histogram_keeps_three_significant_digits_and_exact_max() {
        let mut h = LatencyHistogram::default();
        for ns in [201_045_123u64, 201_049_999, 999, 1_234_567, 5] {
            h.record(Duration::from_nanos(ns));
        }
        let p = h.percentiles();
        assert_eq!(p.samples, 5);
        // Nearest rank 3 of 5: 1,234,567 ns kept as 1,230,000.
        assert_eq!(p.p50, 1.23);
        // Both 201.04x ms samples share the 201 ms bucket.
        assert_eq!(p.p99, 201.0);
        assert_eq!(p.max, 201.049999);
        assert_eq!(h.buckets(), 4);
        let exact_mean = (201_045_123u64 + 201_049_999 + 999 + 1_234_567 + 5) as f64 / 5.0 / 1e6;
        assert!(
            (p.mean - exact_mean).abs() < 1e-9,
            "{} vs {exact_mean}",
            p.mean
        );
    }

    /// Every bucket floor has a 32-bit code that gives it back.
    #[test]
    fn bucket_codes_round_trip() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let samples = (0..10_000).map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x >> (x % 64)
        });
        for ns in samples.chain([0, 1, 999, 1000, 1009, 99_999, u64::MAX]) {
            let b = LatencyHistogram::bucket(ns);
            let c = LatencyHistogram::code(b);
            assert_eq!(LatencyHistogram::floor(c), b, "{ns}");
            assert_eq!(LatencyHistogram::code(ns), c, "{ns}");
            assert!(c < 20_000, "{ns}: code {c}");
        }
        // The pending sample fits beside the rest in one cache line.
        assert_eq!(std::mem::size_of::<LatencyHistogram>(), 64);
    }

    /// Samples waiting beside the map count as if in it, for every reader.
    #[test]
    fn pending_samples_count_as_if_in_the_map() {
        // Runs of equal buckets, returns to earlier ones and lone samples,
        // against the map alone (what `record` did before samples waited).
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut draw = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut h = LatencyHistogram::default();
        let (mut a, mut b) = (h.clone(), h.clone());
        let mut reference = std::collections::BTreeMap::new();
        for i in 0..5_000u64 {
            let ns = match draw() % 4 {
                0 => 1_000_000_000 + draw() % 5_000_000,
                1 => draw() % 2_000,
                2 => 1_000_000_000,
                _ => 3_000 * (i % 7),
            };
            let d = Duration::from_nanos(ns);
            h.record(d);
            if i % 3 == 0 { &mut a } else { &mut b }.record(d);
            *reference
                .entry(LatencyHistogram::bucket(ns))
                .or_insert(0u64) += 1;
            if i % 97 == 0 {
                let seen: Vec<_> = h.iter().collect();
                let want: Vec<_> = reference.iter().map(|(&k, &v)| (k, v)).collect();
                assert_eq!(seen, want, "after sample {i}");
                assert_eq!(h.buckets(), reference.len());
            }
        }
        let mut merged = LatencyHistogram::default();
        merged.merge(&a);
        merged.merge(&b);
        assert_eq!(merged, h);
        assert_eq!(merged.percentiles(), h.percentiles());
        assert_eq!(merged.quantile_ms(0.9), h.quantile_ms(0.9));
        let mut settled = h.clone();
        settled.settle();
        assert_eq!(settled.pending_n, 0);
        assert_eq!(settled, h);
        assert_eq!(settled.percentiles(), h.percentiles());
        let mut other = h.clone();
        other.record(Duration::from_nanos(7));
        assert_ne!(other, h);
    }

    /// Memory does not grow with the number of samples: a million distinct
    /// latencies between 1 and 2 s fill at most 100 buckets (1.00 .. 1.99 s).
    #[test]
    fn histogram_memory_is_bounded() {
        let mut h = LatencyHistogram::default();
        for i in 0..1_000_000u64 {
            h.record(Duration::from_nanos(1_000_000_000 + i * 997));
        }
        assert_eq!(h.count(), 1_000_000);
        assert!(h.buckets() <= 100, "{} buckets", h.buckets());
        let mut merged = LatencyHistogram::default();
        merged.merge(&h);
        merged.merge(&h);
        assert_eq!(merged.count(), 2_000_000);
        assert_eq!(merged.buckets(), h.buckets());
        assert_eq!(merged.percentiles().p50, h.percentiles().p50);
    }

    #[test]
    fn no_samples_is_null_in_json() {
        let none = Percentiles::of(&[]);
        assert!(none.is_empty());
        assert_eq!(serde_json::to_string(&none).unwrap(), "null");
        let one = Percentiles::of(&[Duration::from_millis(2)]);
        assert_eq!(
            serde_json::to_string(&one).unwrap(),
            r#"{"p50":2.0,"p99":2.0,"max":2.0,"mean":2.0}"#
        );
    }
}
