//! One IPv4 host on the wire: checks and demultiplexes arriving packets to
//! connections by 4-tuple, opens a connection per SYN on a listening port,
//! answers everything else with a RST (RFC 9293 3.10.7.1), and frames what the
//! engines emit as IPv4 packets with checksums.

use crate::app::{App, AppIo, AppSpec};
use crate::explain::Explain;
use std::collections::BTreeMap;
use std::net::{Ipv4Addr, SocketAddrV4};
use tinygram_proto::wire::{Ipv4Repr, TcpOptions, WireError};
use tinygram_proto::{Config, Connection, Instant, SeqNumber, State, TcpRepr};

/// Remote address, remote port, local port.
pub type FourTuple = (Ipv4Addr, u16, u16);

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
    /// TCP checksum failures (counted in `bad_packets` too).
    pub bad_checksums: u64,
    /// Addressed to another host: dropped.
    pub not_for_us: u64,
    /// Segments for no connection that were answered with a RST.
    pub rsts_for_closed_ports: u64,
    /// Connections opened (accepted or connected).
    pub connections: u64,
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
}

/// What a finished connection leaves behind, for the exit summary and tests.
#[derive(Clone, Debug)]
pub struct ConnReport {
    pub remote: SocketAddrV4,
    pub local_port: u16,
    pub state: State,
    pub error: Option<String>,
    pub counters: tinygram_proto::Counters,
    pub effective_mss: usize,
    pub peer_syn_options: Option<TcpOptions>,
    pub our_syn_options: Option<TcpOptions>,
    pub app: crate::app::AppResult,
}

/// The IPv4 host: our address, listeners, live connections.
pub struct Host {
    pub addr: Ipv4Addr,
    config: Config,
    listen: Option<(u16, AppSpec)>,
    pub conns: BTreeMap<FourTuple, Slot>,
    /// Connections that have ended, oldest first.
    pub finished: Vec<ConnReport>,
    pub counters: HostCounters,
    pub explain: Explain,
    /// IP packets ready for the device.
    pub outbox: Vec<Vec<u8>>,
    ip_ident: u16,
    isn_state: u64,
    payload: Vec<u8>,
}

impl Host {
    pub fn new(addr: Ipv4Addr, config: Config, seed: u64) -> Host {
        Host {
            addr,
            config,
            listen: None,
            conns: BTreeMap::new(),
            finished: Vec::new(),
            counters: HostCounters::default(),
            explain: Explain::default(),
            outbox: Vec::new(),
            ip_ident: seed as u16,
            isn_state: seed | 1,
            payload: Vec::new(),
        }
    }

    /// Accept connections on `port`, each served by a fresh `app`.
    pub fn listen(&mut self, port: u16, app: AppSpec) {
        self.listen = Some((port, app));
    }

    /// Opens a connection to `to` from `local_port`; the SYN leaves on the next step.
    pub fn connect(&mut self, now: Instant, local_port: u16, to: SocketAddrV4, app: AppSpec) {
        let isn = self.next_isn();
        let conn = Connection::connect(self.config.clone(), local_port, to.port(), isn, now);
        self.counters.connections += 1;
        self.conns.insert(
            (*to.ip(), to.port(), local_port),
            Slot {
                conn,
                app: app.build(false),
                peer_syn_options: None,
                our_syn_options: None,
                opened_at: now,
            },
        );
    }

    /// ISNs: a xorshift stream seeded from the clock by the driver (RFC 9293
    /// 3.4.1 asks only that they be hard to guess and not repeat soon).
    fn next_isn(&mut self) -> SeqNumber {
        let mut x = self.isn_state;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.isn_state = x;
        SeqNumber(x as u32)
    }

    /// One IP packet from the device.
    pub fn handle_packet(&mut self, now: Instant, packet: &[u8]) {
        self.counters.packets_in += 1;
        let (ip, range) = match Ipv4Repr::parse(packet) {
            Ok(x) => x,
            Err(WireError::BadVersion { .. }) | Err(WireError::NotTcp { .. }) => {
                self.counters.not_ipv4_tcp += 1;
                return;
            }
            Err(_) => {
                self.counters.bad_packets += 1;
                return;
            }
        };
        if Ipv4Addr::from(ip.dst) != self.addr {
            self.counters.not_for_us += 1;
            return;
        }
        let tcp_bytes = &packet[range];
        let (seg, prange) = match TcpRepr::parse(tcp_bytes, Some(ip.checksum_ctx())) {
            Ok(x) => x,
            Err(e) => {
                self.counters.bad_packets += 1;
                if e == WireError::BadChecksum {
                    self.counters.bad_checksums += 1;
                }
                return;
            }
        };
        let payload = &tcp_bytes[prange];
        let src = Ipv4Addr::from(ip.src);
        let key = (src, seg.src_port, seg.dst_port);
        if !self.conns.contains_key(&key) {
            match self.listen.clone() {
                Some((port, app))
                    if port == seg.dst_port
                        && seg.flags.syn()
                        && !seg.flags.ack()
                        && !seg.flags.rst() =>
                {
                    let isn = self.next_isn();
                    let conn = Connection::listen(self.config.clone(), port, isn);
                    let app = app.build(true);
                    self.counters.connections += 1;
                    self.conns.insert(
                        key,
                        Slot {
                            conn,
                            app,
                            peer_syn_options: None,
                            our_syn_options: None,
                            opened_at: now,
                        },
                    );
                }
                _ => {
                    if let Some(rst) = tinygram_proto::rst_reply(&seg, payload.len()) {
                        self.counters.rsts_for_closed_ports += 1;
                        let remote = (src, seg.src_port);
                        self.push_packet(remote, &rst, &[]);
                    }
                    return;
                }
            }
        }
        let slot = self.conns.get_mut(&key).expect("inserted above");
        if seg.flags.syn() {
            slot.peer_syn_options = Some(seg.options);
        }
        slot.conn.handle_segment(now, &seg, payload);
    }

    /// Fires due timers, runs the applications, drains every connection's
    /// output into the outbox and retires finished connections.
    pub fn step(&mut self, now: Instant) {
        let keys: Vec<FourTuple> = self.conns.keys().copied().collect();
        for key in keys {
            let mut slot = self.conns.remove(&key).expect("key listed");
            if slot.conn.poll_timeout().is_some_and(|t| t <= now) {
                slot.conn.handle_timeout(now);
            }
            {
                let mut io = AppIo {
                    conn: &mut slot.conn,
                    now,
                    host: self,
                    remote: (key.0, key.1),
                    our_syn: &mut slot.our_syn_options,
                };
                slot.app.step(&mut io);
                io.transmit();
            }
            if self.config.trace {
                self.explain.absorb(&mut slot.conn);
            }
            let state = slot.conn.state();
            // A reset in SYN-RECEIVED sends a passive open back to LISTEN
            // (RFC 9293 3.10.7.4); the listener here is the host, so it ends.
            let gone = matches!(state, State::Closed | State::Listen);
            if gone {
                self.retire(key, slot);
            } else {
                self.conns.insert(key, slot);
            }
        }
    }

    /// Aborts every live connection (RFC 9293 3.10.5: a RST to each
    /// synchronized peer) and retires them all.
    pub fn abort_all(&mut self, now: Instant) {
        let keys: Vec<FourTuple> = self.conns.keys().copied().collect();
        for key in keys {
            let mut slot = self.conns.remove(&key).expect("key listed");
            if slot.conn.state() != State::TimeWait {
                slot.conn.abort();
            }
            let mut io = AppIo {
                conn: &mut slot.conn,
                now,
                host: self,
                remote: (key.0, key.1),
                our_syn: &mut slot.our_syn_options,
            };
            io.transmit();
            self.retire(key, slot);
        }
    }

    fn retire(&mut self, key: FourTuple, slot: Slot) {
        self.finished.push(Self::report(key, &slot));
    }

    /// A snapshot of one connection.
    pub fn report(key: FourTuple, slot: &Slot) -> ConnReport {
        ConnReport {
            remote: SocketAddrV4::new(key.0, key.1),
            local_port: key.2,
            state: slot.conn.state(),
            error: slot.conn.error().map(|e| e.to_string()),
            counters: slot.conn.counters().clone(),
            effective_mss: slot.conn.effective_mss(),
            peer_syn_options: slot.peer_syn_options,
            our_syn_options: slot.our_syn_options,
            app: slot.app.result(),
        }
    }

    /// Every connection, finished ones first, then live ones.
    pub fn all_reports(&self) -> Vec<ConnReport> {
        let mut v = self.finished.clone();
        v.extend(self.conns.iter().map(|(k, s)| Self::report(*k, s)));
        v
    }

    /// The earliest engine deadline over all connections.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.conns
            .values()
            .filter_map(|s| s.conn.poll_timeout())
            .min()
    }

    /// Frames one segment as an IPv4 packet with both checksums.
    pub(crate) fn push_packet(&mut self, remote: (Ipv4Addr, u16), seg: &TcpRepr, payload: &[u8]) {
        let tcp_len = seg.buffer_len(payload.len());
        let ip = Ipv4Repr {
            src: self.addr.octets(),
            dst: remote.0.octets(),
            ttl: 64,
            ident: self.ip_ident,
            dont_frag: true,
            payload_len: tcp_len,
        };
        self.ip_ident = self.ip_ident.wrapping_add(1);
        let mut pkt = vec![0u8; Ipv4Repr::HEADER_LEN + tcp_len];
        let (h, t) = pkt.split_at_mut(Ipv4Repr::HEADER_LEN);
        if ip.emit(h).is_err() || seg.emit(t, payload, Some(ip.checksum_ctx())).is_err() {
            // Cannot happen for segments the engine builds (options <= 40 bytes,
            // payload <= MSS); dropping one is what a real NIC would do.
            self.counters.bad_packets += 1;
            return;
        }
        self.outbox.push(pkt);
    }

    pub(crate) fn take_payload_buf(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.payload)
    }
    pub(crate) fn put_payload_buf(&mut self, b: Vec<u8>) {
        self.payload = b;
    }
}
