//! The table of per-connection settings: every [`Config`] field a user may
//! set, once, with its name (a scenario host key), type, range, one-line doc
//! and source. Profiles, scenario host keys, `--set`, `tun --set` and drill's
//! sysctl lines all set a `Config` through [`set`] or [`set_text`]; the
//! default of each row is read from `Config::default()`.

use crate::cc::{CcFactory, CubicVariant, CwndValidation};
use crate::config::{Config, LossIs, OptionSet, RecoverySet, SlowStart, SndBufCounts, WindowProbe};
use crate::policy::ack::{DelackCount, WindowAdvertise, WindowUpdate};
use crate::policy::{AckPolicyKind, SendPolicyKind};
use crate::rtt::RtoFloor;
use crate::time::Duration;
use core::fmt;

/// The type of a setting's value, with its valid range where the type has one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `true` or `false`.
    Flag,
    /// A whole number from `min` to `max`.
    Count { min: u64, max: u64 },
    /// A whole number up to `max`, or `none`: no limit.
    Limit { max: u64 },
    /// A size in bytes up to `max`; `none` allowed when `none` is set.
    Bytes { max: u64, none: bool },
    /// A number with a fraction; `like` says what it counts ("a number of RTTs like 1.5").
    Number { like: &'static str },
    /// A duration; `none` allowed when `none` is set.
    Time { none: bool },
    /// One name out of a set (a policy, a controller).
    Name,
    /// A set of names (options offered, recovery modules); `like` names one.
    Names { like: &'static str },
}

impl Kind {
    /// The type in a word or two, for listings.
    pub fn type_name(self) -> &'static str {
        match self {
            Kind::Flag => "bool",
            Kind::Count { .. } => "integer",
            Kind::Limit { .. } => "integer or \"none\"",
            Kind::Bytes { none: false, .. } => "size",
            Kind::Bytes { none: true, .. } => "size or \"none\"",
            Kind::Number { .. } => "number",
            Kind::Time { none: false } => "duration",
            Kind::Time { none: true } => "duration or \"none\"",
            Kind::Name => "name",
            Kind::Names { .. } => "list of names",
        }
    }
}

/// A setting's value, already read from its syntax (TOML, profile text, a sysctl).
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Flag(bool),
    /// A whole number or a size in bytes.
    Count(u64),
    Number(f64),
    Time(Duration),
    /// `"none"`: the optional setting is off.
    None,
    Name(String),
    Names(Vec<String>),
}

impl Value {
    fn flag(self) -> Result<bool, String> {
        match self {
            Value::Flag(b) => Ok(b),
            v => Err(format!("expected true or false, found {v}")),
        }
    }
    fn count(self) -> Result<u64, String> {
        match self {
            Value::Count(n) => Ok(n),
            v => Err(format!("expected a whole number, found {v}")),
        }
    }
    fn time(self) -> Result<Duration, String> {
        match self {
            Value::Time(d) => Ok(d),
            v => Err(format!("expected a duration like \"200ms\", found {v}")),
        }
    }
    fn name(&self) -> Result<&str, String> {
        match self {
            Value::Name(s) => Ok(s),
            v => Err(format!("expected a name, found {v}")),
        }
    }
    fn names(self) -> Result<Vec<String>, String> {
        match self {
            Value::Names(v) => Ok(v),
            Value::None => Ok(Vec::new()),
            Value::Name(s) => Ok(vec![s]),
            v => Err(format!("expected a list of names, found {v}")),
        }
    }
}

impl fmt::Display for Value {
    /// The value in profile syntax: `200ms`, `1460`, `wscale,timestamps`, `none`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Flag(b) => write!(f, "{b}"),
            Value::Count(n) => write!(f, "{n}"),
            Value::Number(x) => write!(f, "{x:?}"),
            Value::Time(d) => write!(f, "{}", duration_text(*d)),
            Value::None => f.write_str("none"),
            Value::Name(s) => f.write_str(s),
            Value::Names(v) if v.is_empty() => f.write_str("none"),
            Value::Names(v) => f.write_str(&v.join(",")),
        }
    }
}

/// One setting: a row of [`SETTINGS`].
pub struct Setting {
    /// The scenario host key and profile key (`send_policy`, `delack`, ...).
    pub name: &'static str,
    pub kind: Kind,
    /// One line: what it does (as `tinygram scenario` shows it).
    pub doc: &'static str,
    /// The rule's source: document and section, or the stack's code.
    pub source: &'static str,
    get: fn(&Config) -> Value,
    put: fn(&mut Config, Value) -> Result<(), String>,
}

impl fmt::Debug for Setting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Setting")
            .field("name", &self.name)
            .field("kind", &self.kind)
            .finish()
    }
}

impl Setting {
    /// This setting's value in `c`.
    pub fn get(&self, c: &Config) -> Value {
        (self.get)(c)
    }

    /// Its value in `Config::default()`.
    pub fn default_value(&self) -> Value {
        self.get(&Config::default())
    }

    /// Sets it in `c`, checking the kind's range; the rest of the
    /// configuration is checked by [`Config::validate`].
    pub fn set(&self, c: &mut Config, v: Value) -> Result<(), String> {
        let v = match (self.kind, v) {
            (Kind::Count { min, max }, Value::Count(n)) if !(min..=max).contains(&n) => {
                return Err(format!("{n} is out of range ({min} to {max})"))
            }
            (Kind::Limit { max }, Value::Count(n)) if n > max => {
                return Err(format!("{n} is out of range (0 to {max}, or \"none\")"))
            }
            (Kind::Bytes { max, .. }, Value::Count(n)) if n > max => {
                return Err("size too large for this machine".to_string())
            }
            (Kind::Time { none: false }, Value::None)
            | (Kind::Bytes { none: false, .. }, Value::None) => {
                return Err(format!("{} cannot be \"none\"", self.name))
            }
            (_, v) => v,
        };
        (self.put)(c, v)
    }

    /// Reads `text` in profile syntax (`"200ms"`, `"1460"`, `"wscale,sack"`, `"none"`).
    pub fn parse(&self, text: &str) -> Result<Value, String> {
        let v = text.trim();
        let optional = matches!(
            self.kind,
            Kind::Time { none: true } | Kind::Bytes { none: true, .. } | Kind::Limit { .. }
        );
        if optional && v == "none" {
            return Ok(Value::None);
        }
        Ok(match self.kind {
            Kind::Flag => Value::Flag(
                v.parse()
                    .map_err(|_| format!("expected true or false, found {v:?}"))?,
            ),
            Kind::Count { .. } | Kind::Limit { .. } | Kind::Bytes { .. } => Value::Count(
                v.parse()
                    .map_err(|_| format!("expected a whole number, found {v:?}"))?,
            ),
            Kind::Number { like } => Value::Number(
                v.parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite())
                    .ok_or_else(|| format!("expected {like}, found {v:?}"))?,
            ),
            Kind::Time { .. } => Value::Time(duration(v)?),
            Kind::Name => Value::Name(v.to_string()),
            Kind::Names { .. } => {
                let names = if v == "none" { "" } else { v };
                Value::Names(
                    names
                        .split(',')
                        .map(str::trim)
                        .filter(|n| !n.is_empty())
                        .map(String::from)
                        .collect(),
                )
            }
        })
    }
}

/// The row named `name`; an unknown name gets a did-you-mean and the list.
pub fn find(name: &str) -> Result<&'static Setting, String> {
    SETTINGS.iter().find(|s| s.name == name).ok_or_else(|| {
        format!(
            "unknown setting {name:?}{} (settings: {})",
            crate::suggest::did_you_mean(name, SETTINGS.iter().map(|s| s.name)),
            SETTINGS
                .iter()
                .map(|s| s.name)
                .collect::<Vec<_>>()
                .join(", ")
        )
    })
}

/// Sets setting `name` of `c` to `v`.
pub fn set(c: &mut Config, name: &str, v: Value) -> Result<(), String> {
    find(name)?.set(c, v)
}

/// Sets setting `name` of `c` from its profile-syntax text.
pub fn set_text(c: &mut Config, name: &str, text: &str) -> Result<(), String> {
    let s = find(name)?;
    s.set(c, s.parse(text)?)
}

/// `"200ms"`, `"1s"`, `"500us"`.
fn duration(v: &str) -> Result<Duration, String> {
    let split = v
        .find(|c: char| !c.is_ascii_digit())
        .ok_or_else(|| format!("expected a duration with a unit (us, ms, s), found {v:?}"))?;
    let (n, unit) = v.split_at(split);
    let n: u64 = n
        .parse()
        .map_err(|_| format!("expected a duration like \"200ms\", found {v:?}"))?;
    match unit {
        "us" => Ok(Duration::from_micros(n)),
        "ms" => Ok(Duration::from_millis(n)),
        "s" => Ok(Duration::from_secs(n)),
        _ => Err(format!("unknown duration unit in {v:?} (us, ms, s)")),
    }
}

/// A duration in the largest of s, ms, us that keeps it whole.
fn duration_text(d: Duration) -> String {
    let us = d.as_micros();
    if us.is_multiple_of(1_000_000) {
        format!("{}s", us / 1_000_000)
    } else if us.is_multiple_of(1000) {
        format!("{}ms", us / 1000)
    } else {
        format!("{us}us")
    }
}

fn name_of(v: &Value) -> Result<&str, String> {
    v.name()
}

fn opt_time(v: Value) -> Result<Option<Duration>, String> {
    match v {
        Value::None => Ok(None),
        v => v.time().map(Some),
    }
}

fn opt_time_value(d: Option<Duration>) -> Value {
    d.map_or(Value::None, Value::Time)
}

fn usize_of(v: Value) -> Result<usize, String> {
    usize::try_from(v.count()?).map_err(|_| "size too large for this machine".to_string())
}

fn option_names(o: OptionSet) -> Value {
    Value::Names(
        [
            (o.window_scale, "wscale"),
            (o.timestamps, "timestamps"),
            (o.sack, "sack"),
            (o.big_window, "bigwin"),
            (o.nak, "nak"),
            (o.ecn, "ecn"),
        ]
        .iter()
        .filter(|(on, _)| *on)
        .map(|(_, n)| n.to_string())
        .collect(),
    )
}

fn loss_is_name(l: LossIs) -> &'static str {
    match l {
        LossIs::Congestion => "congestion",
        LossIs::Noise => "noise",
        LossIs::EcnOnly => "ecn-only",
    }
}

fn window_probe_name(p: WindowProbe) -> &'static str {
    match p {
        WindowProbe::Byte => "byte",
        WindowProbe::OldSeq => "old-seq",
    }
}

fn cubic_name(v: CubicVariant) -> &'static str {
    match v {
        CubicVariant::Rfc9438 => "rfc9438",
        CubicVariant::Linux => "linux",
    }
}

/// A row whose field is `Config::$field` and whose name is the field's name.
macro_rules! row {
    ($field:ident, $kind:expr, $doc:literal, $source:literal, get $get:expr, put $put:expr $(,)?) => {
        Setting {
            name: stringify!($field),
            kind: $kind,
            doc: $doc,
            source: $source,
            get: |c: &Config| $get(&c.$field),
            put: |c: &mut Config, v: Value| {
                c.$field = $put(v)?;
                Ok(())
            },
        }
    };
}

/// A `true`/`false` row.
macro_rules! flag {
    ($field:ident, $doc:literal, $source:literal) => {
        row!($field, Kind::Flag, $doc, $source,
            get |b: &bool| Value::Flag(*b), put Value::flag)
    };
}

/// A duration row.
macro_rules! time {
    ($field:ident, $doc:literal, $source:literal) => {
        row!($field, Kind::Time { none: false }, $doc, $source,
            get |d: &Duration| Value::Time(*d), put Value::time)
    };
}

/// A whole-number `u32` row from `min` up.
macro_rules! count {
    ($field:ident, $min:expr, $doc:literal, $source:literal) => {
        row!($field, Kind::Count { min: $min, max: u32::MAX as u64 }, $doc, $source,
            get |n: &u32| Value::Count(u64::from(*n)),
            put |v: Value| v.count().map(|n| n as u32))
    };
}

/// A row named by a type with `FromStr<Err = String>` and a name for its value.
macro_rules! named {
    ($field:ident, $ty:ty, $show:expr, $doc:literal, $source:literal) => {
        row!($field, Kind::Name, $doc, $source,
            get |x: &$ty| Value::Name($show(x)),
            put |v: Value| name_of(&v)?.parse::<$ty>())
    };
}

/// A size row.
macro_rules! bytes {
    ($field:ident, $doc:literal, $source:literal) => {
        row!($field, Kind::Bytes { max: usize::MAX as u64, none: false }, $doc, $source,
            get |n: &usize| Value::Count(*n as u64), put usize_of)
    };
}

/// Every per-connection setting, in the order `tinygram scenario` lists them.
#[rustfmt::skip]
pub const SETTINGS: &[Setting] = &[
    row!(mss, Kind::Count { min: 64, max: u16::MAX as u64 },
        "MSS advertised: largest payload accepted (RFC 9293 3.7.1; 1500 - 40)",
        "RFC 9293 3.7.1, RFC 6691",
        get |m: &u16| Value::Count(u64::from(*m)), put |v: Value| v.count().map(|n| n as u16)),
    named!(send_policy, SendPolicyKind, |p: &SendPolicyKind| p.to_string(),
        "when to send: a name from `tinygram policies` (nodelay, nagle, ...)",
        "RFC 896; RFC 1122 4.2.3.4 (nagle, the default)"),
    named!(ack_policy, AckPolicyKind, |p: &AckPolicyKind| p.to_string(),
        "when to acknowledge: a name from `tinygram policies` (immediate, delayed, ...)",
        "RFC 1122 4.2.3.2; RFC 5681 4.2 (delayed, the default)"),
    time!(delack,
        "delayed-ACK timeout, at most 500ms (RFC 1122 4.2.3.2)",
        "RFC 1122 4.2.3.2"),
    time!(ato_min,
        "the quickack policy's least ACK timeout: a delayed ACK waits at least this long once quick-ACK mode is over (at most 500ms)",
        "Linux tcp.h TCP_ATO_MIN, TCP_DELACK_MIN (HZ/25: 40 ms)"),
    count!(delack_segments, 1,
        "ACK at once every Nth data segment (RFC 1122 4.2.3.2, RFC 5681 4.2)",
        "RFC 1122 4.2.3.2, RFC 5681 4.2"),
    named!(delack_count, DelackCount, |d: &DelackCount| d.to_string(),
        "segments that count toward delack_segments: \"any\" data segment (BSD; Cheshire) or only \"full\"-sized ones (RFC 1122 4.2.3.2)",
        "RFC 1122 4.2.3.2; Cheshire, Nagle x delayed ACK"),
    row!(delack_tick, Kind::Time { none: true },
        "free-running delayed-ACK tick, e.g. \"200ms\" (BSD fast timer) or \"250ms\" (lwIP): a deferred ACK leaves at the next tick instead of after delack; at most 500ms",
        "4.4BSD tcp_fasttimo (PR_FASTHZ 5)",
        get |d: &Option<Duration>| opt_time_value(*d), put opt_time),
    named!(window_update, WindowUpdate, |w: &WindowUpdate| w.to_string(),
        "announce a window the application's read opened \"immediate\"ly (RFC 1122 4.2.3.3; BSD), \"delayed\" until the ACK policy sends an ACK (Tops-20; Westfield, 1985), or only if it at least doubles, \"doubling\" (Linux tcp_cleanup_rbuf)",
        "RFC 1122 4.2.3.3"),
    named!(window_advertise, WindowAdvertise, |w: &WindowAdvertise| w.to_string(),
        "window each segment offers: \"rfc1122\" holds the right edge until it moves min(half the window, one MSS) (RFC 1122 4.2.3.3), \"bsd\" offers all free space (tcp_output.c), \"linux\" as __tcp_select_window",
        "RFC 1122 4.2.3.3"),
    row!(adaptive_k, Kind::Number { like: "a number of RTTs like 1.5" },
        "ack_policy adaptive: the delay is adaptive_k x SRTT (Doupnik 1.6: one or two RTTs)",
        "Doupnik, A new TCP transmission policy, 1.6",
        get |k: &f64| Value::Number(*k),
        put |v: Value| match v {
            Value::Number(x) => Ok(x),
            Value::Count(n) => Ok(n as f64),
            v => Err(format!("expected a number of RTTs like 1.5, found {v}")),
        }),
    time!(adaptive_min,
        "ack_policy adaptive: least delay",
        "assumption: 1 ms, one timer tick"),
    time!(adaptive_max,
        "ack_policy adaptive: greatest delay, at most 500ms (RFC 1122 4.2.3.2)",
        "RFC 1122 4.2.3.2"),
    bytes!(rcv_buf,
        "receive buffer: the most window ever offered",
        "assumption: the classic 64 KiB buffer"),
    bytes!(snd_buf,
        "send buffer: the bytes accepted from the application and held (what they are: snd_buf_counts)",
        "assumption: 256 KiB"),
    named!(snd_buf_counts, SndBufCounts, |c: &SndBufCounts| c.name().to_string(),
        "what snd_buf limits: \"queued\" (unacknowledged plus unsent bytes: BSD sb_hiwat, Linux sk_sndbuf) or \"unsent\" (unsent bytes only: the Mentat TCP of Solaris)",
        "4.4BSD sosend sbspace; illumos tcp_impl.h TCP_UNSENT_BYTES"),
    row!(options, Kind::Names { like: "option names like \"timestamps\"" },
        "TCP options offered besides MSS: wscale, timestamps, sack, bigwin, nak, ecn (RFC 3168)",
        "RFC 7323, RFC 2018, RFC 1106, RFC 3168",
        get |o: &OptionSet| option_names(*o),
        put |v: Value| {
            let mut o = OptionSet::default();
            for n in v.names()? {
                o.enable(&n)?;
            }
            Ok::<_, String>(o)
        }),
    named!(loss_is, LossIs, |l: &LossIs| loss_is_name(*l).to_string(),
        "\"congestion\" halves cwnd on a repaired loss, \"noise\" does not (RFC 1106 4.2); \"ecn-only\" (experimental): only ECN CE marks reduce cwnd",
        "RFC 1106 4.2; RFC 5681 3.2"),
    named!(slow_start, SlowStart, |s: &SlowStart| s.name().to_string(),
        "\"standard\" (1 segment per ACK, RFC 5681), \"double\" (2, RFC 1106 4.2), \"hystart\" (Linux tcp_cubic.c) or \"hystart++\" (RFC 9406)",
        "RFC 5681 3.1; RFC 1106 4.2; RFC 9406"),
    row!(recovery, Kind::Names { like: "recovery module names like \"prr\"" },
        "loss-recovery modules besides RFC 6675 SACK / RFC 6582 NewReno recovery: \"prr\" (RFC 6937), \"tlp\" (RFC 8985 7), \"rack\" (RFC 8985 6); see `tinygram congestion`",
        "RFC 6937; RFC 8985",
        get |r: &RecoverySet| Value::Names(r.names().iter().map(|n| n.to_string()).collect()),
        put |v: Value| {
            let mut r = RecoverySet::default();
            for n in v.names()? {
                r.enable(&n)?;
            }
            Ok::<_, String>(r)
        }),
    row!(congestion, Kind::Name,
        "congestion control: \"newreno\" (RFC 5681, RFC 6582) or \"cubic\" (RFC 9438); see `tinygram congestion`",
        "RFC 5681, RFC 6582; RFC 9438",
        get |c: &CcFactory| Value::Name(c.name().to_string()),
        put |v: Value| CcFactory::by_name(name_of(&v)?)),
    time!(rto_min,
        "lower bound on the retransmission timeout: of the whole RTO or of its variance term, as rto_floor says",
        "RFC 6298 2.4 (1 s)"),
    time!(rto_slop,
        "added to every retransmission timeout computed from the RTT estimate or backed off, not to the initial one",
        "FreeBSD tcp_timer.h TCPT_RANGESET, net.inet.tcp.rexmit_slop"),
    named!(rto_floor, RtoFloor, |f: &RtoFloor| f.name().to_string(),
        "what rto_min bounds: the whole \"rto\" (RFC 6298 2.4) or the \"variance\" term, RTO >= SRTT + rto_min (Linux tcp_set_rto)",
        "RFC 6298 2.4; Linux tcp_input.c tcp_set_rto"),
    time!(rto_max,
        "upper bound on the retransmission timeout (RFC 6298 2.5)",
        "RFC 6298 2.5"),
    time!(rto_initial,
        "retransmission timeout before any RTT sample (RFC 6298 2.1)",
        "RFC 6298 2.1"),
    row!(rto_tick, Kind::Time { none: true },
        "retransmission timer granularity, e.g. \"500ms\" (4.4BSD slow timeout): the RTO counts whole ticks; \"none\": exact",
        "4.4BSD tcp_slowtimo (PR_SLOWHZ 2)",
        get |d: &Option<Duration>| opt_time_value(*d), put opt_time),
    count!(initial_window, 1,
        "initial congestion window in segments (RFC 6928)",
        "RFC 6928"),
    count!(max_retries, 0,
        "retransmissions of one segment before aborting (Linux tcp_retries2)",
        "Linux net.ipv4.tcp_retries2"),
    count!(orphan_retries, 0,
        "retries of a connection the application closed (an orphan) before aborting; 0: 8 while the RTO is below rto_max, else none (Linux tcp_orphan_retries)",
        "Linux net.ipv4.tcp_orphan_retries; tcp_timer.c tcp_orphan_retries, tcp_write_timeout, tcp_probe_timer"),
    count!(syn_retries, 0,
        "SYN retransmissions before an active open gives up (Linux tcp_syn_retries)",
        "Linux net.ipv4.tcp_syn_retries"),
    count!(synack_retries, 0,
        "SYN-ACK retransmissions before a passive open gives up (Linux tcp_synack_retries)",
        "Linux net.ipv4.tcp_synack_retries"),
    flag!(abort_rst_ack,
        "the RST of an aborted connection carries an ACK of RCV.NXT (Linux tcp_send_active_reset); RFC 9293 3.10.5's RST has none",
        "RFC 9293 3.10.5; Linux tcp_output.c tcp_send_active_reset"),
    flag!(so_sndbuf_doubles,
        "SO_SNDBUF sets twice the size asked, at least 4608 bytes (Linux sock_setsockopt; socket(7)); read by drill's socket layer",
        "Linux net/core/sock.c sock_setsockopt; socket(7)"),
    flag!(sendto_connects,
        "sendto() with an address on an unconnected socket connects and queues the data behind the SYN (FreeBSD's implied connect); read by drill's socket layer",
        "FreeBSD tcp_usrreq.c tcp_usr_send"),
    flag!(tcp_info_bsd,
        "TCP_INFO as FreeBSD fills it: tcpi_state numbered as BSD's TCPS_* states, FreeBSD's fields only; read by drill",
        "FreeBSD tcp_usrreq.c tcp_fill_info; tcp_fsm.h"),
    flag!(icmp_seq_below_max,
        "an ICMP error counts only when the sequence number it quotes is in [SND.UNA, SND.MAX) (FreeBSD); Linux's also takes SND.NXT",
        "RFC 5927 4.1; FreeBSD tcp_subr.c tcp_ctlinput; Linux tcp_ipv4.c tcp_v4_err"),
    flag!(icmp_bsd,
        "ICMP errors as FreeBSD: only port/protocol unreachable, prohibited and TTL exceeded end a SYN-SENT connection (icmp_may_rst), the rest are soft",
        "FreeBSD tcp_subr.c tcp_ctlinput, tcp_drop_syn_sent; ip_icmp.c icmp_input"),
    flag!(syn_rexmit_drop_options,
        "from the third SYN retransmission timeout on, the SYN goes without window scale, timestamps and SACK-permitted",
        "FreeBSD tcp(4) net.inet.tcp.rexmit_drop_options; tcp_timer.c tcp_timer_rexmt"),
    flag!(icmp_may_rst,
        "with icmp_bsd, port/protocol unreachable, prohibited and TTL exceeded end a connection in SYN-SENT (net.inet.tcp.icmp_may_rst)",
        "FreeBSD tcp(4) net.inet.tcp.icmp_may_rst; tcp_subr.c tcp_ctlinput"),
    flag!(no_options,
        "send no TCP options at all, not even MSS in the SYN (FreeBSD's TCP_NOOPT socket option)",
        "FreeBSD tcp(4) TCP_NOOPT; tcp_output.c TF_NOOPT"),
    row!(ecn_syn_retries, Kind::Limit { max: u32::MAX as u64 },
        "SYN retransmissions that still ask for ECN (ECE and CWR); later ones go without; \"none\": every one asks",
        "RFC 3168 6.1.1.1; FreeBSD tcp_output.c, net.inet.tcp.ecn.maxretries",
        get |n: &Option<u32>| n.map_or(Value::None, |n| Value::Count(u64::from(n))),
        put |v: Value| match v {
            Value::None => Ok(None),
            v => v.count().map(|n| Some(n as u32)),
        }),
    flag!(fastopen_sockopt_client,
        "TCP_FASTOPEN on a socket that connects turns client Fast Open on (FreeBSD); Linux's TCP_FASTOPEN is a listener's queue only; read by drill's socket layer",
        "FreeBSD tcp_usrreq.c tcp_usr_connect, tcp_fastopen.c tcp_fastopen_connect"),
    row!(fastopen_path_disable, Kind::Time { none: true },
        "how long a path whose SYN-ACK brought no valid Fast Open cookie goes without Fast Open (FreeBSD path_disable_time, 900s); \"none\": the cached cookie is kept (Linux)",
        "FreeBSD tcp_fastopen.c tcp_fastopen_disable_path, tcp_fastopen_update_cache",
        get |d: &Option<Duration>| opt_time_value(*d), put opt_time),
    row!(backlog, Kind::Limit { max: u32::MAX as u64 },
        "a listener's half-open connections (SYN-RECEIVED) before SYNs get cookies or are dropped; \"none\": no limit (tun: --backlog, 128)",
        "RFC 4987 3.1; Linux listen(2) backlog, net.core.somaxconn",
        get |b: &Option<u32>| b.map_or(Value::None, |n| Value::Count(u64::from(n))),
        put |v: Value| match v {
            Value::None => Ok(None),
            v => v.count().map(|n| Some(n as u32)),
        }),
    flag!(syn_cookies,
        "past the backlog, answer SYNs with SYN cookies (true) rather than drop them (false)",
        "RFC 4987 3.6; Linux net.ipv4.tcp_syncookies"),
    time!(msl,
        "maximum segment lifetime; TIME-WAIT lasts 2 MSL (RFC 9293 3.4.2)",
        "RFC 9293 3.4.2"),
    count!(dupack_threshold, 1,
        "duplicate ACKs that trigger fast retransmit (RFC 5681 3.2)",
        "RFC 5681 3.2"),
    flag!(psh_at_window_limit,
        "Linux's PSH placement: also on the last segment a window lets out of a write (tcp_push)",
        "Linux tcp.c tcp_push, tcp_mark_push"),
    count!(tso_segs, 0,
        "new data goes in packets of the pacing rate's size, at least N segments, PSH on the last of two or more (Linux); 0: off",
        "Linux tcp_output.c tcp_write_xmit, tcp_tso_autosize; net.ipv4.tcp_min_tso_segs"),
    flag!(silent_unsent_ack,
        "drop an ACK of data not yet sent without a reply, as Linux's tcp_ack does",
        "Linux tcp_input.c tcp_ack"),
    time!(tlp_extra,
        "added to a tail loss probe's 2 SRTT with more than one segment in flight (Linux: 2ms)",
        "RFC 8985 7.2; Linux tcp_output.c tcp_schedule_loss_probe"),
    flag!(flush_ends_data,
        "an explicit push (uncork, TCP_NODELAY) ends the data set with PSH; false as Linux",
        "Doupnik, A new TCP transmission policy, 2.0"),
    flag!(sack_whole_segments,
        "going back after a timeout, a SACK of less than a segment does not shorten it (Linux)",
        "Linux tcp_input.c tcp_match_skb_to_sack; RFC 6675 5.1"),
    flag!(prr_safe_ack,
        "PRR's slow-start bound adds its extra segment only when SND.UNA advances (Linux, the PRR update)",
        "draft-ietf-tcpm-prr-rfc6937bis; Linux tcp_input.c tcp_cwnd_reduction"),
    flag!(old_ack_sack,
        "an ACK below SND.UNA still delivers its SACK blocks in recovery (Linux's tcp_ack)",
        "Linux tcp_input.c tcp_ack; RFC 9293 3.10.7.4"),
    named!(cwnd_validation, CwndValidation, |v: &CwndValidation| v.name().to_string(),
        "whether cwnd grows while the sender does not use it: \"off\" (every ACK of new data grows it) or \"linux\" (only when cwnd-limited, tcp_is_cwnd_limited)",
        "RFC 7661; Linux include/net/tcp.h tcp_is_cwnd_limited"),
    named!(cubic, CubicVariant, |v: &CubicVariant| cubic_name(*v).to_string(),
        "CUBIC's arithmetic when congestion is \"cubic\": \"rfc9438\" as written or \"linux\" (tcp_cubic.c: whole segments, jiffies)",
        "RFC 9438; Linux tcp_cubic.c"),
    named!(window_probe, WindowProbe, |p: &WindowProbe| window_probe_name(*p).to_string(),
        "how a zero window is probed: \"byte\" (one byte of new data, RFC 9293 3.8.6.1) or \"old-seq\" (an ACK carrying SND.UNA - 1, Linux tcp_write_wakeup)",
        "RFC 9293 3.8.6.1; Linux tcp_output.c tcp_xmit_probe_skb"),
    row!(wscale_buf, Kind::Bytes { max: usize::MAX as u64, none: true },
        "the buffer size the window-scale shift is chosen for, e.g. \"2MiB\" (FreeBSD's kern.ipc.maxsockbuf); \"none\": the receive buffer",
        "RFC 7323 2.3; FreeBSD tcp_usrreq.c tcp_connect",
        get |b: &Option<usize>| b.map_or(Value::None, |n| Value::Count(n as u64)),
        put |v: Value| match v {
            Value::None => Ok(None),
            v => usize_of(v).map(Some),
        }),
    flag!(buf_round_mss,
        "round both socket buffers up to a multiple of the MSS once the peer's is known (FreeBSD tcp_mss)",
        "FreeBSD tcp_input.c tcp_mss"),
    flag!(dsack,
        "report duplicate data with D-SACK (RFC 2883), as FreeBSD's tcp_update_dsack_list",
        "RFC 2883; FreeBSD tcp_sack.c tcp_update_dsack_list"),
    flag!(dsack_single,
        "report a repeat of sequence space below RCV.NXT with one D-SACK block, once, on the next segment (Linux tcp_dsack_set)",
        "RFC 2883 4; Linux tcp_input.c tcp_dsack_set, tcp_send_dupack, tcp_data_queue"),
    flag!(ack_repeats_fin,
        "every ACK sent while our FIN is unacknowledged carries the FIN again (FreeBSD tcp_output.c)",
        "FreeBSD tcp_output.c tcp_default_output"),
    flag!(syn_reset_tcb,
        "with rfc5961 off, a SYN in the window resets the connection from SND.NXT/RCV.NXT (FreeBSD tcp_drop)",
        "FreeBSD tcp_input.c tcp_do_segment"),
    flag!(rcv_wnd_free,
        "the acceptability window is the larger of free buffer space and the window advertised (FreeBSD rcv_wnd)",
        "FreeBSD tcp_input.c tcp_input_with_port; RFC 9293 3.10.7.4"),
    flag!(time_wait_bsd,
        "TIME-WAIT as FreeBSD's tcp_twcheck: a SYN above RCV.NXT closes it for the listener, other segments without ACK are dropped, all but an exact duplicate ACK is ACKed",
        "FreeBSD tcp_timewait.c tcp_twcheck"),
    flag!(rfc5961,
        "RFC 5961 checks: challenge ACKs for inexact RSTs and SYNs, old ACKs dropped; false as RFC 793 (FreeBSD's insecure_rst/insecure_syn)",
        "RFC 5961 3.2, 4.2, 5.2"),
    flag!(slow_start_after_idle,
        "restart from a smaller window after an idle period longer than the RTO (Linux tcp_slow_start_after_idle)",
        "RFC 5681 4.1; RFC 2861; Linux tcp_cwnd_restart"),
    flag!(syn_ack_paws,
        "in SYN-SENT, answer a SYN-ACK whose timestamp echo is not between our first SYN's TSval and now with a reset",
        "Linux tcp_input.c tcp_rcv_synsent_state_process (PAWSActiveRejected)"),
    flag!(simultaneous_synack,
        "in a simultaneous open, answer with our SYN's own options and take the peer's SYN-ACK of all we sent in SYN-RECEIVED",
        "Linux tcp_output.c tcp_send_synack, tcp_input.c tcp_validate_incoming"),
    flag!(tfo_child_syn_outside_window,
        "a Fast Open child's unacknowledged SYN-ACK takes none of the peer's window or of cwnd (its SND.UNA starts at ISS + 1)",
        "Linux tcp_minisocks.c tcp_create_openreq_child; RFC 7413 4.2"),
    flag!(closing_rst_error,
        "a RST in CLOSING or LAST-ACK reports ECONNRESET to the application (off: closes silently, RFC 9293 3.10.7.4)",
        "Linux tcp_input.c tcp_reset; FreeBSD tcp_input.c tcp_do_segment"),
    flag!(drop_syn_fin,
        "drop every segment with both SYN and FIN set, in TIME-WAIT too (FreeBSD net.inet.tcp.drop_synfin)",
        "FreeBSD tcp(4) net.inet.tcp.drop_synfin, tcp_input.c"),
    row!(udp_encaps_port, Kind::Count { min: 0, max: u16::MAX as u64 },
        "the peer's UDP port: segments travel encapsulated in UDP to it (TCP over UDP; 0: plain TCP)",
        "RFC 6951 5.1; FreeBSD tcp(4) TCP_REMOTE_UDP_ENCAPS_PORT",
        get |p: &u16| Value::Count(u64::from(*p)), put |v: Value| v.count().map(|n| n as u16)),
    row!(udp_tunneling_overhead, Kind::Count { min: 8, max: 1024 },
        "MSS bytes the UDP encapsulation costs while udp_encaps_port is set",
        "FreeBSD tcp(4) net.inet.tcp.udp_tunneling_overhead",
        get |p: &u16| Value::Count(u64::from(*p)), put |v: Value| v.count().map(|n| n as u16)),
    flag!(pmtu_resend,
        "on an ICMP fragmentation-needed that lowers the MSS, resend from SND.UNA at once in smaller segments",
        "FreeBSD tcp_subr.c tcp_mtudisc"),
    flag!(maxseg_live,
        "TCP_MAXSEG on a synchronized connection lowers the MSS it sends with",
        "FreeBSD tcp_usrreq.c TCP_MAXSEG (t_maxseg)"),
    flag!(keepalive,
        "send keep-alive probes on an idle connection (SO_KEEPALIVE)",
        "RFC 1122 4.2.3.6"),
    time!(keepalive_idle,
        "idle time before the first keep-alive probe (TCP_KEEPIDLE; at least 2 hours by default)",
        "RFC 1122 4.2.3.6"),
    time!(keepalive_intvl,
        "time between unanswered keep-alive probes (TCP_KEEPINTVL)",
        "4.4BSD tcp_timer.h TCPTV_KEEPINTVL (75 s); Linux tcp_keepalive_intvl"),
    count!(keepalive_probes, 1,
        "unanswered keep-alive probes before the connection is dropped (TCP_KEEPCNT)",
        "4.4BSD tcp_timer.h TCPTV_KEEPCNT (8); Linux tcp_keepalive_probes"),
    row!(connect_timeout, Kind::Time { none: true },
        "an active open not synchronized this long after connect() fails with ETIMEDOUT (TCP_KEEPINIT); \"none\": only syn_retries limits it",
        "FreeBSD tcp(4) TCP_KEEPINIT, tcp_timer.c tcp_timer_keep",
        get |d: &Option<Duration>| opt_time_value(*d), put opt_time),
    time!(invalid_ack_interval,
        "least time between challenge ACKs and ACKs answering unacceptable segments (0s: no limit)",
        "RFC 5961 7; Linux net.ipv4.tcp_invalid_ratelimit"),
    row!(max_ooo_ranges, Kind::Count { min: 1, max: u32::MAX as u64 },
        "most out-of-order ranges held for reassembly; a segment that would start one more is dropped",
        "FreeBSD net.inet.tcp.reass.maxqueuelen",
        get |n: &usize| Value::Count(*n as u64), put usize_of),
    bytes!(buffer_cap,
        "per-connection cap on the receive buffer; no larger window is offered (RFC 1106 5)",
        "RFC 1106 5"),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_every_default_reads_back() {
        for (i, s) in SETTINGS.iter().enumerate() {
            assert!(
                !SETTINGS[i + 1..].iter().any(|t| t.name == s.name),
                "{} twice",
                s.name
            );
            assert!(!s.doc.is_empty() && !s.source.is_empty(), "{}", s.name);
            // Setting a default to itself, through its text, changes nothing.
            let mut c = Config::default();
            let text = s.default_value().to_string();
            set_text(&mut c, s.name, &text).unwrap_or_else(|e| panic!("{}: {e}", s.name));
            assert_eq!(
                format!("{c:?}"),
                format!("{:?}", Config::default()),
                "{}",
                s.name
            );
        }
    }

    #[test]
    fn every_row_sets_its_own_field() {
        // A value other than the default, per kind, must show in the config.
        for s in SETTINGS {
            let other = match (s.kind, s.default_value()) {
                (_, Value::Flag(b)) => Value::Flag(!b),
                (Kind::Count { min, .. }, Value::Count(n)) => {
                    Value::Count(if n == min { n + 1 } else { min })
                }
                (_, Value::Count(n)) => Value::Count(n / 2 + 1),
                (_, Value::Number(x)) => Value::Number(x + 1.0),
                (_, Value::Time(d)) => Value::Time(d / 2 + Duration::from_millis(1)),
                (_, Value::None) => s.parse("100ms").or_else(|_| s.parse("4096")).unwrap(),
                (_, Value::Name(_)) => continue,
                (_, Value::Names(_)) => continue,
            };
            let mut c = Config::default();
            s.set(&mut c, other.clone()).unwrap();
            assert_eq!(s.get(&c), other, "{}", s.name);
        }
    }

    #[test]
    fn errors_name_what_was_wrong() {
        let mut c = Config::default();
        assert!(set_text(&mut c, "delack", "200")
            .unwrap_err()
            .contains("unit"));
        assert!(set_text(&mut c, "delak", "200ms")
            .unwrap_err()
            .contains("did you mean \"delack\""));
        assert!(set_text(&mut c, "mss", "big")
            .unwrap_err()
            .contains("whole number"));
        assert_eq!(
            set(&mut c, "mss", Value::Count(63)).unwrap_err(),
            "63 is out of range (64 to 65535)"
        );
        assert!(set_text(&mut c, "rto_min", "none").is_err());
        assert!(set_text(&mut c, "send_policy", "telepathy")
            .unwrap_err()
            .contains("telepathy"));
        set_text(&mut c, "rfc5961", "false").unwrap();
        set_text(&mut c, "slow_start_after_idle", "true").unwrap();
        assert!(!c.rfc5961 && c.slow_start_after_idle);
    }
}
