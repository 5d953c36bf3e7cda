//! poll(2) over the script's sockets: `poll([{fd=N, events=..., revents=...}],
//! n, timeout)`. Readiness is the socket's tcp_poll mask (as for epoll); the
//! call blocks until a socket is ready or its timeout (ms) runs out, and
//! checks the `revents` the script expects for each entry.

use crate::ast::{Expr, SyscallSpec};
use crate::report::{FailKind, Failure};
use crate::runner::{Res, Runner};
use crate::syscall::Outcome;

/// poll.h bits the runner reports (the same values as EPOLL*).
const BITS: &[(&str, u32)] = &[
    ("POLLIN", 0x001),
    ("POLLPRI", 0x002),
    ("POLLOUT", 0x004),
    ("POLLERR", 0x008),
    ("POLLHUP", 0x010),
    ("POLLNVAL", 0x020),
    ("POLLRDNORM", 0x040),
    ("POLLWRNORM", 0x100),
    ("POLLRDHUP", 0x2000),
];
const POLLIN: u32 = 0x001;
const POLLOUT: u32 = 0x004;
const POLLERR: u32 = 0x008;
const POLLHUP: u32 = 0x010;
const POLLRDNORM: u32 = 0x040;
const POLLWRNORM: u32 = 0x100;

/// The bits of `POLLIN|POLLOUT` or a number.
fn bits(e: &Expr) -> Result<u32, String> {
    crate::mask::parse(e, BITS, "POLL")
}

/// `POLLIN|POLLOUT` for a mask, for messages.
fn name(m: u32) -> String {
    crate::mask::name(m, BITS)
}

impl Runner<'_> {
    /// Handles poll(); None for any other call. `first` is false when a
    /// blocked poll is retried.
    pub(crate) fn try_poll(
        &mut self,
        idx: usize,
        spec: &SyscallSpec,
        first: bool,
    ) -> Option<Res<Outcome>> {
        if spec.name != "poll" {
            return None;
        }
        Some(self.poll(idx, spec, first))
    }

    fn poll(&mut self, idx: usize, spec: &SyscallSpec, first: bool) -> Res<Outcome> {
        let bad = |r: &Self, m: String| -> Box<Failure> {
            r.fail(idx, FailKind::Unsupported, format!("poll: {m}"))
        };
        let entries = match spec.args.first() {
            Some(Expr::List(l)) => l.clone(),
            _ => {
                return Err(bad(
                    self,
                    "expected [{fd=N, events=..., revents=...}]".into(),
                ))
            }
        };
        let timeout = match spec.args.get(2) {
            Some(Expr::Int(t)) => *t,
            _ => return Err(bad(self, "the timeout must be a number of ms".into())),
        };
        if first {
            self.poll_started = self.now;
        }
        // (fd, mask now, revents the script expects)
        let mut got = Vec::new();
        for e in &entries {
            let fd = match e.field("fd") {
                Some(Expr::Int(fd)) => *fd,
                _ => return Err(bad(self, "each entry needs fd=N".into())),
            };
            let events = e
                .field("events")
                .map(bits)
                .transpose()
                .map_err(|m| bad(self, m))?
                .unwrap_or(0);
            let want = e
                .field("revents")
                .map(bits)
                .transpose()
                .map_err(|m| bad(self, m))?;
            let mask = if self.socks.contains_key(&fd) {
                let m = self.poll_mask(fd);
                // tcp_poll sets the *NORM bits with POLLIN and POLLOUT.
                let norm = if m & POLLIN != 0 { POLLRDNORM } else { 0 }
                    | if m & POLLOUT != 0 { POLLWRNORM } else { 0 };
                (m | norm) & (events | POLLERR | POLLHUP)
            } else {
                0x020 // POLLNVAL
            };
            got.push((fd, mask, want));
        }
        let ready = got.iter().filter(|(_, m, _)| *m != 0).count();
        let expired = timeout >= 0 && self.now >= self.poll_started + timeout * 1_000_000;
        if ready == 0 && timeout != 0 && !expired {
            return Ok(Outcome::Block);
        }
        for (fd, mask, want) in got {
            if let Some(w) = want.filter(|w| *w != mask) {
                let mut f = self.fail(
                    idx,
                    FailKind::Syscall,
                    format!(
                        "poll: fd {fd} revents {}, the script expects {}",
                        name(mask),
                        name(w)
                    ),
                );
                f.expected = Some(name(w));
                f.actual = Some(name(mask));
                return Err(f);
            }
        }
        Ok(Outcome::Done(Ok(ready as i64)))
    }
}
