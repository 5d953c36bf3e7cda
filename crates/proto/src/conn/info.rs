//! What TCP_INFO reports beside the sequence variables: the chronographs
//! (Linux's tcp_chrono_*), RACK's segment counts, recovery state, zero-window
//! probes, and TCP_USER_TIMEOUT (RFC 5482).

use super::{Connection, Timer};
use crate::rack::Rack;
use crate::time::{Duration, Instant};

impl Connection {
    /// TCP_USER_TIMEOUT (RFC 5482): once data waits for acknowledgement
    /// past a retransmission for this long, the connection is dropped with
    /// a timeout (Linux tcp_timer.c, retransmits_timed_out). None or zero: off.
    pub fn set_user_timeout(&mut self, limit: Option<Duration>) {
        self.user_timeout.set(limit);
    }

    /// The TCP_USER_TIMEOUT in force.
    pub fn user_timeout(&self) -> Option<Duration> {
        self.user_timeout.limit()
    }

    /// Busy, window-limited and buffer-limited times up to `now` (Linux's
    /// tcp_get_info_chrono_stats).
    pub fn chrono_stats(&self, now: Instant) -> crate::chrono::ChronoStats {
        self.chrono.stats(now)
    }

    /// The application waits for send-buffer space (tcp_sendmsg's
    /// wait_for_space) or no longer does: the buffer-limited chronograph.
    pub fn note_sndbuf_limited(&mut self, now: Instant, limited: bool) {
        if limited {
            self.chrono
                .start(crate::chrono::ChronoKind::SndbufLimited, now);
        } else {
            let empty = self.send_buf.is_empty() && self.snd_una == self.snd_max;
            self.chrono
                .stop(crate::chrono::ChronoKind::SndbufLimited, now, empty);
        }
    }

    /// Turns keep-alive on or off and sets its times on a live connection
    /// (SO_KEEPALIVE, TCP_KEEPIDLE, TCP_KEEPINTVL, TCP_KEEPCNT): a new idle
    /// time counts from the last segment received, as Linux's
    /// tcp_sock_set_keepidle_locked re-arms the timer.
    pub fn set_keepalive(
        &mut self,
        now: Instant,
        on: bool,
        idle: Duration,
        intvl: Duration,
        probes: u32,
    ) {
        let changed = self.cfg.keepalive_idle != idle || self.cfg.keepalive != on;
        let cfg = self.cfg_mut();
        cfg.keepalive = on;
        cfg.keepalive_idle = idle;
        cfg.keepalive_intvl = intvl;
        cfg.keepalive_probes = probes.max(1);
        if changed && !self.connect_timer_runs() {
            self.disarm(Timer::Keepalive);
        }
        self.keepalive_kick(now);
    }

    /// The peer's segment size as the ACK policy measures it (Linux's
    /// icsk_ack.rcv_mss, tcpi_rcv_mss), once data has arrived.
    pub fn rcv_mss(&self) -> Option<usize> {
        self.ack_policy.rcv_mss()
    }

    /// Times RACK saw reordering (Linux's tp->reord_seen, tcpi_reord_seen):
    /// at most once per ACK for SACKed data and once for cumulatively
    /// acknowledged data, as tcp_check_sack_reordering counts. None when
    /// RACK does not track this connection.
    pub fn reord_seen(&self) -> Option<u32> {
        (self.cfg.recovery.rack && self.negotiated.sack).then(|| self.rack.reord_seen())
    }

    /// Segments sent and not cumulatively acknowledged, as the record of
    /// sent segments holds them (Linux's packets_out, tcpi_unacked).
    pub fn packets_out(&self) -> usize {
        self.sent.len()
    }

    /// Linux's TCP_INFO segment counts from the RACK scoreboard, in segments:
    /// (unacked, sacked, lost, retrans, reordering). None when RACK does
    /// not track this connection (no SACK, or RACK off).
    pub fn rack_counts(&self) -> Option<(usize, usize, usize, usize, usize)> {
        if !(self.cfg.recovery.rack && self.negotiated.sack) {
            return None;
        }
        let mss = self.snd_mss.max(1);
        let reordering =
            (self.cfg.dupack_threshold as usize).max(self.rack.reorder_bytes().div_ceil(mss));
        Some((
            self.sent.len(),
            Rack::sacked_count(&self.sent),
            Rack::lost_count(&self.sent),
            Rack::retrans_count(&self.sent),
            reordering,
        ))
    }

    /// Loss-recovery state for TCP_INFO-style reports: (in fast recovery,
    /// consecutive retransmission-timer expiries, duplicate ACKs counted).
    pub fn recovery_state(&self) -> (bool, u32, u32) {
        (self.recovery.active, self.retries, self.recovery.dupacks)
    }

    /// Zero-window probes sent and not answered by an acceptable ACK
    /// (Linux's icsk_probes_out, reported as TCP_INFO's tcpi_probes).
    pub fn probes_out(&self) -> u32 {
        self.probes_out
    }

    /// Linux's tcp_write_xmit chronographs: data to send makes the
    /// connection busy; a next segment (up to an MSS) the peer's window does
    /// not fit starts the window-limited one (tcp_snd_wnd_test), else it stops.
    pub(super) fn note_rwnd_chrono(&mut self, now: Instant, unsent: usize, wnd_room: usize) {
        use crate::chrono::ChronoKind;
        let flight = self.snd_max.distance_from(self.snd_una);
        if unsent > 0 || flight > 0 {
            self.chrono.start(ChronoKind::Busy, now);
        }
        let empty = unsent == 0 && flight == 0 && self.send_buf.is_empty();
        if unsent > 0 && unsent.min(self.snd_mss) > wnd_room {
            self.chrono.start(ChronoKind::RwndLimited, now);
        } else {
            self.chrono.stop(ChronoKind::RwndLimited, now, empty);
        }
    }
}
