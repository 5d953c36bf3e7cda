//! One IPv4 host on the wire: checks and demultiplexes arriving packets to
//! connections by 4-tuple, opens a connection per SYN on a listening port,
//! answers everything else with a RST (RFC 9293 3.10.7.1), and frames what the
//! engines emit as IPv4 packets with checksums.

use crate::app::{App, AppIo, AppSpec};
use crate::explain::Explain;
use crate::isn::{IsnKey, Rfc6528Isn};
use std::collections::BTreeMap;
use std::net::{Ipv4Addr, SocketAddrV4};
use tinygram_proto::wire::{Ipv4Repr, TcpOptions, TcpSegment, WireError};
use tinygram_proto::{Config, Connection, Instant, State, TcpRepr};

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
    /// IPv4 header and TCP checksum failures (counted in `bad_packets` too).
    pub bad_checksums: u64,
    /// Malformed TCP headers (bad options, data offset) with a good checksum
    /// for a live connection (counted in `bad_packets` too): handed to that
    /// connection, which counts them in `invalid_segments` and traces them.
    pub invalid_for_connections: u64,
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
    /// The secret of every connection's RFC 6528 ISN generator.
    isn_key: IsnKey,
    payload: Vec<u8>,
}

impl Host {
    /// A host at `addr`; `seed` starts the IPv4 identification counter and
    /// `isn_key` keys the ISNs (`IsnKey::from_os()` on a real network).
    pub fn new(addr: Ipv4Addr, config: Config, seed: u64, isn_key: IsnKey) -> Host {
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
            isn_key,
            payload: Vec::new(),
        }
    }

    /// Accept connections on `port`, each served by a fresh `app`.
    pub fn listen(&mut self, port: u16, app: AppSpec) {
        self.listen = Some((port, app));
    }

    /// Opens a connection to `to` from `local_port`; the SYN leaves on the next step.
    pub fn connect(&mut self, now: Instant, local_port: u16, to: SocketAddrV4, app: AppSpec) {
        let isn = self.isn_source(local_port, to);
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

    /// One connection's ISN generator (RFC 6528 section 3): the 4-tuple's
    /// keyed hash plus the 4 us clock, so a connection that returns to LISTEN
    /// answers the next SYN with a later ISN, and no connection's ISNs tell
    /// anything about another's.
    fn isn_source(&self, local_port: u16, remote: SocketAddrV4) -> Rfc6528Isn {
        self.isn_key
            .generator(SocketAddrV4::new(self.addr, local_port), remote)
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
        let tcp_bytes = &packet[range];
        let ctx = ip.checksum_ctx();
        let (seg, prange) = match TcpRepr::parse(tcp_bytes, Some(ctx)) {
            Ok(x) => x,
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
                let intact = TcpSegment::new_unchecked(tcp_bytes).verify_checksum(&ctx);
                if let (true, Some(p)) = (intact, tcp_bytes.get(..4)) {
                    let key = (
                        Ipv4Addr::from(ip.src),
                        u16::from_be_bytes([p[0], p[1]]),
                        u16::from_be_bytes([p[2], p[3]]),
                    );
                    if let Some(slot) = self.conns.get_mut(&key) {
                        self.counters.invalid_for_connections += 1;
                        let _ = slot.conn.handle_bytes(now, tcp_bytes, Some(ctx));
                    }
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
                    let isn = self.isn_source(port, SocketAddrV4::new(src, seg.src_port));
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
        let report = self.report(key, &slot);
        self.finished.push(report);
    }

    /// A snapshot of one connection.
    pub fn report(&self, key: FourTuple, slot: &Slot) -> ConnReport {
        ConnReport {
            local: SocketAddrV4::new(self.addr, key.2),
            remote: SocketAddrV4::new(key.0, key.1),
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
        v.extend(self.conns.iter().map(|(k, s)| self.report(*k, s)));
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

#[cfg(test)]
mod tests {
    //! The host layer without a device: raw IPv4 packets in, raw IPv4 packets out.
    use super::*;
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
}
