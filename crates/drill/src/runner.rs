//! Plays a script against one engine connection: the runner is the peer, the host and the clock.

use crate::ast::*;
use crate::report::{secs, FailKind, Failure, ScriptReport, QUICK_ACK_HINT};
use crate::stack::Stack;
use crate::syscall::{Outcome, Sock};
use std::collections::{BTreeMap, VecDeque};
use tinygram_proto::fastopen::{FastOpenOption, TfoCookie};
use tinygram_proto::policy::SendPolicyKind;
use tinygram_proto::wire::{Nak, SackBlocks, Timestamps};
use tinygram_proto::{
    Config, Connection, Flags, Instant, IsnSeries, SeqNumber, TcpOptions, TcpRepr,
};

/// Results inside the runner; failures are boxed to keep `Result` small.
pub(crate) type Res<T> = Result<T, Box<Failure>>;

/// Engine time of the script's time zero (keeps clear of `Instant::ZERO`).
const BASE_NS: u64 = 1_000_000_000;
/// Initial sequence number given to the engine.
pub(crate) const LOCAL_ISN: u32 = 1_000_000_000;
/// Added to the script's inbound sequence numbers on the wire.
pub(crate) const REMOTE_BASE: u32 = 3_000_000_000;
/// The engine's port for passive opens (and the peer's for active opens).
pub(crate) const SERVER_PORT: u16 = 8080;
/// The other end's port.
pub(crate) const CLIENT_PORT: u16 = 40_000;
/// How long `*` waits for a segment.
const ANY_WAIT_NS: i64 = 3_600 * 1_000_000_000;
/// Engine steps allowed at one instant before the runner calls it a loop.
const MAX_STEPS_AT_ONE_TIME: u32 = 100_000;

/// Run-wide settings (from the command line, overridden by script options).
#[derive(Clone, Debug)]
pub struct Settings {
    /// Minimum timing tolerance in microseconds (packetdrill's --tolerance_usecs).
    pub tolerance_usecs: i64,
    /// Dynamic tolerance as a percentage of the gap since the previous event.
    pub tolerance_percent: f64,
    /// Do not merge consecutive outbound segments (packetdrill's --strict_segments).
    pub strict_segments: bool,
    /// Whose defaults new sockets get (`--stack`).
    pub stack: Stack,
    /// `-D NAME=VALUE` definitions: a whole-word NAME in a script reads as VALUE.
    pub defines: Vec<(String, String)>,
    /// packetdrill's `--tcp_ts_tick_usecs`: microseconds per TSval tick; when
    /// set, an outbound TSval is checked against the script's (0: unchecked,
    /// as in packetdrill).
    pub tcp_ts_tick_usecs: i64,
    /// packetdrill's `--local_ip`: the host's address, which the Fast Open
    /// server cookie covers (RFC 7413 4.1.2).
    pub local_ip: std::net::IpAddr,
    /// packetdrill's `--remote_ip`: the scripted peer's address.
    pub remote_ip: std::net::IpAddr,
    /// Refuse scripts with `%{ }%` Python blocks (`--no-python`): they are
    /// reported unsupported, never run.
    pub no_python: bool,
    /// How long one script's Python blocks may run in all (they share one
    /// process): past it the process is killed and the script fails.
    pub python_timeout: std::time::Duration,
    /// packetdrill's `--mss`: inbound TCP packets longer than this (IP
    /// header included) reach TCP as GRO packets of segments this large
    /// (netdev.c linux_tun_write sets the virtio-net gso_size).
    pub mss: Option<usize>,
    /// packetdrill's `--mtu`: the tun device's MTU. A new socket's MSS is
    /// that less the IPv4 and TCP headers (FreeBSD tcp_subr.c tcp_mssopt).
    pub mtu: Option<u16>,
    /// packetdrill's `--udp_encapsulation=tcp`: segments written with
    /// `/udp(SRC > DST)` travel encapsulated in UDP (RFC 6951 5.1).
    pub udp_encaps: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            tolerance_usecs: 4_000,
            tolerance_percent: 12.5,
            strict_segments: false,
            stack: Stack::rfc(),
            defines: Vec::new(),
            tcp_ts_tick_usecs: 0,
            // packetdrill's IPv4 defaults.
            local_ip: std::net::IpAddr::V4(std::net::Ipv4Addr::new(192, 168, 0, 1)),
            remote_ip: std::net::IpAddr::V4(std::net::Ipv4Addr::new(192, 0, 2, 1)),
            no_python: false,
            python_timeout: std::time::Duration::from_secs(10),
            mss: None,
            mtu: None,
            udp_encaps: false,
        }
    }
}

/// A segment the engine (or the emulated host) sent, with its virtual send time.
#[derive(Clone, Debug)]
pub(crate) struct Emitted {
    pub t: i64,
    pub repr: TcpRepr,
    pub payload_len: usize,
    /// Its ACK number is past every ACK number the engine sent before.
    pub acks_new: bool,
    /// It left when the delayed-ACK timer fired.
    pub by_delack: bool,
    /// The engine marked it ECT(0) (RFC 3168 6.1.2).
    pub ect: bool,
    /// It travels encapsulated in UDP with these ports (RFC 6951 5.1).
    pub udp: Option<UdpPorts>,
    /// The IP_TOS and IP_TTL of the socket that sent it.
    pub ip: crate::ipfields::IpFields,
}

/// How an expected outbound segment failed, for [`Runner::quick_ack_hint`].
enum AckSymptom<'e> {
    /// Nothing was sent in time.
    Missing,
    /// This segment came too early.
    Early(&'e Emitted),
    /// This segment came too late.
    Late(&'e Emitted),
    /// This (possibly merged) segment differs from the script.
    Other(&'e Emitted),
}

/// A blocking system call that has started and not yet returned.
#[derive(Clone, Debug)]
pub(crate) struct Pending {
    pub event: usize,
    pub end_ns: i64,
    pub tol_ns: i64,
}

/// The runner's whole state.
pub(crate) struct Runner<'a> {
    pub script: &'a Script,
    pub settings: Settings,
    /// Virtual time, ns since script start.
    pub now: i64,
    pub conn: Option<Connection>,
    /// The live connection's configuration (its send policy kept current).
    pub conn_cfg: Option<Config>,
    /// The send policy TCP_CORK 0 restores on the live connection.
    pub conn_uncork_to: SendPolicyKind,
    /// The IP_TOS and IP_TTL the live connection's segments carry.
    pub conn_ip: crate::ipfields::IpFields,
    /// Why the current system call returned its errno, for the failure message.
    pub errno_reason: Option<String>,
    /// The connection has reached a synchronized state at least once.
    pub ever_synced: bool,
    /// The listener's connection was returned by accept().
    pub conn_accepted: bool,
    /// The live connection's socket chose its ACK policy (TCP_TINYGRAM_ACK_POLICY).
    pub conn_ack_policy_set: bool,
    /// The highest ACK number the engine has sent (wire numbering).
    pub last_ack_sent: Option<SeqNumber>,
    /// The engine's delayed-ACK timer count at the last drain.
    pub delack_fired_seen: u64,
    pub listener_fd: Option<i64>,
    /// The listener's configuration, for the connection a SYN opens after
    /// its child's TIME-WAIT closed for it.
    pub listener_cfg: Option<Config>,
    pub local_port: u16,
    pub remote_port: u16,
    pub script_local_isn: u32,
    pub ts_offset: Option<u32>,
    pub queue: VecDeque<Emitted>,
    pub socks: BTreeMap<i64, Sock>,
    pub pending: Option<Pending>,
    pub report: ScriptReport,
    /// Scheduled time of the previous event.
    last_sched: i64,
    last_inbound: bool,
    have_last: bool,
    buf: Vec<u8>,
    /// Bytes the current (possibly blocked) write call has handed to the engine.
    pub write_progress: usize,
    /// Scheduled time (ns) of the outbound segment being checked, for the TSval tolerance.
    checking_at: i64,
    /// The `%{ }%` blocks met so far, with the TCP_INFO values at each.
    checks: crate::pycheck::Program,
    /// Host settings the script's shell lines made (applied at socket()).
    pub host: crate::sysctl::HostSysctls,
    /// A MSG_MORE send corked the live connection; the next send without it uncorks.
    pub more_corked: bool,
    /// The live connection's MSG_ZEROCOPY sends and notifications.
    pub zc: crate::zerocopy::ZeroCopy,
    /// The host's Fast Open cookie cache (RFC 7413 4.1.3), across the
    /// script's connections.
    pub tfo_cache: tinygram_proto::fastopen::CookieCache,
    /// A later socket() made another socket the one under test: the old
    /// connection's segments are no longer the script's to check, and
    /// packetdrill drops them unseen (run_packet.c,
    /// find_socket_for_live_packet matches the socket under test only).
    pub old_conn_muted: bool,
    /// When (ns) the poll() being run started, for its timeout.
    pub poll_started: i64,
    /// The peer's ISN as the script wrote its last SYN (packetdrill numbers
    /// the peer's later segments from it).
    pub remote_isn: u32,
    /// When (ns) the connection last took in data or completed its handshake:
    /// Linux's icsk_ack.lrcvtime, behind tcpi_last_data_recv.
    last_data_in: Option<i64>,
    /// The script's epoll instance, if it made one.
    pub epoll: crate::epoll::Epoll,
    /// TCP_INQ and SO_TIMESTAMPING state.
    pub ext: crate::syscall::sockext::SockExt,
    /// Files the script's shell lines made, and those it opened.
    pub files: crate::files::Files,
    /// The live connection's unanswered cookie request is in the cache.
    pub(crate) tfo_no_cookie_noted: bool,
}

/// Converts script-relative nanoseconds to an engine instant.
pub(crate) fn instant(ns: i64) -> Instant {
    Instant::from_nanos(BASE_NS.saturating_add(ns.max(0) as u64))
}

/// Converts an engine instant to script-relative nanoseconds.
fn rel(i: Instant) -> i64 {
    i.as_nanos().saturating_sub(BASE_NS).min(i64::MAX as u64) as i64
}

/// Runs a parsed script and reports the outcome.
pub fn run_script(script: &Script, settings: &Settings) -> ScriptReport {
    let mut r = match start(script, settings) {
        Ok(r) => r,
        Err(report) => return *report,
    };
    if let Err(f) = r.run() {
        r.report.failure = Some(*f);
    }
    r.report
}

/// The runner of `script` before its first event; a bad script option
/// ends the run at once with its report.
pub(crate) fn start<'a>(
    script: &'a Script,
    settings: &Settings,
) -> Result<Runner<'a>, Box<ScriptReport>> {
    let mut settings = settings.clone();
    let mut report = ScriptReport {
        path: script.path.clone(),
        failure: None,
        skipped: Vec::new(),
        notes: Vec::new(),
        trace: Vec::new(),
    };
    for o in &script.options {
        match apply_option(&mut settings, o) {
            Ok(true) => {}
            Ok(false) => report.notes.push(format!(
                "line {}: option --{} is ignored by the drill runner",
                o.line, o.name
            )),
            Err(m) => {
                report.failure = Some(Failure::new(o.line, FailKind::Parse, m));
                return Err(Box::new(report));
            }
        }
    }
    if !settings.udp_encaps {
        let udp_line = script.events.iter().find(|e| match &e.kind {
            EventKind::Packet(p) => p.udp.is_some(),
            EventKind::Icmp(i) => i.udp.is_some(),
            _ => false,
        });
        if let Some(e) = udp_line {
            report.failure = Some(Failure::new(
                e.line,
                FailKind::Parse,
                "`/udp(SRC > DST)` needs the script option --udp_encapsulation=tcp",
            ));
            return Err(Box::new(report));
        }
    }
    let script_local_isn = script
        .events
        .iter()
        .find_map(|e| match &e.kind {
            // packetdrill takes the script's ISN from its first SYN whose
            // number is checked (run_packet.c: not with FLAG_IGNORE_SEQ).
            EventKind::Packet(p)
                if p.dir == Direction::Outbound && p.flags & flag::SYN != 0 && !p.any_seq =>
            {
                Some(p.seq)
            }
            _ => None,
        })
        .unwrap_or(0);
    let stack_policy = settings.stack.config().send_policy;
    Ok(Runner {
        script,
        settings,
        now: 0,
        conn: None,
        conn_cfg: None,
        conn_uncork_to: stack_policy,
        conn_ip: Default::default(),
        errno_reason: None,
        ever_synced: false,
        conn_accepted: false,
        conn_ack_policy_set: false,
        last_ack_sent: None,
        delack_fired_seen: 0,
        listener_fd: None,
        listener_cfg: None,
        local_port: SERVER_PORT,
        remote_port: CLIENT_PORT,
        script_local_isn,
        ts_offset: None,
        queue: VecDeque::new(),
        socks: BTreeMap::new(),
        pending: None,
        report,
        last_sched: 0,
        last_inbound: false,
        have_last: false,
        buf: Vec::new(),
        write_progress: 0,
        checking_at: 0,
        checks: crate::pycheck::Program::default(),
        host: crate::sysctl::HostSysctls::default(),
        more_corked: false,
        zc: crate::zerocopy::ZeroCopy::default(),
        tfo_cache: Default::default(),
        old_conn_muted: false,
        poll_started: 0,
        remote_isn: 0,
        last_data_in: None,
        epoll: crate::epoll::Epoll::default(),
        ext: Default::default(),
        files: Default::default(),
        tfo_no_cookie_noted: false,
    })
}

/// Applies one `--name=value` script option; false when it is ignored.
fn apply_option(s: &mut Settings, o: &ScriptOption) -> Result<bool, String> {
    let v = o.value.as_deref();
    match o.name.as_str() {
        "tolerance_usecs" => {
            s.tolerance_usecs = v
                .and_then(|v| v.parse().ok())
                .filter(|v: &i64| *v >= 0)
                .ok_or("--tolerance_usecs needs a non-negative integer")?;
            Ok(true)
        }
        "tolerance_percent" => {
            s.tolerance_percent = v
                .and_then(|v| v.parse().ok())
                .filter(|v: &f64| *v >= 0.0 && v.is_finite())
                .ok_or("--tolerance_percent needs a non-negative number")?;
            Ok(true)
        }
        "tcp_ts_tick_usecs" => {
            s.tcp_ts_tick_usecs = v
                .and_then(|v| v.parse().ok())
                .filter(|v: &i64| (0..=1_000_000).contains(v))
                .ok_or("--tcp_ts_tick_usecs needs an integer from 0 to 1000000")?;
            Ok(true)
        }
        "local_ip" | "remote_ip" => {
            let a: std::net::IpAddr = v
                .and_then(|v| v.parse().ok())
                .ok_or_else(|| format!("--{} needs an IP address", o.name))?;
            if o.name == "local_ip" {
                s.local_ip = a;
            } else {
                s.remote_ip = a;
            }
            Ok(true)
        }
        "mss" => {
            s.mss = Some(
                v.and_then(|v| v.parse().ok())
                    .filter(|v: &usize| (1..=65_535).contains(v))
                    .ok_or("--mss needs a segment size from 1 to 65535")?,
            );
            Ok(true)
        }
        "mtu" => {
            s.mtu = Some(parse_mtu(v)?);
            Ok(true)
        }
        "udp_encapsulation" => match v {
            Some("tcp") => {
                s.udp_encaps = true;
                Ok(true)
            }
            Some("sctp") => Err("--udp_encapsulation=sctp: only TCP is supported".into()),
            _ => Err("--udp_encapsulation needs tcp (or sctp)".into()),
        },
        "strict_segments" => {
            s.strict_segments = !matches!(v, Some("0") | Some("false"));
            Ok(true)
        }
        _ => Ok(false),
    }
}

/// An MTU from IPv4's least (RFC 791: 68 bytes) to 65535.
pub(crate) fn parse_mtu(v: Option<&str>) -> Result<u16, String> {
    v.and_then(|v| v.parse().ok())
        .filter(|v: &u16| *v >= 68)
        .ok_or_else(|| "--mtu needs an MTU from 68 to 65535".to_string())
}

impl<'a> Runner<'a> {
    /// Builds a failure for event `idx` with the current time.
    pub(crate) fn fail(&self, idx: usize, kind: FailKind, msg: impl Into<String>) -> Box<Failure> {
        let ev = &self.script.events[idx];
        let mut f = Box::new(Failure::new(ev.line, kind, msg));
        f.script = Some(ev.text.clone());
        f.time_ns = Some(self.now);
        f
    }

    /// Runs every event, then checks nothing is left over.
    pub(crate) fn run(&mut self) -> Res<()> {
        if self.settings.no_python {
            if let Some(idx) = (0..self.script.events.len())
                .find(|&i| matches!(self.script.events[i].kind, EventKind::Code(_)))
            {
                return Err(self.fail(
                    idx,
                    FailKind::Unsupported,
                    "%{ }% Python block not run (--no-python)",
                ));
            }
        }
        for idx in 0..self.script.events.len() {
            self.run_event(idx)?;
        }
        self.finish()
    }

    /// Resolves an event's (start, end, tolerance) per packetdrill's rules.
    fn resolve_time(&self, ev: &Event, inbound: bool) -> (i64, i64, i64) {
        let t = ev.time;
        let (start, end) = match t.kind {
            TimeKind::Any => (self.now, self.now.saturating_add(ANY_WAIT_NS)),
            TimeKind::Absolute => {
                let s = t.start_us * 1_000;
                (s, t.range_end_us.map_or(s, |e| e * 1_000))
            }
            TimeKind::Relative => {
                let base = if self.have_last && self.last_inbound && inbound {
                    self.last_sched
                } else {
                    self.now
                };
                let s = base.saturating_add(t.start_us * 1_000);
                (
                    s,
                    t.range_end_us.map_or(s, |e| base.saturating_add(e * 1_000)),
                )
            }
        };
        let mut tol = self.settings.tolerance_usecs * 1_000;
        if self.have_last {
            let gap = start.saturating_sub(self.last_sched).max(0) as f64;
            let dynamic = (gap * self.settings.tolerance_percent / 100.0) as i64;
            tol = tol.max(dynamic);
        }
        (start, end, tol)
    }

    /// End time of a blocking call written `a...b`, resolved like its start.
    fn resolve_block_end(&self, ev: &Event, start: i64) -> Option<i64> {
        let b = ev.time.block_end_us? * 1_000;
        Some(match ev.time.kind {
            TimeKind::Relative => start
                .saturating_sub(ev.time.start_us * 1_000)
                .saturating_add(b),
            _ => b,
        })
    }

    fn run_event(&mut self, idx: usize) -> Res<()> {
        let ev = &self.script.events[idx];
        let inbound = matches!(&ev.kind, EventKind::Packet(p) if p.dir == Direction::Inbound)
            || matches!(ev.kind, EventKind::Icmp(_));
        let (start, end, tol) = self.resolve_time(ev, inbound);
        match &ev.kind {
            EventKind::Packet(p) if p.dir == Direction::Outbound => {
                self.check_pending_overdue(start)?;
                self.expect_outbound(idx, p, start, end, tol)?;
            }
            kind => {
                self.advance_to(start)?;
                if self.now > start.saturating_add(tol) {
                    return Err(self.fail(
                        idx,
                        FailKind::Timing,
                        format!(
                            "event scheduled at {} s could only run at {} s (earlier events ran late; tolerance {} s)",
                            secs(start),
                            secs(self.now),
                            secs(tol)
                        ),
                    ));
                }
                self.check_pending_overdue(self.now)?;
                match kind {
                    EventKind::Packet(p) => self.inject(p),
                    EventKind::Icmp(i) => self.inject_icmp(i),
                    EventKind::Syscall(s) => {
                        let block_end = self.resolve_block_end(ev, start);
                        self.syscall(idx, s, block_end, tol)?;
                    }
                    EventKind::Command(c) => {
                        let made = self.files.apply_command(c);
                        if let Some(e) = made.error {
                            return Err(self.fail(idx, FailKind::Unsupported, e));
                        }
                        if !made.modelled.is_empty() {
                            self.report.notes.push(format!(
                                "line {}: files modelled: {}",
                                ev.line,
                                made.modelled.join(", ")
                            ));
                        }
                        let c = &made.rest;
                        let a = self.host.apply_command(c, self.settings.stack);
                        if a.flush_tfo_cache {
                            self.tfo_cache.clear();
                        }
                        if !a.modelled.is_empty() {
                            self.report.notes.push(format!(
                                "line {}: host settings modelled: {}",
                                ev.line,
                                a.modelled.join(", ")
                            ));
                        }
                        let all_files = c.trim().is_empty() && !made.modelled.is_empty();
                        if (a.modelled.is_empty() && !all_files) || !a.not_modelled.is_empty() {
                            let what = if a.not_modelled.is_empty() {
                                String::new()
                            } else {
                                format!(" (not modelled: {})", a.not_modelled.join(", "))
                            };
                            self.report
                                .skipped
                                .push((ev.line, format!("shell command `{c}` is not run{what}")));
                        }
                    }
                    EventKind::Code(code) => {
                        let Some(c) = self.conn.as_ref() else {
                            return Err(self.fail(
                                idx,
                                FailKind::Unsupported,
                                "%{ }% block with no connection to read TCP_INFO from",
                            ));
                        };
                        let mut vars = crate::pycheck::tcp_info(c);
                        vars.extend(crate::pycheck::tcp_info_chrono(c, instant(self.now)));
                        if let Some(t) = self.last_data_in {
                            // tcp_get_info: jiffies since lrcvtime, in ms.
                            let ms = (self.now - t).max(0) / 1_000_000;
                            vars.push(("tcpi_last_data_recv", ms as u64));
                        }
                        self.checks.push(&self.script.path, ev.line, &vars, code);
                    }
                }
            }
        }
        self.check_pending_done()?;
        self.last_sched = start;
        self.last_inbound = inbound;
        self.have_last = true;
        Ok(())
    }

    /// After the last event: a blocked call must return. Segments still queued
    /// were sent after the last `>` line matched, and packetdrill never looks
    /// at them (it reads outbound packets only for `>` lines: run.c's
    /// run_script ends with the events), so they are noted, not checked.
    fn finish(&mut self) -> Res<()> {
        if let Some(p) = self.pending.clone() {
            let deadline = p.end_ns.saturating_add(p.tol_ns);
            self.advance_to(deadline)?;
            self.check_pending_done()?;
            if self.pending.is_some() {
                return Err(self.fail(
                    p.event,
                    FailKind::Syscall,
                    format!(
                        "blocking system call had not returned by {} s (expected at {} s)",
                        secs(deadline),
                        secs(p.end_ns)
                    ),
                ));
            }
        }
        self.run_checks()?;
        let late = self.queue.len();
        if let Some(e) = self.queue.front() {
            self.report.notes.push(format!(
                "{late} segment{} sent after the last `>` line not checked (as packetdrill), the first at {} s: {}",
                if late == 1 { "" } else { "s" },
                secs(e.t),
                self.fmt_emitted(e)
            ));
        }
        Ok(())
    }

    /// Runs the script's `%{ }%` blocks (see [`crate::pycheck`]).
    fn run_checks(&mut self) -> Res<()> {
        use crate::pycheck::CheckError;
        if self.checks.is_empty() {
            return Ok(());
        }
        let (line, kind, msg) = match self.checks.run(self.settings.python_timeout) {
            Ok(()) => return Ok(()),
            Err(CheckError::NoPython(m)) => (
                0,
                FailKind::Unsupported,
                format!("%{{ }}% checks not run: {m}"),
            ),
            Err(CheckError::Missing { line, name }) => (
                line,
                FailKind::Unsupported,
                format!("%{{ }}% check reads {name}, which the runner does not report"),
            ),
            Err(CheckError::Failed { line, msg }) => (
                line,
                FailKind::Check,
                format!("%{{ }}% check failed: {msg}"),
            ),
            Err(CheckError::Timeout(t)) => (
                0,
                FailKind::Check,
                format!(
                    "%{{ }}% blocks still running after {} s (--python-timeout), killed",
                    t.as_secs_f64()
                ),
            ),
        };
        let mut f = Box::new(Failure::new(line, kind, msg));
        f.script = self
            .script
            .events
            .iter()
            .find(|e| e.line == line)
            .map(|e| e.text.clone());
        Err(f)
    }

    /// Runs engine timers due up to `t`, then sets the clock to `t`.
    pub(crate) fn advance_to(&mut self, t: i64) -> Res<()> {
        let mut steps = 0u32;
        let mut last_dl = i64::MIN;
        while let Some(dl) = self.conn.as_ref().and_then(|c| c.poll_timeout()) {
            let dl = rel(dl);
            if dl > t {
                break;
            }
            if dl == last_dl {
                steps += 1;
                if steps > MAX_STEPS_AT_ONE_TIME {
                    let mut f = Box::new(Failure::new(
                        0,
                        FailKind::Engine,
                        format!(
                            "engine keeps asking for a timeout at {} s without progress",
                            secs(dl)
                        ),
                    ));
                    f.time_ns = Some(self.now);
                    return Err(f);
                }
            } else {
                steps = 0;
                last_dl = dl;
            }
            self.now = self.now.max(dl);
            let now = instant(self.now);
            if let Some(c) = self.conn.as_mut() {
                c.handle_timeout(now);
            }
            self.drain();
            self.check_pending_done()?;
        }
        self.now = self.now.max(t);
        Ok(())
    }

    /// Collects everything the engine wants to send now.
    pub(crate) fn drain(&mut self) {
        let now = instant(self.now);
        let Some(c) = self.conn.as_mut() else {
            return;
        };
        let mut out = Vec::new();
        // RFC 6951 5.1: from the host's tunneling port to the connection's.
        let encaps = match c.udp_encaps_port() {
            0 => None,
            dst => Some(UdpPorts {
                src: self.host.udp_tunneling_port(),
                dst,
            }),
        };
        let fired = c.counters().delack_timer_fired;
        let by_delack = fired > self.delack_fired_seen;
        self.delack_fired_seen = fired;
        for _ in 0..MAX_STEPS_AT_ONE_TIME {
            self.buf.clear();
            match c.poll_transmit(now, &mut self.buf) {
                Some(repr) => {
                    let acks_new =
                        repr.flags.ack() && self.last_ack_sent.is_none_or(|last| repr.ack > last);
                    if acks_new {
                        self.last_ack_sent = Some(repr.ack);
                    }
                    out.push(Emitted {
                        t: self.now,
                        repr,
                        payload_len: self.buf.len(),
                        acks_new,
                        by_delack,
                        ect: c.transmit_ect(),
                        udp: encaps,
                        ip: self.conn_ip,
                    })
                }
                None => break,
            }
        }
        if c.state().synchronized() {
            self.ever_synced = true;
        }
        if self.old_conn_muted {
            out.clear();
        }
        let sent = out.iter().map(|e| (e.repr.seq, e.payload_len));
        self.ext.observe(self.now, c.snd_una(), sent);
        for e in out {
            let line = format!("{} > {}", secs(self.now), self.fmt_emitted(&e));
            self.report.trace.push(line);
            self.queue.push_back(e);
        }
    }

    /// Delivers a scripted inbound segment (or answers it as the host would).
    fn inject(&mut self, p: &PacketSpec) {
        let repr = self.inbound_repr(p);
        // The SYN that opens a connection fixes the peer's ISN (a SYN on a
        // synchronized connection, RFC 5961 4, does not).
        if p.flags & flag::SYN != 0 && !self.ever_synced {
            self.remote_isn = p.seq;
        }
        let len = p.len as usize;
        self.report.trace.push(format!("{} < {p}", secs(self.now)));
        let Some(arrival) = self.arrival_port(p.udp) else {
            return;
        };
        let alive = self
            .conn
            .as_ref()
            .is_some_and(|c| c.state() != tinygram_proto::State::Closed);
        if alive && !self.encaps_admits(arrival) {
            self.host_reset(&repr, len, arrival);
            return;
        }
        if alive {
            let out_before = self.epoll.watch.map_or(0, |(fd, _)| self.poll_mask(fd));
            let payload = vec![0u8; len];
            let now = instant(self.now);
            let mut wake = false;
            let recycles = |c: &Connection| c.counters().time_wait_recycles;
            let recycled_before = self.conn.as_ref().map_or(0, recycles);
            if let Some(c) = self.conn.as_mut() {
                if p.ecn == Some(IpEcn::Ce) {
                    c.note_ce();
                }
                let before = (synced(c.state()), c.counters().data_segments_received);
                let rx_before = (c.recv_available(), c.state(), c.error().is_some());
                // virtio_net_hdr_to_skb: only a packet longer than gso_size is GSO.
                let ip_len = 20 + repr.header_len() + payload.len();
                match self.settings.mss {
                    Some(gso) if ip_len > gso && !payload.is_empty() => {
                        c.handle_gro_segment(now, &repr, &payload, gso)
                    }
                    _ => c.handle_segment(now, &repr, &payload),
                }
                if let Some(fo) = c.fast_open().learned {
                    let remote = self.settings.remote_ip;
                    self.tfo_cache.insert(remote, fo.cookie, fo.experimental);
                }
                // Once per connection: its cookie request went unanswered.
                // Linux's cache falls back to the experimental option
                // (tcp_metrics.c try_exp); FreeBSD's client knows no such
                // option, and the other stacks keep asking with kind 34.
                let linux = self.settings.stack == crate::stack::Stack::linux();
                let unanswered = c.fast_open().no_cookie_reply && linux;
                if unanswered && !self.tfo_no_cookie_noted {
                    let exp = c.config().fast_open.experimental;
                    self.tfo_cache.note_no_cookie(self.settings.remote_ip, exp);
                }
                self.tfo_no_cookie_noted = unanswered;
                if let Some(m) = c.fast_open().peer_mss {
                    self.tfo_cache.set_mss(self.settings.remote_ip, m);
                }
                if let (true, Some(_)) = (c.fast_open().no_cookie, c.config().fastopen_path_disable)
                {
                    // FreeBSD tcp_fastopen_disable_path: no valid cookie came back.
                    self.tfo_cache.disable(self.settings.remote_ip, now);
                }
                let rx_after = (c.recv_available(), c.state(), c.error().is_some());
                // Linux stamps lrcvtime when data is taken in (tcp_event_data_recv)
                // and when the handshake completes (tcp_finish_connect,
                // tcp_create_openreq_child).
                let after = (synced(c.state()), c.counters().data_segments_received);
                if after.1 > before.1 || (after.0 && !before.0) {
                    self.last_data_in = Some(self.now);
                }
                // sk_data_ready on new data or an error; sk_state_change on
                // any change of state (handshake done, FIN in, reset).
                if rx_after.0 > rx_before.0
                    || rx_after.1 != rx_before.1
                    || (rx_after.2 && !rx_before.2)
                {
                    wake = true;
                }
            }
            // A zerocopy completion queued on the error queue: sk_error_report.
            if let Some(c) = self.conn.as_ref() {
                let before = self.zc.outstanding();
                self.zc.acked(c.snd_una());
                wake |= self.zc.outstanding() < before;
            }
            if wake {
                self.epoll_wake();
            }
            // sk_write_space: an ACK made a socket that could not take more writable again.
            if let Some((fd, _)) = self.epoll.watch {
                if out_before & 0x4 == 0 && self.poll_mask(fd) & 0x4 != 0 {
                    self.epoll_wake();
                }
            }
            self.release_more_cork();
            self.drain();
            self.after_transmit_space(out_before);
            if self.conn.as_ref().map_or(0, recycles) > recycled_before {
                self.reopen_after_time_wait(p);
            }
        } else {
            self.host_reset(&repr, len, arrival);
        }
    }

    /// A SYN closed the connection in TIME-WAIT (FreeBSD tcp_twcheck) and is
    /// looked up again (tcp_input.c `findpcb`): a listener still open takes
    /// it as a new connection, otherwise no socket is left and it gets a RST.
    /// The accepted socket keeps its descriptor but no connection.
    fn reopen_after_time_wait(&mut self, p: &PacketSpec) {
        let listener = self
            .listener_fd
            .and_then(|fd| self.socks.get(&fd).cloned())
            .zip(self.listener_cfg.clone());
        if let Some((sock, cfg)) = listener {
            for s in self.socks.values_mut() {
                if s.kind == crate::syscall::SockKind::Stream {
                    s.kind = crate::syscall::SockKind::Bound;
                }
            }
            self.conn = Some(Connection::listen(
                cfg.clone(),
                SERVER_PORT,
                IsnSeries::with_step(SeqNumber(LOCAL_ISN), 0),
            ));
            self.conn_cfg = Some(cfg);
            self.conn_uncork_to = sock.uncork_to;
            self.conn_ip = sock.ip;
            self.new_connection(&sock);
            self.conn_accepted = false;
            self.ever_synced = false;
        }
        self.inject(p);
    }

    /// RFC 9293 3.10.7.1: a segment for no connection is answered with a
    /// RST, in UDP when it came in UDP from port `arrival` (FreeBSD
    /// tcp_dropwithreset answers by the port the segment came from).
    fn host_reset(&mut self, seg: &TcpRepr, len: usize, arrival: u16) {
        let Some(r) = tinygram_proto::conn::rst_reply(seg, len) else {
            return;
        };
        let e = Emitted {
            t: self.now,
            repr: r,
            payload_len: 0,
            acks_new: false,
            by_delack: false,
            ect: false,
            udp: (arrival != 0).then(|| UdpPorts {
                src: self.host.udp_tunneling_port(),
                dst: arrival,
            }),
            ip: self.reset_ip(),
        };
        self.report.trace.push(format!(
            "{} > {} (host: no connection)",
            secs(self.now),
            self.fmt_emitted(&e)
        ));
        self.queue.push_back(e);
    }

    /// The IP fields of a reset for no connection: FreeBSD's tcp_respond
    /// takes IP_TOS and IP_TTL from the socket the lookup found (one bound
    /// or listening on the port), otherwise the host's defaults.
    fn reset_ip(&self) -> crate::ipfields::IpFields {
        use crate::syscall::SockKind;
        self.socks
            .values()
            .find(|s| matches!(s.kind, SockKind::Bound | SockKind::Listener))
            .map(|s| s.ip)
            .unwrap_or_default()
    }

    /// Maps a scripted inbound segment to wire values.
    fn inbound_repr(&self, p: &PacketSpec) -> TcpRepr {
        let syn = p.flags & flag::SYN != 0;
        let mut o = TcpOptions::default();
        if let Some(OptionsSpec::List(list)) = &p.options {
            for opt in list {
                match opt {
                    OptSpec::Mss(v) => o.mss = Some(*v),
                    OptSpec::Wscale(v) => o.window_scale = Some(*v),
                    OptSpec::SackOk => o.sack_permitted = true,
                    OptSpec::Sack(blocks) => {
                        let mut sb = SackBlocks::default();
                        for (l, r) in blocks {
                            sb.push(
                                SeqNumber(self.local_wire(*l, syn)),
                                SeqNumber(self.local_wire(*r, syn)),
                            );
                        }
                        o.sack_blocks = sb;
                    }
                    OptSpec::Ts { val, ecr } => {
                        o.timestamps = Some(Timestamps {
                            tsval: *val,
                            tsecr: if *ecr == 0 {
                                0
                            } else {
                                ecr.wrapping_add(self.ts_offset.unwrap_or(0))
                            },
                        })
                    }
                    OptSpec::NakOk => o.nak_permitted = true,
                    OptSpec::Nak { seq, count } => {
                        o.nak = Some(Nak {
                            seq: SeqNumber(self.local_wire(*seq, syn)),
                            count: *count,
                        })
                    }
                    OptSpec::BigWin(w) => o.big_window_offer = Some(*w),
                    OptSpec::WinHi(w) => o.big_window_upper = Some(*w),
                    OptSpec::FastOpen { exp, cookie } => {
                        o.fast_open = TfoCookie::new(cookie).map(|cookie| FastOpenOption {
                            experimental: *exp,
                            cookie,
                        })
                    }
                    OptSpec::Md5(d) => {
                        o.unknown.push(tinygram_proto::wire::kind::MD5SIG, d);
                    }
                    OptSpec::Nop | OptSpec::Eol => {}
                }
            }
        }
        TcpRepr {
            src_port: self.remote_port,
            dst_port: self.local_port,
            seq: SeqNumber(if p.abs_seq {
                p.seq
            } else {
                p.seq
                    .wrapping_add(self.remote_base(p.flags & flag::SYN != 0))
            }),
            ack: SeqNumber(p.ack.map_or(0, |a| self.local_wire(a, syn))),
            flags: Flags(p.flags),
            window: p.win.unwrap_or(65_535),
            urgent: 0,
            options: o,
        }
    }

    /// Wire value of the peer's script sequence number 0. As in packetdrill,
    /// the peer's SYN and the ACK of it in our SYN-ACK are written absolute;
    /// every later number is relative to the peer's ISN.
    fn remote_base(&self, syn: bool) -> u32 {
        if syn {
            REMOTE_BASE
        } else {
            REMOTE_BASE.wrapping_add(self.remote_isn)
        }
    }

    /// Script-relative local sequence number to wire.
    pub(crate) fn local_wire(&self, s: u32, syn: bool) -> u32 {
        s.wrapping_add(self.local_offset(syn))
    }

    /// Wire minus script for our numbers, as packetdrill's
    /// local_seq_script_to_live_offset: in a SYN segment numbers are written
    /// absolute (from the script's ISN), in every other one relative to ISN 0.
    fn local_offset(&self, syn: bool) -> u32 {
        if syn {
            LOCAL_ISN.wrapping_sub(self.script_local_isn)
        } else {
            LOCAL_ISN
        }
    }

    /// Wire local sequence number to script-relative.
    fn local_script(&self, w: u32, syn: bool) -> u32 {
        if self.isn_unknown_reset(w) {
            return 0;
        }
        w.wrapping_sub(self.local_offset(syn))
    }

    /// A reset answering a segment without ACK for no connection carries
    /// SEQ=0 (RFC 9293 3.10.7.1); with no ISN of ours known, packetdrill
    /// shows it as the 0 it is (nplab scripts: `> R. 0:0(0) ack N`).
    fn isn_unknown_reset(&self, w: u32) -> bool {
        w == 0 && self.conn.is_none()
    }

    /// Takes the next emitted segment, running timers up to `deadline` if none is queued.
    fn next_emitted(&mut self, deadline: i64) -> Res<Option<Emitted>> {
        let mut steps = 0u32;
        loop {
            if let Some(e) = self.queue.pop_front() {
                return Ok(Some(e));
            }
            let Some(dl) = self.conn.as_ref().and_then(|c| c.poll_timeout()) else {
                return Ok(None);
            };
            let dl = rel(dl);
            if dl > deadline {
                return Ok(None);
            }
            steps += 1;
            if steps > MAX_STEPS_AT_ONE_TIME {
                let mut f = Box::new(Failure::new(
                    0,
                    FailKind::Engine,
                    "engine timers fire without end and send nothing",
                ));
                f.time_ns = Some(self.now);
                return Err(f);
            }
            self.now = self.now.max(dl);
            let now = instant(self.now);
            if let Some(c) = self.conn.as_mut() {
                c.handle_timeout(now);
            }
            self.drain();
            self.check_pending_done()?;
        }
    }

    /// Waits for the engine's next segment and checks it against `p`.
    fn expect_outbound(
        &mut self,
        idx: usize,
        p: &PacketSpec,
        start: i64,
        end: i64,
        tol: i64,
    ) -> Res<()> {
        let any = self.script.events[idx].time.kind == TimeKind::Any;
        let deadline = if any { end } else { end.saturating_add(tol) };
        let Some(first) = self.next_emitted(deadline)? else {
            self.now = self.now.max(deadline);
            let mut f = self.fail(
                idx,
                FailKind::Mismatch,
                if any {
                    "expected segment was never sent".to_string()
                } else {
                    format!(
                        "expected segment was not sent by {} s (expected at {} s, tolerance {} s)",
                        secs(deadline),
                        secs(if start == end { start } else { end }),
                        secs(tol)
                    )
                },
            );
            f.expected = Some(p.to_string());
            let next = self
                .conn
                .as_ref()
                .and_then(|c| c.poll_timeout())
                .map(|d| format!("nothing (next engine timer at {} s)", secs(rel(d))))
                .unwrap_or_else(|| "nothing (no engine timer pending)".into());
            f.actual = Some(next);
            f.hint = self.quick_ack_hint(p, AckSymptom::Missing);
            return Err(f);
        };
        if !any && (first.t < start.saturating_sub(tol) || first.t > end.saturating_add(tol)) {
            let early = first.t < start.saturating_sub(tol);
            let mut f = self.fail(
                idx,
                FailKind::Timing,
                format!(
                    "segment sent {} at {} s; expected {} (tolerance {} s)",
                    if early { "too early" } else { "too late" },
                    secs(first.t),
                    if start == end {
                        format!("at {} s", secs(start))
                    } else {
                        format!("in {}~{} s", secs(start), secs(end))
                    },
                    secs(tol)
                ),
            );
            f.expected = Some(p.to_string());
            f.actual = Some(self.fmt_emitted(&first));
            f.time_ns = Some(first.t);
            let symptom = if early {
                AckSymptom::Early(&first)
            } else {
                AckSymptom::Late(&first)
            };
            f.hint = self.quick_ack_hint(p, symptom);
            return Err(f);
        }
        let mut agg = first.clone();
        if !self.settings.strict_segments {
            while agg.payload_len < p.len as usize && agg.payload_len > 0 {
                let Some(n) = self.next_emitted(deadline)? else {
                    break;
                };
                let contiguous = n.repr.seq == agg.repr.seq + agg.payload_len
                    && n.payload_len > 0
                    && !n.repr.flags.syn()
                    && !n.repr.flags.rst()
                    && !agg.repr.flags.fin()
                    && n.repr.flags.ack() == agg.repr.flags.ack()
                    && n.udp == agg.udp;
                if !contiguous {
                    self.queue.push_front(n);
                    break;
                }
                agg.payload_len += n.payload_len;
                // packetdrill's aggregate_packets (packet.c): the headers of
                // the last packet, with the first one's sequence number and CWR.
                agg.repr.flags =
                    Flags((n.repr.flags.0 & !flag::CWR) | (agg.repr.flags.0 & flag::CWR));
                agg.repr.ack = n.repr.ack;
                agg.repr.window = n.repr.window;
            }
        }
        self.checking_at = start;
        if let Err(msg) = self.compare(p, &agg) {
            let mut f = self.fail(idx, FailKind::Mismatch, msg);
            f.expected = Some(p.to_string());
            f.actual = Some(self.fmt_emitted(&agg));
            f.time_ns = Some(first.t);
            f.hint = self.quick_ack_hint(p, AckSymptom::Other(&agg));
            return Err(f);
        }
        Ok(())
    }

    /// [`QUICK_ACK_HINT`] when the failure looks like an ACK the script
    /// expected at once that the engine delayed, or the other way round, and
    /// the ACK policy is `--stack rfc`'s default (the script chose none).
    fn quick_ack_hint(&self, p: &PacketSpec, symptom: AckSymptom<'_>) -> Option<String> {
        if self.settings.stack != Stack::rfc() || self.conn_ack_policy_set {
            return None;
        }
        let pure_ack = |e: &Emitted| e.repr.flags.0 == flag::ACK && e.payload_len == 0;
        let wants_pure_ack = p.flags == flag::ACK && p.len == 0;
        let delayed_vs_quick = match symptom {
            // The engine owes an ACK (data or FIN not yet acknowledged): it is
            // waiting for its delayed-ACK timer.
            AckSymptom::Missing => {
                wants_pure_ack
                    && self.conn.as_ref().is_some_and(|c| {
                        c.state().synchronized() && self.last_ack_sent != Some(c.rcv_nxt())
                    })
            }
            // The ACK waited for the delayed-ACK timer.
            AckSymptom::Late(e) => wants_pure_ack && pure_ack(e) && e.by_delack,
            // The ACK left at once where the script expects it to wait.
            AckSymptom::Early(e) => wants_pure_ack && pure_ack(e) && e.acks_new && !e.by_delack,
            AckSymptom::Other(e) => {
                if wants_pure_ack {
                    // The ACK waited and rode on data or a FIN.
                    !pure_ack(e) && e.acks_new && e.repr.flags.0 & (flag::SYN | flag::RST) == 0
                } else {
                    // A pure ACK at once where the script expects none yet.
                    p.flags & flag::SYN == 0 && pure_ack(e) && e.acks_new && !e.by_delack
                }
            }
        };
        delayed_vs_quick.then(|| QUICK_ACK_HINT.to_string())
    }

    /// Compares an (aggregated) emitted segment with the script; Err names the first difference.
    fn compare(&mut self, p: &PacketSpec, e: &Emitted) -> Result<(), String> {
        let a = &e.repr;
        // packetdrill compares the header layers first: UDP or not, then its ports.
        if p.udp != e.udp {
            let show = |u: Option<UdpPorts>| u.map_or("plain TCP".to_string(), |u| u.to_string());
            return Err(format!(
                "UDP encapsulation: expected {} but the engine sent {}",
                show(p.udp),
                show(e.udp)
            ));
        }
        // RFC 3168 5: the IP ECN field, when the script annotates it.
        if let Some(want) = p.ecn {
            let ok = match want {
                IpEcn::Ect0 | IpEcn::Ect01 => e.ect,
                IpEcn::NotEct => !e.ect,
                IpEcn::Ect1 | IpEcn::Ce => false,
            };
            if !ok {
                return Err(format!(
                    "IP ECN field: expected {} but the engine sent {}",
                    want.name(),
                    if e.ect { "[ect0]" } else { "[noecn]" }
                ));
            }
        }
        if let Some(ip) = p.ip {
            ip.check(e.ip, e.ect)?;
        }
        if a.flags.0 != p.flags {
            return Err(format!(
                "flags: expected {} but the engine sent {}",
                flags_to_string(p.flags),
                flags_to_string(a.flags.0)
            ));
        }
        if a.src_port != self.local_port || a.dst_port != self.remote_port {
            return Err(format!(
                "ports: expected {} > {} but the engine sent {} > {}",
                self.local_port, self.remote_port, a.src_port, a.dst_port
            ));
        }
        let seq = if p.abs_seq {
            a.seq.0
        } else {
            self.local_script(a.seq.0, a.flags.syn())
        };
        if seq != p.seq && !p.any_seq {
            return Err(format!(
                "sequence number: expected {} but the engine sent {seq}",
                p.seq
            ));
        }
        if e.payload_len != p.len as usize {
            return Err(format!(
                "payload length: expected {} bytes but the engine sent {}",
                p.len, e.payload_len
            ));
        }
        if let Some(ack) = p.ack {
            let actual = a.ack.0.wrapping_sub(self.remote_base(a.flags.syn()));
            if actual != ack {
                return Err(format!(
                    "ack number: expected {ack} but the engine sent {actual}"
                ));
            }
        }
        if let Some(w) = p.win {
            if a.window != w {
                return Err(format!(
                    "window: expected {w} but the engine sent {}",
                    a.window
                ));
            }
        }
        self.compare_options(p, a)
    }

    /// Checks options: none written = none sent (timestamps allowed), `<...>` = anything.
    fn compare_options(&mut self, p: &PacketSpec, a: &TcpRepr) -> Result<(), String> {
        let o = &a.options;
        let extra_engine = !o.unknown.is_empty();
        let list = match &p.options {
            Some(OptionsSpec::Any) => return Ok(()),
            None => {
                if o.mss.is_some()
                    || o.window_scale.is_some()
                    || o.sack_permitted
                    || !o.sack_blocks.is_empty()
                    || o.nak_permitted
                    || o.nak.is_some()
                    || o.big_window_offer.is_some()
                    || o.fast_open.is_some()
                    || extra_engine
                {
                    return Err("options: the script expects none but the engine sent some".into());
                }
                return Ok(());
            }
            Some(OptionsSpec::List(l)) => l,
        };
        let mut mss = None;
        let mut ws = None;
        let mut sack_ok = false;
        let mut sack: Option<&Vec<(u32, u32)>> = None;
        let mut ts = None;
        let (mut nak_ok, mut nak, mut bigwin, mut winhi) = (false, None, None, None);
        let mut fo = None;
        for opt in list {
            match opt {
                OptSpec::Mss(v) => mss = Some(*v),
                OptSpec::Wscale(v) => ws = Some(*v),
                OptSpec::SackOk => sack_ok = true,
                OptSpec::Sack(b) => sack = Some(b),
                OptSpec::Ts { val, ecr } => ts = Some((*val, *ecr)),
                OptSpec::NakOk => nak_ok = true,
                OptSpec::Nak { seq, count } => nak = Some((*seq, *count)),
                OptSpec::BigWin(w) => bigwin = Some(*w),
                OptSpec::WinHi(w) => winhi = Some(*w),
                OptSpec::FastOpen { exp, cookie } => {
                    fo = TfoCookie::new(cookie).map(|cookie| FastOpenOption {
                        experimental: *exp,
                        cookie,
                    })
                }
                OptSpec::Md5(_) => {
                    return Err("md5 option expected, but the engine does not sign its \
                                segments (TCP-MD5, RFC 2385, is not supported)"
                        .into())
                }
                OptSpec::Nop | OptSpec::Eol => {}
            }
        }
        if o.fast_open != fo {
            let show = |f: Option<FastOpenOption>| f.map_or("none".to_string(), |f| fmt_fo(&f));
            return Err(format!(
                "Fast Open option: expected {} but the engine sent {}",
                show(fo),
                show(o.fast_open)
            ));
        }
        if o.nak_permitted != nak_ok {
            return Err(format!(
                "nakOK option: expected {} but the engine sent {}",
                if nak_ok { "it" } else { "none" },
                if o.nak_permitted { "it" } else { "none" }
            ));
        }
        let base = self.remote_base(false);
        let actual_nak = o.nak.map(|n| (n.seq.0.wrapping_sub(base), n.count));
        if actual_nak != nak {
            let show =
                |n: Option<(u32, u8)>| n.map_or("none".into(), |(s, c)| format!("nak {s} {c}"));
            return Err(format!(
                "nak option: expected {} but the engine sent {}",
                show(nak),
                show(actual_nak)
            ));
        }
        if o.big_window_offer != bigwin {
            let show = |w: Option<u32>| w.map_or("none".into(), |w| format!("bigwin {w}"));
            return Err(format!(
                "bigwin option: expected {} but the engine sent {}",
                show(bigwin),
                show(o.big_window_offer)
            ));
        }
        // Option C rides on every segment once big windows are in use: like TS,
        // unchecked when no options are written, exact when a list is.
        if o.big_window_upper != winhi {
            return Err(format!(
                "winhi option: expected {} but the engine sent {}",
                winhi.map_or("none".into(), |w| w.to_string()),
                o.big_window_upper.map_or("none".into(), |w| w.to_string())
            ));
        }
        let show = |v: Option<String>| v.unwrap_or_else(|| "none".into());
        if o.mss != mss {
            return Err(format!(
                "mss option: expected {} but the engine sent {}",
                show(mss.map(|v| v.to_string())),
                show(o.mss.map(|v| v.to_string()))
            ));
        }
        if o.window_scale != ws {
            return Err(format!(
                "wscale option: expected {} but the engine sent {}",
                show(ws.map(|v| v.to_string())),
                show(o.window_scale.map(|v| v.to_string()))
            ));
        }
        if o.sack_permitted != sack_ok {
            return Err(format!(
                "sackOK option: expected {} but the engine sent {}",
                if sack_ok { "it" } else { "none" },
                if o.sack_permitted { "it" } else { "none" }
            ));
        }
        let actual_sack: Vec<(u32, u32)> = o
            .sack_blocks
            .as_slice()
            .iter()
            .map(|(l, r)| (l.0.wrapping_sub(base), r.0.wrapping_sub(base)))
            .collect();
        let want_sack = sack.cloned().unwrap_or_default();
        if actual_sack != want_sack {
            return Err(format!(
                "sack blocks: expected {want_sack:?} but the engine sent {actual_sack:?}"
            ));
        }
        match (ts, o.timestamps) {
            (None, None) => {}
            (Some((val, ecr)), Some(t)) => {
                if self.ts_offset.is_none() {
                    self.ts_offset = Some(t.tsval.wrapping_sub(val));
                }
                if t.tsecr != ecr {
                    return Err(format!(
                        "TS ecr: expected {ecr} but the engine sent {}",
                        t.tsecr
                    ));
                }
                self.check_tsval(val, t.tsval)?;
            }
            (Some(_), None) => return Err("TS option: expected it but the engine sent none".into()),
            (None, Some(_)) => return Err("TS option: expected none but the engine sent it".into()),
        }
        if extra_engine {
            return Err(
                "options: the engine sent options the script syntax cannot express (unknown kinds)"
                    .into(),
            );
        }
        Ok(())
    }

    /// packetdrill's TSval check (run_packet.c verify_outbound_tcp_option):
    /// with `--tcp_ts_tick_usecs`, the engine's TSval, moved into script space
    /// by the offset of the first TSval seen, may differ from the script's by at
    /// most the tolerance, which grows with the time since the script started.
    fn check_tsval(&self, script_val: u32, actual: u32) -> Result<(), String> {
        let tick = self.settings.tcp_ts_tick_usecs;
        let Some(offset) = self.ts_offset.filter(|_| tick > 0) else {
            return Ok(());
        };
        let mapped = actual.wrapping_sub(offset);
        let diff = i64::from((mapped.wrapping_sub(script_val) as i32).unsigned_abs());
        let dynamic =
            (self.settings.tolerance_percent / 100.0 * (self.checking_at / 1_000) as f64) as i64;
        let tol_us = self.settings.tolerance_usecs.max(dynamic);
        if diff.saturating_mul(tick) > tol_us {
            return Err(format!(
                "TS val: expected {script_val} but the engine sent {mapped} (in script terms; {tick} us a tick, tolerance {tol_us} us)"
            ));
        }
        Ok(())
    }

    /// An emitted segment in script notation, with its UDP encapsulation.
    pub(crate) fn fmt_emitted(&self, e: &Emitted) -> String {
        let s = self.fmt_actual(&e.repr, e.payload_len);
        match e.udp {
            Some(u) => format!("{s}{u}"),
            None => s,
        }
    }

    /// Formats an emitted segment in script notation (relative numbers).
    pub(crate) fn fmt_actual(&self, a: &TcpRepr, len: usize) -> String {
        let seq = self.local_script(a.seq.0, a.flags.syn());
        let mut s = format!(
            "{} {}:{}({})",
            flags_to_string(a.flags.0),
            seq,
            seq.wrapping_add(len as u32),
            len
        );
        if a.flags.ack() {
            s.push_str(&format!(
                " ack {}",
                a.ack.0.wrapping_sub(self.remote_base(a.flags.syn()))
            ));
        }
        s.push_str(&format!(" win {}", a.window));
        let o = &a.options;
        let mut parts = Vec::new();
        if let Some(m) = o.mss {
            parts.push(format!("mss {m}"));
        }
        if o.sack_permitted {
            parts.push("sackOK".into());
        }
        if let Some(t) = o.timestamps {
            // In script terms once the first TSval fixed the offset.
            let val = t.tsval.wrapping_sub(self.ts_offset.unwrap_or(0));
            parts.push(format!("TS val {val} ecr {}", t.tsecr));
        }
        if let Some(w) = o.window_scale {
            parts.push(format!("wscale {w}"));
        }
        if let Some(f) = &o.fast_open {
            parts.push(fmt_fo(f));
        }
        if !o.sack_blocks.is_empty() {
            let b: Vec<String> = o
                .sack_blocks
                .as_slice()
                .iter()
                .map(|(l, r)| {
                    format!(
                        "{}:{}",
                        l.0.wrapping_sub(self.remote_base(false)),
                        r.0.wrapping_sub(self.remote_base(false))
                    )
                })
                .collect();
            parts.push(format!("sack {}", b.join(" ")));
        }
        if o.nak_permitted {
            parts.push("nakOK".into());
        }
        if let Some(n) = o.nak {
            parts.push(format!(
                "nak {} {}",
                n.seq.0.wrapping_sub(self.remote_base(false)),
                n.count
            ));
        }
        if let Some(w) = o.big_window_offer {
            parts.push(format!("bigwin {w}"));
        }
        if let Some(w) = o.big_window_upper {
            parts.push(format!("winhi {w}"));
        }
        if !o.unknown.is_empty() {
            parts.push(format!("unknown {:?}", o.unknown));
        }
        if !parts.is_empty() {
            s.push_str(&format!(" <{}>", parts.join(",")));
        }
        s
    }

    /// Fails if a blocked call's return window has passed at time `t`.
    fn check_pending_overdue(&mut self, t: i64) -> Res<()> {
        if let Some(p) = &self.pending {
            if t > p.end_ns.saturating_add(p.tol_ns) {
                let (ev, end) = (p.event, p.end_ns);
                self.advance_to(end.saturating_add(p.tol_ns))?;
                self.check_pending_done()?;
                if self.pending.is_some() {
                    return Err(self.fail(
                        ev,
                        FailKind::Syscall,
                        format!(
                            "blocking system call still blocked after its expected return at {} s",
                            secs(end)
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Retries a blocked call; when it returns, checks its result and time.
    pub(crate) fn check_pending_done(&mut self) -> Res<()> {
        let Some(p) = self.pending.clone() else {
            return Ok(());
        };
        let EventKind::Syscall(spec) = &self.script.events[p.event].kind else {
            self.pending = None;
            return Ok(());
        };
        let spec = spec.clone();
        match self.try_syscall(p.event, &spec, false)? {
            Outcome::Block => Ok(()),
            Outcome::Done(res) => {
                self.pending = None;
                self.drain();
                self.check_result(p.event, &spec, res)?;
                if self.now < p.end_ns.saturating_sub(p.tol_ns)
                    || self.now > p.end_ns.saturating_add(p.tol_ns)
                {
                    return Err(self.fail(
                        p.event,
                        FailKind::Timing,
                        format!(
                            "blocking system call returned at {} s; expected at {} s (tolerance {} s)",
                            secs(self.now),
                            secs(p.end_ns),
                            secs(p.tol_ns)
                        ),
                    ));
                }
                Ok(())
            }
        }
    }

    /// Starts a system call line: runs it, or parks it when it blocks.
    fn syscall(
        &mut self,
        idx: usize,
        spec: &SyscallSpec,
        block_end: Option<i64>,
        tol: i64,
    ) -> Res<()> {
        if let Some(p) = &self.pending {
            let line = self.script.events[p.event].line;
            return Err(self.fail(
                idx,
                FailKind::Unsupported,
                format!("a system call starts while the blocking call of line {line} has not returned (one blocking call at a time)"),
            ));
        }
        self.report.trace.push(format!(
            "{} {}",
            secs(self.now),
            self.script.events[idx].text
        ));
        self.write_progress = 0;
        self.errno_reason = None;
        let out = self.try_syscall(idx, spec, true)?;
        self.drain();
        match out {
            Outcome::Done(res) => {
                self.check_result(idx, spec, res)?;
                if let Some(end) = block_end {
                    if self.now < end.saturating_sub(tol) || self.now > end.saturating_add(tol) {
                        return Err(self.fail(
                            idx,
                            FailKind::Timing,
                            format!(
                                "system call returned at once at {} s; the script expects it to block until {} s",
                                secs(self.now),
                                secs(end)
                            ),
                        ));
                    }
                }
                Ok(())
            }
            Outcome::Block => match block_end {
                Some(end) => {
                    self.pending = Some(Pending {
                        event: idx,
                        end_ns: end,
                        tol_ns: tol,
                    });
                    Ok(())
                }
                None => Err(self.fail(
                    idx,
                    FailKind::Syscall,
                    format!(
                        "{} would block, but the line neither marks it blocking (a...b) nor is the socket O_NONBLOCK",
                        spec.name
                    ),
                )),
            },
        }
    }

    /// Compares a system call's result with the script.
    fn check_result(
        &self,
        idx: usize,
        spec: &SyscallSpec,
        res: Result<i64, &'static str>,
    ) -> Res<()> {
        let ok = match (&res, spec.errno.as_deref()) {
            (Ok(v), None) => *v == spec.ret,
            (Err(e), Some(want)) => spec.ret == -1 && errno_eq(e, want),
            (Err(_), None) => spec.ret == -1,
            (Ok(_), Some(_)) => false,
        };
        if ok {
            return Ok(());
        }
        let expected = match &spec.errno {
            Some(e) => format!("{} {e}", spec.ret),
            None => spec.ret.to_string(),
        };
        let actual = match res {
            Ok(v) => v.to_string(),
            Err(e) => format!("-1 {e}"),
        };
        let why = match (&res, &self.errno_reason) {
            (Err(_), Some(r)) => format!(" ({r})"),
            _ => String::new(),
        };
        let mut f = self.fail(
            idx,
            FailKind::Syscall,
            format!(
                "{} returned {actual}{why}, the script expects {expected}",
                spec.name
            ),
        );
        f.expected = Some(format!("{} = {expected}", spec.name));
        f.actual = Some(format!("{} = {actual}", spec.name));
        Err(f)
    }
}

/// A Fast Open option in script syntax: `FO cookie` or `FOEXP cookie`.
fn fmt_fo(f: &FastOpenOption) -> String {
    let hex: String = f
        .cookie
        .as_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let name = if f.experimental { "FOEXP" } else { "FO" };
    if hex.is_empty() {
        name.to_string()
    } else {
        format!("{name} {hex}")
    }
}

/// Errno names, with EAGAIN and EWOULDBLOCK the same.
/// Whether a connection in `s` has completed its handshake.
fn synced(s: tinygram_proto::State) -> bool {
    !matches!(
        s,
        tinygram_proto::State::Listen
            | tinygram_proto::State::SynSent
            | tinygram_proto::State::SynReceived
            | tinygram_proto::State::Closed
    )
}

fn errno_eq(a: &str, b: &str) -> bool {
    let norm = |s: &str| {
        if s == "EWOULDBLOCK" {
            "EAGAIN".to_string()
        } else {
            s.to_string()
        }
    };
    norm(a) == norm(b)
}

#[cfg(test)]
mod tests {
    use super::parse_mtu;

    #[test]
    fn mtu_option_takes_ipv4_mtus_and_names_what_is_wrong() {
        assert_eq!(parse_mtu(Some("9000")), Ok(9000));
        assert_eq!(parse_mtu(Some("68")), Ok(68));
        for bad in [Some("67"), Some("65536"), Some("x"), None] {
            let e = parse_mtu(bad).unwrap_err();
            assert!(e.contains("--mtu") && e.contains("68 to 65535"), "{e}");
        }
    }
}
