//! Minimal epoll for the script's one connection: epoll_create, epoll_ctl
//! and epoll_wait over EPOLLIN, EPOLLOUT, EPOLLERR, EPOLLHUP and EPOLLRDHUP,
//! level- or edge-triggered (EPOLLET), as Linux's eventpoll reports a TCP
//! socket's tcp_poll mask.

use crate::ast::{Expr, SyscallSpec};
use crate::report::{FailKind, Failure};
use crate::runner::{Res, Runner};
use crate::syscall::{Outcome, SockKind};

/// One epoll instance watching at most one socket.
#[derive(Clone, Debug, Default)]
pub(crate) struct Epoll {
    /// The epoll file descriptor, once created.
    pub epfd: Option<i64>,
    /// The watched socket and the events asked for (EPOLL* bits).
    pub watch: Option<(i64, u32)>,
    /// Edge-triggered: report only after a wakeup since the last report.
    pub edge: bool,
    /// A wakeup (data, space, state change) happened since the last report.
    pub woken: bool,
    /// EPOLLONESHOT: report once, then nothing until EPOLL_CTL_MOD re-arms it.
    pub oneshot: bool,
    /// A one-shot watch has reported and waits to be re-armed.
    pub disarmed: bool,
}

const EPOLLIN: u32 = 0x001;
const EPOLLOUT: u32 = 0x004;
const EPOLLERR: u32 = 0x008;
const EPOLLHUP: u32 = 0x010;
const EPOLLRDHUP: u32 = 0x2000;
const EPOLLEXCLUSIVE: u32 = 1 << 28;
const EPOLLONESHOT: u32 = 1 << 30;
const EPOLLET: u32 = 1 << 31;
/// Flags that change how a watch reports, not what it reports.
const MODES: u32 = EPOLLET | EPOLLONESHOT | EPOLLEXCLUSIVE;

/// epoll.h bits a watch may ask for: what tcp_poll reports, then the modes.
/// EPOLLEXCLUSIVE wakes one of several waiters; the runner has one.
const BITS: &[(&str, u32)] = &[
    ("EPOLLIN", EPOLLIN),
    ("EPOLLOUT", EPOLLOUT),
    ("EPOLLERR", EPOLLERR),
    ("EPOLLHUP", EPOLLHUP),
    ("EPOLLRDHUP", EPOLLRDHUP),
    ("EPOLLET", EPOLLET),
    ("EPOLLONESHOT", EPOLLONESHOT),
    ("EPOLLEXCLUSIVE", EPOLLEXCLUSIVE),
];

/// The bits of an `events=` value (`EPOLLIN|EPOLLOUT`, `0`).
fn event_bits(e: &Expr) -> Result<u32, String> {
    crate::mask::parse(e, BITS, "EPOLL")
}

/// `EPOLLIN|EPOLLOUT` for a mask, for messages.
fn mask_name(m: u32) -> String {
    crate::mask::name(m, BITS)
}

impl Runner<'_> {
    /// The socket's readiness now, as tcp_poll computes it.
    pub(crate) fn poll_mask(&self, fd: i64) -> u32 {
        let Some(sock) = self.socks.get(&fd) else {
            return 0;
        };
        if sock.tfo_deferred {
            // tcp_poll: a deferred Fast Open connect is writable, so that
            // the application's write() sends the SYN with data.
            return EPOLLOUT;
        }
        let conn = match sock.kind {
            SockKind::Stream => self.conn.as_ref(),
            SockKind::Listener => {
                // A listener is readable when accept() would not block.
                let ready = !self.conn_accepted && self.conn.is_some() && self.ever_synced;
                return if ready { EPOLLIN } else { 0 };
            }
            _ => return EPOLLOUT | EPOLLHUP,
        };
        let Some(c) = conn else {
            return EPOLLOUT | EPOLLHUP;
        };
        use tinygram_proto::State;
        let mut m = 0;
        if (c.error().is_some() && !sock.err_reported) || self.zc.queued() {
            m |= EPOLLERR;
        }
        let st = c.state();
        // RCV_SHUTDOWN: the peer's FIN came in (or shutdown(SHUT_RD)).
        let fin_in = matches!(
            st,
            State::CloseWait | State::LastAck | State::Closing | State::TimeWait
        ) || c.read_closed();
        let rd_shut = fin_in || sock.shut_rd;
        // SEND_SHUTDOWN: our side has shut down writing.
        let wr_shut = sock.shut_wr
            || matches!(
                st,
                State::FinWait1
                    | State::FinWait2
                    | State::Closing
                    | State::TimeWait
                    | State::LastAck
            );
        if c.recv_available() > 0 || rd_shut {
            m |= EPOLLIN;
        }
        if rd_shut {
            m |= EPOLLRDHUP;
        }
        if (rd_shut && wr_shut) || st == State::Closed {
            m |= EPOLLHUP;
        }
        if st == State::Closed && c.error().is_some() {
            // tcp_done (reset, timeout) shuts both ways: tcp_poll then
            // reports readable and writable as well.
            m |= EPOLLIN | EPOLLRDHUP | EPOLLOUT;
        }
        let synced = !matches!(
            c.state(),
            State::SynSent | State::SynReceived | State::Listen
        );
        if synced && !wr_shut && st != State::Closed {
            // sk_stream_is_writeable: free space at least half of what is queued.
            let snd_buf = self.conn_cfg.as_ref().map_or(0, |cfg| cfg.snd_buf);
            let queued = c.send_queued();
            if snd_buf.saturating_sub(queued) >= queued / 2
                && snd_buf > queued
                && self.notsent_writable()
            {
                m |= EPOLLOUT;
            }
        }
        m
    }

    /// Notes a wakeup on the watched socket (data arrived, space freed, state changed).
    pub(crate) fn epoll_wake(&mut self) {
        if self.epoll.watch.is_some() {
            self.epoll.woken = true;
        }
    }

    /// Handles the epoll_* calls; None for any other call.
    pub(crate) fn try_epoll(&mut self, idx: usize, spec: &SyscallSpec) -> Option<Res<Outcome>> {
        let name = spec.name.as_str();
        if !name.starts_with("epoll_") {
            return None;
        }
        let bad = |r: &Self, m: String| -> Box<Failure> {
            r.fail(idx, FailKind::Unsupported, format!("{name}: {m}"))
        };
        Some(match name {
            "epoll_create" | "epoll_create1" => {
                if self.epoll.epfd.is_some() {
                    return Some(Err(bad(
                        self,
                        "only one epoll instance is supported".into(),
                    )));
                }
                if spec.ret < 0 {
                    return Some(Err(bad(
                        self,
                        "expected to fail; the runner always creates it".into(),
                    )));
                }
                self.epoll = Epoll {
                    epfd: Some(spec.ret),
                    ..Epoll::default()
                };
                Ok(Outcome::Done(Ok(spec.ret)))
            }
            "epoll_ctl" => {
                let ints: Vec<Option<i64>> = spec
                    .args
                    .iter()
                    .map(|a| if let Expr::Int(n) = a { Some(*n) } else { None })
                    .collect();
                if ints.first().copied().flatten() != self.epoll.epfd {
                    return Some(Ok(Outcome::Done(Err("EBADF"))));
                }
                let op = match spec.args.get(1) {
                    Some(Expr::Ident(o)) => o.clone(),
                    _ => {
                        return Some(Err(bad(
                            self,
                            "expected EPOLL_CTL_ADD, _MOD or _DEL".into(),
                        )))
                    }
                };
                let Some(fd) = ints.get(2).copied().flatten() else {
                    return Some(Err(bad(
                        self,
                        "the third argument must be a file descriptor".into(),
                    )));
                };
                if !self.socks.contains_key(&fd) {
                    return Some(Ok(Outcome::Done(Err("EBADF"))));
                }
                let events = match spec.args.get(3).and_then(|e| e.field("events")) {
                    Some(e) => match event_bits(e) {
                        Ok(b) => b,
                        Err(m) => return Some(Err(bad(self, m))),
                    },
                    None if op == "EPOLL_CTL_DEL" => 0,
                    None => return Some(Err(bad(self, "expected {events=..., fd=N}".into()))),
                };
                match op.as_str() {
                    "EPOLL_CTL_ADD" | "EPOLL_CTL_MOD" => {
                        let other = self.epoll.watch.is_some_and(|(f, _)| f != fd);
                        if other {
                            return Some(Err(bad(
                                self,
                                "only one socket per epoll instance is supported".into(),
                            )));
                        }
                        if op == "EPOLL_CTL_ADD" && self.epoll.watch.is_some() {
                            return Some(Ok(Outcome::Done(Err("EEXIST"))));
                        }
                        if op == "EPOLL_CTL_MOD" && self.epoll.watch.is_none() {
                            return Some(Ok(Outcome::Done(Err("ENOENT"))));
                        }
                        if op == "EPOLL_CTL_MOD" && events & EPOLLEXCLUSIVE != 0 {
                            // ep_modify: EPOLLEXCLUSIVE is for EPOLL_CTL_ADD only.
                            return Some(Ok(Outcome::Done(Err("EINVAL"))));
                        }
                        self.epoll.watch = Some((fd, events & !MODES));
                        self.epoll.edge = events & EPOLLET != 0;
                        self.epoll.oneshot = events & EPOLLONESHOT != 0;
                        self.epoll.disarmed = false;
                        // ep_insert/ep_modify poll the file once: a ready one is queued.
                        self.epoll.woken = true;
                    }
                    "EPOLL_CTL_DEL" => {
                        if self.epoll.watch.take().is_none() {
                            return Some(Ok(Outcome::Done(Err("ENOENT"))));
                        }
                    }
                    other => return Some(Err(bad(self, format!("unknown operation {other}")))),
                }
                Ok(Outcome::Done(Ok(0)))
            }
            "epoll_wait" => {
                if spec
                    .args
                    .first()
                    .and_then(|a| if let Expr::Int(n) = a { Some(*n) } else { None })
                    != self.epoll.epfd
                {
                    return Some(Ok(Outcome::Done(Err("EBADF"))));
                }
                let timeout = match spec.args.get(3) {
                    Some(Expr::Int(t)) => *t,
                    _ => return Some(Err(bad(self, "the timeout must be a number of ms".into()))),
                };
                let Some((fd, want)) = self.epoll.watch else {
                    return Some(if timeout == 0 {
                        Ok(Outcome::Done(Ok(0)))
                    } else {
                        Ok(Outcome::Block)
                    });
                };
                let mask = self.poll_mask(fd) & (want | EPOLLERR | EPOLLHUP);
                let report =
                    mask != 0 && (!self.epoll.edge || self.epoll.woken) && !self.epoll.disarmed;
                if !report {
                    if self.epoll.edge {
                        self.epoll.woken = false;
                    }
                    return Some(if timeout == 0 {
                        Ok(Outcome::Done(Ok(0)))
                    } else {
                        Ok(Outcome::Block)
                    });
                }
                self.epoll.woken = false;
                self.epoll.disarmed = self.epoll.oneshot;
                if let Some(want_ev) = spec.args.get(1).and_then(|e| e.field("events")) {
                    let expected = match event_bits(want_ev) {
                        Ok(b) => b,
                        Err(m) => return Some(Err(bad(self, m))),
                    };
                    if expected != mask && spec.ret == 1 {
                        let mut f = self.fail(
                            idx,
                            FailKind::Syscall,
                            format!(
                                "epoll_wait: events {}, the script expects {}",
                                mask_name(mask),
                                mask_name(expected)
                            ),
                        );
                        f.expected = Some(mask_name(expected));
                        f.actual = Some(mask_name(mask));
                        return Some(Err(f));
                    }
                }
                Ok(Outcome::Done(Ok(1)))
            }
            other => Err(bad(self, format!("system call {other}() is not supported"))),
        })
    }
}
