//! One IPv4 host on the wire: checks arriving packets (IPv4 header,
//! checksums, martian sources, offloads), demultiplexes them to connections
//! by 4-tuple (a hash map: O(1) per packet), hands segments for no
//! connection to proto's sans-IO [`Endpoint`] (listen backlog, SYN cookies,
//! RSTs), keeps every connection's deadline in proto's [`Deadlines`] heap so
//! a step touches only connections with events, enforces the memory budget,
//! and frames what the engines emit as IPv4 packets with checksums.
//!
//! The host alone owns demultiplexing, timers and the device's packets; an
//! application acts on its own connection through an [`AppIo`] handle.

use crate::app::{App, AppIo, AppSpec, Transmit};
use crate::explain::Explain;
use crate::isn::{IsnKey, Rfc6528Isn};
use crate::offload::RxOffload;
use std::collections::{HashMap, VecDeque};
use std::net::{Ipv4Addr, SocketAddrV4};
use tinygram_proto::endpoint::{closed, Deadlines, Endpoint, Unmatched};
use tinygram_proto::wire::{Ipv4Repr, TcpOptions, TcpSegment, WireError, TCP_HEADER_LEN};
use tinygram_proto::wire::{ECN_CE, ECN_ECT0};
use tinygram_proto::{Config, Connection, Instant, State, TcpRepr};

/// Remote address, remote port, local port.
pub type FourTuple = tinygram_proto::endpoint::FourTuple<Ipv4Addr>;

pub use tinygram_proto::endpoint::COOKIE_MSS;

/// Half-open connections a listener keeps before it answers with SYN
/// cookies (Linux's long-standing `somaxconn` default).
pub const DEFAULT_BACKLOG: usize = 128;
/// Reports of finished connections kept one by one; older ones are only
/// counted in [`ClosedSummary`].
pub const DEFAULT_KEEP_REPORTS: usize = 1000;

/// Packets that did not reach a connection, by reason (the driver's own counters).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HostCounters {
    /// IP packets read from the device.
    pub packets_in: u64,
    /// IP packets written to the device.
    pub packets_out: u64,
    /// Not IPv4, or not TCP: ignored (IPv6 neighbour discovery and the like).
    pub not_ipv4_tcp: u64,
    /// IPv4 header or TCP checksum wrong, or a malformed header: dropped.
    pub bad_packets: u64,
    /// IPv4 header and TCP checksum failures (counted in `bad_packets` too).
    pub bad_checksums: u64,
    /// Malformed TCP headers (bad options, data offset) with a good checksum
    /// for a live connection (counted in `bad_packets` too): handed to that
    /// connection, which counts them in `invalid_segments` and traces them.
    pub invalid_for_connections: u64,
    /// Addressed to another host: dropped.
    pub not_for_us: u64,
    /// From a multicast, broadcast, loopback, unspecified or our own address
    /// (RFC 1122 3.2.1.3, 4.2.3.10): dropped unanswered, so a spoofed SYN
    /// cannot turn the host into a reflector.
    pub martian_sources: u64,
    /// Segments for no connection that were answered with a RST.
    pub rsts_for_closed_ports: u64,
    /// Connections opened (accepted or connected).
    pub connections: u64,
    /// SYNs answered statelessly with a SYN cookie: the backlog was full.
    pub syn_cookies_sent: u64,
    /// Connections built from an ACK that returned a valid cookie.
    pub syn_cookies_accepted: u64,
    /// ACKs to the listening port whose cookie did not verify (forged, or
    /// older than two cookie periods): answered with a RST.
    pub syn_cookies_rejected: u64,
    /// SYNs dropped unanswered: the backlog was full and `syn_cookies` off.
    pub syns_dropped_backlog_full: u64,
    /// SYNs and cookie ACKs dropped unanswered because the host's buffers
    /// were past the accept threshold of the memory budget.
    pub refused_for_memory: u64,
    /// Connections aborted (with a RST) because the host's buffers were past
    /// the memory budget: the one longest without progress first.
    pub memory_aborts: u64,
    /// With a memory budget, the most buffer memory the live connections
    /// held at the end of a step (the budget acts at the end of each step).
    pub memory_peak: u64,
}

/// One connection with its application.
pub struct Slot {
    pub conn: Connection,
    pub app: Box<dyn App>,
    /// Options in the peer's SYN or SYN-ACK (what the kernel offered).
    pub peer_syn_options: Option<TcpOptions>,
    /// Options in our SYN or SYN-ACK (what tinygram offered).
    pub our_syn_options: Option<TcpOptions>,
    pub opened_at: Instant,
    /// Counted in the listener's backlog (opened by a SYN, not yet established).
    half_open: bool,
    /// Waiting in the ready queue for the next step.
    queued: bool,
    /// The deadline this connection has in the timer heap.
    armed: Option<Instant>,
    /// Buffer memory counted for it in the host's total at its last step.
    memory: usize,
    /// Bytes delivered to us and segments the peer acknowledged at the last
    /// step that moved either, and when that was (the idle clock of the
    /// memory budget).
    progress: (u64, u64),
    last_progress: Instant,
}

impl Slot {
    fn new(conn: Connection, app: Box<dyn App>, now: Instant) -> Slot {
        Slot {
            conn,
            app,
            peer_syn_options: None,
            our_syn_options: None,
            opened_at: now,
            half_open: false,
            queued: false,
            armed: None,
            memory: 0,
            progress: (0, 0),
            last_progress: now,
        }
    }

    /// Notes progress (data in, or data of ours acknowledged) at `now`.
    fn note_progress(&mut self, now: Instant) {
        let c = self.conn.counters();
        let p = (c.bytes_delivered, c.segments_delivered);
        if p != self.progress {
            self.progress = p;
            self.last_progress = now;
        }
    }
}

/// What a finished connection leaves behind, for the exit summary and tests.
#[derive(Clone, Debug)]
pub struct ConnReport {
    /// Our end: the host's address and the connection's port.
    pub local: SocketAddrV4,
    pub remote: SocketAddrV4,
    pub state: State,
    pub error: Option<String>,
    pub counters: tinygram_proto::Counters,
    pub effective_mss: usize,
    pub peer_syn_options: Option<TcpOptions>,
    pub our_syn_options: Option<TcpOptions>,
    pub app: crate::app::AppResult,
}

/// Every finished connection in a few numbers, however many there were
/// (the last [`DEFAULT_KEEP_REPORTS`] are also kept whole).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClosedSummary {
    /// Connections that ended.
    pub connections: u64,
    /// Of those, how many ended with an error (reset, timeout, refused).
    pub errors: u64,
    /// Application bytes read and written over all of them.
    pub bytes_in: u64,
    pub bytes_out: u64,
    /// Bytes lost to a RST in SYN-RECEIVED (written or received, never delivered).
    pub bytes_lost_to_reset: u64,
    /// Reports no longer kept one by one (only counted here).
    pub reports_dropped: u64,
}

/// Frames segments as IPv4 packets from our address into the outbox.
struct Wire {
    addr: Ipv4Addr,
    ip_ident: u16,
    outbox: Vec<Vec<u8>>,
    /// Segments that could not be framed (counted as bad packets).
    unframed: u64,
    /// Leave the TCP checksum partial (the pseudo-header sum only) for the
    /// device to finish (TUN checksum offload, `VIRTIO_NET_HDR_F_NEEDS_CSUM`).
    partial_csum: bool,
    /// Packet buffers the driver gave back after writing them ([`Host::recycle`]):
    /// reused instead of allocated, one per segment.
    spare: Vec<Vec<u8>>,
    /// The TCP header length of the last segment framed ([`Wire::room`]).
    last_tcp_hl: usize,
}

/// Packet buffers kept for reuse at most.
const SPARE_BUFFERS: usize = 4096;

impl Wire {
    /// Frames one segment as an IPv4 packet with both checksums.
    /// `ect`: the engine marked it ECN-capable (RFC 3168 6.1.2), so it goes out ECT(0).
    fn push(&mut self, remote: Ipv4Addr, seg: &TcpRepr, payload: &[u8], ect: bool) {
        let mut pkt = self.spare.pop().unwrap_or_default();
        pkt.clear();
        pkt.resize(Ipv4Repr::HEADER_LEN + seg.header_len(), 0);
        pkt.extend_from_slice(payload);
        let room = pkt.len() - payload.len();
        self.frame(remote, seg, pkt, room, ect);
    }

    /// Bytes of IPv4 and TCP header the next segment is expected to need:
    /// the last one's, since a connection's options rarely change length.
    fn room(&self) -> usize {
        Ipv4Repr::HEADER_LEN + self.last_tcp_hl
    }

    /// Frames a segment whose payload the engine wrote at `pkt[room..]`: the
    /// headers go in front of it in place (a payload is copied once, from the
    /// send buffer; only when the header's length differs from `room` does it move).
    fn frame(&mut self, remote: Ipv4Addr, seg: &TcpRepr, mut pkt: Vec<u8>, room: usize, ect: bool) {
        let hl = Ipv4Repr::HEADER_LEN + seg.header_len();
        self.last_tcp_hl = seg.header_len();
        if hl != room {
            let len = pkt.len();
            if hl > room {
                pkt.resize(len + hl - room, 0);
            }
            pkt.copy_within(room..len, hl);
            pkt.truncate(len - room + hl);
        }
        let tcp_len = pkt.len() - Ipv4Repr::HEADER_LEN;
        let ip = Ipv4Repr {
            src: self.addr.octets(),
            dst: remote.octets(),
            ttl: 64,
            ident: self.ip_ident,
            dont_frag: true,
            payload_len: tcp_len,
            ecn: if ect { ECN_ECT0 } else { 0 },
        };
        self.ip_ident = self.ip_ident.wrapping_add(1);
        let (h, t) = pkt.split_at_mut(Ipv4Repr::HEADER_LEN);
        let csum = (!self.partial_csum).then(|| ip.checksum_ctx());
        if ip.emit(h).is_err() || seg.emit_in_place(t, csum).is_err() {
            // Cannot happen for segments the engine builds (options <= 40 bytes,
            // payload <= MSS); dropping one is what a real NIC would do.
            self.unframed += 1;
            self.spare.push(pkt);
            return;
        }
        if self.partial_csum {
            let (h, t) = pkt.split_at_mut(Ipv4Repr::HEADER_LEN);
            let partial = crate::offload::pseudo_partial(&h[12..16], &h[16..20], tcp_len);
            t[16..18].copy_from_slice(&partial.to_be_bytes());
        }
        self.outbox.push(pkt);
    }
}

/// One connection's way out: what its engine emits goes to its peer.
struct Link<'a> {
    wire: &'a mut Wire,
    remote: Ipv4Addr,
    our_syn: &'a mut Option<TcpOptions>,
}

impl Transmit for Link<'_> {
    fn transmit(&mut self, conn: &mut Connection, now: Instant) {
        // One header for the whole drain, filled in place by the engine.
        let mut seg = TcpRepr::default();
        loop {
            // A spare buffer: the engine writes the payload behind the header room.
            let mut pkt = self.wire.spare.pop().unwrap_or_default();
            let room = self.wire.room();
            if !conn.poll_transmit_with_headroom_into(now, &mut pkt, room, &mut seg) {
                self.wire.spare.push(pkt);
                return;
            }
            if seg.flags.syn() {
                *self.our_syn = Some(seg.options);
            }
            let ect = conn.transmit_ect();
            self.wire.frame(self.remote, &seg, pkt, room, ect);
        }
    }
}

/// A source no segment may come from (RFC 1122 3.2.1.3): multicast,
/// "this network" 0.0.0.0/8, the reserved class E 240.0.0.0/4 (the limited
/// broadcast included), loopback, our own address, and, when the host knows
/// its subnet (`prefix`), the subnet's broadcast and network addresses.
fn is_martian(src: Ipv4Addr, us: Ipv4Addr, prefix: Option<u8>) -> bool {
    let [first, ..] = src.octets();
    if src.is_multicast() || first == 0 || first >= 240 || src.is_loopback() || src == us {
        return true;
    }
    // RFC 1122 3.2.1.3 (c), (d): { <Network-number>, -1 } and the
    // obsolete all-zeros host form; only on subnets with host bits to spare.
    match prefix.filter(|p| (1..=30).contains(p)) {
        Some(p) => {
            let mask = u32::MAX << (32 - u32::from(p));
            let (src, us) = (u32::from(src), u32::from(us));
            src & mask == us & mask && (src & !mask == !mask || src & !mask == 0)
        }
        None => false,
    }
}

/// The IPv4 host: our address, listeners, live connections.
pub struct Host {
    pub addr: Ipv4Addr,
    /// Our subnet's prefix length, when known: its broadcast and network
    /// addresses are then martian sources too ([`Host::set_prefix`]).
    prefix: Option<u8>,
    config: Config,
    listen: Option<(u16, AppSpec)>,
    /// Live connections by 4-tuple.
    pub conns: HashMap<FourTuple, Slot>,
    /// The last finished connections' reports, oldest first (at most `keep_reports`).
    pub finished: VecDeque<ConnReport>,
    /// Every finished connection, counted.
    pub closed: ClosedSummary,
    /// How many finished reports to keep whole.
    pub keep_reports: usize,
    /// Half-open connections a listener keeps before it sends SYN cookies
    /// (the `backlog` setting if given, else [`DEFAULT_BACKLOG`]).
    pub backlog: usize,
    /// The budget for all connections' buffer memory, send and receive (the
    /// scenario's host `memory` key, given as `Config::host_budget`); see
    /// [`crate::budget`]. `None`: no limit.
    pub memory: Option<usize>,
    /// Buffer memory of the live connections, as of their last step.
    memory_used: usize,
    /// The listener, its backlog and SYN cookies; the secret of every
    /// connection's RFC 6528 ISN generator and of the cookies.
    endpoint: Endpoint,
    /// Connections with input or a fired timer, waiting for the next step.
    ready: Vec<FourTuple>,
    /// Each connection's deadline (a slot's `armed`), earliest first.
    deadlines: Deadlines<FourTuple>,
    pub counters: HostCounters,
    pub explain: Explain,
    /// IP packets ready for the device.
    pub outbox: Vec<Vec<u8>>,
    wire: Wire,
}

impl Host {
    /// A host at `addr`; `seed` starts the IPv4 identification counter and
    /// `isn_key` keys the ISNs and SYN cookies (`IsnKey::from_os()` on a real network).
    pub fn new(addr: Ipv4Addr, config: Config, seed: u64, isn_key: IsnKey) -> Host {
        let memory = config.host_budget;
        let backlog = config.backlog.map_or(DEFAULT_BACKLOG, |b| b as usize);
        Host {
            addr,
            prefix: None,
            config,
            listen: None,
            conns: HashMap::new(),
            finished: VecDeque::new(),
            closed: ClosedSummary::default(),
            keep_reports: DEFAULT_KEEP_REPORTS,
            backlog,
            memory,
            memory_used: 0,
            endpoint: Endpoint::new(isn_key),
            ready: Vec::new(),
            deadlines: Deadlines::default(),
            counters: HostCounters::default(),
            explain: Explain::default(),
            outbox: Vec::new(),
            wire: Wire {
                addr,
                ip_ident: seed as u16,
                outbox: Vec::new(),
                unframed: 0,
                partial_csum: false,
                spare: Vec::new(),
                last_tcp_hl: TCP_HEADER_LEN,
            },
        }
    }

    /// Tells the host its subnet (`addr/prefix`), so that segments from the
    /// subnet's broadcast or network address are dropped as martians.
    pub fn set_prefix(&mut self, prefix: u8) {
        self.prefix = Some(prefix);
    }

    /// Accept connections on `port`, each served by a fresh `app`.
    /// The host has one listener: listening again moves it.
    pub fn listen(&mut self, port: u16, app: AppSpec) {
        if let Some((old, _)) = self.listen.replace((port, app)) {
            self.endpoint.unlisten(old);
        }
        self.endpoint.listen(port, self.config.clone());
    }

    /// Half-open connections now counted against the backlog.
    pub fn half_open(&self) -> usize {
        self.endpoint.half_open()
    }

    /// Opens a connection to `to` from `local_port`; the SYN leaves on the next step.
    pub fn connect(&mut self, now: Instant, local_port: u16, to: SocketAddrV4, app: AppSpec) {
        let isn = self.isn_source(local_port, to);
        let conn = Connection::connect(self.config.clone(), local_port, to.port(), isn, now);
        self.counters.connections += 1;
        let key = (*to.ip(), to.port(), local_port);
        self.conns
            .insert(key, Slot::new(conn, app.build(false), now));
        self.enqueue(key);
    }

    /// One connection's ISN generator (RFC 6528 section 3): the 4-tuple's
    /// keyed hash plus the 4 us clock, so a connection that returns to LISTEN
    /// answers the next SYN with a later ISN, and no connection's ISNs tell
    /// anything about another's.
    fn isn_source(&self, local_port: u16, remote: SocketAddrV4) -> Rfc6528Isn {
        self.endpoint
            .key()
            .generator(SocketAddrV4::new(self.addr, local_port), remote)
    }

    /// Queues a connection for the next step (once).
    fn enqueue(&mut self, key: FourTuple) {
        if let Some(slot) = self.conns.get_mut(&key) {
            if !slot.queued {
                slot.queued = true;
                self.ready.push(key);
            }
        }
    }

    /// Packets from now on leave with a partial TCP checksum (the
    /// pseudo-header sum) that the device finishes: TUN checksum offload.
    pub fn set_partial_checksums(&mut self, on: bool) {
        self.wire.partial_csum = on;
    }

    /// Takes back packet buffers from the outbox once written, so the next
    /// packets reuse them (no allocation per segment).
    pub fn recycle(&mut self, bufs: impl IntoIterator<Item = Vec<u8>>) {
        let spare = &mut self.wire.spare;
        spare.extend(
            bufs.into_iter()
                .take(SPARE_BUFFERS.saturating_sub(spare.len())),
        );
    }

    /// One IP packet from the device.
    pub fn handle_packet(&mut self, now: Instant, packet: &[u8]) {
        self.handle_offloaded(now, packet, RxOffload::default());
    }

    /// One IP packet from a device with offloads: a partial TCP checksum is
    /// not verified (the kernel left it to be finished; the bytes never
    /// left memory) and a GSO super-packet reaches its connection whole, as
    /// a GRO packet of `gso_size` pieces: one pass through the engine per
    /// packet, its ACK rules counting the segments it merged (Linux's
    /// receiver after GRO). The IPv4 header checksum is always verified.
    pub fn handle_offloaded(&mut self, now: Instant, packet: &[u8], rx: RxOffload) {
        self.counters.packets_in += 1;
        let (ip, range) = match Ipv4Repr::parse(packet) {
            Ok(x) => x,
            Err(WireError::BadVersion { .. }) | Err(WireError::NotTcp { .. }) => {
                self.counters.not_ipv4_tcp += 1;
                return;
            }
            Err(e) => {
                self.counters.bad_packets += 1;
                if e == WireError::BadChecksum {
                    self.counters.bad_checksums += 1;
                }
                return;
            }
        };
        if Ipv4Addr::from(ip.dst) != self.addr {
            self.counters.not_for_us += 1;
            return;
        }
        let src = Ipv4Addr::from(ip.src);
        if is_martian(src, self.addr, self.prefix) {
            self.counters.martian_sources += 1;
            return;
        }
        let tcp_bytes = &packet[range];
        let ctx = ip.checksum_ctx();
        let verify = (!rx.csum_partial).then_some(ctx);
        let mut seg = TcpRepr::default();
        let prange = match TcpRepr::parse_into(tcp_bytes, verify, &mut seg) {
            Ok(r) => r,
            Err(e) => {
                self.counters.bad_packets += 1;
                if e == WireError::BadChecksum {
                    self.counters.bad_checksums += 1;
                    return;
                }
                // A malformed header (options, data offset) whose checksum
                // verifies came from that peer as it is: if it belongs to a
                // connection, the engine counts it in invalid_segments and
                // traces it, so the exit summary and --explain show it.
                let intact =
                    rx.csum_partial || TcpSegment::new_unchecked(tcp_bytes).verify_checksum(&ctx);
                if let (true, Some(p)) = (intact, tcp_bytes.get(..4)) {
                    let key = (
                        src,
                        u16::from_be_bytes([p[0], p[1]]),
                        u16::from_be_bytes([p[2], p[3]]),
                    );
                    if let Some(slot) = self.conns.get_mut(&key) {
                        self.counters.invalid_for_connections += 1;
                        let _ = slot.conn.handle_bytes(now, tcp_bytes, Some(ctx));
                        self.enqueue(key);
                    }
                }
                return;
            }
        };
        let payload = &tcp_bytes[prange];
        let gso = rx
            .gso_size
            .map(usize::from)
            .filter(|&g| g > 0 && payload.len() > g);
        self.dispatch(now, src, ip.ecn, &seg, payload, gso);
    }

    /// One checked segment from `src`, with its IP header's ECN field (a GRO
    /// packet of `gso` pieces when given): to its connection, a listener, or
    /// a RST.
    fn dispatch(
        &mut self,
        now: Instant,
        src: Ipv4Addr,
        ecn: u8,
        seg: &TcpRepr,
        payload: &[u8],
        gso: Option<usize>,
    ) {
        let key = (src, seg.src_port, seg.dst_port);
        if let Some(slot) = self.conns.get_mut(&key) {
            if seg.flags.syn() {
                slot.peer_syn_options = Some(seg.options);
            }
            if ecn == ECN_CE {
                slot.conn.note_ce();
            }
            match gso {
                Some(g) => slot.conn.handle_gro_segment(now, seg, payload, g),
                None => slot.conn.handle_segment(now, seg, payload),
            }
            self.enqueue(key);
            return;
        }
        let Some((port, app)) = self.listen.clone().filter(|(p, _)| *p == seg.dst_port) else {
            return self.unmatched(now, src, seg, payload, None);
        };
        if let Some(l) = self.endpoint.listener_mut(port) {
            l.config.backlog = Some(u32::try_from(self.backlog).unwrap_or(u32::MAX));
        }
        self.unmatched(now, src, seg, payload, Some(&app));
    }

    /// A segment from `src` for no connection: what the endpoint says to do
    /// with it, done (`app`: the listener's, if the port is listening).
    fn unmatched(
        &mut self,
        now: Instant,
        src: Ipv4Addr,
        seg: &TcpRepr,
        payload: &[u8],
        app: Option<&AppSpec>,
    ) {
        let remote = SocketAddrV4::new(src, seg.src_port);
        let tuple = (SocketAddrV4::new(self.addr, seg.dst_port), remote);
        // Past the accept threshold, a request for a new connection first
        // frees connections stalled for 2 x rto_max (Linux tcp_out_of_resources).
        if !self.may_accept() && self.endpoint.asks_in(now, seg) {
            self.reclaim_stale(now);
        }
        let accepting = self.may_accept();
        let key = (src, seg.src_port, seg.dst_port);
        match self
            .endpoint
            .unmatched(now, tuple, seg, payload.len(), accepting)
        {
            Unmatched::Open => {
                let app = app.expect("only a listening port opens");
                let isn = self.isn_source(seg.dst_port, remote);
                let mut slot = Slot::new(
                    Connection::listen(self.conn_config(), seg.dst_port, isn),
                    app.build(true),
                    now,
                );
                slot.half_open = true;
                slot.peer_syn_options = Some(seg.options);
                slot.conn.handle_segment(now, seg, payload);
                self.counters.connections += 1;
                self.conns.insert(key, slot);
                self.enqueue(key);
            }
            Unmatched::FromCookie { mss } => {
                let app = app.expect("only a listening port checks cookies");
                let isn = self.isn_source(seg.dst_port, remote);
                let conn =
                    Connection::from_syn_cookie(self.conn_config(), seg, payload, mss, isn, now);
                self.counters.connections += 1;
                self.counters.syn_cookies_accepted += 1;
                self.conns
                    .insert(key, Slot::new(conn, app.build(true), now));
                self.enqueue(key);
            }
            Unmatched::SendCookie(synack) => {
                self.wire.push(src, &synack, &[], false);
                self.flush_wire();
                self.counters.syn_cookies_sent += 1;
            }
            Unmatched::CookieRejected(rst) => {
                self.counters.syn_cookies_rejected += 1;
                self.send_rst(src, &rst);
            }
            Unmatched::Reset(rst) => self.send_rst(src, &rst),
            Unmatched::Refused => self.counters.refused_for_memory += 1,
            Unmatched::BacklogFull => self.counters.syns_dropped_backlog_full += 1,
            Unmatched::Ignored => {}
        }
    }

    /// RFC 9293 3.10.7.1: a segment for no connection gets a RST.
    fn send_rst(&mut self, src: Ipv4Addr, rst: &TcpRepr) {
        self.counters.rsts_for_closed_ports += 1;
        self.wire.push(src, rst, &[], false);
        self.flush_wire();
    }

    /// Fires due timers, runs the applications of connections that had
    /// input or a timer, drains their output into the outbox and retires
    /// finished connections. Connections without events are not touched.
    pub fn step(&mut self, now: Instant) {
        while let Some((t, key)) = self.deadlines.pop_due(now) {
            let Some(slot) = self.conns.get_mut(&key) else {
                continue;
            };
            if slot.armed != Some(t) {
                continue; // stale: re-armed since
            }
            slot.armed = None;
            if slot.conn.poll_timeout().is_some_and(|d| d <= now) {
                slot.conn.handle_timeout(now);
            }
            self.enqueue(key);
        }
        let mut ready = std::mem::take(&mut self.ready);
        for key in ready.drain(..) {
            let Some(mut slot) = self.conns.remove(&key) else {
                continue;
            };
            slot.queued = false;
            {
                let mut link = Link {
                    wire: &mut self.wire,
                    remote: key.0,
                    our_syn: &mut slot.our_syn_options,
                };
                let mut io = AppIo::new(&mut slot.conn, now, &mut link);
                slot.app.step(&mut io);
                io.transmit();
            }
            if self.config.trace {
                self.explain.absorb(&mut slot.conn);
            }
            slot.note_progress(now);
            self.recount(&mut slot);
            let state = slot.conn.state();
            if slot.half_open && state != State::SynReceived {
                slot.half_open = false;
                self.endpoint.settled(key.2);
            }
            // A reset in SYN-RECEIVED sends a passive open back to LISTEN
            // (RFC 9293 3.10.7.4); the listener here is the host, so it ends.
            if matches!(state, State::Closed | State::Listen) {
                self.retire(key, slot);
            } else {
                self.arm(key, &mut slot);
                self.conns.insert(key, slot);
            }
        }
        self.ready = ready;
        self.enforce_memory(now);
        self.flush_wire();
        self.deadlines.compact(
            self.conns.len(),
            self.conns
                .iter()
                .filter_map(|(k, s)| s.armed.map(|t| (t, *k))),
        );
    }

    /// Whether the memory budget lets a new connection in ([`crate::budget`]).
    fn may_accept(&self) -> bool {
        self.memory
            .is_none_or(|b| crate::budget::accepts(b, self.memory_used))
    }

    /// A new connection's settings: its receive buffer granted within what
    /// the memory budget has left (RFC 1106 5).
    fn conn_config(&self) -> Config {
        let mut cfg = self.config.clone();
        if let Some(b) = self.memory {
            let left = crate::budget::left(b, self.memory_used);
            cfg.host_budget = Some(cfg.host_budget.map_or(left, |h| h.min(left)));
        }
        cfg
    }

    /// Brings the host's total up to date with the slot's buffer memory now.
    fn recount(&mut self, slot: &mut Slot) {
        let now = slot.conn.buffer_memory();
        self.memory_used = self.memory_used - slot.memory + now;
        slot.memory = now;
    }

    /// Buffer memory of the live connections (as of their last step).
    pub fn memory_used(&self) -> usize {
        self.memory_used
    }

    /// Past the budget, aborts the connections longest without progress
    /// until the buffers fit ([`crate::budget`]).
    fn enforce_memory(&mut self, now: Instant) {
        let Some(budget) = self.memory else {
            return;
        };
        while self.memory_used > budget {
            let fair = crate::budget::fair_share(self.memory_used, self.conns.len());
            let idle = self
                .conns
                .iter()
                .map(|(k, s)| (*k, s.last_progress, s.memory));
            let Some(key) = crate::budget::oldest_idle(idle, fair) else {
                break;
            };
            self.abort_for_memory(key, now);
        }
        self.counters.memory_peak = self.counters.memory_peak.max(self.memory_used as u64);
    }

    /// Past the accept threshold, aborts connections without progress for
    /// longer than twice `rto_max`, longest idle first, until a new one fits
    /// ([`crate::budget`]).
    fn reclaim_stale(&mut self, now: Instant) {
        let rto_max = self.config.rto_max;
        while !self.may_accept() {
            let fair = crate::budget::fair_share(self.memory_used, self.conns.len());
            let stale = self.conns.iter().filter_map(|(k, s)| {
                let idle = now.saturating_duration_since(s.last_progress);
                crate::budget::stale(idle, rto_max).then_some((*k, s.last_progress, s.memory))
            });
            let Some(key) = crate::budget::oldest_idle(stale, fair) else {
                break;
            };
            self.abort_for_memory(key, now);
        }
        self.flush_wire();
    }

    /// Aborts one connection (a RST to the peer) to free its buffers.
    fn abort_for_memory(&mut self, key: FourTuple, now: Instant) {
        let mut slot = self.conns.remove(&key).expect("key listed");
        slot.conn.abort();
        Link {
            wire: &mut self.wire,
            remote: key.0,
            our_syn: &mut slot.our_syn_options,
        }
        .transmit(&mut slot.conn, now);
        self.counters.memory_aborts += 1;
        self.retire(key, slot);
    }

    /// Puts the connection's next deadline in the heap if it changed.
    fn arm(&mut self, key: FourTuple, slot: &mut Slot) {
        self.deadlines
            .arm(key, &mut slot.armed, slot.conn.poll_timeout());
    }

    /// Moves framed packets to the public outbox, in order.
    fn flush_wire(&mut self) {
        self.outbox.append(&mut self.wire.outbox);
        self.counters.bad_packets += std::mem::take(&mut self.wire.unframed);
    }

    /// Aborts every live connection (RFC 9293 3.10.5: a RST to each
    /// synchronized peer) and retires them all.
    pub fn abort_all(&mut self, now: Instant) {
        for key in self.sorted_keys() {
            let mut slot = self.conns.remove(&key).expect("key listed");
            if slot.conn.state() != State::TimeWait {
                slot.conn.abort();
            }
            Link {
                wire: &mut self.wire,
                remote: key.0,
                our_syn: &mut slot.our_syn_options,
            }
            .transmit(&mut slot.conn, now);
            self.retire(key, slot);
        }
        self.ready.clear();
        self.deadlines.clear();
        self.flush_wire();
    }

    /// Live connections' keys in a fixed order (the map's is random).
    fn sorted_keys(&self) -> Vec<FourTuple> {
        let mut keys: Vec<FourTuple> = self.conns.keys().copied().collect();
        keys.sort_unstable();
        keys
    }

    fn retire(&mut self, key: FourTuple, slot: Slot) {
        if slot.half_open {
            self.endpoint.settled(key.2);
        }
        self.memory_used -= slot.memory;
        let r = self.report(key, &slot);
        let c = &mut self.closed;
        c.connections += 1;
        c.errors += r.error.is_some() as u64;
        c.bytes_in += r.app.bytes_in;
        c.bytes_out += r.app.bytes_out;
        c.bytes_lost_to_reset += r.counters.bytes_lost_to_reset;
        self.closed.reports_dropped += closed::keep_last(&mut self.finished, self.keep_reports, r);
    }

    /// A snapshot of one connection. A passive open reset in SYN-RECEIVED
    /// that lost bytes says how many in `error`.
    pub fn report(&self, key: FourTuple, slot: &Slot) -> ConnReport {
        let counters = slot.conn.counters().clone();
        let error = slot.conn.error().map(|e| e.to_string()).or_else(|| {
            (counters.bytes_lost_to_reset > 0).then(|| {
                format!(
                    "reset in SYN-RECEIVED: {} bytes lost (written or received, never delivered)",
                    counters.bytes_lost_to_reset
                )
            })
        });
        ConnReport {
            local: SocketAddrV4::new(self.addr, key.2),
            remote: SocketAddrV4::new(key.0, key.1),
            state: slot.conn.state(),
            error,
            counters,
            effective_mss: slot.conn.effective_mss(),
            peer_syn_options: slot.peer_syn_options,
            our_syn_options: slot.our_syn_options,
            app: slot.app.result(),
        }
    }

    /// The kept finished connections, oldest first, then live ones by 4-tuple.
    pub fn all_reports(&self) -> Vec<ConnReport> {
        let mut v: Vec<ConnReport> = self.finished.iter().cloned().collect();
        v.extend(
            self.sorted_keys()
                .into_iter()
                .map(|k| self.report(k, &self.conns[&k])),
        );
        v
    }

    /// Application bytes read and written over every connection, ended or live.
    pub fn app_bytes(&self) -> (u64, u64) {
        self.conns.values().fold(
            (self.closed.bytes_in, self.closed.bytes_out),
            |(i, o), s| {
                let r = s.app.result();
                (i + r.bytes_in, o + r.bytes_out)
            },
        )
    }

    /// The earliest engine deadline over all connections (possibly a stale
    /// one, which only wakes the driver early).
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.deadlines.next()
    }
}

#[cfg(test)]
mod tests {
    //! The host layer without a device: raw IPv4 packets in, raw IPv4 packets out.
    use super::*;
    use crate::isn::FromOs;
    use std::collections::BTreeMap;
    use tinygram_proto::wire::internet_checksum;
    use tinygram_proto::Flags;
    use tinygram_proto::{IsnGenerator, SeqNumber};

    const US: Ipv4Addr = Ipv4Addr::new(10, 7, 0, 2);
    const A: Ipv4Addr = Ipv4Addr::new(10, 7, 0, 1);
    const B: Ipv4Addr = Ipv4Addr::new(10, 7, 0, 3);

    fn t(ms: u64) -> Instant {
        Instant::from_millis(ms)
    }

    /// An echo server on port 8080.
    fn server() -> Host {
        let mut h = Host::new(US, Config::default(), 7, IsnKey::fixed([7; 16]));
        h.listen(8080, AppSpec::Echo);
        h
    }

    /// One IPv4 packet from `src` to `dst` carrying `seg`, both checksums right.
    fn packet(src: Ipv4Addr, dst: Ipv4Addr, seg: &TcpRepr, payload: &[u8]) -> Vec<u8> {
        let ip = Ipv4Repr {
            src: src.octets(),
            dst: dst.octets(),
            ttl: 64,
            ident: 1,
            dont_frag: true,
            payload_len: seg.buffer_len(payload.len()),
            ecn: 0,
        };
        let mut pkt = vec![0u8; Ipv4Repr::HEADER_LEN + ip.payload_len];
        ip.emit(&mut pkt[..Ipv4Repr::HEADER_LEN]).unwrap();
        seg.emit(
            &mut pkt[Ipv4Repr::HEADER_LEN..],
            payload,
            Some(ip.checksum_ctx()),
        )
        .unwrap();
        pkt
    }

    /// Framing in place gives the same packet as framing a copy, whether the
    /// header needs the room guessed, less of it or more (options changed length).
    #[test]
    fn in_place_framing_matches_copy_for_any_header_length() {
        let mut seg = TcpRepr {
            src_port: 8080,
            dst_port: 40000,
            seq: SeqNumber(1000),
            ack: SeqNumber(2000),
            flags: Flags::ACK | Flags::PSH,
            window: 512,
            ..TcpRepr::default()
        };
        let payload: Vec<u8> = (0..1448u32).map(|i| (i * 13) as u8).collect();
        for ts in [false, true] {
            seg.options.timestamps = ts.then(tinygram_proto::wire::Timestamps::default);
            let want = packet(US, A, &seg, &payload);
            for room in [20, 40, 52, 80] {
                let mut wire = Host::new(US, Config::default(), 0, IsnKey::fixed([1; 16])).wire;
                wire.ip_ident = 1;
                let mut pkt = vec![0xee; room];
                pkt.extend_from_slice(&payload);
                wire.frame(A, &seg, pkt, room, false);
                assert_eq!(
                    wire.outbox,
                    vec![want.clone()],
                    "room {room}, timestamps {ts}"
                );
                assert_eq!(wire.room(), Ipv4Repr::HEADER_LEN + seg.header_len());
            }
        }
    }

    /// Recomputes the IPv4 header checksum after a test changed the header.
    fn fix_ip_checksum(pkt: &mut [u8]) {
        pkt[10..12].fill(0);
        let sum = internet_checksum(&pkt[..20]);
        pkt[10..12].copy_from_slice(&sum.to_be_bytes());
    }

    fn syn(src_port: u16, dst_port: u16, iss: u32) -> TcpRepr {
        let mut seg = TcpRepr {
            src_port,
            dst_port,
            seq: SeqNumber(iss),
            flags: Flags::SYN,
            window: 65535,
            ..TcpRepr::default()
        };
        seg.options.mss = Some(1460);
        seg
    }

    /// A packet the host emitted, checked the way a receiver would (both checksums).
    struct Out {
        src: Ipv4Addr,
        dst: Ipv4Addr,
        seg: TcpRepr,
        payload: Vec<u8>,
    }

    fn drain(h: &mut Host) -> Vec<Out> {
        h.outbox
            .drain(..)
            .map(|pkt| {
                let (ip, r) = Ipv4Repr::parse(&pkt).expect("valid IPv4 out");
                let (seg, p) = TcpRepr::parse(&pkt[r.clone()], Some(ip.checksum_ctx()))
                    .expect("valid TCP out");
                Out {
                    src: ip.src.into(),
                    dst: ip.dst.into(),
                    seg,
                    payload: pkt[r][p].to_vec(),
                }
            })
            .collect()
    }

    /// SYN-ACKs carry RFC 6528 ISNs: the keyed hash of each 4-tuple plus the
    /// 4 us clock, and a host keyed from the OS shares nothing with another
    /// started with the same seed (xorshift ISNs were predictable from a few).
    #[test]
    fn syn_acks_carry_rfc6528_isns() {
        let key = IsnKey::fixed([7; 16]);
        let mut h = server();
        let now = t(3);
        for port in [40000u16, 40001, 40002] {
            h.handle_packet(now, &packet(A, US, &syn(port, 8080, 100), &[]));
        }
        h.step(now);
        for sa in drain(&mut h) {
            let remote = SocketAddrV4::new(A, sa.seg.dst_port);
            let want = key.generator(SocketAddrV4::new(US, 8080), remote).next_isn(
                now,
                8080,
                sa.seg.dst_port,
            );
            assert_eq!(sa.seg.seq, want, "F(tuple, key) + M(now) for {remote}");
        }
        let synack_isn = || {
            let mut h = Host::new(US, Config::default(), 7, IsnKey::from_os().unwrap());
            h.listen(8080, AppSpec::Echo);
            h.handle_packet(t(0), &packet(A, US, &syn(40000, 8080, 100), &[]));
            h.step(t(0));
            drain(&mut h)[0].seg.seq
        };
        assert_ne!(synack_isn(), synack_isn(), "same seed, different secrets");
    }

    /// Several connections at once, told apart by the whole 4-tuple: the same
    /// remote port from two hosts, two remote ports from one host.
    #[test]
    fn demultiplexes_concurrent_connections_by_four_tuple() {
        let mut h = server();
        let clients = [(A, 40000u16, 100u32), (A, 40001, 5000), (B, 40000, 90000)];
        for &(addr, port, iss) in &clients {
            h.handle_packet(t(0), &packet(addr, US, &syn(port, 8080, iss), &[]));
        }
        h.step(t(0));
        let synacks = drain(&mut h);
        assert_eq!(synacks.len(), 3);
        assert_eq!(h.conns.len(), 3);
        assert_eq!(h.counters.connections, 3);
        let mut their_iss = BTreeMap::new();
        for &(addr, port, iss) in &clients {
            let sa = synacks
                .iter()
                .find(|o| o.dst == addr && o.seg.dst_port == port)
                .unwrap_or_else(|| panic!("a SYN-ACK to {addr}:{port}"));
            assert_eq!(sa.src, US);
            assert_eq!(sa.seg.src_port, 8080);
            assert!(sa.seg.flags.syn() && sa.seg.flags.ack());
            assert_eq!(sa.seg.ack, SeqNumber(iss + 1), "{addr}:{port}");
            their_iss.insert((addr, port), sa.seg.seq);
        }
        // Complete each handshake with data of its own; each echo goes back
        // to its own sender.
        for (i, &(addr, port, iss)) in clients.iter().enumerate() {
            let seg = TcpRepr {
                src_port: port,
                dst_port: 8080,
                seq: SeqNumber(iss + 1),
                ack: their_iss[&(addr, port)] + 1,
                flags: Flags::ACK | Flags::PSH,
                window: 65535,
                ..TcpRepr::default()
            };
            let data = format!("hello from client {i}");
            h.handle_packet(t(1), &packet(addr, US, &seg, data.as_bytes()));
        }
        h.step(t(1));
        let out = drain(&mut h);
        for (i, &(addr, port, iss)) in clients.iter().enumerate() {
            let data: Vec<u8> = out
                .iter()
                .filter(|o| o.dst == addr && o.seg.dst_port == port)
                .flat_map(|o| o.payload.clone())
                .collect();
            assert_eq!(
                String::from_utf8(data).unwrap(),
                format!("hello from client {i}"),
                "echo to {addr}:{port}"
            );
            let last = out
                .iter()
                .rfind(|o| o.dst == addr && o.seg.dst_port == port)
                .unwrap();
            let sent = format!("hello from client {i}").len() as u32;
            assert_eq!(last.seg.ack, SeqNumber(iss + 1 + sent));
        }
        for r in h.all_reports() {
            assert_eq!(r.app.bytes_in, r.app.bytes_out, "{r:?}");
            assert_eq!(r.state, State::Established);
        }
        assert_eq!(h.counters.rsts_for_closed_ports, 0);
    }

    /// A bad IPv4 header checksum or a bad TCP checksum: dropped and counted,
    /// no connection opened, nothing sent, not even a RST.
    #[test]
    fn drops_bad_checksums() {
        let mut h = server();
        let good = packet(A, US, &syn(40000, 8080, 1), &[]);

        let mut bad_tcp = good.clone();
        bad_tcp[20 + 16] ^= 0x01; // TCP checksum field
        h.handle_packet(t(0), &bad_tcp);
        let mut bad_ip = good.clone();
        bad_ip[10] ^= 0x80; // IPv4 header checksum field
        h.handle_packet(t(0), &bad_ip);
        let mut bad_body = packet(A, US, &syn(40000, 9, 1), &[]);
        bad_body[20 + 4] ^= 0x10; // the sequence number, checksum left as it was
        h.handle_packet(t(0), &bad_body);
        h.step(t(0));

        assert!(h.outbox.is_empty());
        assert!(h.conns.is_empty());
        assert_eq!(h.counters.bad_checksums, 3);
        assert_eq!(h.counters.bad_packets, 3);
        assert_eq!(h.counters.packets_in, 3);
        assert_eq!(h.counters.connections, 0);
        assert_eq!(h.counters.rsts_for_closed_ports, 0);

        // The same SYN intact opens a connection.
        h.handle_packet(t(0), &good);
        h.step(t(0));
        assert_eq!(drain(&mut h).len(), 1);
        assert_eq!(h.counters.connections, 1);
        assert_eq!(h.counters.bad_checksums, 3);
    }

    /// Packets for another address are dropped and counted, never answered.
    #[test]
    fn ignores_packets_not_addressed_to_us() {
        let mut h = server();
        let other = Ipv4Addr::new(10, 7, 0, 9);
        h.handle_packet(t(0), &packet(A, other, &syn(40000, 8080, 1), &[]));
        h.handle_packet(t(0), &packet(A, other, &syn(40000, 9, 1), &[]));
        h.step(t(0));
        assert!(h.outbox.is_empty());
        assert!(h.conns.is_empty());
        assert_eq!(h.counters.not_for_us, 2);
        assert_eq!(h.counters.rsts_for_closed_ports, 0);
        assert_eq!(h.counters.bad_packets, 0);
    }

    /// UDP over IPv4 and anything over IPv6 (neighbour discovery, ...) are
    /// counted as not IPv4/TCP and ignored.
    #[test]
    fn ignores_non_tcp_packets() {
        let mut h = server();
        let mut udp = packet(A, US, &syn(40000, 8080, 1), &[]);
        udp[9] = 17;
        fix_ip_checksum(&mut udp);
        h.handle_packet(t(0), &udp);
        let mut icmp = packet(A, US, &syn(40000, 8080, 1), &[]);
        icmp[9] = 1;
        fix_ip_checksum(&mut icmp);
        h.handle_packet(t(0), &icmp);
        // An IPv6 router solicitation, as Linux sends on a fresh device.
        let mut v6 = vec![0u8; 48];
        v6[0] = 0x60;
        v6[4..6].copy_from_slice(&8u16.to_be_bytes());
        v6[6] = 58; // ICMPv6
        v6[7] = 255;
        v6[8] = 0xfe;
        v6[9] = 0x80;
        v6[24] = 0xff;
        v6[25] = 0x02;
        v6[39] = 2;
        v6[40] = 133;
        h.handle_packet(t(0), &v6);
        h.step(t(0));
        assert!(h.outbox.is_empty());
        assert!(h.conns.is_empty());
        assert_eq!(h.counters.not_ipv4_tcp, 3);
        assert_eq!(h.counters.bad_packets, 0);
        assert_eq!(h.counters.packets_in, 3);
    }

    /// A SYN to a closed port gets <SEQ=0><ACK=SEG.SEQ+SEG.LEN><CTL=RST,ACK>
    /// (RFC 9293 3.10.7.1) from that port to the sender; a stray ACK gets
    /// <SEQ=SEG.ACK><CTL=RST>; a RST gets nothing.
    #[test]
    fn answers_segments_to_closed_ports_with_rst() {
        let mut h = server();
        h.handle_packet(t(0), &packet(A, US, &syn(40000, 9, 1000), &[]));
        h.step(t(0));
        let out = drain(&mut h);
        assert_eq!(out.len(), 1);
        let rst = &out[0];
        assert_eq!((rst.src, rst.dst), (US, A));
        assert_eq!((rst.seg.src_port, rst.seg.dst_port), (9, 40000));
        assert!(rst.seg.flags.rst() && rst.seg.flags.ack() && !rst.seg.flags.syn());
        assert_eq!(rst.seg.seq, SeqNumber(0));
        assert_eq!(rst.seg.ack, SeqNumber(1001));
        assert!(rst.payload.is_empty());
        assert_eq!(h.counters.rsts_for_closed_ports, 1);

        // An ACK for no connection, even on the listening port.
        let stray = TcpRepr {
            src_port: 40001,
            dst_port: 8080,
            seq: SeqNumber(5),
            ack: SeqNumber(777),
            flags: Flags::ACK,
            window: 100,
            ..TcpRepr::default()
        };
        h.handle_packet(t(0), &packet(B, US, &stray, b"xy"));
        h.step(t(0));
        let out = drain(&mut h);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].dst, B);
        assert!(out[0].seg.flags.rst() && !out[0].seg.flags.ack());
        assert_eq!(out[0].seg.seq, SeqNumber(777));
        assert_eq!(h.counters.rsts_for_closed_ports, 2);

        let mut reset = stray;
        reset.flags = Flags::RST;
        h.handle_packet(t(0), &packet(B, US, &reset, &[]));
        h.step(t(0));
        assert!(h.outbox.is_empty(), "never a RST for a RST");
        assert_eq!(h.counters.rsts_for_closed_ports, 2);
        assert!(h.conns.is_empty());
        assert_eq!(h.counters.connections, 0);
    }

    /// A packet whose TCP options are malformed (here a window-scale option
    /// of length 2) but whose checksum verifies: for a live connection the
    /// engine counts it as an invalid segment and traces it (what `--explain`
    /// prints); for no connection it is only a bad packet. Nothing answers it.
    #[test]
    fn malformed_options_reach_the_connection_they_belong_to() {
        let mut h = Host::new(
            US,
            Config {
                trace: true,
                ..Config::default()
            },
            7,
            IsnKey::fixed([7; 16]),
        );
        h.listen(8080, AppSpec::Echo);
        h.handle_packet(t(0), &packet(A, US, &syn(40000, 8080, 100), &[]));
        h.step(t(0));
        let synack = drain(&mut h).remove(0).seg;
        let ack = TcpRepr {
            src_port: 40000,
            dst_port: 8080,
            seq: SeqNumber(101),
            ack: synack.seq + 1,
            flags: Flags::ACK,
            window: 65535,
            ..TcpRepr::default()
        };
        h.handle_packet(t(1), &packet(A, US, &ack, &[]));
        h.step(t(1));
        assert_eq!(
            h.conns.values().next().unwrap().conn.state(),
            State::Established
        );

        // Options NOP NOP WS(len 2) NOP: a kind-3 option must be 3 bytes long.
        let malformed = |src: Ipv4Addr, src_port: u16| {
            let seg = TcpRepr { src_port, ..ack };
            let mut pkt = packet(src, US, &seg, b"data");
            let tcp = pkt.split_off(20);
            let mut t2 = tcp[..20].to_vec();
            t2.extend([1, 1, 3, 2]);
            t2.extend(&tcp[20..]);
            t2[12] = 6 << 4;
            t2[16..18].fill(0);
            let ip = Ipv4Repr {
                src: src.octets(),
                dst: US.octets(),
                ttl: 64,
                ident: 1,
                dont_frag: true,
                payload_len: t2.len(),
                ecn: 0,
            };
            let mut out = vec![0u8; 20];
            ip.emit(&mut out).unwrap();
            let mut view = TcpSegment::new_unchecked(&mut t2[..]);
            view.fill_checksum(&ip.checksum_ctx());
            out.extend(t2);
            out
        };
        h.handle_packet(t(2), &malformed(A, 40000));
        h.handle_packet(t(2), &malformed(B, 40000));
        h.step(t(2));
        assert!(h.outbox.is_empty(), "no answer to a malformed segment");
        assert_eq!(h.counters.bad_packets, 2);
        assert_eq!(h.counters.bad_checksums, 0);
        assert_eq!(h.counters.invalid_for_connections, 1);
        assert_eq!(h.counters.rsts_for_closed_ports, 0);
        let r = &h.all_reports()[0];
        assert_eq!(r.counters.invalid_segments, 1);
        assert_eq!(
            r.app.bytes_in, 0,
            "the payload of an invalid segment is not delivered"
        );
        let explained = h.explain.to_string();
        assert!(
            explained.contains("1 other event(s)") && explained.contains("kind 3"),
            "--explain shows the invalid segment:\n{explained}"
        );
    }

    /// A spoofed SYN flood's sources: 10.8.x.y, never answered back.
    fn spoofed(i: u32) -> (Ipv4Addr, u16) {
        let a = Ipv4Addr::new(10, 8, (i / 250) as u8, (i % 250) as u8 + 1);
        (a, 1024 + (i % 60000) as u16)
    }

    /// The client's ACK completing a handshake with `synack`, carrying `data`.
    fn third(port: u16, iss: u32, synack: &TcpRepr) -> TcpRepr {
        TcpRepr {
            src_port: port,
            dst_port: 8080,
            seq: SeqNumber(iss + 1),
            ack: synack.seq + 1,
            flags: Flags::ACK | Flags::PSH,
            window: 65535,
            ..TcpRepr::default()
        }
    }

    /// With 10,000 spoofed SYNs outstanding the backlog holds 128 half-open
    /// connections (with no buffer memory) and every SYN beyond gets a
    /// cookie; a legitimate client's cookie ACK completes its handshake, its
    /// data is echoed, and the connection runs without the options a cookie
    /// cannot carry.
    #[test]
    fn a_legitimate_client_completes_through_a_syn_flood() {
        let mut h = server();
        for i in 0..10_000 {
            let (src, port) = spoofed(i);
            h.handle_packet(t(0), &packet(src, US, &syn(port, 8080, i * 7), &[]));
        }
        h.step(t(0));
        let answers = drain(&mut h);
        assert_eq!(answers.len(), 10_000, "one SYN-ACK per SYN");
        assert_eq!(h.half_open(), DEFAULT_BACKLOG);
        assert_eq!(h.conns.len(), DEFAULT_BACKLOG);
        assert_eq!(h.counters.syn_cookies_sent, 10_000 - DEFAULT_BACKLOG as u64);
        for s in h.conns.values() {
            assert_eq!(s.conn.state(), State::SynReceived);
            assert_eq!(s.conn.buffer_memory(), 0, "no buffer before data");
        }

        let mut client = syn(40000, 8080, 5000);
        client.options.window_scale = Some(7);
        client.options.sack_permitted = true;
        client.options.timestamps = Some(tinygram_proto::wire::Timestamps { tsval: 1, tsecr: 0 });
        h.handle_packet(t(10), &packet(A, US, &client, &[]));
        h.step(t(10));
        let sa = drain(&mut h).remove(0);
        assert!(sa.seg.flags.syn() && sa.seg.flags.ack());
        assert_eq!(sa.seg.ack, SeqNumber(5001));
        let o = sa.seg.options;
        assert_eq!(o.mss, Some(Config::default().mss));
        assert!(o.window_scale.is_none() && o.timestamps.is_none() && !o.sack_permitted);
        assert_eq!(h.conns.len(), DEFAULT_BACKLOG, "a cookie keeps no state");

        h.handle_packet(
            t(20),
            &packet(A, US, &third(40000, 5000, &sa.seg), b"through the flood"),
        );
        h.step(t(20));
        let echo: Vec<u8> = drain(&mut h)
            .into_iter()
            .filter(|o| o.dst == A)
            .flat_map(|o| o.payload)
            .collect();
        assert_eq!(echo, b"through the flood");
        assert_eq!(h.counters.syn_cookies_accepted, 1);
        let slot = &h.conns[&(A, 40000, 8080)];
        assert_eq!(slot.conn.state(), State::Established);
        assert_eq!(slot.conn.effective_mss(), 1460);
        assert!(!slot.conn.sack_enabled() && !slot.conn.timestamps_enabled());
        assert_eq!(slot.conn.window_scales(), (0, 0));
        assert!(slot.conn.buffer_memory() > 0);
        assert_eq!(h.half_open(), DEFAULT_BACKLOG);
    }

    /// An ACK whose cookie was not made for it is refused with a RST and
    /// builds nothing: a guessed cookie, another tuple's cookie, and a real
    /// cookie returned after it expired.
    #[test]
    fn forged_cookie_acks_are_rejected() {
        let mut h = server();
        h.backlog = 0;
        h.handle_packet(t(0), &packet(A, US, &syn(40000, 8080, 100), &[]));
        h.step(t(0));
        let sa = drain(&mut h).remove(0).seg;
        assert_eq!(h.counters.syn_cookies_sent, 1);
        assert!(h.conns.is_empty());

        let mut guessed = third(40000, 100, &sa);
        guessed.ack = sa.seq + 2;
        let other_port = third(40001, 100, &sa);
        let other_isn = third(40000, 101, &sa);
        for (i, seg) in [guessed, other_port, other_isn].iter().enumerate() {
            h.handle_packet(t(1), &packet(A, US, seg, b"x"));
            h.step(t(1));
            let out = drain(&mut h);
            assert_eq!(out.len(), 1, "case {i}");
            assert!(out[0].seg.flags.rst(), "case {i}");
            assert_eq!(out[0].seg.seq, seg.ack, "case {i}");
        }
        let late = 130_000;
        h.handle_packet(t(late), &packet(A, US, &third(40000, 100, &sa), b"x"));
        h.step(t(late));
        assert!(drain(&mut h)[0].seg.flags.rst());
        assert!(h.conns.is_empty());
        assert_eq!(
            h.counters.syn_cookies_rejected, 3,
            "after expiry cookies are not looked at"
        );
        assert_eq!(h.counters.syn_cookies_accepted, 0);
        assert_eq!(h.counters.connections, 0);

        // The genuine one, in time, is accepted.
        h.handle_packet(t(late + 1), &packet(A, US, &syn(40000, 8080, 100), &[]));
        h.step(t(late + 1));
        let sa = drain(&mut h).remove(0).seg;
        h.handle_packet(t(late + 2), &packet(A, US, &third(40000, 100, &sa), b"x"));
        h.step(t(late + 2));
        assert_eq!(h.counters.syn_cookies_accepted, 1);
        assert_eq!(h.conns.len(), 1);
    }

    /// Listening on another port moves the listener: a SYN to the old one gets a RST.
    #[test]
    fn listening_again_moves_the_listener() {
        let mut h = server();
        h.listen(9090, AppSpec::Echo);
        h.handle_packet(t(0), &packet(A, US, &syn(40000, 8080, 100), &[]));
        h.handle_packet(t(0), &packet(A, US, &syn(40001, 9090, 100), &[]));
        h.step(t(0));
        let out = drain(&mut h);
        assert!(out
            .iter()
            .any(|o| o.seg.flags.rst() && o.seg.dst_port == 40000));
        assert!(out
            .iter()
            .any(|o| o.seg.flags.syn() && o.seg.dst_port == 40001));
        assert_eq!(h.conns.len(), 1);
    }

    /// With `syn_cookies` off a SYN past the backlog is dropped unanswered
    /// and counted; the `backlog` setting sizes the host's backlog.
    #[test]
    fn without_cookies_syns_past_the_backlog_are_dropped() {
        let cfg = Config {
            backlog: Some(2),
            syn_cookies: false,
            ..Config::default()
        };
        let mut h = Host::new(US, cfg, 7, IsnKey::fixed([7; 16]));
        h.listen(8080, AppSpec::Echo);
        assert_eq!(h.backlog, 2);
        for port in 40000..40005u16 {
            h.handle_packet(t(0), &packet(A, US, &syn(port, 8080, 100), &[]));
        }
        h.step(t(0));
        assert_eq!(drain(&mut h).len(), 2, "two SYN-ACKs, no cookies");
        assert_eq!(h.half_open(), 2);
        assert_eq!(h.counters.syns_dropped_backlog_full, 3);
        assert_eq!(h.counters.syn_cookies_sent, 0);
    }

    /// A half-open connection holds no buffer memory; data makes the buffers
    /// grow, and the window advertised is the configured one all along.
    #[test]
    fn buffers_are_allocated_when_data_arrives() {
        let mut h = server();
        h.handle_packet(t(0), &packet(A, US, &syn(40000, 8080, 100), &[]));
        h.step(t(0));
        let sa = drain(&mut h).remove(0).seg;
        assert_eq!(h.conns[&(A, 40000, 8080)].conn.buffer_memory(), 0);
        let cfg = Config::default();
        assert_eq!(sa.window as usize, cfg.granted_rcv_buf().0.min(65535));
        let mut ack = third(40000, 100, &sa);
        ack.flags = Flags::ACK;
        h.handle_packet(t(1), &packet(A, US, &ack, &[]));
        h.step(t(1));
        assert_eq!(
            h.conns[&(A, 40000, 8080)].conn.buffer_memory(),
            0,
            "established, no data yet"
        );
        h.handle_packet(t(2), &packet(A, US, &ack, &[9u8; 1000]));
        h.step(t(2));
        let mem = h.conns[&(A, 40000, 8080)].conn.buffer_memory();
        assert!(
            mem >= 1000 && mem <= cfg.granted_rcv_buf().0 + cfg.snd_buf,
            "{mem}"
        );
    }

    /// A super-packet from the kernel (4 pieces of 1000 bytes and a FIN)
    /// reaches the echo server whole: all of it echoed, the FIN taken, and
    /// the same bytes and end as four segments would give.
    #[test]
    fn super_packets_reach_their_connection_whole() {
        let mut h = server();
        h.handle_packet(t(0), &packet(A, US, &syn(40000, 8080, 100), &[]));
        h.step(t(0));
        let sa = drain(&mut h).remove(0).seg;
        let mut seg = third(40000, 100, &sa);
        seg.flags = Flags::ACK | Flags::PSH | Flags::FIN;
        let data: Vec<u8> = (0..4000u32).map(|i| (i % 251) as u8).collect();
        let rx = RxOffload {
            csum_partial: false,
            gso_size: Some(1000),
        };
        h.handle_offloaded(t(1), &packet(A, US, &seg, &data), rx);
        h.step(t(1));
        let out = drain(&mut h);
        let echoed: Vec<u8> = out.iter().flat_map(|o| o.payload.clone()).collect();
        assert_eq!(echoed, data);
        let last = out.last().expect("an answer");
        assert_eq!(
            last.seg.ack,
            SeqNumber(100 + 1 + 4000 + 1),
            "data and FIN taken"
        );
        let conn = &h.conns[&(A, 40000, 8080)].conn;
        assert_eq!(
            conn.state(),
            State::LastAck,
            "the echo closed after the FIN"
        );
    }

    /// Finished connections: only the last `keep_reports` are kept whole,
    /// every one is counted; the backlog slot of each is freed.
    #[test]
    fn closed_connection_reports_are_bounded() {
        let mut h = server();
        h.keep_reports = 10;
        for i in 0..25u16 {
            let port = 41000 + i;
            h.handle_packet(t(0), &packet(A, US, &syn(port, 8080, 100), &[]));
            h.step(t(0));
            drain(&mut h);
            let rst = TcpRepr {
                src_port: port,
                dst_port: 8080,
                seq: SeqNumber(101),
                flags: Flags::RST,
                ..TcpRepr::default()
            };
            h.handle_packet(t(1), &packet(A, US, &rst, &[]));
            h.step(t(1));
        }
        assert!(h.conns.is_empty());
        assert_eq!(h.half_open(), 0);
        assert_eq!(h.finished.len(), 10);
        assert_eq!(h.closed.connections, 25);
        assert_eq!(h.closed.reports_dropped, 15);
        let ports: Vec<u16> = h.finished.iter().map(|r| r.remote.port()).collect();
        assert_eq!(
            ports,
            (41015..41025).collect::<Vec<_>>(),
            "the last ten, in order"
        );
        assert_eq!(h.all_reports().len(), 10);
    }

    /// SYNs from multicast, broadcast, loopback, unspecified or our own
    /// address are dropped and counted: no connection, no SYN-ACK, no RST.
    #[test]
    fn syns_from_martian_sources_are_dropped() {
        let mut h = server();
        let martians = [
            Ipv4Addr::new(224, 0, 0, 1),
            Ipv4Addr::new(239, 1, 2, 3),
            Ipv4Addr::BROADCAST,
            Ipv4Addr::LOCALHOST,
            Ipv4Addr::new(127, 9, 9, 9),
            Ipv4Addr::UNSPECIFIED,
            Ipv4Addr::new(0, 1, 2, 3),
            Ipv4Addr::new(240, 1, 2, 3),
            Ipv4Addr::new(255, 255, 255, 254),
            US,
        ];
        for (i, &src) in martians.iter().enumerate() {
            h.handle_packet(t(0), &packet(src, US, &syn(40000 + i as u16, 8080, 1), &[]));
            h.handle_packet(t(0), &packet(src, US, &syn(40000, 9, 1), &[]));
        }
        h.step(t(0));
        assert!(h.outbox.is_empty());
        assert!(h.conns.is_empty());
        assert_eq!(h.counters.martian_sources, 2 * martians.len() as u64);
        assert_eq!(h.counters.connections, 0);
        assert_eq!(h.counters.rsts_for_closed_ports, 0);
        // A unicast source still gets its SYN-ACK.
        h.handle_packet(t(0), &packet(A, US, &syn(40000, 8080, 1), &[]));
        h.step(t(0));
        assert_eq!(drain(&mut h).len(), 1);
    }

    /// Knowing its prefix, the host also drops SYNs from its subnet's
    /// broadcast and network addresses; other subnets' are not its business.
    #[test]
    fn syns_from_the_subnet_broadcast_and_network_address_are_dropped() {
        let mut h = server();
        h.set_prefix(24);
        let [a, b, c, _] = US.octets();
        let bcast = Ipv4Addr::new(a, b, c, 255);
        let net = Ipv4Addr::new(a, b, c, 0);
        for (i, src) in [bcast, net].into_iter().enumerate() {
            h.handle_packet(t(0), &packet(src, US, &syn(40000 + i as u16, 8080, 1), &[]));
        }
        h.step(t(0));
        assert!(h.outbox.is_empty() && h.conns.is_empty());
        assert_eq!(h.counters.martian_sources, 2);
        // x.y.z.255 is an ordinary host on a /16.
        let mut wide = server();
        wide.set_prefix(16);
        wide.handle_packet(t(0), &packet(bcast, US, &syn(40000, 8080, 1), &[]));
        wide.step(t(0));
        assert_eq!(drain(&mut wide).len(), 1);
        assert!(!is_martian(bcast, US, None));
        assert!(is_martian(bcast, US, Some(24)));
        // On a /30 (10.7.0.0 to .3) the broadcast is .3, a host on a /24.
        assert!(is_martian(Ipv4Addr::new(10, 7, 0, 3), US, Some(30)));
        assert!(!is_martian(Ipv4Addr::new(10, 7, 0, 3), US, Some(24)));
    }

    /// Timers come from the heap: the host's next deadline is the earliest
    /// connection's, a SYN-ACK is retransmitted when its timer is due and
    /// not before, and a step with nothing due sends nothing.
    #[test]
    fn timers_fire_from_the_deadline_heap() {
        let mut h = server();
        h.handle_packet(t(0), &packet(A, US, &syn(40000, 8080, 1), &[]));
        h.step(t(0));
        h.handle_packet(t(5), &packet(B, US, &syn(40000, 8080, 1), &[]));
        h.step(t(5));
        assert_eq!(drain(&mut h).len(), 2);
        let first = h.conns[&(A, 40000, 8080)].conn.poll_timeout().unwrap();
        let second = h.conns[&(B, 40000, 8080)].conn.poll_timeout().unwrap();
        assert!(first < second);
        assert_eq!(h.poll_timeout(), Some(first));
        h.step(Instant::from_nanos(first.as_nanos() - 1));
        assert!(h.outbox.is_empty(), "nothing due yet");
        h.step(first);
        let out = drain(&mut h);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].dst, A);
        assert!(
            out[0].seg.flags.syn() && out[0].seg.flags.ack(),
            "SYN-ACK again"
        );
        assert_eq!(h.poll_timeout(), Some(second));
    }
    /// The memory budget ([`crate::budget`]): silent zero-window peers each
    /// pin a send buffer; past two thirds of the budget new SYNs are dropped
    /// unanswered, and past the budget the connection longest without
    /// progress is aborted, so the buffers never stay over it.
    #[test]
    fn the_memory_budget_bounds_silent_zero_window_peers() {
        let mut h = Host::new(US, Config::default(), 7, IsnKey::fixed([7; 16]));
        h.listen(8080, AppSpec::Source { bytes: 1 << 20 });
        let budget = 1 << 20;
        h.memory = Some(budget);
        let mut most = 0;
        let mut refused_syns = 0;
        for i in 0..16u16 {
            let now = t(100 * u64::from(i));
            let port = 40000 + i;
            h.handle_packet(now, &packet(A, US, &syn(port, 8080, 1000), &[]));
            h.step(now);
            let out = drain(&mut h);
            let Some(sa) = out.iter().find(|o| o.seg.flags.syn()) else {
                refused_syns += 1;
                continue;
            };
            // The handshake's ACK closes the window; nothing is answered again.
            let mut ack = third(port, 1000, &sa.seg);
            ack.window = 0;
            ack.flags = Flags::ACK;
            h.handle_packet(now, &packet(A, US, &ack, &[]));
            h.step(now);
            drain(&mut h);
            most = most.max(h.memory_used());
            assert!(
                h.memory_used() <= budget,
                "{} over the budget",
                h.memory_used()
            );
        }
        // Each connection took its 256 KiB send buffer: three fit under two
        // thirds of 1 MiB, the fourth crosses it, and later SYNs are refused.
        assert!(most > budget / 2, "the buffers filled ({most})");
        assert!(refused_syns > 0 && h.counters.refused_for_memory == refused_syns);
        // Probing goes on (unanswered): the probe limit ends them in time, and
        // once the buffers drop below the threshold new peers get in again.
        for s in 1..=3600u64 {
            h.step(t(2000 + 1000 * s));
            drain(&mut h);
        }
        assert_eq!(h.conns.len(), 0, "silent peers are dropped");
        assert_eq!(h.memory_used(), 0);
        h.handle_packet(t(4_000_000), &packet(B, US, &syn(50000, 8080, 1), &[]));
        h.step(t(4_000_000));
        assert!(drain(&mut h).iter().any(|o| o.seg.flags.syn()));
    }

    /// Past the accept threshold a new SYN reclaims: connections without
    /// progress for longer than twice rto_max are aborted, longest idle
    /// first, until the new one fits; younger ones are not touched.
    #[test]
    fn a_new_syn_reclaims_connections_stalled_past_twice_rto_max() {
        let cfg = Config {
            rto_max: tinygram_proto::Duration::from_secs(1),
            max_retries: 1000, // kept by the probe rules, as peers answering probes are
            ..Config::default()
        };
        let mut h = Host::new(US, cfg, 7, IsnKey::fixed([7; 16]));
        h.listen(8080, AppSpec::Source { bytes: 1 << 20 });
        h.memory = Some(1 << 20);
        let mut rsts = Vec::new();
        let mut try_syn = |h: &mut Host, now: Instant, port: u16| {
            h.handle_packet(now, &packet(A, US, &syn(port, 8080, 1000), &[]));
            h.step(now);
            let out = drain(h);
            rsts.extend(
                out.iter()
                    .filter(|o| o.seg.flags.rst())
                    .map(|o| o.seg.dst_port),
            );
            let sa = out.iter().find(|o| o.seg.flags.syn())?.seg;
            let mut ack = third(port, 1000, &sa);
            ack.window = 0;
            ack.flags = Flags::ACK;
            h.handle_packet(now, &packet(A, US, &ack, &[]));
            h.step(now);
            drain(h);
            Some(())
        };
        // Three 256 KiB send buffers cross two thirds of 1 MiB at 0, 100, 200 ms.
        for (i, port) in [40000, 40001, 40002].into_iter().enumerate() {
            assert!(try_syn(&mut h, t(100 * i as u64), port).is_some());
        }
        assert!(h.memory_used() >= (1 << 20) / 3 * 2);
        let mut at = 300;
        let mut step_to = |h: &mut Host, to: u64| {
            while at < to {
                at += 50;
                h.step(t(at));
                drain(h);
            }
        };
        // Within 2 s of their last progress nothing is reclaimed.
        step_to(&mut h, 2000);
        assert!(try_syn(&mut h, t(2000), 50000).is_none());
        assert_eq!(h.counters.refused_for_memory, 1);
        // Past it the oldest one goes, and only it: the new client is in.
        step_to(&mut h, 2050);
        assert!(try_syn(&mut h, t(2050), 50001).is_some());
        assert_eq!(h.counters.memory_aborts, 1);
        assert!(!h.conns.contains_key(&(A, 40000, 8080)));
        assert!(h.conns.contains_key(&(A, 40001, 8080)));
        assert_eq!(rsts, [40000], "the stalled connection is told");
    }

    /// Past the budget the connection longest without progress is aborted
    /// with a RST, and the one moving data is kept.
    #[test]
    fn past_the_budget_the_oldest_idle_connection_is_aborted() {
        let mut h = server();
        let budget = 450 << 10;
        h.memory = Some(budget);
        // Opens a connection from `port` whose window is closed; returns the ACK to send with.
        let open = |h: &mut Host, now: Instant, port: u16| {
            h.handle_packet(now, &packet(A, US, &syn(port, 8080, 1000), &[]));
            h.step(now);
            let sa = drain(h).remove(0).seg;
            let mut ack = third(port, 1000, &sa);
            ack.window = 0;
            ack.flags = Flags::ACK;
            h.handle_packet(now, &packet(A, US, &ack, &[]));
            h.step(now);
            ack
        };
        // Sends `n` bytes from offset `from` as 1000-byte segments; the echo
        // piles up in the send buffer, since the peer's window stays shut.
        let send = |h: &mut Host, now: Instant, ack: &TcpRepr, from: usize, n: usize| {
            let mut rsts = Vec::new();
            for off in (from..from + n).step_by(1000) {
                let mut seg = *ack;
                seg.seq = ack.seq + off;
                h.handle_packet(now, &packet(A, US, &seg, &[b'x'; 1000]));
                h.step(now);
                assert!(
                    h.memory_used() <= budget,
                    "{} over the budget",
                    h.memory_used()
                );
                rsts.extend(
                    drain(h)
                        .into_iter()
                        .filter(|o| o.seg.flags.rst())
                        .map(|o| o.seg.dst_port),
                );
            }
            rsts
        };
        let first = open(&mut h, t(0), 40000);
        assert!(send(&mut h, t(10), &first, 0, 130_000).is_empty());
        let second = open(&mut h, t(1000), 40001);
        let mut rsts = Vec::new();
        for k in 0..15 {
            rsts.extend(send(
                &mut h,
                t(2000 + 100 * k),
                &second,
                10_000 * k as usize,
                10_000,
            ));
        }
        assert_eq!(rsts, [40000], "the idle connection, once");
        assert_eq!(h.counters.memory_aborts, 1);
        assert!(h.conns.contains_key(&(A, 40001, 8080)));
        assert!(!h.conns.contains_key(&(A, 40000, 8080)));
    }
}
