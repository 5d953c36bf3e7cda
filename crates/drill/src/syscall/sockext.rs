//! Socket options beyond the core table: TCP_INQ, whose TCP_CM_INQ control
//! message tells recvmsg() how much is left to read (tcp(7)), and
//! SO_TIMESTAMPING's transmit timestamps, queued on the error queue as
//! Linux's Documentation/networking/timestamping.rst describes.

use super::{int_of, iov_len, symbols, Outcome, Sock, SockKind};
use crate::ast::{Expr, SyscallSpec};
use crate::report::FailKind;
use crate::runner::{Res, Runner};
use std::collections::{BTreeSet, VecDeque};
use tinygram_proto::SeqNumber;

/// SOF_TIMESTAMPING_* bits (include/uapi/linux/net_tstamp.h).
const SOF_FLAGS: [(&str, u32); 17] = [
    ("SOF_TIMESTAMPING_TX_HARDWARE", 1 << 0),
    ("SOF_TIMESTAMPING_TX_SOFTWARE", 1 << 1),
    ("SOF_TIMESTAMPING_RX_HARDWARE", 1 << 2),
    ("SOF_TIMESTAMPING_RX_SOFTWARE", 1 << 3),
    ("SOF_TIMESTAMPING_SOFTWARE", 1 << 4),
    ("SOF_TIMESTAMPING_SYS_HARDWARE", 1 << 5),
    ("SOF_TIMESTAMPING_RAW_HARDWARE", 1 << 6),
    ("SOF_TIMESTAMPING_OPT_ID", 1 << 7),
    ("SOF_TIMESTAMPING_TX_SCHED", 1 << 8),
    ("SOF_TIMESTAMPING_TX_ACK", 1 << 9),
    ("SOF_TIMESTAMPING_OPT_CMSG", 1 << 10),
    ("SOF_TIMESTAMPING_OPT_TSONLY", 1 << 11),
    ("SOF_TIMESTAMPING_OPT_STATS", 1 << 12),
    ("SOF_TIMESTAMPING_OPT_PKTINFO", 1 << 13),
    ("SOF_TIMESTAMPING_OPT_TX_SWHW", 1 << 14),
    ("SOF_TIMESTAMPING_BIND_PHC", 1 << 15),
    ("SOF_TIMESTAMPING_OPT_ID_TCP", 1 << 16),
];
const TX_SOFTWARE: u32 = 1 << 1;
const SOFTWARE: u32 = 1 << 4;
const OPT_ID: u32 = 1 << 7;
const TX_SCHED: u32 = 1 << 8;
const TX_ACK: u32 = 1 << 9;
const OPT_TSONLY: u32 = 1 << 11;
const OPT_ID_TCP: u32 = 1 << 16;
/// Flags this runner models; the others (hardware stamps, receive stamps,
/// OPT_STATS, ...) are refused rather than ignored.
const MODELLED: u32 = TX_SOFTWARE | SOFTWARE | OPT_ID | TX_SCHED | TX_ACK | OPT_TSONLY | OPT_ID_TCP;

/// ee_info values (include/uapi/linux/errqueue.h).
const SCM_TSTAMP_SND: i64 = 0;
const SCM_TSTAMP_SCHED: i64 = 1;
const SCM_TSTAMP_ACK: i64 = 2;
/// SO_EE_ORIGIN_TIMESTAMPING.
const SO_EE_ORIGIN_TIMESTAMPING: i64 = 4;
/// ENOMSG, the ee_errno of a timestamp.
const ENOMSG: i64 = 42;

/// One timestamp waiting on the error queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Stamp {
    /// SCM_TSTAMP_SND, _SCHED or _ACK (ee_info).
    pub kind: i64,
    /// The key (ee_data): the byte's sequence number less sk_tskey.
    pub key: u32,
    /// When, in ns since the script started; None when SOF_TIMESTAMPING_SOFTWARE
    /// is off (the software stamp is not reported, it reads zero).
    pub at: Option<i64>,
}

/// A sendmsg() whose last byte is stamped (tcp_tx_timestamp).
#[derive(Clone, Copy, Debug)]
struct Tracked {
    /// Sequence number of the last byte of that sendmsg (shinfo->tskey).
    last: SeqNumber,
    /// The SCHED and SND stamps were taken (at its first transmission).
    sent: bool,
}

/// The live connection's TCP_INQ and SO_TIMESTAMPING state.
#[derive(Clone, Debug, Default)]
pub(crate) struct SockExt {
    /// Sockets with TCP_INQ on.
    inq: BTreeSet<i64>,
    /// SO_TIMESTAMPING flags of the connection's socket.
    ts_flags: u32,
    /// sk_tskey: subtracted from a stamped byte's sequence number (OPT_ID).
    ts_base: Option<SeqNumber>,
    /// Stamped sends not yet acknowledged, oldest first.
    tracked: Vec<Tracked>,
    /// The error queue, oldest first.
    queue: VecDeque<Stamp>,
    /// TCP_NOTSENT_LOWAT as the socket set it (0 or unset: the sysctl).
    pub(crate) notsent_lowat: Option<u32>,
    /// Where the last skb of the send queue starts (notsent.rs).
    pub(crate) skb_start: SeqNumber,
    /// A write waited for send-buffer space (SOCK_NOSPACE).
    nospace: bool,
}

impl SockExt {
    /// A send of `n` bytes ended at sequence number `end` (exclusive): with
    /// transmit timestamps on, its last byte is stamped (Linux's
    /// tcp_tx_timestamp runs once per sendmsg, on the tail skb).
    pub(crate) fn sent(&mut self, end: SeqNumber, n: usize) {
        if n == 0 || self.ts_flags & (TX_SCHED | TX_SOFTWARE | TX_ACK) == 0 {
            return;
        }
        self.tracked.push(Tracked {
            last: end - 1,
            sent: false,
        });
    }

    /// After the engine ran at `now`: segments `sent` (first sequence number,
    /// payload length, whether a retransmission) stamp the tracked bytes they
    /// carry with SCHED and SND, and what `snd_una` covers gets its ACK
    /// stamp (__skb_tstamp_tx; tcp_ack_tstamp in tcp_clean_rtx_queue).
    pub(crate) fn observe(
        &mut self,
        now: i64,
        snd_una: SeqNumber,
        sent: impl Iterator<Item = (SeqNumber, usize)>,
    ) {
        if self.tracked.is_empty() {
            return;
        }
        let at = (self.ts_flags & SOFTWARE != 0).then_some(now);
        for (seq, len) in sent {
            if len == 0 {
                continue;
            }
            let end = seq + len;
            for i in 0..self.tracked.len() {
                let t = self.tracked[i];
                if !t.sent && t.last >= seq && t.last < end {
                    self.tracked[i].sent = true;
                    let key = self.key(t.last);
                    if self.ts_flags & TX_SCHED != 0 {
                        self.queue.push_back(Stamp {
                            kind: SCM_TSTAMP_SCHED,
                            key,
                            at,
                        });
                    }
                    if self.ts_flags & TX_SOFTWARE != 0 {
                        self.queue.push_back(Stamp {
                            kind: SCM_TSTAMP_SND,
                            key,
                            at,
                        });
                    }
                }
            }
        }
        while let Some(t) = self.tracked.first().copied() {
            if t.last >= snd_una {
                break;
            }
            self.tracked.remove(0);
            if self.ts_flags & TX_ACK != 0 {
                let key = self.key(t.last);
                self.queue.push_back(Stamp {
                    kind: SCM_TSTAMP_ACK,
                    key,
                    at,
                });
            }
        }
    }

    /// ee_data of the stamp for byte `last`.
    fn key(&self, last: SeqNumber) -> u32 {
        match self.ts_base {
            Some(b) => last.distance_from(b) as u32,
            None => last.0,
        }
    }

    /// Whether a timestamp waits on the error queue.
    pub(crate) fn queued(&self) -> bool {
        !self.queue.is_empty()
    }
}

/// Parses SO_TIMESTAMPING's value: `[A | B]` of SOF_TIMESTAMPING_* names or a number.
fn sof_flags(e: &Expr) -> Result<u32, String> {
    if let Some(v) = int_of(e) {
        return u32::try_from(v).map_err(|_| format!("{v} is out of range"));
    }
    let inner = match e {
        Expr::List(l) if l.len() == 1 => &l[0],
        other => other,
    };
    let names = symbols(inner).ok_or("expected [SOF_TIMESTAMPING_... | ...]")?;
    let mut v = 0;
    for n in names {
        let Some((_, bit)) = SOF_FLAGS.iter().find(|(k, _)| *k == n) else {
            return Err(format!("unknown flag {n}"));
        };
        v |= bit;
    }
    Ok(v)
}

/// An integer field or one of the error-queue symbols.
fn value(e: &Expr) -> Option<i64> {
    match e {
        Expr::Int(v) => Some(*v),
        Expr::List(l) if l.len() == 1 => value(&l[0]),
        Expr::Ident(s) => match s.as_str() {
            "ENOMSG" => Some(ENOMSG),
            "SO_EE_ORIGIN_TIMESTAMPING" => Some(SO_EE_ORIGIN_TIMESTAMPING),
            "SCM_TSTAMP_SND" => Some(SCM_TSTAMP_SND),
            "SCM_TSTAMP_SCHED" => Some(SCM_TSTAMP_SCHED),
            "SCM_TSTAMP_ACK" => Some(SCM_TSTAMP_ACK),
            _ => None,
        },
        _ => None,
    }
}

/// The `msg_control=[...]` list of a msghdr, if the script wrote one.
fn control(msghdr: &Expr) -> Option<&Vec<Expr>> {
    match msghdr.field("msg_control") {
        Some(Expr::List(l)) => Some(l),
        _ => None,
    }
}

/// Compares `msg_flags=` with the flags recvmsg returns; Err says how they differ.
fn check_msg_flags(msghdr: &Expr, actual: &[&str]) -> Result<(), String> {
    let Some(e) = msghdr.field("msg_flags") else {
        return Ok(());
    };
    let want: BTreeSet<String> = symbols(e)
        .ok_or_else(|| format!("msg_flags: cannot read {e:?}"))?
        .into_iter()
        .collect();
    let got: BTreeSet<String> = actual.iter().map(|s| s.to_string()).collect();
    if want != got {
        let show = |s: &BTreeSet<String>| {
            if s.is_empty() {
                "0".to_string()
            } else {
                s.iter().cloned().collect::<Vec<_>>().join("|")
            }
        };
        return Err(format!(
            "msg_flags: the script expects {}, recvmsg returns {}",
            show(&want),
            show(&got)
        ));
    }
    Ok(())
}

/// Compares one timestamp with the script's two control messages (the
/// SCM_TIMESTAMPING time, then the sock_extended_err); `tol` in ns.
fn check_stamp(msghdr: &Expr, s: Stamp, tol: i64) -> Result<(), String> {
    let Some(cmsgs) = control(msghdr) else {
        return Ok(());
    };
    for c in cmsgs {
        let Some(data) = c.field("cmsg_data") else {
            return Err("msg_control: each entry needs a cmsg_data".into());
        };
        if data.field("scm_sec").is_some() || data.field("scm_nsec").is_some() {
            let sec = data.field("scm_sec").and_then(value).unwrap_or(0);
            let nsec = data.field("scm_nsec").and_then(value).unwrap_or(0);
            let want = sec * 1_000_000_000 + nsec;
            let got = s.at.unwrap_or(0);
            if s.at.is_none() && want != 0 || (want - got).abs() > tol {
                return Err(format!(
                    "SCM_TIMESTAMPING: the script expects {} s, the stamp is {} s",
                    crate::report::secs(want),
                    crate::report::secs(got)
                ));
            }
        } else if data.field("ee_errno").is_some() || data.field("ee_info").is_some() {
            let want = [
                ("ee_errno", ENOMSG),
                ("ee_origin", SO_EE_ORIGIN_TIMESTAMPING),
                ("ee_type", 0),
                ("ee_code", 0),
                ("ee_info", s.kind),
                ("ee_data", i64::from(s.key)),
            ];
            for (name, actual) in want {
                let Some(e) = data.field(name) else { continue };
                match value(e) {
                    Some(v) if v == actual => {}
                    Some(v) => {
                        return Err(format!(
                            "{name}: the script expects {v}, the timestamp has {actual}"
                        ))
                    }
                    None => return Err(format!("{name}: cannot read {e:?}")),
                }
            }
        } else {
            return Err(format!(
                "msg_control: unsupported cmsg_data {data:?} (SCM_TIMESTAMPING and IP_RECVERR are)"
            ));
        }
    }
    Ok(())
}

/// Names a stamp kind.
fn kind_name(k: i64) -> &'static str {
    match k {
        SCM_TSTAMP_SND => "SCM_TSTAMP_SND",
        SCM_TSTAMP_SCHED => "SCM_TSTAMP_SCHED",
        _ => "SCM_TSTAMP_ACK",
    }
}

impl Runner<'_> {
    /// setsockopt() of TCP_INQ or SO_TIMESTAMPING; None for other options.
    pub(super) fn setsockopt_ext(
        &mut self,
        idx: usize,
        fd: i64,
        sock: &Sock,
        name: &str,
        val: &Expr,
    ) -> Res<Option<Outcome>> {
        match name {
            "TCP_INQ" => {
                let on = int_of(val).ok_or_else(|| {
                    self.unsupported(idx, "setsockopt TCP_INQ: expected a number like [1]")
                })? != 0;
                if on {
                    self.ext.inq.insert(fd);
                } else {
                    self.ext.inq.remove(&fd);
                }
                Ok(Some(Outcome::Done(Ok(0))))
            }
            "SO_TIMESTAMPING" => {
                let v = sof_flags(val).map_err(|m| {
                    self.unsupported(idx, format!("setsockopt SO_TIMESTAMPING: {m}"))
                })?;
                if v & !MODELLED != 0 {
                    return Err(self.unsupported(
                        idx,
                        format!(
                            "setsockopt SO_TIMESTAMPING {:#x}: only software transmit stamps \
                             (TX_SCHED, TX_SOFTWARE, TX_ACK, SOFTWARE, OPT_ID, OPT_ID_TCP, \
                             OPT_TSONLY) are modelled",
                            v
                        ),
                    ));
                }
                if sock.kind != SockKind::Stream || self.conn.is_none() {
                    return Err(self.unsupported(
                        idx,
                        "setsockopt SO_TIMESTAMPING: supported on a connected socket only",
                    ));
                }
                // sock_set_timestamping: OPT_ID on TCP keys from snd_una, or
                // from write_seq under OPT_ID_TCP; set once.
                if v & OPT_ID != 0 && self.ext.ts_flags & OPT_ID == 0 {
                    if let Some(c) = self.conn.as_ref() {
                        self.ext.ts_base = Some(if v & OPT_ID_TCP != 0 {
                            c.snd_una() + c.send_queued()
                        } else {
                            c.snd_una()
                        });
                    }
                } else if v & OPT_ID == 0 {
                    self.ext.ts_base = None;
                }
                self.ext.ts_flags = v;
                Ok(Some(Outcome::Done(Ok(0))))
            }
            "TCP_NOTSENT_LOWAT" => {
                let v = int_of(val).ok_or_else(|| {
                    self.unsupported(
                        idx,
                        "setsockopt TCP_NOTSENT_LOWAT: expected bytes like [4000]",
                    )
                })?;
                // do_tcp_setsockopt stores the u32 as given.
                let Ok(v) = u32::try_from(v) else {
                    return Ok(Some(Outcome::Done(Err("EINVAL"))));
                };
                self.ext.notsent_lowat = Some(v);
                Ok(Some(Outcome::Done(Ok(0))))
            }
            "TCP_USER_TIMEOUT" => {
                let ms = int_of(val).ok_or_else(|| {
                    self.unsupported(
                        idx,
                        "setsockopt TCP_USER_TIMEOUT: expected milliseconds like [3000]",
                    )
                })?;
                // do_tcp_setsockopt: a negative value is EINVAL.
                let Ok(ms) = u64::try_from(ms) else {
                    return Ok(Some(Outcome::Done(Err("EINVAL"))));
                };
                let live = sock.kind == SockKind::Stream && self.conn.is_some();
                if !live {
                    return Err(self.unsupported(
                        idx,
                        "setsockopt TCP_USER_TIMEOUT: supported on a connected or accepted socket only",
                    ));
                }
                if let Some(c) = self.conn.as_mut() {
                    c.set_user_timeout(Some(tinygram_proto::Duration::from_millis(ms)));
                }
                Ok(Some(Outcome::Done(Ok(0))))
            }
            _ => Ok(None),
        }
    }

    /// getsockopt() of TCP_INQ or SO_TIMESTAMPING; None for other options.
    pub(super) fn getsockopt_ext(&self, fd: i64, name: &str) -> Option<i64> {
        match name {
            "TCP_INQ" => Some(i64::from(self.ext.inq.contains(&fd))),
            "TCP_NOTSENT_LOWAT" => Some(i64::from(self.ext.notsent_lowat.unwrap_or(0))),
            "SO_TIMESTAMPING" => Some(i64::from(self.ext.ts_flags)),
            "TCP_USER_TIMEOUT" => Some(
                self.conn
                    .as_ref()
                    .and_then(|c| c.user_timeout())
                    .map_or(0, |d| d.as_millis() as i64),
            ),
            _ => None,
        }
    }

    /// A write found the send buffer full (SOCK_NOSPACE): the buffer-limited
    /// chronograph runs until an ACK makes the socket writable again.
    pub(super) fn note_sndbuf_limited(&mut self) {
        let now = crate::runner::instant(self.now);
        if let Some(c) = self.conn.as_mut() {
            c.note_sndbuf_limited(now, true);
            self.ext.nospace = true;
        }
    }

    /// tcp_check_space: once the socket is writable again, SOCK_NOSPACE is
    /// cleared and the buffer-limited chronograph stops.
    pub(crate) fn check_space(&mut self, writable: bool) {
        if !self.ext.nospace || !writable {
            return;
        }
        self.ext.nospace = false;
        let now = crate::runner::instant(self.now);
        if let Some(c) = self.conn.as_mut() {
            c.note_sndbuf_limited(now, false);
        }
    }

    /// tcp_check_space, which Linux runs after the ACK's transmissions
    /// (tcp_data_snd_check): data just sent no longer counts as unsent, so a
    /// socket under TCP_NOTSENT_LOWAT may have become writable; wake an edge
    /// waiter then, and stop the buffer-limited chronograph.
    pub(crate) fn after_transmit_space(&mut self, out_before: u32) {
        let writable = self
            .socks
            .iter()
            .find(|(_, s)| s.kind == SockKind::Stream)
            .is_some_and(|(fd, _)| self.poll_mask(*fd) & 0x4 != 0);
        self.check_space(writable);
        if let Some((fd, _)) = self.epoll.watch {
            if out_before & 0x4 == 0 && self.poll_mask(fd) & 0x4 != 0 {
                self.epoll_wake();
            }
        }
    }

    /// A send of `n` bytes completed: note its last byte for timestamps.
    pub(crate) fn sent_ext(&mut self, n: usize) {
        if let Some(c) = self.conn.as_ref() {
            let end = c.snd_una() + c.send_queued();
            self.ext.sent(end, n);
        }
    }

    /// recvmsg(): a read whose TCP_CM_INQ message (under TCP_INQ) is checked,
    /// or, with MSG_ERRQUEUE, the oldest transmit timestamp. None: a
    /// zerocopy notification is to be read instead.
    pub(super) fn recvmsg_ext(
        &mut self,
        idx: usize,
        fd: i64,
        sock: &Sock,
        spec: &SyscallSpec,
    ) -> Res<Option<Outcome>> {
        let flags = spec
            .args
            .get(2)
            .and_then(symbols)
            .ok_or_else(|| self.unsupported(idx, "recvmsg flags must be 0 or MSG_* names"))?;
        let msghdr = spec.args.get(1).cloned().unwrap_or(Expr::Ellipsis);
        let iov = msghdr.field("msg_iov").and_then(iov_len);
        if flags.iter().any(|f| f == "MSG_ERRQUEUE") {
            if !self.ext.queued() {
                return Ok(None);
            }
            let Some(s) = self.ext.queue.pop_front() else {
                return Ok(None);
            };
            let tol = self.settings.tolerance_usecs.saturating_mul(1000);
            // Without OPT_TSONLY the queued skb carries the packet: a
            // zero-length iovec truncates it.
            let trunc = self.ext.ts_flags & OPT_TSONLY == 0;
            let mut actual = vec!["MSG_ERRQUEUE"];
            if trunc {
                actual.push("MSG_TRUNC");
            }
            let res = check_msg_flags(&msghdr, &actual).and_then(|()| check_stamp(&msghdr, s, tol));
            if let Err(m) = res {
                let mut f = self.fail(
                    idx,
                    FailKind::Syscall,
                    format!("recvmsg MSG_ERRQUEUE: timestamp: {m}"),
                );
                f.actual = Some(format!(
                    "{} ee_data={} at {} s",
                    kind_name(s.kind),
                    s.key,
                    crate::report::secs(s.at.unwrap_or(0))
                ));
                return Err(f);
            }
            return Ok(Some(Outcome::Done(Ok(0))));
        }
        let mut dontwait = false;
        for f in &flags {
            match f.as_str() {
                "MSG_DONTWAIT" => dontwait = true,
                other => {
                    return Err(self.unsupported(
                        idx,
                        format!(
                        "recvmsg flag {other} is not supported (MSG_DONTWAIT, MSG_ERRQUEUE are)"
                    ),
                    ))
                }
            }
        }
        let n = iov.and_then(|n| usize::try_from(n).ok()).ok_or_else(|| {
            self.unsupported(idx, "recvmsg: expected {..., msg_iov(n)=[{..., len}], ...}")
        })?;
        let out = self.read(fd, sock, n, dontwait);
        let Outcome::Done(Ok(_)) = out else {
            return Ok(Some(out));
        };
        let inq_on = self.ext.inq.contains(&fd);
        let want_inq = control(&msghdr).and_then(|l| {
            l.iter().find_map(|c| {
                let is_inq =
                    matches!(c.field("cmsg_type"), Some(Expr::Ident(t)) if t == "TCP_CM_INQ");
                is_inq.then(|| c.field("cmsg_data").and_then(value))
            })
        });
        let res = match (want_inq, inq_on) {
            (None, false) => Ok(()),
            (None, true) => {
                Err("the script expects no TCP_CM_INQ message, but TCP_INQ is on".to_string())
            }
            (Some(_), false) => {
                Err("the script expects a TCP_CM_INQ message, but TCP_INQ is off".to_string())
            }
            (Some(None), true) => Err("TCP_CM_INQ: cmsg_data must be a number".to_string()),
            (Some(Some(want)), true) => {
                let got = self.inq_hint();
                if want == got {
                    Ok(())
                } else {
                    Err(format!(
                        "TCP_CM_INQ: the script expects {want}, the socket has {got}"
                    ))
                }
            }
        };
        let res = res.and_then(|()| check_msg_flags(&msghdr, &[]));
        if let Err(m) = res {
            return Err(self.fail(idx, FailKind::Syscall, format!("recvmsg: {m}")));
        }
        Ok(Some(out))
    }

    /// Linux's tcp_inq_hint: bytes left to read, counting the peer's FIN as
    /// one so that a reader keeps reading until it sees the end.
    fn inq_hint(&self) -> i64 {
        self.conn.as_ref().map_or(0, |c| {
            let fin = c.fin_received();
            c.recv_available() as i64 + i64::from(fin)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_follow_transmission_and_acknowledgement() {
        let mut x = SockExt {
            ts_flags: TX_SCHED | TX_SOFTWARE | TX_ACK | SOFTWARE | OPT_ID,
            ts_base: Some(SeqNumber(101)),
            ..Default::default()
        };
        x.sent(SeqNumber(101 + 2000), 2000);
        x.observe(5, SeqNumber(101), [(SeqNumber(101), 1000)].into_iter());
        assert!(!x.queued(), "the last byte has not left yet");
        x.observe(7, SeqNumber(101), [(SeqNumber(1101), 1000)].into_iter());
        let s: Vec<_> = x.queue.drain(..).collect();
        assert_eq!(
            s,
            [
                Stamp {
                    kind: SCM_TSTAMP_SCHED,
                    key: 1999,
                    at: Some(7)
                },
                Stamp {
                    kind: SCM_TSTAMP_SND,
                    key: 1999,
                    at: Some(7)
                },
            ]
        );
        x.observe(9, SeqNumber(2100), std::iter::empty());
        assert!(!x.queued(), "byte 2100 is not acknowledged yet");
        x.observe(11, SeqNumber(2101), std::iter::empty());
        assert_eq!(
            x.queue.pop_front(),
            Some(Stamp {
                kind: SCM_TSTAMP_ACK,
                key: 1999,
                at: Some(11)
            })
        );
    }

    #[test]
    fn flags_parse_by_name_and_unknown_ones_are_named() {
        let e = Expr::List(vec![Expr::Or(vec![
            Expr::Ident("SOF_TIMESTAMPING_TX_ACK".into()),
            Expr::Ident("SOF_TIMESTAMPING_OPT_ID".into()),
        ])]);
        assert_eq!(sof_flags(&e), Ok(TX_ACK | OPT_ID));
        let bad = Expr::Ident("SOF_TIMESTAMPING_NOPE".into());
        assert!(sof_flags(&bad)
            .unwrap_err()
            .contains("SOF_TIMESTAMPING_NOPE"));
    }
}
