//! The real-time loop: read packets from the device until it has none, feed
//! them to the engine with the real clock, let the applications run, write
//! what the engine emits (consecutive segments of a connection as one GSO
//! super-packet when the device takes them), sleep (ppoll, or spin with
//! busy-polling) until the next packet or the engine's next deadline.

use crate::app::AppSpec;
use crate::device::{DeviceConfig, Tun};
use crate::explain::Explain;
use crate::host::{ClosedSummary, ConnReport, Host, HostCounters};
use crate::isn::{FromOs, IsnKey};
use crate::offload::{
    check_rx, finish_partial_checksum, payload_of, plan_runs, super_headers, RxOffload, VnetError,
    VnetHdr, VNET_HDR_LEN,
};
use crate::pcap::Capture;
use std::io::{self, IsTerminal, Write};
use std::net::SocketAddrV4;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration as StdDuration;
use tinygram_proto::{Config, Instant, State};

/// What the host does.
#[derive(Clone, Debug)]
pub enum Role {
    /// Accept connections on `port`; stop after `conns` connections have ended, if given.
    Serve {
        port: u16,
        app: AppSpec,
        conns: Option<u64>,
    },
    /// Connect to `to` (from `local_port`, or an ephemeral port) and run `app`.
    Connect {
        to: SocketAddrV4,
        app: AppSpec,
        local_port: Option<u16>,
    },
}

/// Everything one run needs.
#[derive(Clone, Debug)]
pub struct RunOptions {
    pub device: DeviceConfig,
    /// Per-connection settings (the same as a scenario host's).
    pub config: Config,
    pub role: Role,
    pub pcap: Option<PathBuf>,
    /// Stop after this long (serve: stop listening; connect: give up).
    pub duration: Option<StdDuration>,
    /// Show the one-line status on stderr (only drawn on a terminal).
    pub status: bool,
    /// Set from outside (a signal, a test) to stop the run.
    pub stop: Arc<AtomicBool>,
    /// Half-open connections a listener keeps before it answers SYNs with
    /// SYN cookies (`host::DEFAULT_BACKLOG`).
    pub backlog: usize,
}

/// What a run did.
#[derive(Clone, Debug)]
pub struct RunReport {
    /// The last connections to end, in that order (live ones last); every
    /// ended one is counted in `closed`.
    pub conns: Vec<ConnReport>,
    pub closed: ClosedSummary,
    pub host: HostCounters,
    /// The why-trace summary (only when `config.trace`).
    pub explain: Option<Explain>,
    pub elapsed: StdDuration,
    /// Packets the device refused (its queue was full).
    pub device_drops: u64,
    /// What the virtio-net offloads did (all zero without them).
    pub offload: OffloadCounters,
    /// Why the run stopped.
    pub stopped_by: &'static str,
}

#[derive(Debug, thiserror::Error)]
pub enum NetError {
    #[error("{0}")]
    Io(#[from] io::Error),
    #[error("{0}")]
    Config(String),
}

/// What the offloads did on one run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OffloadCounters {
    /// GSO super-packets from the kernel, and the segments cut from them.
    pub super_packets_in: u64,
    pub segments_in_super_packets: u64,
    /// Packets from the kernel whose TCP checksum was partial (not verified:
    /// the kernel left it to be finished, the bytes never left memory).
    pub partial_checksums_in: u64,
    /// GSO super-packets written, and the segments they carried.
    pub super_packets_out: u64,
    pub segments_in_super_packets_out: u64,
    /// Frames whose virtio-net header did not fit the packet (dropped).
    pub bad_vnet_headers: u64,
    /// The last such header's fault.
    pub last_vnet_error: Option<VnetError>,
    /// Frames the device refused as invalid (EINVAL), dropped.
    pub rejected_by_device: u64,
    /// Reads and writes on the device (system calls).
    pub reads: u64,
    pub writes: u64,
}

/// Deadline cap: how often the loop looks at the stop flag and the status line.
const TICK: StdDuration = StdDuration::from_millis(50);
/// Frames read per loop turn at most (normally the device runs dry first).
const READ_BATCH: usize = 1024;
/// A read buffer: the virtio-net header and the largest IPv4 packet.
const FRAME_BUF: usize = VNET_HDR_LEN + 65536;

/// IPv4 identification and ephemeral-port seed: the clock's nanoseconds and our pid.
fn seed() -> u64 {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos() as u64;
    t ^ (u64::from(std::process::id()) << 32) ^ 0x5851_f42d_4c95_7f2d
}

/// What the loop needs from a device: the TUN device, or a test's stand-in.
pub trait PacketDevice {
    /// One packet, or `None` when none is waiting (never blocks).
    fn recv(&self, buf: &mut [u8]) -> io::Result<Option<usize>>;
    /// Writes one packet; `false` if the device refused it (queue full).
    fn send(&self, pkt: &[u8]) -> io::Result<bool>;
    /// Sleeps until a packet may be waiting or `d` has passed.
    fn wait(&self, d: StdDuration) -> io::Result<()>;
    /// Whether frames carry a virtio-net header both ways ([`crate::offload`]).
    fn vnet_hdr(&self) -> bool {
        false
    }
    /// Writes one frame gathered from `parts`.
    fn send_vectored(&self, parts: &[&[u8]]) -> io::Result<bool> {
        self.send(&parts.concat())
    }
}

impl PacketDevice for Tun {
    fn recv(&self, buf: &mut [u8]) -> io::Result<Option<usize>> {
        Tun::recv(self, buf)
    }
    fn send(&self, pkt: &[u8]) -> io::Result<bool> {
        Tun::send(self, pkt)
    }
    fn wait(&self, d: StdDuration) -> io::Result<()> {
        if self.busy_poll {
            spin_readable(self.raw_fd(), d)
        } else {
            wait_readable(self.raw_fd(), d)
        }
    }
    fn vnet_hdr(&self) -> bool {
        self.vnet_hdr
    }
    fn send_vectored(&self, parts: &[&[u8]]) -> io::Result<bool> {
        Tun::send_vectored(self, parts)
    }
}

/// Writes the host's outbox: each packet alone, or with offloads, runs of
/// consecutive segments as GSO super-packets ([`plan_runs`]) behind their
/// virtio-net header, gathered without copying.
fn write_out(
    tun: &impl PacketDevice,
    pkts: &[Vec<u8>],
    partial: bool,
    device_drops: &mut u64,
    host: &mut Host,
    off: &mut OffloadCounters,
) -> io::Result<()> {
    let mut note = |sent: io::Result<bool>, n: usize, off: &mut OffloadCounters| {
        off.writes += 1;
        match sent {
            Ok(true) => host.counters.packets_out += n as u64,
            Ok(false) => *device_drops += n as u64,
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                off.rejected_by_device += 1;
                *device_drops += n as u64;
            }
            Err(e) => return Err(e),
        }
        Ok(())
    };
    if !tun.vnet_hdr() {
        for p in pkts {
            note(tun.send(p), 1, off)?;
        }
        return Ok(());
    }
    for run in plan_runs(pkts) {
        let members = &pkts[run];
        if members.len() > 1 {
            if let Some((hdr, head)) = super_headers(members) {
                let vh = hdr.to_bytes();
                let mut parts: Vec<&[u8]> = Vec::with_capacity(members.len() + 2);
                parts.push(&vh);
                parts.push(&head);
                parts.extend(members.iter().map(|p| payload_of(p)));
                off.super_packets_out += 1;
                off.segments_in_super_packets_out += members.len() as u64;
                note(tun.send_vectored(&parts), members.len(), off)?;
                continue;
            }
        }
        for p in members {
            let vh = VnetHdr::for_packet(p, partial).to_bytes();
            note(tun.send_vectored(&[&vh, p]), 1, off)?;
        }
    }
    Ok(())
}

/// Opens the device and runs until the role is done, `duration` passes or `stop` is set.
pub fn run(opts: &RunOptions) -> Result<RunReport, NetError> {
    opts.config
        .validate()
        .map_err(|e| NetError::Config(e.to_string()))?;
    let tun = Tun::open(&opts.device)?;
    run_on(&tun, opts)
}

/// Like [`run`], on a device already open.
pub fn run_on(tun: &impl PacketDevice, opts: &RunOptions) -> Result<RunReport, NetError> {
    let mut capture = match &opts.pcap {
        Some(p) => Some(Capture::create(p)?),
        None => None,
    };
    let start = std::time::Instant::now();
    let clock = || Instant::from_nanos(start.elapsed().as_nanos() as u64);
    let seed = seed();
    let isn_key = IsnKey::from_os()
        .map_err(|e| NetError::Config(format!("cannot draw the ISN secret from the OS: {e}")))?;
    let mut host = Host::new(opts.device.addr, opts.config.clone(), seed, isn_key);
    host.set_prefix(opts.device.prefix);
    // A `backlog` setting (`--set backlog=N`) wins over `--backlog`.
    host.backlog = opts.config.backlog.map_or(opts.backlog, |b| b as usize);
    match &opts.role {
        Role::Serve { port, app, .. } => host.listen(*port, app.clone()),
        Role::Connect {
            to,
            app,
            local_port,
        } => {
            // IANA's dynamic range (RFC 6335 6): 49152-65535.
            let port = local_port.unwrap_or(49152 + (seed >> 17) as u16 % 16384);
            host.connect(clock(), port, *to, app.clone());
        }
    }
    let show_status = opts.status && io::stderr().is_terminal();
    let mut last_status = start;
    let mut buf = vec![0u8; FRAME_BUF];
    let mut device_drops = 0u64;
    let mut off = OffloadCounters::default();
    let vnet = tun.vnet_hdr();
    // Checksums are left to the kernel unless a capture must show them.
    let partial_tx = vnet && capture.is_none();
    host.set_partial_checksums(partial_tx);
    let mut scratch = Vec::new();
    let mut out = Vec::new();
    let stopped_by;
    loop {
        // 1. inputs: read until the device has nothing more.
        for _ in 0..READ_BATCH {
            let Some(n) = tun.recv(&mut buf)? else { break };
            off.reads += 1;
            let (pkt, rx) = if vnet {
                let checked =
                    VnetHdr::parse(&buf[..n]).and_then(|h| check_rx(&h, &buf[VNET_HDR_LEN..n]));
                match checked {
                    Ok(rx) => (&buf[VNET_HDR_LEN..n], rx),
                    Err(e) => {
                        off.bad_vnet_headers += 1;
                        off.last_vnet_error = Some(e);
                        continue;
                    }
                }
            } else {
                (&buf[..n], RxOffload::default())
            };
            if let Some(c) = capture.as_mut() {
                if rx.csum_partial {
                    // The capture shows the checksum the segment will have.
                    scratch.clear();
                    scratch.extend_from_slice(pkt);
                    let ihl = usize::from(pkt[0] & 0x0f) * 4;
                    finish_partial_checksum(&mut scratch, ihl);
                    c.record(&scratch)?;
                } else {
                    c.record(pkt)?;
                }
            }
            off.partial_checksums_in += u64::from(rx.csum_partial);
            if let Some(size) = rx.gso_size {
                off.super_packets_in += 1;
                off.segments_in_super_packets += crate::offload::segment_count(pkt, size) as u64;
            }
            // Each packet from the device gets its own turn (inputs,
            // applications, output): the ACK policy sees segments one by one
            // (a super-packet whole, as a GRO packet, as Linux's receiver
            // does), not whole batches, which would stretch ACKs.
            host.handle_offloaded(clock(), pkt, rx);
            host.step(clock());
        }
        // 2-3. timers, applications, output: everything at once.
        host.step(clock());
        std::mem::swap(&mut out, &mut host.outbox);
        if let Some(c) = capture.as_mut() {
            for pkt in &out {
                c.record(pkt)?;
            }
        }
        write_out(
            tun,
            &out,
            partial_tx,
            &mut device_drops,
            &mut host,
            &mut off,
        )?;
        host.recycle(out.drain(..));
        if opts.stop.load(Ordering::Relaxed) {
            stopped_by = "stop requested";
            break;
        }
        if opts.duration.is_some_and(|d| start.elapsed() >= d) {
            stopped_by = "duration reached";
            break;
        }
        match &opts.role {
            Role::Serve { conns: Some(n), .. }
                if host.closed.connections >= *n
                    && host
                        .conns
                        .values()
                        .all(|s| s.conn.state() == State::TimeWait) =>
            {
                stopped_by = "connections done";
                break;
            }
            Role::Connect { .. }
                if host.conns.is_empty()
                    || host
                        .conns
                        .values()
                        .all(|s| s.conn.state() == State::TimeWait && s.app.done()) =>
            {
                stopped_by = "connection done";
                break;
            }
            _ => {}
        }
        if show_status && last_status.elapsed() >= StdDuration::from_secs(1) {
            last_status = std::time::Instant::now();
            eprint!("\r{}\x1b[K", status_line(&host, start.elapsed()));
            let _ = io::stderr().flush();
        }
        // 4. sleep until a packet arrives or the engine's next deadline.
        let now = clock();
        let wait = match host.poll_timeout() {
            Some(t) if t <= now => StdDuration::ZERO,
            Some(t) => (t - now).min(TICK),
            None => TICK,
        };
        if !wait.is_zero() {
            tun.wait(wait)?;
        }
    }
    if matches!(stopped_by, "stop requested" | "duration reached") {
        // Leave no peer waiting on a connection nobody drives any more.
        host.abort_all(clock());
        let out = std::mem::take(&mut host.outbox);
        if let Some(c) = capture.as_mut() {
            for pkt in &out {
                c.record(pkt)?;
            }
        }
        write_out(
            tun,
            &out,
            partial_tx,
            &mut device_drops,
            &mut host,
            &mut off,
        )?;
    }
    if show_status {
        eprintln!("\r{}\x1b[K", status_line(&host, start.elapsed()));
    }
    if let Some(c) = capture {
        c.finish()?;
    }
    Ok(RunReport {
        conns: host.all_reports(),
        closed: host.closed.clone(),
        host: host.counters.clone(),
        explain: opts.config.trace.then(|| host.explain.clone()),
        elapsed: start.elapsed(),
        device_drops,
        offload: off,
        stopped_by,
    })
}

/// Busy-polling: ppoll without sleeping, over and over, until the device is
/// readable or `d` has passed.
fn spin_readable(fd: i32, d: StdDuration) -> io::Result<()> {
    let end = std::time::Instant::now() + d;
    loop {
        let mut pfd = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd; a zero timeout never sleeps.
        let r = unsafe { libc::poll(&mut pfd, 1, 0) };
        if r != 0 || std::time::Instant::now() >= end {
            if r < 0 {
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
            return Ok(());
        }
        std::hint::spin_loop();
    }
}

/// ppoll(2): nanosecond timeout, so short engine deadlines are kept.
fn wait_readable(fd: i32, d: StdDuration) -> io::Result<()> {
    let mut pfd = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    let ts = libc::timespec {
        tv_sec: d.as_secs() as libc::time_t,
        tv_nsec: d.subsec_nanos() as libc::c_long,
    };
    // SAFETY: one valid pollfd, a valid timespec, no signal mask change.
    let r = unsafe { libc::ppoll(&mut pfd, 1, &ts, std::ptr::null()) };
    if r < 0 {
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
    Ok(())
}

fn status_line(host: &Host, elapsed: StdDuration) -> String {
    let (bin, bout) = host.app_bytes();
    let secs = elapsed.as_secs_f64().max(1e-9);
    let state = host
        .conns
        .values()
        .next()
        .map(|s| s.conn.state().to_string())
        .unwrap_or_else(|| "-".into());
    format!(
        "{:.1} s | {} live, {} done | {state} | in {:.1} MB ({:.1} Mbit/s) out {:.1} MB ({:.1} Mbit/s) | packets {} in {} out",
        secs,
        host.conns.len(),
        host.closed.connections,
        bin as f64 / 1e6,
        bin as f64 * 8.0 / secs / 1e6,
        bout as f64 / 1e6,
        bout as f64 * 8.0 / secs / 1e6,
        host.counters.packets_in,
        host.counters.packets_out,
    )
}

static SIGNALLED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    SIGNALLED.store(true, Ordering::Relaxed);
}

/// A stop flag set by SIGINT or SIGTERM (for the CLI: Ctrl-C ends the run and
/// the summary still prints).
pub fn stop_on_signals() -> Arc<AtomicBool> {
    let flag = Arc::new(AtomicBool::new(false));
    // SAFETY: the handler only stores to an atomic (async-signal-safe).
    unsafe {
        libc::signal(libc::SIGINT, on_signal as *const () as libc::sighandler_t);
        libc::signal(libc::SIGTERM, on_signal as *const () as libc::sighandler_t);
    }
    let f = flag.clone();
    std::thread::spawn(move || loop {
        if SIGNALLED.load(Ordering::Relaxed) {
            f.store(true, Ordering::Relaxed);
            return;
        }
        std::thread::sleep(StdDuration::from_millis(20));
    });
    flag
}

/// The exit summary: per connection, its counters, and the why-trace summary.
pub fn summary(r: &RunReport) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let h = &r.host;
    let _ = writeln!(
        s,
        "tinygram: {:.3} s, {}; {} connection(s) opened, {} RST(s) for closed ports",
        r.elapsed.as_secs_f64(),
        r.stopped_by,
        h.connections,
        h.rsts_for_closed_ports
    );
    let _ = writeln!(
        s,
        "  packets: {} in, {} out, {} refused by the device (queue full)",
        h.packets_in, h.packets_out, r.device_drops
    );
    let o = &r.offload;
    if o.reads + o.writes > 0 {
        let _ = writeln!(
            s,
            "  device: {} reads, {} writes; offloads: {} super-packets in ({} segments), {} out ({} segments), {} partial checksums in, {} bad virtio-net headers{}, {} frames refused by the device",
            o.reads,
            o.writes,
            o.super_packets_in,
            o.segments_in_super_packets,
            o.super_packets_out,
            o.segments_in_super_packets_out,
            o.partial_checksums_in,
            o.bad_vnet_headers,
            o.last_vnet_error.map(|e| format!(" (last: {e})")).unwrap_or_default(),
            o.rejected_by_device
        );
    }
    let _ = writeln!(
        s,
        "  dropped on input: {} bad ({} bad checksums, {} malformed for a connection: its invalid_segments), {} not for us, {} not IPv4/TCP",
        h.bad_packets, h.bad_checksums, h.invalid_for_connections, h.not_for_us, h.not_ipv4_tcp
    );
    if h.martian_sources + h.syn_cookies_sent + h.syn_cookies_rejected > 0 {
        let _ = writeln!(
            s,
            "  SYN flood defence: {} SYN cookie(s) sent, {} accepted, {} rejected; {} from multicast/broadcast/loopback sources dropped",
            h.syn_cookies_sent, h.syn_cookies_accepted, h.syn_cookies_rejected, h.martian_sources
        );
    }
    if h.syns_dropped_backlog_full > 0 {
        let _ = writeln!(
            s,
            "  {} SYN(s) dropped: the backlog was full and syn_cookies is off",
            h.syns_dropped_backlog_full
        );
    }
    if h.refused_for_memory + h.memory_aborts + h.memory_peak > 0 {
        let _ = writeln!(
            s,
            "  memory budget: {} new connection(s) refused, {} aborted (longest without progress first); buffers peaked at {} bytes",
            h.refused_for_memory, h.memory_aborts, h.memory_peak
        );
    }
    let c = &r.closed;
    if c.reports_dropped > 0 || c.bytes_lost_to_reset > 0 {
        let _ = writeln!(
            s,
            "  {} connection(s) ended ({} with an error, {} B in, {} B out, {} B lost to resets in SYN-RECEIVED); the last {} are listed",
            c.connections,
            c.errors,
            c.bytes_in,
            c.bytes_out,
            c.bytes_lost_to_reset,
            c.connections - c.reports_dropped
        );
    }
    for c in &r.conns {
        let _ = writeln!(
            s,
            "connection {} <-> {}  {}{}  mss {}",
            c.local,
            c.remote,
            c.state,
            c.error
                .as_ref()
                .map(|e| format!(" ({e})"))
                .unwrap_or_default(),
            c.effective_mss
        );
        let _ = writeln!(s, "  app: {}", c.app);
        let _ = writeln!(s, "  counters:");
        s += &counters_text(&c.counters, "    ");
    }
    if let Some(e) = &r.explain {
        let _ = write!(s, "{e}");
    }
    s
}

/// `Counters` one per line, `name value`, zeros left out.
pub fn counters_text(c: &tinygram_proto::Counters, indent: &str) -> String {
    let dbg = format!("{c:#?}");
    let mut s = String::new();
    for line in dbg.lines() {
        let l = line.trim().trim_end_matches(',');
        if let Some((k, v)) = l.split_once(": ") {
            if v != "0" {
                s += &format!("{indent}{k} {v}\n");
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    //! The real-time loop on a stand-in device whose other end is a second
    //! [`Host`] (the "kernel"), driven from the device calls.
    use super::*;
    use std::cell::{Cell, RefCell};
    use std::collections::VecDeque;
    use std::net::Ipv4Addr;

    const TG: Ipv4Addr = Ipv4Addr::new(10, 7, 0, 2);
    const PEER: Ipv4Addr = Ipv4Addr::new(10, 7, 0, 1);

    struct Loopback {
        peer: RefCell<Host>,
        start: std::time::Instant,
        to_us: RefCell<VecDeque<Vec<u8>>>,
        /// Packets refused from now on (as a full device queue would).
        refuse: Cell<u64>,
        /// Foreign packets delivered first (not for us, not TCP, ...).
        noise: RefCell<Vec<Vec<u8>>>,
        /// Frames carry virtio-net headers: ours are cut as the kernel
        /// would (checking every checksum), the peer's runs reach us as
        /// GSO super-packets.
        vnet: bool,
        /// Frames of ours the kernel would have refused (bad checksum after
        /// finishing, unparseable header).
        bad_from_us: Cell<u64>,
        /// Super-packets delivered to us.
        supers_to_us: Cell<u64>,
    }

    impl Loopback {
        fn new(peer: Host) -> Loopback {
            Loopback {
                peer: RefCell::new(peer),
                start: std::time::Instant::now(),
                to_us: RefCell::default(),
                refuse: Cell::new(0),
                noise: RefCell::default(),
                vnet: false,
                bad_from_us: Cell::new(0),
                supers_to_us: Cell::new(0),
            }
        }
        fn with_vnet(peer: Host) -> Loopback {
            Loopback {
                vnet: true,
                ..Loopback::new(peer)
            }
        }
        fn now(&self) -> Instant {
            Instant::from_nanos(self.start.elapsed().as_nanos() as u64)
        }
        /// Runs the peer's timers and moves its output towards us (with
        /// offloads: runs of segments as super-packets, singles with a
        /// full checksum).
        fn pump(&self) {
            let mut p = self.peer.borrow_mut();
            p.step(self.now());
            let pkts: Vec<Vec<u8>> = p.outbox.drain(..).collect();
            if !self.vnet {
                self.to_us.borrow_mut().extend(pkts);
                return;
            }
            for run in crate::offload::plan_runs(&pkts) {
                let members = &pkts[run];
                let mut frame;
                if members.len() > 1 {
                    let (hdr, head) = super_headers(members).expect("a run");
                    frame = hdr.to_bytes().to_vec();
                    frame.extend_from_slice(&head);
                    for m in members {
                        frame.extend_from_slice(payload_of(m));
                    }
                    self.supers_to_us.set(self.supers_to_us.get() + 1);
                } else {
                    frame = VnetHdr::default().to_bytes().to_vec();
                    frame.extend_from_slice(&members[0]);
                }
                self.to_us.borrow_mut().push_back(frame);
            }
        }
    }

    impl PacketDevice for Loopback {
        fn recv(&self, buf: &mut [u8]) -> io::Result<Option<usize>> {
            if let Some(n) = self.noise.borrow_mut().pop() {
                buf[..n.len()].copy_from_slice(&n);
                return Ok(Some(n.len()));
            }
            self.pump();
            Ok(self.to_us.borrow_mut().pop_front().map(|p| {
                buf[..p.len()].copy_from_slice(&p);
                p.len()
            }))
        }
        fn send(&self, pkt: &[u8]) -> io::Result<bool> {
            if self.refuse.get() > 0 {
                self.refuse.set(self.refuse.get() - 1);
                return Ok(false);
            }
            let now = self.now();
            if self.vnet {
                // What the kernel does: finish checksums, cut super-packets.
                let segs = VnetHdr::parse(pkt)
                    .ok()
                    .and_then(|h| crate::offload::gso_segment(&h, &pkt[VNET_HDR_LEN..]));
                let Some(segs) = segs else {
                    self.bad_from_us.set(self.bad_from_us.get() + 1);
                    return Ok(true);
                };
                let mut peer = self.peer.borrow_mut();
                let bad = peer.counters.bad_checksums;
                for s in segs {
                    peer.handle_packet(now, &s);
                }
                let more = peer.counters.bad_checksums - bad;
                self.bad_from_us.set(self.bad_from_us.get() + more);
            } else {
                self.peer.borrow_mut().handle_packet(now, pkt);
            }
            self.pump();
            Ok(true)
        }
        fn vnet_hdr(&self) -> bool {
            self.vnet
        }
        fn wait(&self, d: StdDuration) -> io::Result<()> {
            self.pump();
            if !self.to_us.borrow().is_empty() {
                return Ok(());
            }
            let until_peer = self
                .peer
                .borrow()
                .poll_timeout()
                .map(|t| {
                    StdDuration::from_nanos(t.as_nanos().saturating_sub(self.now().as_nanos()))
                })
                .unwrap_or(d);
            std::thread::sleep(d.min(until_peer).min(StdDuration::from_millis(5)));
            Ok(())
        }
    }

    fn opts(role: Role) -> RunOptions {
        RunOptions {
            device: DeviceConfig {
                name: "test0".into(),
                addr: TG,
                prefix: 24,
                kernel_addr: PEER,
                mtu: 1500,
            },
            config: Config::default(),
            role,
            pcap: None,
            duration: Some(StdDuration::from_secs(20)),
            status: false,
            stop: Arc::new(AtomicBool::new(false)),
            backlog: crate::host::DEFAULT_BACKLOG,
        }
    }

    /// tinygram connects and sends 1 MB to a peer that discards it; the run
    /// ends by itself once the connection is done, and foreign packets on
    /// the device are counted, not answered.
    #[test]
    fn connect_runs_to_completion_and_counts_foreign_packets() {
        let mut peer = Host::new(PEER, Config::default(), 3, IsnKey::fixed([3; 16]));
        peer.listen(9000, AppSpec::Discard);
        let dev = Loopback::new(peer);
        // Not IPv4 (an IPv6 header) and an IPv4/TCP packet for someone else.
        let mut v6 = vec![0u8; 40];
        v6[0] = 0x60;
        dev.noise.borrow_mut().push(v6);
        let mut other = Host::new(PEER, Config::default(), 5, IsnKey::fixed([5; 16]));
        other.connect(
            Instant::ZERO,
            1234,
            SocketAddrV4::new(Ipv4Addr::new(10, 7, 0, 9), 80),
            AppSpec::Discard,
        );
        other.step(Instant::ZERO);
        dev.noise.borrow_mut().extend(other.outbox.drain(..));

        let o = opts(Role::Connect {
            to: SocketAddrV4::new(PEER, 9000),
            app: AppSpec::Source { bytes: 1_000_000 },
            local_port: Some(50000),
        });
        let r = run_on(&dev, &o).expect("run");
        assert_eq!(r.stopped_by, "connection done", "{r:#?}");
        assert_eq!(r.conns.len(), 1);
        let c = &r.conns[0];
        assert_eq!((c.state, c.error.clone()), (State::TimeWait, None));
        let theirs = dev.peer.borrow().all_reports();
        assert_eq!(theirs.len(), 1);
        assert_eq!(theirs[0].app.bytes_in, 1_000_000);
        assert_eq!(theirs[0].app.sha256_in, c.app.sha256_out);
        assert_eq!(r.host.not_ipv4_tcp, 1);
        assert_eq!(r.host.not_for_us, 1);
        assert_eq!(r.host.connections, 1);
        assert_eq!(r.device_drops, 0);
        assert!(r.host.packets_in > 10 && r.host.packets_out > 600, "{r:#?}");
        // The summary's connection line shows both ends, address and port.
        let line = format!("connection {}:50000 <-> {PEER}:9000  ", o.device.addr);
        assert!(
            summary(&r).contains(&line),
            "{line:?} missing from\n{}",
            summary(&r)
        );
    }

    /// With offloads, 2 MB each way: our runs of segments leave as GSO
    /// super-packets with partial checksums that, cut and finished as the
    /// kernel does, carry exactly the stream (every checksum right); the
    /// peer's super-packets are cut into segments on our side.
    #[test]
    fn offloads_carry_both_directions_intact() {
        for (our_app, their_app) in [
            (AppSpec::Source { bytes: 2_000_000 }, AppSpec::Discard),
            (AppSpec::Discard, AppSpec::Source { bytes: 2_000_000 }),
        ] {
            let mut cfg = Config::default();
            cfg.options.enable("wscale").unwrap();
            cfg.options.enable("timestamps").unwrap();
            cfg.options.enable("sack").unwrap();
            let mut peer = Host::new(PEER, cfg.clone(), 3, IsnKey::fixed([3; 16]));
            peer.listen(9000, their_app.clone());
            let dev = Loopback::with_vnet(peer);
            let mut o = opts(Role::Connect {
                to: SocketAddrV4::new(PEER, 9000),
                app: our_app.clone(),
                local_port: Some(50000),
            });
            o.config = cfg;
            let r = run_on(&dev, &o).expect("run");
            assert_eq!(r.stopped_by, "connection done", "{r:#?}");
            let c = &r.conns[0];
            assert_eq!(c.error, None);
            let theirs = &dev.peer.borrow().all_reports()[0];
            assert_eq!(dev.bad_from_us.get(), 0, "{r:#?}");
            let off = &r.offload;
            assert_eq!(off.bad_vnet_headers, 0);
            if matches!(our_app, AppSpec::Source { .. }) {
                assert_eq!(theirs.app.bytes_in, 2_000_000);
                assert_eq!(theirs.app.sha256_in, c.app.sha256_out);
                assert!(off.super_packets_out > 0, "{off:?}");
                assert!(
                    off.segments_in_super_packets_out > 2 * off.super_packets_out,
                    "{off:?}"
                );
                assert!(off.writes < r.host.packets_out, "{off:?} {r:#?}");
            } else {
                assert_eq!(c.app.bytes_in, 2_000_000);
                assert_eq!(c.app.sha256_in, theirs.app.sha256_out);
                assert_eq!(off.super_packets_in, dev.supers_to_us.get());
                assert!(off.super_packets_in > 0, "{off:?}");
                assert!(
                    off.segments_in_super_packets > 2 * off.super_packets_in,
                    "{off:?}"
                );
            }
        }
    }

    /// `blast` and `sink`, the benchmark's apps, move every byte and hash
    /// none; a partial write of a blast block is resumed where it stopped.
    #[test]
    fn blast_to_sink_moves_every_byte() {
        let mut peer = Host::new(PEER, Config::default(), 3, IsnKey::fixed([3; 16]));
        peer.listen(9000, AppSpec::Sink);
        let dev = Loopback::with_vnet(peer);
        let o = opts(Role::Connect {
            to: SocketAddrV4::new(PEER, 9000),
            app: AppSpec::Blast { bytes: 1_234_567 },
            local_port: Some(50000),
        });
        let r = run_on(&dev, &o).expect("run");
        assert_eq!(r.stopped_by, "connection done", "{r:#?}");
        let c = &r.conns[0];
        assert_eq!(
            (c.app.bytes_out, c.app.sha256_out.clone()),
            (1_234_567, None)
        );
        let theirs = &dev.peer.borrow().all_reports()[0];
        assert_eq!(
            (theirs.app.bytes_in, theirs.app.sha256_in.clone()),
            (1_234_567, None)
        );
    }

    /// A frame with a hostile virtio-net header is counted and dropped; the
    /// run goes on.
    #[test]
    fn hostile_vnet_headers_are_counted() {
        let mut peer = Host::new(PEER, Config::default(), 3, IsnKey::fixed([3; 16]));
        peer.listen(9000, AppSpec::Discard);
        let dev = Loopback::with_vnet(peer);
        let mut bad = VnetHdr {
            flags: crate::offload::F_NEEDS_CSUM,
            gso_type: crate::offload::GSO_TCPV4,
            gso_size: 0,
            csum_start: 20,
            csum_offset: 16,
            hdr_len: 40,
        }
        .to_bytes()
        .to_vec();
        let mut other = Host::new(PEER, Config::default(), 5, IsnKey::fixed([5; 16]));
        other.connect(
            Instant::ZERO,
            1234,
            SocketAddrV4::new(TG, 80),
            AppSpec::Discard,
        );
        other.step(Instant::ZERO);
        bad.extend_from_slice(&other.outbox[0]);
        dev.noise.borrow_mut().push(bad);
        dev.noise.borrow_mut().push(vec![1, 2, 3]);
        let o = opts(Role::Connect {
            to: SocketAddrV4::new(PEER, 9000),
            app: AppSpec::Source { bytes: 10_000 },
            local_port: Some(50000),
        });
        let r = run_on(&dev, &o).expect("run");
        assert_eq!(r.stopped_by, "connection done", "{r:#?}");
        assert_eq!(r.offload.bad_vnet_headers, 2, "{r:#?}");
        // The noise is delivered last pushed first: the GSO SYN comes last.
        assert_eq!(r.offload.last_vnet_error, Some(VnetError::ZeroGsoSize));
        assert_eq!(
            r.host.rsts_for_closed_ports, 0,
            "the hostile SYN never reached the host"
        );
    }

    /// Packets the device refuses are counted (here the SYN); a stop request
    /// ends the run and closes the live connection.
    #[test]
    fn device_refusals_are_counted_and_stop_aborts() {
        let dev = Loopback::new(Host::new(
            PEER,
            Config::default(),
            3,
            IsnKey::fixed([3; 16]),
        ));
        dev.refuse.set(u64::MAX);
        let o = opts(Role::Connect {
            to: SocketAddrV4::new(PEER, 9000),
            app: AppSpec::Discard,
            local_port: None,
        });
        let stop = o.stop.clone();
        std::thread::scope(|sc| {
            sc.spawn(|| {
                std::thread::sleep(StdDuration::from_millis(100));
                stop.store(true, Ordering::Relaxed);
            });
            let r = run_on(&dev, &o).expect("run");
            assert_eq!(r.stopped_by, "stop requested");
            assert_eq!(r.host.packets_out, 0);
            assert!(r.device_drops >= 1, "{r:#?}");
            assert_eq!(r.conns[0].state, State::Closed);
        });
    }

    /// The exit summary shows every counter the driver collects.
    #[test]
    fn summary_shows_every_host_counter() {
        let r = RunReport {
            conns: Vec::new(),
            host: HostCounters {
                packets_in: 11,
                packets_out: 12,
                not_ipv4_tcp: 13,
                bad_packets: 14,
                bad_checksums: 15,
                not_for_us: 16,
                rsts_for_closed_ports: 17,
                connections: 18,
                invalid_for_connections: 20,
                martian_sources: 21,
                syn_cookies_sent: 22,
                syn_cookies_accepted: 23,
                syn_cookies_rejected: 24,
                refused_for_memory: 40,
                memory_aborts: 41,
                memory_peak: 42,
                syns_dropped_backlog_full: 43,
            },
            closed: ClosedSummary {
                connections: 1030,
                errors: 25,
                bytes_in: 26,
                bytes_out: 27,
                bytes_lost_to_reset: 28,
                reports_dropped: 30,
            },
            explain: None,
            elapsed: StdDuration::from_millis(1500),
            device_drops: 19,
            offload: OffloadCounters {
                super_packets_in: 31,
                segments_in_super_packets: 32,
                partial_checksums_in: 33,
                super_packets_out: 34,
                segments_in_super_packets_out: 35,
                bad_vnet_headers: 36,
                last_vnet_error: Some(VnetError::ZeroGsoSize),
                rejected_by_device: 37,
                reads: 38,
                writes: 39,
            },
            stopped_by: "stop requested",
        };
        let s = summary(&r);
        for want in [
            "1.500 s, stop requested",
            "18 connection(s) opened",
            "17 RST(s) for closed ports",
            "11 in, 12 out, 19 refused by the device",
            "38 reads, 39 writes; offloads: 31 super-packets in (32 segments), 34 out (35 segments), 33 partial checksums in, 36 bad virtio-net headers (last: GSO packet with gso_size 0), 37 frames refused by the device",
            "14 bad (15 bad checksums, 20 malformed for a connection: its invalid_segments), 16 not for us, 13 not IPv4/TCP",
            "22 SYN cookie(s) sent, 23 accepted, 24 rejected; 21 from multicast/broadcast/loopback sources dropped",
            "43 SYN(s) dropped: the backlog was full and syn_cookies is off",
            "memory budget: 40 new connection(s) refused, 41 aborted (longest without progress first); buffers peaked at 42 bytes",
            "1030 connection(s) ended (25 with an error, 26 B in, 27 B out, 28 B lost to resets in SYN-RECEIVED); the last 1000 are listed",
        ] {
            assert!(s.contains(want), "{want:?} missing from\n{s}");
        }
    }
}
