//! The discrete-event simulation: two hosts running the engine and a workload,
//! joined by one link per direction. Output depends only on the scenario and
//! its seed: one seeded RNG, one event queue ordered by (time, insertion).

use crate::event::EventQueue;
use crate::link::{Fate, Link};
use crate::metrics::{Delivery, Flow, HostResult, RunEnd, RunResult};
use crate::scenario::Scenario;
use crate::workload::{App, Role, WriteStep};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::VecDeque;
use tinygram_proto::wire::IPV4_HEADER_LEN;
use tinygram_proto::{
    ConnError, Connection, Instant, IsnGenerator, SeqNumber, State, TcpRepr, TraceEvent,
};

/// The client's and server's TCP ports. The server's is 7 (echo) because
/// Wireshark's echo dissector shows any payload as plain data: on port 80 the
/// seeded pattern decodes as malformed HTTP, and on a port no dissector
/// claims, heuristic dissectors guess at the random bytes (Thrift errors).
pub const CLIENT_PORT: u16 = 40_000;
pub const SERVER_PORT: u16 = 7;

const CLIENT: usize = 0;
const SERVER: usize = 1;

/// A packet on a link: header and payload.
struct Packet {
    repr: TcpRepr,
    payload: Vec<u8>,
    /// IP ECN field: ECT(0) from the sender, CE once a link marked it (RFC 3168 5).
    ecn: Ecn,
}

/// The IP ECN codepoints the simulator carries (RFC 3168 5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ecn {
    NotEct,
    Ect0,
    Ce,
}

#[derive(Clone, Copy, Debug)]
enum Ev {
    /// A packet reaches host `to` (one that left its link's FIFO order).
    Arrive { to: usize, pkt: u32 },
    /// The packet at the head of link `link`'s in-flight FIFO arrives.
    LinkHead { link: usize },
    /// Host's engine timer; `deferred` once it has yielded to same-time arrivals.
    Timer { host: usize, deferred: bool },
    /// Host's application wants to run (a timed write).
    App { host: usize },
    /// Host's receive-coalescing interval ends: its batch reaches TCP.
    RxFlush { host: usize },
}

/// One host: the engine, the application, and what has been scheduled for it.
struct Host {
    conn: Connection,
    app: App,
    established: bool,
    timer_at: Option<Instant>,
    app_at: Option<Instant>,
    /// Receive coalescing interval; zero hands each segment over on arrival.
    rx_coalesce: std::time::Duration,
    /// Segments waiting for the coalescing interval to end.
    rx_batch: Vec<(TcpRepr, Vec<u8>)>,
}

/// What a frame did on the wire, for captures (pcap) and plots.
#[derive(Clone, Debug)]
pub struct WireEvent {
    /// When the frame was offered to the link by its sender.
    pub at: Instant,
    /// 0: client to server, 1: server to client.
    pub dir: u8,
    pub repr: TcpRepr,
    pub payload_len: usize,
    /// Lost on the link (queue, random loss or bit error).
    pub dropped: bool,
    /// When it reached the other host (`None` if dropped).
    pub arrived: Option<Instant>,
    /// When the link's duplicate of it arrived, if the link duplicated it.
    pub duplicate_arrived: Option<Instant>,
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

/// A simulation run in progress.
pub struct Sim {
    now: Instant,
    end: Instant,
    queue: EventQueue<Ev>,
    hosts: [Host; 2],
    links: [Link; 2],
    /// Packets in flight on each link, in arrival order: (arrival, packet).
    /// Only the head is in the event queue, which keeps the heap tiny however
    /// many packets a long fat pipe holds.
    in_flight: [VecDeque<(Instant, u32)>; 2],
    rng: ChaCha8Rng,
    slab: Vec<Option<Packet>>,
    free_slots: Vec<u32>,
    spare_payloads: Vec<Vec<u8>>,
    events: u64,
    name: String,
    seed: u64,
    /// Frames seen on the wire, if a capture was requested.
    capture: Option<Vec<WireEvent>>,
    /// Payload bytes of captured frames, if requested (for pcap files).
    capture_payloads: Option<Vec<Vec<u8>>>,
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
        let host = |conn, role, cfg: &crate::scenario::HostConfig| Host {
            conn,
            app: App::new(role, &sc.workload, sc.seed),
            established: false,
            timer_at: None,
            app_at: None,
            rx_coalesce: cfg.rx_coalesce,
            rx_batch: Vec::new(),
        };
        Sim {
            now: Instant::ZERO,
            end: Instant::ZERO + sc.duration,
            queue: EventQueue::new(),
            hosts: [
                host(client, Role::Client, &sc.client),
                host(server, Role::Server, &sc.server),
            ],
            links: [Link::new(sc.forward.clone()), Link::new(sc.reverse.clone())],
            in_flight: [VecDeque::new(), VecDeque::new()],
            rng,
            slab: Vec::new(),
            free_slots: Vec::new(),
            spare_payloads: Vec::new(),
            events: 0,
            name: sc.name.clone(),
            seed: sc.seed,
            capture: None,
            capture_payloads: None,
            traces: None,
        }
    }

    /// Records both engines' why-traces (hold/release and ACK decisions).
    pub fn enable_trace(&mut self) {
        for h in &mut self.hosts {
            h.conn.set_trace(true);
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
        self.capture = Some(Vec::new());
        if payloads {
            self.capture_payloads = Some(Vec::new());
        }
    }

    /// The frames recorded by [`enable_capture`](Self::enable_capture).
    pub fn capture(&self) -> (&[WireEvent], Option<&[Vec<u8>]>) {
        (
            self.capture.as_deref().unwrap_or(&[]),
            self.capture_payloads.as_deref(),
        )
    }

    /// The engine of the client (0) or server (1), for inspection.
    pub fn connection(&self, host: usize) -> &Connection {
        &self.hosts[host].conn
    }

    /// Runs to the end; `progress` is called now and then with the simulated time.
    pub fn run(&mut self, progress: &mut dyn FnMut(Instant, Instant)) -> RunResult {
        self.service(CLIENT);
        self.service(SERVER);
        // An empty queue before the cap means nothing is left to happen.
        let mut end = RunEnd::Idle;
        while let Some((at, ev)) = self.queue.pop() {
            if at > self.end {
                self.now = self.end;
                end = RunEnd::DurationCap;
                break;
            }
            self.now = at;
            self.events += 1;
            if self.events & 0xffff == 0 {
                progress(self.now, self.end);
            }
            match ev {
                Ev::Arrive { to, pkt } => self.deliver(to, pkt),
                Ev::LinkHead { link } => {
                    let (_, pkt) = self.in_flight[link].pop_front().expect("link head");
                    if let Some(&(next, _)) = self.in_flight[link].front() {
                        self.queue.push(next, Ev::LinkHead { link });
                    }
                    self.deliver(1 - link, pkt);
                }
                Ev::Timer { host, deferred } => {
                    if self.hosts[host].timer_at != Some(at) {
                        continue; // superseded
                    }
                    // Arrivals at the same instant go first: an ACK that lands
                    // exactly when the RTO expires wins, as with any real clock tick.
                    if !deferred && self.queue.peek_time() == Some(at) {
                        self.queue.push(
                            at,
                            Ev::Timer {
                                host,
                                deferred: true,
                            },
                        );
                        continue;
                    }
                    self.hosts[host].timer_at = None;
                    let conn = &mut self.hosts[host].conn;
                    if conn.poll_timeout().is_some_and(|t| t <= self.now) {
                        conn.handle_timeout(self.now);
                    }
                    self.service(host);
                }
                Ev::RxFlush { host } => self.flush_rx(host),
                Ev::App { host } => {
                    if self.hosts[host].app_at != Some(at) {
                        continue;
                    }
                    self.hosts[host].app_at = None;
                    self.service(host);
                }
            }
            if self.hosts.iter().any(|h| h.app.done) {
                end = RunEnd::Finished;
                break;
            }
            if self.hosts.iter().all(|h| h.conn.error().is_some()) {
                break;
            }
        }
        progress(self.now, self.end);
        self.result(end)
    }

    /// What became of the connections, for a run with nothing left to do:
    /// who aborted and why, who closed, or that both sat idle.
    fn connections_fate(&self) -> String {
        let mut parts = Vec::new();
        for (h, side) in [(CLIENT, "client"), (SERVER, "server")] {
            let host = &self.hosts[h];
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
                .hosts
                .iter()
                .all(|h| h.conn.error().is_none() && !matches!(h.conn.state(), State::Closed));
        let flows = [
            ("client to server", SERVER, delivery.client_to_server),
            ("server to client", CLIENT, delivery.server_to_client),
        ];
        for (dir, reader, f) in flows {
            if !self.hosts[reader].app.integrity_ok {
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

    /// Lets host `h`'s application act, sends what its engine emits, and
    /// schedules its next wake-ups.
    fn service(&mut self, h: usize) {
        let now = self.now;
        let host = &mut self.hosts[h];
        if !host.established && host.conn.state().synchronized() {
            host.established = true;
            host.app.on_established(now);
        }
        if host.established {
            host.app.read_all(&mut host.conn, now);
        }
        self.drain(h);
        let mut wake = None;
        while self.hosts[h].established {
            let host = &mut self.hosts[h];
            match host.app.write_next(&mut host.conn, now) {
                WriteStep::Wrote => self.drain(h),
                WriteStep::Wait(t) => {
                    wake = Some(t);
                    break;
                }
                WriteStep::Blocked | WriteStep::Idle => break,
            }
        }
        if let Some(t) = &mut self.traces {
            self.hosts[h].conn.drain_trace(&mut t[h]);
        }
        let host = &mut self.hosts[h];
        if wake != host.app_at {
            host.app_at = wake;
            if let Some(t) = wake {
                self.queue.push(t.max(now), Ev::App { host: h });
            }
        }
        // Timer events are lazy: one is pushed only when the engine's deadline
        // moves earlier than the event already queued. A later deadline (the
        // RTO restarting on every ACK) is picked up when that event fires, so
        // the heap never fills with superseded timers.
        if let Some(t) = host.conn.poll_timeout() {
            let t = t.max(now);
            if host.timer_at.is_none_or(|queued| t < queued) {
                host.timer_at = Some(t);
                self.queue.push(
                    t,
                    Ev::Timer {
                        host: h,
                        deferred: false,
                    },
                );
            }
        }
    }

    /// Hands packet `pkt` to host `to`'s engine and lets the host react.
    fn deliver(&mut self, to: usize, pkt: u32) {
        let p = self.slab[pkt as usize].take().expect("live packet");
        self.free_slots.push(pkt);
        let host = &mut self.hosts[to];
        if !host.rx_coalesce.is_zero() {
            if host.rx_batch.is_empty() {
                let at = self.now + host.rx_coalesce;
                self.queue.push(at, Ev::RxFlush { host: to });
            }
            // The batch keeps no ECN field: a CE mark rides the batch's next segment.
            if p.ecn == Ecn::Ce {
                host.conn.note_ce();
            }
            host.rx_batch.push((p.repr, p.payload));
            return;
        }
        if p.ecn == Ecn::Ce {
            self.hosts[to].conn.note_ce();
        }
        self.hosts[to]
            .conn
            .handle_segment(self.now, &p.repr, &p.payload);
        self.spare_payloads.push(p.payload);
        self.service(to);
    }

    /// Hands host `h`'s coalesced batch to its engine, merged as GRO would.
    fn flush_rx(&mut self, h: usize) {
        let mut batch = std::mem::take(&mut self.hosts[h].rx_batch);
        crate::coalesce::merge(&mut batch);
        for (repr, payload) in batch.drain(..) {
            self.hosts[h].conn.handle_segment(self.now, &repr, &payload);
            self.spare_payloads.push(payload);
        }
        // Keep the allocation for the next batch.
        self.hosts[h].rx_batch = batch;
        self.service(h);
    }

    /// Schedules packet `pkt` to arrive over link `link` at `at`: appended to
    /// the link's FIFO when it keeps arrival order, else its own event.
    fn schedule_arrival(&mut self, link: usize, at: Instant, pkt: u32) {
        let fifo = &mut self.in_flight[link];
        match fifo.back() {
            None => {
                fifo.push_back((at, pkt));
                self.queue.push(at, Ev::LinkHead { link });
            }
            Some(&(last, _)) if at >= last => fifo.push_back((at, pkt)),
            Some(_) => self.queue.push(at, Ev::Arrive { to: 1 - link, pkt }),
        }
    }

    /// Sends everything host `h`'s engine has to send now.
    fn drain(&mut self, h: usize) {
        let now = self.now;
        loop {
            let mut payload = self.spare_payloads.pop().unwrap_or_default();
            let Some(repr) = self.hosts[h].conn.poll_transmit(now, &mut payload) else {
                self.spare_payloads.push(payload);
                break;
            };
            let ect = self.hosts[h].conn.transmit_ect();
            self.transmit(h, repr, payload, ect);
        }
    }

    fn transmit(&mut self, from: usize, repr: TcpRepr, payload: Vec<u8>, ect: bool) {
        let ip_len = IPV4_HEADER_LEN + repr.header_len() + payload.len();
        let mark_at = self.links[from].config().ecn_mark_bytes;
        let ecn = match ect {
            false => Ecn::NotEct,
            true if mark_at > 0 && self.links[from].backlog(self.now) >= mark_at => Ecn::Ce,
            true => Ecn::Ect0,
        };
        let fate = self.links[from].transmit(self.now, ip_len, &mut self.rng);
        if let Some(cap) = &mut self.capture {
            cap.push(WireEvent {
                at: self.now,
                dir: from as u8,
                repr,
                payload_len: payload.len(),
                dropped: matches!(fate, Fate::Dropped(_)),
                arrived: match fate {
                    Fate::Delivered { at, .. } => Some(at),
                    Fate::Dropped(_) => None,
                },
                duplicate_arrived: match fate {
                    Fate::Delivered { duplicate_at, .. } => duplicate_at,
                    Fate::Dropped(_) => None,
                },
            });
            if let Some(p) = &mut self.capture_payloads {
                p.push(payload.clone());
            }
        }
        match fate {
            Fate::Dropped(_) => self.spare_payloads.push(payload),
            Fate::Delivered { at, duplicate_at } => {
                let to = 1 - from;
                if let Some(dup_at) = duplicate_at {
                    let mut copy = self.spare_payloads.pop().unwrap_or_default();
                    copy.clear();
                    copy.extend_from_slice(&payload);
                    let pkt = self.store(Packet {
                        repr,
                        payload: copy,
                        ecn,
                    });
                    self.queue.push(dup_at, Ev::Arrive { to, pkt });
                }
                let pkt = self.store(Packet { repr, payload, ecn });
                self.schedule_arrival(from, at, pkt);
            }
        }
    }

    fn store(&mut self, p: Packet) -> u32 {
        if let Some(i) = self.free_slots.pop() {
            self.slab[i as usize] = Some(p);
            i
        } else {
            self.slab.push(Some(p));
            (self.slab.len() - 1) as u32
        }
    }

    fn host_result(&self, h: usize) -> HostResult {
        let host = &self.hosts[h];
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
        let elapsed = self.now.as_secs_f64();
        let client = &self.hosts[CLIENT].app;
        let server = &self.hosts[SERVER].app;
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
            events: self.events,
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
