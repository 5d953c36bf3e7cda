//! `tinygram tun link`: the simulator's link model between two network
//! namespaces, in real time. A TUN device in each namespace carries the
//! kernel's IPv4 packets to this process, which offers each one to the
//! direction's [`tinygram_sim::link::Link`] (drop-tail queue, serializer,
//! propagation delay, seeded random loss) at the moment it was read, holds
//! it until the arrival time the model answers, and then writes it to the
//! other namespace's device. The same shell as Mahimahi's delay and link
//! shells (Netravali et al., "Mahimahi: Accurate Record-and-Replay for
//! HTTP", 3), with the simulator's link in place of theirs.
//!
//! The real clock lives here: it is read once per packet and handed to the
//! link model as an argument, which never reads one. Each direction draws
//! its random numbers from its own ChaCha stream of `--seed`, so the k-th
//! packet of a direction meets the same loss draw in every run.

use crate::device::{DeviceConfig, Tun, TunOptions};
use crate::netns::Netns;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io;
use std::net::Ipv4Addr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration as StdDuration;
use tinygram_proto::Instant;
use tinygram_sim::link::{Fate, Link, LinkConfig, LinkStats};

/// The two directions of the link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    /// Packets the left namespace sends, delivered to the right one.
    LeftToRight = 0,
    /// Packets the right namespace sends, delivered to the left one.
    RightToLeft = 1,
}

impl Dir {
    pub const BOTH: [Dir; 2] = [Dir::LeftToRight, Dir::RightToLeft];

    pub fn name(self) -> &'static str {
        match self {
            Dir::LeftToRight => "left->right",
            Dir::RightToLeft => "right->left",
        }
    }
}

/// Bytes of packets held at once (waiting in the model's queue or in
/// propagation), beyond which new packets are dropped (`dropped_held`):
/// with `--queue` bounded only the propagation delay holds packets, but an
/// unbounded queue or a long delay at a high rate must not grow without end.
pub const MAX_HELD_BYTES: usize = 128 << 20;

/// How late packets were written against the arrival time the model gave
/// them: a log2 histogram in microseconds (bucket k holds [2^(k-1), 2^k) us,
/// bucket 0 under 1 us), bounded whatever the run's length.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Lateness {
    pub buckets: [u64; 32],
    pub max_ns: u64,
    pub sum_ns: u64,
    pub count: u64,
}

impl Lateness {
    fn record(&mut self, late_ns: u64) {
        let us = late_ns / 1000;
        let k = (64 - us.leading_zeros()).min(31) as usize;
        self.buckets[k] += 1;
        self.max_ns = self.max_ns.max(late_ns);
        self.sum_ns = self.sum_ns.saturating_add(late_ns);
        self.count += 1;
    }

    /// An upper bound on the `q` quantile (0..=1), in microseconds: the top
    /// of the histogram bucket it falls in.
    pub fn quantile_us(&self, q: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let want = ((self.count as f64) * q).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (k, n) in self.buckets.iter().enumerate() {
            seen += n;
            if seen >= want {
                let top = if k == 0 { 1 } else { 1u64 << k };
                return top.min(self.max_ns.div_ceil(1000).max(1));
            }
        }
        self.max_ns / 1000
    }

    pub fn mean_us(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum_ns as f64 / self.count as f64 / 1000.0
        }
    }
}

/// Counters of one direction: the model's own, and the forwarder's.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DirectionStats {
    /// The link model's counters (frames offered, wire bytes, drops by reason).
    pub link: LinkStats,
    /// IP bytes offered to the model.
    pub offered_bytes: u64,
    /// Packets written to the far side's device, and their IP bytes.
    pub delivered: u64,
    pub delivered_bytes: u64,
    /// Packets that were not IPv4 (IPv6 neighbour discovery and the like), not forwarded.
    pub ignored_not_ipv4: u64,
    /// Packets dropped because [`MAX_HELD_BYTES`] were already held.
    pub dropped_held: u64,
    /// Packets the far side's device refused (its queue full).
    pub dropped_device: u64,
    /// How late deliveries were against the model's arrival times.
    pub lateness: Lateness,
}

/// A packet held until its arrival time; ordered by (arrival, offer order).
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Held {
    at: Instant,
    order: u64,
    pkt: Vec<u8>,
}

/// One direction: the model, its random stream, the packets it holds.
#[derive(Debug)]
struct Direction {
    link: Link,
    rng: ChaCha8Rng,
    held: BinaryHeap<Reverse<Held>>,
    held_bytes: usize,
    order: u64,
    stats: DirectionStats,
}

/// The two directions' link models and the packets in them: no clock and no
/// devices (the caller hands in the time), so it is tested alone.
#[derive(Debug)]
pub struct Shaper {
    dirs: [Direction; 2],
}

impl Shaper {
    /// `configs[d]` for direction `d`; direction `d` draws from stream `d` of `seed`.
    pub fn new(configs: [LinkConfig; 2], seed: u64) -> Shaper {
        let [a, b] = configs;
        let dir = |cfg: LinkConfig, stream: u64| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            rng.set_stream(stream);
            Direction {
                link: Link::new(cfg),
                rng,
                held: BinaryHeap::new(),
                held_bytes: 0,
                order: 0,
                stats: DirectionStats::default(),
            }
        };
        Shaper {
            dirs: [dir(a, 0), dir(b, 1)],
        }
    }

    /// Offers a packet read at `now`: what the model did with it, or `None`
    /// when it never reached the model (not IPv4, or over [`MAX_HELD_BYTES`]).
    pub fn offer(&mut self, dir: Dir, now: Instant, pkt: &[u8]) -> Option<Fate> {
        let d = &mut self.dirs[dir as usize];
        if pkt.first().is_none_or(|b| b >> 4 != 4) {
            d.stats.ignored_not_ipv4 += 1;
            return None;
        }
        if d.held_bytes.saturating_add(pkt.len()) > MAX_HELD_BYTES {
            d.stats.dropped_held += 1;
            return None;
        }
        d.stats.offered_bytes += pkt.len() as u64;
        let fate = d.link.transmit(now, pkt.len(), &mut d.rng);
        if let Fate::Delivered { at, duplicate_at } = fate {
            for t in std::iter::once(at).chain(duplicate_at) {
                d.held_bytes += pkt.len();
                d.order += 1;
                d.held.push(Reverse(Held {
                    at: t,
                    order: d.order,
                    pkt: pkt.to_vec(),
                }));
            }
        }
        Some(fate)
    }

    /// The earliest arrival time of a held packet, either direction.
    pub fn next_due(&self) -> Option<Instant> {
        self.dirs
            .iter()
            .filter_map(|d| d.held.peek().map(|Reverse(h)| h.at))
            .min()
    }

    /// The next packet of `dir` due by `now`, with its arrival time.
    pub fn pop_due(&mut self, dir: Dir, now: Instant) -> Option<(Instant, Vec<u8>)> {
        let d = &mut self.dirs[dir as usize];
        if d.held.peek().is_none_or(|Reverse(h)| h.at > now) {
            return None;
        }
        let Reverse(h) = d.held.pop()?;
        d.held_bytes -= h.pkt.len();
        Some((h.at, h.pkt))
    }

    /// Records what happened to a packet handed back by [`pop_due`](Self::pop_due).
    pub fn delivered(&mut self, dir: Dir, due: Instant, written_at: Instant, len: usize, ok: bool) {
        let s = &mut self.dirs[dir as usize].stats;
        if ok {
            s.delivered += 1;
            s.delivered_bytes += len as u64;
            s.lateness
                .record(written_at.saturating_duration_since(due).as_nanos() as u64);
        } else {
            s.dropped_device += 1;
        }
    }

    /// Packets held in `dir` now.
    pub fn held(&self, dir: Dir) -> usize {
        self.dirs[dir as usize].held.len()
    }

    /// The counters of `dir`, the model's included.
    pub fn stats(&self, dir: Dir) -> DirectionStats {
        let d = &self.dirs[dir as usize];
        DirectionStats {
            link: d.link.stats().clone(),
            ..d.stats.clone()
        }
    }

    pub fn config(&self, dir: Dir) -> &LinkConfig {
        self.dirs[dir as usize].link.config()
    }
}

/// One end of the link: a namespace, the TUN device in it, its address.
#[derive(Debug)]
pub struct LinkEnd {
    pub ns: Netns,
    pub dev: String,
    pub addr: Ipv4Addr,
}

/// Where the link goes: two namespaces, one subnet, one MTU.
#[derive(Debug)]
pub struct LinkSetup {
    pub left: Netns,
    pub right: Netns,
    /// The left side's address; the right side takes the next one.
    pub left_addr: Ipv4Addr,
    pub prefix: u8,
    pub mtu: u16,
}

/// The two ends, their devices open and configured.
#[derive(Debug)]
pub struct LinkEnds {
    pub left: LinkEnd,
    pub right: LinkEnd,
    pub prefix: u8,
    pub mtu: u16,
    devices: Arc<[Tun; 2]>,
}

/// The device names, the same in every namespace (each has its own).
pub const LEFT_DEV: &str = "tgl0";
pub const RIGHT_DEV: &str = "tgr0";

/// Opens a TUN device named `dev` inside `ns` (by a thread that entered it),
/// with `addr/prefix` on it, plain packets (no offloads: each packet crosses
/// the model at its own size), IPv6 off on it (no neighbour discovery noise).
fn open_end(
    ns: &Netns,
    dev: &str,
    addr: Ipv4Addr,
    peer: Ipv4Addr,
    prefix: u8,
    mtu: u16,
) -> io::Result<Tun> {
    let cfg = DeviceConfig {
        name: dev.to_string(),
        addr: peer,
        prefix,
        kernel_addr: addr,
        mtu,
    };
    let opts = TunOptions {
        offload: false,
        busy_poll: false,
    };
    let tun = ns.run(|| -> io::Result<Tun> {
        let _ = std::fs::write(format!("/proc/sys/net/ipv6/conf/{dev}/disable_ipv6"), "1");
        let tun = Tun::open_with(&cfg, opts)?;
        let _ = std::fs::write(format!("/proc/sys/net/ipv6/conf/{dev}/disable_ipv6"), "1");
        Ok(tun)
    })??;
    if !tun.configured {
        return Err(io::Error::other(format!(
            "opened {dev} in namespace {} but could not configure it (root needed)",
            ns.name()
        )));
    }
    Ok(tun)
}

impl LinkEnds {
    /// Opens and configures both devices.
    pub fn open(setup: LinkSetup) -> io::Result<LinkEnds> {
        if !(8..=30).contains(&setup.prefix) {
            return Err(io::Error::other(format!(
                "prefix /{} for the link's subnet: expected 8 to 30",
                setup.prefix
            )));
        }
        let right_addr = Ipv4Addr::from(u32::from(setup.left_addr).wrapping_add(1));
        let mask = u32::MAX << (32 - u32::from(setup.prefix));
        let host_bits = |a: Ipv4Addr| u32::from(a) & !mask;
        if u32::from(right_addr) & mask != u32::from(setup.left_addr) & mask
            || host_bits(setup.left_addr) == 0
            || host_bits(right_addr) == !mask
        {
            return Err(io::Error::other(format!(
                "{}/{}: the left side's address and the next one must both be host addresses of the subnet",
                setup.left_addr, setup.prefix
            )));
        }
        let l = open_end(
            &setup.left,
            LEFT_DEV,
            setup.left_addr,
            right_addr,
            setup.prefix,
            setup.mtu,
        )?;
        let r = open_end(
            &setup.right,
            RIGHT_DEV,
            right_addr,
            setup.left_addr,
            setup.prefix,
            setup.mtu,
        )?;
        Ok(LinkEnds {
            left: LinkEnd {
                ns: setup.left,
                dev: LEFT_DEV.into(),
                addr: setup.left_addr,
            },
            right: LinkEnd {
                ns: setup.right,
                dev: RIGHT_DEV.into(),
                addr: right_addr,
            },
            prefix: setup.prefix,
            mtu: setup.mtu,
            devices: Arc::new([l, r]),
        })
    }
}

/// How to run the link.
#[derive(Clone, Debug)]
pub struct LinkOptions {
    /// The model of each direction, indexed by [`Dir`].
    pub configs: [LinkConfig; 2],
    pub seed: u64,
    /// Stop after this long (default: when `stop` is set).
    pub duration: Option<StdDuration>,
    pub stop: Arc<AtomicBool>,
    /// Run the forwarding thread at real-time priority when allowed
    /// (root); see [`LinkReport::realtime`] for whether it was.
    pub realtime: bool,
}

/// What a run did, per direction.
#[derive(Clone, Debug)]
pub struct LinkReport {
    pub elapsed: StdDuration,
    pub stopped_by: &'static str,
    pub dirs: [DirectionStats; 2],
    /// Packets still held when the run ended (never delivered).
    pub held_at_end: [usize; 2],
    /// Whether the forwarding thread ran at real-time priority, or why not.
    pub realtime: Result<(), String>,
}

/// Sets this thread's timer slack to 1 ns, so ppoll wakes when asked, not up
/// to 50 us later (prctl(2) PR_SET_TIMERSLACK).
fn tight_timer_slack() {
    // SAFETY: PR_SET_TIMERSLACK takes one unsigned long; no memory is passed.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong);
    }
}

/// Real-time priority for this thread (SCHED_FIFO, priority
/// [`REALTIME_PRIORITY`]): a packet due now is written now even when the
/// machine's cores are busy with other work, instead of when the scheduler
/// next gets round to this thread (milliseconds, under load). The thread
/// sleeps in ppoll between packets; the kernel's real-time throttling
/// (sched_rt_runtime_us) still bounds it.
fn realtime_priority() -> Result<(), String> {
    let p = libc::sched_param {
        sched_priority: REALTIME_PRIORITY,
    };
    // SAFETY: the calling thread's handle and a valid sched_param.
    let r = unsafe { libc::pthread_setschedparam(libc::pthread_self(), libc::SCHED_FIFO, &p) };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::from_raw_os_error(r).to_string())
    }
}

/// Low among real-time priorities (1 to 99): above every ordinary process,
/// below the kernel's own real-time threads.
pub const REALTIME_PRIORITY: i32 = 10;

/// ppoll(2) on both devices until one is readable or `d` has passed.
fn wait_either(fds: [i32; 2], d: StdDuration) -> io::Result<()> {
    let mut pfds = fds.map(|fd| libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    });
    let ts = libc::timespec {
        tv_sec: d.as_secs() as libc::time_t,
        tv_nsec: d.subsec_nanos() as libc::c_long,
    };
    // SAFETY: two valid pollfds, a valid timespec, no signal mask change.
    let r = unsafe { libc::ppoll(pfds.as_mut_ptr(), 2, &ts, std::ptr::null()) };
    if r < 0 {
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
    Ok(())
}

/// Packets read from one device before looking at the other and at due
/// deliveries again (fairness between the directions).
const READ_BATCH: usize = 64;
/// The longest sleep, so a stop request is seen within it.
const MAX_SLEEP: StdDuration = StdDuration::from_millis(20);

/// Forwards packets both ways through the link models until `opts.stop` is
/// set or `opts.duration` has passed.
pub fn forward(ends: &LinkEnds, opts: &LinkOptions) -> io::Result<LinkReport> {
    forward_devices(&ends.devices, opts)
}

fn forward_devices(devs: &[Tun; 2], opts: &LinkOptions) -> io::Result<LinkReport> {
    tight_timer_slack();
    let realtime = if opts.realtime {
        realtime_priority()
    } else {
        Err("not asked".into())
    };
    let mut shaper = Shaper::new(opts.configs.clone(), opts.seed);
    let start = std::time::Instant::now();
    let clock = || Instant::from_nanos(start.elapsed().as_nanos() as u64);
    let mut buf = vec![0u8; 65_536];
    let fds = [devs[0].raw_fd(), devs[1].raw_fd()];
    let stopped_by = loop {
        if opts.stop.load(Ordering::Relaxed) {
            break "stop requested";
        }
        if opts.duration.is_some_and(|d| start.elapsed() >= d) {
            break "duration reached";
        }
        for dir in Dir::BOTH {
            let out = &devs[1 - dir as usize];
            while let Some((due, pkt)) = shaper.pop_due(dir, clock()) {
                let ok = out.send(&pkt).map_err(|e| {
                    io::Error::new(
                        e.kind(),
                        format!("{}: writing to the far side's device: {e}", dir.name()),
                    )
                })?;
                shaper.delivered(dir, due, clock(), pkt.len(), ok);
            }
        }
        let mut read_any = false;
        for dir in Dir::BOTH {
            let inp = &devs[dir as usize];
            for _ in 0..READ_BATCH {
                let n = inp.recv(&mut buf).map_err(|e| {
                    io::Error::new(
                        e.kind(),
                        format!("{}: reading the near side's device: {e}", dir.name()),
                    )
                })?;
                let Some(n) = n else { break };
                read_any = true;
                shaper.offer(dir, clock(), &buf[..n]);
            }
        }
        if read_any {
            continue;
        }
        let now = clock();
        let mut sleep = MAX_SLEEP;
        if let Some(due) = shaper.next_due() {
            sleep = sleep.min(due.saturating_duration_since(now));
        }
        if let Some(d) = opts.duration {
            sleep = sleep.min(d.saturating_sub(start.elapsed()));
        }
        if !sleep.is_zero() {
            wait_either(fds, sleep)?;
        }
    };
    Ok(LinkReport {
        elapsed: start.elapsed(),
        stopped_by,
        dirs: Dir::BOTH.map(|d| shaper.stats(d)),
        held_at_end: Dir::BOTH.map(|d| shaper.held(d)),
        realtime,
    })
}

/// A link forwarding on its own thread; stopped (and its namespaces, if it
/// made them, deleted) when dropped.
pub struct LinkRun {
    pub ends: LinkEnds,
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<io::Result<LinkReport>>>,
}

impl LinkRun {
    /// Starts forwarding on a new thread (`opts.stop` also stops it).
    pub fn start(ends: LinkEnds, opts: LinkOptions) -> LinkRun {
        let devices = ends.devices.clone();
        let stop = opts.stop.clone();
        let handle = std::thread::Builder::new()
            .name("tun-link".into())
            .spawn(move || forward_devices(&devices, &opts))
            .expect("spawn the link's thread");
        LinkRun {
            ends,
            stop,
            handle: Some(handle),
        }
    }

    /// Stops forwarding; what the run did.
    pub fn stop(mut self) -> io::Result<LinkReport> {
        self.stop.store(true, Ordering::Relaxed);
        let h = self.handle.take().expect("running");
        h.join()
            .map_err(|_| io::Error::other("the link's thread panicked"))?
    }
}

impl Drop for LinkRun {
    fn drop(&mut self) {
        if let Some(h) = self.handle.take() {
            self.stop.store(true, Ordering::Relaxed);
            let _ = h.join();
        }
    }
}

/// The exit summary: per direction, packets and bytes in and out, drops by
/// reason, and how late deliveries were against the model's times.
pub fn summary(ends: &LinkEnds, r: &LinkReport) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "tun link: {:.3} s, {}",
        r.elapsed.as_secs_f64(),
        r.stopped_by
    );
    for dir in Dir::BOTH {
        let d = &r.dirs[dir as usize];
        let (from, to) = match dir {
            Dir::LeftToRight => (&ends.left, &ends.right),
            Dir::RightToLeft => (&ends.right, &ends.left),
        };
        let _ = writeln!(
            s,
            "  {} ({} {} -> {} {}):\n    {} packets ({} bytes) offered, {} delivered ({} bytes), {} held at the end\n    \
             dropped: {} queue, {} loss, {} bit errors, {} over the hold limit, {} device full; {} not IPv4 (not forwarded)\n    \
             lateness against the model's arrival times: mean {:.0} us, p50 <= {} us, p99 <= {} us, max {} us",
            dir.name(),
            from.ns.name(),
            from.addr,
            to.ns.name(),
            to.addr,
            d.link.frames,
            d.offered_bytes,
            d.delivered,
            d.delivered_bytes,
            r.held_at_end[dir as usize],
            d.link.dropped_queue,
            d.link.dropped_loss,
            d.link.dropped_ber,
            d.dropped_held,
            d.dropped_device,
            d.ignored_not_ipv4,
            d.lateness.mean_us(),
            d.lateness.quantile_us(0.5),
            d.lateness.quantile_us(0.99),
            d.lateness.max_ns / 1000,
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use tinygram_sim::link::{DropReason, Framing};

    fn ipv4(len: usize) -> Vec<u8> {
        let mut p = vec![0u8; len];
        p[0] = 0x45;
        p
    }

    fn cfg(rate_bps: f64, delay_ms: u64, queue: usize, loss: f64) -> LinkConfig {
        LinkConfig {
            rate_bps,
            delay: StdDuration::from_millis(delay_ms),
            queue_bytes: queue,
            loss,
            framing: Framing::Raw,
            ..LinkConfig::default()
        }
    }

    /// A packet is held for its serialization plus the propagation delay,
    /// and only that direction's delay applies.
    #[test]
    fn delay_and_serialization_per_direction() {
        let mut s = Shaper::new([cfg(8e6, 10, 0, 0.0), cfg(0.0, 3, 0, 0.0)], 1);
        let t0 = Instant::from_millis(100);
        s.offer(Dir::LeftToRight, t0, &ipv4(1000));
        s.offer(Dir::RightToLeft, t0, &ipv4(1000));
        // 1000 bytes at 8 Mbit/s = 1 ms, then 10 ms.
        assert_eq!(s.next_due(), Some(Instant::from_millis(103)));
        assert!(s
            .pop_due(Dir::LeftToRight, Instant::from_millis(110))
            .is_none());
        let (at, p) = s
            .pop_due(Dir::LeftToRight, Instant::from_millis(111))
            .unwrap();
        assert_eq!((at, p.len()), (Instant::from_millis(111), 1000));
        let (at, _) = s
            .pop_due(Dir::RightToLeft, Instant::from_millis(200))
            .unwrap();
        assert_eq!(at, Instant::from_millis(103));
        assert_eq!(s.next_due(), None);
    }

    /// Back-to-back packets leave one serialization time apart, in order.
    #[test]
    fn the_serializer_spaces_packets() {
        let mut s = Shaper::new([cfg(8e6, 0, 0, 0.0), cfg(0.0, 0, 0, 0.0)], 1);
        for _ in 0..3 {
            s.offer(Dir::LeftToRight, Instant::from_millis(1), &ipv4(1000));
        }
        let far = Instant::from_millis(1000);
        let ats: Vec<u64> = std::iter::from_fn(|| s.pop_due(Dir::LeftToRight, far))
            .map(|(at, _)| at.as_micros())
            .collect();
        assert_eq!(ats, vec![2000, 3000, 4000]);
    }

    #[test]
    fn drop_tail_counts_queue_drops() {
        let mut s = Shaper::new([cfg(8e6, 0, 2500, 0.0), cfg(0.0, 0, 0, 0.0)], 1);
        for _ in 0..4 {
            s.offer(Dir::LeftToRight, Instant::from_millis(1), &ipv4(1000));
        }
        let st = s.stats(Dir::LeftToRight);
        assert_eq!((st.link.frames, st.link.dropped_queue), (4, 2));
        assert_eq!(s.held(Dir::LeftToRight), 2);
    }

    /// Loss is drawn from the direction's own stream: the same seed drops the
    /// same packets, another seed other ones, the fraction near the one asked.
    #[test]
    fn seeded_loss_per_direction() {
        let run = |seed: u64, other_traffic: bool| {
            let mut s = Shaper::new([cfg(0.0, 0, 0, 0.1), cfg(0.0, 0, 0, 0.1)], seed);
            let mut lost = Vec::new();
            for i in 0..10_000u64 {
                if other_traffic {
                    s.offer(Dir::RightToLeft, Instant::from_micros(i), &ipv4(40));
                }
                let f = s.offer(Dir::LeftToRight, Instant::from_micros(i), &ipv4(100));
                lost.push(matches!(f, Some(Fate::Dropped(DropReason::Loss))));
            }
            lost
        };
        let a = run(7, false);
        assert_eq!(
            a,
            run(7, true),
            "the other direction's packets changed the draws"
        );
        assert_ne!(a, run(8, false));
        let n = a.iter().filter(|&&l| l).count();
        // Binomial(10000, 0.1): sd 30; 5 sd either side.
        assert!((850..=1150).contains(&n), "{n} lost of 10000");
    }

    #[test]
    fn non_ipv4_is_ignored_and_held_bytes_are_bounded() {
        let mut s = Shaper::new([cfg(0.0, 1000, 0, 0.0), cfg(0.0, 0, 0, 0.0)], 1);
        s.offer(Dir::LeftToRight, Instant::from_millis(1), &[0x60; 40]);
        s.offer(Dir::LeftToRight, Instant::from_millis(1), &[]);
        let big = ipv4(65_535);
        let fits = MAX_HELD_BYTES / big.len();
        for _ in 0..fits + 3 {
            s.offer(Dir::LeftToRight, Instant::from_millis(1), &big);
        }
        let st = s.stats(Dir::LeftToRight);
        assert_eq!(st.ignored_not_ipv4, 2);
        assert_eq!(st.dropped_held, 3);
        assert_eq!(s.held(Dir::LeftToRight), fits);
    }

    #[test]
    fn lateness_quantiles_are_bucket_bounds() {
        let mut l = Lateness::default();
        for ns in [500, 3_000, 3_500, 100_000] {
            l.record(ns);
        }
        assert_eq!(l.quantile_us(0.5), 4);
        assert_eq!(l.quantile_us(1.0), 100);
        assert_eq!(l.max_ns, 100_000);
        assert!((l.mean_us() - 26.75).abs() < 1e-9);
    }
}
