//! The engine target: two connections are driven (losslessly) into a chosen
//! state, then the input decodes into forged segments (near the live sequence
//! space or anywhere, with any flags and options), raw header bytes, timer
//! firings, application calls and deliveries between the two ends. After every
//! step the engine's invariants are checked (see [`check_conn`]).

use crate::input::Input;
use tinygram_proto::policy::{AckPolicyKind, SendPolicyKind};
use tinygram_proto::wire::{Nak, SackBlocks, Timestamps};
use tinygram_proto::{
    Config, Connection, DelackCount, Duration, Flags, Instant, IsnSeries, LossIs, SeqNumber,
    SlowStart, State, TcpOptions, TcpRepr, WindowUpdate,
};

/// Most segments one burst of `poll_transmit` calls may yield: the largest
/// send buffer here over the smallest MSS, plus control segments, with room
/// to spare. More means the engine is looping.
pub const MAX_SEGMENTS_PER_POLL: usize = 4096;
/// Most times `handle_timeout` may run at one instant before the timers move
/// past it. More means a timer re-arms itself in the past.
pub const MAX_TIMER_FIRINGS_PER_INSTANT: usize = 32;
/// Most decoded steps per input, so a long input cannot run for ever.
pub const MAX_STEPS: usize = 256;
/// Most segments waiting on the wire per direction (older ones are lost).
const WIRE_CAP: usize = 64;

const A: usize = 0;
const B: usize = 1;

/// States the target can start a run in, and which end is fed the input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Start {
    /// B listening, nothing received.
    Listen,
    /// A's SYN sent, nothing back.
    SynSent,
    /// B has answered A's SYN; its SYN-ACK is on the wire.
    SynReceived,
    /// Both established; A has written data that is in flight, unacknowledged.
    EstablishedSending,
    /// Both established; B has received A's data and not yet acknowledged it.
    EstablishedReceiving,
    /// A closed; its FIN is in flight.
    FinWait1,
    /// A's FIN acknowledged by B.
    FinWait2,
    /// B received A's FIN (fed B).
    CloseWait,
    /// B closed after A: its FIN in flight.
    LastAck,
    /// A received B's FIN after its own was acknowledged.
    TimeWait,
    /// Both closed at once: the FINs crossed.
    Closing,
    /// Both ends sent a SYN to each other (simultaneous open).
    SimultaneousOpen,
}

impl Start {
    pub const ALL: [Start; 12] = [
        Start::Listen,
        Start::SynSent,
        Start::SynReceived,
        Start::EstablishedSending,
        Start::EstablishedReceiving,
        Start::FinWait1,
        Start::FinWait2,
        Start::CloseWait,
        Start::LastAck,
        Start::TimeWait,
        Start::Closing,
        Start::SimultaneousOpen,
    ];

    /// The state the fed end is in once [`Harness::new`] has set it up with
    /// the default configuration.
    pub fn state(self) -> State {
        match self {
            Start::Listen => State::Listen,
            Start::SynSent => State::SynSent,
            Start::SynReceived => State::SynReceived,
            Start::EstablishedSending | Start::EstablishedReceiving => State::Established,
            Start::FinWait1 => State::FinWait1,
            Start::FinWait2 => State::FinWait2,
            Start::CloseWait => State::CloseWait,
            Start::LastAck => State::LastAck,
            Start::TimeWait => State::TimeWait,
            Start::Closing => State::Closing,
            Start::SimultaneousOpen => State::SynReceived,
        }
    }
}

/// A configuration drawn from two bytes of input: options, both policies,
/// buffer sizes, MSS and the odd knobs that change code paths.
pub fn config(inp: &mut Input) -> Config {
    let a = inp.u8();
    let b = inp.u8();
    let c = inp.u8();
    let mut cfg = Config::default();
    cfg.options.window_scale = a & 1 != 0;
    cfg.options.timestamps = a & 2 != 0;
    cfg.options.sack = a & 4 != 0;
    cfg.options.big_window = a & 8 != 0;
    cfg.options.nak = a & 16 != 0;
    cfg.send_policy = match b % 8 {
        0 => SendPolicyKind::NoDelay,
        1 => SendPolicyKind::Nagle,
        2 => SendPolicyKind::NagleLiberal,
        3 => SendPolicyKind::Minshall,
        4 => SendPolicyKind::Doupnik,
        5 => SendPolicyKind::DoupnikLiberal,
        6 => SendPolicyKind::Naglim(u32::from(b >> 3) % 4 + 1),
        _ => SendPolicyKind::Cork,
    };
    cfg.ack_policy = match (b >> 3) % 7 {
        0 => AckPolicyKind::Immediate,
        1 => AckPolicyKind::Delayed,
        2 => AckPolicyKind::Interactivity(u32::from(b >> 6) + 1),
        3 => AckPolicyKind::Fuzzball,
        4 => AckPolicyKind::Adaptive,
        5 => AckPolicyKind::QuickAck,
        _ => AckPolicyKind::Delayed,
    };
    cfg.rcv_buf = [1, 500, 4096, 65535, 262_144, 3 << 20][usize::from(c % 6)];
    cfg.snd_buf = [1, 3000, 16384, 65536][usize::from((c >> 3) % 4)];
    cfg.mss = [64, 536, 1460, 9000][usize::from((c >> 5) % 4)];
    cfg.delack_tick = (a & 32 != 0).then(|| Duration::from_millis(200));
    cfg.delack_count = if a & 64 != 0 {
        DelackCount::Full
    } else {
        DelackCount::Any
    };
    cfg.window_update = if a & 128 != 0 {
        WindowUpdate::Delayed
    } else {
        WindowUpdate::Immediate
    };
    cfg.loss_is = if b & 64 != 0 {
        LossIs::Noise
    } else {
        LossIs::Congestion
    };
    cfg.slow_start = if b & 128 != 0 {
        SlowStart::Double
    } else {
        SlowStart::Standard
    };
    cfg.trace = c & 1 != 0;
    // The congestion modules share bits with the other knobs: each is on in
    // about half the runs. With ECN on, fuzzed segments' ECE and CWR flags
    // reach the engine's RFC 3168 handling (no CE marks are injected).
    if c & 2 != 0 {
        cfg.congestion = tinygram_proto::CcFactory::cubic();
    }
    cfg.recovery.prr = c & 4 != 0;
    // RFC 8985: RACK and TLP, alone or together (as the linux profile runs them).
    cfg.recovery.rack = c & 16 != 0;
    cfg.recovery.tlp = c & 32 != 0;
    cfg.options.ecn = a & 1 != 0 && b & 1 != 0;
    if c & 2 != 0 && b & 128 == 0 {
        cfg.slow_start = if a & 2 != 0 {
            SlowStart::Hystart
        } else {
            SlowStart::HystartPlusPlus
        };
    }
    if cfg.options.ecn && b & 64 != 0 && c & 8 != 0 {
        cfg.loss_is = LossIs::EcnOnly;
    }
    // Short give-up counts so a run reaches its ends within few timer steps.
    cfg.max_retries = 4;
    cfg.syn_retries = 2;
    cfg.msl = Duration::from_secs(2);
    cfg.buffer_cap = cfg.buffer_cap.max(usize::from(cfg.mss));
    cfg
}

/// Two connections, a lossless wire between them, and virtual time.
pub struct Harness {
    pub conns: [Connection; 2],
    /// The end the input is aimed at.
    pub fed: usize,
    pub now: Instant,
    /// Segments each end has sent that are not yet delivered.
    wire: [Vec<(TcpRepr, Vec<u8>)>; 2],
    buf: Vec<u8>,
    trace: Vec<tinygram_proto::TraceEvent>,
    /// Print each step and both ends' states to stderr (for triaging a crash).
    pub verbose: bool,
}

impl Harness {
    /// Sets up both ends and drives them into `start` (see [`Start::state`]).
    pub fn new(start: Start, ca: Config, cb: Config, isn_a: u32, isn_b: u32) -> Harness {
        let now = Instant::ZERO;
        let a = Connection::connect(ca, 40000, 80, IsnSeries::new(SeqNumber(isn_a)), now);
        let b = if start == Start::SimultaneousOpen {
            Connection::connect(cb, 80, 40000, IsnSeries::new(SeqNumber(isn_b)), now)
        } else {
            Connection::listen(cb, 80, IsnSeries::new(SeqNumber(isn_b)))
        };
        let mut h = Harness {
            conns: [a, b],
            fed: A,
            now,
            wire: [Vec::new(), Vec::new()],
            buf: Vec::new(),
            trace: Vec::new(),
            verbose: false,
        };
        let handshake = |h: &mut Harness| {
            for _ in 0..3 {
                h.drain(A);
                h.deliver(A);
                h.drain(B);
                h.deliver(B);
            }
        };
        match start {
            Start::Listen => h.fed = B,
            Start::SynSent => h.drain(A),
            Start::SynReceived => {
                h.drain(A);
                h.deliver(A);
                h.drain(B);
                h.fed = B;
            }
            Start::SimultaneousOpen => {
                h.drain(A);
                h.drain(B);
                h.deliver(B);
                h.drain(A);
            }
            Start::EstablishedSending => {
                handshake(&mut h);
                h.write(A, 6_000, false);
                h.drain(A);
            }
            Start::EstablishedReceiving => {
                handshake(&mut h);
                h.write(A, 6_000, false);
                h.drain(A);
                h.deliver(A);
                h.fed = B;
            }
            Start::FinWait1
            | Start::FinWait2
            | Start::CloseWait
            | Start::LastAck
            | Start::TimeWait => {
                handshake(&mut h);
                h.conns[A].close();
                h.drain(A);
                if start != Start::FinWait1 {
                    h.deliver(A);
                    h.drain(B);
                    if start == Start::CloseWait || start == Start::LastAck {
                        h.fed = B;
                    }
                    if start == Start::LastAck || start == Start::TimeWait {
                        h.conns[B].close();
                        h.drain(B);
                    }
                    if start != Start::CloseWait && start != Start::LastAck {
                        h.deliver(B);
                    }
                }
            }
            Start::Closing => {
                handshake(&mut h);
                h.conns[A].close();
                h.conns[B].close();
                h.drain(A);
                h.drain(B);
                // Both FINs are on the wire before either arrives.
                h.deliver(A);
                h.deliver(B);
            }
        }
        h.wire[h.fed].clear();
        h.check();
        h
    }

    /// The other end.
    fn peer(&self) -> usize {
        1 - self.fed
    }

    /// Writes `n` pattern bytes (whatever fits) on `side`.
    fn write(&mut self, side: usize, n: usize, more: bool) {
        let data: Vec<u8> = (0..n).map(|i| i as u8).collect();
        let _ = self.conns[side].write(&data, more);
    }

    /// Everything `side` wants to send now, checked segment by segment and put
    /// on the wire. Panics if the engine does not stop producing segments.
    pub fn drain(&mut self, side: usize) {
        // SND.MAX before each segment: what counts as new data in it.
        let mut old_max = self.conns[side].snd_max();
        let mut n = 0;
        while let Some(r) = self.conns[side].poll_transmit(self.now, &mut self.buf) {
            n += 1;
            assert!(
                n <= MAX_SEGMENTS_PER_POLL,
                "poll_transmit did not stop: {n} segments at {:?} in {:?}",
                self.now,
                self.conns[side].state()
            );
            if self.verbose {
                eprintln!("  {side} sends {r:?} +{}", self.buf.len());
            }
            check_segment(&self.conns[side], &r, self.buf.len(), old_max);
            old_max = old_max.max(self.conns[side].snd_max());
            if self.wire[side].len() >= WIRE_CAP {
                self.wire[side].remove(0);
            }
            self.wire[side].push((r, self.buf.clone()));
        }
        if self.conns[side].config().trace {
            self.trace.clear();
            self.conns[side].drain_trace(&mut self.trace);
        }
        check_conn(&self.conns[side]);
    }

    /// Hands everything `from` sent to the other end, in order.
    pub fn deliver(&mut self, from: usize) {
        let segs = std::mem::take(&mut self.wire[from]);
        for (r, p) in &segs {
            self.conns[1 - from].handle_segment(self.now, r, p);
        }
    }

    /// Runs every timer due by now on both ends; panics if they do not move on.
    fn fire_timers(&mut self) {
        for side in [A, B] {
            let mut n = 0;
            while self.conns[side]
                .poll_timeout()
                .is_some_and(|t| t <= self.now)
            {
                n += 1;
                assert!(
                    n <= MAX_TIMER_FIRINGS_PER_INSTANT,
                    "a timer keeps expiring at {:?} ({:?}, deadline {:?})",
                    self.now,
                    self.conns[side].state(),
                    self.conns[side].poll_timeout()
                );
                self.conns[side].handle_timeout(self.now);
                self.drain(side);
            }
        }
    }

    /// Checks both ends (see [`check_conn`]).
    pub fn check(&self) {
        check_conn(&self.conns[A]);
        check_conn(&self.conns[B]);
    }

    /// Decodes one step from the input and performs it.
    pub fn step(&mut self, inp: &mut Input) {
        let f = self.fed;
        let op = inp.u8() % 16;
        if self.verbose {
            let c = &self.conns[f];
            eprintln!(
                "step {op} at {:?}: fed {:?} una {:?} nxt {:?} max {:?} wnd {}; peer {:?}",
                self.now,
                c.state(),
                c.snd_una(),
                c.snd_nxt(),
                c.snd_max(),
                c.snd_wnd(),
                self.conns[self.peer()].state()
            );
        }
        match op {
            0..=4 => {
                let (r, payload) = self.forge(inp);
                if self.verbose {
                    eprintln!("  forged {r:?} +{}", payload.len());
                }
                self.conns[f].handle_segment(self.now, &r, &payload);
            }
            5 => {
                // Raw header bytes, ports fixed so they pass the port check.
                let n = usize::from(inp.u8());
                let mut bytes = inp.bytes(n).to_vec();
                if bytes.len() >= 4 {
                    let c = &self.conns[f];
                    bytes[..2].copy_from_slice(&c.remote_port().to_be_bytes());
                    bytes[2..4].copy_from_slice(&c.local_port().to_be_bytes());
                }
                let _ = self.conns[f].handle_bytes(self.now, &bytes, None);
            }
            6 => {
                let us = u64::from(inp.u16()) * 64;
                self.now += Duration::from_micros(us);
            }
            7 => {
                // Jump to the next deadline of either end.
                let next = [A, B]
                    .iter()
                    .filter_map(|&s| self.conns[s].poll_timeout())
                    .min();
                if let Some(t) = next {
                    self.now = self.now.max(t);
                }
            }
            8 => {
                let side = if inp.bool() { f } else { self.peer() };
                let n = usize::from(inp.u16()) % 20_000;
                let more = inp.bool();
                self.write(side, n, more);
            }
            9 => {
                let side = if inp.bool() { f } else { self.peer() };
                let n = usize::from(inp.u16());
                let mut buf = vec![0; n];
                let before = self.conns[side].recv_available();
                let got = self.conns[side].read(&mut buf);
                assert!(
                    got <= n.min(before),
                    "read {got} of {before} available into {n}"
                );
            }
            10 => match inp.u8() % 8 {
                0 => self.conns[f].abort(),
                1..=3 => self.conns[f].close(),
                4 => self.conns[self.peer()].close(),
                5 => self.conns[f].flush(),
                _ => {
                    let kind = match inp.u8() % 4 {
                        0 => SendPolicyKind::NoDelay,
                        1 => SendPolicyKind::Nagle,
                        2 => SendPolicyKind::Cork,
                        _ => SendPolicyKind::Doupnik,
                    };
                    self.conns[f].set_send_policy(self.now, kind);
                }
            },
            11 | 12 => {
                let p = self.peer();
                self.deliver(p);
                self.deliver(f);
            }
            13 => {
                // The peer's segments arrive reordered (last first) or some are lost.
                let p = self.peer();
                let mut segs = std::mem::take(&mut self.wire[p]);
                if inp.bool() {
                    segs.reverse();
                } else {
                    let keep = inp.u8();
                    let mut i = 0;
                    segs.retain(|_| {
                        i += 1;
                        keep & (1 << (i % 8)) != 0
                    });
                }
                for (r, pl) in &segs {
                    self.conns[f].handle_segment(self.now, r, pl);
                }
            }
            14 => {
                // A duplicate of the newest segment from the peer.
                if let Some((r, pl)) = self.wire[self.peer()].last().cloned() {
                    self.conns[f].handle_segment(self.now, &r, &pl);
                }
            }
            _ => self.wire[self.fed].clear(),
        }
        self.fire_timers();
        self.drain(A);
        self.drain(B);
        self.check();
    }

    /// A segment aimed at the fed end: right ports (mostly), sequence and ACK
    /// numbers near its live sequence space or anywhere, any flags, window and
    /// options, and up to 2000 bytes of payload.
    fn forge(&self, inp: &mut Input) -> (TcpRepr, Vec<u8>) {
        let c = &self.conns[self.fed];
        let mode = inp.u8();
        let (seq, ack) = if mode & 1 == 0 {
            let ds = inp.u16() as i16;
            let da = inp.u16() as i16;
            (
                c.rcv_nxt() + ds as u32 as usize,
                c.snd_una() + da as u32 as usize,
            )
        } else {
            (SeqNumber(inp.u32()), SeqNumber(inp.u32()))
        };
        let mut opts = TcpOptions::default();
        let which = inp.u8();
        if which & 1 != 0 {
            opts.mss = Some(inp.u16());
        }
        if which & 2 != 0 {
            opts.window_scale = Some(inp.u8() % 16);
        }
        opts.sack_permitted = which & 4 != 0;
        if which & 8 != 0 {
            opts.timestamps = Some(Timestamps {
                tsval: inp.u32(),
                tsecr: inp.u32(),
            });
        }
        if which & 16 != 0 {
            let mut blocks = SackBlocks::default();
            for _ in 0..inp.u8() % 5 {
                let l = c.snd_una() + usize::from(inp.u16());
                blocks.push(l, l + usize::from(inp.u16()));
            }
            opts.sack_blocks = blocks;
        }
        opts.nak_permitted = which & 32 != 0;
        if which & 64 != 0 {
            opts.nak = Some(Nak {
                seq: c.snd_una() + usize::from(inp.u16()),
                count: inp.u8(),
            });
        }
        if which & 128 != 0 {
            if inp.bool() {
                opts.big_window_offer = Some(inp.u32() & 0x3fff_ffff);
            } else {
                opts.big_window_upper = Some(inp.u16() & 0x7fff);
            }
        }
        let ports_ok = mode & 0xf0 != 0xf0;
        let repr = TcpRepr {
            src_port: if ports_ok { c.remote_port() } else { inp.u16() },
            dst_port: if ports_ok { c.local_port() } else { inp.u16() },
            seq,
            ack,
            flags: Flags(inp.u8()),
            window: inp.u16(),
            urgent: 0,
            options: opts,
        };
        let len = usize::from(inp.u16()) % 2001;
        (repr, vec![0xee; len])
    }
}

/// Invariants that hold for a connection between any two calls:
/// SND.UNA <= SND.NXT <= SND.MAX, unacknowledged data within the send buffer,
/// buffers within their caps, RTO within its bounds.
pub fn check_conn(c: &Connection) {
    let cfg = c.config();
    let (una, nxt, max) = (c.snd_una(), c.snd_nxt(), c.snd_max());
    let st = c.state();
    assert!(
        una <= nxt && nxt <= max,
        "sequence order broken in {st:?}: una {una:?} nxt {nxt:?} max {max:?}"
    );
    // SYN and FIN occupy one sequence number each beyond the data.
    let outstanding = max.distance_from(una);
    assert!(
        outstanding <= c.send_queued() + 2,
        "{outstanding} sequence numbers outstanding but only {} bytes queued ({st:?})",
        c.send_queued()
    );
    assert!(
        c.send_queued() <= cfg.snd_buf,
        "send buffer holds {} > snd_buf {}",
        c.send_queued(),
        cfg.snd_buf
    );
    let (granted, _) = c.rcv_buf_granted();
    assert!(
        granted <= cfg.buffer_cap.max(1) && granted <= cfg.rcv_buf.max(1),
        "granted receive buffer {granted} beyond caps (rcv_buf {}, cap {})",
        cfg.rcv_buf,
        cfg.buffer_cap
    );
    assert!(
        c.recv_available() <= granted,
        "{} bytes readable in a {granted}-byte receive buffer",
        c.recv_available()
    );
    assert!(
        c.rto() <= cfg.rto_max,
        "RTO {:?} above rto_max {:?}",
        c.rto(),
        cfg.rto_max
    );
    if st.synchronized() {
        assert!(c.cwnd() > 0, "zero congestion window in {st:?}");
    }
}

/// Invariants of one segment `c` just emitted (`old_max`: SND.MAX before the
/// poll): its ports, payload within the MSS, data within what was written,
/// new data within the peer's window, our advertised window within our buffer.
pub fn check_segment(c: &Connection, r: &TcpRepr, len: usize, old_max: SeqNumber) {
    if r.flags.rst() && !c.state().synchronized() {
        // Replies to unacceptable segments carry the ports they answer.
        return;
    }
    assert_eq!(r.src_port, c.local_port(), "segment from the wrong port");
    assert!(
        len <= c.effective_mss().max(1),
        "{len}-byte payload above the {}-byte MSS",
        c.effective_mss()
    );
    if len > 0 {
        let end = r.seq + len;
        assert!(
            end <= c.snd_max(),
            "data up to {end:?} sent beyond SND.MAX {:?}",
            c.snd_max()
        );
        // A keepalive probe may carry one old byte at SND.UNA - 1.
        assert!(
            r.seq + 1 >= c.snd_una(),
            "data from {:?} below SND.UNA {:?}",
            r.seq,
            c.snd_una()
        );
        if end > old_max {
            // New data: within the offered window, except a 1-byte probe of a
            // window that is full or zero (RFC 9293 3.8.6.1; BSD's forced
            // one-byte send), which may reach one byte past it.
            assert!(
                r.seq <= old_max,
                "new data from {:?} leaves a gap after SND.MAX {old_max:?}",
                r.seq
            );
            let reach = end.distance_from(c.snd_una());
            let full = old_max.distance_from(c.snd_una()) >= c.snd_wnd();
            let probe = len == 1 && full && reach == c.snd_wnd() + 1;
            assert!(
                reach <= c.snd_wnd().max(1) || probe,
                "new data reaches {reach} bytes past SND.UNA, window {} ({:?}, {r:?}, {len} bytes, \
                 una {:?} old max {old_max:?})",
                c.snd_wnd(),
                c.state(),
                c.snd_una()
            );
        }
    }
    if r.flags.ack() && !r.flags.syn() && !c.big_window_enabled() {
        let (_, rcv_shift) = c.window_scales();
        let offered = usize::from(r.window) << rcv_shift;
        let (granted, _) = c.rcv_buf_granted();
        assert!(
            offered <= granted + (1 << rcv_shift),
            "advertised {offered} bytes with a {granted}-byte receive buffer"
        );
    }
}

/// The engine target: a configuration, a start state and ISNs from the first
/// bytes, then up to [`MAX_STEPS`] steps.
pub fn engine(data: &[u8]) {
    let mut inp = Input::new(data);
    let start = Start::ALL[usize::from(inp.u8()) % Start::ALL.len()];
    let ca = config(&mut inp);
    let cb = if inp.bool() {
        ca.clone()
    } else {
        config(&mut inp)
    };
    let (isn_a, isn_b) = (inp.u32(), inp.u32());
    let mut h = Harness::new(start, ca, cb, isn_a, isn_b);
    h.verbose = std::env::var_os("TINYGRAM_FUZZ_VERBOSE").is_some();
    if h.verbose {
        eprintln!("start {start:?}");
    }
    for _ in 0..MAX_STEPS {
        if inp.is_empty() {
            break;
        }
        h.step(&mut inp);
    }
}
