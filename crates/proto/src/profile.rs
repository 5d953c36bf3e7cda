//! Stack profiles: named sets of host settings, each value with its source.
//!
//! A profile is data: one table of (key, value, source) rows, the keys and
//! value syntax of a scenario host (`tinygram scenario`). It is applied to
//! [`Config::default()`] before a scenario's own host keys, a drill script's
//! setsockopts or `tun --set`, so anything set explicitly overrides it. A
//! value no document or source fixes says so: its source starts with
//! `assumption:`.

use crate::config::Config;
use core::fmt;

/// One setting of a profile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Setting {
    /// A scenario host key (`send_policy`, `delack`, ...).
    pub key: &'static str,
    /// Its value in scenario syntax, without quotes (`"200ms"`, `"nagle"`, `"wscale,timestamps"`).
    pub value: &'static str,
    /// Where the value comes from: document and section, man page, or kernel
    /// source file and function; `assumption: ...` when nothing documents it.
    pub source: &'static str,
}

impl Setting {
    /// Whether no source documents the value.
    pub fn is_assumption(&self) -> bool {
        self.source.starts_with("assumption")
    }
}

/// A named stack: whose behaviour a host takes.
#[derive(Debug, PartialEq, Eq)]
pub struct Profile {
    /// The name used in `profile = "..."`, `--stack` and `tun --set profile=...`.
    pub name: &'static str,
    /// Other names accepted for it (`tinygram` for `rfc`).
    pub aliases: &'static [&'static str],
    /// The system it stands for, in one line.
    pub describes: &'static str,
    /// Settings shared with related profiles, applied first.
    pub base: &'static [Setting],
    /// This profile's own settings, applied over `Config::default()` and `base`.
    pub settings: &'static [Setting],
}

impl Profile {
    /// The configuration this profile gives: `Config::default()` with its settings.
    pub fn config(&self) -> Config {
        let mut c = Config::default();
        self.apply(&mut c);
        c
    }

    /// Applies the settings to `c`. The table is checked by the unit tests
    /// (every value parses and the result validates), so this cannot fail.
    pub fn apply(&self, c: &mut Config) {
        for s in self.rows() {
            if let Err(e) = set(c, s.key, s.value) {
                debug_assert!(false, "profile {}: {}: {e}", self.name, s.key);
            }
        }
    }

    /// The rows in effect: `base` rows this profile does not set itself, then its own.
    pub fn rows(&self) -> impl Iterator<Item = &'static Setting> + '_ {
        let own = self.settings;
        self.base
            .iter()
            .filter(move |b| !own.iter().any(|s| s.key == b.key))
            .chain(own.iter())
    }

    /// The row setting `key`, if this profile sets it.
    pub fn get(&self, key: &str) -> Option<&'static Setting> {
        self.rows().filter(|s| s.key == key).last()
    }

    /// The names this profile answers to.
    pub fn names(&self) -> impl Iterator<Item = &'static str> {
        core::iter::once(self.name).chain(self.aliases.iter().copied())
    }
}

impl fmt::Display for Profile {
    /// The profile in detail: a header line, then one `key = value  (source)` line per setting.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.name)?;
        if !self.aliases.is_empty() {
            write!(f, " (also: {})", self.aliases.join(", "))?;
        }
        writeln!(f, ": {}", self.describes)?;
        let width = self
            .rows()
            .map(|s| s.key.len() + s.value.len())
            .max()
            .unwrap_or(0);
        for s in self.rows() {
            let pad = width - s.key.len() - s.value.len();
            writeln!(
                f,
                "  {} = {}{:pad$}  {}",
                s.key,
                s.value,
                "",
                s.source,
                pad = pad
            )?;
        }
        Ok(())
    }
}

/// Finds a profile by name or alias; an unknown name gets a did-you-mean and the list.
pub fn find(name: &str) -> Result<&'static Profile, String> {
    if let Some(p) = PROFILES.iter().find(|p| p.names().any(|n| n == name)) {
        return Ok(p);
    }
    let all = PROFILES.iter().flat_map(|p| p.names());
    Err(format!(
        "unknown profile {name:?}{} (expected one of: {}; `tinygram profiles` lists them)",
        crate::suggest::did_you_mean(name, all),
        PROFILES
            .iter()
            .map(|p| p.name)
            .collect::<Vec<_>>()
            .join(", ")
    ))
}

/// Sets one setting from its profile-syntax text (the table's value column):
/// [`crate::settings::set_text`], so a profile may set any row of the settings table.
pub fn set(c: &mut Config, key: &str, value: &str) -> Result<(), String> {
    crate::settings::set_text(c, key, value)
}

/// Shorthand for the table.
const fn s(key: &'static str, value: &'static str, source: &'static str) -> Setting {
    Setting { key, value, source }
}

/// Every profile. `rfc` comes first: it is the default.
pub const PROFILES: &[Profile] = &[
    RFC,
    LINUX,
    FREEBSD,
    FREEBSD3,
    UW7,
    SOLARIS7,
    LINUX22,
    MACOSX_TIGER,
    MACOSX,
    WINDOWS_XP,
    BSD43_TAHOE,
];

/// The engine's own defaults: the RFCs' rules (the default profile).
pub const RFC: Profile = Profile {
    name: "rfc",
    aliases: &["tinygram"],
    describes: "the engine's defaults: the RFCs' rules where they give one (the default)",
    base: &[],
    settings: &[
        s(
            "mss",
            "1460",
            "RFC 9293 3.7.1, RFC 6691: Ethernet MTU 1500 - 40",
        ),
        s("send_policy", "nagle", "RFC 896; RFC 1122 4.2.3.4"),
        s("ack_policy", "delayed", "RFC 1122 4.2.3.2; RFC 5681 4.2"),
        s(
            "delack",
            "200ms",
            "RFC 1122 4.2.3.2 (at most 500 ms); BSD's 200 ms",
        ),
        s(
            "delack_segments",
            "2",
            "RFC 1122 4.2.3.2; RFC 5681 4.2: ACK every second segment",
        ),
        s("window_update", "immediate", "RFC 1122 4.2.3.3"),
        s(
            "window_advertise",
            "rfc1122",
            "RFC 1122 4.2.3.3: the right edge moves by min(1/2 window, MSS)",
        ),
        s("rcv_buf", "65536", "assumption: the classic 64 KiB buffer"),
        s("rto_min", "1s", "RFC 6298 2.4"),
        s(
            "rto_floor",
            "rto",
            "RFC 6298 2.4: the whole RTO is rounded up to the minimum",
        ),
        s("rto_max", "60s", "RFC 6298 2.5"),
        s("rto_initial", "1s", "RFC 6298 2.1"),
        s("initial_window", "10", "RFC 6928"),
        s("dupack_threshold", "3", "RFC 5681 3.2"),
    ],
};

/// Linux 6.x, as far as the engine models it.
pub const LINUX: Profile = Profile {
    name: "linux",
    aliases: &[],
    describes: "Linux 6.x defaults (net.ipv4 sysctls, include/net/tcp.h)",
    base: &[],
    settings: &[
        s("mss", "1460", "tcp_output.c tcp_advertise_mss: route MTU 1500 - 40"),
        s("send_policy", "minshall", "tcp_output.c tcp_nagle_check, tcp_minshall_check"),
        s("ack_policy", "quickack", "tcp_input.c __tcp_ack_snd_check, tcp_incr_quickack; tcp_output.c tcp_send_delayed_ack"),
        s("options", "wscale,timestamps,sack", "net.ipv4.tcp_window_scaling, tcp_timestamps, tcp_sack = 1 (ip-sysctl.rst)"),
        s("rcv_buf", "65536", "assumption: tcp_rmem[1] 131072 with tcp_adv_win_scale 1 offers about 64 KiB; autotuning is not modelled"),
        s("initial_window", "10", "include/net/tcp.h TCP_INIT_CWND"),
        s("keepalive_probes", "9", "net.ipv4.tcp_keepalive_probes (include/net/tcp.h TCP_KEEPALIVE_PROBES)"),
        s("closing_rst_error", "true", "tcp_input.c tcp_reset: sk_err = ECONNRESET in CLOSING and LAST-ACK too (ECONNREFUSED in SYN-SENT, EPIPE in CLOSE-WAIT)"),
        s("syn_ack_paws", "true", "tcp_input.c tcp_rcv_synsent_state_process: a SYN-ACK echoing a TSval we never sent is reset"),
        s("simultaneous_synack", "true", "tcp_output.c tcp_send_synack resends the SYN skb; tcp_input.c tcp_validate_incoming lets the peer's SYN-ACK pass in SYN-RECV"),
        s("tfo_child_syn_outside_window", "true", "tcp_minisocks.c tcp_create_openreq_child: a Fast Open child's snd_una starts at the SYN-ACK's ISS + 1"),
        s("dsack_single", "true", "net.ipv4.tcp_dsack = 1: tcp_input.c tcp_dsack_set from tcp_send_dupack and tcp_data_queue; tcp_output.c sends it once"),
        s("rto_min", "200ms", "include/net/tcp.h TCP_RTO_MIN (HZ/5)"),
        s("rto_floor", "variance", "tcp_input.c tcp_set_rto: RTO = SRTT + max(4 x RTTVAR, tcp_rto_min)"),
        s("rto_max", "120s", "include/net/tcp.h TCP_RTO_MAX"),
        s("rto_initial", "1s", "include/net/tcp.h TCP_TIMEOUT_INIT"),
        s("max_retries", "15", "net.ipv4.tcp_retries2"),
        s("syn_retries", "6", "net.ipv4.tcp_syn_retries (TCP_SYN_RETRIES)"),
        s("synack_retries", "5", "net.ipv4.tcp_synack_retries (TCP_SYNACK_RETRIES, include/net/tcp.h)"),
        s("abort_rst_ack", "true", "tcp_output.c tcp_send_active_reset: RST|ACK"),
        s("so_sndbuf_doubles", "true", "net/core/sock.c sock_setsockopt: 2 x the value, SOCK_MIN_SNDBUF floor"),
        s("msl", "30s", "include/net/tcp.h TCP_TIMEWAIT_LEN 60 s = 2 MSL"),
        s("dupack_threshold", "3", "net.ipv4.tcp_reordering (TCP_FASTRETRANS_THRESH)"),
        s("window_advertise", "linux", "tcp_output.c __tcp_select_window: free space, a multiple of the MSS without window scaling"),
        s("window_update", "doubling", "tcp.c tcp_cleanup_rbuf: ACK after a read only if the window at least doubles"),
        s("congestion", "cubic", "net.ipv4.tcp_congestion_control = cubic, the default since 2.6.19 (RFC 9438)"),
        s("window_probe", "old-seq", "tcp_output.c tcp_write_wakeup, tcp_xmit_probe_skb: a zero window is probed with SND.UNA - 1 and no data"),
        s("cubic", "linux", "tcp_cubic.c bictcp_update, tcp_cong_avoid_ai: the curve in whole segments and jiffies"),
        s("slow_start", "hystart", "tcp_cubic.c hystart = 1, hystart_detect = ACK train and delay increase"),
        s("psh_at_window_limit", "true", "tcp_output.c tcp_write_wakeup: PSH on data a send policy's timer releases (the window rule yields to tso_segs)"),
        s("tso_segs", "2", "tcp_output.c tcp_write_xmit, tcp_tso_autosize: new data in TSO packets of net.ipv4.tcp_min_tso_segs = 2 segments at a path's pacing rate; Linux 6.18 sends each with PSH"),
        s("silent_unsent_ack", "true", "tcp_input.c tcp_ack: an ACK of data not yet sent is dropped without a reply"),
        s("tlp_extra", "2ms", "tcp_output.c tcp_schedule_loss_probe: TCP_TIMEOUT_MIN on top of 2 SRTT"),
        s("flush_ends_data", "false", "tcp.c tcp_push_pending_frames (uncork, TCP_NODELAY) sends without tcp_mark_push"),
        s("sack_whole_segments", "true", "tcp_input.c tcp_match_skb_to_sack: a partial SACK is rounded to whole MSS; less than one does not split the skb"),
        s("prr_safe_ack", "true", "tcp_input.c tcp_cwnd_reduction: PRR's extra segment only if FLAG_SND_UNA_ADVANCED"),
        s("old_ack_sack", "true", "tcp_input.c tcp_ack: an ACK below SND.UNA still has its SACK blocks tagged in recovery"),
        s("cwnd_validation", "linux", "include/net/tcp.h tcp_is_cwnd_limited, tcp_output.c tcp_cwnd_validate: cwnd grows only when cwnd-limited, or in slow start below twice the segments out"),
        s("recovery", "prr,tlp,rack", "tcp_input.c tcp_cwnd_reduction: PRR (RFC 6937), always on since 3.2; tcp_output.c tcp_schedule_loss_probe: TLP (net.ipv4.tcp_early_retrans = 3); tcp_recovery.c tcp_rack_detect_loss: RACK (RFC 8985, net.ipv4.tcp_recovery = 1)"),
    ],
};

/// FreeBSD 14.x defaults (tcp(4)).
pub const FREEBSD: Profile = Profile {
    name: "freebsd",
    aliases: &[],
    describes:
        "FreeBSD 14.x defaults (tcp(4) sysctls; RFC 5961 checks on, as the engine's default)",
    base: &[],
    settings: &[
        s("mss", "1460", "tcp_subr.c tcp_mss: interface MTU 1500 - 40"),
        s(
            "send_policy",
            "nagle",
            "tcp_output.c tcp_default_output: a runt goes only when idle and it empties the buffer",
        ),
        s(
            "ack_policy",
            "delayed",
            "tcp_input.c DELAY_ACK (net.inet.tcp.delayed_ack = 1)",
        ),
        s(
            "delack",
            "40ms",
            "tcp_timer.h TCPTV_DELACK (hz/25); net.inet.tcp.delacktime",
        ),
        s(
            "delack_segments",
            "2",
            "tcp_input.c: a second segment while TF_DELACK is set sends the ACK",
        ),
        s(
            "delack_count",
            "any",
            "tcp_input.c DELAY_ACK: any in-order segment up to t_maxseg",
        ),
        s(
            "window_advertise",
            "bsd",
            "tcp_output.c: recwin < sb_hiwat / 4 && recwin < t_maxseg -> 0, else all free space",
        ),
        s(
            "window_update",
            "immediate",
            "tcp_output.c: send if adv >= 2 * t_maxseg or 2 * adv >= sb_hiwat",
        ),
        s("rcv_buf", "65536", "tcp(4) net.inet.tcp.recvspace"),
        s("snd_buf", "32768", "tcp(4) net.inet.tcp.sendspace"),
        s(
            "wscale_buf",
            "2097152",
            "tcp_usrreq.c tcp_connect: the shift is chosen for kern.ipc.maxsockbuf (sb_max, 2 MiB), not the buffer",
        ),
        s(
            "buf_round_mss",
            "true",
            "tcp_input.c tcp_mss: both buffers rounded up to a multiple of the MSS (65536 -> 65700)",
        ),
        s(
            "dsack",
            "true",
            "tcp_input.c tcp_do_segment, tcp_sack.c tcp_update_dsack_list: duplicates reported first (RFC 2883)",
        ),
        s(
            "ack_repeats_fin",
            "true",
            "tcp_output.c tcp_default_output: tcp_outflags keep FIN until it is acked; a resent FIN reuses its sequence number",
        ),
        s(
            "syn_reset_tcb",
            "true",
            "tcp_input.c tcp_do_segment: insecure_syn's in-window SYN -> tcp_drop (RST from snd_nxt, rcv_nxt); else tcp_respond's ACK",
        ),
        s(
            "rcv_wnd_free",
            "true",
            "tcp_input.c tcp_input_with_port: rcv_wnd = imax(sbspace(&so->so_rcv), rcv_adv - rcv_nxt)",
        ),
        s(
            "time_wait_bsd",
            "true",
            "tcp_timewait.c tcp_twcheck: no ACK bit -> drop; ACK all but an exact duplicate ACK",
        ),
        s(
            "sendto_connects",
            "true",
            "tcp_usrreq.c tcp_usr_send: a send with an address on an unconnected socket connects (implied connect)",
        ),
        s(
            "tcp_info_bsd",
            "true",
            "tcp_usrreq.c tcp_fill_info: tcpi_state = t_state (tcp_fsm.h TCPS_*)",
        ),
        s(
            "icmp_seq_below_max",
            "true",
            "tcp_subr.c tcp_ctlinput: SEQ_GEQ(icmp_tcp_seq, snd_una) && SEQ_LT(icmp_tcp_seq, snd_max)",
        ),
        s(
            "icmp_bsd",
            "true",
            "tcp_subr.c tcp_ctlinput: tcp_drop_syn_sent for PRC_UNREACH_PORT/PROTOCOL/ADMIN_PROHIB and PRC_TIMXCEED_INTRANS only, tcp_notify's soft error otherwise",
        ),
        s(
            "ecn_syn_retries",
            "1",
            "tcp_output.c: ECE|CWR on a retransmitted SYN only while t_rxtshift <= net.inet.tcp.ecn.maxretries (default 1)",
        ),
        s(
            "connect_timeout",
            "75s",
            "tcp(4) net.inet.tcp.keepinit (tcp_timer.h TCPTV_KEEP_INIT): tcp_timer_keep drops an open not established by then",
        ),
        s("keepalive_idle", "7200s", "tcp(4) net.inet.tcp.keepidle (tcp_timer.h TCPTV_KEEP_IDLE)"),
        s("keepalive_intvl", "75s", "tcp(4) net.inet.tcp.keepintvl (tcp_timer.h TCPTV_KEEPINTVL)"),
        s("keepalive_probes", "8", "tcp(4) net.inet.tcp.keepcnt (tcp_timer.h TCPTV_KEEPCNT)"),
        s("closing_rst_error", "true", "tcp_input.c tcp_do_segment: a RST in CLOSING or LAST-ACK sets so_error ECONNRESET before tcp_close"),
        s(
            "fastopen_sockopt_client",
            "true",
            "tcp_usrreq.c tcp_usr_connect: TF_FASTOPEN (set by TCP_FASTOPEN) -> tcp_fastopen_connect",
        ),
        s(
            "fastopen_path_disable",
            "900s",
            "tcp_fastopen.c: net.inet.tcp.fastopen.path_disable_time (TCP_FASTOPEN_PATH_DISABLE_TIME_DEFAULT 900 s)",
        ),
        s(
            "options",
            "wscale,timestamps,sack",
            "tcp(4) net.inet.tcp.rfc1323 = 1, net.inet.tcp.sack.enable = 1",
        ),
        s(
            "initial_window",
            "10",
            "tcp(4) net.inet.tcp.initcwnd_segments",
        ),
        s(
            "pmtu_resend",
            "true",
            "tcp_subr.c tcp_mtudisc: snd_nxt = snd_una, then tcp_output, on a smaller path MTU",
        ),
        s(
            "maxseg_live",
            "true",
            "tcp_usrreq.c TCP_MAXSEG: t_maxseg = optval on a live connection",
        ),
        s("rto_min", "30ms", "tcp(4) net.inet.tcp.rexmit_min"),
        s("rto_floor", "rto", "tcp_var.h TCP_REXMTVAL: max(t_rttmin, SRTT + 4 x RTTVAR)"),
        s("rto_slop", "200ms", "tcp_timer.h TCPT_RANGESET adds tcp_rexmit_slop (net.inet.tcp.rexmit_slop, 200 ms)"),
        s("rto_initial", "1s", "tcp(4) net.inet.tcp.rexmit_initial"),
        s("rto_max", "64s", "tcp_timer.h TCPTV_REXMTMAX"),
        s("msl", "30s", "tcp(4) net.inet.tcp.msl"),
        s("dupack_threshold", "3", "tcp_input.c tcprexmtthresh"),
    ],
};

/// 4.4BSD-derived settings shared by the BSD profiles of the 1990s.
const BSD_1990S: [Setting; 9] = [
    s(
        "send_policy",
        "nagle",
        "4.4BSD tcp_output.c: a runt goes only when idle (strict Nagle; Doupnik 1.3)",
    ),
    s("ack_policy", "delayed", "4.4BSD tcp_input.c TF_DELACK"),
    s(
        "delack",
        "200ms",
        "4.4BSD tcp_fasttimo, every 200 ms (PR_FASTHZ 5)",
    ),
    s(
        "delack_tick",
        "200ms",
        "4.4BSD tcp_fasttimo: delayed ACKs leave on a free-running 200 ms tick",
    ),
    s(
        "delack_segments",
        "4294967295",
        "4.4BSD tcp_input.c TCP_REASS: in-order data only sets TF_DELACK; every other segment is ACKed by the window update after the read (tcp_output.c: adv >= 2 * t_maxseg)",
    ),
    s(
        "window_advertise",
        "bsd",
        "4.4BSD tcp_output.c: all free space unless under sb_hiwat/4 and t_maxseg",
    ),
    s(
        "window_update",
        "immediate",
        "4.4BSD tcp_output.c: adv >= 2 * t_maxseg or 2 * adv >= sb_hiwat",
    ),
    s("dupack_threshold", "3", "4.4BSD tcp_input.c tcprexmtthresh"),
    s("rto_floor", "rto", "4.4BSD tcp_timer.h TCPT_RANGESET(t_rxtcur, TCP_REXMTVAL, t_rttmin, ...): the whole RTO is floored"),
];

/// Doupnik's FreeBSD 3.2 host.
pub const FREEBSD3: Profile = Profile {
    name: "freebsd3",
    aliases: &["freebsd32"],
    describes:
        "FreeBSD 3.2 (Doupnik, A new TCP transmission policy, 3.0); RTO timer ticks not modelled",
    base: &BSD_1990S,
    settings: &[
        s(
            "delack",
            "200ms",
            "Doupnik 3.0: 200ms delayed ACK; tcp_fasttimo tick",
        ),
        s("send_policy", "nagle", "Doupnik 3.0: strict Nagle mode"),
        s(
            "mss",
            "1460",
            "Doupnik 3.0: 100 Mb/s Ethernet, MTU 1500 - 40",
        ),
        s(
            "rcv_buf",
            "16384",
            "FreeBSD 3.x tcp_usrreq.c tcp_recvspace = 1024*16 (Doupnik varies rwnd per test)",
        ),
        s(
            "snd_buf",
            "16384",
            "FreeBSD 3.x tcp_usrreq.c tcp_sendspace = 1024*16",
        ),
        s(
            "options",
            "wscale,timestamps",
            "FreeBSD 3.x tcp_subr.c tcp_do_rfc1323 = 1 (no SACK before 5.x)",
        ),
        s(
            "initial_window",
            "1",
            "FreeBSD 3.x tcp_input.c tcp_mss: snd_cwnd = one segment (RFC 2001)",
        ),
        s(
            "rto_min",
            "1s",
            "tcp_timer.h TCPTV_MIN: 2 slow ticks of 500 ms",
        ),
        s("rto_initial", "3s", "tcp_timer.h TCPTV_SRTTDFLT"),
        s("rto_max", "64s", "tcp_timer.h TCPTV_REXMTMAX"),
        s(
            "rto_tick",
            "500ms",
            "FreeBSD 3.x tcp_timer.c tcp_slowtimo (PR_SLOWHZ 2)",
        ),
    ],
};

/// Doupnik's UnixWare 7.0.1 host.
pub const UW7: Profile = Profile {
    name: "uw7",
    aliases: &["unixware7"],
    describes: "UnixWare 7.0.1 (Doupnik, A new TCP transmission policy, 3.0: source not available)",
    base: &BSD_1990S,
    settings: &[
        s("delack", "200ms", "Doupnik 3.0: 200ms delayed ACK"),
        s("send_policy", "nagle", "Doupnik 3.0: strict Nagle mode"),
        s(
            "delack_tick",
            "200ms",
            "assumption: a BSD-style 200 ms fast timer (source not available)",
        ),
        s(
            "window_advertise",
            "bsd",
            "assumption: a BSD-derived receiver (source not available)",
        ),
        s(
            "mss",
            "1460",
            "Doupnik 3.0: 100 Mb/s Ethernet, MTU 1500 - 40",
        ),
        s("rcv_buf", "32768", "Doupnik 3.0: 32KB receive window"),
        s("options", "none", "assumption: no RFC 1323 options"),
        s(
            "initial_window",
            "1",
            "assumption: one segment, as the BSD stacks of 1999 (RFC 2001)",
        ),
        s("rto_min", "1s", "assumption: BSD's TCPTV_MIN"),
        s("rto_initial", "3s", "assumption: BSD's TCPTV_SRTTDFLT"),
        s("rto_tick", "500ms", "assumption: BSD's 500 ms slow timeout"),
        // UnixWare's source was not available (Doupnik 3.0): the base's
        // 4.4BSD ACK rules are assumptions for it, and say so.
        s("ack_policy", "delayed", "assumption: as 4.4BSD tcp_input.c TF_DELACK (source not available)"),
        s(
            "delack_segments",
            "4294967295",
            "assumption: as 4.4BSD, no ACK on arrival; the window update after a read ACKs (source not available)",
        ),
        s(
            "window_update",
            "immediate",
            "assumption: as 4.4BSD tcp_output.c, adv >= 2 * t_maxseg or 2 * adv >= sb_hiwat (source not available)",
        ),
        s("dupack_threshold", "3", "assumption: as 4.4BSD tcprexmtthresh (source not available)"),
    ],
};

/// Solaris 7: Doupnik's host and Davids' traces.
pub const SOLARIS7: Profile = Profile {
    name: "solaris7",
    aliases: &[],
    describes: "Solaris 7 (Doupnik, A new TCP transmission policy, 3.0; Davids, TCP -- Either Fast or Efficient)",
    base: &[],
    settings: &[
        s("send_policy", "nagle-liberal", "Doupnik 3.0: liberal Nagle mode; Davids: Nagle below min(MSS, tcp_naglim_def)"),
        s("ack_policy", "delayed", "Davids: tcp_deferred_ack_interval"),
        s("delack", "50ms", "Davids: tcp_deferred_ack_interval 50 ms before Solaris 8; Doupnik 3.0: 50ms delayed ACK"),
        s("delack_segments", "2", "assumption: tcp_deferred_acks_max 2"),
        s("delack_count", "any", "assumption: any in-order segment counts, as BSD"),
        s("window_advertise", "bsd", "assumption: all free space on every segment (Mentat stack, source not public)"),
        s("window_update", "immediate", "assumption: as BSD"),
        s("mss", "1460", "Doupnik 3.0: 100 Mb/s Ethernet, MTU 1500 - 40"),
        s("rcv_buf", "8192", "Doupnik 3.0: 8KB receive window (ndd tcp_recv_hiwat 8192)"),
        s("snd_buf", "8192", "ndd tcp_xmit_hiwat 8192 (Solaris 7 default)"),
        s(
            "snd_buf_counts",
            "unsent",
            "inference: tcp_xmit_hiwat limits unsent bytes only in illumos tcp_impl.h TCP_UNSENT_BYTES, the Mentat TCP that Solaris 7's descends from",
        ),
        s("options", "none", "assumption: no RFC 1323 options by default (ndd tcp_tstamp_if_wscale)"),
        s("initial_window", "1", "assumption: ndd tcp_slow_start_initial 1"),
        s("rto_min", "200ms", "ndd tcp_rexmit_interval_min 200 ms (Solaris 7)"),
        s("rto_floor", "variance", "assumption: the engine's former rule (Solaris' source is not public)"),
        s("rto_initial", "3s", "ndd tcp_rexmit_interval_initial 3000 ms"),
        s("rto_max", "60s", "ndd tcp_rexmit_interval_max 60000 ms"),
    ],
};

/// Doupnik's Linux 2.2.5 host.
pub const LINUX22: Profile = Profile {
    name: "linux22",
    aliases: &["linux2.2"],
    describes: "Linux 2.2.5 (Doupnik, A new TCP transmission policy, 3.0)",
    base: &[],
    settings: &[
        s(
            "send_policy",
            "nagle-half",
            "2.2 include/net/tcp.h tcp_snd_test: Nagle holds only a segment under mss >> 1 (Doupnik 3.0 calls it liberal)",
        ),
        s(
            "ack_policy",
            "delayed",
            "Doupnik 3.0: dynamically adjusted delayed ACK",
        ),
        s(
            "delack",
            "10ms",
            "Doupnik 3.0: 10ms dynamically adjusted delayed ACK (held fixed here: assumption)",
        ),
        s(
            "delack_segments",
            "2",
            "2.2 tcp_input.c tcp_ack_snd_check: more than one full frame unacked",
        ),
        s(
            "window_advertise",
            "linux",
            "2.2 tcp_output.c __tcp_select_window: a multiple of the MSS",
        ),
        s(
            "window_update",
            "doubling",
            "assumption: 2.2 tcp.c cleanup_rbuf, the later rule",
        ),
        s(
            "mss",
            "1460",
            "Doupnik 3.0: 100 Mb/s Ethernet, MTU 1500 - 40",
        ),
        s("rcv_buf", "16384", "Doupnik 3.0: 16KB receive window"),
        s(
            "options",
            "wscale,timestamps,sack",
            "2.2 sysctl tcp_window_scaling, tcp_timestamps, tcp_sack = 1",
        ),
        s(
            "initial_window",
            "1",
            "assumption: 2.2 starts from one segment (RFC 2001)",
        ),
        s(
            "rto_min",
            "200ms",
            "2.2 include/net/tcp.h TCP_RTO_MIN (HZ/5)",
        ),
        s("rto_floor", "variance", "assumption: the engine's former rule (2.2's tcp_bound_rto floors the whole RTO)"),
        s(
            "rto_initial",
            "3s",
            "2.2 include/net/tcp.h TCP_TIMEOUT_INIT (3*HZ)",
        ),
        s("rto_max", "120s", "2.2 include/net/tcp.h TCP_RTO_MAX"),
    ],
};

/// Mac OS X settings Tiger and Leopard share (Cheshire, Nagle x delayed ACK);
/// they differ only in the send policy.
const XNU: [Setting; 13] = [
    s("ack_policy", "delayed", "Cheshire: delayed ACK"),
    s("delack", "200ms", "Cheshire: the 200ms pause"),
    s(
        "delack_segments",
        "2",
        "Cheshire: TCP will ACK every second packet immediately",
    ),
    s(
        "delack_count",
        "any",
        "Cheshire: a second packet gets an immediate ACK",
    ),
    s(
        "window_advertise",
        "bsd",
        "xnu tcp_output.c (from 4.4BSD): all free space",
    ),
    s(
        "window_update",
        "immediate",
        "xnu tcp_output.c (from 4.4BSD): adv >= 2 * t_maxseg",
    ),
    s(
        "mss",
        "1460",
        "Cheshire: Ethernet; 1448 bytes of data with the time-stamp option",
    ),
    s(
        "options",
        "wscale,timestamps",
        "Cheshire: adds a TCP time-stamp option (wscale: xnu net.inet.tcp.rfc1323)",
    ),
    s("rcv_buf", "65536", "assumption: xnu net.inet.tcp.recvspace"),
    s(
        "initial_window",
        "2",
        "assumption: xnu net.inet.tcp.slowstart_flightsize",
    ),
    s("rto_min", "1s", "assumption: xnu TCPTV_MIN, as 4.4BSD"),
    s(
        "rto_floor",
        "variance",
        "assumption: the engine's former rule (xnu TCPT_RANGESET floors the whole RTO)",
    ),
    s("rto_initial", "3s", "assumption: xnu TCPTV_SRTTDFLT"),
];

/// Mac OS X 10.4 "Tiger": Cheshire's failing host.
pub const MACOSX_TIGER: Profile = Profile {
    name: "macosx-tiger",
    aliases: &["macosx-10.4"],
    describes: "Mac OS X 10.4 Tiger, strict Nagle (Cheshire, Nagle x delayed ACK)",
    base: &XNU,
    settings: &[s(
        "send_policy",
        "nagle",
        "Cheshire: Nagle's algorithm before Leopard's Minshall change",
    )],
};

/// Mac OS X 10.5 "Leopard" and later: Minshall's Nagle.
pub const MACOSX: Profile = Profile {
    name: "macosx",
    aliases: &["macosx-leopard"],
    describes: "Mac OS X 10.5 Leopard and later, Minshall's Nagle (Cheshire, Nagle x delayed ACK)",
    base: &XNU,
    settings: &[s(
        "send_policy",
        "minshall",
        "Cheshire: Leopard and later implement Minshall's modification",
    )],
};

/// Windows XP: Cheshire's passing host.
pub const WINDOWS_XP: Profile = Profile {
    name: "windows-xp",
    aliases: &["winxp"],
    describes: "Windows XP (Cheshire, Nagle x delayed ACK: 1460-byte segments, no time stamps)",
    base: &[],
    settings: &[
        s("send_policy", "nagle", "Cheshire: Nagle's algorithm"),
        s(
            "ack_policy",
            "delayed",
            "Cheshire: delayed ACK; TcpAckFrequency 2",
        ),
        s(
            "delack",
            "200ms",
            "Microsoft TCP/IP implementation details: delayed ACK timer 200 ms",
        ),
        s(
            "delack_segments",
            "2",
            "Cheshire: ACK every second packet; TcpAckFrequency 2",
        ),
        s(
            "delack_count",
            "any",
            "Cheshire: a second packet gets an immediate ACK",
        ),
        s(
            "window_advertise",
            "bsd",
            "assumption: all free space on every segment",
        ),
        s("window_update", "immediate", "assumption: as BSD"),
        s(
            "mss",
            "1460",
            "Cheshire: on Windows the TCP segment size is 1460 bytes",
        ),
        s(
            "options",
            "sack",
            "Cheshire: no time-stamp option; SackOpts 1, Tcp1323Opts 0",
        ),
        s(
            "rcv_buf",
            "17520",
            "Microsoft TcpWindowSize: 17,520 bytes on Ethernet (12 x 1460)",
        ),
        s("initial_window", "2", "assumption: two segments (RFC 2581)"),
        s("rto_initial", "3s", "Microsoft TcpInitialRTT 3 s"),
        s(
            "rto_min",
            "200ms",
            "assumption: the engine's former default (Windows XP's minimum is not documented)",
        ),
        s(
            "rto_floor",
            "variance",
            "assumption: the engine's former rule",
        ),
    ],
};

/// 4.3BSD-Tahoe, the stack of RFC 1106's era.
pub const BSD43_TAHOE: Profile = Profile {
    name: "bsd43-tahoe",
    aliases: &["tahoe"],
    describes: "4.3BSD-Tahoe (RFC 1106's era): initial window 1, one segment after any loss, 500 ms timer ticks",
    base: &BSD_1990S,
    settings: &[
        s("mss", "512", "4.3BSD tcp_mss: TCP_MSS 512 off the local net"),
        s("rcv_buf", "4096", "4.3BSD tcp_usrreq.c tcp_recvspace = 1024*4"),
        s("snd_buf", "4096", "4.3BSD tcp_usrreq.c tcp_sendspace = 1024*4"),
        s("options", "none", "4.3BSD: MSS only (RFC 1323 came in 1992)"),
        s("initial_window", "1", "4.3BSD-Tahoe tcp_input.c: snd_cwnd = one segment (Jacobson 1988 slow start)"),
        s("rto_min", "1s", "4.3BSD tcp_timer.h TCPTV_MIN: 2 ticks of 500 ms"),
        s("rto_initial", "3s", "4.3BSD tcp_timer.h TCPTV_SRTTDFLT"),
        s("rto_max", "64s", "4.3BSD tcp_timer.h TCPTV_REXMTMAX"),
        s("rto_tick", "500ms", "4.3BSD tcp_timer.c tcp_slowtimo, every 500 ms (PR_SLOWHZ 2)"),
        s("congestion", "tahoe", "4.3BSD-Tahoe tcp_input.c: any loss sets snd_cwnd to one segment; no fast recovery (Jacobson 1988)"),
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::ack::WindowAdvertise;
    use crate::policy::{AckPolicyKind, SendPolicyKind};
    use crate::time::Duration;

    #[test]
    fn every_profile_applies_and_validates() {
        for p in PROFILES {
            let mut c = Config::default();
            for st in p.rows() {
                assert!(
                    crate::settings::find(st.key).is_ok(),
                    "{}: {} is not a setting",
                    p.name,
                    st.key
                );
                set(&mut c, st.key, st.value)
                    .unwrap_or_else(|e| panic!("{}: {}: {e}", p.name, st.key));
                assert!(
                    !st.source.trim().is_empty(),
                    "{}: {} has no source",
                    p.name,
                    st.key
                );
            }
            c.validate().unwrap_or_else(|e| panic!("{}: {e}", p.name));
        }
    }

    #[test]
    fn no_profile_sets_a_key_twice() {
        for p in PROFILES {
            for (i, a) in p.settings.iter().enumerate() {
                assert!(
                    !p.settings[i + 1..].iter().any(|b| b.key == a.key),
                    "{}: {} set twice",
                    p.name,
                    a.key
                );
            }
        }
    }

    #[test]
    fn historical_profiles_take_the_documents_values() {
        let c = find("solaris7").unwrap().config();
        assert_eq!(c.delack, Duration::from_millis(50));
        assert_eq!(c.rcv_buf, 8192);
        let c = find("freebsd3").unwrap().config();
        assert_eq!(c.window_advertise, WindowAdvertise::Bsd);
        assert_eq!(c.delack_tick, Some(Duration::from_millis(200)));
        assert_eq!(c.send_policy, SendPolicyKind::Nagle);
        // No input-side ACK of every second segment before FreeBSD's DELAY_ACK.
        assert_eq!(c.delack_segments, u32::MAX);
        assert_eq!(find("freebsd").unwrap().config().delack_segments, 2);
        let c = find("uw7").unwrap().config();
        assert_eq!(c.rcv_buf, 32768);
        assert_eq!(c.options, crate::config::OptionSet::default());
        let tiger = find("macosx-tiger").unwrap().config();
        let leopard = find("macosx").unwrap().config();
        assert_eq!(tiger.send_policy, SendPolicyKind::Nagle);
        assert_eq!(leopard.send_policy, SendPolicyKind::Minshall);
        assert!(tiger.options.timestamps);
        let xp = find("windows-xp").unwrap().config();
        assert!(!xp.options.timestamps);
        assert_eq!(xp.mss, 1460);
        let tahoe = find("bsd43-tahoe").unwrap().config();
        assert_eq!(tahoe.initial_window, 1);
        assert_eq!(tahoe.congestion.name(), "tahoe");
        assert_eq!(tahoe.rto_tick, Some(Duration::from_millis(500)));
        // UnixWare's source was not available: every uw7 value is the
        // paper's own or an assumption, never cited to another system's code.
        let uw7 = find("uw7").unwrap();
        for k in [
            "ack_policy",
            "delack_segments",
            "window_update",
            "dupack_threshold",
            "delack_tick",
        ] {
            assert!(uw7.get(k).unwrap().is_assumption(), "uw7 {k}");
        }
        // An assumption says so.
        assert!(find("uw7")
            .unwrap()
            .get("window_advertise")
            .unwrap()
            .is_assumption());
        assert!(!find("solaris7")
            .unwrap()
            .get("delack")
            .unwrap()
            .is_assumption());
    }

    #[test]
    fn names_are_unique() {
        let mut all: Vec<&str> = PROFILES.iter().flat_map(|p| p.names()).collect();
        let n = all.len();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), n);
        assert_eq!(PROFILES[0].name, "rfc");
    }

    #[test]
    fn rfc_is_the_default_config() {
        assert_eq!(
            format!("{:?}", RFC.config()),
            format!("{:?}", Config::default())
        );
        assert_eq!(find("tinygram").map(|p| p.name), Ok("rfc"));
    }

    #[test]
    fn linux_differs_where_linux_does() {
        let l = find("linux").unwrap().config();
        assert_eq!(l.ack_policy, AckPolicyKind::QuickAck);
        assert_eq!(l.send_policy, SendPolicyKind::Minshall);
        assert_eq!(l.rto_max, Duration::from_secs(120));
        assert!(l.options.timestamps && l.options.window_scale && l.options.sack);
    }

    #[test]
    fn unknown_names_and_values_are_named() {
        let e = find("linx").unwrap_err();
        assert!(e.contains("did you mean \"linux\"?"), "{e}");
        let mut c = Config::default();
        assert!(set(&mut c, "delack", "200").unwrap_err().contains("unit"));
        assert!(set(&mut c, "delak", "200ms")
            .unwrap_err()
            .contains("\"delack\""));
        assert!(set(&mut c, "mss", "big")
            .unwrap_err()
            .contains("whole number"));
    }
}
