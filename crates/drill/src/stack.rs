//! `--stack`: whose defaults a new socket gets before the script's own setsockopts.
//!
//! Upstream packetdrill scripts (google/packetdrill gtests/net/tcp, the Linux
//! kernel's tools/testing/selftests/net/packetdrill) are written against
//! Linux and lean on its defaults without saying so: above all, Linux ACKs
//! the first data of a connection at once (quick-ACK mode) where tinygram's
//! default `delayed` policy waits 200 ms. `--stack linux` gives new sockets
//! the Linux behaviour the engine already models; the script's setsockopts
//! still override it.

use std::fmt;
use std::str::FromStr;
use tinygram_proto::policy::{AckPolicyKind, SendPolicyKind};
use tinygram_proto::{CcFactory, Config, Duration, OptionSet, RecoverySet, SlowStart};

/// Linux's SYN-ACK retransmissions before a passive open gives up
/// (net.ipv4.tcp_synack_retries; TCP_SYNACK_RETRIES = 5, include/net/tcp.h).
pub const LINUX_SYNACK_RETRIES: u32 = 5;

/// Whose defaults new sockets get.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Stack {
    /// The engine's own defaults (`Config::default()`): strict Nagle, delayed ACK.
    #[default]
    Tinygram,
    /// Linux's defaults, as far as the engine models them (see [`Stack::config`]).
    Linux,
}

impl Stack {
    /// Every stack name, for help and errors.
    pub const NAMES: [&'static str; 2] = ["tinygram", "linux"];

    /// The configuration a new socket starts from.
    ///
    /// For `Linux`, each field the engine models is set as the kernel sets it
    /// (citations are to the Linux source):
    /// - `ack_policy` `quickack`: quick-ACK mode at the start of a connection
    ///   and after idle, ACK once more than one MSS is unacknowledged, a 40-200
    ///   ms adaptive delayed-ACK timeout, ping-pong detection (tcp_input.c
    ///   tcp_event_data_recv, tcp_incr_quickack, __tcp_ack_snd_check;
    ///   tcp_output.c tcp_send_delayed_ack);
    /// - `send_policy` `minshall`: Linux's Nagle holds a partial segment only
    ///   while an earlier partial segment is unacknowledged (tcp_output.c
    ///   tcp_nagle_check, tcp_minshall_check); `TCP_NODELAY` 0 also restores it;
    /// - `initial_window` 10 (TCP_INIT_CWND, include/net/tcp.h; RFC 6928);
    /// - `rto_min` 200 ms (TCP_RTO_MIN, HZ/5), `rto_max` 120 s (TCP_RTO_MAX),
    ///   `rto_initial` 1 s (TCP_TIMEOUT_INIT), all in include/net/tcp.h;
    /// - `max_retries` 15 (net.ipv4.tcp_retries2), `syn_retries` 6
    ///   (net.ipv4.tcp_syn_retries, TCP_SYN_RETRIES) for connect(), and 5 for a
    ///   listener's SYN-ACK ([`LINUX_SYNACK_RETRIES`], applied at listen());
    /// - `msl` 30 s: TIME-WAIT lasts TCP_TIMEWAIT_LEN = 60 s = 2 x MSL;
    /// - `dupack_threshold` 3 (net.ipv4.tcp_reordering, TCP_FASTRETRANS_THRESH);
    /// - `options` window scale, timestamps and SACK, offered by default
    ///   (net.ipv4.tcp_window_scaling, tcp_timestamps, tcp_sack = 1); only
    ///   used when the script's SYN does not show which options to offer;
    /// - `mss` 1460 (an Ethernet route's MTU 1500 - 40, tcp_output.c
    ///   tcp_advertise_mss), as the engine's default already is;
    /// - `congestion` CUBIC (net.ipv4.tcp_congestion_control = cubic, the
    ///   default since 2.6.19; RFC 9438) with `slow_start` HyStart (tcp_cubic.c
    ///   hystart = 1, hystart_detect = ACK train and delay);
    /// - `recovery` PRR (RFC 6937; tcp_input.c tcp_cwnd_reduction, always on)
    ///   and TLP (RFC 8985 7; net.ipv4.tcp_early_retrans = 3, tcp_output.c
    ///   tcp_schedule_loss_probe).
    ///
    /// Buffers keep the engine's sizes: Linux autotunes its receive and send
    /// buffers (tcp_rmem, tcp_wmem, rcv_ssthresh growth), which the engine
    /// does not model; the drill runner sizes the receive buffer from the
    /// script's `wscale` as before.
    pub fn config(self) -> Config {
        let base = Config::default();
        match self {
            Stack::Tinygram => base,
            Stack::Linux => Config {
                ack_policy: AckPolicyKind::QuickAck,
                send_policy: SendPolicyKind::Minshall,
                initial_window: 10,
                rto_min: Duration::from_millis(200),
                rto_max: Duration::from_secs(120),
                rto_initial: Duration::from_secs(1),
                max_retries: 15,
                syn_retries: 6,
                msl: Duration::from_secs(30),
                dupack_threshold: 3,
                options: OptionSet {
                    window_scale: true,
                    timestamps: true,
                    sack: true,
                    ..OptionSet::default()
                },
                mss: 1460,
                congestion: CcFactory::cubic(),
                slow_start: SlowStart::Hystart,
                recovery: RecoverySet {
                    prr: true,
                    tlp: true,
                },
                ..base
            },
        }
    }

    /// The send policy `TCP_NODELAY` 0 selects: the stack's flavour of Nagle.
    pub fn nagle(self) -> SendPolicyKind {
        match self {
            Stack::Tinygram => SendPolicyKind::Nagle,
            Stack::Linux => SendPolicyKind::Minshall,
        }
    }

    /// SYN-ACK retransmissions for a listener whose script did not set
    /// `TCP_TINYGRAM_SYN_RETRIES` (`None`: the socket's value stands).
    pub fn synack_retries(self) -> Option<u32> {
        match self {
            Stack::Tinygram => None,
            Stack::Linux => Some(LINUX_SYNACK_RETRIES),
        }
    }
}

impl FromStr for Stack {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "tinygram" => Ok(Stack::Tinygram),
            "linux" => Ok(Stack::Linux),
            o => Err(format!(
                "unknown stack {o:?} (expected {})",
                Stack::NAMES.join(" or ")
            )),
        }
    }
}

impl fmt::Display for Stack {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Stack::Tinygram => "tinygram",
            Stack::Linux => "linux",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linux_defaults_are_valid_and_differ_where_linux_does() {
        let l = Stack::Linux.config();
        assert!(l.validate().is_ok());
        assert_eq!(l.ack_policy, AckPolicyKind::QuickAck);
        assert_eq!(l.send_policy, SendPolicyKind::Minshall);
        assert_eq!(l.rto_max, Duration::from_secs(120));
        assert_eq!(l.congestion.name(), "cubic");
        assert_eq!(l.slow_start, SlowStart::Hystart);
        assert!(l.recovery.prr);
        let t = Stack::Tinygram.config();
        assert_eq!(format!("{t:?}"), format!("{:?}", Config::default()));
        assert_eq!("linux".parse::<Stack>(), Ok(Stack::Linux));
        assert!("bsd"
            .parse::<Stack>()
            .unwrap_err()
            .contains("tinygram or linux"));
    }
}
