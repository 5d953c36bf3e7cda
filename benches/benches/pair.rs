//! Two engines in memory, tinygram's and smoltcp's, moving the same bulk
//! transfer through the same harness: IPv4 packets as bytes, checksums
//! computed on send and verified on receipt, every byte the receiving
//! application reads compared with what was written; MSS 1460, 4 MiB
//! buffers with window scaling, delayed ACKs on both.
//!
//! Two shapes: *lockstep* moves one data segment, then everything the
//! receiver answers, then the next; *batch* moves everything the sender can
//! send, then everything the receiver answers. Criterion times each engine and
//! shape; then interleaved rounds (`TINYGRAM_PAIR_ROUNDS`, default 3) print
//! ns per data segment, wall and thread CPU time, and the ratios from the
//! same rounds. A criterion filter that matches nothing
//! (`cargo bench --bench pair -- rounds-only`) leaves only the rounds.
//!
//! The transfer is 1 GB (`TINYGRAM_PAIR_BYTES` sets another size).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::collections::VecDeque;
use std::time::{Duration as WallDuration, Instant as WallInstant};

use tinygram_proto::wire::{Ipv4Repr, IPV4_HEADER_LEN};
use tinygram_proto::{Config, Connection, Instant, IsnSeries, OptionSet, SeqNumber, TcpRepr};

use smoltcp::iface::{Config as IfaceConfig, Interface, SocketHandle, SocketSet};
use smoltcp::phy::{self, Device, DeviceCapabilities, Medium};
use smoltcp::socket::tcp;
use smoltcp::wire::{HardwareAddress, IpAddress, IpCidr};

const BUF: usize = 4 << 20;
const MSS: usize = 1460;
const MTU: usize = MSS + 40;
/// The byte stream is this pattern repeated; a prime period so no segment
/// boundary lines up with it.
const PERIOD: usize = 251;
/// Largest application write or read.
const CHUNK: usize = 64 << 10;

fn total_bytes() -> u64 {
    std::env::var("TINYGRAM_PAIR_BYTES")
        .ok()
        .map(|s| {
            s.parse()
                .unwrap_or_else(|_| panic!("TINYGRAM_PAIR_BYTES={s:?} is not a byte count"))
        })
        .unwrap_or(1_000_000_000)
}

/// The stream's bytes: `pattern()[off % PERIOD..][..n]` for any n <= CHUNK.
fn pattern() -> Vec<u8> {
    (0..PERIOD + CHUNK)
        .map(|i| ((i % PERIOD) as u32 * 131 + 7) as u8)
        .collect()
}

/// Frames in flight one way (each a buffer and where in it the packet
/// starts), with their spent buffers kept for reuse.
#[derive(Default)]
struct Wire {
    frames: VecDeque<(Vec<u8>, usize)>,
    spare: Vec<Vec<u8>>,
}

/// What one run measured.
struct Outcome {
    data_segments: u64,
    elapsed: WallDuration,
    /// CPU time of this thread over the run, in seconds.
    cpu_s: f64,
}

/// CPU time of the calling thread in seconds: unlike wall time, not inflated
/// by other processes on a busy machine.
fn thread_cpu_s() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the call's duration.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed");
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// The engine-specific half of the harness.
trait Engine {
    /// Sender: take the receiver's frames, let the application write, emit
    /// at most `max` frames. Returns data segments emitted.
    fn send(&mut self, now_us: u64, max: usize) -> u64;
    /// Receiver: take the sender's frames, let the application read and check
    /// every byte, emit what it answers. Returns bytes read.
    fn receive(&mut self, now_us: u64) -> u64;
    /// The earliest timer of either side, in microseconds.
    fn next_timer(&mut self, now_us: u64) -> Option<u64>;
    /// Frames on the wires, either way, not yet taken by their receiver.
    fn frames_queued(&self) -> usize;
    /// Both sides' state, for the message when a transfer stalls.
    fn describe(&self) -> String;
}

/// Runs one transfer of `total` bytes, `max` data frames per step.
fn transfer<E: Engine>(mut e: E, total: u64, max: usize) -> Outcome {
    let started = WallInstant::now();
    let cpu0 = thread_cpu_s();
    let mut now = 0u64;
    let mut read = 0u64;
    let mut data_segments = 0u64;
    while read < total {
        let sent = e.send(now, max);
        data_segments += sent;
        let emitted = e.frames_queued();
        let got = e.receive(now);
        read += got;
        let answered = e.frames_queued();
        if sent == 0 && got == 0 && emitted == 0 && answered == 0 {
            // Nothing moved: jump virtual time to the next timer.
            let Some(next) = e.next_timer(now) else {
                panic!(
                    "the transfer stalled at {read} of {total} bytes with no timer armed:\n{}",
                    e.describe()
                );
            };
            now = now.max(next);
        } else {
            now += 1;
        }
    }
    assert_eq!(read, total, "the receiver read more than was written");
    Outcome {
        data_segments,
        elapsed: started.elapsed(),
        cpu_s: thread_cpu_s() - cpu0,
    }
}

/// Checks `got` against the stream at offset `off`.
fn check(pattern: &[u8], off: u64, got: &[u8]) {
    let at = (off % PERIOD as u64) as usize;
    assert!(
        got == &pattern[at..at + got.len()],
        "a byte differs within {} bytes at stream offset {off}",
        got.len()
    );
}

// ---- tinygram --------------------------------------------------------------

struct Tinygram {
    a: Connection,
    b: Connection,
    ab: Wire,
    ba: Wire,
    ip_ab: Ipv4Repr,
    ip_ba: Ipv4Repr,
    sink: Vec<u8>,
    pattern: Vec<u8>,
    written: u64,
    read: u64,
    total: u64,
}

/// Room the engine leaves in front of a payload: the IPv4 header and the
/// longest TCP header.
const ROOM: usize = IPV4_HEADER_LEN + 60;

impl Tinygram {
    fn new(total: u64) -> Self {
        let cfg = Config {
            mss: MSS as u16,
            rcv_buf: BUF,
            snd_buf: BUF,
            options: OptionSet {
                window_scale: true,
                ..OptionSet::default()
            },
            ..Config::default()
        };
        let ip = |src, dst| Ipv4Repr {
            src,
            dst,
            ttl: 64,
            ident: 0,
            dont_frag: true,
            payload_len: 0,
            ecn: 0,
        };
        let mut t = Tinygram {
            a: Connection::connect(
                cfg.clone(),
                40000,
                7,
                IsnSeries::new(SeqNumber(7)),
                Instant::ZERO,
            ),
            b: Connection::listen(cfg, 7, IsnSeries::new(SeqNumber(9))),
            ab: Wire::default(),
            ba: Wire::default(),
            ip_ab: ip([10, 0, 0, 1], [10, 0, 0, 2]),
            ip_ba: ip([10, 0, 0, 2], [10, 0, 0, 1]),
            sink: vec![0; CHUNK],
            pattern: pattern(),
            written: 0,
            read: 0,
            total,
        };
        // The handshake, before the measurement, with no data to write yet.
        t.total = 0;
        for _ in 0..4 {
            t.send(0, usize::MAX);
            t.receive(0);
        }
        t.total = total;
        assert!(t.a.state().synchronized(), "the handshake did not complete");
        t
    }

    /// Asks `conn` for its next segment and encodes it as an IPv4 packet with
    /// both checksums, the headers written in front of the payload the engine
    /// left behind `ROOM` bytes. Returns whether it sent one and whether it
    /// carried data.
    fn emit(
        conn: &mut Connection,
        now: Instant,
        ip: &mut Ipv4Repr,
        wire: &mut Wire,
    ) -> Option<bool> {
        let mut frame = wire.spare.pop().unwrap_or_default();
        let mut repr = TcpRepr::default();
        if !conn.poll_transmit_with_headroom_into(now, &mut frame, ROOM, &mut repr) {
            wire.spare.push(frame);
            return None;
        }
        let payload_len = frame.len() - ROOM;
        let hl = repr.header_len();
        let start = ROOM - hl - IPV4_HEADER_LEN;
        ip.payload_len = hl + payload_len;
        ip.ident = ip.ident.wrapping_add(1);
        ip.emit(&mut frame[start..]).expect("a 20-byte header fits");
        repr.emit_in_place(
            &mut frame[start + IPV4_HEADER_LEN..],
            Some(ip.checksum_ctx()),
        )
        .expect("encodable");
        wire.frames.push_back((frame, start));
        Some(payload_len > 0)
    }

    /// Parses and verifies every frame in `wire` and hands it to `conn`.
    fn ingest(conn: &mut Connection, now: Instant, wire: &mut Wire) {
        let mut repr = TcpRepr::default();
        while let Some((frame, start)) = wire.frames.pop_front() {
            let packet = &frame[start..];
            let (ip, range) = Ipv4Repr::parse(packet).expect("a valid IPv4 header");
            let tcp = &packet[range];
            let body = TcpRepr::parse_into(tcp, Some(ip.checksum_ctx()), &mut repr)
                .expect("a valid TCP segment");
            conn.handle_segment(now, &repr, &tcp[body]);
            wire.spare.push(frame);
        }
    }
}

impl Engine for Tinygram {
    fn send(&mut self, now_us: u64, max: usize) -> u64 {
        let now = Instant::from_micros(now_us);
        Self::ingest(&mut self.a, now, &mut self.ba);
        self.a.handle_timeout(now);
        while self.written < self.total {
            let at = (self.written % PERIOD as u64) as usize;
            let n = (self.total - self.written).min(CHUNK as u64) as usize;
            match self.a.write(&self.pattern[at..at + n], false) {
                Ok(0) | Err(_) => break,
                Ok(k) => self.written += k as u64,
            }
        }
        let mut data = 0;
        let mut frames = 0;
        while frames < max {
            let Some(carried) = Self::emit(&mut self.a, now, &mut self.ip_ab, &mut self.ab) else {
                break;
            };
            frames += 1;
            data += u64::from(carried);
        }
        data
    }

    fn receive(&mut self, now_us: u64) -> u64 {
        let now = Instant::from_micros(now_us);
        Self::ingest(&mut self.b, now, &mut self.ab);
        self.b.handle_timeout(now);
        let before = self.read;
        loop {
            let n = self.b.read(&mut self.sink);
            if n == 0 {
                break;
            }
            check(&self.pattern, self.read, &self.sink[..n]);
            self.read += n as u64;
        }
        while Self::emit(&mut self.b, now, &mut self.ip_ba, &mut self.ba).is_some() {}
        self.read - before
    }

    fn next_timer(&mut self, _now_us: u64) -> Option<u64> {
        [self.a.poll_timeout(), self.b.poll_timeout()]
            .into_iter()
            .flatten()
            .min()
            .map(|t| t.as_micros())
    }

    fn frames_queued(&self) -> usize {
        self.ab.frames.len() + self.ba.frames.len()
    }

    fn describe(&self) -> String {
        format!(
            "written {} read {}\nsender {:?}\nreceiver {:?}\n{:?}",
            self.written,
            self.read,
            self.a,
            self.b,
            self.b.counters()
        )
    }
}

// ---- smoltcp ---------------------------------------------------------------

/// An IP-medium device over two one-way wires; `tx_limit` caps the frames
/// it accepts per step (1 in lockstep).
struct PairDevice {
    rx: Wire,
    tx: Wire,
    tx_limit: usize,
    tx_count: usize,
}

struct SRx<'a> {
    frame: Vec<u8>,
    start: usize,
    spent: &'a mut Vec<Vec<u8>>,
}

struct STx<'a> {
    out: &'a mut Wire,
    count: &'a mut usize,
}

impl phy::RxToken for SRx<'_> {
    fn consume<R, F: FnOnce(&[u8]) -> R>(self, f: F) -> R {
        let r = f(&self.frame[self.start..]);
        self.spent.push(self.frame);
        r
    }
}

impl phy::TxToken for STx<'_> {
    fn consume<R, F: FnOnce(&mut [u8]) -> R>(self, len: usize, f: F) -> R {
        let mut frame = self.out.spare.pop().unwrap_or_default();
        frame.clear();
        frame.resize(len, 0);
        let r = f(&mut frame);
        self.out.frames.push_back((frame, 0));
        *self.count += 1;
        r
    }
}

impl Device for PairDevice {
    type RxToken<'a> = SRx<'a>;
    type TxToken<'a> = STx<'a>;

    fn capabilities(&self) -> DeviceCapabilities {
        let mut caps = DeviceCapabilities::default();
        caps.medium = Medium::Ip;
        caps.max_transmission_unit = MTU;
        // Default checksum capabilities: compute on send, verify on receipt.
        caps
    }

    fn receive(
        &mut self,
        _t: smoltcp::time::Instant,
    ) -> Option<(Self::RxToken<'_>, Self::TxToken<'_>)> {
        let (frame, start) = self.rx.frames.pop_front()?;
        Some((
            SRx {
                frame,
                start,
                spent: &mut self.rx.spare,
            },
            STx {
                out: &mut self.tx,
                count: &mut self.tx_count,
            },
        ))
    }

    fn transmit(&mut self, _t: smoltcp::time::Instant) -> Option<Self::TxToken<'_>> {
        if self.tx_count < self.tx_limit {
            Some(STx {
                out: &mut self.tx,
                count: &mut self.tx_count,
            })
        } else {
            None
        }
    }
}

struct Smol {
    a: (Interface, PairDevice, SocketSet<'static>, SocketHandle),
    b: (Interface, PairDevice, SocketSet<'static>, SocketHandle),
    sink: Vec<u8>,
    pattern: Vec<u8>,
    written: u64,
    read: u64,
    total: u64,
}

fn smol_side(addr: [u8; 4]) -> (Interface, PairDevice, SocketSet<'static>, SocketHandle) {
    let mut dev = PairDevice {
        rx: Wire::default(),
        tx: Wire::default(),
        tx_limit: usize::MAX,
        tx_count: 0,
    };
    let iface_cfg = IfaceConfig::new(HardwareAddress::Ip);
    let mut iface = Interface::new(iface_cfg, &mut dev, smoltcp::time::Instant::ZERO);
    iface.update_ip_addrs(|a| {
        a.push(IpCidr::new(
            IpAddress::v4(addr[0], addr[1], addr[2], addr[3]),
            24,
        ))
        .expect("one address fits");
    });
    let sock = tcp::Socket::new(
        tcp::SocketBuffer::new(vec![0; BUF]),
        tcp::SocketBuffer::new(vec![0; BUF]),
    );
    let mut set = SocketSet::new(Vec::new());
    let h = set.add(sock);
    (iface, dev, set, h)
}

/// Moves frames from one side's device to the other's, and spent buffers back.
fn carry(from: &mut PairDevice, to: &mut PairDevice) {
    to.rx.frames.extend(from.tx.frames.drain(..));
    from.tx.spare.append(&mut to.rx.spare);
}

impl Smol {
    fn new(total: u64) -> Self {
        let mut s = Smol {
            a: smol_side([10, 0, 0, 1]),
            b: smol_side([10, 0, 0, 2]),
            sink: vec![0; CHUNK],
            pattern: pattern(),
            written: 0,
            read: 0,
            total,
        };
        s.b.2
            .get_mut::<tcp::Socket>(s.b.3)
            .listen(7)
            .expect("listen");
        let cx = s.a.0.context();
        s.a.2
            .get_mut::<tcp::Socket>(s.a.3)
            .connect(cx, (IpAddress::v4(10, 0, 0, 2), 7), 40000)
            .expect("connect");
        // The handshake, before the measurement, with no data to write yet.
        s.total = 0;
        for _ in 0..4 {
            s.send(0, usize::MAX);
            s.receive(0);
        }
        s.total = total;
        assert!(
            s.a.2.get::<tcp::Socket>(s.a.3).may_send(),
            "the handshake did not complete"
        );
        s
    }
}

fn st(us: u64) -> smoltcp::time::Instant {
    smoltcp::time::Instant::from_micros(us as i64)
}

impl Engine for Smol {
    fn send(&mut self, now_us: u64, max: usize) -> u64 {
        let now = st(now_us);
        carry(&mut self.b.1, &mut self.a.1);
        let (iface, dev, set, h) = &mut self.a;
        while iface.poll_ingress_single(now, dev, set)
            != smoltcp::iface::PollIngressSingleResult::None
        {}
        let sock = set.get_mut::<tcp::Socket>(*h);
        while self.written < self.total {
            let at = (self.written % PERIOD as u64) as usize;
            let n = (self.total - self.written).min(CHUNK as u64) as usize;
            match sock.send_slice(&self.pattern[at..at + n]) {
                Ok(0) | Err(_) => break,
                Ok(k) => self.written += k as u64,
            }
        }
        dev.tx_limit = max;
        dev.tx_count = 0;
        while iface.poll_egress(now, dev, set) != smoltcp::iface::PollResult::None {}
        // Count frames with a payload: longer than the IPv4 and TCP headers
        // (smoltcp sends no TCP options on data segments here).
        let data = dev
            .tx
            .frames
            .iter()
            .filter(|(f, _)| {
                let tcp_hl = usize::from(f[20 + 12] >> 4) * 4;
                f.len() > 20 + tcp_hl
            })
            .count() as u64;
        dev.tx_limit = usize::MAX;
        data
    }

    fn receive(&mut self, now_us: u64) -> u64 {
        let now = st(now_us);
        carry(&mut self.a.1, &mut self.b.1);
        let (iface, dev, set, h) = &mut self.b;
        while iface.poll_ingress_single(now, dev, set)
            != smoltcp::iface::PollIngressSingleResult::None
        {}
        let sock = set.get_mut::<tcp::Socket>(*h);
        let before = self.read;
        while let Ok(n) = sock.recv_slice(&mut self.sink) {
            if n == 0 {
                break;
            }
            check(&self.pattern, self.read, &self.sink[..n]);
            self.read += n as u64;
        }
        dev.tx_count = 0;
        while iface.poll_egress(now, dev, set) != smoltcp::iface::PollResult::None {}
        self.read - before
    }

    fn next_timer(&mut self, now_us: u64) -> Option<u64> {
        let now = st(now_us);
        let a = self.a.0.poll_at(now, &self.a.2);
        let b = self.b.0.poll_at(now, &self.b.2);
        [a, b]
            .into_iter()
            .flatten()
            .min()
            .map(|t| t.total_micros().max(0) as u64)
    }

    fn frames_queued(&self) -> usize {
        [&self.a.1, &self.b.1]
            .iter()
            .map(|d| d.rx.frames.len() + d.tx.frames.len())
            .sum()
    }

    fn describe(&self) -> String {
        format!(
            "sender {:?}\nreceiver {:?}",
            self.a.2.get::<tcp::Socket>(self.a.3),
            self.b.2.get::<tcp::Socket>(self.b.3)
        )
    }
}

// ---- the benchmark ---------------------------------------------------------

const SHAPES: [(&str, usize); 2] = [("lockstep", 1), ("batch", usize::MAX)];

fn run(engine: &str, total: u64, max: usize) -> Outcome {
    match engine {
        "tinygram" => transfer(Tinygram::new(total), total, max),
        _ => transfer(Smol::new(total), total, max),
    }
}

/// `TINYGRAM_PAIR_ONE=ENGINE:SHAPE` (e.g. `tinygram:lockstep`) runs that one
/// transfer and prints its data segment count, for profilers
/// (`valgrind --tool=callgrind`), instead of the benchmark.
fn one_run() -> bool {
    let Ok(which) = std::env::var("TINYGRAM_PAIR_ONE") else {
        return false;
    };
    let (engine, shape) = which.split_once(':').unwrap_or((&which, "lockstep"));
    let max = SHAPES
        .iter()
        .find(|(s, _)| *s == shape)
        .unwrap_or_else(|| panic!("TINYGRAM_PAIR_ONE: unknown shape {shape:?}: lockstep or batch"))
        .1;
    assert!(
        engine == "tinygram" || engine == "smoltcp",
        "TINYGRAM_PAIR_ONE: unknown engine {engine:?}: tinygram or smoltcp"
    );
    let total = total_bytes();
    let o = run(engine, total, max);
    println!(
        "{engine} {shape}: {total} bytes, {} data segments, {:.0} ns/segment wall, {:.0} CPU",
        o.data_segments,
        o.elapsed.as_nanos() as f64 / o.data_segments as f64,
        o.cpu_s * 1e9 / o.data_segments as f64
    );
    true
}

fn pair(c: &mut Criterion) {
    if one_run() {
        return;
    }
    let total = total_bytes();
    let segments = total.div_ceil(MSS as u64);
    let mut g = c.benchmark_group("pair");
    g.sample_size(10);
    g.warm_up_time(WallDuration::from_secs(1));
    g.measurement_time(WallDuration::from_secs(5));
    g.throughput(Throughput::Elements(segments));
    for (shape, max) in SHAPES {
        for engine in ["tinygram", "smoltcp"] {
            g.bench_function(format!("{engine}_{shape}"), |b| {
                b.iter_custom(|iters| (0..iters).map(|_| run(engine, total, max).elapsed).sum())
            });
        }
    }
    g.finish();

    // Interleaved rounds: each round runs every engine and shape once, so the
    // ratio compares runs made under the same machine conditions.
    let rounds: usize = std::env::var("TINYGRAM_PAIR_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3)
        .max(1);
    for (shape, max) in SHAPES {
        // Per round: (wall ns, CPU ns) per data segment, and the segment count.
        let mut ours = Vec::new();
        let mut theirs = Vec::new();
        for round in 0..rounds {
            let order = if round % 2 == 0 {
                ["tinygram", "smoltcp"]
            } else {
                ["smoltcp", "tinygram"]
            };
            for engine in order {
                let o = run(engine, total, max);
                let n = o.data_segments as f64;
                let r = (
                    o.elapsed.as_nanos() as f64 / n,
                    o.cpu_s * 1e9 / n,
                    o.data_segments,
                );
                if engine == "tinygram" {
                    ours.push(r);
                } else {
                    theirs.push(r);
                }
            }
        }
        let col = |v: &[(f64, f64, u64)], cpu: bool| -> Vec<f64> {
            v.iter().map(|r| if cpu { r.1 } else { r.0 }).collect()
        };
        let ratios = |cpu: bool| -> Vec<f64> {
            col(&theirs, cpu)
                .iter()
                .zip(col(&ours, cpu))
                .map(|(s, t)| s / t)
                .collect()
        };
        let (rw, rc) = (ratios(false), ratios(true));
        println!(
            "pair {shape}: {total} bytes, {rounds} interleaved rounds; medians per data segment: tinygram {:.0} ns wall, {:.0} ns CPU ({} segments); smoltcp {:.0} ns wall, {:.0} ns CPU ({} segments)",
            median(&col(&ours, false)),
            median(&col(&ours, true)),
            ours[0].2,
            median(&col(&theirs, false)),
            median(&col(&theirs, true)),
            theirs[0].2,
        );
        println!(
            "pair {shape}: tinygram runs at {:.2}x smoltcp's speed per segment (wall: median {:.2}x, min {:.2}x; CPU: median {:.2}x, min {:.2}x)",
            median(&rc),
            median(&rw),
            min(&rw),
            median(&rc),
            min(&rc)
        );
    }
}

fn min(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::INFINITY, f64::min)
}

fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

criterion_group!(benches, pair);
criterion_main!(benches);
