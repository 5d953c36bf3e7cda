//! What Linux tells its congestion module besides the bytes acked: whether the
//! sender is using its window (tcp_output.c tcp_cwnd_validate, include/net/tcp.h
//! tcp_is_cwnd_limited). Its RTT sample on every ACK, from the send time of
//! the newest segment covered (tcp_input.c tcp_clean_rtx_queue), is read off
//! the record of sent segments (`crate::sent`).

use crate::seq::SeqNumber;

/// How far cwnd may grow when the application or the peer's window, not cwnd,
/// limits sending.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum CwndValidation {
    /// Every ACK of new data may grow cwnd (RFC 5681 3.1 as written).
    #[default]
    Off,
    /// Linux: cwnd grows only while the flow is cwnd-limited, or in slow start
    /// while cwnd is under twice the most segments in flight this window
    /// (include/net/tcp.h tcp_is_cwnd_limited; tcp_output.c tcp_cwnd_validate).
    Linux,
}

impl CwndValidation {
    /// The name profiles use.
    pub fn name(self) -> &'static str {
        match self {
            CwndValidation::Off => "off",
            CwndValidation::Linux => "linux",
        }
    }
}

impl std::str::FromStr for CwndValidation {
    type Err = String;
    /// `"off"` or `"linux"`.
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "off" | "none" => Ok(CwndValidation::Off),
            "linux" => Ok(CwndValidation::Linux),
            _ => Err(format!(
                "unknown cwnd_validation {s:?}{} (expected \"off\" or \"linux\")",
                crate::suggest::did_you_mean(s, ["off", "linux"])
            )),
        }
    }
}

/// Linux's record of how much of cwnd the sender used (tcp_sock's
/// is_cwnd_limited, max_packets_out and cwnd_usage_seq).
#[derive(Clone, Debug, Default)]
pub struct CwndUsage {
    is_cwnd_limited: bool,
    max_packets_out: usize,
    /// SND.NXT when the record was last reset: a new window starts once it is acked.
    usage_seq: Option<SeqNumber>,
}

impl CwndUsage {
    /// tcp_cwnd_validate after a transmit pass that sent something or was
    /// stopped by cwnd: keep the strongest sign of use this window (cwnd-limited,
    /// else the most segments out).
    pub fn on_transmit(
        &mut self,
        snd_una: SeqNumber,
        snd_nxt: SeqNumber,
        packets_out: usize,
        cwnd_limited: bool,
    ) {
        let window_done = self.usage_seq.is_none_or(|s| snd_una >= s);
        if window_done
            || cwnd_limited
            || (!self.is_cwnd_limited && packets_out > self.max_packets_out)
        {
            self.is_cwnd_limited = cwnd_limited;
            self.max_packets_out = packets_out;
            self.usage_seq = Some(snd_nxt);
        }
    }

    /// tcp_is_cwnd_limited: whether an ACK may grow a cwnd of `cwnd_pkts`
    /// segments (in slow start, up to twice the segments that were out).
    pub fn is_cwnd_limited(&self, cwnd_pkts: usize, in_slow_start: bool) -> bool {
        self.is_cwnd_limited || (in_slow_start && cwnd_pkts < 2 * self.max_packets_out)
    }

    /// The most segments out in the current window.
    pub fn max_packets_out(&self) -> usize {
        self.max_packets_out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(n: u32) -> SeqNumber {
        SeqNumber(n)
    }

    #[test]
    fn slow_start_grows_only_to_twice_what_was_out() {
        let mut u = CwndUsage::default();
        // 5 of a 10-segment cwnd out: 10 < 2 x 5 is false, no growth.
        u.on_transmit(s(1), s(5001), 5, false);
        assert!(!u.is_cwnd_limited(10, true));
        // 6 out: 10 < 12, growth until cwnd reaches 12.
        let mut u = CwndUsage::default();
        u.on_transmit(s(1), s(6001), 6, false);
        assert!(u.is_cwnd_limited(10, true));
        assert!(!u.is_cwnd_limited(12, true));
        // In congestion avoidance only a cwnd-limited window grows.
        assert!(!u.is_cwnd_limited(10, false));
        u.on_transmit(s(1), s(10_001), 10, true);
        assert!(u.is_cwnd_limited(40, false));
    }

    #[test]
    fn record_keeps_the_strongest_sign_until_the_window_is_acked() {
        let mut u = CwndUsage::default();
        u.on_transmit(s(1), s(10_001), 10, true);
        // A later, smaller send in the same window does not erase cwnd-limited.
        u.on_transmit(s(2001), s(11_001), 9, false);
        assert!(u.is_cwnd_limited(10, false));
        // Once the window's data is acked, the next pass starts a new record.
        u.on_transmit(s(10_001), s(12_001), 2, false);
        assert!(!u.is_cwnd_limited(10, false));
        assert_eq!(u.max_packets_out(), 2);
    }
}
