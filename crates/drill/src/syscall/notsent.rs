//! TCP_NOTSENT_LOWAT (tcp(7)): a limit on bytes written but not yet sent.
//! Linux checks it where tcp_sendmsg_locked needs a new skb
//! (sk_stream_memory_free -> tcp_stream_memory_free: write_seq - snd_nxt
//! below the limit), and poll()/epoll report EPOLLOUT only while twice the
//! unsent bytes are below it (tcp_poll, __sk_stream_is_writeable with wake).
//! The limit is the socket's option, else net.ipv4.tcp_notsent_lowat.

use super::{Outcome, WriteError};
use crate::runner::Runner;

/// Linux's default net.ipv4.tcp_notsent_lowat: no limit (UINT_MAX).
pub(crate) const NO_LIMIT: u64 = u32::MAX as u64;

/// Linux's GSO limit on one skb (GSO_LEGACY_MAX_SIZE).
const GSO_MAX_SIZE: usize = 65_536;

/// Linux's tcp_xmit_size_goal: skbs are filled to a multiple of the MSS of
/// at most 64 KiB and half the largest window the peer offered
/// (tcp_bound_to_half_wnd), and never less than one MSS.
pub(crate) fn size_goal(mss: usize, max_window: usize) -> usize {
    let mss = mss.max(1);
    let cutoff = if max_window > 536 {
        max_window / 2
    } else {
        max_window
    };
    let bound = if cutoff > 0 && GSO_MAX_SIZE > cutoff {
        cutoff.max(68)
    } else {
        GSO_MAX_SIZE
    };
    (bound / mss * mss).max(mss)
}

impl Runner<'_> {
    /// The limit in force: TCP_NOTSENT_LOWAT if set (non-zero), else the
    /// sysctl (Linux's tcp_notsent_lowat()).
    pub(crate) fn notsent_lowat(&self) -> u64 {
        match self.ext.notsent_lowat {
            Some(v) if v > 0 => u64::from(v),
            _ => self.host.notsent_lowat().unwrap_or(NO_LIMIT),
        }
    }

    /// Bytes written and not yet sent (write_seq - snd_nxt).
    pub(crate) fn notsent_bytes(&self) -> u64 {
        self.conn.as_ref().map_or(0, |c| {
            let write_seq = c.snd_una() + c.send_queued();
            write_seq.distance_from(c.snd_nxt()) as u64
        })
    }

    /// tcp_poll's EPOLLOUT condition for the limit: (notsent << 1) < lowat.
    pub(crate) fn notsent_writable(&self) -> bool {
        self.notsent_bytes() * 2 < self.notsent_lowat()
    }

    /// Hands up to `want` bytes to the engine as tcp_sendmsg_locked would
    /// with a finite limit: appends to the last unsent skb while it is below
    /// the size goal, checks the limit before starting a new skb, and sends
    /// an skb that fills while it is the first unsent one at once
    /// (tcp_push_one). Returns the bytes taken.
    pub(super) fn write_lowat(&mut self, want: usize, more: bool) -> Result<usize, WriteError> {
        let lowat = self.notsent_lowat();
        let mut done = 0;
        while done < want {
            let Some(c) = self.conn.as_ref() else { break };
            let write_seq = c.snd_una() + c.send_queued();
            let notsent = write_seq.distance_from(c.snd_nxt());
            let goal = size_goal(c.effective_mss(), c.max_snd_wnd());
            // The unsent part of the tail skb (a partly sent skb was split;
            // its rest is an skb of its own that may still grow).
            let tail = if notsent > 0 {
                notsent.min(write_seq.distance_from(self.ext.skb_start))
            } else {
                0
            };
            let room = if tail > 0 && tail < goal {
                goal - tail
            } else {
                // A new skb: sk_stream_memory_free.
                if notsent as u64 >= lowat || c.send_space() == 0 {
                    break;
                }
                self.ext.skb_start = write_seq;
                goal
            };
            let take = (want - done).min(room).min(c.send_space());
            if take == 0 {
                break;
            }
            let last = done + take == want;
            let head = notsent == tail;
            let fills = tail + take == goal;
            let Some(c) = self.conn.as_mut() else { break };
            // A full skb ends a data set, so the segment the window lets out
            // last is pushed (the engine's PSH rule; Linux marks PSH as it
            // pushes every half window, forced_push).
            let n = c.write(&vec![0u8; take], !(last || fills) || (last && more))?;
            done += n;
            if n < take {
                break;
            }
            if tail + n == goal && head {
                // tcp_push_one: the full skb is the send head.
                self.drain();
            }
        }
        if done < want && done > 0 && !more {
            // wait_for_space: tcp_push marks what was copied pushed.
            if let Some(c) = self.conn.as_mut() {
                c.flush();
            }
        }
        Ok(done)
    }

    /// The outcome of a write that took `progress` of `len` bytes.
    pub(super) fn lowat_outcome(progress: usize, len: usize, nb: bool) -> Outcome {
        if progress == len {
            Outcome::Done(Ok(len as i64))
        } else if nb {
            Outcome::Done(if progress > 0 {
                Ok(progress as i64)
            } else {
                Err("EAGAIN")
            })
        } else {
            Outcome::Block
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_goal_is_half_the_peer_window_in_whole_segments() {
        // A 32896-byte window: half is 16448, 16 segments of 1000.
        assert_eq!(size_goal(1000, 32_896), 16_000);
        // A large window: the 64 KiB GSO limit.
        assert_eq!(size_goal(1000, 1 << 20), 65_000);
        // Never below one MSS.
        assert_eq!(size_goal(1460, 2000), 1460);
    }
}
