//! SACK: the receiver's choice of blocks (RFC 2018 section 4) and the sender's
//! scoreboard with RFC 6675's IsLost, NextSeg and pipe. Nothing here allocates
//! per segment: the scoreboard's vector keeps its capacity.

use crate::seq::SeqNumber;

/// RFC 2018 section 4: which out-of-order ranges to report, most recent first.
/// Holds the stream offsets of the latest out-of-order arrivals.
#[derive(Debug, Clone, Default)]
pub struct SackReporter {
    recent: [u64; 4],
    len: u8,
}

impl SackReporter {
    /// RFC 2018 4: a segment that landed beyond a gap at stream offset `off`
    /// is reported first in the next SACK option.
    pub fn note(&mut self, off: u64) {
        let n = self.len as usize;
        let pos = self.recent[..n].iter().position(|&r| r == off);
        let last = match pos {
            Some(p) => p,
            None if n < self.recent.len() => {
                self.len += 1;
                n
            }
            None => n - 1,
        };
        self.recent.copy_within(0..last, 1);
        self.recent[0] = off;
    }

    /// RFC 2018 4: up to `max` blocks, the range holding the most recent arrival
    /// first, then those of earlier arrivals, then any other held ranges.
    /// `containing(off)` finds the held out-of-order range with offset `off`;
    /// `ooo` lists the held ranges in order.
    pub fn blocks(
        &mut self,
        containing: impl Fn(u64) -> Option<(u64, u64)>,
        ooo: impl Iterator<Item = (u64, u64)>,
        max: usize,
        mut out: impl FnMut(u64, u64),
    ) {
        let max = max.min(4);
        let mut sent = [u64::MAX; 4];
        let mut n = 0;
        let mut keep = 0;
        for i in 0..self.len as usize {
            let r = self.recent[i];
            let Some((s, e)) = containing(r) else {
                continue; // delivered in order since: forget it
            };
            self.recent[keep] = r;
            keep += 1;
            if n < max && !sent[..n].contains(&s) {
                sent[n] = s;
                n += 1;
                out(s, e);
            }
        }
        self.len = keep as u8;
        for (s, e) in ooo {
            if n >= max {
                break;
            }
            if !sent[..n].contains(&s) {
                sent[n] = s;
                n += 1;
                out(s, e);
            }
        }
    }
}

/// The sender's record of SACKed data above SND.UNA (RFC 6675 section 3).
#[derive(Debug, Clone, Default)]
pub struct Scoreboard {
    /// Sorted, disjoint, non-adjacent [left, right) ranges.
    ranges: Vec<(SeqNumber, SeqNumber)>,
    sacked: usize,
    /// RFC 8985 6.2: unSACKed bytes below this are lost by RACK's time rule.
    rack_lost: Option<SeqNumber>,
}

impl Scoreboard {
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }
    /// Bytes SACKed above SND.UNA.
    pub fn sacked_bytes(&self) -> usize {
        self.sacked
    }
    pub fn ranges(&self) -> &[(SeqNumber, SeqNumber)] {
        &self.ranges
    }
    /// RFC 2018 8: after a timeout the sender may forget SACK information.
    pub fn clear(&mut self) {
        self.ranges.clear();
        self.sacked = 0;
        self.rack_lost = None;
    }

    /// RFC 8985 6.2 step 5: RACK marked every hole below `end` lost (the
    /// segments it judged were sent in sequence order).
    pub fn set_rack_lost(&mut self, end: Option<SeqNumber>) {
        self.rack_lost = end;
    }

    /// RFC 6675 "Update": adds the ACK's blocks; returns whether any byte was
    /// newly SACKed. A block counts only if both edges lie in [SND.UNA, SND.MAX]
    /// by unsigned offset from SND.UNA: signed comparison is ambiguous 2^31 away,
    /// where a forged block could read as both ahead and behind.
    pub fn update(
        &mut self,
        snd_una: SeqNumber,
        snd_max: SeqNumber,
        blocks: &[(SeqNumber, SeqNumber)],
    ) -> bool {
        let mut new = false;
        let flight = snd_max.0.wrapping_sub(snd_una.0);
        for &(l, r) in blocks {
            // RFC 2018 4 / RFC 6675 5.1: ignore blocks that make no sense
            // (D-SACK below SND.UNA, beyond what was sent, empty or reversed).
            let lo = l.0.wrapping_sub(snd_una.0);
            let hi = r.0.wrapping_sub(snd_una.0);
            if lo < hi && hi <= flight {
                new |= self.insert(l, r);
            }
        }
        new
    }

    fn insert(&mut self, mut l: SeqNumber, mut r: SeqNumber) -> bool {
        let before = self.sacked;
        let i = self.ranges.partition_point(|&(_, e)| e < l);
        let mut j = i;
        let mut absorbed = 0;
        while j < self.ranges.len() && self.ranges[j].0 <= r {
            let (s, e) = self.ranges[j];
            absorbed += e.distance_from(s);
            l = l.min(s);
            r = r.max(e);
            j += 1;
        }
        self.sacked = self.sacked - absorbed + r.distance_from(l);
        if j == i + 1 {
            self.ranges[i] = (l, r);
        } else {
            self.ranges.splice(i..j, [(l, r)]);
        }
        self.sacked > before
    }

    /// SND.UNA moved to `snd_una`: forget what it covers.
    pub fn advance(&mut self, snd_una: SeqNumber) {
        let mut drop = 0;
        for k in 0..self.ranges.len() {
            let (s, e) = self.ranges[k];
            if e <= snd_una {
                self.sacked -= e.distance_from(s);
                drop += 1;
            } else {
                if s < snd_una {
                    self.sacked -= snd_una.distance_from(s);
                    self.ranges[k].0 = snd_una;
                }
                break;
            }
        }
        if drop > 0 {
            self.ranges.drain(..drop);
        }
    }

    /// If `seq` is SACKed, the end of its range.
    #[inline]
    pub fn sacked_end(&self, seq: SeqNumber) -> Option<SeqNumber> {
        let i = self.ranges.partition_point(|&(_, e)| e <= seq);
        self.ranges
            .get(i)
            .filter(|&&(s, _)| s <= seq)
            .map(|&(_, e)| e)
    }

    /// Start of the first SACKed range beginning after `seq`.
    #[inline]
    pub fn next_sacked(&self, seq: SeqNumber) -> Option<SeqNumber> {
        let i = self.ranges.partition_point(|&(s, _)| s <= seq);
        self.ranges.get(i).map(|&(s, _)| s)
    }

    /// Holes below the highest SACKed byte, lowest first, with whether each is
    /// lost by RFC 6675 IsLost: DupThresh discontiguous SACKed ranges above it,
    /// or more than (DupThresh - 1) x SMSS SACKed bytes above it.
    fn holes(
        &self,
        snd_una: SeqNumber,
        dupthresh: u32,
        mss: usize,
    ) -> impl Iterator<Item = (SeqNumber, SeqNumber, bool)> + '_ {
        let mut prev = snd_una;
        let mut below = 0usize;
        let limit = (dupthresh.max(1) as usize - 1) * mss;
        self.ranges
            .iter()
            .enumerate()
            .filter_map(move |(i, &(s, e))| {
                let hole = (prev, s);
                let above_ranges = self.ranges.len() - i;
                let above_bytes = self.sacked - below;
                below += e.distance_from(s);
                prev = e;
                let lost = above_ranges >= dupthresh as usize || above_bytes > limit;
                (hole.0 < hole.1).then_some((hole.0, hole.1, lost))
            })
            .flat_map(move |(s, e, lost)| {
                // RACK's marks split a hole: lost below, undecided above.
                match self.rack_lost.filter(|&m| !lost && m > s) {
                    Some(m) if m < e => [Some((s, m, true)), Some((m, e, false))],
                    Some(_) => [Some((s, e, true)), None],
                    None => [Some((s, e, lost)), None],
                }
                .into_iter()
                .flatten()
            })
    }

    /// RFC 6675 IsLost(seq) for the first unSACKed byte at `snd_una`.
    pub fn is_lost(&self, snd_una: SeqNumber, dupthresh: u32, mss: usize) -> bool {
        self.holes(snd_una, dupthresh, mss)
            .next()
            .is_some_and(|(s, _, lost)| s == snd_una && lost)
    }

    /// RFC 6675 NextSeg rule 1: the first lost, unSACKed byte at or after
    /// `from`, and the end of its hole.
    pub fn next_lost(
        &self,
        snd_una: SeqNumber,
        from: SeqNumber,
        dupthresh: u32,
        mss: usize,
    ) -> Option<(SeqNumber, SeqNumber)> {
        self.holes(snd_una, dupthresh, mss)
            .filter(|&(_, e, lost)| lost && e > from)
            .map(|(s, e, _)| (s.max(from), e))
            .next()
    }

    /// RFC 6675 SetPipe: bytes believed in the network. UnSACKed bytes count
    /// unless lost; lost bytes count again once retransmitted (below `high_rxt`).
    pub fn pipe(
        &self,
        snd_una: SeqNumber,
        snd_max: SeqNumber,
        high_rxt: SeqNumber,
        dupthresh: u32,
        mss: usize,
    ) -> usize {
        let mut pipe = snd_max.distance_from(snd_una).saturating_sub(self.sacked);
        for (s, e, lost) in self.holes(snd_una, dupthresh, mss) {
            if lost {
                let rxt_end = high_rxt.max(s).min(e);
                pipe = pipe.saturating_sub(e.distance_from(rxt_end));
            }
        }
        pipe
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(n: u32) -> SeqNumber {
        SeqNumber(n)
    }

    #[test]
    fn reporter_puts_latest_first_and_forgets_delivered() {
        fn report(r: &mut SackReporter, ooo: &[(u64, u64)], max: usize) -> Vec<(u64, u64)> {
            let containing = |off: u64| ooo.iter().copied().find(|&(s, e)| s <= off && off < e);
            let mut v = Vec::new();
            r.blocks(containing, ooo.iter().copied(), max, |a, b| v.push((a, b)));
            v
        }
        let mut r = SackReporter::default();
        let ooo = [(10, 20), (30, 40), (50, 60)];
        r.note(10);
        r.note(50);
        r.note(30);
        assert_eq!(report(&mut r, &ooo, 4), vec![(30, 40), (50, 60), (10, 20)]);
        assert_eq!(report(&mut r, &[(50, 60)], 4), vec![(50, 60)]);
        assert_eq!(report(&mut r, &ooo, 2), vec![(50, 60), (10, 20)]);
    }

    #[test]
    fn scoreboard_merges_and_advances() {
        let mut b = Scoreboard::default();
        assert!(b.update(s(0), s(100), &[(s(10), s(20)), (s(30), s(40))]));
        assert!(!b.update(s(0), s(100), &[(s(12), s(18))]));
        assert!(b.update(s(0), s(100), &[(s(15), s(35))]));
        assert_eq!(b.ranges(), &[(s(10), s(40))]);
        assert_eq!(b.sacked_bytes(), 30);
        b.advance(s(20));
        assert_eq!((b.ranges(), b.sacked_bytes()), (&[(s(20), s(40))][..], 20));
        assert_eq!(b.sacked_end(s(25)), Some(s(40)));
        assert_eq!(b.sacked_end(s(40)), None);
        b.advance(s(50));
        assert!(b.is_empty());
        assert_eq!(b.sacked_bytes(), 0);
    }

    #[test]
    fn islost_nextseg_and_pipe() {
        let mss = 10;
        let mut b = Scoreboard::default();
        // Hole 0..10, then three SACKed segments: the hole is lost.
        b.update(s(0), s(100), &[(s(10), s(40))]);
        assert!(b.is_lost(s(0), 3, mss));
        assert_eq!(b.next_lost(s(0), s(0), 3, mss), Some((s(0), s(10))));
        // 100 in flight - 30 SACKed - 10 lost = 60.
        assert_eq!(b.pipe(s(0), s(100), s(0), 3, mss), 60);
        // After retransmitting the hole it counts again.
        assert_eq!(b.pipe(s(0), s(100), s(10), 3, mss), 70);
        assert_eq!(b.next_lost(s(0), s(10), 3, mss), None);
        // One SACKed segment above a hole is not enough.
        let mut c = Scoreboard::default();
        c.update(s(0), s(100), &[(s(10), s(20))]);
        assert!(!c.is_lost(s(0), 3, mss));
        assert_eq!(c.pipe(s(0), s(100), s(0), 3, mss), 90);
    }

    #[test]
    fn rack_marks_split_holes() {
        let mss = 10;
        let mut b = Scoreboard::default();
        // One SACKed segment above a 30-byte hole: not lost by DupThresh.
        b.update(s(0), s(100), &[(s(30), s(40))]);
        assert!(!b.is_lost(s(0), 3, mss));
        // RACK judged the first two segments lost by time.
        b.set_rack_lost(Some(s(20)));
        assert!(b.is_lost(s(0), 3, mss));
        assert_eq!(b.next_lost(s(0), s(0), 3, mss), Some((s(0), s(20))));
        assert_eq!(b.next_lost(s(0), s(20), 3, mss), None);
        // 100 - 10 SACKed - 20 lost.
        assert_eq!(b.pipe(s(0), s(100), s(0), 3, mss), 70);
        b.clear();
        assert!(b.is_empty());
        b.update(s(0), s(100), &[(s(30), s(40))]);
        assert!(!b.is_lost(s(0), 3, mss), "clear forgets RACK's marks");
    }

    #[test]
    fn rejects_blocks_outside_una_to_max_by_unsigned_offset() {
        let una = s(u32::MAX - 100);
        let max = una + 1000;
        let mut b = Scoreboard::default();
        // 2^31 - 1 past SND.UNA: signed comparison calls the start ahead of
        // SND.UNA and the end behind SND.MAX; it must not be stored.
        let far = una + ((1usize << 31) - 1);
        assert!(!b.update(una, max, &[(far, far + 10)]));
        assert!(
            !b.update(una, max, &[(una - 10, una + 10)]),
            "D-SACK below SND.UNA"
        );
        assert!(
            !b.update(una, max, &[(una + 900, max + 1)]),
            "beyond SND.MAX"
        );
        assert!(!b.update(una, max, &[(una + 20, una + 10)]), "reversed");
        assert!(b.is_empty());
        // Across the 2^32 wrap, inside the flight: kept.
        assert!(b.update(una, max, &[(una + 50, una + 200), (una + 900, max)]));
        assert_eq!(b.sacked_bytes(), 250);
    }
}
