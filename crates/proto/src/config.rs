//! Per-connection settings. Every default matches a common real stack and is
//! documented where it is chosen.

use crate::cc::CcFactory;
pub use crate::cc::{LossIs, SlowStart};
use crate::policy::ack::{DelackCount, WindowAdvertise, WindowUpdate};
use crate::policy::{AckPolicyKind, SendPolicyKind};
use crate::time::Duration;

/// Which TCP options this side offers in its SYN (MSS is always sent).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct OptionSet {
    /// RFC 7323 section 2 window scale.
    pub window_scale: bool,
    /// RFC 7323 sections 3-5 timestamps (RTTM, PAWS).
    pub timestamps: bool,
    /// RFC 2018 SACK-permitted and SACK blocks.
    pub sack: bool,
    /// RFC 1106 section 3 Big Window.
    pub big_window: bool,
    /// RFC 1106 section 2 NAK.
    pub nak: bool,
    /// RFC 3168 ECN: ECE+CWR in the SYN, ECT(0) on data, CE echoed by ECE.
    pub ecn: bool,
}

impl OptionSet {
    /// Parses one option name as used in scenario files (`options = [...]`).
    pub fn enable(&mut self, name: &str) -> Result<(), String> {
        match name {
            "mss" => {}
            "wscale" | "window_scale" => self.window_scale = true,
            "timestamps" | "ts" => self.timestamps = true,
            "sack" => self.sack = true,
            "bigwin" | "big_window" => self.big_window = true,
            "nak" => self.nak = true,
            "ecn" => self.ecn = true,
            other => {
                const NAMES: [&str; 9] = [
                    "ecn",
                    "mss",
                    "wscale",
                    "window_scale",
                    "timestamps",
                    "sack",
                    "bigwin",
                    "big_window",
                    "nak",
                ];
                let hint = crate::suggest::did_you_mean(other, NAMES);
                return Err(format!(
                    "unknown option {other:?}{hint} (expected mss, wscale, timestamps, sack, bigwin, nak, ecn)"
                ));
            }
        }
        Ok(())
    }
}

/// Loss-recovery modules in use besides RFC 6675 SACK recovery / RFC 6582 NewReno.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct RecoverySet {
    /// RFC 6937 Proportional Rate Reduction sets cwnd during SACK recovery.
    pub prr: bool,
    /// RFC 8985 7 Tail Loss Probe: a probe at 2 SRTT brings back an ACK (and
    /// SACK) for a lost tail before the RTO.
    pub tlp: bool,
    /// RFC 8985 6 RACK: a segment is lost once one sent after it is delivered
    /// and RACK.rtt + reo_wnd has passed (SACK in use).
    pub rack: bool,
}

impl RecoverySet {
    /// Every module name, for errors and listings.
    pub const NAMES: [&'static str; 4] = ["prr", "tlp", "rack", "newreno"];

    /// Parses one module name as used in scenario files (`recovery = [...]`);
    /// `"newreno"` names the default (no module) and enables nothing.
    pub fn enable(&mut self, name: &str) -> Result<(), String> {
        match name {
            "prr" => self.prr = true,
            "tlp" => self.tlp = true,
            "rack" => self.rack = true,
            "newreno" | "none" => {}
            other => {
                return Err(format!(
                    "unknown recovery module {other:?}{} (expected {})",
                    crate::suggest::did_you_mean(other, Self::NAMES),
                    Self::NAMES.join(", ")
                ))
            }
        }
        Ok(())
    }

    /// The enabled modules' names, in `NAMES` order.
    pub fn names(self) -> Vec<&'static str> {
        [(self.prr, "prr"), (self.tlp, "tlp"), (self.rack, "rack")]
            .into_iter()
            .filter(|(on, _)| *on)
            .map(|(_, n)| n)
            .collect()
    }
}

impl Config {
    /// The receive buffer this connection gets: `rcv_buf` within the
    /// per-connection cap and the host's budget (RFC 1106 5), and what limited it.
    pub fn granted_rcv_buf(&self) -> (usize, Option<BufferLimit>) {
        let mut size = self.rcv_buf;
        let mut limit = None;
        if self.buffer_cap < size {
            size = self.buffer_cap;
            limit = Some(BufferLimit::Connection);
        }
        if let Some(b) = self.host_budget {
            if b < size {
                size = b;
                limit = Some(BufferLimit::Host);
            }
        }
        (size.max(1), limit)
    }
}

/// What kept the receive buffer below `rcv_buf` (RFC 1106 5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BufferLimit {
    /// `Config::buffer_cap`, the per-connection cap.
    Connection,
    /// `Config::host_budget`, the host's memory shared by its connections.
    Host,
}

impl BufferLimit {
    pub fn name(self) -> &'static str {
        match self {
            BufferLimit::Connection => "per-connection buffer cap",
            BufferLimit::Host => "host memory",
        }
    }
}

/// Everything that configures one connection.
#[derive(Clone, Debug)]
pub struct Config {
    /// MSS option value we advertise: the largest payload we accept without
    /// TCP options (RFC 9293 3.7.1, RFC 6691). 1460 = Ethernet MTU 1500 - 40.
    pub mss: u16,
    /// Receive buffer: the most we ever advertise. 64 KiB (the classic default);
    /// at least 1 byte, and it may be smaller than the MSS.
    pub rcv_buf: usize,
    /// Send buffer: how much unacknowledged plus unsent data `write` accepts.
    pub snd_buf: usize,
    /// The minimum RTO: of the whole RTO (RFC 6298 2.4: 1 s) or of its
    /// variance term (Linux's tcp_rto_min, 200 ms), as `rto_floor` says.
    pub rto_min: Duration,
    /// What `rto_min` bounds.
    pub rto_floor: crate::rtt::RtoFloor,
    /// Added to every retransmission timeout computed from the RTT estimate
    /// or backed off (FreeBSD tcp_timer.h TCPT_RANGESET, tcp_rexmit_slop); 0 by default.
    pub rto_slop: Duration,
    /// Upper bound on RTO (RFC 6298 2.5: at least 60 s).
    pub rto_max: Duration,
    /// RTO before any RTT sample (RFC 6298 2.1: 1 s).
    pub rto_initial: Duration,
    /// Retransmission timer granularity: the RTO counts whole ticks (4.4BSD's
    /// 500 ms slow timeout, tcp_slowtimo). `None`: exact.
    pub rto_tick: Option<Duration>,
    /// Data retransmissions of one segment before the connection is aborted
    /// (Linux tcp_retries2 = 15).
    pub max_retries: u32,
    /// Retransmissions and unanswered zero-window probes of a connection the
    /// application let go of (close(2)) before it is aborted: Linux's
    /// tcp_orphan_retries, where 0 (the default) means 8 while the timer is
    /// below `rto_max` and none once it reaches it.
    pub orphan_retries: u32,
    /// SYN retransmissions before an active open gives up (Linux tcp_syn_retries = 6).
    pub syn_retries: u32,
    /// SYN-ACK retransmissions before a passive open gives up (Linux tcp_synack_retries).
    pub synack_retries: u32,
    /// A RST sent when the application aborts carries an ACK of RCV.NXT
    /// (Linux tcp_send_active_reset); RFC 9293 3.10.5's RST has none.
    pub abort_rst_ack: bool,
    /// `SO_SNDBUF` sets twice the size asked, at least 4,608 bytes, to leave
    /// room for bookkeeping (Linux sock_setsockopt; socket(7)). Read by the
    /// socket layer (drill), not the engine.
    pub so_sndbuf_doubles: bool,
    /// `sendto()` with an address on an unconnected socket connects first
    /// and queues the data behind the SYN (FreeBSD tcp_usr_send's implied
    /// connect). Read by the socket layer (drill), not the engine.
    pub sendto_connects: bool,
    /// TCP_INFO as FreeBSD fills it (tcp_fill_info): `tcpi_state` in BSD's
    /// TCPS_* numbering and FreeBSD's fields only. Read by drill.
    pub tcp_info_bsd: bool,
    /// An ICMP error counts only when the sequence number it quotes is
    /// below SND.MAX (FreeBSD tcp_ctlinput); Linux's tcp_v4_err also takes
    /// SND.NXT itself.
    pub icmp_seq_below_max: bool,
    /// ICMP errors as FreeBSD's tcp_ctlinput sorts them: only port or
    /// protocol unreachable, administratively prohibited and TTL exceeded in
    /// transit end a connection in SYN-SENT (with `icmp_may_rst`); the rest,
    /// and any in SYN-RECEIVED, are soft errors. Off: Linux's tcp_v4_err.
    pub icmp_bsd: bool,
    /// After the third retransmission timeout of a SYN, send it and what
    /// follows without window scale, timestamps and SACK-permitted, in case a
    /// middlebox drops options it does not know (FreeBSD
    /// net.inet.tcp.rexmit_drop_options, tcp_timer.c tcp_timer_rexmt).
    pub syn_rexmit_drop_options: bool,
    /// With `icmp_bsd`, those ICMP errors end a connection in SYN-SENT
    /// (FreeBSD net.inet.tcp.icmp_may_rst, on by default).
    pub icmp_may_rst: bool,
    /// Send no TCP options at all, not even MSS in the SYN (FreeBSD's
    /// TCP_NOOPT, tcp(4); tcp_output.c skips tcp_addoptions under TF_NOOPT).
    pub no_options: bool,
    /// SYN retransmissions that still ask for ECN (FreeBSD
    /// net.inet.tcp.ecn.maxretries); later ones go without ECE and CWR.
    /// `None`: every one asks.
    pub ecn_syn_retries: Option<u32>,
    /// `TCP_FASTOPEN` on a socket that then connects turns client Fast Open
    /// on (FreeBSD tcp_usr_connect -> tcp_fastopen_connect); Linux's option
    /// is a listener's queue only. Read by the socket layer (drill).
    pub fastopen_sockopt_client: bool,
    /// How long a path whose SYN-ACK brought no valid cookie goes without
    /// Fast Open (FreeBSD tcp_fastopen_disable_path, path_disable_time);
    /// `None`: never, the cached cookie is kept (Linux). Read by the host's
    /// cookie cache.
    pub fastopen_path_disable: Option<Duration>,
    /// Maximum segment lifetime; TIME-WAIT lasts 2 x MSL (RFC 9293 3.4.2).
    pub msl: Duration,
    /// Initial congestion window in segments (RFC 6928: 10).
    pub initial_window: u32,
    /// Options offered in the SYN.
    pub options: OptionSet,
    /// When to send (see `policy::send`).
    pub send_policy: SendPolicyKind,
    /// When to acknowledge (see `policy::ack`).
    pub ack_policy: AckPolicyKind,
    /// Delayed-ACK timer (RFC 1122 4.2.3.2: at most 500 ms; BSD 200 ms; Solaris
    /// tcp_deferred_ack_interval; Davids, "TCP -- Either Fast or Efficient").
    pub delack: Duration,
    /// The quickack policy's least ACK timeout and its timeout after quick-ACK
    /// mode (Linux tcp.h TCP_ATO_MIN = TCP_DELACK_MIN, HZ/25: 40 ms).
    pub ato_min: Duration,
    /// ACK at once on every Nth data segment (RFC 1122 4.2.3.2, RFC 5681 4.2: 2).
    pub delack_segments: u32,
    /// Which segments count toward `delack_segments`: any (BSD, Cheshire) or
    /// only full-sized ones (RFC 1122 4.2.3.2's wording).
    pub delack_count: DelackCount,
    /// Free-running delayed-ACK tick (BSD fast timer 200 ms, lwIP 250 ms): a
    /// deferred ACK leaves at the next tick. `None`: an exact one-shot `delack`.
    pub delack_tick: Option<Duration>,
    /// Announce a window opened by a read at once (RFC 1122 4.2.3.3) or let it
    /// wait for the ACK policy (Tops-20, Westfield 003).
    pub window_update: WindowUpdate,
    /// Which window each segment offers: RFC 1122 4.2.3.3's held right edge,
    /// BSD's all free space, or Linux's rule (see `WindowAdvertise`).
    pub window_advertise: WindowAdvertise,
    /// `adaptive` ACK policy: delay = k x SRTT (Doupnik 1.6: "one or two round trip times").
    pub adaptive_k: f64,
    /// `adaptive` ACK policy: least delay.
    pub adaptive_min: Duration,
    /// `adaptive` ACK policy: greatest delay (RFC 1122 4.2.3.2: at most 500 ms).
    pub adaptive_max: Duration,
    /// Reaction to repaired losses (RFC 1106 4.2).
    pub loss_is: LossIs,
    /// Slow-start growth (RFC 1106 4.2).
    pub slow_start: SlowStart,
    /// Duplicate ACKs that trigger fast retransmit (RFC 5681 3.2: 3).
    pub dupack_threshold: u32,
    /// Builds the congestion controller (RFC 5681/6582 NewReno by default);
    /// another `cc::CongestionControl` plugs in here.
    pub congestion: CcFactory,
    /// Loss-recovery modules (RFC 6937 PRR); none by default.
    pub recovery: RecoverySet,
    /// Record the why-trace (hold/release and ACK decisions); off on the hot path.
    pub trace: bool,
    /// Per-connection cap on receive-buffer memory: the engine never allocates
    /// or advertises more (RFC 1106 5: big windows exhaust host memory). 16 MiB.
    pub buffer_cap: usize,
    /// Set by the driver: what the host still has for this connection's
    /// receive buffer (RFC 1106 5; the simulator's per-host `memory`). `None`: no limit.
    pub host_budget: Option<usize>,
    /// A listener's backlog: half-open connections (SYN-RECEIVED) it keeps
    /// before SYNs get cookies or are dropped (RFC 4987 3.1). `None`: no limit.
    pub backlog: Option<u32>,
    /// Past the backlog, answer SYNs with SYN cookies (RFC 4987 3.6) rather
    /// than drop them (Linux `tcp_syncookies = 1`, its default).
    pub syn_cookies: bool,
    /// RFC 5961 checks: an in-window but inexact RST (3.2) or any SYN (4.2)
    /// gets a challenge ACK, and ACKs outside [SND.UNA - MAX.SND.WND, SND.MAX]
    /// are dropped (5.2). Off: RFC 793 behaviour, like FreeBSD's insecure_rst/insecure_syn.
    pub rfc5961: bool,
    /// RFC 5961 7: least time between challenge ACKs and ACKs answering
    /// unacceptable data-less segments (Linux tcp_invalid_ratelimit, 500 ms). Zero: no limit.
    pub invalid_ack_interval: Duration,
    /// Most out-of-order ranges held for reassembly; a segment that would start
    /// one more is dropped (FreeBSD net.inet.tcp.reass.maxqueuelen: 100).
    pub max_ooo_ranges: usize,
    /// Linux's PSH placement: besides the end of the application's data, PSH
    /// also marks the last segment a window (cwnd or the peer's) lets out while
    /// more of a write waits (data sent with MSG_MORE, and segments sent in
    /// loss recovery or by limited transmit, excepted), and the segment a send
    /// policy's timer releases (a cork's cap: tcp_write_wakeup). Off: PSH marks
    /// the end of application data only (RFC 9293 3.9.1).
    pub psh_at_window_limit: bool,
    /// Linux's TSO packets: new data leaves in packets of the pacing rate's
    /// size, at least this many segments (tcp_write_xmit cuts at
    /// tcp_tso_autosize; net.ipv4.tcp_min_tso_segs = 2), and a packet of two
    /// or more carries PSH on its last segment, as Linux 6.18 sends; a lone
    /// segment, or a retransmission, has PSH only at the end of application
    /// data. This replaces `psh_at_window_limit`'s window rule (its timer
    /// rule stays). 0: no such packets (RFC 9293 3.9.1).
    pub tso_segs: u32,
    /// Drop a segment whose ACK is beyond SND.NXT without answering it, as
    /// Linux's tcp_ack does (RFC 9293 3.10.7.4 and RFC 5961 5.2 say to send
    /// an ACK). Off: answer it (rate-limited by `invalid_ack_interval`).
    pub silent_unsent_ack: bool,
    /// TCP Fast Open (RFC 7413), client and server; off by default.
    pub fast_open: crate::fastopen::FastOpenConfig,
    /// Added to a tail loss probe's 2 SRTT when more than one segment is in
    /// flight: 0 in RFC 8985 7.2; Linux adds TCP_TIMEOUT_MIN, 2 ms
    /// (tcp_output.c tcp_schedule_loss_probe), so a probe never fires at once
    /// on a path with no measurable RTT.
    pub tlp_extra: Duration,
    /// The buffer size the window-scale shift is chosen for; `None`: the
    /// receive buffer. FreeBSD picks the shift for kern.ipc.maxsockbuf, so a
    /// 64 KiB buffer still offers shift 6 (tcp_usrreq.c tcp_connect).
    pub wscale_buf: Option<usize>,
    /// Round both socket buffers up to a multiple of the MSS once the peer's
    /// is known, as FreeBSD does (tcp_input.c tcp_mss: roundup(sb_hiwat, mss)).
    pub buf_round_mss: bool,
    /// Report duplicate data with D-SACK (RFC 2883), keeping the receiver's
    /// SACK list as FreeBSD does (tcp_sack.c tcp_update_dsack_list). Off:
    /// SACK blocks cover held out-of-order data only (RFC 2018).
    pub dsack: bool,
    /// Report a segment that repeats sequence space below RCV.NXT with one
    /// D-SACK block (RFC 2883 4) on the next segment only, ahead of the
    /// out-of-order blocks, as Linux's tcp_dsack_set and tcp_send_dupack do.
    /// Off: no D-SACK unless `dsack` keeps FreeBSD's list.
    pub dsack_single: bool,
    /// Every ACK sent while our FIN is unacknowledged carries the FIN again,
    /// at its own sequence number, as FreeBSD's tcp_output.c does. Off: a
    /// pure ACK (RFC 9293).
    pub ack_repeats_fin: bool,
    /// With RFC 5961 off, a SYN in the window resets the connection from its
    /// own SND.NXT and RCV.NXT, and a SYN outside it gets a bare ACK, as
    /// FreeBSD's tcp_drop and tcp_respond do. Off: RFC 793's reply to the SYN.
    pub syn_reset_tcb: bool,
    /// The acceptability test's window is the larger of the receive
    /// buffer's free space and the window advertised, as FreeBSD's
    /// tcp_input.c computes rcv_wnd. Off: the advertised window (RFC 9293 3.10.7.4).
    pub rcv_wnd_free: bool,
    /// TIME-WAIT as FreeBSD's tcp_timewait.c tcp_twcheck: a SYN above RCV.NXT
    /// closes it for the listener, other segments without ACK are dropped
    /// and anything but an exact duplicate ACK is ACKed.
    pub time_wait_bsd: bool,
    /// An explicit push (clearing TCP_CORK, setting TCP_NODELAY) ends the
    /// data set, so its last byte gets PSH (Doupnik 2.0). Off, as in Linux:
    /// tcp_push_pending_frames sends what waits and marks nothing, so data a
    /// MSG_MORE send left goes without PSH (tcp.c tcp_sendmsg_locked marks it).
    pub flush_ends_data: bool,
    /// Going back after a timeout, a SACK block counts only in whole
    /// segments: one that starts less than an MSS past the resent segment's
    /// start does not shorten it, and the segment goes whole, as Linux's
    /// tcp_input.c tcp_match_skb_to_sack rounds a partial SACK up to a whole
    /// MSS and then neither splits nor marks the skb. Off: skip exactly the
    /// SACKed bytes (RFC 6675 5.1).
    pub sack_whole_segments: bool,
    /// PRR's slow-start bound grants its extra MSS only on an ACK that
    /// advances SND.UNA (SafeACK of the PRR update,
    /// draft-ietf-tcpm-prr-rfc6937bis; Linux's tcp_cwnd_reduction). Off: on
    /// every ACK, as RFC 6937 3 writes PRR-SSRB.
    pub prr_safe_ack: bool,
    /// An ACK below SND.UNA still delivers its SACK blocks during SACK
    /// recovery (Linux's tcp_ack, old-ACK branch). Off: such an ACK is
    /// ignored whole (RFC 9293 3.10.7.4).
    pub old_ack_sack: bool,
    /// Whether cwnd grows while the sender does not use it (off: every ACK
    /// of new data grows it; `linux`: tcp_is_cwnd_limited's rule, and growth
    /// by segments newly delivered, not again for those SACKed before).
    pub cwnd_validation: crate::cc::CwndValidation,
    /// CUBIC's arithmetic when `congestion` is CUBIC: RFC 9438's (default) or
    /// Linux's tcp_cubic.c (whole segments, 5 % per RTT before any loss).
    pub cubic: crate::cc::CubicVariant,
    /// Restart from a smaller window after an idle period longer than the RTO
    /// (RFC 5681 4.1; RFC 2861's halving per RTO idle, as Linux's
    /// tcp_cwnd_restart under net.ipv4.tcp_slow_start_after_idle = 1). Off:
    /// cwnd survives idle periods.
    pub slow_start_after_idle: bool,
    /// In SYN-SENT, refuse with a reset a SYN-ACK whose TSecr is not between
    /// our first SYN's TSval and now (Linux tcp_rcv_synsent_state_process,
    /// PAWSActiveRejected). Off: the echo is not checked (RFC 7323).
    pub syn_ack_paws: bool,
    /// A simultaneous open answers with its own SYN again, options as first
    /// offered, and takes the peer's SYN-ACK of all it sent in SYN-RECEIVED,
    /// acknowledging its duplicate SYN (Linux tcp_send_synack,
    /// tcp_validate_incoming). Off: RFC 9293 3.10.7.3's SYN-ACK answers what
    /// the peer offered, and the SYN-ACK, below RCV.NXT, is dropped with an ACK.
    pub simultaneous_synack: bool,
    /// A Fast Open child's unacknowledged SYN-ACK takes none of the peer's
    /// window or of cwnd: Linux's tcp_create_openreq_child starts its SND.UNA
    /// at ISS + 1. Off: the SYN's sequence counts in flight until acknowledged.
    pub tfo_child_syn_outside_window: bool,
    /// Drop every segment with both SYN and FIN set, in TIME-WAIT too
    /// (FreeBSD tcp(4) net.inet.tcp.drop_synfin; off as RFC 9293).
    pub drop_syn_fin: bool,
    /// A RST in CLOSING or LAST-ACK reports ECONNRESET to the application
    /// (Linux tcp_reset; FreeBSD tcp_do_segment, tcp_close after so_error).
    /// Off: RFC 9293 3.10.7.4 closes without a user signal.
    pub closing_rst_error: bool,
    /// The peer's UDP port when segments travel encapsulated in UDP
    /// (RFC 6951 5.1's encapsulation, FreeBSD TCP_REMOTE_UDP_ENCAPS_PORT); 0: plain TCP.
    pub udp_encaps_port: u16,
    /// MSS bytes the UDP encapsulation costs while `udp_encaps_port` is set
    /// (FreeBSD net.inet.tcp.udp_tunneling_overhead: the 8-byte UDP header by default).
    pub udp_tunneling_overhead: u16,
    /// On an ICMP "fragmentation needed" that lowers the MSS, go back to
    /// SND.UNA and send again at once in the smaller segments (FreeBSD
    /// tcp_subr.c tcp_mtudisc). Off: the segments sent stay for loss recovery.
    pub pmtu_resend: bool,
    /// TCP_MAXSEG on a synchronized connection lowers the MSS it sends with
    /// (FreeBSD tcp_usrreq.c t_maxseg). Off: TCP_MAXSEG is for the handshake.
    pub maxseg_live: bool,
    /// SO_KEEPALIVE: probe a connection idle this long (RFC 1122 4.2.3.6;
    /// off by default, as the RFC requires).
    pub keepalive: bool,
    /// Idle time before the first keep-alive probe (RFC 1122 4.2.3.6: no
    /// less than two hours by default; TCP_KEEPIDLE).
    pub keepalive_idle: Duration,
    /// Time between unanswered keep-alive probes (TCP_KEEPINTVL).
    pub keepalive_intvl: Duration,
    /// Unanswered keep-alive probes before the connection is dropped (TCP_KEEPCNT).
    pub keepalive_probes: u32,
    /// An active open not synchronized this long after connect() is dropped
    /// with ETIMEDOUT (FreeBSD tcp(4) TCP_KEEPINIT); None: only `syn_retries`
    /// limits it.
    pub connect_timeout: Option<Duration>,
    /// How a zero window is probed: one byte of new data (RFC 9293 3.8.6.1,
    /// the default) or a bare ACK carrying SND.UNA - 1, which the peer must
    /// answer with its window (Linux tcp_write_wakeup, tcp_xmit_probe_skb).
    pub window_probe: WindowProbe,
    /// What `snd_buf` limits: every byte not yet acknowledged (BSD, Linux) or
    /// only the bytes not yet sent (the Mentat TCP of Solaris).
    pub snd_buf_counts: SndBufCounts,
}

/// The bytes the send buffer's limit counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SndBufCounts {
    /// Unacknowledged and unsent bytes: BSD's sb_hiwat, Linux's sk_sndbuf.
    #[default]
    Queued,
    /// Unsent bytes only: sent, unacknowledged bytes do not count (illumos
    /// tcp_impl.h TCP_UNSENT_BYTES against conn_sndbuf, the Mentat TCP).
    Unsent,
}

impl SndBufCounts {
    pub fn name(self) -> &'static str {
        match self {
            SndBufCounts::Queued => "queued",
            SndBufCounts::Unsent => "unsent",
        }
    }
}

impl std::str::FromStr for SndBufCounts {
    type Err = String;
    /// `"queued"` or `"unsent"`.
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "queued" => Ok(SndBufCounts::Queued),
            "unsent" => Ok(SndBufCounts::Unsent),
            _ => Err(format!(
                "unknown snd_buf_counts {s:?}{} (expected \"queued\" or \"unsent\")",
                crate::suggest::did_you_mean(s, ["queued", "unsent"])
            )),
        }
    }
}

/// The segment a zero-window probe is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum WindowProbe {
    /// One byte beyond the window (RFC 9293 3.8.6.1).
    #[default]
    Byte,
    /// An ACK with an already acknowledged sequence number and no data (Linux).
    OldSeq,
}

impl std::str::FromStr for WindowProbe {
    type Err = String;
    /// `"byte"` or `"old-seq"`.
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "byte" => Ok(WindowProbe::Byte),
            "old-seq" => Ok(WindowProbe::OldSeq),
            _ => Err(format!(
                "unknown window_probe {s:?}{} (expected \"byte\" or \"old-seq\")",
                crate::suggest::did_you_mean(s, ["byte", "old-seq"])
            )),
        }
    }
}

impl Default for Config {
    fn default() -> Self {
        Config {
            mss: 1460,
            rcv_buf: 64 * 1024,
            snd_buf: 256 * 1024,
            rto_min: Duration::from_secs(1),
            rto_floor: crate::rtt::RtoFloor::Rto,
            rto_slop: Duration::ZERO,
            rto_max: Duration::from_secs(60),
            rto_initial: Duration::from_secs(1),
            rto_tick: None,
            max_retries: 15,
            orphan_retries: 0,
            syn_retries: 6,
            synack_retries: 6,
            abort_rst_ack: false,
            so_sndbuf_doubles: false,
            sendto_connects: false,
            tcp_info_bsd: false,
            icmp_seq_below_max: false,
            icmp_bsd: false,
            syn_rexmit_drop_options: false,
            icmp_may_rst: true,
            no_options: false,
            ecn_syn_retries: None,
            fastopen_sockopt_client: false,
            fastopen_path_disable: None,
            msl: Duration::from_secs(30),
            initial_window: 10,
            options: OptionSet::default(),
            send_policy: SendPolicyKind::default(),
            ack_policy: AckPolicyKind::default(),
            delack: Duration::from_millis(200),
            ato_min: crate::policy::ack::QUICKACK_ATO_MIN,
            delack_segments: 2,
            delack_count: DelackCount::Any,
            delack_tick: None,
            window_update: WindowUpdate::Immediate,
            window_advertise: WindowAdvertise::Rfc1122,
            adaptive_k: 1.0,
            adaptive_min: Duration::from_millis(1),
            adaptive_max: Duration::from_millis(500),
            loss_is: LossIs::Congestion,
            slow_start: SlowStart::Standard,
            dupack_threshold: 3,
            congestion: CcFactory::default(),
            recovery: RecoverySet::default(),
            trace: false,
            buffer_cap: 16 << 20,
            host_budget: None,
            backlog: None,
            syn_cookies: true,
            rfc5961: true,
            invalid_ack_interval: Duration::from_millis(500),
            max_ooo_ranges: crate::recv_buf::DEFAULT_MAX_OOO_RANGES,
            psh_at_window_limit: false,
            tso_segs: 0,
            silent_unsent_ack: false,
            fast_open: crate::fastopen::FastOpenConfig::default(),
            tlp_extra: Duration::ZERO,
            wscale_buf: None,
            buf_round_mss: false,
            dsack: false,
            dsack_single: false,
            ack_repeats_fin: false,
            syn_reset_tcb: false,
            rcv_wnd_free: false,
            time_wait_bsd: false,
            flush_ends_data: true,
            sack_whole_segments: false,
            prr_safe_ack: false,
            old_ack_sack: false,
            cwnd_validation: crate::cc::CwndValidation::Off,
            cubic: crate::cc::CubicVariant::Rfc9438,
            slow_start_after_idle: false,
            syn_ack_paws: false,
            simultaneous_synack: false,
            tfo_child_syn_outside_window: false,
            drop_syn_fin: false,
            closing_rst_error: false,
            udp_encaps_port: 0,
            udp_tunneling_overhead: 8,
            pmtu_resend: false,
            maxseg_live: false,
            keepalive: false,
            keepalive_idle: Duration::from_secs(7200),
            keepalive_intvl: Duration::from_secs(75),
            keepalive_probes: 8,
            connect_timeout: None,
            window_probe: WindowProbe::Byte,
            snd_buf_counts: SndBufCounts::Queued,
        }
    }
}

/// A setting that cannot work, named.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{key}: {msg}")]
pub struct ConfigError {
    pub key: &'static str,
    pub msg: String,
}

impl Config {
    /// Checks ranges; drivers call this before opening a connection.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let err = |key, msg: &str| {
            Err(ConfigError {
                key,
                msg: msg.to_string(),
            })
        };
        if self.mss < 64 {
            return err("mss", "must be at least 64 bytes");
        }
        // A window under one MSS is legal (a small host may offer 500 bytes);
        // the sender copes by RFC 1122 4.2.3.4 (SWS avoidance, override timer).
        if self.rcv_buf == 0 {
            return err("rcv_buf", "must be at least 1 byte");
        }
        if self.rcv_buf > (1 << 30) {
            return err("rcv_buf", "must be at most 1 GiB (2^30, RFC 7323 2.3)");
        }
        if self.buffer_cap < self.mss as usize {
            return err("buffer_cap", "must hold at least one MSS");
        }
        if self.snd_buf == 0 {
            return err("snd_buf", "must be positive");
        }
        if self.delack > Duration::from_millis(500) {
            return err(
                "delack",
                "must be at most 500ms (RFC 1122 4.2.3.2: an ACK must not be delayed longer)",
            );
        }
        if self.ato_min.is_zero() || self.ato_min > Duration::from_millis(500) {
            return err(
                "ato_min",
                "must be positive and at most 500ms (RFC 1122 4.2.3.2: an ACK must not be delayed longer)",
            );
        }
        if self.delack_segments == 0 {
            return err("delack_segments", "must be at least 1");
        }
        if let Some(t) = self.delack_tick {
            if t.is_zero() {
                return err(
                    "delack_tick",
                    "must be positive (leave it out for the exact one-shot timer)",
                );
            }
            if t > Duration::from_millis(500) {
                return err(
                    "delack_tick",
                    "must be at most 500ms (RFC 1122 4.2.3.2: an ACK must not be delayed longer)",
                );
            }
        }
        if !(self.adaptive_k.is_finite() && self.adaptive_k > 0.0) {
            return err("adaptive_k", "must be a positive number of RTTs");
        }
        if self.adaptive_max > Duration::from_millis(500) {
            return err(
                "adaptive_max",
                "must be at most 500ms (RFC 1122 4.2.3.2: an ACK must not be delayed longer)",
            );
        }
        if self.adaptive_min > self.adaptive_max {
            return err("adaptive_min", "must not exceed adaptive_max");
        }
        if self.rto_min > self.rto_max {
            return err("rto_min", "must not exceed rto_max");
        }
        if self.rto_min.is_zero() {
            return err("rto_min", "must be positive");
        }
        if let Some(t) = self.rto_tick {
            if t.is_zero() || t > Duration::from_secs(1) {
                return err(
                    "rto_tick",
                    "must be between 1us and 1s (leave it out for an exact timer)",
                );
            }
        }
        if self.initial_window == 0 {
            return err("initial_window", "must be at least 1 segment");
        }
        if self.dupack_threshold == 0 {
            return err("dupack_threshold", "must be at least 1");
        }
        if self.max_ooo_ranges == 0 {
            return err("max_ooo_ranges", "must be at least 1");
        }
        Ok(())
    }
}
