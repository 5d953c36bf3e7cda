//! Explicit Congestion Notification (RFC 3168): CE marks echoed by ECE until
//! CWR, and one window reduction per window of data for an ECE.

use super::Connection;
use crate::state::State;
use crate::wire::{Flags, TcpRepr};

/// RFC 3168 state of one connection (the ECE owed to the peer is `AckState::ece`).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct EcnState {
    /// RFC 3168 6.1.1: both SYNs negotiated ECN.
    pub(super) ok: bool,
    /// RFC 3168 6.1.2: cwnd was reduced for ECE; the next new data carries CWR.
    pub(super) cwr_pending: bool,
    /// The driver saw IP ECN CE on the segment it hands in next (RFC 3168 5).
    pub(super) ce_next: bool,
}

impl Connection {
    /// RFC 3168 6.1.2-6.1.3: the peer's CWR stops our ECE, a CE mark starts
    /// it, and an ECE reduces cwnd once per window of data.
    pub(super) fn on_ecn_input(&mut self, seg: &TcpRepr, payload_len: usize) {
        let ce = std::mem::take(&mut self.ecn.ce_next);
        if seg.flags.contains(Flags::CWR) {
            self.ack.ece = false;
        }
        if ce && payload_len > 0 {
            self.counters.ce_received += 1;
            self.ack.ece = true;
        }
        if seg.flags.contains(Flags::ECE) && !seg.flags.syn() {
            self.counters.ece_received += 1;
            let fresh = self.ecn_recover.is_none_or(|r| self.snd_una > r);
            if fresh && !self.recovery.active {
                let flight = self.snd_max.distance_from(self.snd_una);
                self.cc.on_congestion_signal(flight, self.snd_mss);
                self.ecn_recover = Some(self.snd_max);
                self.ecn.cwr_pending = true;
                self.counters.ecn_reductions += 1;
            }
        }
    }

    /// The driver saw the IP ECN field CE (RFC 3168 5) on the segment it hands
    /// to `handle_segment` next.
    pub fn note_ce(&mut self) {
        self.ecn.ce_next = true;
    }

    /// Whether the segment `poll_transmit` last returned is to go out ECT(0)
    /// (RFC 3168 6.1.2: ECN-capable new data once ECN is negotiated).
    pub fn transmit_ect(&self) -> bool {
        self.tx.last_ect
    }

    /// RFC 3168 6.1.1: ECN was negotiated on this connection.
    pub fn ecn_enabled(&self) -> bool {
        self.ecn.ok
    }

    /// RFC 3168 6.1.1: an ECN-setup SYN has ECE and CWR; an ECN-setup SYN-ACK ECE only.
    pub(super) fn ecn_negotiate(&mut self, seg: &TcpRepr) {
        let (ece, cwr) = (
            seg.flags.contains(Flags::ECE),
            seg.flags.contains(Flags::CWR),
        );
        self.ecn.ok = self.cfg.options.ecn && ece && if seg.flags.ack() { !cwr } else { cwr };
    }

    /// RFC 3168 6.1.1: the flags of our SYN (ECE and CWR when ECN is
    /// configured) or SYN-ACK (ECE when the peer's SYN set ECN up).
    pub(super) fn ecn_syn_flags(&self) -> Flags {
        if self.state == State::SynReceived {
            if self.ecn.ok {
                Flags::ECE
            } else {
                Flags::NONE
            }
        } else if self.cfg.options.ecn && self.cfg.ecn_syn_retries.is_none_or(|n| self.retries <= n)
        {
            // FreeBSD tcp_output.c: a SYN resent more than ecn.maxretries
            // times goes without ECN (the path may drop ECN SYNs).
            Flags::ECE | Flags::CWR
        } else {
            Flags::NONE
        }
    }

    /// RFC 3168 6.1.3: ECE on every segment until the peer's CWR.
    pub(super) fn ece_flag(&self) -> Flags {
        if self.ecn.ok && self.ack.ece {
            Flags::ECE
        } else {
            Flags::NONE
        }
    }

    /// A data segment goes out: CWR on the first new data after a reduction
    /// (RFC 3168 6.1.2), and new data goes ECT(0); retransmissions and
    /// control segments do not (6.1.5). Returns the flag to add.
    pub(super) fn ecn_on_data_sent(&mut self, new_data: bool) -> Flags {
        // RFC 3168 6.1.5: ECT(0) for new data only.
        self.tx.last_ect = self.ecn.ok && new_data;
        if self.ecn.ok && self.ecn.cwr_pending && new_data {
            self.ecn.cwr_pending = false;
            Flags::CWR
        } else {
            Flags::NONE
        }
    }
}
