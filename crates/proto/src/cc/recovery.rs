//! NewReno fast recovery, written once for every controller that recovers
//! that way (NewReno, CUBIC, Linux's CUBIC), as neqo's classic_cc does: the
//! controller supplies its window in its own unit and its multiplicative
//! decrease; the window arithmetic of fast retransmit (RFC 5681 3.2),
//! partial ACKs (RFC 6582 3.2) and repaired losses (RFC 6675 5) is here.
//! Leaving recovery (RFC 6582 3.2 step 6) and the timeout stay each
//! controller's own: their rules differ.

/// A controller's window as NewReno recovery sees it. Sizes are in the
/// controller's unit: bytes, or segments for Linux's arithmetic.
pub(crate) trait RenoRecovery {
    /// cwnd, in the controller's unit.
    fn window(&self) -> usize;
    fn set_window(&mut self, w: usize);
    /// ssthresh, in the controller's unit.
    fn threshold(&self) -> usize;
    /// `bytes` in the controller's unit (bytes unless it says otherwise).
    fn units(&self, bytes: usize) -> usize {
        bytes
    }
    /// One segment of `mss` bytes in the controller's unit.
    fn segment(&self, mss: usize) -> usize {
        self.units(mss)
    }
    /// Whether a loss repaired without a timeout reduces the window (false:
    /// losses are noise, RFC 1106 4.2).
    fn reduces_on_repair(&self) -> bool;
    /// The multiplicative decrease for a congestion signal: sets ssthresh
    /// from `flight` (and what else the controller keeps, e.g. W_max).
    fn decrease(&mut self, flight: usize, mss: usize);
    /// A repaired loss taken as noise: what the controller notes of it.
    fn note_noise_loss(&mut self) {}
    /// The window was set to ssthresh: growth toward the next increment starts over.
    fn restart_growth(&mut self) {}

    /// RFC 5681 3.2 steps 2-3 (RFC 6582 3.2 step 2): ssthresh from the
    /// decrease, cwnd = ssthresh + `dupacks` segments; with losses as noise
    /// (RFC 1106 4.2) only the inflation.
    fn fast_retransmit(&mut self, flight: usize, mss: usize, dupacks: u32) {
        if self.reduces_on_repair() {
            self.decrease(flight, mss);
            self.set_window(self.threshold() + dupacks as usize * self.segment(mss));
        } else {
            self.note_noise_loss();
            self.set_window(self.window() + self.units(dupacks as usize * mss));
        }
    }

    /// RFC 5681 3.2 step 4: each further duplicate ACK inflates cwnd by a segment.
    fn recovery_dupack(&mut self, mss: usize) {
        self.set_window(self.window() + self.segment(mss));
    }

    /// RFC 6582 3.2 step 5: deflate by the amount acked, add back one SMSS.
    fn partial_ack(&mut self, acked: usize, mss: usize) {
        let seg = self.segment(mss);
        self.set_window((self.window().saturating_sub(self.units(acked)) + seg).max(seg));
    }

    /// A congestion signal (RFC 5681 eq. 4; RFC 3168 6.1.2's ECN-Echo): the
    /// decrease, and cwnd = ssthresh.
    fn reduce_to_threshold(&mut self, flight: usize, mss: usize) {
        self.decrease(flight, mss);
        self.set_window(self.threshold());
        self.restart_growth();
    }

    /// A loss repaired without window inflation (NAK, RFC 1106 2.1; SACK
    /// recovery, RFC 6675 5 step 4.2): reduce, unless losses are noise.
    fn repair_loss(&mut self, flight: usize, mss: usize) {
        if self.reduces_on_repair() {
            self.reduce_to_threshold(flight, mss);
        } else {
            self.note_noise_loss();
        }
    }
}

/// The `CongestionControl` hooks of a controller that recovers the NewReno
/// way: each is the [`RenoRecovery`] rule of the same name.
macro_rules! reno_recovery_hooks {
    () => {
        fn on_fast_retransmit(&mut self, flight: usize, mss: usize, dupacks: u32) {
            crate::cc::recovery::RenoRecovery::fast_retransmit(self, flight, mss, dupacks);
        }
        fn on_recovery_dupack(&mut self, mss: usize) {
            crate::cc::recovery::RenoRecovery::recovery_dupack(self, mss);
        }
        fn on_partial_ack(&mut self, acked: usize, mss: usize) {
            crate::cc::recovery::RenoRecovery::partial_ack(self, acked, mss);
        }
        fn on_loss_repair(&mut self, flight: usize, mss: usize) {
            crate::cc::recovery::RenoRecovery::repair_loss(self, flight, mss);
        }
        fn on_congestion_signal(&mut self, flight: usize, mss: usize) {
            crate::cc::recovery::RenoRecovery::reduce_to_threshold(self, flight, mss);
        }
    };
}
pub(crate) use reno_recovery_hooks;
