//! tinygram-net: the `net` layer (ARCHITECTURE.md). It runs the sans-IO engine
//! (`tinygram-proto`, unchanged) on a Linux TUN device so that it talks to real
//! TCP peers: the kernel, curl, any socket program.
//!
//! - [`device`]: opens and configures the TUN device (tun-rs);
//! - [`host`]: one IPv4 host: checksums checked on input and computed on
//!   output, a demultiplexer by 4-tuple, a listener with a backlog and SYN
//!   cookies beyond it, a deadline heap, RSTs for closed ports;
//! - [`isn`]: RFC 6528 initial sequence numbers (keyed hash of the 4-tuple)
//!   and RFC 4987 SYN cookies under the same key;
//! - [`app`]: the applications (echo, discard, source, http, ack-after, request);
//! - [`driver`]: the real-time loop (real clock mapped onto the engine's
//!   `Instant`, ppoll until the next packet or deadline);
//! - [`offload`]: the virtio-net header, TSO/GSO super-packets both ways;
//! - [`pcap`]: `--pcap`; [`explain`]: `--explain`;
//! - [`link`]: `tun link`, the simulator's link model between two network
//!   namespaces in real time;
//! - [`netns`]: network namespaces, veth pairs, code run inside them;
//! - [`kernel_apps`]: the kernel's TCP running known exchange patterns
//!   across a link, and tcpdump captures of them.
//!
//! IPv4 only; IPv6 packets (neighbour discovery) are counted and ignored.

pub mod app;
pub mod budget;
pub mod device;
pub mod driver;
pub mod explain;
pub mod host;
pub mod isn;
pub mod kernel_apps;
pub mod link;
pub mod netns;
pub mod offload;
pub mod pcap;

pub use app::{AppResult, AppSpec};
pub use device::{default_kernel_addr, parse_cidr, DeviceConfig, Tun, TunOptions};
pub use driver::{
    run, run_on, stop_on_signals, summary, NetError, OffloadCounters, PacketDevice, Role,
    RunOptions, RunReport,
};
pub use host::{ClosedSummary, ConnReport, Host, HostCounters};
pub use isn::IsnKey;
