//! Host settings from a script's shell lines: the upstream suite's
//! `common/defaults.sh` under `--stack linux`, and the sysctls scripts set
//! themselves (`sysctl -q net.ipv4.X=N`, `set_sysctls.py /proc/sys/...=N`,
//! FreeBSD's `sysctl -w net.inet.tcp.insecure_rst=1`). The shell line is
//! never run; the settings the engine models apply to sockets created after
//! it, and the rest are reported as not modelled.

use crate::stack::Stack;
use tinygram_proto::settings::{self, Kind, Value};
use tinygram_proto::Config;

/// What `common/defaults.sh` sets that the engine models, with the value
/// (google/packetdrill gtests/net/common/defaults.sh).
const DEFAULTS_SH: &[(&str, &str)] = &[
    ("net.ipv4.tcp_wmem", "4096 262144 4194304"),
    ("net.ipv4.tcp_timestamps", "1"),
    ("net.ipv4.tcp_syn_retries", "5"),
    ("net.ipv4.tcp_synack_retries", "5"),
    ("net.ipv4.tcp_sack", "1"),
    ("net.ipv4.tcp_reordering", "3"),
    ("net.ipv4.tcp_congestion_control", "cubic"),
    ("net.ipv4.tcp_slow_start_after_idle", "0"),
    ("net.ipv4.tcp_ecn", "0"),
    ("net.ipv4.tcp_notsent_lowat", "4294967295"),
    ("net.ipv4.tcp_fastopen", "0x70403"),
    (
        "net.ipv4.tcp_fastopen_key",
        "a1a1a1a1-b2b2b2b2-c3c3c3c3-d4d4d4d4",
    ),
];

/// What `common/defaults.sh` sets that the engine does not model.
const DEFAULTS_SH_NOT_MODELLED: &str = "tcp_rmem (autotuning), tcp_frto, tcp_dsack, tcp_fack, \
tcp_early_retrans/tcp_recovery (RACK, TLP), tcp_tso_win_divisor, \
tcp_ecn_option, pacing ratios, tcp_syncookies, the qdisc";

/// Sysctls that set one engine setting (a row of the settings table): the
/// sysctl, the setting, and how its text reads (`None`: not a value the
/// engine takes, reported as not modelled). Documentation/networking/ip-sysctl.rst;
/// FreeBSD tcp(4) and sys/kern/uipc_sockbuf.c (sb_max).
const SETTING_SYSCTLS: &[(&str, &str, ReadValue)] = &[
    // min default max: a new socket's send buffer is the default.
    ("net.ipv4.tcp_wmem", "snd_buf", |v| {
        v.split_whitespace().nth(1)?.parse().ok().map(Value::Count)
    }),
    ("net.ipv4.tcp_congestion_control", "congestion", |v| {
        Some(Value::Name(v.trim().to_string()))
    }),
    ("net.ipv4.tcp_syn_retries", "syn_retries", |v| {
        v.trim().parse().ok().map(Value::Count)
    }),
    ("net.ipv4.tcp_synack_retries", "synack_retries", |v| {
        v.trim().parse().ok().map(Value::Count)
    }),
    ("net.ipv4.tcp_reordering", "dupack_threshold", |v| {
        v.trim().parse().ok().map(Value::Count)
    }),
    (
        "net.ipv4.tcp_slow_start_after_idle",
        "slow_start_after_idle",
        |v| v.trim().parse::<u64>().ok().map(|n| Value::Flag(n != 0)),
    ),
    // FreeBSD: the window-scale shift is chosen for sb_max.
    ("kern.ipc.maxsockbuf", "wscale_buf", positive),
    ("net.inet.tcp.recvspace", "rcv_buf", positive),
    ("net.inet.tcp.sendspace", "snd_buf", positive),
    ("net.inet.tcp.ecn.maxretries", "ecn_syn_retries", |v| {
        v.trim().parse().ok().map(Value::Count)
    }),
    // FreeBSD tcp(4): the keep-alive times in milliseconds
    // (sysctl_msec_to_ticks refuses less than a tick), the count as is.
    ("net.inet.tcp.drop_synfin", "drop_syn_fin", |v| {
        v.trim().parse::<u64>().ok().map(|n| Value::Flag(n != 0))
    }),
    (
        "net.inet.tcp.udp_tunneling_overhead",
        "udp_tunneling_overhead",
        positive,
    ),
    (
        "net.inet.tcp.rexmit_drop_options",
        "syn_rexmit_drop_options",
        |v| v.trim().parse::<u64>().ok().map(|n| Value::Flag(n != 0)),
    ),
    ("net.inet.tcp.icmp_may_rst", "icmp_may_rst", |v| {
        v.trim().parse::<u64>().ok().map(|n| Value::Flag(n != 0))
    }),
    ("net.inet.tcp.keepidle", "keepalive_idle", millis),
    ("net.inet.tcp.keepintvl", "keepalive_intvl", millis),
    ("net.inet.tcp.keepinit", "connect_timeout", millis),
    ("net.inet.tcp.keepcnt", "keepalive_probes", positive),
];

/// How a sysctl's text reads as a setting's value.
type ReadValue = fn(&str) -> Option<Value>;

/// A positive whole number.
fn positive(v: &str) -> Option<Value> {
    v.trim()
        .parse::<u64>()
        .ok()
        .filter(|&n| n > 0)
        .map(Value::Count)
}

/// A positive number of milliseconds.
fn millis(v: &str) -> Option<Value> {
    v.trim()
        .parse::<u64>()
        .ok()
        .filter(|&n| n > 0)
        .map(|n| Value::Time(tinygram_proto::Duration::from_millis(n)))
}

/// net.ipv4.tcp_fastopen bits (ip-sysctl.rst): client on.
pub(crate) const TFO_CLIENT: u32 = 0x1;
/// Server on, for listeners that set TCP_FASTOPEN.
pub(crate) const TFO_SERVER: u32 = 0x2;
/// Client sends SYN data without a cookie.
pub(crate) const TFO_CLIENT_NO_COOKIE: u32 = 0x4;
/// Server takes SYN data without a cookie.
pub(crate) const TFO_SERVER_NO_COOKIE: u32 = 0x200;
/// Server on for every listener, TCP_FASTOPEN or not.
pub(crate) const TFO_SERVER_ALL: u32 = 0x400;

/// Settings the script's shell lines changed, applied to each new socket.
#[derive(Clone, Debug, Default)]
pub(crate) struct HostSysctls {
    /// Engine settings the lines set ([`SETTING_SYSCTLS`]), the latest per setting.
    settings: Vec<(&'static str, Value)>,
    timestamps: Option<bool>,
    sack: Option<bool>,
    rfc5961_rst: Option<bool>,
    rfc5961_syn: Option<bool>,
    /// net.ipv4.tcp_fastopen's bits (ip-sysctl.rst); Linux's default is 1.
    fastopen: Option<u32>,
    /// net.ipv4.tcp_fastopen_key, as the cookie function takes it.
    fastopen_key: Option<[u8; 16]>,
    /// net.ipv4.tcp_notsent_lowat (ip-sysctl.rst; UINT_MAX: no limit).
    notsent_lowat: Option<u64>,
    /// FreeBSD net.inet.tcp.fastopen.client_enable (default 1).
    bsd_fastopen_client: Option<bool>,
    /// net.ipv4.tcp_ecn (ip-sysctl.rst): 0 off, 1 request and accept ECN,
    /// 2 accept it only when an incoming SYN asks for it.
    ecn: Option<u32>,
    /// FreeBSD net.inet.tcp.udp_tunneling_port: the local UDP port TCP over
    /// UDP runs on (0, the default: none).
    udp_tunneling_port: u16,
    /// FreeBSD net.inet.tcp.syncookies_only: answer every SYN with a cookie
    /// and keep no syncache entry.
    syncookies_only: bool,
}

/// What a shell line amounted to.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Applied {
    /// Settings now in force, as `name=value`.
    pub modelled: Vec<String>,
    /// Settings (or commands) the runner does not model.
    pub not_modelled: Vec<String>,
    /// The line flushes the Fast Open cookie cache (`ip tcp_metrics flush`,
    /// or tcp_fastopen_cookies set, which Linux's cache follows).
    pub flush_tfo_cache: bool,
}

impl HostSysctls {
    /// Reads one backtick command.
    pub(crate) fn apply_command(&mut self, cmd: &str, stack: Stack) -> Applied {
        let mut out = Applied::default();
        let words: Vec<&str> = cmd.split_whitespace().collect();
        let mut i = 0;
        while i < words.len() {
            let w = words[i].trim_matches(|c| c == '"' || c == '\'');
            i += 1;
            // `ip tcp_metrics flush all`: the metrics cache holds the cookies
            // (net/ipv4/tcp_metrics.c, tcp_fastopen_cache_get).
            if w == "tcp_metrics" && words.get(i).is_some_and(|n| *n == "flush") {
                out.flush_tfo_cache = true;
                out.modelled.push("ip tcp_metrics flush".to_string());
                i += 1;
                continue;
            }
            if w.ends_with("defaults.sh") {
                if stack == Stack::linux() {
                    for (k, v) in DEFAULTS_SH {
                        self.set(k, v, &mut out);
                    }
                    out.not_modelled
                        .push(format!("defaults.sh: {DEFAULTS_SH_NOT_MODELLED}"));
                } else {
                    out.not_modelled.push(format!(
                        "{w} (Linux's defaults; modelled under --stack linux only)"
                    ));
                }
                continue;
            }
            let Some((k, v)) = w.split_once('=') else {
                continue;
            };
            let key = k.trim_start_matches("/proc/sys/").replace('/', ".");
            if !key.starts_with("net.") && key != "kern.ipc.maxsockbuf" {
                out.not_modelled.push(w.to_string());
                continue;
            }
            // `tcp_wmem="4096 16384 ..."`: the value runs to the closing quote.
            let mut value = v.trim_matches('"').to_string();
            if v.starts_with('"') && !v[1..].contains('"') {
                while i < words.len() {
                    let part = words[i];
                    i += 1;
                    value.push(' ');
                    value.push_str(part.trim_end_matches('"'));
                    if part.ends_with('"') {
                        break;
                    }
                }
            }
            self.set(&key, &value, &mut out);
        }
        out
    }

    /// Records one `name=value`, if the engine models it.
    fn set(&mut self, key: &str, value: &str, out: &mut Applied) {
        if let Some((_, name, read)) = SETTING_SYSCTLS.iter().find(|(k, _, _)| *k == key) {
            let shown = format!("{key}={value}");
            let Ok(st) = settings::find(name) else {
                out.not_modelled.push(shown);
                return;
            };
            // Checked against the table now, so `configure` cannot fail.
            let checked = read(value).map(|v| (st.set(&mut Config::default(), v.clone()), v));
            match checked {
                // A name the engine does not know leaves the setting as it was.
                Some((Err(e), _)) if st.kind == Kind::Name => {
                    out.not_modelled.push(format!("{key}: {e}"));
                    return;
                }
                Some((Ok(()), v)) => {
                    self.settings.retain(|(n, _)| n != name);
                    self.settings.push((name, v));
                    out.modelled.push(shown);
                }
                // Any other value the engine cannot take undoes an earlier line's.
                _ => {
                    self.settings.retain(|(n, _)| n != name);
                    out.not_modelled.push(shown);
                }
            }
            return;
        }
        let num = value.trim().parse::<u64>().ok();
        let flag = num.map(|n| n != 0);
        let ok = match key {
            "net.ipv4.tcp_notsent_lowat" => {
                self.notsent_lowat = num.filter(|&n| n <= u64::from(u32::MAX));
                self.notsent_lowat.is_some()
            }
            "net.ipv4.tcp_timestamps" => {
                self.timestamps = flag;
                flag.is_some()
            }
            "net.ipv4.tcp_sack" => {
                self.sack = flag;
                flag.is_some()
            }
            "net.ipv4.tcp_fastopen" => {
                let v = value.trim();
                self.fastopen = match v.strip_prefix("0x") {
                    Some(hex) => u32::from_str_radix(hex, 16).ok(),
                    None => v.parse().ok(),
                };
                self.fastopen.is_some()
            }
            // A cookie-cache size (not in mainline Linux, where the same
            // script line falls back to `ip tcp_metrics flush all`): setting
            // it empties the cache.
            "net.ipv4.tcp_fastopen_cookies" => {
                out.flush_tfo_cache = true;
                num.is_some()
            }
            "net.ipv4.tcp_fastopen_key" => match tinygram_proto::fastopen::parse_key(value) {
                Ok(k) => {
                    self.fastopen_key = Some(k);
                    true
                }
                Err(e) => {
                    out.not_modelled.push(format!("{key}: {e}"));
                    return;
                }
            },
            "net.ipv4.tcp_ecn" => {
                self.ecn = num.and_then(|n| u32::try_from(n).ok()).filter(|&n| n <= 2);
                self.ecn.is_some()
            }
            // FreeBSD tcp_fastopen.c sysctl_net_inet_tcp_fastopen_client_enable:
            // turning the client off empties the cookie cache.
            "net.inet.tcp.fastopen.client_enable" => {
                if flag == Some(false) {
                    out.flush_tfo_cache = true;
                }
                self.bsd_fastopen_client = flag;
                flag.is_some()
            }
            // FreeBSD tcp(4) net.inet.tcp.syncookies_only: only the UDP port a
            // cookie does not hold is modelled (see crate::encaps).
            "net.inet.tcp.syncookies_only" => {
                self.syncookies_only = flag == Some(true);
                if flag.is_some() {
                    out.modelled.push(format!(
                        "{key}={value} (only that a cookie holds no UDP encapsulation port; \
                         the listener still keeps its SYN-RECEIVED state)"
                    ));
                    return;
                }
                false
            }
            // FreeBSD tcp(4) net.inet.tcp.udp_tunneling_port, 0 to 65535.
            "net.inet.tcp.udp_tunneling_port" => match num.and_then(|n| u16::try_from(n).ok()) {
                Some(p) => {
                    self.udp_tunneling_port = p;
                    true
                }
                None => false,
            },
            // FreeBSD tcp(4): insecure_rst=1 / insecure_syn=1 turn RFC 5961's
            // RST / SYN checks off.
            "net.inet.tcp.insecure_rst" => {
                self.rfc5961_rst = flag.map(|f| !f);
                flag.is_some()
            }
            "net.inet.tcp.insecure_syn" => {
                self.rfc5961_syn = flag.map(|f| !f);
                flag.is_some()
            }
            _ => false,
        };
        let shown = format!("{key}={value}");
        if ok {
            out.modelled.push(shown);
        } else {
            out.not_modelled.push(shown);
        }
    }

    /// FreeBSD net.inet.tcp.udp_tunneling_port: TCP over UDP's local port (0: none).
    pub(crate) fn udp_tunneling_port(&self) -> u16 {
        self.udp_tunneling_port
    }

    /// FreeBSD net.inet.tcp.syncookies_only is on.
    pub(crate) fn syncookies_only(&self) -> bool {
        self.syncookies_only
    }

    /// Applies the settings to a new socket's configuration.
    pub(crate) fn configure(&self, cfg: &mut Config) {
        for (name, v) in &self.settings {
            if let Err(e) = settings::set(cfg, name, v.clone()) {
                debug_assert!(false, "{name}: {e}");
            }
        }
        if let Some(t) = self.timestamps {
            cfg.options.timestamps = t;
        }
        if let Some(s) = self.sack {
            cfg.options.sack = s;
        }
        // The engine has one switch for RFC 5961's checks: either insecure_*
        // sysctl turns them all off.
        if self.rfc5961_rst == Some(false) || self.rfc5961_syn == Some(false) {
            if let Err(e) = settings::set(cfg, "rfc5961", Value::Flag(false)) {
                debug_assert!(false, "rfc5961: {e}");
            }
        }
    }

    /// FreeBSD's client Fast Open switch (net.inet.tcp.fastopen.client_enable, on by default).
    pub(crate) fn bsd_fastopen_client(&self) -> bool {
        self.bsd_fastopen_client.unwrap_or(true)
    }

    /// net.ipv4.tcp_notsent_lowat, if a shell line set it.
    pub(crate) fn notsent_lowat(&self) -> Option<u64> {
        self.notsent_lowat
    }

    /// net.ipv4.tcp_fastopen: what the script set, else Linux's default (1,
    /// client only).
    pub(crate) fn fastopen_bits(&self) -> u32 {
        self.fastopen.unwrap_or(TFO_CLIENT)
    }

    /// The server key: tcp_fastopen_key, else a fixed stand-in for the
    /// kernel's random key (no script can know that one).
    pub(crate) fn fastopen_key(&self) -> [u8; 16] {
        self.fastopen_key.unwrap_or([0x5a; 16])
    }

    /// RFC 3168 6.1.1 negotiation as net.ipv4.tcp_ecn sets it, when a line
    /// set it: a listener (`passive`) accepts ECN under 1 and 2, an active
    /// open asks for it under 1 only (tcp_ecn_create_request, tcp_ecn_send_syn).
    pub(crate) fn apply_ecn(&self, cfg: &mut Config, passive: bool) {
        if let Some(v) = self.ecn {
            cfg.options.ecn = v == 1 || (passive && v == 2);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_sh_under_linux_sets_what_the_engine_models() {
        let mut h = HostSysctls::default();
        let a = h.apply_command("../common/defaults.sh", Stack::linux());
        assert!(a
            .modelled
            .contains(&"net.ipv4.tcp_syn_retries=5".to_string()));
        assert!(a.not_modelled[0].contains("tcp_frto"));
        let mut cfg = Config {
            syn_retries: 6,
            ..Config::default()
        };
        h.configure(&mut cfg);
        assert_eq!((cfg.syn_retries, cfg.snd_buf), (5, 262_144));
        let mut h = HostSysctls::default();
        let a = h.apply_command("../common/defaults.sh", Stack::rfc());
        assert!(a.modelled.is_empty() && a.not_modelled.len() == 1);
    }

    #[test]
    fn freebsd_buffer_sysctls_set_the_socket_defaults() {
        let mut h = HostSysctls::default();
        let a = h.apply_command(
            "sysctl -w kern.ipc.maxsockbuf=73728 net.inet.tcp.recvspace=8192 net.inet.tcp.sendspace=4096",
            "freebsd".parse().unwrap(),
        );
        assert_eq!(a.modelled.len(), 3, "{a:?}");
        let mut cfg = Config::default();
        h.configure(&mut cfg);
        assert_eq!(
            (cfg.wscale_buf, cfg.rcv_buf, cfg.snd_buf),
            (Some(73728), 8192, 4096)
        );
        // Nonsense values are reported as not modelled.
        let a = h.apply_command("sysctl -w kern.ipc.maxsockbuf=0", Stack::rfc());
        assert_eq!(a.not_modelled, ["kern.ipc.maxsockbuf=0"]);
    }

    #[test]
    fn freebsd_keepalive_sysctls_read_milliseconds() {
        let mut h = HostSysctls::default();
        let a = h.apply_command(
            "sysctl -w net.inet.tcp.keepidle=15000 net.inet.tcp.keepintvl=2500 \
             net.inet.tcp.keepinit=75000 net.inet.tcp.keepcnt=2",
            "freebsd".parse().unwrap(),
        );
        assert_eq!(a.modelled.len(), 4, "{a:?}");
        let mut cfg = Config::default();
        h.configure(&mut cfg);
        let ms = tinygram_proto::Duration::from_millis;
        assert_eq!(cfg.keepalive_idle, ms(15_000));
        assert_eq!(cfg.keepalive_intvl, ms(2_500));
        assert_eq!(cfg.connect_timeout, Some(ms(75_000)));
        assert_eq!(cfg.keepalive_probes, 2);
        h.apply_command("sysctl -w net.inet.tcp.drop_synfin=1", Stack::rfc());
        h.configure(&mut cfg);
        assert!(cfg.drop_syn_fin);
        // Less than a tick is refused (sysctl_msec_to_ticks).
        let a = h.apply_command("sysctl -w net.inet.tcp.keepinit=0", Stack::rfc());
        assert_eq!(a.not_modelled, ["net.inet.tcp.keepinit=0"]);
    }

    #[test]
    fn sysctl_forms_and_freebsd_insecure_lines() {
        let mut h = HostSysctls::default();
        let a = h.apply_command(
            "../common/defaults.sh ../common/set_sysctls.py /proc/sys/net/ipv4/tcp_reordering=5 \
             /proc/sys/net/ipv4/tcp_min_tso_segs=10",
            Stack::rfc(),
        );
        assert_eq!(a.modelled, ["net.ipv4.tcp_reordering=5"]);
        assert!(a
            .not_modelled
            .iter()
            .any(|s| s.contains("tcp_min_tso_segs")));
        let a = h.apply_command(
            "sysctl -q net.ipv4.tcp_wmem=\"4096 65536 4194304\"",
            Stack::linux(),
        );
        assert_eq!(a.modelled, ["net.ipv4.tcp_wmem=4096 65536 4194304"]);
        let mut cfg = Config::default();
        h.configure(&mut cfg);
        assert_eq!((cfg.dupack_threshold, cfg.snd_buf), (5, 65_536));
        assert!(cfg.rfc5961);
        h.apply_command("sysctl -q net.ipv4.tcp_ecn=2", Stack::linux());
        let (mut active, mut passive) = (cfg.clone(), cfg.clone());
        h.apply_ecn(&mut active, false);
        h.apply_ecn(&mut passive, true);
        assert!(!active.options.ecn && passive.options.ecn);
        h.apply_command("sysctl -w net.inet.tcp.insecure_rst=1", Stack::rfc());
        h.configure(&mut cfg);
        assert!(!cfg.rfc5961);
    }
}
