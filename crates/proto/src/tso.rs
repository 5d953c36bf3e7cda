//! Linux's TSO packet size: how many segments of new data `tcp_write_xmit`
//! puts in one packet, from the pacing rate (tcp_output.c tcp_tso_autosize,
//! tcp_input.c tcp_update_pacing_rate). Linux 6.18 sends each packet of two
//! or more segments with PSH on its last, so the size decides where PSH goes.

use crate::time::Duration;

/// The largest packet, in bytes (GSO_LEGACY_MAX_SIZE, a tun device's gso_max_size).
pub const GSO_MAX_SIZE: u64 = 65_536;

/// What the packet size is computed from.
#[derive(Clone, Copy, Debug)]
pub struct TsoInputs {
    /// Payload bytes per full segment.
    pub mss: usize,
    /// Congestion window and bytes in flight, whichever is larger, in bytes.
    pub window: usize,
    /// Slow start's pacing ratio applies (cwnd under half ssthresh).
    pub slow_start: bool,
    /// The smoothed RTT; `None` before any sample.
    pub srtt: Option<Duration>,
    /// The least RTT measured.
    pub min_rtt: Option<Duration>,
    /// The floor, net.ipv4.tcp_min_tso_segs.
    pub min_segs: u32,
}

/// Segments per packet (Linux tcp_output.c tcp_tso_autosize): the pacing
/// rate's bytes per 1/1024 s (sk_pacing_shift 10), plus 64 KB halved for each
/// 512 us of minimum RTT (net.ipv4.tcp_tso_rtt_log 9), at most 64 KB, and
/// at least `min_segs`.
pub fn autosize(t: &TsoInputs) -> u32 {
    let mss = t.mss.max(1) as u64;
    // tcp_update_pacing_rate: 200 % of cwnd/srtt in slow start, 120 % after.
    let ratio: u64 = if t.slow_start { 200 } else { 120 };
    let per_rtt = (t.window as u64).saturating_mul(ratio) / 100;
    let rate = match t.srtt {
        Some(srtt) => per_rtt.saturating_mul(1_000_000) / (srtt.as_micros() as u64).max(1),
        // No RTT yet: Linux leaves the rate undivided, far above the cap.
        None => u64::MAX,
    };
    let mut bytes = rate >> 10;
    if let Some(min_rtt) = t.min_rtt {
        let r = min_rtt.as_micros() >> 9;
        if r < 32 {
            bytes = bytes.saturating_add(GSO_MAX_SIZE >> r);
        }
    }
    let segs = (bytes.min(GSO_MAX_SIZE) / mss) as u32;
    segs.max(t.min_segs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs(mss: usize, cwnd_segs: usize, srtt_ms: u64, min_rtt_ms: u64) -> TsoInputs {
        TsoInputs {
            mss,
            window: cwnd_segs * mss,
            slow_start: true,
            srtt: Some(Duration::from_millis(srtt_ms)),
            min_rtt: Some(Duration::from_millis(min_rtt_ms)),
            min_segs: 2,
        }
    }

    #[test]
    fn a_slow_path_gets_the_floor() {
        // 10 x 1000 bytes per 100 ms at 200 %: 200 kB/s, 195 bytes per 1/1024 s.
        assert_eq!(autosize(&inputs(1000, 10, 100, 100)), 2);
        assert_eq!(autosize(&inputs(1460, 10, 10, 10)), 2);
    }

    #[test]
    fn a_fast_path_gets_larger_packets() {
        // 100 x 1000 bytes per 10 ms at 200 %: 20 MB/s, 19531 bytes per 1/1024 s.
        assert_eq!(autosize(&inputs(1000, 100, 10, 10)), 19);
        let mut t = inputs(1000, 100, 10, 10);
        t.slow_start = false;
        assert_eq!(autosize(&t), 11);
    }

    #[test]
    fn a_tiny_min_rtt_allows_a_full_packet() {
        assert_eq!(autosize(&inputs(1000, 10, 0, 0)), 65);
        // 1 ms: r = 1, 32 KB added.
        assert_eq!(autosize(&inputs(1000, 10, 100, 1)), 32);
    }

    #[test]
    fn no_rtt_yet_means_the_cap() {
        let mut t = inputs(1460, 10, 1, 1);
        t.srtt = None;
        t.min_rtt = None;
        assert_eq!(autosize(&t), 44);
    }
}
