//! A run's results: the JSON fields DESIGN.md fixes, plus more counters.

use serde::Serialize;
use tinygram_proto::Duration;

/// Completion-time summary in milliseconds (nearest-rank percentiles).
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Percentiles {
    pub p50: f64,
    pub p99: f64,
    pub max: f64,
    pub mean: f64,
}

impl Percentiles {
    /// Summarises sorted durations; all zero when empty.
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
    pub app_bytes_read: u64,
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
    /// Receive buffer granted within the memory caps (RFC 1106 5).
    pub rcv_buf: usize,
    /// Options in use after the handshake: mss, wscale, timestamps, sack, bigwin, nak.
    pub options: Vec<&'static str>,
}

/// The result of one `tinygram run`. Field names are stable (DESIGN.md).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct RunResult {
    pub name: String,
    pub seed: u64,
    /// Simulated time the run covered.
    pub sim_time_s: f64,
    /// The workload reached its end before the duration cap.
    pub finished: bool,
    pub transactions: u64,
    pub transactions_per_s: f64,
    /// Application bytes read, both directions, per simulated second.
    pub goodput_bytes_per_s: f64,
    pub completion_ms: Percentiles,
    /// Every byte read matched what the peer wrote, in order, exactly once.
    pub integrity_ok: bool,
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
}
