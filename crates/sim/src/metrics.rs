//! A run's results: the JSON fields users depend on, plus more counters.

use serde::ser::{SerializeStruct, Serializer};
use serde::Serialize;
use tinygram_proto::Duration;

/// Completion-time summary in milliseconds (nearest-rank percentiles).
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

    /// Summarises sorted durations; all zero (and [`is_empty`](Self::is_empty)) when empty.
    pub fn of(sorted: &[Duration]) -> Percentiles {
        if sorted.is_empty() {
            return Percentiles::default();
        }
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        let rank = |p: f64| {
            let i = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
            ms(sorted[i - 1])
        };
        Percentiles {
            p50: rank(0.50),
            p99: rank(0.99),
            max: ms(sorted[sorted.len() - 1]),
            mean: sorted.iter().map(|&d| ms(d)).sum::<f64>() / sorted.len() as f64,
            samples: sorted.len(),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<Duration> = (1..=100).map(Duration::from_millis).collect();
        let p = Percentiles::of(&v);
        assert_eq!((p.p50, p.p99, p.max), (50.0, 99.0, 100.0));
        assert_eq!(p.mean, 50.5);
        assert_eq!(Percentiles::of(&[]), Percentiles::default());
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
