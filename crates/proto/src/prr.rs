//! Proportional Rate Reduction (RFC 6937): how much may be sent on each ACK
//! of fast recovery, so cwnd falls smoothly to ssthresh instead of halving at once.

/// One recovery episode's PRR state (RFC 6937 3, "Algorithm").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Prr {
    /// RecoverFS: SND.NXT - SND.UNA when recovery began.
    pub recover_fs: usize,
    /// ssthresh the congestion controller chose on entry.
    pub ssthresh: usize,
    /// prr_delivered: bytes the receiver got during recovery (cumulative plus SACKed).
    pub prr_delivered: usize,
    /// prr_out: bytes sent during recovery.
    pub prr_out: usize,
    /// The cwnd PRR sets on each ACK: pipe + sndcnt.
    pub cwnd: usize,
}

impl Prr {
    /// RFC 6937 3 "At the beginning of recovery": prr_delivered = prr_out = 0.
    pub fn new(recover_fs: usize, ssthresh: usize) -> Prr {
        Prr {
            recover_fs: recover_fs.max(1),
            ssthresh,
            prr_delivered: 0,
            prr_out: 0,
            cwnd: 0,
        }
    }

    /// RFC 6937 3 "On every ACK during recovery", with the slow-start reduction
    /// bound (PRR-SSRB, the RFC's recommended variant): returns sndcnt in bytes
    /// and sets `cwnd = pipe + sndcnt`.
    pub fn on_ack(&mut self, delivered: usize, pipe: usize, mss: usize) -> usize {
        self.on_ack_with(delivered, pipe, mss, true)
    }

    /// As [`on_ack`](Self::on_ack), but PRR-SSRB's extra MSS is granted only
    /// when `safe_ack` (the ACK advanced SND.UNA: the PRR update's SafeACK,
    /// draft-ietf-tcpm-prr-rfc6937bis; Linux's tcp_input.c tcp_cwnd_reduction
    /// adds it only under FLAG_SND_UNA_ADVANCED), and the first call of a
    /// recovery allows at least one segment, the fast retransmit itself.
    pub fn on_ack_safe(
        &mut self,
        delivered: usize,
        pipe: usize,
        mss: usize,
        safe_ack: bool,
    ) -> usize {
        let first = self.prr_out == 0;
        let sndcnt = self.on_ack_with(delivered, pipe, mss, safe_ack);
        if first && sndcnt < mss {
            self.cwnd = pipe + mss;
            return mss;
        }
        sndcnt
    }

    fn on_ack_with(&mut self, delivered: usize, pipe: usize, mss: usize, safe_ack: bool) -> usize {
        self.prr_delivered += delivered;
        let sndcnt = if pipe > self.ssthresh {
            // Proportional part: CEIL(prr_delivered * ssthresh / RecoverFS) - prr_out.
            let target = (self.prr_delivered as u128 * self.ssthresh as u128)
                .div_ceil(self.recover_fs as u128) as usize;
            target.saturating_sub(self.prr_out)
        } else {
            // PRR-SSRB: limit = MAX(prr_delivered - prr_out, DeliveredData) + MSS.
            let limit = self
                .prr_delivered
                .saturating_sub(self.prr_out)
                .max(delivered)
                + if safe_ack { mss } else { 0 };
            (self.ssthresh - pipe).min(limit)
        };
        self.cwnd = pipe + sndcnt;
        sndcnt
    }

    /// RFC 6937 3 "On any data transmission or retransmission": prr_out += data_sent.
    pub fn on_sent(&mut self, bytes: usize) {
        self.prr_out += bytes;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: usize = 1000;

    /// Drives PRR over a recovery where each ACK delivers one segment, sending
    /// whatever sndcnt allows; returns segments sent per ACK.
    fn drive(recover_fs: usize, ssthresh: usize, mut pipe: usize, acks: usize) -> Vec<usize> {
        let mut p = Prr::new(recover_fs * MSS, ssthresh * MSS);
        let mut sent = Vec::new();
        for _ in 0..acks {
            pipe -= 1; // the ACK delivered a segment: it leaves the network
            let n = p.on_ack(MSS, pipe * MSS, MSS) / MSS;
            p.on_sent(n * MSS);
            pipe += n;
            sent.push(n);
        }
        sent
    }

    #[test]
    fn one_loss_sends_one_segment_per_two_acks() {
        // RFC 6937's single-loss example: cwnd 20 segments, ssthresh 10;
        // pipe starts at 20 (19 delivered-but-unacked plus the retransmission).
        let sent = drive(20, 10, 20, 19);
        // Proportional part in bytes: CEIL(k x 1000 x 10 / 20) - prr_out, so
        // half a segment per ACK: one segment every second ACK.
        assert_eq!(&sent[..6], &[0, 1, 0, 1, 0, 1]);
        // 9 segments over 19 ACKs; with the fast retransmission, ssthresh in all.
        let total: usize = sent.iter().sum();
        assert_eq!(total, 9);
    }

    #[test]
    fn heavy_loss_reduction_bound_is_slow_start_like() {
        // pipe already below ssthresh (many losses): each ACK delivering one
        // segment lets at most DeliveredData + 1 MSS out (PRR-SSRB).
        let mut p = Prr::new(20 * MSS, 10 * MSS);
        let n = p.on_ack(MSS, 4 * MSS, MSS);
        assert_eq!(n, 2 * MSS);
        assert_eq!(p.cwnd, 6 * MSS);
        p.on_sent(n);
        // The next ACK: prr_delivered - prr_out = 0, so DeliveredData + MSS again.
        assert_eq!(p.on_ack(MSS, 5 * MSS, MSS), 2 * MSS);
        // Never above ssthresh - pipe.
        p.on_sent(2 * MSS);
        assert_eq!(p.on_ack(3 * MSS, 9 * MSS, MSS), MSS);
    }

    #[test]
    fn proportional_part_rounds_up_and_never_goes_negative() {
        let mut p = Prr::new(10 * MSS, 7 * MSS);
        // 1 MSS delivered: CEIL(1000 * 7000 / 10000) = 700 bytes.
        assert_eq!(p.on_ack(MSS, 9 * MSS, MSS), 700);
        p.on_sent(MSS);
        // Sent more than the share so far: sndcnt is 0, not negative.
        assert_eq!(p.on_ack(100, 9 * MSS, MSS), 0);
    }

    /// An ACK that only SACKs (SND.UNA stays) earns no extra MSS under the
    /// SafeACK rule, while one that advances SND.UNA does; the first ACK of a
    /// recovery always lets the fast retransmit go.
    #[test]
    fn safe_ack_gates_the_extra_segment() {
        let mut p = Prr::new(10 * MSS, 7 * MSS);
        // Entry: one segment SACKed, pipe 1: the retransmission only.
        assert_eq!(p.on_ack_safe(MSS, MSS, MSS, false), MSS);
        p.on_sent(MSS);
        // A SACK of one more segment: delivered - out = 1, no extra.
        assert_eq!(p.on_ack_safe(MSS, 2 * MSS, MSS, false), MSS);
        p.on_sent(MSS);
        // The same under RFC 6937's PRR-SSRB gets one more.
        let mut q = Prr::new(10 * MSS, 7 * MSS);
        q.on_ack(MSS, MSS, MSS);
        q.on_sent(MSS);
        assert_eq!(q.on_ack(MSS, 2 * MSS, MSS), 2 * MSS);
        // SND.UNA advancing earns the extra MSS back.
        assert_eq!(p.on_ack_safe(MSS, 2 * MSS, MSS, true), 2 * MSS);
    }
}
