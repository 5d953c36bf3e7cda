//! The simulated network: any number of client and server hosts, each behind
//! an access link (the scenario's `[link]` settings: `forward` is the
//! client-to-server direction), all joined by one bottleneck link (a
//! dumbbell) whose two directions each have a rate, a propagation delay and a
//! queue discipline ([`crate::qdisc`]).
//!
//! Each host demultiplexes arriving segments by 4-tuple to its connections; a
//! segment for none goes to the host's sans-IO endpoint (proto's, as on the
//! TUN host): a server host accepts every connection of a flow group on one
//! listening port, up to its `backlog` of half-open ones and past it with SYN
//! cookies (RFC 4987 3.6) or not at all, and everything else gets an RST
//! (RFC 9293 3.10.7.1).
//! One seeded RNG (connection open times, link randomness) and one event
//! queue ordered by (time, insertion) make a run a function of its scenario.
//! Engine timers are lazy queue entries in a calendar of 1 ms buckets
//! ([`crate::event::CalendarQueue`]), so idle connections cost nothing per event.
//!
//! The two-host world ([`crate::world::Sim`]) is this network with two
//! hosts and no bottleneck ([`FlowSim::two_host`]): each host's access link
//! delivers straight to the other host.

use crate::drive::{self, Core, Endpoint, Ev, Queue, Wires, NO_EP};
use crate::flood::SynFlood;
use crate::host::{address, Key, NetHost, Slot};
use crate::link::{Fate, Link, SerTime};
use crate::metrics::{
    Delivery, Flow, FlowResult, FlowsResult, GroupResult, Histogram, LatencyHistogram, LinkDrops,
    ListenResult, QueueResult, RunEnd, Tail,
};
use crate::packet::{Packet, Pool};
use crate::pattern::{Pattern, PERIOD};
use crate::qdisc::{ecn, Qdisc, QueuedPacket};
use crate::scenario::{FlowGroup, Scenario, Spread, Topology, Workload};
use crate::wire::{Frame, Watch};
use crate::workload::{App, Role};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;
use tinygram_proto::endpoint::IsnKey;
use tinygram_proto::{
    Config, ConnError, Connection, Instant, IsnGenerator, SeqNumber, State, TcpRepr, TraceEvent,
    Unmatched,
};

/// What a receiver does with arriving segments before TCP sees them.
struct Receiver {
    /// Receive coalescing interval; zero hands each segment over on arrival.
    rx_coalesce: Duration,
    /// Segments waiting for the coalescing interval to end.
    rx_batch: Vec<(TcpRepr, Vec<u8>)>,
    /// The GRO piece size of each merged segment of the batch (see [`crate::coalesce::merge`]).
    rx_gso: Vec<Option<usize>>,
}

/// Above this many flows, `--json` gives histograms and the worst flows instead of every flow.
pub const LIST_FLOWS_UP_TO: usize = 1000;
/// How many of the worst flows results list.
pub const WORST_FLOWS: usize = 10;
/// The first client port of each client host.
pub(crate) const FIRST_PORT: u32 = 1024;
/// The flow of an endpoint no flow expected (a connection a flood opened).
const NO_FLOW: u32 = u32::MAX;

/// A host's TCP settings for its connections: the configured ones with the
/// host's memory budget (RFC 1106 5: a host's memory is shared by its connections).
fn host_tcp(h: &crate::scenario::HostConfig) -> Arc<Config> {
    let mut cfg = h.tcp.clone();
    cfg.host_budget = h.memory;
    Arc::new(cfg)
}

/// splitmix64: one step of a tiny deterministic generator.
pub(crate) fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Host `host`'s SYN-cookie secret, from the run's ISN seed.
fn cookie_key(isn_seed: u64, host: usize) -> IsnKey {
    let mut state = isn_seed ^ (host as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let (a, b) = (splitmix(&mut state), splitmix(&mut state));
    let mut key = [0u8; 16];
    key[..8].copy_from_slice(&a.to_le_bytes());
    key[8..].copy_from_slice(&b.to_le_bytes());
    IsnKey::fixed(key)
}

/// Per-connection ISNs from the run's seed (a fixed `isn` setting first):
/// eight bytes of state instead of a ChaCha stream per connection.
struct FlowIsn {
    first: Option<u32>,
    state: u64,
}

impl IsnGenerator for FlowIsn {
    fn next_isn(&mut self, _now: Instant, _local: u16, _remote: u16) -> SeqNumber {
        SeqNumber(
            self.first
                .take()
                .unwrap_or_else(|| splitmix(&mut self.state) as u32),
        )
    }
}

/// A connection between a client and a server host.
struct FlowState {
    group: u32,
    client: u32,
    server: Option<u32>,
    client_host: u32,
    server_host: u32,
    client_port: u16,
    server_port: u16,
    start: Instant,
    done_at: Option<Instant>,
}

/// One direction of the shared link.
struct Bottleneck {
    qdisc: Qdisc,
    /// Serialization times at the link's rate.
    ser: SerTime,
    delay: Duration,
    busy: bool,
    wire_bytes: u64,
}

/// The many-flow world's prefetching of the next events' state
/// ([`FlowSim::look_ahead`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LookAhead {
    /// Endpoints in the run.
    pub endpoints: usize,
    /// From how many endpoints it prefetches (`None`: never, the two-host world).
    pub from: Option<usize>,
    /// Set on the command line instead of by the rule (`--look-ahead`).
    pub forced: Option<bool>,
    /// The last-level cache the threshold comes from, when known.
    pub last_level_cache: Option<u64>,
    /// Bytes of state counted per endpoint.
    pub per_endpoint: u64,
}

impl LookAhead {
    /// Whether events prefetch.
    pub fn on(&self) -> bool {
        self.from.is_some_and(|f| self.endpoints >= f)
    }
}

/// Addresses in a run's memory, for a tool that reads a trace of it (valgrind's
/// lackey): the endpoint table (each endpoint's application and engine state,
/// heap buffers aside, [`MemoryLayout::endpoint_size`] bytes apart, laid out
/// once for every flow so it never moves) and the counter written once per event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryLayout {
    pub endpoints: std::ops::Range<usize>,
    pub endpoint_size: usize,
    pub event_counter: usize,
}

/// A simulation run in progress: many flows over a bottleneck, or two
/// hosts with none ([`FlowSim::two_host`], what [`crate::world::Sim`] runs).
pub struct FlowSim {
    /// The clock, the event queue and the connection ends ([`crate::drive`]).
    pub(crate) core: Core,
    rng: ChaCha8Rng,
    pub(crate) hosts: Vec<NetHost>,
    /// No bottleneck: each host's access link delivers to the other host (two hosts).
    direct: bool,
    /// From how many endpoints on the next events' state is prefetched
    /// ([`FlowSim::prefetch_from`]).
    prefetch_from: usize,
    /// Set by [`FlowSim::force_look_ahead`].
    look_ahead_forced: Option<bool>,
    /// With no bottleneck, packets in flight on each host's access link, in
    /// arrival order: (arrival, packet). Only the head is in the event queue,
    /// which keeps the queue small however many packets a long fat pipe holds.
    in_flight: Vec<VecDeque<(Instant, u32)>>,
    /// Receive coalescing of each endpoint, where set (the two-host world).
    rx: Vec<Receiver>,
    /// Why-trace per endpoint, if requested.
    traces: Option<Vec<Vec<TraceEvent>>>,
    /// No demultiplexer entry was ever replaced by another connection's (two
    /// flows with one 4-tuple): only then does a packet's `to_ep` stand for
    /// the table lookup it replaces.
    demux_exact: bool,
    flows: Vec<FlowState>,
    groups: Vec<FlowGroup>,
    /// Each group's client and server TCP settings (its host's memory budget
    /// in them), shared by the group's connections.
    conn_cfgs: Vec<[Arc<Config>; 2]>,
    /// Each group's workload, shared by its flows' applications.
    workloads: Vec<Arc<Workload>>,
    /// The bottleneck's two directions (none when `direct`).
    bottleneck: Vec<Bottleneck>,
    pool: Pool,
    dropped: Vec<QueuedPacket>,
    patterns: [Arc<Pattern>; 2],
    framing: Link,
    flows_done: usize,
    pub(crate) name: String,
    pub(crate) seed: u64,
    isn_seed: u64,
    /// Fault injection: flip a byte of this flow's next client data segment.
    corrupt: Option<u32>,
    /// Captures and taps, each packet as it starts onto the bottleneck.
    watch: Watch,
    /// The SYN flood, if the run has one, and the host it floods.
    flood: Option<(SynFlood, u32)>,
}

pub use crate::wire::{Tap, WireEvent};

/// Where a flow's streams start in the shared patterns: far apart, so a byte
/// delivered to the wrong connection does not match.
fn pattern_base(flow: u32) -> u64 {
    (u64::from(flow) * 104_729) % PERIOD as u64
}

impl FlowSim {
    /// Builds the hosts, links and connection schedule of `sc`, which must have a topology.
    pub fn new(sc: &Scenario) -> FlowSim {
        let topo: Topology = sc.topology.clone().unwrap_or_else(|| {
            crate::scenario::Scenario::from_str("[bottleneck]\n", "<default>", &[])
                .ok()
                .and_then(|s| s.topology)
                .expect("a bottleneck scenario has a topology")
        });
        let mut rng = ChaCha8Rng::seed_from_u64(sc.seed);
        let mut hosts: Vec<NetHost> = Vec::new();
        let mut host_index: HashMap<String, u32> = HashMap::new();
        let mut host = |name: &str, server_side: bool, hosts: &mut Vec<NetHost>| -> u32 {
            *host_index.entry(name.to_string()).or_insert_with(|| {
                let (up, down) = if server_side {
                    (sc.reverse.clone(), sc.forward.clone())
                } else {
                    (sc.forward.clone(), sc.reverse.clone())
                };
                // Keyed once the run's ISN seed is drawn, below.
                hosts.push(NetHost::new(
                    name,
                    server_side,
                    (up, down),
                    IsnKey::fixed([0; 16]),
                ));
                (hosts.len() - 1) as u32
            })
        };
        let mut flows = Vec::new();
        let mut opens = Vec::new();
        let mut demux_exact = true;
        for (gi, g) in topo.groups.iter().enumerate() {
            let server = host(&g.server_host, true, &mut hosts);
            if hosts[server as usize].listener_group(g.port).is_none() {
                hosts[server as usize].listening.push((g.port, gi as u32));
            }
            let clients: Vec<u32> = g
                .client_hosts
                .iter()
                .map(|h| host(h, false, &mut hosts))
                .collect();
            let mut at = Instant::ZERO + g.start;
            for i in 0..g.count {
                if i > 0 {
                    at += match g.spread {
                        Spread::None => Duration::ZERO,
                        Spread::Uniform(d) => d,
                        Spread::Exponential(mean) => {
                            let u: f64 = rng.gen();
                            Duration::from_secs_f64(-(1.0 - u).ln() * mean.as_secs_f64())
                        }
                    };
                }
                let ch = clients[i as usize % clients.len()];
                let port = hosts[ch as usize].next_port as u16;
                hosts[ch as usize].next_port += 1;
                let id = flows.len() as u32;
                if hosts[server as usize]
                    .demux
                    .insert((ch, port, g.port), Slot::Expect(id))
                    .is_some()
                {
                    demux_exact = false;
                }
                flows.push(FlowState {
                    group: gi as u32,
                    client: u32::MAX,
                    server: None,
                    client_host: ch,
                    server_host: server,
                    client_port: port,
                    server_port: g.port,
                    start: at,
                    done_at: None,
                });
                opens.push((at, id));
            }
        }
        let mut queue = Queue::new();
        for (at, flow) in opens {
            queue.push(at, Ev::Open { flow });
        }
        let b = &topo.bottleneck;
        let mk = || Bottleneck {
            qdisc: Qdisc::new(b.qdisc.clone()),
            ser: SerTime::new(b.rate_bps),
            delay: b.delay,
            busy: false,
            wire_bytes: 0,
        };
        let isn_seed = rng.gen();
        // Each server's endpoint: its cookie key from the run's seed (no
        // draw from the RNG, so a run's numbers stay as they were), its
        // listeners with their group's server settings.
        for (i, h) in hosts.iter_mut().enumerate() {
            h.endpoint = tinygram_proto::Endpoint::new(cookie_key(isn_seed, i));
            for &(port, gi) in &h.listening {
                let server = &topo.groups[gi as usize].server;
                let mut cfg = server.tcp.clone();
                cfg.host_budget = server.memory;
                h.endpoint.listen(port, cfg);
            }
        }
        let flood = topo.flood.clone();
        let mut sim = FlowSim {
            core: Core::new(Instant::ZERO + sc.duration, queue, flows.len() * 2),
            rng,
            hosts,
            direct: false,
            prefetch_from: Self::prefetch_from(false, None),
            look_ahead_forced: None,
            in_flight: Vec::new(),
            rx: Vec::new(),
            traces: None,
            demux_exact,
            flows,
            conn_cfgs: topo
                .groups
                .iter()
                .map(|g| [host_tcp(&g.client), host_tcp(&g.server)])
                .collect(),
            workloads: topo
                .groups
                .iter()
                .map(|g| Arc::new(g.workload.clone()))
                .collect(),
            groups: topo.groups,
            bottleneck: vec![mk(), mk()],
            pool: Pool::default(),
            dropped: Vec::new(),
            patterns: [
                Arc::new(Pattern::new(sc.seed, 0)),
                Arc::new(Pattern::new(sc.seed, 1)),
            ],
            framing: Link::new(sc.forward.clone()),
            flows_done: 0,
            name: sc.name.clone(),
            seed: sc.seed,
            isn_seed,
            corrupt: None,
            watch: Watch::default(),
            flood: None,
        };
        if let Some(f) = flood {
            sim.syn_flood(f)
                .expect("the scenario checked the flood's host and port");
        }
        sim
    }

    /// Two hosts, a client and a server, joined by their access links alone
    /// (`forward` and `reverse`), one connection between them whose client
    /// sends its SYN at time zero: the two-host world. Its ISNs and
    /// applications are drawn as that world always drew them (the
    /// scenario's `isn`, else from the run's RNG, then per-host streams).
    pub(crate) fn two_host(sc: &Scenario) -> FlowSim {
        use crate::world::{SeededIsn, CLIENT_PORT, SERVER_PORT};
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
            SeededIsn::new(sc.seed, 0, isn_c),
            Instant::ZERO,
        );
        let server = Connection::listen(
            with_budget(&sc.server),
            SERVER_PORT,
            SeededIsn::new(sc.seed, 1, isn_s),
        );
        let patterns = [
            Arc::new(Pattern::new(sc.seed, 0)),
            Arc::new(Pattern::new(sc.seed, 1)),
        ];
        let workload = Arc::new(sc.workload.clone());
        let mut core = Core::new(Instant::ZERO + sc.duration, Queue::new(), 2);
        let mut hosts = Vec::new();
        for (h, conn, role, (local, remote), (up, down), name) in [
            (
                0,
                client,
                Role::Client,
                (CLIENT_PORT, SERVER_PORT),
                (&sc.forward, &sc.reverse),
                "client",
            ),
            (
                1,
                server,
                Role::Server,
                (SERVER_PORT, CLIENT_PORT),
                (&sc.reverse, &sc.forward),
                "server",
            ),
        ] {
            let app = App::with_patterns(
                role,
                workload.clone(),
                patterns[h].clone(),
                patterns[1 - h].clone(),
                0,
                0,
            )
            .with_jitter_seed(sc.seed);
            let ep = core.add(Endpoint {
                host: h as u32,
                peer: (1 - h) as u32,
                flow: 0,
                peer_ep: (1 - h) as u32,
                local_port: local,
                remote_port: remote,
                established: false,
                half_open: false,
                app,
                conn,
            });
            // No listener: the one connection exists from time zero.
            let mut host = NetHost::new(
                name,
                h == 1,
                (up.clone(), down.clone()),
                IsnKey::fixed([0; 16]),
            );
            host.demux
                .insert(((1 - h) as u32, remote, local), Slot::Conn(ep));
            hosts.push(host);
        }
        let receiver = |cfg: &crate::scenario::HostConfig| Receiver {
            rx_coalesce: cfg.rx_coalesce,
            rx_batch: Vec::new(),
            rx_gso: Vec::new(),
        };
        FlowSim {
            core,
            rng,
            hosts,
            direct: true,
            prefetch_from: Self::prefetch_from(true, None),
            look_ahead_forced: None,
            in_flight: vec![VecDeque::new(), VecDeque::new()],
            rx: vec![receiver(&sc.client), receiver(&sc.server)],
            traces: None,
            demux_exact: true,
            flows: vec![FlowState {
                group: 0,
                client: 0,
                server: Some(1),
                client_host: 0,
                server_host: 1,
                client_port: CLIENT_PORT,
                server_port: SERVER_PORT,
                start: Instant::ZERO,
                done_at: None,
            }],
            groups: Vec::new(),
            conn_cfgs: Vec::new(),
            workloads: vec![workload],
            bottleneck: Vec::new(),
            pool: Pool::default(),
            dropped: Vec::new(),
            patterns,
            framing: Link::new(sc.forward.clone()),
            flows_done: 0,
            name: sc.name.clone(),
            seed: sc.seed,
            isn_seed: 0,
            corrupt: None,
            watch: Watch::default(),
            flood: None,
        }
    }

    /// Records every engine's why-trace (hold/release and ACK decisions).
    pub(crate) fn enable_trace(&mut self) {
        for e in &mut self.core.eps {
            e.conn.set_trace(true);
        }
        self.traces = Some(vec![Vec::new(); self.core.eps.len()]);
    }

    /// The why-trace of endpoint `ep`, in time order.
    pub(crate) fn trace(&self, ep: usize) -> &[TraceEvent] {
        self.traces
            .as_ref()
            .and_then(|t| t.get(ep))
            .map_or(&[], |t| t.as_slice())
    }

    /// Runs to the end; how it ended (for a result built elsewhere).
    pub(crate) fn run_to_end(&mut self, progress: &mut dyn FnMut(Instant, Instant)) -> RunEnd {
        if self.direct {
            // The two-host connection exists from time zero (the client's
            // SYN leaves then): both ends act before the first event.
            for ep in 0..self.core.eps.len() as u32 {
                drive::service(self, ep);
            }
        }
        drive::run(self, progress)
    }

    /// Fault injection for tests: the next data segment flow `flow`'s client
    /// sends has its first byte flipped on the wire (nothing checks a checksum
    /// in the simulator), so the run must fail its integrity check naming the flow.
    pub fn corrupt_next_segment(&mut self, flow: u32) {
        self.corrupt = Some(flow);
    }

    /// Calls `tap` with every packet as it starts onto the bottleneck, both
    /// directions (what a mirror port on that link sees; for `--pcap`), with
    /// its fate on the receiver's access link. Observing changes nothing in the run.
    pub fn set_tap(&mut self, tap: Box<Tap>) {
        self.watch.set_tap(tap);
    }

    /// Records every packet the tap would see (headers; payloads too if `payloads`).
    pub fn enable_capture(&mut self, payloads: bool) {
        self.watch.enable_capture(payloads);
    }

    /// The packets recorded by [`enable_capture`](Self::enable_capture).
    pub fn capture(&self) -> (&[WireEvent], Option<&[Vec<u8>]>) {
        self.watch.capture()
    }

    /// The hosts' names, by index (the numbering taps use).
    pub fn host_names(&self) -> Vec<&str> {
        self.hosts.iter().map(|h| h.name.as_str()).collect()
    }

    /// Number of connections (flows) in the run.
    pub fn flow_count(&self) -> usize {
        self.flows.len()
    }

    /// The engine of each open connection endpoint, for inspection.
    pub fn connections(&self) -> impl Iterator<Item = &Connection> {
        self.core.eps.iter().map(|e| &e.conn)
    }

    fn endpoint(&mut self, flow: u32, role: Role, conn: Connection, host: u32, peer: u32) -> u32 {
        let f = &self.flows[flow as usize];
        let (local_port, remote_port, peer_ep) = match role {
            Role::Client => (f.client_port, f.server_port, NO_EP),
            Role::Server => (f.server_port, f.client_port, f.client),
        };
        let (mine, theirs) = match role {
            Role::Client => (0, 1),
            Role::Server => (1, 0),
        };
        let base = pattern_base(flow);
        let app = App::with_patterns(
            role,
            self.workloads[f.group as usize].clone(),
            self.patterns[mine].clone(),
            self.patterns[theirs].clone(),
            base,
            base,
        )
        .with_jitter_seed(self.seed);
        self.core.add(Endpoint {
            conn,
            app,
            host,
            peer,
            flow,
            peer_ep,
            local_port,
            remote_port,
            established: false,
            half_open: false,
        })
    }

    fn isn(&self, ep_index: usize, fixed: Option<u32>) -> FlowIsn {
        let mut state = self.isn_seed ^ (ep_index as u64).wrapping_mul(0x2545_f491_4f6c_dd1d);
        splitmix(&mut state);
        FlowIsn {
            first: fixed,
            state,
        }
    }

    fn open(&mut self, flow: u32) {
        let f = &self.flows[flow as usize];
        let (ch, sh, cport, sport) = (f.client_host, f.server_host, f.client_port, f.server_port);
        let g = &self.groups[f.group as usize];
        let cfg = Arc::clone(&self.conn_cfgs[f.group as usize][0]);
        let isn = self.isn(self.core.eps.len(), g.client.isn);
        let conn = Connection::connect(cfg, cport, sport, isn, self.core.now);
        let ep = self.endpoint(flow, Role::Client, conn, ch, sh);
        self.flows[flow as usize].client = ep;
        if self.hosts[ch as usize]
            .demux
            .insert((sh, sport, cport), Slot::Conn(ep))
            .is_some()
        {
            self.demux_exact = false;
        }
        drive::service(self, ep);
    }

    /// Adds a SYN flood from spoofed sources against `flood.server_host`'s
    /// listening port ([`crate::flood`]); a run has at most one.
    pub fn syn_flood(&mut self, flood: SynFlood) -> Result<(), String> {
        flood.check()?;
        if self.flood.is_some() || self.direct {
            return Err("a run takes one flood, and only over a bottleneck".to_string());
        }
        let host = self
            .hosts
            .iter()
            .position(|h| h.name == flood.server_host && h.listener_group(flood.port).is_some())
            .ok_or_else(|| {
                format!(
                    "no server host {:?} listens on port {} to flood",
                    flood.server_host, flood.port
                )
            })?;
        if flood.count > 0 {
            self.core
                .queue
                .push(Instant::ZERO + flood.start, Ev::Flood { n: 0 });
        }
        self.flood = Some((flood, host as u32));
        Ok(())
    }

    /// The flood's `n`th SYN reaches the bottleneck; the next one is
    /// scheduled (one event queued at a time, however long the flood).
    fn flood_syn(&mut self, n: u32) {
        let (flood, host) = self.flood.as_ref().expect("a flood event has a flood");
        let (src, syn) = flood.syn(n, self.seed);
        let dst = *host;
        if n + 1 < flood.count {
            let at = Instant::ZERO + flood.start + flood.interval * (n + 1);
            self.core.queue.push(at, Ev::Flood { n: n + 1 });
        }
        self.hosts[dst as usize].listen.flood_syns += 1;
        let mut payload = self.pool.buffer();
        payload.clear();
        let pkt = self
            .pool
            .store(Packet::sent(syn, payload, (src, dst), NO_EP, false));
        self.reach_bottleneck(pkt);
    }

    /// Where this run keeps its endpoints and its event counter, for tools
    /// that read a memory trace of it (benches/endpoint-lines.sh).
    pub fn memory_layout(&self) -> MemoryLayout {
        let eps = &self.core.eps;
        let size = std::mem::size_of::<Endpoint>();
        let start = eps.as_ptr() as usize;
        MemoryLayout {
            endpoints: start..start + eps.capacity() * size,
            endpoint_size: size,
            event_counter: std::ptr::addr_of!(self.core.events) as usize,
        }
    }

    /// The number of endpoints from which prefetching the next events'
    /// state pays: when their state (the endpoint and what it holds on the
    /// heap, as the footprint estimate counts it) outgrows half the
    /// last-level cache (the rest holds packets, the event queue and the
    /// byte patterns, and on a shared machine other programs' data). Below
    /// that the fetches are cache hits that only cost: 1,000 flows ran 15 %
    /// faster without them, 5,000 flows 20 % slower (docs/benchmarks.md).
    /// Where the cache size is unknown, always; never in the two-host world
    /// (`direct`); `forced` ([`FlowSim::force_look_ahead`]) overrides all.
    fn prefetch_from(direct: bool, forced: Option<bool>) -> usize {
        match forced {
            Some(true) => 0,
            Some(false) => usize::MAX,
            None if direct => usize::MAX,
            None => crate::cache::last_level_bytes().map_or(0, |llc| {
                usize::try_from(llc / 2 / Self::state_per_endpoint()).unwrap_or(usize::MAX)
            }),
        }
    }

    /// Bytes of state per endpoint the prefetch rule counts: the endpoint
    /// and its share of a pair's heap in the footprint estimate.
    fn state_per_endpoint() -> u64 {
        std::mem::size_of::<Endpoint>() as u64 + crate::footprint::PAIR_HEAP / 2
    }

    /// Overrides the prefetch rule (`bench sim --flows --look-ahead`):
    /// `Some(true)` prefetches however few the endpoints, `Some(false)`
    /// never, `None` follows the rule. Speed only: results do not change.
    pub fn force_look_ahead(&mut self, on: Option<bool>) {
        self.look_ahead_forced = on;
        self.prefetch_from = Self::prefetch_from(self.direct, on);
    }

    /// Whether events prefetch the next ones' state now, and why.
    pub fn look_ahead(&self) -> LookAhead {
        LookAhead {
            endpoints: self.core.eps.len(),
            from: (!self.direct || self.look_ahead_forced.is_some()).then_some(self.prefetch_from),
            forced: self.look_ahead_forced,
            last_level_cache: crate::cache::last_level_bytes(),
            per_endpoint: Self::state_per_endpoint(),
        }
    }

    /// Runs to the end; `progress` is called now and then with the simulated time.
    pub fn run(&mut self, progress: &mut dyn FnMut(Instant, Instant)) -> FlowsResult {
        let end = drive::run(self, progress);
        self.result(end)
    }

    /// Offers a segment from host `src` to its access link.
    fn send(&mut self, src: u32, dst: u32, repr: TcpRepr, payload: Vec<u8>) {
        self.send_to(repr, payload, (src, dst), NO_EP, false);
    }

    /// Offers a segment from host `src` to `dst` (`to_ep`: the receiving
    /// endpoint, if known; `ect`: sent ECN-capable) to `src`'s access link.
    fn send_to(
        &mut self,
        repr: TcpRepr,
        payload: Vec<u8>,
        (src, dst): (u32, u32),
        to_ep: u32,
        ect: bool,
    ) {
        let now = self.core.now;
        // Built in the slab's argument: stored with one copy, then used in place.
        let id = self
            .pool
            .store(Packet::sent(repr, payload, (src, dst), to_ep, ect));
        let src = src as usize;
        let p = self.pool.get_mut(id).expect("just stored");
        let fate = p.offer(&mut self.hosts[src].up, now, &mut self.rng);
        if self.direct {
            if self.watch.on() {
                self.watch.see(&Frame {
                    at: now,
                    src: p.src,
                    dst: p.dst,
                    dir: u8::from(self.hosts[src].server_side),
                    repr: &p.repr,
                    payload: &p.payload,
                    ecn: p.ecn,
                    fate,
                });
            }
            if let Some(c) = self.pool.after_link(fate, id) {
                if let Some((dup_at, dup)) = c.duplicate {
                    self.core.queue.push(dup_at, Ev::Arrive { pkt: dup });
                }
                self.schedule_arrival(src, c.at, c.pkt);
            }
        } else if let Some(c) = self.pool.after_link(fate, id) {
            if let Some((dup_at, dup)) = c.duplicate {
                self.core.queue.push(dup_at, Ev::ToBottleneck { pkt: dup });
            }
            self.core.queue.push(c.at, Ev::ToBottleneck { pkt: c.pkt });
        }
    }

    /// With no bottleneck: schedules packet `pkt` to arrive over host `h`'s
    /// access link at `at`, appended to the link's FIFO when it keeps
    /// arrival order, else as its own event.
    fn schedule_arrival(&mut self, h: usize, at: Instant, pkt: u32) {
        let fifo = &mut self.in_flight[h];
        match fifo.back() {
            None => {
                fifo.push_back((at, pkt));
                self.core.queue.push(at, Ev::LinkHead { link: h as u8 });
            }
            Some(&(last, _)) if at >= last => fifo.push_back((at, pkt)),
            Some(_) => self.core.queue.push(at, Ev::Arrive { pkt }),
        }
    }

    /// Hands endpoint `ep`'s coalesced batch to its engine, merged as GRO would.
    fn flush_rx(&mut self, ep: usize) {
        let mut batch = std::mem::take(&mut self.rx[ep].rx_batch);
        let mut gso = std::mem::take(&mut self.rx[ep].rx_gso);
        crate::coalesce::merge(&mut batch, &mut gso);
        let now = self.core.now;
        for ((repr, payload), g) in batch.drain(..).zip(gso.iter()) {
            // A merged segment is a GRO packet: its pieces count as segments.
            let conn = &mut self.core.eps[ep].conn;
            match *g {
                Some(g) => conn.handle_gro_segment(now, &repr, &payload, g),
                None => conn.handle_segment(now, &repr, &payload),
            }
            self.pool.give_back(payload);
        }
        // Keep the allocations for the next batch.
        self.rx[ep].rx_batch = batch;
        self.rx[ep].rx_gso = gso;
        drive::service(self, ep as u32);
    }

    fn reach_bottleneck(&mut self, pkt: u32) {
        let now = self.core.now;
        let p = self.pool.get(pkt).expect("live packet");
        // A spoofed source is no host: it enters on the client side.
        let dir = usize::from(
            self.hosts
                .get(p.src as usize)
                .is_some_and(|h| h.server_side),
        );
        let flow = (u64::from(p.src) << 40)
            ^ (u64::from(p.dst) << 16)
            ^ (u64::from(p.repr.src_port) << 32)
            ^ u64::from(p.repr.dst_port);
        let q = QueuedPacket {
            id: pkt,
            wire: self.framing.wire_len(p.ip_len()),
            flow,
            ecn: p.ecn,
            enqueued: now,
        };
        let mut dropped = std::mem::take(&mut self.dropped);
        self.bottleneck[dir].qdisc.enqueue(now, q, &mut dropped);
        for d in dropped.drain(..) {
            self.pool.recycle(d.id);
        }
        self.dropped = dropped;
        if !self.bottleneck[dir].busy {
            self.start_tx(dir);
        }
    }

    /// Starts serializing the next packet of bottleneck direction `dir`, if any.
    fn start_tx(&mut self, dir: usize) {
        let now = self.core.now;
        let mut dropped = std::mem::take(&mut self.dropped);
        let next = self.bottleneck[dir].qdisc.dequeue(now, &mut dropped);
        for d in dropped.drain(..) {
            self.pool.recycle(d.id);
        }
        self.dropped = dropped;
        let Some(q) = next else {
            return;
        };
        if let Some(p) = self.pool.get_mut(q.id) {
            p.ecn = q.ecn;
        }
        let b = &mut self.bottleneck[dir];
        b.busy = true;
        b.wire_bytes += q.wire as u64;
        let ser = b.ser.get(q.wire);
        let done = now + ser;
        let delay = b.delay;
        self.core
            .queue
            .push(done, Ev::BottleneckFree { dir: dir as u8 });
        self.enter_downlink(q.id, done + delay);
    }

    /// Offers packet `pkt` to its receiver's access link at `at`, when it
    /// leaves the bottleneck. Called when the bottleneck starts sending it:
    /// every packet for one host crosses the same bottleneck direction with
    /// the same delay, so each downlink still sees its packets in time order,
    /// and one event per packet is saved.
    fn enter_downlink(&mut self, pkt: u32, at: Instant) {
        let p = self.pool.get_mut(pkt).expect("live packet");
        let dst = p.dst as usize;
        // To a spoofed source (no host of the run): it leaves the bottleneck
        // for a network the run does not model, and is gone.
        let (fate, dir) = match self.hosts.get_mut(dst) {
            Some(host) => (
                p.offer(&mut host.down, at, &mut self.rng),
                u8::from(!host.server_side),
            ),
            None => (
                Fate::Delivered {
                    at,
                    duplicate_at: None,
                },
                1,
            ),
        };
        let p = self.pool.get(pkt).expect("live packet");
        if self.watch.on() {
            self.watch.see(&Frame {
                at: self.core.now,
                src: p.src,
                dst: p.dst,
                dir,
                repr: &p.repr,
                payload: &p.payload,
                ecn: p.ecn,
                fate,
            });
        }
        match fate {
            Fate::Delivered { .. } if dst >= self.hosts.len() => self.pool.recycle(pkt),
            Fate::Dropped(_) => self.pool.recycle(pkt),
            Fate::Delivered { at, duplicate_at } => {
                if let Some(dup) = duplicate_at {
                    let id = self.pool.duplicate(pkt);
                    self.core.queue.push(dup, Ev::Arrive { pkt: id });
                }
                self.core.queue.push(at, Ev::Arrive { pkt });
            }
        }
    }

    /// What the hosts' endpoints did past their backlogs, if anything.
    fn listen_result(&self) -> Option<ListenResult> {
        let mut r = ListenResult::default();
        for h in &self.hosts {
            r.add(&h.listen);
        }
        r.any().then_some(r)
    }

    /// Demultiplexes an arriving segment by 4-tuple: to its connection, to a
    /// listener (a SYN of an expected client), or an RST reply.
    fn arrive(&mut self, pkt: u32) {
        // The packet stays in the slab until TCP has seen it (each move of
        // one is a `memcpy`); what the lookup needs is read first.
        let p = self.pool.get(pkt).expect("live packet");
        let (h, to_ep, ce) = (p.dst as usize, p.to_ep, p.ecn == ecn::CE);
        let key = (p.src, p.repr.src_port, p.repr.dst_port);
        let slot = if to_ep != NO_EP {
            Some(Slot::Conn(to_ep))
        } else {
            self.hosts[h].demux.get(&key).copied()
        };
        let ep = match slot {
            Some(Slot::Conn(ep)) => Some(ep),
            Some(Slot::Expect(flow)) => self.unmatched(pkt, key, Some(flow)),
            None => self.unmatched(pkt, key, None),
        };
        if let Some(ep) = ep {
            {
                let now = self.core.now;
                let conn = &mut self.core.eps[ep as usize].conn;
                // RFC 3168 5: a CE mark reaches TCP with its segment (a
                // coalesced batch keeps no ECN field: the mark rides the
                // batch's next segment).
                if ce {
                    conn.note_ce();
                }
                if let Some(rx) = self.rx.get_mut(ep as usize) {
                    if !rx.rx_coalesce.is_zero() {
                        if rx.rx_batch.is_empty() {
                            let at = now + rx.rx_coalesce;
                            self.core.queue.push(at, Ev::RxFlush { ep });
                        }
                        let p = self.pool.take(pkt);
                        rx.rx_batch.push((p.repr, p.payload));
                        return;
                    }
                }
                let p = self.pool.get(pkt).expect("live packet");
                conn.handle_segment(now, &p.repr, &p.payload);
                self.pool.recycle(pkt);
                drive::service(self, ep);
            }
        }
    }

    /// A segment for no connection of its host (`flow`: the flow its
    /// 4-tuple expects): what the host's endpoint says to do, done. The
    /// connection a SYN opened, for the caller to hand the SYN to.
    fn unmatched(&mut self, pkt: u32, key: Key, flow: Option<u32>) -> Option<u32> {
        let now = self.core.now;
        let p = self.pool.get(pkt).expect("live packet");
        let h = p.dst;
        let tuple = (
            address(p.dst, p.repr.dst_port),
            address(p.src, p.repr.src_port),
        );
        let host = &mut self.hosts[h as usize];
        let verdict = host
            .endpoint
            .unmatched(now, tuple, &p.repr, p.payload.len(), true);
        let listen = &mut host.listen;
        match verdict {
            Unmatched::Open => {
                let half_open = host.endpoint.half_open() as u64;
                listen.most_half_open = listen.most_half_open.max(half_open);
                let ep = self.accept(h, key, flow, |cfg, isn| Connection::listen(cfg, key.2, isn));
                self.core.eps[ep as usize].half_open = true;
                return Some(ep);
            }
            Unmatched::FromCookie { mss } => {
                listen.syn_cookies_accepted += 1;
                let p = self.pool.take(pkt);
                let ep = self.accept(h, key, flow, |cfg, isn| {
                    Connection::from_syn_cookie(cfg, &p.repr, &p.payload, mss, isn, now)
                });
                self.pool.give_back(p.payload);
                drive::service(self, ep);
            }
            Unmatched::SendCookie(synack) => {
                listen.syn_cookies_sent += 1;
                self.reply(pkt, synack);
            }
            Unmatched::CookieRejected(rst) => {
                listen.syn_cookies_rejected += 1;
                host.rsts_sent += 1;
                self.reply(pkt, rst);
            }
            Unmatched::Reset(rst) => {
                host.rsts_sent += 1;
                self.reply(pkt, rst);
            }
            Unmatched::BacklogFull => {
                listen.syns_dropped += 1;
                self.pool.recycle(pkt);
            }
            Unmatched::Refused | Unmatched::Ignored => self.pool.recycle(pkt),
        }
        None
    }

    /// Answers stored packet `pkt` with `seg` (a RST or a cookie SYN-ACK),
    /// its payload buffer reused.
    fn reply(&mut self, pkt: u32, seg: TcpRepr) {
        let p = self.pool.take(pkt);
        let mut payload = p.payload;
        payload.clear();
        self.send(p.dst, p.src, seg, payload);
    }

    /// Host `h` accepts the connection of 4-tuple `key` (the one `flow`
    /// expects, or a stray one: a flood's), built by `build` from the
    /// listening group's server settings and an ISN source.
    fn accept(
        &mut self,
        h: u32,
        key: Key,
        flow: Option<u32>,
        build: impl FnOnce(Arc<Config>, FlowIsn) -> Connection,
    ) -> u32 {
        let group = match flow {
            Some(f) => self.flows[f as usize].group,
            None => self.hosts[h as usize]
                .listener_group(key.2)
                .expect("the endpoint opens only on a listening port"),
        };
        let g = &self.groups[group as usize];
        let cfg = Arc::clone(&self.conn_cfgs[group as usize][1]);
        let isn = self.isn(self.core.eps.len(), g.server.isn);
        let conn = build(cfg, isn);
        let ep = match flow {
            Some(flow) => {
                let ep = self.endpoint(flow, Role::Server, conn, h, key.0);
                self.flows[flow as usize].server = Some(ep);
                let client = self.flows[flow as usize].client;
                if client != u32::MAX {
                    self.core.eps[client as usize].peer_ep = ep;
                }
                ep
            }
            None => self.stray_endpoint(group, conn, h, key),
        };
        // The SYN's own entry (Expect of this flow) gives way; anything else was a clash.
        match (
            self.hosts[h as usize].demux.insert(key, Slot::Conn(ep)),
            flow,
        ) {
            (Some(Slot::Expect(f)), Some(flow)) if f == flow => {}
            (None, None) => {}
            _ => self.demux_exact = false,
        }
        ep
    }

    /// A server endpoint no flow expected (a flood's SYN opened it): the
    /// listening group's workload, which runs only if it is established.
    fn stray_endpoint(&mut self, group: u32, conn: Connection, host: u32, key: Key) -> u32 {
        let (peer, remote_port, local_port) = key;
        let app = App::with_patterns(
            Role::Server,
            self.workloads[group as usize].clone(),
            self.patterns[1].clone(),
            self.patterns[0].clone(),
            0,
            0,
        )
        .with_jitter_seed(self.seed);
        self.core.add(Endpoint {
            conn,
            app,
            host,
            peer,
            flow: NO_FLOW,
            peer_ep: NO_EP,
            local_port,
            remote_port,
            established: false,
            half_open: false,
        })
    }

    /// A flow's integrity verdict (the rule of [`crate::metrics::INTEGRITY_RULE`]).
    fn flow_integrity(
        &self,
        f: &FlowState,
        end: RunEnd,
        delivery: &Delivery,
    ) -> Result<(), String> {
        let alive = |ep: Option<u32>| {
            ep.is_some_and(|ep| {
                let c = &self.core.eps[ep as usize].conn;
                c.error().is_none() && !matches!(c.state(), State::Closed)
            })
        };
        let client = (f.client != u32::MAX).then_some(f.client);
        let live = end != RunEnd::Idle && alive(client) && alive(f.server);
        let dirs = [
            ("client to server", f.server, delivery.client_to_server),
            ("server to client", client, delivery.server_to_client),
        ];
        for (dir, reader, fl) in dirs {
            if reader.is_some_and(|r| !self.core.eps[r as usize].app.integrity_ok) {
                return Err(format!(
                    "bytes delivered {dir} differ from what was written (wrong, reordered or repeated data)"
                ));
            }
            if fl.bytes_delivered > fl.bytes_written {
                return Err(format!(
                    "{} bytes delivered {dir}, but only {} written",
                    fl.bytes_delivered, fl.bytes_written
                ));
            }
            if !live && fl.undelivered() > 0 {
                let fate = [client, f.server]
                    .iter()
                    .flatten()
                    .filter_map(|&ep| self.core.eps[ep as usize].conn.error())
                    .map(|e: ConnError| e.to_string())
                    .next()
                    .unwrap_or_else(|| "the run went idle".to_string());
                return Err(format!(
                    "{} of {} written bytes delivered {dir} ({fate})",
                    fl.bytes_delivered, fl.bytes_written
                ));
            }
        }
        Ok(())
    }

    fn flow_result(&self, id: usize, end: RunEnd) -> (FlowResult, LatencyHistogram) {
        let f = &self.flows[id];
        let g = &self.groups[f.group as usize];
        let ep = |e: Option<u32>| e.map(|e| &self.core.eps[e as usize]);
        let client = ep((f.client != u32::MAX).then_some(f.client));
        let server = ep(f.server);
        let written = |e: Option<&Endpoint>| e.map_or(0, |e| e.app.bytes_written());
        let read = |e: Option<&Endpoint>| e.map_or(0, |e| e.app.bytes_read);
        let delivery = Delivery {
            client_to_server: Flow {
                bytes_written: written(client),
                bytes_delivered: read(server),
            },
            server_to_client: Flow {
                bytes_written: written(server),
                bytes_delivered: read(client),
            },
        };
        let mut lat = LatencyHistogram::default();
        for e in [client, server].into_iter().flatten() {
            lat.merge(&e.app.latencies);
        }
        let until = f.done_at.unwrap_or(self.core.now);
        let active = until.saturating_duration_since(f.start).as_secs_f64();
        let bytes = read(client) + read(server);
        let sum = |x: fn(&tinygram_proto::Counters) -> u64| {
            [client, server]
                .into_iter()
                .flatten()
                .map(|e| x(e.conn.counters()))
                .sum::<u64>()
        };
        let integrity = self.flow_integrity(f, end, &delivery);
        let host = |h: u32| self.hosts[h as usize].name.clone();
        let r = FlowResult {
            id: id as u32,
            group: g.name.clone(),
            client: format!("{}:{}", host(f.client_host), f.client_port),
            server: format!("{}:{}", host(f.server_host), f.server_port),
            start_s: f.start.as_secs_f64(),
            done_s: f.done_at.map(|t| t.as_secs_f64()),
            transactions: lat.count(),
            completion_ms: lat.percentiles(),
            goodput_bytes_per_s: if active > 0.0 {
                bytes as f64 / active
            } else {
                0.0
            },
            delivery,
            segments: sum(|c| c.segments_sent),
            data_segments: sum(|c| c.data_segments_sent),
            retransmits: sum(|c| c.retransmits),
            timeouts: sum(|c| c.timeouts),
            policy_holds: sum(|c| c.policy_holds),
            delack_timer_fired: sum(|c| c.delack_timer_fired),
            client_state: client.map_or("CLOSED".to_string(), |e| e.conn.state().to_string()),
            error: [client, server]
                .into_iter()
                .flatten()
                .find_map(|e| e.conn.error().map(|x| x.to_string())),
            integrity_ok: integrity.is_ok(),
            integrity_error: integrity.err(),
        };
        (r, lat)
    }

    fn result(&self, end: RunEnd) -> FlowsResult {
        let elapsed = self.core.now.as_secs_f64();
        let per_s = |x: f64| if elapsed > 0.0 { x / elapsed } else { 0.0 };
        let mut all = LatencyHistogram::default();
        let mut flows = Vec::with_capacity(self.flows.len());
        let mut group_lat = vec![LatencyHistogram::default(); self.groups.len()];
        for i in 0..self.flows.len() {
            let (r, lat) = self.flow_result(i, end);
            all.merge(&lat);
            group_lat[self.flows[i].group as usize].merge(&lat);
            flows.push(r);
        }
        let goodputs: Vec<f64> = flows.iter().map(|f| f.goodput_bytes_per_s).collect();
        let groups = self
            .groups
            .iter()
            .enumerate()
            .map(|(gi, g)| {
                let mine: Vec<&FlowResult> = flows
                    .iter()
                    .filter(|f| f.group == g.name && self.flows[f.id as usize].group as usize == gi)
                    .collect();
                let gp: Vec<f64> = mine.iter().map(|f| f.goodput_bytes_per_s).collect();
                GroupResult {
                    name: g.name.clone(),
                    flows: mine.len() as u64,
                    transactions: mine.iter().map(|f| f.transactions).sum(),
                    completion_ms: Tail::of(&group_lat[gi]),
                    goodput_bytes_per_s: gp.iter().sum(),
                    jain_fairness: jain(&gp),
                    policy_holds: mine.iter().map(|f| f.policy_holds).sum(),
                    retransmits: mine.iter().map(|f| f.retransmits).sum(),
                    integrity_failures: mine.iter().filter(|f| !f.integrity_ok).count() as u64,
                }
            })
            .collect();
        let queues = self
            .bottleneck
            .iter()
            .zip(["client-to-server", "server-to-client"])
            .map(|(b, dir)| QueueResult::new(dir, &b.qdisc, b.wire_bytes))
            .collect();
        let access_links = self
            .hosts
            .iter()
            .flat_map(|h| {
                [("up", &h.up), ("down", &h.down)].map(|(d, l)| LinkDrops {
                    host: h.name.clone(),
                    direction: d,
                    wire_bytes: l.stats().wire_bytes,
                    dropped_queue: l.stats().dropped_queue,
                    dropped_loss: l.stats().dropped_loss,
                    dropped_ber: l.stats().dropped_ber,
                })
            })
            .collect();
        let failed: Vec<&FlowResult> = flows.iter().filter(|f| !f.integrity_ok).collect();
        let integrity_error = failed.first().map(|f| {
            format!(
                "flow {} ({}, {} -> {}): {}{}",
                f.id,
                f.group,
                f.client,
                f.server,
                f.integrity_error.as_deref().unwrap_or("integrity failed"),
                if failed.len() > 1 {
                    format!(" (and {} more flows)", failed.len() - 1)
                } else {
                    String::new()
                }
            )
        });
        let mut worst: Vec<&FlowResult> = flows.iter().collect();
        // Failed flows first, then the slowest p99, then the least goodput.
        worst.sort_by(|a, b| {
            a.integrity_ok
                .cmp(&b.integrity_ok)
                .then(b.completion_ms.p99.total_cmp(&a.completion_ms.p99))
                .then(a.goodput_bytes_per_s.total_cmp(&b.goodput_bytes_per_s))
                .then(a.id.cmp(&b.id))
        });
        let worst_flows = worst.into_iter().take(WORST_FLOWS).cloned().collect();
        let transactions = all.count();
        let goodput: u64 = flows
            .iter()
            .map(|f| {
                f.delivery.client_to_server.bytes_delivered
                    + f.delivery.server_to_client.bytes_delivered
            })
            .sum();
        let listed = flows.len() <= LIST_FLOWS_UP_TO;
        let p99s: Vec<f64> = flows
            .iter()
            .filter(|f| f.transactions > 0)
            .map(|f| f.completion_ms.p99)
            .collect();
        FlowsResult {
            name: self.name.clone(),
            seed: self.seed,
            sim_time_s: elapsed,
            finished: end == RunEnd::Finished,
            ended: end,
            flow_count: self.flows.len() as u64,
            flows_done: self.flows_done as u64,
            transactions,
            transactions_per_s: per_s(transactions as f64),
            goodput_bytes_per_s: per_s(goodput as f64),
            completion_ms: Tail::of(&all),
            jain_fairness: jain(&goodputs),
            integrity_ok: failed.is_empty(),
            integrity_error,
            integrity_failures: failed.len() as u64,
            groups,
            queues,
            access_links,
            rsts_sent: self.hosts.iter().map(|h| h.rsts_sent).sum(),
            listen: self.listen_result(),
            segments: flows.iter().map(|f| f.segments).sum(),
            data_segments: flows.iter().map(|f| f.data_segments).sum(),
            policy_holds: flows.iter().map(|f| f.policy_holds).sum(),
            worst_flows,
            goodput_histogram: (!listed).then(|| Histogram::of(&goodputs, 20)),
            p99_completion_histogram: (!listed && !p99s.is_empty())
                .then(|| Histogram::of(&p99s, 20)),
            flows: listed.then_some(flows),
            events: self.core.events,
        }
    }
}

impl Wires for FlowSim {
    /// Many flows: connections are cold, so stale timers end at the table.
    /// Two hosts: timers are handled as that world always did (its results
    /// keep their event counts).
    fn stale_timers_from_table(&self) -> bool {
        !self.direct
    }

    fn core(&mut self) -> &mut Core {
        &mut self.core
    }

    fn drain(&mut self, ep: u32) {
        let now = self.core.now;
        let (src, dst, ports, peer_ep) = {
            let e = &self.core.eps[ep as usize];
            (e.host, e.peer, (e.local_port, e.remote_port), e.peer_ep)
        };
        // Filled in place by the engine: the header is copied once, into the slab.
        let mut repr = TcpRepr::default();
        loop {
            let mut payload = self.pool.buffer();
            if !self.core.eps[ep as usize]
                .conn
                .poll_transmit_into(now, &mut payload, &mut repr)
            {
                self.pool.give_back(payload);
                break;
            }
            if let Some(flow) = self.corrupt {
                let f = &self.flows[flow as usize];
                if f.client == ep && !payload.is_empty() {
                    payload[0] ^= 0xff;
                    self.corrupt = None;
                }
            }
            // The peer's demultiplexer maps this 4-tuple to the peer endpoint
            // (entries are never removed), unless two flows share a 4-tuple.
            let to_ep = if self.demux_exact && (repr.src_port, repr.dst_port) == ports {
                peer_ep
            } else {
                NO_EP
            };
            let ect = self.core.eps[ep as usize].conn.transmit_ect();
            self.send_to(repr, payload, (src, dst), to_ep, ect);
        }
    }

    /// Marks the flow done when one of its applications is.
    fn serviced(&mut self, ep: u32) {
        let e = &mut self.core.eps[ep as usize];
        if e.half_open && e.conn.state() != State::SynReceived {
            // Established, reset or timed out: its backlog place is free.
            e.half_open = false;
            let (h, port) = (e.host, e.local_port);
            self.hosts[h as usize].endpoint.settled(port);
        }
        if let Some(t) = &mut self.traces {
            self.core.eps[ep as usize]
                .conn
                .drain_trace(&mut t[ep as usize]);
        }
        let e = &self.core.eps[ep as usize];
        if e.app.done && e.flow != NO_FLOW {
            let f = &mut self.flows[e.flow as usize];
            if f.done_at.is_none() {
                f.done_at = Some(self.core.now);
                self.flows_done += 1;
            }
        }
    }

    fn network(&mut self, ev: Ev) {
        match ev {
            Ev::Open { flow } => self.open(flow),
            Ev::ToBottleneck { pkt } => self.reach_bottleneck(pkt),
            Ev::BottleneckFree { dir } => {
                self.bottleneck[dir as usize].busy = false;
                self.start_tx(dir as usize);
            }
            Ev::Arrive { pkt } => self.arrive(pkt),
            Ev::LinkHead { link } => {
                let fifo = &mut self.in_flight[link as usize];
                let (_, pkt) = fifo.pop_front().expect("link head");
                if let Some(&(next, _)) = fifo.front() {
                    self.core.queue.push(next, Ev::LinkHead { link });
                }
                self.arrive(pkt);
            }
            Ev::RxFlush { ep } => self.flush_rx(ep as usize),
            Ev::Flood { n } => self.flood_syn(n),
            ev => unreachable!("the network schedules no {ev:?}"),
        }
    }

    /// Asks the CPU to fetch what the next two events will touch while this
    /// one is handled: with many connections each event's endpoint is cold,
    /// and handling an event takes longer than a fetch from memory. The event
    /// after next gets the part of its endpoint an event touches fetched
    /// ([`Endpoint::prefetch_hot`]), the next one (whose inline state was asked
    /// for one event ago) its heap-held state, so each line is asked for once.
    fn before_event(&self) {
        if self.core.eps.len() < self.prefetch_from {
            return; // they stay in cache (two endpoints, or a few thousand)
        }
        let c = &self.core;
        let mut k = 0;
        c.queue.for_upcoming(2, |at, ev| {
            let ep = match *ev {
                Ev::Arrive { pkt } => self.pool.get(pkt).map_or(NO_EP, |p| p.to_ep),
                Ev::Timer { ep, .. } if c.wakes[ep as usize].due(at) => ep,
                Ev::App { ep } if c.wakes[ep as usize].app_at == Some(at) => ep,
                _ => NO_EP,
            };
            if let Some(e) = c.eps.get(ep as usize) {
                if k == 0 {
                    e.conn.prefetch_heap();
                    e.app.prefetch_heap();
                } else {
                    e.prefetch_hot();
                }
            }
            k += 1;
        });
    }

    fn stop(&self) -> Option<RunEnd> {
        if self.flows_done == self.flows.len() {
            Some(RunEnd::Finished)
        } else if self.direct && self.core.eps.iter().all(|e| e.conn.error().is_some()) {
            // Two hosts whose connections both aborted: nothing more can happen.
            Some(RunEnd::Idle)
        } else {
            None
        }
    }
}

/// Jain's fairness index of `x`: (sum x)^2 / (n sum x^2), 1 when all are
/// equal, 1/n when one has everything (Jain, Chiu, Hawe, DEC-TR-301, 1984).
pub fn jain(x: &[f64]) -> f64 {
    let n = x.len() as f64;
    let sum: f64 = x.iter().sum();
    let sq: f64 = x.iter().map(|v| v * v).sum();
    if n == 0.0 || sq == 0.0 {
        1.0
    } else {
        sum * sum / (n * sq)
    }
}

/// Runs a many-flow scenario to the end without progress output.
pub fn run(sc: &Scenario) -> FlowsResult {
    FlowSim::new(sc).run(&mut |_, _| {})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jain_index_bounds() {
        assert!((jain(&[5.0, 5.0, 5.0, 5.0]) - 1.0).abs() < 1e-12);
        assert!((jain(&[1.0, 0.0, 0.0, 0.0]) - 0.25).abs() < 1e-12);
        let mid = jain(&[1.0, 2.0, 3.0]);
        assert!((mid - 36.0 / 42.0).abs() < 1e-12);
    }

    #[test]
    fn flows_start_at_distinct_pattern_offsets() {
        let bases: std::collections::HashSet<u64> = (0..10_000).map(pattern_base).collect();
        assert_eq!(bases.len(), 10_000);
    }

    #[test]
    fn isns_differ_per_connection_and_follow_the_seed() {
        let mut a = FlowIsn {
            first: None,
            state: 1,
        };
        let mut b = FlowIsn {
            first: Some(7),
            state: 1,
        };
        let t = Instant::ZERO;
        assert_eq!(b.next_isn(t, 1, 2), SeqNumber(7));
        assert_eq!(a.next_isn(t, 1, 2), b.next_isn(t, 1, 2));
        assert_ne!(a.next_isn(t, 1, 2), a.next_isn(t, 1, 2));
    }

    #[test]
    fn timers_the_engine_moved_or_cancelled_do_not_reach_it() {
        // Each request arms an RTO that its ACK cancels or pushes later; those
        // queued timer events end at the deadline table. (A timer event that
        // reaches an engine with nothing due fails a debug assertion, so this
        // run and every many-flow test also check the table is the engine's.)
        let text = "name = \"rpc\"\nseed = 5\nduration = \"120s\"\n[bottleneck]\nrate = \"10Mbps\"\ndelay = \"5ms\"\nqdisc = \"codel\"\n[[flows]]\ncount = 200\nclient_hosts = [\"a\"]\nserver_host = \"s\"\nspread = \"uniform\"\ninterval = \"1ms\"\nworkload = { request = [3000], response = [20000], requests = 4, think = \"300ms\" }\n";
        let sc = Scenario::from_str(text, "<t>", &[]).unwrap();
        let mut sim = FlowSim::new(&sc);
        let r = sim.run(&mut |_, _| {});
        assert!(
            r.integrity_ok && r.transactions == 800,
            "{}",
            r.transactions
        );
        assert!(sim.core.timers_not_due > 0);
    }

    /// The calendar queue and the plain heap give byte-identical results.
    #[test]
    fn calendar_queue_runs_like_the_heap() {
        let texts = [
            include_str!("../../../examples/competing-policies.toml").to_string(),
            "name = \"rpc\"\nseed = 3\nduration = \"30s\"\n[bottleneck]\nrate = \"100Mbps\"\ndelay = \"2ms\"\nqdisc = \"codel\"\n[[flows]]\ncount = 300\nclient_hosts = [\"a\", \"b\"]\nserver_host = \"s\"\nspread = \"exponential\"\ninterval = \"3ms\"\nworkload = { request = [200], response = [3000], requests = 5, think = \"700ms\" }\n".to_string(),
        ];
        for text in texts {
            let sc = Scenario::from_str(&text, "<t>", &[]).unwrap();
            let cal = FlowSim::new(&sc).run(&mut |_, _| {});
            let mut sim = FlowSim::new(&sc);
            sim.core.queue.switch_to_heap();
            let heap = sim.run(&mut |_, _| {});
            assert!(cal.transactions > 0);
            assert_eq!(
                serde_json::to_string(&cal).unwrap(),
                serde_json::to_string(&heap).unwrap()
            );
        }
    }
}
