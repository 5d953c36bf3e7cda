//! A simulated host: its access link each way, its connections by 4-tuple
//! and proto's sans-IO [`Endpoint`] for segments none of them claims
//! (listen backlog, SYN cookies, RSTs), the same endpoint the TUN host runs.

use crate::link::{Link, LinkConfig};
use crate::metrics::ListenResult;
use std::net::{Ipv4Addr, SocketAddrV4};
use tinygram_proto::endpoint::{ConnTable, Endpoint, FxBuild, IsnKey};

/// (remote host, remote port, local port): the 4-tuple, this host's address implied.
pub(crate) type Key = tinygram_proto::endpoint::FourTuple<u32>;

/// What a 4-tuple leads to on a host.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Slot {
    /// An open connection (index into the endpoints).
    Conn(u32),
    /// A client of flow `.0` is connecting: a connection its SYN (or its
    /// cookie ACK) opens serves that flow.
    Expect(u32),
}

/// A host's connections and expected clients by 4-tuple.
pub(crate) type Demux = ConnTable<u32, Slot, FxBuild>;

/// A host's simulated address: its number (the simulator routes by number;
/// the address only keys SYN cookies).
pub(crate) fn address(host: u32, port: u16) -> SocketAddrV4 {
    SocketAddrV4::new(Ipv4Addr::from(host), port)
}

/// A host: its access link each way, its demultiplexer and its endpoint.
pub(crate) struct NetHost {
    pub name: String,
    /// On the server side of the bottleneck.
    pub server_side: bool,
    /// Host to bottleneck (with no bottleneck: host to the other host).
    pub up: Link,
    /// Bottleneck to host (unused with no bottleneck: the other host's `up` arrives here).
    pub down: Link,
    pub demux: Demux,
    /// Listening ports, each with the flow group whose settings and
    /// workload serve a connection no flow expected (a flood's).
    pub listening: Vec<(u16, u32)>,
    pub endpoint: Endpoint,
    pub next_port: u32,
    pub rsts_sent: u64,
    /// What the endpoint did with SYNs and cookie ACKs.
    pub listen: ListenResult,
}

impl NetHost {
    /// A host named `name` with links `up` and `down`, no connection and no
    /// listener; `key` signs its SYN cookies.
    pub fn new(
        name: &str,
        server_side: bool,
        (up, down): (LinkConfig, LinkConfig),
        key: IsnKey,
    ) -> NetHost {
        NetHost {
            name: name.to_string(),
            server_side,
            up: Link::new(up),
            down: Link::new(down),
            demux: Demux::default(),
            listening: Vec::new(),
            endpoint: Endpoint::new(key),
            next_port: crate::flows::FIRST_PORT,
            rsts_sent: 0,
            listen: ListenResult::default(),
        }
    }

    /// The flow group listening on `port`, if any.
    pub fn listener_group(&self, port: u16) -> Option<u32> {
        self.listening
            .iter()
            .find(|&&(p, _)| p == port)
            .map(|&(_, g)| g)
    }
}
