//! The discrete-event simulation: two hosts running the engine and a workload,
//! joined by one link per direction. Output depends only on the scenario and
//! its seed: one seeded RNG, one event queue ordered by (time, insertion).

use crate::drive::{self, Core, Endpoint, Ev, Queue, Wires};
use crate::link::Link;
use crate::metrics::{Delivery, Flow, HostResult, RunEnd, RunResult};
use crate::packet::{Packet, Pool};
use crate::qdisc::ecn;
use crate::scenario::Scenario;
use crate::wire::{Frame, Tap, Watch};
use crate::workload::{App, Role};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::VecDeque;
use tinygram_proto::{
    ConnError, Connection, Instant, IsnGenerator, SeqNumber, State, TcpRepr, TraceEvent,
};

/// The client's and server's TCP ports. The server's is 7 (echo) because
/// Wireshark's echo dissector shows any payload as plain data: on port 80 the
/// seeded pattern decodes as malformed HTTP, and on a port no dissector
/// claims, heuristic dissectors guess at the random bytes (Thrift errors).
pub const CLIENT_PORT: u16 = 40_000;
pub const SERVER_PORT: u16 = 7;

pub use crate::wire::WireEvent;

/// Host, and endpoint, numbers: each host has the one endpoint of its number.
const CLIENT: usize = 0;
const SERVER: usize = 1;

/// What a host does with arriving segments before TCP sees them.
struct Receiver {
    /// Receive coalescing interval; zero hands each segment over on arrival.
    rx_coalesce: std::time::Duration,
    /// Segments waiting for the coalescing interval to end.
    rx_batch: Vec<(TcpRepr, Vec<u8>)>,
}

/// A host's ISNs (RFC 9293 3.4.1), driven by the run's seed: the scenario's
/// `isn` (or one drawn from the run's RNG) first, then draws from the host's
/// own ChaCha stream, so later connection attempts never disturb the link's
/// random numbers and a run stays reproducible.
struct SeededIsn {
    first: Option<u32>,
    rng: ChaCha8Rng,
}

impl SeededIsn {
    fn new(seed: u64, host: usize, first: u32) -> SeededIsn {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        // Stream 0 is the run's RNG; each host draws from its own.
        rng.set_stream(1 + host as u64);
        SeededIsn {
            first: Some(first),
            rng,
        }
    }
}

impl IsnGenerator for SeededIsn {
    fn next_isn(&mut self, _now: Instant, _local: u16, _remote: u16) -> SeqNumber {
        SeqNumber(self.first.take().unwrap_or_else(|| self.rng.gen()))
    }
}

/// A simulation run in progress: the one delivery loop ([`crate::drive`])
/// over two hosts, each with one endpoint, and one link per direction.
pub struct Sim {
    core: Core,
    rx: [Receiver; 2],
    links: [Link; 2],
    /// Packets in flight on each link, in arrival order: (arrival, packet).
    /// Only the head is in the event queue, which keeps the queue tiny however
    /// many packets a long fat pipe holds.
    in_flight: [VecDeque<(Instant, u32)>; 2],
    rng: ChaCha8Rng,
    pool: Pool,
    name: String,
    seed: u64,
    /// Captures and taps, each frame as it is offered to its link.
    watch: Watch,
    /// Why-trace per host, if requested.
    traces: Option<[Vec<TraceEvent>; 2]>,
}

impl Sim {
    /// Builds the hosts and links of `sc`; the client's SYN leaves at time zero.
    pub fn new(sc: &Scenario) -> Sim {
        let mut rng = ChaCha8Rng::seed_from_u64(sc.seed);
        let isn_c = sc.client.isn.unwrap_or_else(|| rng.gen());
        let isn_s = sc.server.isn.unwrap_or_else(|| rng.gen());
        // RFC 1106 5: each host's memory is shared by its connections (one here).
        let with_budget = |h: &crate::scenario::HostConfig| {
            let mut cfg = h.tcp.clone();
            cfg.host_budget = h.memory;
            cfg
        };
        let client = Connection::connect(
            with_budget(&sc.client),
            CLIENT_PORT,
            SERVER_PORT,
            SeededIsn::new(sc.seed, CLIENT, isn_c),
            Instant::ZERO,
        );
        let server = Connection::listen(
            with_budget(&sc.server),
            SERVER_PORT,
            SeededIsn::new(sc.seed, SERVER, isn_s),
        );
        let mut core = Core::new(Instant::ZERO + sc.duration, Queue::new(), 2);
        for (h, conn, role, ports) in [
            (CLIENT, client, Role::Client, (CLIENT_PORT, SERVER_PORT)),
            (SERVER, server, Role::Server, (SERVER_PORT, CLIENT_PORT)),
        ] {
            core.add(Endpoint {
                host: h as u32,
                peer: (1 - h) as u32,
                flow: 0,
                peer_ep: (1 - h) as u32,
                local_port: ports.0,
                remote_port: ports.1,
                established: false,
                app: App::new(role, &sc.workload, sc.seed),
                conn,
            });
        }
        let receiver = |cfg: &crate::scenario::HostConfig| Receiver {
            rx_coalesce: cfg.rx_coalesce,
            rx_batch: Vec::new(),
        };
        Sim {
            core,
            rx: [receiver(&sc.client), receiver(&sc.server)],
            links: [Link::new(sc.forward.clone()), Link::new(sc.reverse.clone())],
            in_flight: [VecDeque::new(), VecDeque::new()],
            rng,
            pool: Pool::default(),
            name: sc.name.clone(),
            seed: sc.seed,
            watch: Watch::default(),
            traces: None,
        }
    }

    /// Records both engines' why-traces (hold/release and ACK decisions).
    pub fn enable_trace(&mut self) {
        for e in &mut self.core.eps {
            e.conn.set_trace(true);
        }
        self.traces = Some([Vec::new(), Vec::new()]);
    }

    /// The why-traces of the client (0) and server (1), in time order.
    pub fn traces(&self) -> [&[TraceEvent]; 2] {
        match &self.traces {
            Some([c, s]) => [c, s],
            None => [&[], &[]],
        }
    }

    /// Records every frame offered to a link (headers; payloads too if `payloads`).
    pub fn enable_capture(&mut self, payloads: bool) {
        self.watch.enable_capture(payloads);
    }

    /// The frames recorded by [`enable_capture`](Self::enable_capture).
    pub fn capture(&self) -> (&[WireEvent], Option<&[Vec<u8>]>) {
        self.watch.capture()
    }

    /// Calls `tap` with every frame as its sender offers it to the link.
    pub fn set_tap(&mut self, tap: Box<Tap>) {
        self.watch.set_tap(tap);
    }

    /// The engine of the client (0) or server (1), for inspection.
    pub fn connection(&self, host: usize) -> &Connection {
        &self.core.eps[host].conn
    }

    /// Runs to the end; `progress` is called now and then with the simulated time.
    pub fn run(&mut self, progress: &mut dyn FnMut(Instant, Instant)) -> RunResult {
        drive::service(self, CLIENT as u32);
        drive::service(self, SERVER as u32);
        let end = drive::run(self, progress);
        self.result(end)
    }

    /// What became of the connections, for a run with nothing left to do:
    /// who aborted and why, who closed, or that both sat idle.
    fn connections_fate(&self) -> String {
        let mut parts = Vec::new();
        for (h, side) in [(CLIENT, "client"), (SERVER, "server")] {
            let host = &self.core.eps[h];
            let cfg = host.conn.config();
            match host.conn.error() {
                // RFC 9293 3.8.3: the retransmission limit was reached.
                Some(ConnError::TimedOut) => {
                    let (n, what) = if host.established {
                        (cfg.max_retries, "retransmissions")
                    } else {
                        (cfg.syn_retries, "SYN retransmissions")
                    };
                    parts.push(format!(
                        "{side} aborted after {n} {what}: connection timed out"
                    ));
                }
                Some(e) => parts.push(format!("{side} aborted: {e}")),
                None if matches!(host.conn.state(), State::Closed | State::TimeWait) => {
                    parts.push(format!("{side} connection closed"))
                }
                None => {}
            }
        }
        if parts.is_empty() {
            "both connections open and idle: no data, timer or write pending".to_string()
        } else {
            parts.join("; ")
        }
    }

    /// Whether every written byte was delivered exactly once and in order, as
    /// far as the run can tell ([`crate::metrics::INTEGRITY_RULE`]); the reason if not.
    fn integrity(&self, end: RunEnd, delivery: &Delivery) -> Result<(), String> {
        // Bytes still in flight are not lost while both connections can deliver them.
        let live = end != RunEnd::Idle
            && self
                .core
                .eps
                .iter()
                .all(|h| h.conn.error().is_none() && !matches!(h.conn.state(), State::Closed));
        let flows = [
            ("client to server", SERVER, delivery.client_to_server),
            ("server to client", CLIENT, delivery.server_to_client),
        ];
        for (dir, reader, f) in flows {
            if !self.core.eps[reader].app.integrity_ok {
                return Err(format!(
                    "bytes delivered {dir} differ from what was written (wrong, reordered or repeated data)"
                ));
            }
            if f.bytes_delivered > f.bytes_written {
                return Err(format!(
                    "{} bytes delivered {dir}, but only {} written",
                    thousands(f.bytes_delivered),
                    thousands(f.bytes_written)
                ));
            }
            if !live && f.undelivered() > 0 {
                return Err(format!(
                    "{} of {} written bytes delivered {dir} ({})",
                    thousands(f.bytes_delivered),
                    thousands(f.bytes_written),
                    self.connections_fate()
                ));
            }
        }
        Ok(())
    }

    /// Hands packet `pkt` to its host's engine and lets the host react.
    fn deliver(&mut self, pkt: u32) {
        let p = self.pool.take(pkt);
        let to = p.dst as usize;
        let rx = &mut self.rx[to];
        // RFC 3168 5: a CE mark reaches TCP with its segment (a coalesced
        // batch keeps no ECN field: the mark rides the batch's next segment).
        if p.ecn == ecn::CE {
            self.core.eps[to].conn.note_ce();
        }
        if !rx.rx_coalesce.is_zero() {
            if rx.rx_batch.is_empty() {
                let at = self.core.now + rx.rx_coalesce;
                self.core.queue.push(at, Ev::RxFlush { host: to as u32 });
            }
            rx.rx_batch.push((p.repr, p.payload));
            return;
        }
        let now = self.core.now;
        self.core.eps[to]
            .conn
            .handle_segment(now, &p.repr, &p.payload);
        self.pool.give_back(p.payload);
        drive::service(self, to as u32);
    }

    /// Hands host `h`'s coalesced batch to its engine, merged as GRO would.
    fn flush_rx(&mut self, h: usize) {
        let mut batch = std::mem::take(&mut self.rx[h].rx_batch);
        crate::coalesce::merge(&mut batch);
        let now = self.core.now;
        for (repr, payload) in batch.drain(..) {
            self.core.eps[h].conn.handle_segment(now, &repr, &payload);
            self.pool.give_back(payload);
        }
        // Keep the allocation for the next batch.
        self.rx[h].rx_batch = batch;
        drive::service(self, h as u32);
    }

    /// Schedules packet `pkt` to arrive over link `link` at `at`: appended to
    /// the link's FIFO when it keeps arrival order, else its own event.
    fn schedule_arrival(&mut self, link: usize, at: Instant, pkt: u32) {
        let fifo = &mut self.in_flight[link];
        match fifo.back() {
            None => {
                fifo.push_back((at, pkt));
                self.core.queue.push(at, Ev::LinkHead { link: link as u8 });
            }
            Some(&(last, _)) if at >= last => fifo.push_back((at, pkt)),
            Some(_) => self.core.queue.push(at, Ev::Arrive { pkt }),
        }
    }

    fn transmit(&mut self, from: usize, repr: TcpRepr, payload: Vec<u8>, ect: bool) {
        let now = self.core.now;
        let to = (1 - from) as u32;
        let mut p = Packet::sent(repr, payload, (from as u32, to), to, ect);
        let fate = p.offer(&mut self.links[from], now, &mut self.rng);
        if self.watch.on() {
            self.watch.see(&Frame {
                at: now,
                src: p.src,
                dst: p.dst,
                dir: from as u8,
                repr: &p.repr,
                payload: &p.payload,
                ecn: p.ecn,
                fate,
            });
        }
        if let Some(c) = self.pool.after_link(fate, p) {
            if let Some((dup_at, dup)) = c.duplicate {
                self.core.queue.push(dup_at, Ev::Arrive { pkt: dup });
            }
            self.schedule_arrival(from, c.at, c.pkt);
        }
    }

    fn host_result(&self, h: usize) -> HostResult {
        let host = &self.core.eps[h];
        let c = host.conn.counters();
        let link = self.links[h].stats();
        HostResult {
            data_segments: c.data_segments_sent,
            small_segments: c.small_segments_sent,
            pure_acks: c.pure_acks_sent,
            retransmits: c.retransmits,
            naks_sent: c.naks_sent,
            wire_bytes: link.wire_bytes,
            segments: c.segments_sent,
            bytes_sent: c.bytes_sent,
            app_bytes_read: host.app.bytes_read,
            app_bytes_written: host.app.bytes_written(),
            timeouts: c.timeouts,
            fast_retransmits: c.fast_retransmits,
            dup_acks_received: c.dup_acks_received,
            delack_timer_fired: c.delack_timer_fired,
            window_probes: c.window_probes,
            policy_holds: c.policy_holds,
            window_updates: c.window_updates_sent,
            frames_dropped: link.dropped_queue + link.dropped_loss + link.dropped_ber,
            state: host.conn.state().to_string(),
            error: host.conn.error().map(|e| e.to_string()),
            mss: host.conn.effective_mss(),
            srtt_ms: host.conn.srtt().map(|d| d.as_secs_f64() * 1e3),
            naks_received: c.naks_received,
            nak_retransmits: c.nak_retransmits,
            sack_retransmits: c.sack_retransmits,
            fast_retransmits_suppressed: c.fast_retransmits_suppressed,
            paws_rejected: c.paws_rejected,
            invalid_segments: c.invalid_segments,
            challenge_acks: c.challenge_acks,
            challenge_acks_suppressed: c.challenge_acks_suppressed,
            invalid_acks_suppressed: c.invalid_acks_suppressed,
            unacceptable_acks: c.unacceptable_acks,
            ooo_ranges_dropped: c.ooo_ranges_dropped,
            peer_mss_floored: c.peer_mss_floored,
            rcv_buf: host.conn.rcv_buf_granted().0,
            options: negotiated(&host.conn),
        }
    }

    fn result(&self, end: RunEnd) -> RunResult {
        let elapsed = self.core.now.as_secs_f64();
        let client = &self.core.eps[CLIENT].app;
        let server = &self.core.eps[SERVER].app;
        let mut lat = client.latencies.clone();
        lat.merge(&server.latencies);
        let transactions = lat.count();
        let goodput_bytes = client.bytes_read + server.bytes_read;
        let per_s = |x: f64| if elapsed > 0.0 { x / elapsed } else { 0.0 };
        let delivery = Delivery {
            client_to_server: Flow {
                bytes_written: client.bytes_written(),
                bytes_delivered: server.bytes_read,
            },
            server_to_client: Flow {
                bytes_written: server.bytes_written(),
                bytes_delivered: client.bytes_read,
            },
        };
        let integrity = self.integrity(end, &delivery);
        RunResult {
            name: self.name.clone(),
            seed: self.seed,
            sim_time_s: elapsed,
            finished: end == RunEnd::Finished,
            ended: end,
            ended_why: (end == RunEnd::Idle).then(|| self.connections_fate()),
            transactions,
            transactions_per_s: per_s(transactions as f64),
            goodput_bytes_per_s: per_s(goodput_bytes as f64),
            completion_ms: lat.percentiles(),
            integrity_ok: integrity.is_ok(),
            integrity_error: integrity.err(),
            delivery,
            client: self.host_result(CLIENT),
            server: self.host_result(SERVER),
            events: self.core.events,
        }
    }
}

impl Wires for Sim {
    const STALE_TIMERS_FROM_TABLE: bool = false;

    fn core(&mut self) -> &mut Core {
        &mut self.core
    }

    fn drain(&mut self, ep: u32) {
        let h = ep as usize;
        let now = self.core.now;
        loop {
            let mut payload = self.pool.buffer();
            let conn = &mut self.core.eps[h].conn;
            let Some(repr) = conn.poll_transmit(now, &mut payload) else {
                self.pool.give_back(payload);
                break;
            };
            let ect = conn.transmit_ect();
            self.transmit(h, repr, payload, ect);
        }
    }

    fn serviced(&mut self, ep: u32) {
        if let Some(t) = &mut self.traces {
            self.core.eps[ep as usize]
                .conn
                .drain_trace(&mut t[ep as usize]);
        }
    }

    fn network(&mut self, ev: Ev) {
        match ev {
            Ev::Arrive { pkt } => self.deliver(pkt),
            Ev::LinkHead { link } => {
                let link = link as usize;
                let (_, pkt) = self.in_flight[link].pop_front().expect("link head");
                if let Some(&(next, _)) = self.in_flight[link].front() {
                    self.core
                        .queue
                        .push(next, Ev::LinkHead { link: link as u8 });
                }
                self.deliver(pkt);
            }
            Ev::RxFlush { host } => self.flush_rx(host as usize),
            ev => unreachable!("the two-host world schedules no {ev:?}"),
        }
    }

    fn stop(&self) -> Option<RunEnd> {
        let eps = &self.core.eps;
        if eps.iter().any(|e| e.app.done) {
            Some(RunEnd::Finished)
        } else if eps.iter().all(|e| e.conn.error().is_some()) {
            Some(RunEnd::Idle)
        } else {
            None
        }
    }
}

/// The options a connection ended up using (MSS always).
fn negotiated(c: &Connection) -> Vec<&'static str> {
    let mut v = vec!["mss"];
    let (snd, rcv) = c.window_scales();
    if snd > 0 || rcv > 0 {
        v.push("wscale");
    }
    for (on, name) in [
        (c.timestamps_enabled(), "timestamps"),
        (c.sack_enabled(), "sack"),
        (c.big_window_enabled(), "bigwin"),
        (c.nak_enabled(), "nak"),
    ] {
        if on {
            v.push(name);
        }
    }
    v
}

/// `1234567` as `"1,234,567"`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Runs a scenario to the end without progress output.
pub fn run(sc: &Scenario) -> RunResult {
    Sim::new(sc).run(&mut |_, _| {})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeded_isns_start_with_the_given_one_then_follow_the_seed() {
        let t = Instant::ZERO;
        let draws = |seed, host| {
            let mut g = SeededIsn::new(seed, host, 42);
            [0; 4].map(|_| g.next_isn(t, 80, 40_000))
        };
        let a = draws(1, SERVER);
        assert_eq!(a[0], SeqNumber(42));
        assert!(a[1..].iter().all(|&x| x != a[0]) && a[1] != a[2] && a[2] != a[3]);
        assert_eq!(a, draws(1, SERVER), "same seed, same ISNs");
        assert_ne!(
            a[1..],
            draws(1, CLIENT)[1..],
            "each host has its own stream"
        );
        assert_ne!(a[1..], draws(2, SERVER)[1..]);
    }

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(262_144), "262,144");
        assert_eq!(thousands(1_000_000), "1,000,000");
    }
}
