//! Applications on the simulated hosts: the request-response, bulk and
//! interactive workloads of a scenario, driving the engine's application API.

use crate::metrics::LatencyHistogram;
use crate::pattern::Pattern;
use crate::scenario::{Direction, Workload};
use std::collections::VecDeque;
use std::sync::Arc;
use tinygram_proto::{Connection, Duration, Instant};

/// Which end of the connection an application runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Client,
    Server,
}

/// One application write, waiting for its time.
#[derive(Clone, Copy, Debug)]
struct Write {
    size: usize,
    /// Not before this time.
    not_before: Instant,
    /// And not before this long after the previous write completed.
    gap: Duration,
    /// The first write of a transaction: its start is timed from here.
    starts_transaction: bool,
}

/// The application's writes, executed in order (one byte stream).
#[derive(Debug)]
struct Outbox {
    queue: VecDeque<Write>,
    /// Bytes of the head write not yet accepted by the engine.
    left: usize,
    started: bool,
    /// Stream offset of the next byte to write.
    off: u64,
    last_done: Instant,
}

impl Outbox {
    fn new() -> Self {
        Outbox {
            queue: VecDeque::new(),
            left: 0,
            started: false,
            off: 0,
            last_done: Instant::ZERO,
        }
    }

    /// Performs (the rest of) the next due write. A socket write runs TCP
    /// output at once, so the caller drains the engine after each `Wrote`.
    fn pump(
        &mut self,
        conn: &mut Connection,
        now: Instant,
        pattern: &Pattern,
        base: u64,
        starts: &mut VecDeque<Instant>,
    ) -> WriteStep {
        let Some(&w) = self.queue.front() else {
            return WriteStep::Idle;
        };
        if !self.started {
            let ready = w.not_before.max(self.last_done + w.gap);
            if now < ready {
                return WriteStep::Wait(ready);
            }
            self.started = true;
            self.left = w.size;
            if w.starts_transaction {
                starts.push_back(now);
            }
            if w.size == 0 {
                conn.flush();
            }
        }
        while self.left > 0 {
            let chunk = pattern.slice(base + self.off, self.left);
            let more = chunk.len() < self.left;
            let n = match conn.write(chunk, more) {
                Ok(n) => n,
                Err(_) => return WriteStep::Blocked,
            };
            self.off += n as u64;
            self.left -= n;
            if n < chunk.len() {
                // Send buffer full: resume when ACKs free space.
                return if n > 0 {
                    WriteStep::Wrote
                } else {
                    WriteStep::Blocked
                };
            }
        }
        self.last_done = now;
        self.started = false;
        self.queue.pop_front();
        WriteStep::Wrote
    }
}

/// What one attempt to write did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteStep {
    /// Bytes went into the send buffer: drain the engine, then try again.
    Wrote,
    /// The send buffer is full (or the connection closed for sending).
    Blocked,
    /// The next write is due at this time.
    Wait(Instant),
    /// Nothing to write.
    Idle,
}

/// The workload's shape without its size lists (cheap to copy on every read).
#[derive(Clone, Copy, Debug)]
enum Kind {
    RequestResponse {
        req_total: u64,
        resp_total: u64,
        think: Duration,
        limit: u64,
    },
    /// `count` turns; `boundary`: the stream offset at which the turn in
    /// progress is complete (its request read by the server, its response
    /// by the client).
    Exchanges { count: u64, boundary: u64 },
    Bulk {
        bytes: u64,
        write_size: u64,
        sender: Role,
    },
    Interactive {
        keystrokes: u64,
        interval: Duration,
        size: usize,
    },
}

/// The application on one host.
#[derive(Debug)]
#[repr(C)]
pub struct App {
    // What each step reads first, together (`#[repr(C)]` keeps the order);
    // the workload copy and the latency histogram last.
    out: Outbox,
    kind: Kind,
    /// Start times of transactions in flight (client side).
    starts: VecDeque<Instant>,
    out_pattern: Arc<Pattern>,
    in_pattern: Arc<Pattern>,
    /// Where this connection's streams start in the patterns (many flows share
    /// two patterns; distinct offsets make a byte delivered to the wrong flow show).
    out_base: u64,
    in_base: u64,
    /// Bytes read so far.
    pub bytes_read: u64,
    /// Transactions started (client side).
    started: u64,
    /// Requests answered (server side) or bulk/keystroke writes queued.
    served: u64,
    /// When the connection became established: bulk and keystroke times count from here.
    t0: Instant,
    role: Role,
    /// Every byte read matched the peer's pattern at its offset.
    pub integrity_ok: bool,
    /// The workload has reached its end (all requests answered, all bytes received).
    pub done: bool,
    workload: Arc<Workload>,
    /// Seed of the per-write jitter of the server's pace (`response_jitter`).
    jitter_seed: u64,
    /// Completion times of finished transactions (constant memory).
    pub latencies: LatencyHistogram,
}

/// Up to `max`, drawn for write `i` of response `n` from `seed` alone
/// (splitmix64), so the same run gives the same pace.
fn jitter(max: Duration, seed: u64, n: u64, i: u64) -> Duration {
    if max.is_zero() {
        return Duration::ZERO;
    }
    let mut z =
        seed ^ n.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ i.wrapping_mul(0xD1B5_4A32_D192_ED03);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    let u = (z >> 11) as f64 / (1u64 << 53) as f64;
    Duration::from_nanos((max.as_nanos() as f64 * u) as u64)
}

impl App {
    /// The bytes of `App` a step reads (it is `#[repr(C)]`, those first).
    pub fn hot_bytes() -> core::ops::Range<usize> {
        0..core::mem::offset_of!(App, workload)
    }

    /// Hints the CPU to fetch the heap state the application's next step
    /// touches: queued writes and open transactions ([`tinygram_proto::prefetch`]).
    pub fn prefetch_heap(&self) {
        use tinygram_proto::prefetch::prefetch_bytes;
        let (writes, _) = self.out.queue.as_slices();
        prefetch_bytes(
            writes.as_ptr().cast(),
            std::mem::size_of_val(writes).min(128),
        );
        let (starts, _) = self.starts.as_slices();
        prefetch_bytes(
            starts.as_ptr().cast(),
            std::mem::size_of_val(starts).min(64),
        );
    }

    /// An application for `role`; streams are seeded from the run's seed.
    pub fn new(role: Role, workload: &Workload, seed: u64) -> App {
        let (mine, theirs) = match role {
            Role::Client => (0, 1),
            Role::Server => (1, 0),
        };
        let out = Arc::new(Pattern::new(seed, mine));
        let inp = Arc::new(Pattern::new(seed, theirs));
        let mut app = App::with_patterns(role, Arc::new(workload.clone()), out, inp, 0, 0);
        app.jitter_seed = seed;
        app
    }

    /// The seed of the server's per-write jitter (`response_jitter`): the
    /// run's seed, mixed with the flow's where many share one run, so a
    /// run's pace follows its seed alone.
    pub fn with_jitter_seed(mut self, seed: u64) -> App {
        self.jitter_seed ^= seed;
        self
    }

    /// An application writing `out` from offset `out_base` and expecting
    /// `inp` from `in_base` (the many-flow world shares two patterns, and
    /// one workload per group of flows).
    pub fn with_patterns(
        role: Role,
        workload: Arc<Workload>,
        out: Arc<Pattern>,
        inp: Arc<Pattern>,
        out_base: u64,
        in_base: u64,
    ) -> App {
        let sum = |v: &[usize]| v.iter().map(|&s| s as u64).sum::<u64>().max(1);
        let kind = match &*workload {
            Workload::RequestResponse {
                request,
                response,
                think,
                requests,
                ..
            } => Kind::RequestResponse {
                req_total: sum(request),
                resp_total: sum(response),
                think: *think,
                limit: requests.unwrap_or(u64::MAX),
            },
            Workload::Exchanges { exchanges, .. } => Kind::Exchanges {
                count: exchanges.len() as u64,
                boundary: match role {
                    Role::Client => sum(&exchanges[0].response),
                    Role::Server => sum(&exchanges[0].request),
                },
            },
            Workload::Bulk {
                bytes,
                write_size,
                direction,
            } => Kind::Bulk {
                bytes: *bytes,
                write_size: (*write_size as u64).max(1),
                sender: match direction {
                    Direction::ClientToServer => Role::Client,
                    Direction::ServerToClient => Role::Server,
                },
            },
            Workload::Interactive {
                keystrokes,
                interval,
                size,
            } => Kind::Interactive {
                keystrokes: *keystrokes,
                interval: *interval,
                size: *size,
            },
        };
        App {
            role,
            kind,
            workload,
            out: Outbox::new(),
            out_pattern: out,
            in_pattern: inp,
            out_base,
            in_base,
            jitter_seed: out_base ^ in_base.rotate_left(32),
            bytes_read: 0,
            integrity_ok: true,
            starts: VecDeque::new(),
            latencies: LatencyHistogram::default(),
            started: 0,
            served: 0,
            done: false,
            t0: Instant::ZERO,
        }
    }

    /// Transactions completed so far.
    pub fn transactions(&self) -> u64 {
        self.latencies.count()
    }

    fn start_request(&mut self, now: Instant) {
        if let Workload::RequestResponse {
            request,
            request_gap,
            ..
        } = &*self.workload
        {
            for (i, &size) in request.iter().enumerate() {
                self.out.queue.push_back(Write {
                    size,
                    not_before: now,
                    gap: if i == 0 { Duration::ZERO } else { *request_gap },
                    starts_transaction: i == 0,
                });
            }
            self.started += 1;
        }
    }

    /// Queues the request of turn `self.started` of an exchanges workload,
    /// `pause` after `now` (the client's own pause, from the capture).
    fn start_exchange(&mut self, now: Instant) {
        if let Workload::Exchanges {
            exchanges,
            request_gap,
            pause,
            ..
        } = &*self.workload
        {
            let Some(ex) = exchanges.get(self.started as usize) else {
                return;
            };
            let ready = now + ex.pause.unwrap_or(*pause);
            for (i, &size) in ex.request.iter().enumerate() {
                self.out.queue.push_back(Write {
                    size,
                    not_before: ready,
                    gap: if i == 0 { Duration::ZERO } else { *request_gap },
                    starts_transaction: i == 0,
                });
            }
            self.started += 1;
        }
    }

    /// Queues what the workload wants written next (lazily, so a 10 GB bulk
    /// transfer never holds more than one write description).
    fn refill(&mut self) {
        if !self.out.queue.is_empty() {
            return;
        }
        match self.kind {
            Kind::Bulk {
                bytes,
                write_size,
                sender,
            } => {
                let written = self.served * write_size;
                if self.role == sender && written < bytes {
                    self.out.queue.push_back(Write {
                        size: (bytes - written).min(write_size) as usize,
                        not_before: Instant::ZERO,
                        gap: Duration::ZERO,
                        starts_transaction: false,
                    });
                    self.served += 1;
                }
            }
            Kind::Interactive {
                keystrokes,
                interval,
                size,
            } if self.role == Role::Client && self.started < keystrokes => {
                self.out.queue.push_back(Write {
                    size,
                    not_before: self.t0 + interval * self.started as u32,
                    gap: Duration::ZERO,
                    starts_transaction: true,
                });
                self.started += 1;
            }
            _ => {}
        }
    }

    /// The connection is established: begin the workload.
    pub fn on_established(&mut self, now: Instant) {
        self.t0 = now;
        if self.role == Role::Client {
            if let Workload::RequestResponse {
                outstanding,
                requests,
                ..
            } = &*self.workload
            {
                let n = u64::from(*outstanding).min(requests.unwrap_or(u64::MAX));
                for _ in 0..n {
                    self.start_request(now);
                }
            }
            if matches!(&*self.workload, Workload::Exchanges { .. }) {
                self.start_exchange(now);
            }
        }
        self.refill();
    }

    /// Reads everything available, checks it against the peer's pattern, and
    /// reacts to it (a complete request, response or bulk transfer).
    pub fn read_all(&mut self, conn: &mut Connection, now: Instant) {
        let avail = conn.recv_available();
        if avail == 0 {
            return;
        }
        let (pat, mut off, mut ok) = (&self.in_pattern, self.in_base + self.bytes_read, true);
        let n = conn.read_with(avail, |chunk| {
            ok &= pat.matches(off, chunk);
            off += chunk.len() as u64;
        });
        self.integrity_ok &= ok;
        self.bytes_read += n as u64;
        self.on_read(now, n);
    }

    /// Performs the next due application write, if any.
    pub fn write_next(&mut self, conn: &mut Connection, now: Instant) -> WriteStep {
        self.refill();
        let step = self.out.pump(
            conn,
            now,
            &self.out_pattern,
            self.out_base,
            &mut self.starts,
        );
        if step == WriteStep::Wrote {
            self.refill();
        }
        step
    }

    /// Bytes this application has handed to its engine.
    pub fn bytes_written(&self) -> u64 {
        self.out.off
    }

    fn complete_transaction(&mut self, now: Instant) {
        if let Some(start) = self.starts.pop_front() {
            self.latencies.record(now - start);
        }
    }

    fn on_read(&mut self, now: Instant, n: usize) {
        match (self.kind, self.role) {
            (
                Kind::RequestResponse {
                    req_total, think, ..
                },
                Role::Server,
            ) => {
                while self.bytes_read >= (self.served + 1) * req_total {
                    self.served += 1;
                    if let Workload::RequestResponse {
                        response,
                        response_gap,
                        response_jitter,
                        ..
                    } = &*self.workload
                    {
                        for (i, &size) in response.iter().enumerate() {
                            self.out.queue.push_back(Write {
                                size,
                                not_before: if i == 0 { now + think } else { now },
                                gap: if i == 0 {
                                    Duration::ZERO
                                } else {
                                    *response_gap
                                        + jitter(
                                            *response_jitter,
                                            self.jitter_seed,
                                            self.served,
                                            i as u64,
                                        )
                                },
                                starts_transaction: false,
                            });
                        }
                    }
                }
            }
            (
                Kind::RequestResponse {
                    resp_total, limit, ..
                },
                Role::Client,
            ) => {
                while self.bytes_read >= (self.transactions() + 1) * resp_total {
                    self.complete_transaction(now);
                    if self.started < limit {
                        self.start_request(now);
                    }
                }
                if self.transactions() >= limit {
                    self.done = true;
                }
            }
            (Kind::Exchanges { count, boundary }, Role::Server) => {
                let mut boundary = boundary;
                while self.bytes_read >= boundary && self.served < count {
                    if let Workload::Exchanges {
                        exchanges,
                        response_gap,
                        think,
                        ..
                    } = &*self.workload
                    {
                        let ex = &exchanges[self.served as usize];
                        let start = now + ex.think.unwrap_or(*think);
                        for (i, &size) in ex.response.iter().enumerate() {
                            self.out.queue.push_back(Write {
                                size,
                                not_before: if i == 0 { start } else { now },
                                gap: if i == 0 {
                                    Duration::ZERO
                                } else {
                                    *response_gap
                                },
                                starts_transaction: false,
                            });
                        }
                        self.served += 1;
                        boundary = match exchanges.get(self.served as usize) {
                            Some(next) => {
                                boundary + next.request.iter().map(|&x| x as u64).sum::<u64>()
                            }
                            None => u64::MAX,
                        };
                    }
                }
                self.kind = Kind::Exchanges { count, boundary };
            }
            (Kind::Exchanges { count, boundary }, Role::Client) => {
                let mut boundary = boundary;
                while self.bytes_read >= boundary && self.transactions() < count {
                    self.complete_transaction(now);
                    let next = match &*self.workload {
                        Workload::Exchanges { exchanges, .. } => exchanges
                            .get(self.transactions() as usize)
                            .map(|x| x.response.iter().map(|&b| b as u64).sum::<u64>()),
                        _ => None,
                    };
                    boundary = next.map_or(u64::MAX, |n| boundary + n);
                    if self.started < count {
                        self.start_exchange(now);
                    }
                }
                self.kind = Kind::Exchanges { count, boundary };
                if self.transactions() >= count {
                    self.done = true;
                }
            }
            (Kind::Bulk { bytes, .. }, _) => {
                if self.bytes_read >= bytes && n > 0 && !self.done {
                    self.starts.push_back(self.t0);
                    self.complete_transaction(now);
                    self.done = true;
                }
            }
            (
                Kind::Interactive {
                    keystrokes, size, ..
                },
                Role::Client,
            ) => {
                let size = (size as u64).max(1);
                while self.bytes_read >= (self.transactions() + 1) * size {
                    self.complete_transaction(now);
                }
                if self.transactions() >= keystrokes {
                    self.done = true;
                }
            }
            (Kind::Interactive { .. }, Role::Server) => {
                // Echo what arrived.
                self.out.queue.push_back(Write {
                    size: n,
                    not_before: now,
                    gap: Duration::ZERO,
                    starts_transaction: false,
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::jitter;
    use std::time::Duration;

    #[test]
    fn jitter_stays_within_its_bound_and_spreads_over_it() {
        let max = Duration::from_micros(500);
        assert_eq!(jitter(Duration::ZERO, 7, 1, 1), Duration::ZERO);
        let v: Vec<Duration> = (0..1000).map(|n| jitter(max, 7, n, 2)).collect();
        assert!(v.iter().all(|&d| d <= max));
        assert_eq!(
            v,
            (0..1000).map(|n| jitter(max, 7, n, 2)).collect::<Vec<_>>()
        );
        let mean = v.iter().map(|d| d.as_secs_f64()).sum::<f64>() / 1000.0;
        assert!(
            (mean - 250e-6).abs() < 25e-6,
            "uniform over the bound: {mean}"
        );
        assert_ne!(jitter(max, 7, 3, 2), jitter(max, 8, 3, 2));
    }
}
