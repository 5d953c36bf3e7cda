//! System calls mapped onto the engine's application API, with Linux errno semantics.

use crate::ast::*;
use crate::report::{FailKind, Failure};
use crate::runner::{instant, Res, Runner, CLIENT_PORT, LOCAL_ISN, SERVER_PORT};
use std::collections::BTreeSet;
use std::str::FromStr;
use tinygram_proto::policy::SendPolicyKind;
use tinygram_proto::settings::Kind;
use tinygram_proto::{CcFactory, Config, ConnError, Connection, IsnSeries};
use tinygram_proto::{SeqNumber, WriteError};

/// Linux O_RDWR.
const O_RDWR: i64 = 2;
/// Linux O_NONBLOCK.
const O_NONBLOCK: i64 = 0o4000;

pub(crate) mod notsent;
pub(crate) mod sockext;
mod sockopt;

/// What a system call did: returned, or would block.
pub(crate) enum Outcome {
    /// Returned a value or an errno name.
    Done(Result<i64, &'static str>),
    /// Cannot complete yet.
    Block,
}

/// What a script file descriptor is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SockKind {
    /// After socket().
    Fresh,
    /// After bind().
    Bound,
    /// After listen().
    Listener,
    /// Connected or connecting (connect() or accept()).
    Stream,
}

/// One script file descriptor.
#[derive(Clone, Debug)]
pub(crate) struct Sock {
    pub kind: SockKind,
    pub nonblocking: bool,
    pub cfg: Config,
    /// TCP_TINYGRAM_OPTIONS was set: do not infer options from the script.
    pub explicit_options: bool,
    /// The connection's error was already returned once (as Linux clears sk_err).
    pub err_reported: bool,
    pub shut_wr: bool,
    /// shutdown(SHUT_RD or SHUT_RDWR): reads return 0 once nothing is queued.
    pub shut_rd: bool,
    /// SO_ZEROCOPY is on: MSG_ZEROCOPY sends get notifications.
    pub zerocopy: bool,
    /// SO_RCVBUF was set: do not size the buffer from the script's wscale.
    pub rcvbuf_set: bool,
    /// The send policy TCP_CORK 0 restores (the one in force before corking).
    pub uncork_to: SendPolicyKind,
    /// Socket options the script set successfully (they override `--stack`).
    pub set_by_script: BTreeSet<String>,
    /// IP_TOS and IP_TTL.
    pub ip: crate::ipfields::IpFields,
    /// TCP_FASTOPEN: the listener's Fast Open queue length (0: off).
    pub tfo_queue: u32,
    /// TCP_FASTOPEN_KEY: this socket's own cookie key, over the host's.
    pub tfo_key: Option<[u8; 16]>,
    /// A blocking sendto(MSG_FASTOPEN) waits for the handshake; it then
    /// returns this many bytes.
    pub tfo_sending: Option<usize>,
    /// TCP_FASTOPEN_CONNECT is on: connect() opens with Fast Open.
    pub tfo_connect: bool,
    /// connect() under TCP_FASTOPEN_CONNECT found a cookie and returned 0
    /// without a SYN: the first write sends the SYN with its data.
    pub tfo_deferred: bool,
}

/// The errno name of an engine error; `icmp_bsd` picks FreeBSD's names for
/// the ICMP errors that can end a handshake there.
fn conn_errno(e: ConnError, icmp_bsd: bool) -> &'static str {
    match e {
        ConnError::Reset => "ECONNRESET",
        ConnError::Refused => "ECONNREFUSED",
        ConnError::TimedOut => "ETIMEDOUT",
        // ip_input.c inetctlerrmap: PRC_UNREACH_PORT, _PROTOCOL and
        // _ADMIN_PROHIB all give ECONNREFUSED (tcp_drop_syn_sent).
        ConnError::Unreachable(_) if icmp_bsd => "ECONNREFUSED",
        // Linux icmp_err_convert and inetctlerrmap agree on time exceeded.
        ConnError::TimeExceeded => "EHOSTUNREACH",
        // Linux tcp_v4_err: ICMP_PARAMETERPROB is EPROTO.
        ConnError::ParameterProblem => "EPROTO",
        // Linux's icmp_err_convert table.
        ConnError::Unreachable(code) => match code {
            2 => "ENOPROTOOPT",
            3 => "ECONNREFUSED",
            4 => "EMSGSIZE",
            5 => "EOPNOTSUPP",
            7 => "EHOSTDOWN",
            8 => "ENONET",
            0 | 6 | 9 | 11 => "ENETUNREACH",
            _ => "EHOSTUNREACH",
        },
    }
}

/// Linux errno number of a name (for SO_ERROR).
fn errno_number(name: &str) -> i64 {
    match name {
        "ECONNRESET" => 104,
        "ECONNREFUSED" => 111,
        "ETIMEDOUT" => 110,
        "EPIPE" => 32,
        "EHOSTUNREACH" => 113,
        "ENETUNREACH" => 101,
        "EPROTO" => 71,
        _ => 0,
    }
}

/// The number of an errno name SO_ERROR may hold, if the runner knows it.
fn errno_value(name: &str) -> Option<i64> {
    Some(errno_number(name)).filter(|&n| n != 0)
}

/// Whether the call's buffer argument (the second) is written `NULL`.
fn null_buffer(spec: &SyscallSpec) -> bool {
    matches!(spec.args.get(1), Some(Expr::Ident(n)) if n == "NULL")
}

/// Integer value of `N`, `[N]` or `-N`.
fn int_of(e: &Expr) -> Option<i64> {
    match e {
        Expr::Int(v) => Some(*v),
        Expr::List(l) if l.len() == 1 => int_of(&l[0]),
        _ => None,
    }
}

/// Symbol names in `A|B`, `A`, or `0`.
fn symbols(e: &Expr) -> Option<Vec<String>> {
    match e {
        Expr::Int(0) => Some(Vec::new()),
        Expr::Ident(s) => Some(vec![s.clone()]),
        Expr::Or(v) => {
            let mut out = Vec::new();
            for x in v {
                out.extend(symbols(x)?);
            }
            Some(out)
        }
        _ => None,
    }
}

/// Send flags written as a number (`0x20000000`): their MSG_* names, from
/// Linux's include/linux/socket.h values; `None` if a bit is not one of them.
fn send_flag_names(e: &Expr) -> Option<Vec<String>> {
    const BITS: &[(i64, &str)] = &[
        (0x40, "MSG_DONTWAIT"),
        (0x4000, "MSG_NOSIGNAL"),
        (0x8000, "MSG_MORE"),
        (0x400_0000, "MSG_ZEROCOPY"),
        (0x2000_0000, "MSG_FASTOPEN"),
    ];
    let mut v = int_of(e)?;
    let mut out = Vec::new();
    for (bit, name) in BITS {
        if v & bit != 0 {
            out.push(name.to_string());
            v &= !bit;
        }
    }
    (v == 0).then_some(out)
}

/// Total length of an iovec list `[{..., n}, ...]`.
fn iov_len(e: &Expr) -> Option<i64> {
    let Expr::List(items) = e else {
        return None;
    };
    let mut total = 0;
    for it in items {
        let Expr::Struct(fields) = it else {
            return None;
        };
        total += int_of(&fields.last()?.1)?;
    }
    Some(total)
}

/// The zerocopy pieces of a `sendmsg` msghdr's iovec: one per page of each
/// element, as skb_zerocopy_iter_stream pins them (buffers taken as page
/// aligned, so an element of n bytes spans n / 4096 pages rounded up).
fn msghdr_zerocopy_pieces(e: &Expr) -> Option<Vec<usize>> {
    const PAGE: usize = 4096;
    let Expr::Struct(fields) = e else {
        return None;
    };
    let iov = fields.iter().find_map(|(k, v)| match k {
        Some(Expr::Call(n, _)) | Some(Expr::Ident(n)) if n == "msg_iov" => Some(v),
        _ => None,
    })?;
    let Expr::List(items) = iov else {
        return None;
    };
    let mut pieces = Vec::new();
    for it in items {
        let Expr::Struct(f) = it else {
            return None;
        };
        let mut left = usize::try_from(int_of(&f.last()?.1)?).ok()?;
        while left > 0 {
            pieces.push(left.min(PAGE));
            left -= left.min(PAGE);
        }
    }
    Some(pieces)
}

/// Sum of iov lengths in a `sendmsg` msghdr `{msg_name(...)=..., msg_iov(n)=[...], msg_flags=0}`.
fn msghdr_len(e: &Expr) -> Option<i64> {
    let Expr::Struct(fields) = e else {
        return None;
    };
    fields.iter().find_map(|(k, v)| match k {
        Some(Expr::Call(n, _)) | Some(Expr::Ident(n)) if n == "msg_iov" => iov_len(v),
        _ => None,
    })
}

impl<'a> Runner<'a> {
    /// Looks up the fd in argument 0.
    fn fd_arg(&self, idx: usize, spec: &SyscallSpec) -> Res<i64> {
        spec.args.first().and_then(int_of).ok_or_else(|| {
            self.fail(
                idx,
                FailKind::Unsupported,
                format!(
                    "{}: the first argument must be a file descriptor number",
                    spec.name
                ),
            )
        })
    }

    /// Argument `i` as an integer, or a named failure.
    fn int_arg(&self, idx: usize, spec: &SyscallSpec, i: usize, what: &str) -> Res<i64> {
        spec.args.get(i).and_then(int_of).ok_or_else(|| {
            self.fail(
                idx,
                FailKind::Unsupported,
                format!(
                    "{}: argument {} ({what}) must be a number",
                    spec.name,
                    i + 1
                ),
            )
        })
    }

    /// A failure for an unsupported construct at event `idx`.
    fn unsupported(&self, idx: usize, msg: impl Into<String>) -> Box<Failure> {
        self.fail(idx, FailKind::Unsupported, msg)
    }

    /// Returns the connection's error once per socket (Linux clears sk_err on report).
    fn take_error(&mut self, fd: i64) -> Option<&'static str> {
        let err = self.conn.as_ref().and_then(|c| c.error())?;
        let sock = self.socks.get_mut(&fd)?;
        if sock.err_reported {
            return None;
        }
        sock.err_reported = true;
        let bsd = self.conn.as_ref().is_some_and(|c| c.config().icmp_bsd);
        Some(conn_errno(err, bsd))
    }

    /// Enables the options the script's next outbound SYN (from event `idx`
    /// on, else its first) shows, unless set explicitly: a script that opens
    /// several connections may change tcp_timestamps between them.
    fn infer_options(&self, sock: &Sock, idx: usize) -> Config {
        let mut cfg = sock.cfg.clone();
        if sock.explicit_options {
            return cfg;
        }
        let syn_of = |e: &crate::ast::Event| match &e.kind {
            EventKind::Packet(p) if p.dir == Direction::Outbound && p.flags & flag::SYN != 0 => {
                Some((p.options.clone(), p.flags))
            }
            _ => None,
        };
        let events = &self.script.events;
        let syn = events
            .iter()
            .skip(idx)
            .find_map(syn_of)
            .or_else(|| events.iter().find_map(syn_of));
        // RFC 3168 6.1.1: an ECN-setup SYN or SYN-ACK shows ECE; the engine offers ECN exactly then.
        let ecn = syn.as_ref().map(|(_, f)| f & flag::ECE != 0);
        let syn = syn.map(|(o, _)| o);
        match syn {
            Some(Some(OptionsSpec::Any)) | None => {}
            Some(None) => {
                cfg.options = tinygram_proto::OptionSet::default();
            }
            Some(Some(OptionsSpec::List(l))) => {
                let ws = l.iter().find_map(|o| match o {
                    OptSpec::Wscale(n) => Some(*n),
                    _ => None,
                });
                // A stack that picks its shift apart from the buffer (FreeBSD:
                // `wscale_buf`) keeps its own buffer size.
                if let (Some(n), false, None) = (ws, sock.rcvbuf_set, cfg.wscale_buf) {
                    // The engine's shift is the smallest that fits rcv_buf in 16 bits.
                    cfg.rcv_buf = (65_535usize << n.min(14)).min(1 << 30);
                }
                let bigwin = l.iter().find_map(|o| match o {
                    OptSpec::BigWin(w) => Some(*w as usize),
                    _ => None,
                });
                if let (Some(w), false) = (bigwin, sock.rcvbuf_set) {
                    // RFC 1106 3: the engine offers its whole receive buffer.
                    cfg.rcv_buf = w.max(cfg.mss as usize);
                }
                // The script stands for a host with memory enough for the buffer it shows.
                cfg.buffer_cap = cfg.buffer_cap.max(cfg.rcv_buf);
                cfg.options.window_scale = ws.is_some();
                cfg.options.timestamps = l.iter().any(|o| matches!(o, OptSpec::Ts { .. }));
                cfg.options.sack = l.iter().any(|o| matches!(o, OptSpec::SackOk));
                cfg.options.nak = l.iter().any(|o| matches!(o, OptSpec::NakOk));
                cfg.options.big_window = bigwin.is_some();
            }
        }
        if let Some(e) = ecn {
            cfg.options.ecn = e;
        }
        cfg
    }

    /// Tries a system call; `first` is false when retrying a blocked call.
    pub(crate) fn try_syscall(
        &mut self,
        idx: usize,
        spec: &SyscallSpec,
        first: bool,
    ) -> Res<Outcome> {
        let name = spec.name.as_str();
        if let Some(r) = self.try_epoll(idx, spec) {
            return r;
        }
        if let Some(r) = self.try_poll(idx, spec, first) {
            return r;
        }
        if let Some(r) = self.try_file_call(idx, spec) {
            return r;
        }
        if name == "socket" {
            let types = spec.args.get(1).and_then(symbols).unwrap_or_default();
            let other = types
                .iter()
                .find(|t| t.as_str() != "SOCK_STREAM" && t.as_str() != "SOCK_NONBLOCK");
            if let Some(t) = other {
                return Err(self.unsupported(
                    idx,
                    format!("socket type {t}: only SOCK_STREAM (TCP) is supported"),
                ));
            }
            let nonblocking = types.iter().any(|t| t == "SOCK_NONBLOCK");
            if spec.ret < 0 {
                return Err(self.unsupported(
                    idx,
                    "socket() is expected to fail; the runner always creates the socket",
                ));
            }
            if self.conn.is_some() {
                // The new socket is the one under test: what the old
                // connection sent and the script did not check is dropped.
                self.drain();
                self.queue.clear();
                self.old_conn_muted = true;
            }
            // The stack's defaults; the script's setsockopts override them.
            // (Linux's PSH placement, silent ACK of unsent data and TLP
            // timer margin are keys of the `linux` profile.)
            let mut cfg = self.settings.stack.config();
            // Sysctls the script's shell lines set (see crate::sysctl).
            self.host.configure(&mut cfg);
            // FreeBSD tcp_subr.c tcp_mssopt: the interface MTU less the
            // 40 bytes of IPv4 and TCP headers, with no lower clamp.
            if let Some(mtu) = self.settings.mtu {
                cfg.mss = mtu - 40;
            }
            self.socks.insert(
                spec.ret,
                Sock {
                    kind: SockKind::Fresh,
                    nonblocking,
                    uncork_to: cfg.send_policy,
                    cfg,
                    explicit_options: false,
                    err_reported: false,
                    shut_wr: false,
                    shut_rd: false,
                    zerocopy: false,
                    rcvbuf_set: false,
                    set_by_script: BTreeSet::new(),
                    ip: Default::default(),
                    tfo_queue: 0,
                    tfo_key: None,
                    tfo_sending: None,
                    tfo_connect: false,
                    tfo_deferred: false,
                },
            );
            return Ok(Outcome::Done(Ok(spec.ret)));
        }
        let known = [
            "bind",
            "listen",
            "accept",
            "accept4",
            "connect",
            "write",
            "send",
            "sendto",
            "sendmsg",
            "writev",
            "read",
            "recv",
            "recvfrom",
            "recvmsg",
            "shutdown",
            "close",
            "setsockopt",
            "getsockopt",
            "fcntl",
            "ioctl",
        ];
        if !known.contains(&name) {
            return Err(self.unsupported(
                idx,
                format!(
                    "system call {name}() is not supported (supported: socket, {}, poll, epoll_create, epoll_ctl, epoll_wait, open, sendfile)",
                    known.join(", ")
                ),
            ));
        }
        let fd = self.fd_arg(idx, spec)?;
        let Some(sock) = self.socks.get(&fd).cloned() else {
            return Ok(Outcome::Done(Err("EBADF")));
        };
        match name {
            "bind" => {
                if let Some(s) = self.socks.get_mut(&fd) {
                    if s.kind == SockKind::Fresh {
                        s.kind = SockKind::Bound;
                    }
                }
                Ok(Outcome::Done(Ok(0)))
            }
            "listen" => {
                if !matches!(sock.kind, SockKind::Fresh | SockKind::Bound) {
                    return Ok(Outcome::Done(Err("EINVAL")));
                }
                let mut cfg = self.infer_options(&sock, idx);
                if !sock.explicit_options {
                    self.host.apply_ecn(&mut cfg, true);
                }
                let backlog = spec.args.get(1).and_then(int_of).unwrap_or(0).max(0) as u32;
                self.fast_open_listener(&mut cfg, &sock, backlog);
                if let Err(e) = cfg.validate() {
                    return Err(self.fail(
                        idx,
                        FailKind::Syscall,
                        format!("engine rejects the configuration: {e}"),
                    ));
                }
                self.conn = Some(Connection::listen(
                    cfg.clone(),
                    SERVER_PORT,
                    // Scripts number our sequence space from LOCAL_ISN, every connection.
                    IsnSeries::with_step(SeqNumber(LOCAL_ISN), 0),
                ));
                self.listener_cfg = Some(cfg.clone());
                self.conn_cfg = Some(cfg);
                self.conn_uncork_to = sock.uncork_to;
                self.conn_ip = sock.ip;
                self.new_connection(&sock);
                self.local_port = SERVER_PORT;
                self.remote_port = CLIENT_PORT;
                self.listener_fd = Some(fd);
                self.conn_accepted = false;
                self.ever_synced = false;
                if let Some(s) = self.socks.get_mut(&fd) {
                    s.kind = SockKind::Listener;
                }
                Ok(Outcome::Done(Ok(0)))
            }
            "accept" | "accept4" => {
                if sock.kind != SockKind::Listener || self.listener_fd != Some(fd) {
                    return Ok(Outcome::Done(Err("EINVAL")));
                }
                // A Fast Open SYN whose data was taken is accepted at once (RFC 7413 4.3.2).
                let tfo_child = self.conn.as_ref().is_some_and(|c| c.fast_open().child);
                if !self.conn_accepted && self.conn.is_some() && (self.ever_synced || tfo_child) {
                    let new_fd = if spec.ret >= 0 {
                        spec.ret
                    } else {
                        self.socks.keys().max().copied().unwrap_or(2) + 1
                    };
                    let mut s = sock.clone();
                    s.kind = SockKind::Stream;
                    s.nonblocking = false;
                    s.err_reported = false;
                    self.socks.insert(new_fd, s);
                    self.conn_accepted = true;
                    return Ok(Outcome::Done(Ok(new_fd)));
                }
                Ok(self.would_block(&sock))
            }
            "connect" => self.connect(idx, fd, &sock, first),
            "write" | "send" | "sendto" | "sendmsg" | "writev" => {
                let (len, flags) = match name {
                    "write" => (self.int_arg(idx, spec, 2, "length")?, None),
                    "send" | "sendto" => (self.int_arg(idx, spec, 2, "length")?, spec.args.get(3)),
                    "writev" => (
                        spec.args.get(1).and_then(iov_len).ok_or_else(|| {
                            self.unsupported(
                                idx,
                                "writev: expected an iovec list like [{..., 10}, {..., 20}]",
                            )
                        })?,
                        None,
                    ),
                    _ => (
                        spec.args.get(1).and_then(msghdr_len).ok_or_else(|| {
                            self.unsupported(
                                idx,
                                "sendmsg: expected {..., msg_iov(n)=[{..., len}, ...], ...}",
                            )
                        })?,
                        spec.args.get(2),
                    ),
                };
                let flags = match flags {
                    None => Vec::new(),
                    Some(e) => symbols(e).or_else(|| send_flag_names(e)).ok_or_else(|| {
                        self.unsupported(
                            idx,
                            "send flags must be 0, MSG_* names or a number made of their bits",
                        )
                    })?,
                };
                let mut more = false;
                let mut dontwait = false;
                let mut zerocopy = false;
                let mut fastopen = false;
                let mut eor = false;
                for f in &flags {
                    match f.as_str() {
                        "MSG_FASTOPEN" => fastopen = true,
                        "MSG_MORE" => more = true,
                        "MSG_EOR" => eor = true,
                        "MSG_DONTWAIT" => dontwait = true,
                        "MSG_NOSIGNAL" => {}
                        // Ignored unless SO_ZEROCOPY is on, as in Linux.
                        "MSG_ZEROCOPY" => zerocopy = sock.zerocopy,
                        other => return Err(self.unsupported(idx, format!("send flag {other} is not supported (MSG_MORE, MSG_EOR, MSG_DONTWAIT, MSG_NOSIGNAL, MSG_ZEROCOPY are)"))),
                    }
                }
                let len =
                    usize::try_from(len).map_err(|_| self.unsupported(idx, "negative length"))?;
                if len > 64 << 20 {
                    return Err(self.unsupported(idx, "writes over 64 MiB are not supported"));
                }
                // tcp_sendmsg_fastopen: an AF_UNSPEC address is refused.
                let unspec = name == "sendto"
                    && matches!(spec.args.get(4), Some(Expr::Ident(n)) if n == "AF_UNSPEC");
                if fastopen && unspec && first {
                    return Ok(Outcome::Done(Err("EOPNOTSUPP")));
                }
                let addressed =
                    name == "sendto" && !matches!(spec.args.get(4), None | Some(Expr::Ident(_)));
                let fresh = matches!(sock.kind, SockKind::Fresh | SockKind::Bound);
                if addressed && fresh && first && !fastopen && sock.cfg.sendto_connects {
                    return self.sendto_connect(idx, fd, &sock, len, dontwait);
                }
                if let Some(out) = self.fast_open_send(
                    idx,
                    fd,
                    &sock,
                    len,
                    (fastopen, dontwait, null_buffer(spec)),
                    first,
                )? {
                    // tcp_send_syn_data: data a SYN carries with MSG_ZEROCOPY
                    // is notified as any zerocopy send is.
                    if let (true, Outcome::Done(Ok(n)), Some(c)) =
                        (zerocopy, &out, self.conn.as_ref())
                    {
                        if *n > 0 {
                            let syn = usize::from(c.state() == tinygram_proto::State::SynSent);
                            self.zc.sent(c.snd_una() + syn + c.send_queued());
                        }
                    }
                    return Ok(out);
                }
                // send(2): MSG_MORE has the effect of TCP_CORK until a send
                // without it, also under TCP_NODELAY (Linux's tcp_push corks
                // that push); policies of tinygram's own keep their rules.
                let live = sock.kind == SockKind::Stream && self.conn.is_some();
                let policy = self.conn_cfg.as_ref().map(|c| c.send_policy);
                let corkable = matches!(
                    policy,
                    Some(
                        SendPolicyKind::NoDelay | SendPolicyKind::Minshall | SendPolicyKind::Nagle
                    )
                );
                if live && more && first && !self.more_corked && corkable {
                    self.set_send_policy(fd, &sock, PolicyOpt::Cork(true), true);
                    self.more_corked = true;
                }
                if null_buffer(spec) && len > 0 && sock.kind == SockKind::Stream {
                    // tcp_sendmsg copies from the caller's buffer: a NULL one faults.
                    self.errno_reason = Some(format!("{name}: the buffer is NULL"));
                    return Ok(Outcome::Done(Err("EFAULT")));
                }
                let out = self.write(fd, &sock, len, more, dontwait)?;
                if let Outcome::Done(Ok(n)) = out {
                    self.sent_ext(n as usize);
                }
                if eor && matches!(out, Outcome::Done(Ok(n)) if n as usize == len && n > 0) {
                    // tcp_sendmsg_locked marks the tail skb eor once all is copied.
                    if let Some(c) = self.conn.as_mut() {
                        c.end_record();
                    }
                }
                if let (true, Outcome::Done(Ok(n)), Some(c)) = (zerocopy, &out, self.conn.as_mut())
                {
                    if *n > 0 {
                        // The first n bytes of the iovec, as pinned pages.
                        let pieces = (name == "sendmsg")
                            .then(|| spec.args.get(1).and_then(msghdr_zerocopy_pieces))
                            .flatten()
                            .unwrap_or_default();
                        let mut left = *n as usize;
                        let taken: Vec<usize> = pieces
                            .into_iter()
                            .map_while(|p| {
                                let t = p.min(left);
                                left -= t;
                                (t > 0).then_some(t)
                            })
                            .collect();
                        c.zerocopy_frags(&taken);
                        self.zc.sent(c.snd_una() + c.send_queued());
                    }
                }
                if live && !more && matches!(out, Outcome::Done(_)) {
                    self.release_more_cork();
                }
                Ok(out)
            }
            "read" | "recv" | "recvfrom" => {
                let n = self.int_arg(idx, spec, 2, "length")?;
                let mut dontwait = false;
                let mut peek = false;
                if name != "read" {
                    if let Some(e) = spec.args.get(3) {
                        for f in symbols(e).ok_or_else(|| {
                            self.unsupported(idx, "recv flags must be 0 or MSG_* names")
                        })? {
                            match f.as_str() {
                                "MSG_DONTWAIT" => dontwait = true,
                                "MSG_PEEK" => peek = true,
                                other => {
                                    return Err(self.unsupported(
                                        idx,
                                        format!(
                                            "recv flag {other} is not supported (MSG_DONTWAIT and MSG_PEEK are)"
                                        ),
                                    ))
                                }
                            }
                        }
                    }
                }
                let n = usize::try_from(n).map_err(|_| self.unsupported(idx, "negative length"))?;
                if n > 64 << 20 {
                    return Err(self.unsupported(idx, "reads over 64 MiB are not supported"));
                }
                let readable = self.conn.as_ref().is_some_and(|c| c.recv_available() > 0);
                if null_buffer(spec) && n > 0 && sock.kind == SockKind::Stream && readable {
                    // tcp_recvmsg faults copying into a NULL buffer; the data stays queued.
                    self.errno_reason = Some(format!("{name}: the buffer is NULL"));
                    return Ok(Outcome::Done(Err("EFAULT")));
                }
                Ok(self.read_peek(fd, &sock, n, dontwait, peek))
            }
            "recvmsg" => {
                if let Some(out) = self.recvmsg_ext(idx, fd, &sock, spec)? {
                    return Ok(out);
                }
                let flags = spec.args.get(2).and_then(symbols).unwrap_or_default();
                if !flags.iter().any(|f| f == "MSG_ERRQUEUE") {
                    return Err(self.unsupported(
                        idx,
                        "recvmsg is supported with MSG_ERRQUEUE (zerocopy notifications) only",
                    ));
                }
                if let Some(c) = self.conn.as_ref() {
                    self.zc.acked(c.snd_una());
                }
                let Some(n) = self.zc.take() else {
                    self.errno_reason = Some("no notification is queued".into());
                    return Ok(Outcome::Done(Err("EAGAIN")));
                };
                let msghdr = spec.args.get(1).cloned().unwrap_or(Expr::Ellipsis);
                if let Err(m) = crate::zerocopy::check(&msghdr, n) {
                    let mut f = self.fail(
                        idx,
                        FailKind::Syscall,
                        format!(
                            "recvmsg MSG_ERRQUEUE: zerocopy notification {}..{}: {m}",
                            n.lo, n.hi
                        ),
                    );
                    f.actual = Some(format!("ee_info={}, ee_data={}", n.lo, n.hi));
                    return Err(f);
                }
                Ok(Outcome::Done(Ok(0)))
            }
            "shutdown" => {
                let how = match spec.args.get(1) {
                    Some(Expr::Ident(s)) => s.clone(),
                    Some(Expr::Int(0)) => "SHUT_RD".into(),
                    Some(Expr::Int(1)) => "SHUT_WR".into(),
                    Some(Expr::Int(2)) => "SHUT_RDWR".into(),
                    _ => {
                        return Err(self
                            .unsupported(idx, "shutdown: expected SHUT_RD, SHUT_WR or SHUT_RDWR"))
                    }
                };
                if sock.kind != SockKind::Stream {
                    return Ok(Outcome::Done(Err("ENOTCONN")));
                }
                if matches!(how.as_str(), "SHUT_RD" | "SHUT_RDWR") {
                    // Linux sets RCV_SHUTDOWN: queued data can still be read, then
                    // read() returns 0 (tcp_recvmsg); the peer is not told.
                    if let Some(s) = self.socks.get_mut(&fd) {
                        s.shut_rd = true;
                    }
                    if let Some(c) = self.conn.as_mut() {
                        c.shutdown_read();
                    }
                }
                match how.as_str() {
                    "SHUT_RD" => {}
                    "SHUT_WR" | "SHUT_RDWR" => {
                        if !sock.shut_wr {
                            if let Some(c) = self.conn.as_mut() {
                                c.close();
                            }
                            if let Some(s) = self.socks.get_mut(&fd) {
                                s.shut_wr = true;
                            }
                        }
                    }
                    other => {
                        return Err(self.unsupported(idx, format!("shutdown: unknown mode {other}")))
                    }
                }
                Ok(Outcome::Done(Ok(0)))
            }
            "close" => {
                self.socks.remove(&fd);
                match sock.kind {
                    SockKind::Listener => {
                        if self.listener_fd == Some(fd) {
                            self.listener_fd = None;
                            if !self.conn_accepted {
                                let listening = self
                                    .conn
                                    .as_ref()
                                    .is_some_and(|c| c.state() == tinygram_proto::State::Listen);
                                if listening {
                                    self.conn = None;
                                } else if let Some(c) = self.conn.as_mut() {
                                    // inet_child_forget -> tcp_disconnect: a
                                    // child socket not yet accepted (a Fast
                                    // Open child too) is reset with RST|ACK
                                    // (tcp_send_active_reset).
                                    let full = c.fast_open().child || c.state().synchronized();
                                    c.abort_reset(c.config().abort_rst_ack && full);
                                }
                            }
                        }
                    }
                    SockKind::Stream => {
                        if let Some(c) = self.conn.as_mut() {
                            if c.recv_available() > 0 {
                                // RFC 2525 2.17: unread data is lost, so reset;
                                // Linux's RST also ACKs (tcp_close).
                                c.abort();
                            } else {
                                // tcp_close sets RCV_SHUTDOWN as well.
                                c.shutdown_read();
                                if !sock.shut_wr {
                                    c.close();
                                }
                            }
                        }
                    }
                    SockKind::Fresh | SockKind::Bound => {}
                }
                Ok(Outcome::Done(Ok(0)))
            }
            "setsockopt" => self.setsockopt(idx, fd, &sock, spec),
            "getsockopt" => self.getsockopt(idx, fd, &sock, spec),
            "fcntl" => {
                let cmd = match spec.args.get(1) {
                    Some(Expr::Ident(c)) => c.as_str(),
                    _ => return Err(self.unsupported(idx, "fcntl: expected F_SETFL or F_GETFL")),
                };
                match cmd {
                    "F_GETFL" => Ok(Outcome::Done(Ok(
                        O_RDWR | if sock.nonblocking { O_NONBLOCK } else { 0 }
                    ))),
                    "F_SETFL" => {
                        let flags = spec.args.get(2).and_then(symbols).ok_or_else(|| {
                            self.unsupported(
                                idx,
                                "fcntl F_SETFL: expected flags like O_RDWR|O_NONBLOCK",
                            )
                        })?;
                        if let Some(s) = self.socks.get_mut(&fd) {
                            s.nonblocking = flags.iter().any(|f| f == "O_NONBLOCK");
                        }
                        Ok(Outcome::Done(Ok(0)))
                    }
                    other => Err(self.unsupported(
                        idx,
                        format!("fcntl command {other} is not supported (F_SETFL, F_GETFL are)"),
                    )),
                }
            }
            "ioctl" => self.ioctl(idx, &sock, spec),
            _ => Err(self.unsupported(idx, format!("system call {name}() is not supported"))),
        }
    }

    /// ioctl() with the queue-size requests of tcp(7): SIOCINQ (FIONREAD),
    /// the unread bytes, and SIOCOUTQ (TIOCOUTQ), the bytes not yet
    /// acknowledged, as Linux's tcp_ioctl answers them.
    fn ioctl(&mut self, idx: usize, sock: &Sock, spec: &SyscallSpec) -> Res<Outcome> {
        use tinygram_proto::State;
        let req = match spec.args.get(1) {
            Some(Expr::Ident(r)) => r.clone(),
            _ => {
                return Err(self.unsupported(idx, "ioctl: expected a request like SIOCINQ"));
            }
        };
        if !matches!(
            req.as_str(),
            "SIOCINQ" | "FIONREAD" | "SIOCOUTQ" | "TIOCOUTQ"
        ) {
            return Err(self.unsupported(
                idx,
                format!("ioctl request {req} is not supported (SIOCINQ, FIONREAD, SIOCOUTQ, TIOCOUTQ are)"),
            ));
        }
        if sock.kind == SockKind::Listener {
            self.errno_reason = Some(format!("{req} on a listening socket"));
            return Ok(Outcome::Done(Err("EINVAL")));
        }
        let conn = if sock.kind == SockKind::Stream {
            self.conn.as_ref()
        } else {
            None
        };
        let actual = match conn {
            None => 0,
            Some(c) if matches!(c.state(), State::SynSent | State::SynReceived) => 0,
            Some(c) if req == "SIOCINQ" || req == "FIONREAD" => c.recv_available() as i64,
            // write_seq - snd_una: a FIN queued or sent and not yet ACKed counts one.
            Some(c) => {
                let fin = matches!(c.state(), State::FinWait1 | State::Closing | State::LastAck);
                c.send_queued() as i64 + i64::from(fin)
            }
        };
        if let Some(want) = spec.args.get(2).and_then(int_of) {
            if want != actual {
                let mut f = self.fail(
                    idx,
                    FailKind::Syscall,
                    format!("ioctl {req}: value {actual}, the script expects {want}"),
                );
                f.expected = Some(format!("[{want}]"));
                f.actual = Some(format!("[{actual}]"));
                return Err(f);
            }
        }
        Ok(Outcome::Done(Ok(0)))
    }

    /// Resets what the runner tracks per connection when `sock` opens one.
    pub(crate) fn new_connection(&mut self, sock: &Sock) {
        self.old_conn_muted = false;
        self.conn_ack_policy_set = sock.set_by_script.contains("TCP_TINYGRAM_ACK_POLICY");
        self.last_ack_sent = None;
        self.delack_fired_seen = 0;
        self.tfo_no_cookie_noted = false;
        // packetdrill keeps the script-to-live TSval mapping per socket
        // (run_packet.c: socket->ts_val_map, first_script_ts_val).
        self.ts_offset = None;
    }

    /// IP_TOS or IP_TTL on `fd`; the live connection's segments carry the
    /// new value from now on if `fd` is its socket (a listener's only until
    /// its connection is accepted).
    fn set_ip_fields(
        &mut self,
        fd: i64,
        sock: &Sock,
        set: impl Fn(&mut crate::ipfields::IpFields),
    ) {
        if let Some(s) = self.socks.get_mut(&fd) {
            set(&mut s.ip);
        }
        let live = match sock.kind {
            SockKind::Stream => true,
            SockKind::Listener => self.listener_fd == Some(fd) && !self.conn_accepted,
            SockKind::Fresh | SockKind::Bound => false,
        };
        if live {
            set(&mut self.conn_ip);
        }
    }

    /// EAGAIN for non-blocking sockets, otherwise block.
    fn would_block(&self, sock: &Sock) -> Outcome {
        if sock.nonblocking {
            Outcome::Done(Err("EAGAIN"))
        } else {
            Outcome::Block
        }
    }

    /// connect(): starts the active open, then reports its completion.
    fn connect(&mut self, idx: usize, fd: i64, sock: &Sock, first: bool) -> Res<Outcome> {
        if first && sock.tfo_deferred {
            // __inet_stream_connect: a deferred Fast Open connect is under way.
            return Ok(Outcome::Done(Err("EISCONN")));
        }
        let with_fo;
        let sock = match self.fast_open_connect(fd, sock, first) {
            Some(Ok(out)) => return Ok(out),
            Some(Err(s)) => {
                with_fo = s;
                &with_fo
            }
            None => sock,
        };
        if first && matches!(sock.kind, SockKind::Fresh | SockKind::Bound) {
            let mut cfg = self.infer_options(sock, idx);
            self.bsd_fast_open_connect(&mut cfg, sock);
            if !sock.explicit_options {
                self.host.apply_ecn(&mut cfg, false);
            }
            if let Err(e) = cfg.validate() {
                return Err(self.fail(
                    idx,
                    FailKind::Syscall,
                    format!("engine rejects the configuration: {e}"),
                ));
            }
            self.conn = Some(Connection::connect(
                cfg.clone(),
                CLIENT_PORT,
                SERVER_PORT,
                IsnSeries::with_step(SeqNumber(LOCAL_ISN), 0),
                instant(self.now),
            ));
            self.conn_cfg = Some(cfg);
            self.conn_uncork_to = sock.uncork_to;
            self.conn_ip = sock.ip;
            self.new_connection(sock);
            self.local_port = CLIENT_PORT;
            self.remote_port = SERVER_PORT;
            self.ever_synced = false;
            self.conn_accepted = true;
            self.listener_fd = None;
            if let Some(s) = self.socks.get_mut(&fd) {
                s.kind = SockKind::Stream;
            }
            if sock.nonblocking {
                return Ok(Outcome::Done(Err("EINPROGRESS")));
            }
            return Ok(Outcome::Block);
        }
        if sock.kind != SockKind::Stream {
            return Ok(Outcome::Done(Err("EINVAL")));
        }
        if let Some(e) = self.take_error(fd) {
            return Ok(Outcome::Done(Err(e)));
        }
        if self.ever_synced {
            return Ok(Outcome::Done(if first { Err("EISCONN") } else { Ok(0) }));
        }
        if sock.nonblocking {
            return Ok(Outcome::Done(Err("EALREADY")));
        }
        Ok(Outcome::Block)
    }

    /// FreeBSD tcp_fastopen_connect: a socket with TCP_FASTOPEN set connects
    /// with Fast Open while net.inet.tcp.fastopen.client_enable is on, with
    /// the cookie and MSS cached for the path (a cookie request when none is),
    /// unless the path is disabled.
    fn bsd_fast_open_connect(&mut self, cfg: &mut Config, sock: &Sock) {
        if !cfg.fastopen_sockopt_client || sock.tfo_queue == 0 || !self.host.bsd_fastopen_client() {
            return;
        }
        let server = self.settings.remote_ip;
        if let Some(hold) = cfg.fastopen_path_disable {
            if self
                .tfo_cache
                .path_disabled(server, instant(self.now), hold)
            {
                return;
            }
        }
        let cached = self.tfo_cache.get(server);
        cfg.fast_open.client = true;
        cfg.fast_open.cookie = cached.map(|c| c.0);
        cfg.fast_open.experimental = cached.is_some_and(|c| c.1);
        cfg.fast_open.peer_mss = self.tfo_cache.mss(server);
    }

    /// FreeBSD tcp_usr_send: sendto() with an address on a socket not yet
    /// connected connects (the implied connect) and queues the data behind
    /// the SYN, which carries it when Fast Open has a cookie; the call
    /// returns once the data is queued.
    fn sendto_connect(
        &mut self,
        idx: usize,
        fd: i64,
        sock: &Sock,
        len: usize,
        dontwait: bool,
    ) -> Res<Outcome> {
        self.connect(idx, fd, sock, true)?;
        let Some(c) = self.conn.as_mut() else {
            return Ok(Outcome::Done(Err("EPIPE")));
        };
        let take = len.min(c.send_space());
        self.write_progress = c.write(&vec![0u8; take], false).unwrap_or(0);
        let k = self.write_progress;
        Ok(if k == len {
            Outcome::Done(Ok(len as i64))
        } else if sock.nonblocking || dontwait {
            Outcome::Done(if k > 0 { Ok(k as i64) } else { Err("EAGAIN") })
        } else {
            Outcome::Block
        })
    }

    /// Fast Open on a listener (Linux's tcp_fastopen bits, ip-sysctl.rst):
    /// on with TCP_FASTOPEN under 0x2, or for every listener under 0x400
    /// (the listen backlog is then the queue). The cookie is the one
    /// Linux's key gives the scripted peer (RFC 7413 4.1.2).
    fn fast_open_listener(&self, cfg: &mut Config, sock: &Sock, backlog: u32) {
        use crate::sysctl::{TFO_SERVER, TFO_SERVER_ALL, TFO_SERVER_NO_COOKIE};
        let bits = self.host.fastopen_bits();
        let queue = if bits & TFO_SERVER != 0 && sock.tfo_queue > 0 {
            sock.tfo_queue
        } else if bits & TFO_SERVER_ALL != 0 {
            backlog.max(1)
        } else {
            return;
        };
        let key = sock.tfo_key.unwrap_or_else(|| self.host.fastopen_key());
        cfg.fast_open.server = true;
        cfg.fast_open.queue = queue;
        cfg.fast_open.server_no_cookie = bits & TFO_SERVER_NO_COOKIE != 0;
        cfg.fast_open.server_cookie = Some(tinygram_proto::fastopen::server_cookie(
            &key,
            self.settings.remote_ip,
            self.settings.local_ip,
        ));
    }

    /// setsockopt(TCP_FASTOPEN_CONNECT) (net/ipv4/tcp.c, do_tcp_setsockopt):
    /// 0 or 1, on a socket not yet connected, with the client bit of
    /// net.ipv4.tcp_fastopen set (else EOPNOTSUPP).
    fn fast_open_connect_opt(&mut self, fd: i64, sock: &Sock, v: i64) -> Outcome {
        if !(0..=1).contains(&v) {
            return Outcome::Done(Err("EINVAL"));
        }
        if self.host.fastopen_bits() & crate::sysctl::TFO_CLIENT == 0 {
            return Outcome::Done(Err("EOPNOTSUPP"));
        }
        if !matches!(sock.kind, SockKind::Fresh | SockKind::Bound) {
            return Outcome::Done(Err("EINVAL"));
        }
        if let Some(s) = self.socks.get_mut(&fd) {
            s.tfo_connect = v == 1;
        }
        Outcome::Done(Ok(0))
    }

    /// connect() under TCP_FASTOPEN_CONNECT (tcp_fastopen_defer_connect): with
    /// a cookie cached (or cookies waived) it returns 0 at once and the SYN
    /// waits for the first write; without one the SYN asks for a cookie.
    /// `Some(Ok)`: the call's outcome; `Some(Err(sock))`: connect with `sock`.
    fn fast_open_connect(
        &mut self,
        fd: i64,
        sock: &Sock,
        first: bool,
    ) -> Option<Result<Outcome, Sock>> {
        use crate::sysctl::TFO_CLIENT_NO_COOKIE;
        let fresh = matches!(sock.kind, SockKind::Fresh | SockKind::Bound);
        if !(first && fresh && sock.tfo_connect && !sock.cfg.fast_open.client) {
            return None;
        }
        let no_cookie = self.host.fastopen_bits() & TFO_CLIENT_NO_COOKIE != 0;
        if no_cookie || self.tfo_cache.get(self.settings.remote_ip).is_some() {
            if let Some(s) = self.socks.get_mut(&fd) {
                s.tfo_deferred = true;
            }
            return Some(Ok(Outcome::Done(Ok(0))));
        }
        let mut s = sock.clone();
        s.cfg.fast_open.client = true;
        s.cfg.fast_open.cookie = None;
        s.cfg.fast_open.experimental = self.tfo_cache.request_experimental(self.settings.remote_ip);
        s.cfg.fast_open.peer_mss = self.tfo_cache.mss(self.settings.remote_ip);
        self.socks.insert(fd, s.clone());
        Some(Err(s))
    }

    /// SO_KEEPALIVE and TCP_KEEPIDLE/KEEPINTVL/KEEPCNT (tcp(7)): Linux takes
    /// 1 to 32767 seconds (MAX_TCP_KEEPIDLE, MAX_TCP_KEEPINTVL) and 1 to 127
    /// probes (MAX_TCP_KEEPCNT), else EINVAL; a live connection re-arms its
    /// timer (tcp_sock_set_keepidle_locked). TCP_KEEPINIT, FreeBSD's open
    /// timeout (tcp(4)), takes 0 (the host's net.inet.tcp.keepinit) to
    /// UINT_MAX / hz seconds (tcp_usrreq.c tcp_default_ctloutput, hz 1000).
    fn set_keepalive(&mut self, fd: i64, sock: &Sock, name: &str, v: i64, live: bool) -> Outcome {
        let mut cfg = sock.cfg.clone();
        let secs = |v: i64| {
            (1..=32_767)
                .contains(&v)
                .then(|| tinygram_proto::Duration::from_secs(v as u64))
        };
        let ok = match name {
            "SO_KEEPALIVE" => {
                cfg.keepalive = v != 0;
                true
            }
            "TCP_KEEPIDLE" => secs(v).map(|d| cfg.keepalive_idle = d).is_some(),
            "TCP_KEEPINTVL" => secs(v).map(|d| cfg.keepalive_intvl = d).is_some(),
            "TCP_KEEPINIT" => match v {
                0 => {
                    let mut host = self.settings.stack.config();
                    self.host.configure(&mut host);
                    cfg.connect_timeout = host.connect_timeout;
                    true
                }
                1..=4_294_967 => {
                    cfg.connect_timeout = Some(tinygram_proto::Duration::from_secs(v as u64));
                    true
                }
                _ => false,
            },
            _ => {
                let ok = (1..=127).contains(&v);
                if ok {
                    cfg.keepalive_probes = v as u32;
                }
                ok
            }
        };
        if !ok {
            self.errno_reason = Some(format!("{name}: {v} is out of range"));
            return Outcome::Done(Err("EINVAL"));
        }
        if live {
            let now = instant(self.now);
            if let Some(c) = self.conn.as_mut() {
                c.set_keepalive(
                    now,
                    cfg.keepalive,
                    cfg.keepalive_idle,
                    cfg.keepalive_intvl,
                    cfg.keepalive_probes,
                );
            }
        }
        if let Some(s) = self.socks.get_mut(&fd) {
            s.cfg = cfg;
            s.set_by_script.insert(name.to_string());
        }
        Outcome::Done(Ok(0))
    }

    /// TCP_FASTOPEN_KEY (tcp(7); Linux's do_tcp_setsockopt and
    /// tcp_fastopen_reset_cipher): the socket's own 16-byte cookie key, as
    /// its bytes are (four little-endian words, like tcp_fastopen_key). Any
    /// other length is EINVAL; a listener takes it at once.
    fn set_fastopen_key(
        &mut self,
        idx: usize,
        fd: i64,
        sock: &Sock,
        spec: &SyscallSpec,
    ) -> Res<Outcome> {
        let len = self.int_arg(idx, spec, 4, "option length")?;
        if len == 32 {
            return Err(self.unsupported(
                idx,
                "TCP_FASTOPEN_KEY with a backup key (32 bytes) is not supported",
            ));
        }
        let bytes: Option<Vec<u8>> = match spec.args.get(3) {
            Some(Expr::Str(s)) => s.chars().map(|c| u8::try_from(c).ok()).collect(),
            _ => None,
        };
        let Some(bytes) = bytes else {
            return Err(self.unsupported(
                idx,
                "setsockopt TCP_FASTOPEN_KEY: expected a string of bytes like \"\\x01\\x02...\"",
            ));
        };
        let key: [u8; 16] = match (len, <[u8; 16]>::try_from(bytes.as_slice())) {
            (16, Ok(k)) => k,
            _ => {
                self.errno_reason = Some(format!(
                    "TCP_FASTOPEN_KEY takes 16 bytes, not {len} (string of {})",
                    bytes.len()
                ));
                return Ok(Outcome::Done(Err("EINVAL")));
            }
        };
        let mut s = sock.clone();
        s.tfo_key = Some(key);
        self.socks.insert(fd, s.clone());
        if sock.kind == SockKind::Listener && self.listener_fd == Some(fd) {
            let mut cfg = s.cfg.clone();
            if let Some(c) = self.conn.as_ref() {
                cfg.fast_open = c.config().fast_open.clone();
            }
            if cfg.fast_open.server {
                cfg.fast_open.server_cookie = Some(tinygram_proto::fastopen::server_cookie(
                    &key,
                    self.settings.remote_ip,
                    self.settings.local_ip,
                ));
                if let Some(c) = self.conn.as_mut() {
                    c.set_fast_open(cfg.fast_open);
                }
            }
        }
        Ok(Outcome::Done(Ok(0)))
    }

    /// sendto()/sendmsg() with MSG_FASTOPEN on an unconnected socket: connect
    /// with a cookie request, or with the cached cookie and data in the SYN
    /// (RFC 7413 4.2.1). Nonblocking, it returns the bytes the SYN carries or
    /// EINPROGRESS when it carries none; blocking, it waits for the handshake
    /// and returns the whole length. `None`: not a Fast Open send.
    fn fast_open_send(
        &mut self,
        idx: usize,
        fd: i64,
        sock: &Sock,
        len: usize,
        (fastopen, dontwait, null): (bool, bool, bool),
        first: bool,
    ) -> Res<Option<Outcome>> {
        use crate::sysctl::{TFO_CLIENT, TFO_CLIENT_NO_COOKIE};
        if let (false, Some(n)) = (first, sock.tfo_sending) {
            if let Some(e) = self.take_error(fd) {
                return Ok(Some(Outcome::Done(Err(e))));
            }
            if !self.ever_synced {
                return Ok(Some(Outcome::Block));
            }
            if let Some(s) = self.socks.get_mut(&fd) {
                s.tfo_sending = None;
            }
            return Ok(Some(if n < len {
                // No cookie: the data waited for the handshake.
                self.write(fd, &self.socks[&fd].clone(), len, false, false)?
            } else {
                Outcome::Done(Ok(n as i64))
            }));
        }
        // tcp_sendmsg_fastopen: a Fast Open connect already under way.
        let connecting = self
            .conn
            .as_ref()
            .is_some_and(|c| c.state() == tinygram_proto::State::SynSent);
        if fastopen && first && sock.kind == SockKind::Stream && connecting {
            return Ok(Some(Outcome::Done(Err("EALREADY"))));
        }
        // The first write after a deferred TCP_FASTOPEN_CONNECT connect()
        // goes as sendto(MSG_FASTOPEN) does (tcp_sendmsg_locked).
        let fastopen = fastopen || sock.tfo_deferred;
        if !fastopen || !first || !matches!(sock.kind, SockKind::Fresh | SockKind::Bound) {
            return Ok(None);
        }
        let bits = self.host.fastopen_bits();
        if bits & TFO_CLIENT == 0 {
            return Ok(Some(Outcome::Done(Err("EOPNOTSUPP"))));
        }
        let cached = self.tfo_cache.get(self.settings.remote_ip);
        let no_cookie = bits & TFO_CLIENT_NO_COOKIE != 0;
        let mut s = sock.clone();
        s.tfo_deferred = false;
        s.cfg.fast_open.client = true;
        s.cfg.fast_open.client_no_cookie = no_cookie;
        s.cfg.fast_open.cookie = cached.map(|c| c.0);
        // tcp_fastopen_cache_get: a cached cookie keeps its kind; with none,
        // a request goes experimental after kind 34 went unanswered.
        s.cfg.fast_open.experimental = match cached {
            Some(c) => c.1,
            None => self.tfo_cache.request_experimental(self.settings.remote_ip),
        };
        s.cfg.fast_open.peer_mss = self.tfo_cache.mss(self.settings.remote_ip);
        self.socks.insert(fd, s.clone());
        let connected = self.connect(idx, fd, &s, true)?;
        let carries = cached.is_some() || no_cookie;
        // MSG_DONTWAIT makes this one call non-blocking (tcp_sendmsg_fastopen
        // passes the message's flags to __inet_stream_connect).
        let nonblocking = sock.nonblocking || dontwait;
        let mut sent = 0;
        if null && len > 0 {
            // tcp_send_syn_data: nothing can be copied from a NULL buffer, so
            // the SYN goes without data.
            self.errno_reason = Some("sendto: the buffer is NULL".to_string());
        }
        // Blocking, the data is handed over at once even when the SYN cannot
        // carry it: the writer then waits on the connection
        // (inet_wait_for_connect's sk_write_pending), which Linux's
        // SYN-ACK processing sees.
        if (carries || !nonblocking) && len > 0 && !null {
            if let Some(c) = self.conn.as_mut() {
                let mss = s.cfg.mss.min(s.cfg.fast_open.peer_mss.unwrap_or(u16::MAX));
                let room = usize::from(mss).saturating_sub(tinygram_proto::wire::MAX_OPTIONS_LEN);
                let take = if nonblocking { len.min(room) } else { len };
                sent = c.write(&vec![0u8; take], false).unwrap_or(0);
            }
        }
        if nonblocking {
            return Ok(Some(match connected {
                _ if sent > 0 => Outcome::Done(Ok(sent as i64)),
                // tcp_sendmsg_fastopen: MSG_DONTWAIT connects as O_NONBLOCK
                // would, so the handshake under way is EINPROGRESS.
                Outcome::Block => Outcome::Done(Err("EINPROGRESS")),
                other => other,
            }));
        }
        if let Some(s) = self.socks.get_mut(&fd) {
            s.tfo_sending = Some(sent);
        }
        Ok(Some(Outcome::Block))
    }

    /// write()/send(): hands bytes to the engine, blocking or partial as Linux would.
    pub(crate) fn write(
        &mut self,
        fd: i64,
        sock: &Sock,
        len: usize,
        more: bool,
        dontwait: bool,
    ) -> Res<Outcome> {
        if sock.kind != SockKind::Stream {
            return Ok(Outcome::Done(Err(if sock.kind == SockKind::Listener {
                "ENOTCONN"
            } else {
                "EPIPE"
            })));
        }
        if let Some(e) = self.take_error(fd) {
            return Ok(Outcome::Done(Err(e)));
        }
        // tcp_sendmsg_locked: a socket shut for sending (as a reset leaves
        // it, tcp_done) fails with EPIPE once its error has been reported.
        let closed = self
            .conn
            .as_ref()
            .is_none_or(|c| c.state() == tinygram_proto::State::Closed);
        if sock.shut_wr || closed {
            return Ok(Outcome::Done(Err("EPIPE")));
        }
        let nb = sock.nonblocking || dontwait;
        if self.notsent_lowat() < notsent::NO_LIMIT {
            // A finite TCP_NOTSENT_LOWAT: Linux's per-skb check (notsent.rs).
            let remaining = len - self.write_progress;
            if remaining > 0 {
                match self.write_lowat(remaining, more) {
                    Ok(k) => self.write_progress += k,
                    Err(WriteError::Closed) => {
                        return Ok(Outcome::Done(if self.write_progress > 0 {
                            Ok(self.write_progress as i64)
                        } else {
                            Err("EPIPE")
                        }))
                    }
                    Err(WriteError::Conn(e)) => {
                        if let Some(s) = self.socks.get_mut(&fd) {
                            s.err_reported = true;
                        }
                        let bsd = self.conn.as_ref().is_some_and(|c| c.config().icmp_bsd);
                        return Ok(Outcome::Done(Err(conn_errno(e, bsd))));
                    }
                }
            }
            return Ok(Self::lowat_outcome(self.write_progress, len, nb));
        }
        let Some(c) = self.conn.as_mut() else {
            return Ok(Outcome::Done(Err("EPIPE")));
        };
        if c.state() == tinygram_proto::State::SynSent && self.write_progress == 0 {
            // tcp_sendmsg_locked -> sk_stream_wait_connect: no data is taken
            // before the handshake completes (EAGAIN without waiting).
            return Ok(if nb {
                Outcome::Done(Err("EAGAIN"))
            } else {
                Outcome::Block
            });
        }
        let remaining = len - self.write_progress;
        if remaining > 0 {
            let chunk = remaining.min(c.send_space());
            if chunk > 0 {
                // Offer a byte more than fits when the write does not fit, so the
                // engine sees it cut short (the rest is still to come), as a
                // write() larger than the free send buffer is in a kernel.
                let data = vec![0u8; remaining.min(chunk + 1)];
                match c.write(&data, more) {
                    Ok(k) => self.write_progress += k,
                    Err(WriteError::Closed) => {
                        return Ok(Outcome::Done(if self.write_progress > 0 {
                            Ok(self.write_progress as i64)
                        } else {
                            Err("EPIPE")
                        }))
                    }
                    Err(WriteError::Conn(e)) => {
                        if let Some(s) = self.socks.get_mut(&fd) {
                            s.err_reported = true;
                        }
                        let bsd = self.conn.as_ref().is_some_and(|c| c.config().icmp_bsd);
                        return Ok(Outcome::Done(Err(conn_errno(e, bsd))));
                    }
                }
            }
        }
        if self.write_progress == len {
            return Ok(Outcome::Done(Ok(len as i64)));
        }
        // wait_for_space: the send buffer now limits the connection.
        self.note_sndbuf_limited();
        if nb {
            return Ok(Outcome::Done(if self.write_progress > 0 {
                Ok(self.write_progress as i64)
            } else {
                Err("EAGAIN")
            }));
        }
        Ok(Outcome::Block)
    }

    /// read()/recv() without MSG_PEEK.
    pub(crate) fn read(&mut self, fd: i64, sock: &Sock, n: usize, dontwait: bool) -> Outcome {
        self.read_peek(fd, sock, n, dontwait, false)
    }

    /// read()/recv(): data, 0 at end of stream, the connection's error, or EAGAIN/block.
    /// With `peek` (recv(MSG_PEEK)) the data is copied, not consumed.
    fn read_peek(&mut self, fd: i64, sock: &Sock, n: usize, dontwait: bool, peek: bool) -> Outcome {
        if sock.tfo_deferred {
            // Deferred Fast Open connect: the socket is in SYN-SENT already.
            return if sock.nonblocking || dontwait {
                Outcome::Done(Err("EAGAIN"))
            } else {
                Outcome::Block
            };
        }
        if sock.kind != SockKind::Stream {
            return Outcome::Done(Err(if sock.kind == SockKind::Listener {
                "EINVAL"
            } else {
                "ENOTCONN"
            }));
        }
        // tcp_recvmsg_locked: queued data is returned before the socket's
        // error (a reset connection still yields what arrived before it).
        if let Some(c) = self.conn.as_mut() {
            if c.recv_available() > 0 && n > 0 {
                let mut b = vec![0u8; n.min(c.recv_available())];
                let k = if peek { c.peek(&mut b) } else { c.read(&mut b) };
                return Outcome::Done(Ok(k as i64));
            }
        }
        if let Some(e) = self.take_error(fd) {
            return Outcome::Done(Err(e));
        }
        let Some(c) = self.conn.as_mut() else {
            return Outcome::Done(Ok(0));
        };
        if n == 0
            || sock.shut_rd
            || c.read_closed()
            || c.error().is_some()
            || c.state() == tinygram_proto::State::Closed
        {
            return Outcome::Done(Ok(0));
        }
        if sock.nonblocking || dontwait {
            Outcome::Done(Err("EAGAIN"))
        } else {
            Outcome::Block
        }
    }

    /// setsockopt(): Linux options and the TCP_TINYGRAM_* family.
    fn setsockopt(&mut self, idx: usize, fd: i64, sock: &Sock, spec: &SyscallSpec) -> Res<Outcome> {
        let name = match spec.args.get(2) {
            Some(Expr::Ident(n)) => n.clone(),
            _ => {
                return Err(self.unsupported(
                    idx,
                    "setsockopt: the option name must be a symbol like TCP_NODELAY",
                ))
            }
        };
        let val = spec.args.get(3).cloned().unwrap_or(Expr::Ellipsis);
        let int = |r: &Self| {
            int_of(&val).ok_or_else(|| {
                r.unsupported(
                    idx,
                    format!("setsockopt {name}: expected a number like [1]"),
                )
            })
        };
        let string = |r: &Self| match &val {
            Expr::Str(s) => Ok(s.clone()),
            _ => Err(r.unsupported(
                idx,
                format!("setsockopt {name}: expected a string like \"name\""),
            )),
        };
        let bad =
            |r: &Self, m: String| r.fail(idx, FailKind::Syscall, format!("setsockopt {name}: {m}"));
        if let Some(out) = self.setsockopt_ext(idx, fd, sock, &name, &val)? {
            return Ok(out);
        }
        let mut cfg = sock.cfg.clone();
        let mut explicit = sock.explicit_options;
        let live =
            matches!(sock.kind, SockKind::Listener | SockKind::Stream) && self.conn.is_some();
        if name == "TCP_FASTOPEN_CONNECT" {
            return Ok(self.fast_open_connect_opt(fd, sock, int(self)?));
        }
        // A live connection under `maxseg_live` (FreeBSD) lowers the MSS it sends with.
        let maxseg_live = sock.kind == SockKind::Stream
            && self
                .conn
                .as_ref()
                .is_some_and(|c| c.config().maxseg_live && c.state().synchronized());
        if name == "TCP_MAXSEG" && maxseg_live {
            let v = u16::try_from(int(self)?).unwrap_or(0);
            let ok = self.conn.as_mut().is_some_and(|c| c.lower_snd_mss(v));
            if !ok {
                self.errno_reason =
                    Some("FreeBSD takes 0 < MSS <= the current one, MSS + 40 >= 216".into());
            }
            return Ok(Outcome::Done(if ok { Ok(0) } else { Err("EINVAL") }));
        }
        if name == "TCP_REMOTE_UDP_ENCAPS_PORT" {
            return Ok(self.set_remote_udp_encaps_port(fd, sock, int(self)?));
        }
        if name == "TCP_FASTOPEN_KEY" {
            return self.set_fastopen_key(idx, fd, sock, spec);
        }
        if name == "TCP_FASTOPEN" {
            // tcp(7): the listener's queue of Fast Open requests not yet accepted.
            let q = u32::try_from(int(self)?).map_err(|_| bad(self, "out of range".into()))?;
            if let Some(s) = self.socks.get_mut(&fd) {
                s.tfo_queue = q;
            }
            // Set after listen(): the live listener takes it.
            if sock.kind == SockKind::Listener && self.listener_fd == Some(fd) {
                let mut s = sock.clone();
                s.tfo_queue = q;
                let mut cfg = s.cfg.clone();
                self.fast_open_listener(&mut cfg, &s, 1);
                if let Some(c) = self.conn.as_mut() {
                    c.set_fast_open(cfg.fast_open);
                }
            }
            return Ok(Outcome::Done(Ok(0)));
        }
        match name.as_str() {
            // SO_MARK only steers routing, which the runner has none of.
            "SO_REUSEADDR" | "SO_REUSEPORT" | "SO_MARK" => return Ok(Outcome::Done(Ok(0))),
            // Accepted, not modelled: an ICMP "fragmentation needed" lowers
            // the path MTU whatever the mode (IP_PMTUDISC_DONT would ignore it).
            "IP_MTU_DISCOVER" => return Ok(Outcome::Done(Ok(0))),
            // Precedence/DSCP bits go on the socket's segments; the ECN bits
            // would change behaviour, so they are refused.
            "IP_TOS" => {
                let v = match &val {
                    Expr::List(l) if l.len() == 1 => match &l[0] {
                        Expr::Ident(n) => crate::ipfields::iptos_value(n).map(i64::from),
                        e => int_of(e),
                    },
                    e => int_of(e),
                }
                .ok_or_else(|| {
                    self.unsupported(
                        idx,
                        "setsockopt IP_TOS: expected a number or an IPTOS_* name like [IPTOS_DSCP_CS1]",
                    )
                })?;
                if v & 0x3 != 0 {
                    return Err(self.unsupported(
                        idx,
                        format!(
                            "setsockopt IP_TOS {v:#x}: ECN bits set by IP_TOS are not modelled"
                        ),
                    ));
                }
                let tos = u8::try_from(v).map_err(|_| bad(self, format!("{v} is not a byte")))?;
                self.set_ip_fields(fd, sock, |ip| ip.tos = tos);
                return Ok(Outcome::Done(Ok(0)));
            }
            // ip(4)/ip(7): 1 to 255 (Linux takes -1 for the default).
            "IP_TTL" => {
                let v = int(self)?;
                let ttl = match v {
                    -1 => crate::ipfields::DEFAULT_TTL,
                    _ => u8::try_from(v)
                        .ok()
                        .filter(|&t| t > 0)
                        .ok_or_else(|| bad(self, format!("{v} is not a TTL (1 to 255)")))?,
                };
                self.set_ip_fields(fd, sock, |ip| ip.ttl = ttl);
                return Ok(Outcome::Done(Ok(0)));
            }
            "SO_KEEPALIVE" | "TCP_KEEPIDLE" | "TCP_KEEPINTVL" | "TCP_KEEPCNT" | "TCP_KEEPINIT" => {
                let v = int(self)?;
                return Ok(self.set_keepalive(fd, sock, &name, v, live));
            }
            "SO_ZEROCOPY" => {
                let on = int(self)? != 0;
                if let Some(s) = self.socks.get_mut(&fd) {
                    s.zerocopy = on;
                }
                return Ok(Outcome::Done(Ok(0)));
            }
            "SO_RCVBUF" => {
                cfg.rcv_buf = int(self)?.max(0) as usize;
                if let Some(s) = self.socks.get_mut(&fd) {
                    s.rcvbuf_set = true;
                }
            }
            "SO_SNDBUF" => {
                let v = int(self)?.max(0) as usize;
                cfg.snd_buf = sndbuf_for(&cfg, v);
                if live {
                    // Linux lets a live socket resize its send buffer (sock_setsockopt).
                    if let Some(c) = self.conn.as_mut() {
                        c.set_send_buffer(cfg.snd_buf);
                    }
                    if let Some(c) = self.conn_cfg.as_mut() {
                        c.snd_buf = cfg.snd_buf;
                    }
                    return Ok(Outcome::Done(Ok(0)));
                }
            }
            "TCP_MAXSEG" => {
                cfg.mss = u16::try_from(int(self)?).map_err(|_| bad(self, "out of range".into()))?
            }
            "TCP_NODELAY" | "TCP_CORK" | "TCP_TINYGRAM_SEND_POLICY" => {
                let chosen = match name.as_str() {
                    "TCP_NODELAY" => PolicyOpt::NoDelay(int(self)? != 0),
                    "TCP_CORK" => PolicyOpt::Cork(int(self)? != 0),
                    _ => PolicyOpt::Named(
                        SendPolicyKind::from_str(&string(self)?).map_err(|e| bad(self, e))?,
                    ),
                };
                return Ok(self.set_send_policy(fd, sock, chosen, live));
            }
            // FreeBSD tcp(4): no options on any segment, MSS included.
            "TCP_NOOPT" => {
                cfg.no_options = int(self)? != 0;
                if cfg.no_options {
                    // Nor does it take up any the peer offers.
                    cfg.options = tinygram_proto::OptionSet {
                        ecn: cfg.options.ecn,
                        ..tinygram_proto::OptionSet::default()
                    };
                }
                explicit = true;
            }
            // tcp(7): SYN retransmissions before giving up, 1 to 127.
            "TCP_SYNCNT" => match int(self)? {
                n @ 1..=127 => {
                    cfg.syn_retries = n as u32;
                    if live {
                        // Linux reads it at each SYN timeout, so a connection
                        // already opening takes it.
                        if let Some(c) = self.conn.as_mut() {
                            c.set_syn_retries(cfg.syn_retries);
                        }
                        if let Some(c) = self.conn_cfg.as_mut() {
                            c.syn_retries = cfg.syn_retries;
                        }
                        return Ok(Outcome::Done(Ok(0)));
                    }
                }
                _ => return Ok(Outcome::Done(Err("EINVAL"))),
            },
            "TCP_CONGESTION" => match CcFactory::by_name(&string(self)?) {
                Ok(c) => cfg.congestion = c,
                Err(e) => {
                    // Linux: ENOENT for a congestion control it does not know (tcp_set_congestion_control).
                    self.errno_reason = Some(format!("TCP_CONGESTION: {e}"));
                    return Ok(Outcome::Done(Err("ENOENT")));
                }
            },
            other => {
                let Some(row) = sockopt::row(other) else {
                    return Err(self.unsupported(
                        idx,
                        format!("setsockopt option {other} is not supported (see the drill README for the list)"),
                    ));
                };
                let row = row.map_err(|e| self.unsupported(idx, format!("setsockopt {e}")))?;
                let v = sockopt::value_of(row, &val)
                    .map_err(|e| self.unsupported(idx, format!("setsockopt {name}: {e}")))?;
                if let Err(e) = row.set(&mut cfg, v) {
                    if matches!(row.kind, Kind::Name | Kind::Names { .. }) {
                        // A name the engine does not know: the script is wrong.
                        return Err(bad(self, e));
                    }
                    // Out of the row's range: EINVAL, as Linux (setsockopt(2)).
                    self.errno_reason = Some(format!("{name}: {}: {e}", row.name));
                    return Ok(Outcome::Done(Err("EINVAL")));
                }
                match other {
                    // Before synack_retries split from it, syn_retries bounded
                    // both opens; the option keeps that meaning for scripts.
                    "TCP_TINYGRAM_SYN_RETRIES" => cfg.synack_retries = cfg.syn_retries,
                    // The script chose the options offered: they are no
                    // longer inferred from its SYN (see infer_options).
                    "TCP_TINYGRAM_OPTIONS" => explicit = true,
                    _ => {}
                }
            }
        }
        if let Some(e) = sockopt::range_error(&cfg, &name) {
            // As Linux answers an out-of-range value: EINVAL at the call itself.
            self.errno_reason = Some(format!("{name}: {e}"));
            return Ok(Outcome::Done(Err("EINVAL")));
        }
        if live {
            let current = self.conn_cfg.as_ref().map(|c| format!("{c:?}"));
            let mut merged = self.conn_cfg.clone().unwrap_or_default();
            if let Err(e) = sockopt::apply_named(&mut merged, &cfg, &name) {
                self.errno_reason = Some(format!("{name}: {e}"));
                return Ok(Outcome::Done(Err("EINVAL")));
            }
            let listening = sock.kind == SockKind::Listener
                && self
                    .conn
                    .as_ref()
                    .is_some_and(|c| c.state() == tinygram_proto::State::Listen);
            if listening && current.as_deref() != Some(&format!("{merged:?}")) {
                // No SYN has come yet: as on Linux, an option set on the
                // listener applies to the connections it accepts later.
                if let Err(e) = merged.validate() {
                    self.errno_reason = Some(format!("{name}: {e}"));
                    return Ok(Outcome::Done(Err("EINVAL")));
                }
                self.conn = Some(Connection::listen(
                    merged.clone(),
                    SERVER_PORT,
                    IsnSeries::with_step(SeqNumber(LOCAL_ISN), 0),
                ));
                self.conn_cfg = Some(merged);
                if let Some(s) = self.socks.get_mut(&fd) {
                    // Cannot fail: the same values were just copied into `merged`.
                    let _ = sockopt::apply_named(&mut s.cfg, &cfg, &name);
                    s.set_by_script.insert(name);
                }
                return Ok(Outcome::Done(Ok(0)));
            }
            if current.as_deref() != Some(&format!("{merged:?}")) {
                return Err(self.unsupported(
                    idx,
                    format!("{name} cannot change a live connection's configuration; set it before connect()/listen()"),
                ));
            }
            return Ok(Outcome::Done(Ok(0)));
        }
        if let Some(s) = self.socks.get_mut(&fd) {
            s.cfg = cfg;
            s.explicit_options = explicit;
            s.set_by_script.insert(name);
        }
        Ok(Outcome::Done(Ok(0)))
    }

    /// Ends the cork a MSG_MORE send put on the live connection: Linux corks
    /// only that send's own push, so the next event that pushes (a send
    /// without MSG_MORE, an arriving ACK) sends what waits.
    pub(crate) fn release_more_cork(&mut self) {
        if !self.more_corked {
            return;
        }
        self.more_corked = false;
        // Back to the policy before the cork, without a flush: MSG_MORE data
        // ends no data set, so it gets no PSH for it.
        let restore = self.conn_uncork_to;
        if let Some(c) = self.conn.as_mut() {
            if c.config().send_policy != restore {
                c.set_send_policy(instant(self.now), restore);
            }
        }
        if let Some(c) = self.conn_cfg.as_mut() {
            c.send_policy = restore;
        }
    }

    /// TCP_NODELAY, TCP_CORK and TCP_TINYGRAM_SEND_POLICY: before the
    /// connection exists they configure it; on a live connection they change
    /// its policy at once, as Linux allows (see [`next_policy`]).
    fn set_send_policy(&mut self, fd: i64, sock: &Sock, opt: PolicyOpt, live: bool) -> Outcome {
        if live {
            let cur = self
                .conn_cfg
                .as_ref()
                .map_or(sock.cfg.send_policy, |c| c.send_policy);
            let nagle = self.settings.stack.nagle();
            let (policy, uncork_to, push) = next_policy(cur, self.conn_uncork_to, opt, nagle);
            if let Some(c) = self.conn.as_mut() {
                if c.config().send_policy != policy {
                    c.set_send_policy(instant(self.now), policy);
                }
                if push {
                    c.flush();
                }
            }
            if let Some(c) = self.conn_cfg.as_mut() {
                c.send_policy = policy;
            }
            self.conn_uncork_to = uncork_to;
        } else if let Some(s) = self.socks.get_mut(&fd) {
            let nagle = self.settings.stack.nagle();
            let (policy, uncork_to, _) = next_policy(s.cfg.send_policy, s.uncork_to, opt, nagle);
            s.cfg.send_policy = policy;
            s.uncork_to = uncork_to;
            s.set_by_script.insert("TCP_TINYGRAM_SEND_POLICY".into());
        }
        Outcome::Done(Ok(0))
    }

    /// The connection's (receive, send) buffer sizes, which can differ from
    /// the socket's settings once the handshake is done (FreeBSD rounds them
    /// to the MSS: tcp_input.c tcp_mss).
    fn live_buffers(&self, sock: &Sock) -> Option<(usize, usize)> {
        let c = self.conn.as_ref()?;
        (sock.kind == SockKind::Stream).then(|| (c.rcv_buf_granted().0, c.config().snd_buf))
    }

    /// getsockopt(): reports the value and checks it against the script's `[value]`.
    fn getsockopt(&mut self, idx: usize, fd: i64, sock: &Sock, spec: &SyscallSpec) -> Res<Outcome> {
        let name = match spec.args.get(2) {
            Some(Expr::Ident(n)) => n.clone(),
            _ => {
                return Err(self.unsupported(
                    idx,
                    "getsockopt: the option name must be a symbol like SO_ERROR",
                ))
            }
        };
        let cfg = if sock.kind == SockKind::Stream || sock.kind == SockKind::Listener {
            self.conn_cfg.clone().unwrap_or_else(|| sock.cfg.clone())
        } else {
            sock.cfg.clone()
        };
        let actual: i64 = match name.as_str() {
            "SO_ERROR" => self.take_error(fd).map_or(0, errno_number),
            "SO_RCVBUF" => self.live_buffers(sock).map_or(cfg.rcv_buf, |b| b.0) as i64,
            "SO_SNDBUF" => self.live_buffers(sock).map_or(cfg.snd_buf, |b| b.1) as i64,
            "TCP_MAXSEG" => match (&self.conn, sock.kind) {
                (Some(c), SockKind::Stream) if self.ever_synced => c.effective_mss() as i64,
                _ => i64::from(cfg.mss),
            },
            "TCP_NODELAY" => {
                let on_conn = matches!(sock.kind, SockKind::Stream | SockKind::Listener)
                    && self.conn_cfg.is_some();
                let uncork_to = if on_conn {
                    self.conn_uncork_to
                } else {
                    sock.uncork_to
                };
                let base = if cfg.send_policy == SendPolicyKind::Cork {
                    uncork_to
                } else {
                    cfg.send_policy
                };
                i64::from(base == SendPolicyKind::NoDelay)
            }
            "TCP_CORK" => i64::from(cfg.send_policy == SendPolicyKind::Cork),
            "TCP_FASTOPEN" => i64::from(sock.tfo_queue),
            "TCP_FASTOPEN_CONNECT" => i64::from(sock.tfo_connect),
            "TCP_REMOTE_UDP_ENCAPS_PORT" => self.remote_udp_encaps_port(sock),
            "SO_REUSEADDR" => 1,
            // tcp(7), tcp(4): the keep-alive times in whole seconds.
            "SO_KEEPALIVE" => i64::from(cfg.keepalive),
            "TCP_KEEPIDLE" => cfg.keepalive_idle.as_secs() as i64,
            "TCP_KEEPINTVL" => cfg.keepalive_intvl.as_secs() as i64,
            "TCP_KEEPCNT" => i64::from(cfg.keepalive_probes),
            "TCP_KEEPINIT" => match cfg.connect_timeout {
                Some(d) => d.as_secs() as i64,
                None => {
                    return Err(self.unsupported(
                        idx,
                        "getsockopt TCP_KEEPINIT: the stack has no connect timeout (FreeBSD's; set connect_timeout)",
                    ))
                }
            },
            other if self.getsockopt_ext(fd, other).is_some() => {
                self.getsockopt_ext(fd, other).unwrap_or_default()
            }
            other => {
                return Err(self.unsupported(
                    idx,
                    format!("getsockopt option {other} is not supported (SO_ERROR, SO_RCVBUF, SO_SNDBUF, TCP_MAXSEG, TCP_NODELAY, TCP_CORK, SO_KEEPALIVE, TCP_KEEP* are)"),
                ))
            }
        };
        // SO_ERROR's value is often an errno name, which packetdrill checks
        // as the number it stands for.
        let named = match spec.args.get(3) {
            Some(Expr::List(l)) if name == "SO_ERROR" => match l.as_slice() {
                [Expr::Ident(e)] => Some(errno_value(e).ok_or_else(|| {
                    self.unsupported(idx, format!("getsockopt SO_ERROR: unknown errno name {e}"))
                })?),
                _ => None,
            },
            _ => None,
        };
        if let Some(want) = named.or_else(|| spec.args.get(3).and_then(int_of)) {
            if want != actual {
                let mut f = self.fail(
                    idx,
                    FailKind::Syscall,
                    format!("getsockopt {name}: value {actual}, the script expects {want}"),
                );
                f.expected = Some(format!("[{want}]"));
                f.actual = Some(format!("[{actual}]"));
                return Err(f);
            }
        }
        Ok(Outcome::Done(Ok(0)))
    }
}

/// A send-policy socket option and its value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PolicyOpt {
    /// TCP_NODELAY on (true) or off.
    NoDelay(bool),
    /// TCP_CORK on (true) or off.
    Cork(bool),
    /// TCP_TINYGRAM_SEND_POLICY.
    Named(SendPolicyKind),
}

/// The send policy after `opt`, the policy uncorking will restore, and whether
/// queued data must be pushed, given the current policy and restore target;
/// `nagle` is what TCP_NODELAY 0 selects (the stack's Nagle: Linux's is minshall).
/// As Linux: TCP_CORK overrides TCP_NODELAY while set; clearing it restores the
/// policy in force before and pushes what is queued (tcp(7)); setting TCP_NODELAY
/// pushes queued data even while corked.
fn next_policy(
    cur: SendPolicyKind,
    uncork_to: SendPolicyKind,
    opt: PolicyOpt,
    nagle: SendPolicyKind,
) -> (SendPolicyKind, SendPolicyKind, bool) {
    let corked = cur == SendPolicyKind::Cork;
    let cork = |base| (SendPolicyKind::Cork, base, false);
    match opt {
        PolicyOpt::NoDelay(on) => {
            let base = if on { SendPolicyKind::NoDelay } else { nagle };
            if corked {
                (SendPolicyKind::Cork, base, on)
            } else {
                (base, base, false)
            }
        }
        PolicyOpt::Cork(true) | PolicyOpt::Named(SendPolicyKind::Cork) => {
            cork(if corked { uncork_to } else { cur })
        }
        PolicyOpt::Cork(false) if corked => (uncork_to, uncork_to, true),
        PolicyOpt::Cork(false) => (cur, uncork_to, false),
        PolicyOpt::Named(k) => (k, k, false),
    }
}

/// Linux's smallest send buffer (SOCK_MIN_SNDBUF, include/net/sock.h:
/// 2 x (2048 + sizeof(struct sk_buff)), 4608 on x86-64).
const LINUX_MIN_SNDBUF: usize = 4608;

/// The send buffer a `SO_SNDBUF` of `v` bytes gives: Linux doubles the value
/// to leave room for its bookkeeping and reports the doubled value (socket(7);
/// sock_setsockopt in net/core/sock.c), with a floor of [`LINUX_MIN_SNDBUF`];
/// tinygram takes it as is.
fn sndbuf_for(cfg: &Config, v: usize) -> usize {
    if cfg.so_sndbuf_doubles {
        v.saturating_mul(2).max(LINUX_MIN_SNDBUF)
    } else {
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use SendPolicyKind::{Cork, Doupnik, Minshall, Nagle, NoDelay};

    #[test]
    fn cork_restores_the_policy_before_it_and_nodelay_pushes() {
        // Cork over doupnik; uncork restores doupnik and pushes.
        assert_eq!(
            next_policy(Doupnik, Nagle, PolicyOpt::Cork(true), Nagle),
            (Cork, Doupnik, false)
        );
        assert_eq!(
            next_policy(Cork, Doupnik, PolicyOpt::Cork(false), Nagle),
            (Doupnik, Doupnik, true)
        );
        // Uncorking an uncorked socket changes nothing.
        assert_eq!(
            next_policy(Nagle, Nagle, PolicyOpt::Cork(false), Nagle),
            (Nagle, Nagle, false)
        );
        // TCP_NODELAY while corked: cork stays, the restore target changes,
        // and queued data is pushed (Linux sets TCP_NAGLE_PUSH).
        assert_eq!(
            next_policy(Cork, Nagle, PolicyOpt::NoDelay(true), Nagle),
            (Cork, NoDelay, true)
        );
        assert_eq!(
            next_policy(NoDelay, NoDelay, PolicyOpt::NoDelay(false), Nagle),
            (Nagle, Nagle, false)
        );
        // Under --stack linux, TCP_NODELAY 0 restores Linux's Nagle (minshall).
        assert_eq!(
            next_policy(NoDelay, NoDelay, PolicyOpt::NoDelay(false), Minshall),
            (Minshall, Minshall, false)
        );
        // TCP_TINYGRAM_SEND_POLICY "cork" corks; any other name replaces both.
        assert_eq!(
            next_policy(Doupnik, Doupnik, PolicyOpt::Named(Cork), Nagle),
            (Cork, Doupnik, false)
        );
        assert_eq!(
            next_policy(Cork, Nagle, PolicyOpt::Named(Doupnik), Nagle),
            (Doupnik, Doupnik, false)
        );
    }
}
