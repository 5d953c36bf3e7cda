//! A minimal two-endpoint harness for scenario tests: a fixed-delay wire with
//! a scripted drop/duplicate/reorder function, virtual time, and a log of every
//! segment. The real simulator lives in tinygram-sim; this one has no link model
//! so tests can assert exact segment times.
#![allow(dead_code)]

use std::collections::VecDeque;
use tinygram_proto::{Config, Connection, Duration, Instant, IsnSeries, SeqNumber, State, TcpRepr};

pub const A: usize = 0;
pub const B: usize = 1;

/// One segment that crossed (or was dropped on) the wire.
#[derive(Clone, Debug)]
pub struct Logged {
    pub at: Instant,
    pub from: usize,
    pub repr: TcpRepr,
    pub len: usize,
    pub dropped: bool,
}

/// What the wire does with the nth segment from a side.
pub enum Fate {
    Deliver,
    Drop,
    Duplicate,
    Delay(Duration),
}

/// Decides each segment's fate: (sending side, header, payload length).
pub type FateFn = Box<dyn FnMut(usize, &TcpRepr, usize) -> Fate>;

pub struct Pair {
    pub conns: [Connection; 2],
    pub now: Instant,
    pub delay: Duration,
    /// Segments in flight: (arrival, to, repr, payload).
    wire: VecDeque<(Instant, usize, TcpRepr, Vec<u8>)>,
    pub log: Vec<Logged>,
    pub fate: FateFn,
    /// Bytes each side has written / read so far, for integrity checks.
    pub written: [u64; 2],
    pub received: [Vec<u8>; 2],
    buf: Vec<u8>,
}

/// Byte `i` of the stream a side writes: a pattern that exposes misordering.
pub fn pattern(side: usize, i: u64) -> u8 {
    (i.wrapping_mul(2654435761) >> 7) as u8 ^ (side as u8 * 0x5a)
}

impl Pair {
    /// A connects to B (listening). Both with the given configs and ISNs.
    pub fn new(ca: Config, cb: Config, isn_a: u32, isn_b: u32, delay: Duration) -> Pair {
        let now = Instant::ZERO;
        let a = Connection::connect(ca, 40000, 80, IsnSeries::new(SeqNumber(isn_a)), now);
        let b = Connection::listen(cb, 80, IsnSeries::new(SeqNumber(isn_b)));
        Pair::with(a, b, delay)
    }

    /// Two connections already opened by the caller (e.g. both active: simultaneous open).
    pub fn with(a: Connection, b: Connection, delay: Duration) -> Pair {
        let now = Instant::ZERO;
        Pair {
            conns: [a, b],
            now,
            delay,
            wire: VecDeque::new(),
            log: Vec::new(),
            fate: Box::new(|_, _, _| Fate::Deliver),
            written: [0, 0],
            received: [Vec::new(), Vec::new()],
            buf: Vec::new(),
        }
    }

    fn flush_out(&mut self) {
        for side in [A, B] {
            while let Some(r) = self.conns[side].poll_transmit(self.now, &mut self.buf) {
                let payload = std::mem::take(&mut self.buf);
                let fate = (self.fate)(side, &r, payload.len());
                let dropped = matches!(fate, Fate::Drop);
                self.log.push(Logged {
                    at: self.now,
                    from: side,
                    repr: r,
                    len: payload.len(),
                    dropped,
                });
                let arrive = self.now + self.delay;
                match fate {
                    Fate::Deliver => self.enqueue(arrive, 1 - side, r, payload),
                    Fate::Drop => {}
                    Fate::Duplicate => {
                        self.enqueue(arrive, 1 - side, r, payload.clone());
                        self.enqueue(arrive + Duration::from_micros(1), 1 - side, r, payload);
                    }
                    Fate::Delay(d) => self.enqueue(arrive + d, 1 - side, r, payload),
                }
            }
        }
    }

    fn enqueue(&mut self, at: Instant, to: usize, r: TcpRepr, p: Vec<u8>) {
        let pos = self
            .wire
            .iter()
            .position(|e| e.0 > at)
            .unwrap_or(self.wire.len());
        self.wire.insert(pos, (at, to, r, p));
    }

    /// Writes `n` pattern bytes from `side` (as much as fits; returns accepted).
    pub fn write(&mut self, side: usize, n: usize) -> usize {
        self.write_more(side, n, false)
    }

    /// Like `write`, with MSG_MORE semantics when `more` is set.
    pub fn write_more(&mut self, side: usize, n: usize, more: bool) -> usize {
        let start = self.written[side];
        let data: Vec<u8> = (0..n as u64).map(|i| pattern(side, start + i)).collect();
        let k = self.conns[side].write(&data, more).unwrap_or(0);
        self.written[side] += k as u64;
        k
    }

    fn drain_reads(&mut self) {
        for side in [A, B] {
            let mut tmp = [0u8; 65536];
            loop {
                let n = self.conns[side].read(&mut tmp);
                if n == 0 {
                    break;
                }
                self.received[side].extend_from_slice(&tmp[..n]);
            }
        }
    }

    /// Next event time: a wire arrival or a timer.
    fn next_time(&self) -> Option<Instant> {
        let w = self.wire.front().map(|e| e.0);
        let t = self.conns.iter().filter_map(|c| c.poll_timeout()).min();
        match (w, t) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Runs one step: deliver everything due at the next event time.
    pub fn step(&mut self, reading: bool) -> bool {
        self.flush_out();
        let Some(t) = self.next_time() else {
            return false;
        };
        self.now = self.now.max(t);
        // Like the simulator: each arrival is processed and answered before the next.
        while self.wire.front().is_some_and(|e| e.0 <= self.now) {
            let (_, to, r, p) = self.wire.pop_front().unwrap();
            self.conns[to].handle_segment(self.now, &r, &p);
            if reading {
                self.drain_reads();
            }
            self.flush_out();
        }
        for c in &mut self.conns {
            if c.poll_timeout().is_some_and(|t| t <= self.now) {
                c.handle_timeout(self.now);
            }
        }
        if reading {
            self.drain_reads();
        }
        self.flush_out();
        true
    }

    /// Sends what is due now and advances time to `t` (processing everything before it).
    pub fn advance_to(&mut self, t: Instant, reading: bool) {
        self.flush_out();
        while self.next_time().is_some_and(|n| n <= t) {
            self.step(reading);
        }
        self.now = self.now.max(t);
        self.flush_out();
    }

    /// Data segments sent by `side`: (time, seq offset from ISN+1, len, PSH).
    pub fn data_from(&self, side: usize) -> Vec<(Instant, usize, usize, bool)> {
        let base = self.conns[side].iss() + 1;
        self.log
            .iter()
            .filter(|l| l.from == side && l.len > 0)
            .map(|l| {
                (
                    l.at,
                    l.repr.seq.distance_from(base),
                    l.len,
                    l.repr.flags.psh(),
                )
            })
            .collect()
    }

    /// Runs until `until` is true or nothing is left to do or time passes `limit`.
    pub fn run_until(
        &mut self,
        limit: Duration,
        reading: bool,
        mut until: impl FnMut(&Pair) -> bool,
    ) {
        let end = self.now + limit;
        while !until(self) && self.now < end {
            if !self.step(reading) {
                break;
            }
        }
    }

    /// Like [`run_until`](Self::run_until) (reading), recording each side's
    /// states in order, from the current one, until both reach `state`.
    pub fn states_until(&mut self, limit: Duration, state: State) -> [Vec<State>; 2] {
        let mut seen = [vec![self.conns[A].state()], vec![self.conns[B].state()]];
        self.run_until(limit, true, |p| {
            for (side, states) in seen.iter_mut().enumerate() {
                let s = p.conns[side].state();
                if states.last() != Some(&s) {
                    states.push(s);
                }
            }
            p.conns[A].state() == state && p.conns[B].state() == state
        });
        seen
    }

    /// Runs (reading on both sides) until no events remain or `limit` passes.
    pub fn run(&mut self, limit: Duration) {
        self.run_until(limit, true, |_| false);
    }

    /// Checks that `side` received exactly the bytes the other side wrote.
    pub fn check_integrity(&self, side: usize) {
        let other = 1 - side;
        let got = &self.received[side];
        assert_eq!(
            got.len() as u64,
            self.written[other],
            "byte count at side {side}"
        );
        for (i, &b) in got.iter().enumerate() {
            assert_eq!(
                b,
                pattern(other, i as u64),
                "byte {i} at side {side} corrupted"
            );
        }
    }

    /// A tcpdump-like listing of the log, for failure messages.
    pub fn dump(&self) -> String {
        let mut s = String::new();
        for l in &self.log {
            s += &format!(
                "{} {} {:?} seq={} ack={} win={} len={}{}\n",
                l.at,
                if l.from == A { "A>B" } else { "B>A" },
                l.repr.flags,
                l.repr.seq,
                l.repr.ack,
                l.repr.window,
                l.len,
                if l.dropped { " DROPPED" } else { "" }
            );
        }
        s
    }

    /// Segments sent by `side` (not dropped or dropped), in order.
    pub fn sent_by(&self, side: usize) -> Vec<&Logged> {
        self.log.iter().filter(|l| l.from == side).collect()
    }
}

/// Nagle off, every segment ACKed at once, and the named options on: a
/// pair whose segments follow from the rule under test alone.
pub fn eager_config(options: &[&str]) -> Config {
    let mut set = tinygram_proto::OptionSet::default();
    for o in options {
        set.enable(o).unwrap();
    }
    Config {
        options: set,
        send_policy: "nodelay".parse().unwrap(),
        ack_policy: "immediate".parse().unwrap(),
        ..Config::default()
    }
}

/// Hands everything `from` sends at `now` to `to`; whether anything went.
pub fn pass(from: &mut Connection, to: &mut Connection, now: Instant) -> bool {
    let mut p = Vec::new();
    let mut moved = false;
    while let Some(r) = from.poll_transmit(now, &mut p) {
        to.handle_segment(now, &r, &p);
        moved = true;
        p.clear();
    }
    moved
}
