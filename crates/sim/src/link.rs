//! One direction of a link: a FIFO drop-tail queue feeding a serializer of
//! fixed rate, then a propagation delay, with optional random loss, bit errors,
//! reordering and duplication (the scenario file's `[link]` table).
//!
//! The link schedules nothing itself: [`Link::transmit`] answers, at the moment
//! a frame is offered, when it will arrive (or why it is lost), and queue
//! occupancy is computed lazily from the departure times of frames still queued.

use rand::Rng;
use std::collections::VecDeque;
use std::time::Duration;
use tinygram_proto::Instant;

/// Per-frame overhead counted in wire bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Framing {
    /// Wire bytes = IP packet bytes (a point-to-point link with no framing cost).
    Raw,
    /// Ethernet II: preamble 8 + header 14 + FCS 4 + inter-frame gap 12, frame
    /// padded to 64 bytes (Davids, "TCP -- Either Fast or Efficient", overhead arithmetic).
    #[default]
    Ethernet,
}

impl Framing {
    /// The name used in scenario files.
    pub fn name(self) -> &'static str {
        match self {
            Framing::Raw => "raw",
            Framing::Ethernet => "ethernet",
        }
    }
}

impl std::str::FromStr for Framing {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "raw" | "none" => Ok(Framing::Raw),
            "ethernet" => Ok(Framing::Ethernet),
            _ => Err(format!(
                "unknown framing {s:?}{} (expected \"ethernet\" or \"raw\")",
                tinygram_proto::suggest::did_you_mean(s, ["ethernet", "raw"])
            )),
        }
    }
}

/// Settings of one link direction; `Default` matches the scenario-file defaults.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkConfig {
    /// Serialization rate in bits per second; 0.0 (or infinity) = infinitely fast.
    pub rate_bps: f64,
    /// One-way propagation delay, added after serialization.
    pub delay: Duration,
    /// Drop-tail limit in wire bytes waiting or being serialized; 0 = unlimited.
    pub queue_bytes: usize,
    /// Probability that a frame is lost elsewhere on the path (never occupies this link).
    pub loss: f64,
    /// Bit error rate: a frame of n bits survives with probability (1-ber)^n.
    pub ber: f64,
    /// Per-frame overhead.
    pub framing: Framing,
    /// Probability that a frame is held back `reorder_delay` (so later ones pass it).
    pub reorder: f64,
    /// Extra delay of a reordered frame.
    pub reorder_delay: Duration,
    /// Probability that the network delivers a second copy of a frame.
    pub duplicate: f64,
    /// ECN step marking (RFC 3168 5): an ECT frame offered while the backlog
    /// is at least this many wire bytes is marked CE; 0 = never. The world reads it.
    pub ecn_mark_bytes: usize,
}

impl Default for LinkConfig {
    fn default() -> Self {
        LinkConfig {
            rate_bps: 1e9,
            delay: Duration::from_micros(50),
            queue_bytes: 256_000,
            loss: 0.0,
            ber: 0.0,
            framing: Framing::Ethernet,
            reorder: 0.0,
            reorder_delay: Duration::from_millis(1),
            duplicate: 0.0,
            ecn_mark_bytes: 0,
        }
    }
}

/// Why a frame did not arrive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropReason {
    /// Drop-tail: the queue was full when the frame was offered.
    Queue,
    /// Random loss (probability `loss`).
    Loss,
    /// Corrupted by bit errors; transmitted, then discarded by the receiver's FCS check.
    BitError,
}

/// What happens to one offered frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    /// The frame never arrives.
    Dropped(DropReason),
    /// The frame arrives at `at`; a duplicate, if any, arrives at `duplicate_at`.
    Delivered {
        at: Instant,
        duplicate_at: Option<Instant>,
    },
}

/// Counters of one link direction.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LinkStats {
    /// Frames offered to the link (every `transmit` call).
    pub frames: u64,
    /// Wire bytes serialized onto the link, including frames later lost to bit
    /// errors; not frames dropped at the queue or by random loss, nor duplicates.
    pub wire_bytes: u64,
    /// Frames dropped because the queue was full.
    pub dropped_queue: u64,
    /// Frames dropped by random loss.
    pub dropped_loss: u64,
    /// Frames corrupted by bit errors.
    pub dropped_ber: u64,
    /// Frames delivered twice.
    pub duplicated: u64,
    /// Frames given the extra reordering delay.
    pub reordered: u64,
}

/// One direction of a link (see the module docs for the model).
#[derive(Clone, Debug)]
pub struct Link {
    cfg: LinkConfig,
    /// When the serializer finishes the last accepted frame.
    busy_until: Instant,
    /// (serialization end, wire bytes) of accepted frames, oldest first.
    queued: VecDeque<(Instant, usize)>,
    /// Sum of the wire bytes in `queued`.
    queued_bytes: usize,
    /// Serialization times of the frame sizes offered last.
    ser: SerTime,
    stats: LinkStats,
}

impl Link {
    /// A new idle link.
    pub fn new(cfg: LinkConfig) -> Link {
        Link {
            ser: SerTime::new(cfg.rate_bps),
            cfg,
            busy_until: Instant::ZERO,
            queued: VecDeque::new(),
            queued_bytes: 0,
            stats: LinkStats::default(),
        }
    }

    /// The link's settings.
    pub fn config(&self) -> &LinkConfig {
        &self.cfg
    }

    /// The link's counters.
    pub fn stats(&self) -> &LinkStats {
        &self.stats
    }

    /// Bytes a frame carrying an IP packet of `ip_len` bytes occupies on the wire:
    /// Ethernet = max(ip_len + 14 header + 4 FCS, 64 minimum) + 8 preamble + 12 gap
    /// (Davids, "TCP -- Either Fast or Efficient", overhead arithmetic: "1 to 6 bytes of data effectively requires an 84-byte Ethernet frame").
    pub fn wire_len(&self, ip_len: usize) -> usize {
        match self.cfg.framing {
            Framing::Raw => ip_len,
            Framing::Ethernet => ip_len.saturating_add(18).max(64).saturating_add(20),
        }
    }

    /// Bytes of that frame which bit errors can corrupt: the frame itself
    /// (header, payload, padding, FCS), not the preamble or the inter-frame
    /// gap, which carry no data (IEEE 802.3 3.2.9: the FCS covers the frame
    /// from the destination address on). Raw framing: the IP packet.
    pub fn frame_len(&self, ip_len: usize) -> usize {
        match self.cfg.framing {
            Framing::Raw => ip_len,
            Framing::Ethernet => ip_len.saturating_add(18).max(64),
        }
    }

    /// Wire bytes offered but not yet fully serialized at `now` (the frame on the wire counts).
    pub fn backlog(&mut self, now: Instant) -> usize {
        while let Some(&(done, bytes)) = self.queued.front() {
            if done > now {
                break;
            }
            self.queued.pop_front();
            self.queued_bytes -= bytes;
        }
        self.queued_bytes
    }

    /// Offers a frame carrying an IP packet of `ip_len` bytes at `now`.
    ///
    /// Random numbers come only from `rng`, one `f64` for each of loss, ber,
    /// reorder and duplicate whose probability is above zero, all drawn up front,
    /// so the count per call never depends on the outcome and a perfect link draws none.
    pub fn transmit(&mut self, now: Instant, ip_len: usize, rng: &mut impl Rng) -> Fate {
        let draw = |p: f64, rng: &mut _| if p > 0.0 { Some(uniform(rng)) } else { None };
        let u_loss = draw(self.cfg.loss, rng);
        let u_ber = draw(self.cfg.ber, rng);
        let u_reorder = draw(self.cfg.reorder, rng);
        let u_dup = draw(self.cfg.duplicate, rng);

        self.stats.frames += 1;
        let wire = self.wire_len(ip_len);

        // Loss elsewhere on the path: the frame never reaches this link's queue.
        if u_loss.is_some_and(|u| u < self.cfg.loss) {
            self.stats.dropped_loss += 1;
            return Fate::Dropped(DropReason::Loss);
        }

        let backlog = self.backlog(now);
        if self.cfg.queue_bytes > 0 && backlog.saturating_add(wire) > self.cfg.queue_bytes {
            self.stats.dropped_queue += 1;
            return Fate::Dropped(DropReason::Queue);
        }

        let ser = self.ser.get(wire);
        let start = now.max(self.busy_until);
        let done = start + ser;
        self.busy_until = done;
        self.queued.push_back((done, wire));
        self.queued_bytes += wire;
        self.stats.wire_bytes += wire as u64;

        if let Some(u) = u_ber {
            if u >= survival(self.cfg.ber, self.frame_len(ip_len)) {
                self.stats.dropped_ber += 1;
                return Fate::Dropped(DropReason::BitError);
            }
        }

        let mut at = done + self.cfg.delay;
        if u_reorder.is_some_and(|u| u < self.cfg.reorder) {
            self.stats.reordered += 1;
            at += self.cfg.reorder_delay;
        }
        let duplicate_at = if u_dup.is_some_and(|u| u < self.cfg.duplicate) {
            self.stats.duplicated += 1;
            Some(at + ser)
        } else {
            None
        };
        Fate::Delivered { at, duplicate_at }
    }
}

/// Time to serialize `wire` bytes at `rate` bit/s, rounded to the nearest
/// nanosecond (zero on a link without a rate limit).
pub fn serialization_time(rate: f64, wire: usize) -> Duration {
    if rate <= 0.0 || !rate.is_finite() {
        return Duration::ZERO;
    }
    let ns = (wire as f64 * 8.0 * 1e9 / rate).round();
    Duration::from_nanos(if ns >= u64::MAX as f64 {
        u64::MAX
    } else {
        ns as u64
    })
}

/// A link's serialization times for the two frame sizes it was last
/// offered: traffic is mostly full data frames and ACKs, and the division
/// and rounding they save cost more than the lookup.
#[derive(Debug, Clone)]
pub(crate) struct SerTime {
    rate: f64,
    /// (wire bytes, time), the most recently computed first.
    memo: [(usize, Duration); 2],
}

impl SerTime {
    /// For a link of `rate` bit/s.
    pub(crate) fn new(rate: f64) -> SerTime {
        SerTime {
            rate,
            memo: [(usize::MAX, Duration::ZERO); 2],
        }
    }

    /// [`serialization_time`] of `wire` bytes at this rate.
    pub(crate) fn get(&mut self, wire: usize) -> Duration {
        if self.memo[0].0 == wire {
            return self.memo[0].1;
        }
        if self.memo[1].0 == wire {
            self.memo.swap(0, 1);
            return self.memo[0].1;
        }
        let t = serialization_time(self.rate, wire);
        self.memo = [(wire, t), self.memo[0]];
        t
    }
}

/// A uniform `f64` in [0, 1).
fn uniform(rng: &mut impl Rng) -> f64 {
    rng.gen::<f64>()
}

/// Probability that `frame_bytes` bytes cross a channel with bit error rate `ber`
/// unharmed: (1-ber)^n with n = 8 * frame_bytes, as exp(n * ln(1-ber)) for precision.
pub fn survival(ber: f64, frame_bytes: usize) -> f64 {
    if ber <= 0.0 || frame_bytes == 0 {
        return 1.0;
    }
    if ber >= 1.0 {
        return 0.0;
    }
    let bits = frame_bytes as f64 * 8.0;
    (bits * (-ber).ln_1p()).exp()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn raw(rate_bps: f64, delay: Duration, queue_bytes: usize) -> LinkConfig {
        LinkConfig {
            rate_bps,
            delay,
            queue_bytes,
            framing: Framing::Raw,
            ..LinkConfig::default()
        }
    }

    /// The memo gives what the division gives, whichever of its two entries
    /// (or neither) holds the size asked for.
    #[test]
    fn serialization_memo_matches_division() {
        for rate in [10e9, 1.544e6, 56e3, 0.0] {
            let mut memo = SerTime::new(rate);
            for wire in [
                1500, 52, 1500, 52, 52, 1500, 576, 52, 40, 40, 1500, 0, 65_535,
            ] {
                assert_eq!(
                    memo.get(wire),
                    serialization_time(rate, wire),
                    "{wire} bytes at {rate} bit/s"
                );
            }
        }
        assert_eq!(serialization_time(10e9, 1500), Duration::from_nanos(1200));
        assert_eq!(serialization_time(3e9, 1), Duration::from_nanos(3));
    }

    fn at(f: Fate) -> Instant {
        match f {
            Fate::Delivered { at, .. } => at,
            Fate::Dropped(r) => panic!("dropped: {r:?}"),
        }
    }

    #[test]
    fn ethernet_wire_len() {
        let l = Link::new(LinkConfig::default());
        assert_eq!(
            l.wire_len(40),
            84,
            "a bare ACK fills the 64-byte minimum frame"
        );
        assert_eq!(l.wire_len(46), 84);
        assert_eq!(l.wire_len(47), 85);
        assert_eq!(l.wire_len(1500), 1538);
        let r = Link::new(raw(0.0, Duration::ZERO, 0));
        assert_eq!(r.wire_len(40), 40);
    }

    #[test]
    fn serialization_timing_is_exact() {
        // 1250 bytes at 10 Mbps = 10000 bits = 1 ms; then 5 ms propagation.
        let mut l = Link::new(raw(10e6, Duration::from_millis(5), 0));
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let t0 = Instant::from_millis(100);
        assert_eq!(
            at(l.transmit(t0, 1250, &mut rng)),
            Instant::from_millis(106)
        );
        // Back to back: the second waits for the first.
        assert_eq!(
            at(l.transmit(t0, 1250, &mut rng)),
            Instant::from_millis(107)
        );
        // After the link went idle, no waiting.
        let t1 = Instant::from_millis(200);
        assert_eq!(
            at(l.transmit(t1, 125, &mut rng)),
            Instant::from_nanos(205_100_000)
        );
        // Ethernet at 1 Gbps: 1538 wire bytes = 12304 ns.
        let mut e = Link::new(LinkConfig {
            delay: Duration::ZERO,
            ..LinkConfig::default()
        });
        assert_eq!(
            at(e.transmit(Instant::ZERO, 1500, &mut rng)),
            Instant::from_nanos(12_304)
        );
        assert_eq!(e.stats().wire_bytes, 1538);
        // 1.544 Mbps T1: an 84-byte frame takes 672/1.544e6 s = 435233.16 ns -> 435233.
        let mut t = Link::new(LinkConfig {
            rate_bps: 1.544e6,
            delay: Duration::ZERO,
            ..LinkConfig::default()
        });
        assert_eq!(
            at(t.transmit(Instant::ZERO, 40, &mut rng)),
            Instant::from_nanos(435_233)
        );
    }

    #[test]
    fn infinite_rate_has_no_queue() {
        let mut l = Link::new(raw(0.0, Duration::from_micros(7), 100));
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        for _ in 0..10 {
            assert_eq!(
                at(l.transmit(Instant::ZERO, 100, &mut rng)),
                Instant::from_micros(7)
            );
        }
        assert_eq!(l.stats().dropped_queue, 0);
    }

    #[test]
    fn drop_tail_at_the_right_occupancy() {
        // 1000-byte frames take 1 ms each at 8 Mbps; the queue holds 3000 bytes.
        let mut l = Link::new(raw(8e6, Duration::ZERO, 3000));
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let t0 = Instant::ZERO;
        for i in 1..=3 {
            assert_eq!(at(l.transmit(t0, 1000, &mut rng)), Instant::from_millis(i));
        }
        assert_eq!(l.backlog(t0), 3000);
        assert_eq!(
            l.transmit(t0, 1, &mut rng),
            Fate::Dropped(DropReason::Queue)
        );
        // Half-way through the first frame it still counts: still full.
        assert_eq!(
            l.transmit(Instant::from_micros(500), 1000, &mut rng),
            Fate::Dropped(DropReason::Queue)
        );
        // Once the first frame has finished serializing, one frame's room opens.
        let t1 = Instant::from_millis(1);
        assert_eq!(l.backlog(t1), 2000);
        assert_eq!(at(l.transmit(t1, 1000, &mut rng)), Instant::from_millis(4));
        assert_eq!(
            l.transmit(t1, 1, &mut rng),
            Fate::Dropped(DropReason::Queue)
        );
        assert_eq!(l.stats().dropped_queue, 3);
        assert_eq!(l.stats().frames, 7);
        assert_eq!(
            l.stats().wire_bytes,
            4000,
            "queue drops are not transmitted"
        );
        assert_eq!(l.backlog(Instant::from_millis(10)), 0);
    }

    #[test]
    fn loss_rate_is_statistically_right() {
        let mut l = Link::new(LinkConfig {
            loss: 0.1,
            queue_bytes: 0,
            ..LinkConfig::default()
        });
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let n = 100_000;
        for i in 0..n {
            l.transmit(Instant::from_millis(i), 1000, &mut rng);
        }
        let lost = l.stats().dropped_loss as f64;
        // Binomial sd = sqrt(n p (1-p)) ~ 95; allow 5 sd.
        assert!((lost - 10_000.0).abs() < 475.0, "lost {lost}");
        assert_eq!(
            l.stats().wire_bytes,
            (n - l.stats().dropped_loss) * 1038,
            "lost frames do not occupy the link"
        );
    }

    #[test]
    fn ber_survival_probability() {
        assert_eq!(survival(0.0, 1500), 1.0);
        assert_eq!(survival(1.0, 1), 0.0);
        let p = survival(1e-6, 1538);
        assert!((p - (1.0f64 - 1e-6).powf(12304.0)).abs() < 1e-12);
        // Tiny BER keeps full precision where 1 - ber would round.
        let tiny = survival(1e-17, 1000);
        assert!(
            tiny < 1.0 && ((1.0 - tiny) / 8e-14 - 1.0).abs() < 1e-2,
            "{tiny}"
        );

        // Only the 1518-byte frame can be corrupted, not the 20 bytes of
        // preamble and inter-frame gap that also occupy the wire.
        let ber = 1e-5; // 1518 frame bytes survive with ~0.8857
        let mut l = Link::new(LinkConfig {
            ber,
            queue_bytes: 0,
            ..LinkConfig::default()
        });
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let n = 50_000u64;
        for i in 0..n {
            l.transmit(Instant::from_millis(i), 1500, &mut rng);
        }
        let expect = n as f64 * (1.0 - survival(ber, 1518));
        let got = l.stats().dropped_ber as f64;
        assert!(
            (got - expect).abs() < 5.0 * (expect * 0.886).sqrt(),
            "got {got}, expected {expect}"
        );
        assert_eq!(
            l.stats().wire_bytes,
            n * 1538,
            "corrupted frames were transmitted"
        );
    }

    #[test]
    fn only_frame_bits_can_be_corrupted() {
        let eth = Link::new(LinkConfig::default());
        // Header 14 + payload + FCS 4, padded to 64; never preamble 8 or gap 12.
        assert_eq!((eth.frame_len(1500), eth.wire_len(1500)), (1518, 1538));
        assert_eq!((eth.frame_len(40), eth.wire_len(40)), (64, 84));
        let raw = Link::new(raw(0.0, Duration::ZERO, 0));
        assert_eq!(raw.frame_len(40), 40);
        // (1-ber)^(8 x 1518), not ^(8 x 1538): 0.2969 vs 0.2923 here, ten
        // standard deviations apart over a million frames.
        let ber = 1e-4;
        let (frame, wire) = (survival(ber, 1518), survival(ber, 1538));
        assert!((frame - (1.0f64 - ber).powf(8.0 * 1518.0)).abs() < 1e-12);
        let mut l = Link::new(LinkConfig {
            ber,
            queue_bytes: 0,
            ..LinkConfig::default()
        });
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let n = 1_000_000u64;
        for i in 0..n {
            l.transmit(Instant::from_millis(i), 1500, &mut rng);
        }
        let survived = (n - l.stats().dropped_ber) as f64;
        let sd = (n as f64 * frame * (1.0 - frame)).sqrt();
        assert!(
            (survived - n as f64 * frame).abs() < 4.0 * sd,
            "survived {survived}, expected {} (frame bits), not {} (wire bits)",
            n as f64 * frame,
            n as f64 * wire
        );
    }

    #[test]
    fn reorder_and_duplicate() {
        let mut l = Link::new(LinkConfig {
            rate_bps: 8e6,
            delay: Duration::from_millis(10),
            queue_bytes: 0,
            framing: Framing::Raw,
            reorder: 1.0,
            reorder_delay: Duration::from_millis(3),
            duplicate: 1.0,
            ..LinkConfig::default()
        });
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        assert_eq!(
            l.transmit(Instant::ZERO, 1000, &mut rng),
            Fate::Delivered {
                at: Instant::from_millis(14),
                duplicate_at: Some(Instant::from_millis(15)),
            }
        );
        assert_eq!(l.stats().reordered, 1);
        assert_eq!(l.stats().duplicated, 1);
        assert_eq!(l.stats().wire_bytes, 1000, "duplicates are made elsewhere");
    }

    #[test]
    fn randomness_is_drawn_only_when_needed() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let mut l = Link::new(LinkConfig::default());
        for i in 0..100 {
            l.transmit(Instant::from_millis(i), 100, &mut rng);
        }
        assert_eq!(rng.get_word_pos(), 0, "a perfect link draws nothing");

        // A lossy link draws exactly one value per frame, whatever the outcome.
        let mut l = Link::new(LinkConfig {
            loss: 0.5,
            queue_bytes: 1,
            ..LinkConfig::default()
        });
        let mut a = ChaCha8Rng::seed_from_u64(5);
        let mut b = ChaCha8Rng::seed_from_u64(5);
        for i in 0..10 {
            l.transmit(Instant::from_millis(i), 100, &mut a);
            uniform(&mut b);
        }
        assert_eq!(a.get_word_pos(), b.get_word_pos());
    }
}
