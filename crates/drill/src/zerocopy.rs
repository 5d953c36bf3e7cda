//! MSG_ZEROCOPY (Linux's Documentation/networking/msg_zerocopy.rst): each
//! zerocopy send on a socket with SO_ZEROCOPY gets the next 32-bit ID; once
//! the peer has acknowledged all of its data, a notification for it waits on
//! the socket's error queue, and notifications for consecutive IDs merge into
//! one range [ee_info, ee_data], read with recvmsg(MSG_ERRQUEUE). The runner
//! copies every send into the engine, so a notification says
//! SO_EE_CODE_ZEROCOPY_COPIED, as Linux does when it had to copy.

use crate::ast::Expr;
use tinygram_proto::SeqNumber;

/// One socket's zerocopy sends and notifications.
#[derive(Clone, Debug, Default)]
pub(crate) struct ZeroCopy {
    /// The next send's ID.
    next_id: u32,
    /// Sends not yet acknowledged: (ID, sequence number just past their data).
    outstanding: Vec<(u32, SeqNumber)>,
    /// Completed ranges not yet read, oldest first.
    ready: Vec<(u32, u32)>,
}

/// The fields of one `sock_extended_err` notification.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Notification {
    /// First ID (ee_info).
    pub lo: u32,
    /// Last ID (ee_data).
    pub hi: u32,
}

/// SO_EE_ORIGIN_ZEROCOPY (include/uapi/linux/errqueue.h).
pub(crate) const SO_EE_ORIGIN_ZEROCOPY: i64 = 5;
/// SO_EE_CODE_ZEROCOPY_COPIED.
pub(crate) const SO_EE_CODE_ZEROCOPY_COPIED: i64 = 1;

impl ZeroCopy {
    /// Records a zerocopy send whose data ends just before `end`.
    pub(crate) fn sent(&mut self, end: SeqNumber) {
        self.outstanding.push((self.next_id, end));
        self.next_id = self.next_id.wrapping_add(1);
    }

    /// Moves sends acknowledged up to `snd_una` to the error queue.
    pub(crate) fn acked(&mut self, snd_una: SeqNumber) {
        while let Some(&(id, end)) = self.outstanding.first() {
            if end > snd_una {
                break;
            }
            self.outstanding.remove(0);
            match self.ready.last_mut() {
                // skb_zerocopy_notify_extend: a completion right after the
                // queued range joins it.
                Some((_, hi)) if hi.wrapping_add(1) == id => *hi = id,
                _ => self.ready.push((id, id)),
            }
        }
    }

    /// Sends not yet acknowledged.
    pub(crate) fn outstanding(&self) -> usize {
        self.outstanding.len()
    }

    /// Whether a notification waits on the error queue (tcp_poll's EPOLLERR).
    pub(crate) fn queued(&self) -> bool {
        !self.ready.is_empty()
    }

    /// The oldest notification, taken off the queue.
    pub(crate) fn take(&mut self) -> Option<Notification> {
        if self.ready.is_empty() {
            return None;
        }
        let (lo, hi) = self.ready.remove(0);
        Some(Notification { lo, hi })
    }
}

/// A number or one of the errqueue symbols.
fn value(e: &Expr) -> Option<i64> {
    match e {
        Expr::Int(v) => Some(*v),
        Expr::Ident(s) => match s.as_str() {
            "SO_EE_ORIGIN_ZEROCOPY" => Some(SO_EE_ORIGIN_ZEROCOPY),
            "SO_EE_CODE_ZEROCOPY_COPIED" => Some(SO_EE_CODE_ZEROCOPY_COPIED),
            _ => None,
        },
        _ => None,
    }
}

/// Compares a notification with the `cmsg_data={...}` the script's msghdr
/// shows; Err names the first field that differs (or cannot be read).
pub(crate) fn check(msghdr: &Expr, n: Notification) -> Result<(), String> {
    let Some(Expr::List(cmsgs)) = msghdr.field("msg_control") else {
        // No msg_control written: nothing to compare.
        return Ok(());
    };
    let Some(data) = cmsgs.first().and_then(|c| c.field("cmsg_data")) else {
        return Err("msg_control: expected [{..., cmsg_data={ee_errno=...}}]".into());
    };
    let want = [
        ("ee_errno", 0),
        ("ee_origin", SO_EE_ORIGIN_ZEROCOPY),
        ("ee_type", 0),
        ("ee_code", SO_EE_CODE_ZEROCOPY_COPIED),
        ("ee_info", i64::from(n.lo)),
        ("ee_data", i64::from(n.hi)),
    ];
    for (name, actual) in want {
        let Some(e) = data.field(name) else { continue };
        match value(e) {
            Some(v) if v == actual => {}
            Some(v) => {
                return Err(format!(
                    "{name}: the script expects {v}, the notification has {actual}"
                ))
            }
            None => return Err(format!("{name}: cannot read {e:?}")),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn consecutive_completions_merge_into_one_range() {
        let mut z = ZeroCopy::default();
        z.sent(SeqNumber(100));
        z.sent(SeqNumber(200));
        z.sent(SeqNumber(300));
        z.acked(SeqNumber(150));
        assert_eq!(z.outstanding.len(), 2);
        z.acked(SeqNumber(300));
        assert_eq!(z.take(), Some(Notification { lo: 0, hi: 2 }));
        assert_eq!(z.take(), None);
        z.sent(SeqNumber(400));
        z.acked(SeqNumber(400));
        assert_eq!(z.take(), Some(Notification { lo: 3, hi: 3 }));
    }

    #[test]
    fn checks_the_scripts_fields() {
        let s = crate::parse::parse_script(
            "0 recvmsg(4, {msg_iov(1)=[{...,0}], msg_control=[{cmsg_level=SOL_IP, \
             cmsg_data={ee_errno=0, ee_origin=SO_EE_ORIGIN_ZEROCOPY, ee_code=SO_EE_CODE_ZEROCOPY_COPIED, \
             ee_info=1, ee_data=2}}]}, MSG_ERRQUEUE) = 0\n",
            "t",
        )
        .unwrap();
        let crate::ast::EventKind::Syscall(sc) = &s.events[0].kind else {
            panic!()
        };
        assert_eq!(check(&sc.args[1], Notification { lo: 1, hi: 2 }), Ok(()));
        let e = check(&sc.args[1], Notification { lo: 1, hi: 3 }).unwrap_err();
        assert!(e.contains("ee_data"), "{e}");
    }
}
