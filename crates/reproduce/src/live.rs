//! `reproduce --live`: the patterns that need no link shaping (Doupnik's web
//! test, Davids' traces, Cheshire's blocks) run on this machine's own kernel,
//! both ends, over a veth pair in namespaces made here; tinygram runs the
//! row's host over a TUN device against the kernel; and the simulated
//! `linux` stack runs the same patterns, to be checked against the kernel.
//!
//! The kernel's programs are threads of this process that entered a network
//! namespace (setns) and use std::net sockets; packet counts come from an
//! AF_PACKET capture on the interface, rates from the programs' own clocks.

use super::{
    run_jobs, scenario, Column, Done, Job, LiveCell, LiveColumn, Row, Section, Table, Val,
    EXPERIMENTS,
};
use std::fs::File;
use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, SocketAddrV4, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, FromRawFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use tinygram_net::app::StreamGen;
use tinygram_net::netns::{in_netns, join, Netns};
use tinygram_net::{AppSpec, DeviceConfig, Role, RunOptions, RunReport};
use tinygram_proto::Config;

/// One tolerance for every comparison of the simulated `linux` stack with the
/// kernel: they agree when the simulated value is within 25 % of the kernel's.
pub const TOLERANCE: f64 = 0.25;

/// The kernel's client and server on the veth pair.
const V_CLIENT: Ipv4Addr = Ipv4Addr::new(10, 9, 0, 1);
const V_SERVER: Ipv4Addr = Ipv4Addr::new(10, 9, 0, 2);
/// tinygram and the kernel on the TUN device.
const T_TG: Ipv4Addr = Ipv4Addr::new(10, 7, 0, 2);
const T_KERNEL: Ipv4Addr = Ipv4Addr::new(10, 7, 0, 1);
const PORT: u16 = 8080;
/// Every blocking socket call gives up after this (a peer that died).
const IO_LIMIT: Duration = Duration::from_secs(20);

pub use crate::{kernel_release, live_column_name as column_name};

/// Why the live runs cannot happen here, if they cannot.
pub fn unavailable() -> Option<String> {
    tinygram_net::netns::unavailable()
}

// ----- namespaces, veth, TUN -------------------------------------------------

/// A namespace of crates/net's (deleted on drop), errors as text.
fn netns(tag: &str) -> Result<Netns, String> {
    Netns::new(tag).map_err(|e| e.to_string())
}

/// A thread in namespace `ns` whose closure returns a text error.
type NsThread<T> = JoinHandle<io::Result<Result<T, String>>>;

/// Two namespaces joined by a veth pair, MTU 1500: the kernel's client on
/// `tgv0` (10.9.0.1), its server on `tgv1` (10.9.0.2).
struct Veth {
    client: Netns,
    server: Netns,
}

impl Veth {
    /// `timestamps: false` turns RFC 7323 timestamps off in both namespaces
    /// (net.ipv4.tcp_timestamps is per namespace), for a 1460-byte MSS.
    fn new(timestamps: bool) -> Result<Veth, String> {
        let client = netns("vc")?;
        let server = netns("vs")?;
        let e = |e: io::Error| e.to_string();
        client.add_veth("tgv0", &server, "tgv1", 1500).map_err(e)?;
        client.addr_up("tgv0", "10.9.0.1/24", 1500).map_err(e)?;
        server.addr_up("tgv1", "10.9.0.2/24", 1500).map_err(e)?;
        if !timestamps {
            client.sysctl("net.ipv4.tcp_timestamps=0").map_err(e)?;
            server.sysctl("net.ipv4.tcp_timestamps=0").map_err(e)?;
        }
        Ok(Veth { client, server })
    }
}

// ----- kernel sockets -----------------------------------------------------------

fn os_err(what: &str) -> String {
    format!("{what}: {}", io::Error::last_os_error())
}

fn setsockopt_int(fd: RawFd, level: i32, name: i32, v: i32) -> Result<(), String> {
    // SAFETY: fd is an open socket; the value is a c_int of the given size.
    let r = unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            (&v as *const i32).cast(),
            std::mem::size_of::<i32>() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(os_err("setsockopt"))
    }
}

/// A connected socket; `rcvbuf` sets SO_RCVBUF before connect (the kernel
/// doubles it for bookkeeping and stops autotuning), so the window is bounded
/// from the SYN on.
fn connect(to: SocketAddrV4, rcvbuf: Option<usize>, nodelay: bool) -> Result<TcpStream, String> {
    // SAFETY: plain socket creation.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(os_err("socket"));
    }
    // SAFETY: fd is a fresh socket we own; the stream closes it.
    let stream = unsafe { TcpStream::from_raw_fd(fd) };
    if let Some(b) = rcvbuf {
        setsockopt_int(fd, libc::SOL_SOCKET, libc::SO_RCVBUF, b as i32)?;
    }
    let sa = libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: to.port().to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from(*to.ip()).to_be(),
        },
        sin_zero: [0; 8],
    };
    // SAFETY: sa is a valid sockaddr_in of the length given.
    let r = unsafe {
        libc::connect(
            fd,
            (&sa as *const libc::sockaddr_in).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        )
    };
    if r != 0 {
        return Err(os_err(&format!("connect to {to}")));
    }
    stream.set_nodelay(nodelay).map_err(|e| e.to_string())?;
    stream
        .set_read_timeout(Some(IO_LIMIT))
        .map_err(|e| e.to_string())?;
    stream
        .set_write_timeout(Some(IO_LIMIT))
        .map_err(|e| e.to_string())?;
    Ok(stream)
}

/// A listener on 0.0.0.0:`PORT` whose accept gives up after [`IO_LIMIT`].
fn listen() -> Result<TcpListener, String> {
    let l = TcpListener::bind(("0.0.0.0", PORT)).map_err(|e| format!("bind :{PORT}: {e}"))?;
    let tv = libc::timeval {
        tv_sec: IO_LIMIT.as_secs() as libc::time_t,
        tv_usec: 0,
    };
    // SAFETY: a valid timeval for SO_RCVTIMEO, which also bounds accept().
    let r = unsafe {
        libc::setsockopt(
            l.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVTIMEO,
            (&tv as *const libc::timeval).cast(),
            std::mem::size_of::<libc::timeval>() as libc::socklen_t,
        )
    };
    if r != 0 {
        return Err(os_err("SO_RCVTIMEO"));
    }
    Ok(l)
}

fn accept(l: &TcpListener, nodelay: bool) -> Result<TcpStream, String> {
    let (s, _) = l.accept().map_err(|e| format!("accept: {e}"))?;
    s.set_nodelay(nodelay).map_err(|e| e.to_string())?;
    s.set_read_timeout(Some(IO_LIMIT))
        .map_err(|e| e.to_string())?;
    s.set_write_timeout(Some(IO_LIMIT))
        .map_err(|e| e.to_string())?;
    Ok(s)
}

/// The few TCP_INFO fields read here (struct tcp_info, include/uapi/linux/tcp.h).
#[derive(Clone, Copy, Debug, Default)]
struct TcpInfo {
    /// Segments sent with payload (tcpi_data_segs_out).
    data_segs_out: u32,
    /// Least RTT seen, microseconds (tcpi_min_rtt).
    min_rtt_us: u32,
}

fn tcp_info(s: &TcpStream) -> TcpInfo {
    let mut buf = [0u8; 232];
    let mut len = buf.len() as libc::socklen_t;
    // SAFETY: buf is writable for len bytes; the kernel writes at most len.
    let r = unsafe {
        libc::getsockopt(
            s.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            buf.as_mut_ptr().cast(),
            &mut len,
        )
    };
    let u32_at = |o: usize| {
        if r == 0 && (len as usize) >= o + 4 {
            u32::from_ne_bytes([buf[o], buf[o + 1], buf[o + 2], buf[o + 3]])
        } else {
            0
        }
    };
    TcpInfo {
        data_segs_out: u32_at(156),
        min_rtt_us: u32_at(148),
    }
}

// ----- capture -------------------------------------------------------------------

/// One IPv4 TCP packet seen on an interface.
#[derive(Clone, Debug)]
struct Pkt {
    at: Instant,
    src: Ipv4Addr,
    seq: u32,
    ack: u32,
    flags: u8,
    payload: u32,
}

/// A captured IPv4 packet read with the engine's wire codec; None if it is
/// not a whole, unfragmented IPv4 TCP packet.
fn parse_ipv4_tcp(at: Instant, p: &[u8]) -> Option<Pkt> {
    use tinygram_proto::wire::{Ipv4Repr, TcpSegment};
    let (ip, tcp) = Ipv4Repr::parse(p).ok()?;
    let seg = TcpSegment::new_checked(&p[tcp]).ok()?;
    Some(Pkt {
        at,
        src: Ipv4Addr::from(ip.src),
        seq: seg.seq_number().0,
        ack: seg.ack_number().0,
        flags: seg.flags().0,
        payload: seg.payload().len() as u32,
    })
}

/// An AF_PACKET capture of IPv4 on one interface (both directions), in the
/// namespace of the thread that started it.
struct Capture {
    stop: Arc<AtomicBool>,
    handle: NsThread<Vec<Pkt>>,
}

impl Capture {
    /// Starts capturing on `iface` in namespace `ns`; returns once the socket is bound.
    fn start(ns: &str, iface: &str) -> Result<Capture, String> {
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, rx) = mpsc::channel();
        let (st, name) = (stop.clone(), iface.to_string());
        let handle = in_netns(ns, move || {
            let proto = (libc::ETH_P_ALL as u16).to_be();
            // SAFETY: plain socket creation.
            let fd = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_DGRAM, i32::from(proto)) };
            if fd < 0 {
                let e = os_err("AF_PACKET socket");
                let _ = tx.send(Err(e.clone()));
                return Err(e);
            }
            // SAFETY: we own fd; File closes it.
            let _own = unsafe { File::from_raw_fd(fd) };
            let cname = std::ffi::CString::new(name.clone()).map_err(|e| e.to_string())?;
            // SAFETY: a valid C string.
            let index = unsafe { libc::if_nametoindex(cname.as_ptr()) };
            // SAFETY: sockaddr_ll is plain data; zeroed is a valid start.
            let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
            sll.sll_family = libc::AF_PACKET as u16;
            sll.sll_protocol = proto;
            sll.sll_ifindex = index as i32;
            // SAFETY: sll is a valid sockaddr_ll of the length given.
            let r = unsafe {
                libc::bind(
                    fd,
                    (&sll as *const libc::sockaddr_ll).cast(),
                    std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
                )
            };
            if index == 0 || r != 0 {
                let e = os_err(&format!("bind a capture to {name}"));
                let _ = tx.send(Err(e.clone()));
                return Err(e);
            }
            let _ = tx.send(Ok(()));
            let mut out = Vec::new();
            let mut buf = vec![0u8; 65_536];
            while !st.load(Ordering::Relaxed) {
                let mut pfd = libc::pollfd {
                    fd,
                    events: libc::POLLIN,
                    revents: 0,
                };
                // SAFETY: one valid pollfd.
                if unsafe { libc::poll(&mut pfd, 1, 20) } <= 0 {
                    continue;
                }
                // SAFETY: buf is writable for its length.
                let n = unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), 0) };
                if n > 0 {
                    if let Some(p) = parse_ipv4_tcp(Instant::now(), &buf[..n as usize]) {
                        out.push(p);
                    }
                }
            }
            Ok(out)
        });
        match rx.recv_timeout(Duration::from_secs(10)) {
            Ok(Ok(())) => Ok(Capture { stop, handle }),
            Ok(Err(e)) => Err(e),
            Err(_) => Err("the capture did not start within 10 s".into()),
        }
    }

    /// Waits a little for the last packets, then stops and returns them.
    fn finish(self) -> Result<Vec<Pkt>, String> {
        std::thread::sleep(Duration::from_millis(60));
        self.stop.store(true, Ordering::Relaxed);
        join(self.handle, "capture")
    }
}

fn after(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}

/// Davids' counts from a capture, read as the simulated traces are read:
/// the client's data packets, the server's packets that acknowledged new
/// client data up to the last byte, and ms from the first data packet to the
/// last. (data, ACKs, ms)
fn davids_counts(pkts: &[Pkt], client: Ipv4Addr) -> (u32, u32, f64) {
    let data: Vec<&Pkt> = pkts
        .iter()
        .filter(|p| p.src == client && p.payload > 0)
        .collect();
    let (Some(first), Some(last)) = (data.first(), data.last()) else {
        return (0, 0, 0.0);
    };
    let end = data
        .iter()
        .map(|p| p.seq.wrapping_add(p.payload))
        .fold(first.seq, |m, x| if after(x, m) { x } else { m });
    let mut acks = 0;
    let mut last_ack: Option<u32> = None;
    for p in pkts
        .iter()
        .filter(|p| p.src != client && p.flags & 0x10 != 0)
    {
        let syn = p.flags & 0x02 != 0;
        if !syn && p.at >= first.at && last_ack.is_none_or(|a| after(p.ack, a)) {
            acks += 1;
            last_ack = Some(p.ack);
            if !after(end, p.ack) {
                break;
            }
        } else {
            last_ack = Some(p.ack);
        }
    }
    let span = last.at.duration_since(first.at).as_secs_f64() * 1e3;
    (data.len() as u32, acks, span)
}

// ----- the kernel's programs -------------------------------------------------------

/// The server's first header write: 40 bytes, as the simulated server's.
fn web_header1() -> Vec<u8> {
    let h = b"HTTP/1.1 200 OK\r\nServer: tinygram-live\r\n".to_vec();
    debug_assert_eq!(h.len(), 40);
    h
}

/// The second header write, padded to 150 bytes, as the simulated server's.
fn web_header2(body: usize) -> Vec<u8> {
    let head = format!(
        "Content-Type: application/octet-stream\r\nContent-Length: {body}\r\nConnection: keep-alive\r\nX-Pad: "
    );
    let pad = 150usize.saturating_sub(head.len() + 4);
    format!("{head}{}\r\n\r\n", "x".repeat(pad)).into_bytes()
}

/// The client's GET, padded to the simulated request's 120 bytes.
fn web_get() -> Vec<u8> {
    let head = "GET /file HTTP/1.1\r\nHost: 10.9.0.2\r\nUser-Agent: tinygram-live\r\nX-Pad: ";
    format!("{head}{}\r\n\r\n", "y".repeat(120 - head.len() - 4)).into_bytes()
}

/// The body both ends use: the start of tinygram's test stream in 4 KB writes,
/// as the TUN `http` app sends it.
fn web_body(n: usize) -> Vec<Vec<u8>> {
    let mut g = StreamGen::default();
    let mut out = Vec::new();
    let mut left = n;
    while left > 0 {
        let k = left.min(tinygram_net::app::HTTP_BODY_WRITE);
        out.push(g.next_block(k).to_vec());
        left -= k;
    }
    out
}

fn find_crlf2(b: &[u8]) -> Option<usize> {
    b.windows(4).position(|w| w == b"\r\n\r\n")
}

/// Doupnik's server on the kernel: per GET, two short writes then the file in
/// 4 KB writes. Returns data segments sent and responses.
fn web_server(l: TcpListener, nodelay: bool, file: usize) -> Result<(u32, u64), String> {
    let mut s = accept(&l, nodelay)?;
    let (h1, h2, body) = (web_header1(), web_header2(file), web_body(file));
    let mut input = Vec::new();
    let mut buf = vec![0u8; 65_536];
    let mut responses = 0;
    loop {
        let n = match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::ConnectionReset => break,
            Err(e) => return Err(format!("server read: {e}")),
        };
        input.extend_from_slice(&buf[..n]);
        while let Some(end) = find_crlf2(&input) {
            input.drain(..end + 4);
            for w in std::iter::once(&h1).chain([&h2]).chain(body.iter()) {
                s.write_all(w).map_err(|e| format!("server write: {e}"))?;
            }
            responses += 1;
        }
    }
    Ok((tcp_info(&s).data_segs_out, responses))
}

/// What the web client measured.
#[derive(Clone, Copy, Debug, Default)]
struct WebClient {
    requests: u64,
    elapsed_s: f64,
    min_rtt_us: u32,
}

/// Doupnik's client: one GET at a time on one connection, for `dur`; every
/// response's length and body are checked against what the server sends.
fn web_client(
    to: SocketAddrV4,
    rwnd: usize,
    file: usize,
    dur: Duration,
) -> Result<WebClient, String> {
    let mut s = connect(to, Some(rwnd), false)?;
    let get = web_get();
    let want: Vec<u8> = web_body(file).concat();
    let mut buf = vec![0u8; 65_536];
    let mut have: Vec<u8> = Vec::new();
    let start = Instant::now();
    let mut requests = 0;
    while start.elapsed() < dur {
        s.write_all(&get)
            .map_err(|e| format!("client write: {e}"))?;
        // Headers, then Content-Length bytes of body.
        let body_start = loop {
            if let Some(e) = find_crlf2(&have) {
                break e + 4;
            }
            let n = s.read(&mut buf).map_err(|e| format!("client read: {e}"))?;
            if n == 0 {
                return Err("the server closed mid-response".into());
            }
            have.extend_from_slice(&buf[..n]);
        };
        let head = String::from_utf8_lossy(&have[..body_start]).to_ascii_lowercase();
        let len: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .and_then(|v| v.trim().parse().ok())
            .ok_or_else(|| format!("a response without Content-Length: {head:?}"))?;
        while have.len() < body_start + len {
            let n = s.read(&mut buf).map_err(|e| format!("client read: {e}"))?;
            if n == 0 {
                return Err("the server closed mid-body".into());
            }
            have.extend_from_slice(&buf[..n]);
        }
        if len != file || have[body_start..body_start + len] != want[..] {
            return Err(format!(
                "response {} has a wrong body ({len} bytes, expected {file} of the test stream)",
                requests + 1
            ));
        }
        have.drain(..body_start + len);
        requests += 1;
    }
    let elapsed_s = start.elapsed().as_secs_f64();
    let min_rtt_us = tcp_info(&s).min_rtt_us;
    drop(s);
    Ok(WebClient {
        requests,
        elapsed_s,
        min_rtt_us,
    })
}

/// Davids' client: 50 writes of 10 bytes, `gap` apart, then wait for the
/// server's 1-byte answer.
fn davids_client(to: SocketAddrV4, nodelay: bool, gap: Duration) -> Result<(), String> {
    let mut s = connect(to, None, nodelay)?;
    for i in 0..50u8 {
        if i > 0 && !gap.is_zero() {
            std::thread::sleep(gap);
        }
        s.write_all(&[b'a' + i % 26; 10])
            .map_err(|e| format!("client write: {e}"))?;
    }
    let mut one = [0u8; 1];
    s.read_exact(&mut one)
        .map_err(|e| format!("client read of the answer: {e}"))?;
    Ok(())
}

/// Cheshire's (and Davids') server: one byte back after every `block` bytes.
/// Returns the bytes received.
fn block_server(l: TcpListener, block: u64) -> Result<u64, String> {
    let mut s = accept(&l, false)?;
    let mut buf = vec![0u8; 1 << 18];
    let (mut total, mut answered) = (0u64, 0u64);
    loop {
        let n = match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n as u64,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::ConnectionReset | io::ErrorKind::ConnectionAborted
                ) =>
            {
                break
            }
            Err(e) => return Err(format!("server read: {e}")),
        };
        total += n;
        while total / block > answered {
            answered += 1;
            if s.write_all(b"!").is_err() {
                return Ok(total);
            }
        }
    }
    Ok(total)
}

/// Cheshire's client: write a block, wait for the 1-byte answer (with
/// `outstanding` blocks in flight), for `dur`. Returns (blocks/s, blocks).
fn block_client(
    to: SocketAddrV4,
    block: usize,
    nodelay: bool,
    outstanding: u32,
    dur: Duration,
) -> Result<(f64, u64, u32), String> {
    let mut s = connect(to, None, nodelay)?;
    let data = vec![0x5au8; block];
    let start = Instant::now();
    let mut in_flight = 0;
    for _ in 0..outstanding {
        s.write_all(&data)
            .map_err(|e| format!("client write: {e}"))?;
        in_flight += 1;
    }
    let mut done = 0u64;
    let mut one = [0u8; 1];
    while in_flight > 0 {
        s.read_exact(&mut one)
            .map_err(|e| format!("client read: {e}"))?;
        in_flight -= 1;
        done += 1;
        if start.elapsed() < dur {
            s.write_all(&data)
                .map_err(|e| format!("client write: {e}"))?;
            in_flight += 1;
        }
    }
    let segs = tcp_info(&s).data_segs_out;
    Ok((done as f64 / start.elapsed().as_secs_f64(), done, segs))
}

// ----- one pattern on the kernel, both ends -----------------------------------------

/// Starts a kernel server thread in `ns` (listening before this returns).
fn serve_in<T: Send + 'static>(
    ns: &str,
    f: impl FnOnce(TcpListener) -> Result<T, String> + Send + 'static,
) -> Result<NsThread<T>, String> {
    let (tx, rx) = mpsc::channel();
    let h = in_netns(ns, move || {
        let l = listen();
        let _ = tx.send(l.as_ref().map(|_| ()).map_err(Clone::clone));
        f(l?)
    });
    match rx.recv_timeout(Duration::from_secs(10)) {
        Ok(Ok(())) => Ok(h),
        Ok(Err(e)) => Err(e),
        Err(_) => Err("the server did not start within 10 s".into()),
    }
}

fn kernel_web(
    rwnd: usize,
    nodelay: bool,
    file: usize,
    dur: Duration,
) -> Result<(f64, f64, u32), String> {
    let v = Veth::new(true)?;
    let srv = serve_in(v.server.name(), move |l| web_server(l, nodelay, file))?;
    let to = SocketAddrV4::new(V_SERVER, PORT);
    let c = join(
        in_netns(v.client.name(), move || web_client(to, rwnd, file, dur)),
        "client",
    )?;
    let (segs, responses) = join(srv, "server")?;
    if c.requests == 0 {
        return Err("no request completed".into());
    }
    Ok((
        c.requests as f64 / c.elapsed_s,
        f64::from(segs) / responses.max(1) as f64,
        c.min_rtt_us,
    ))
}

fn kernel_davids(nodelay: bool, gap: Duration) -> Result<(u32, u32, f64), String> {
    let v = Veth::new(true)?;
    let cap = Capture::start(v.client.name(), "tgv0")?;
    let srv = serve_in(v.server.name(), |l| block_server(l, 500))?;
    let to = SocketAddrV4::new(V_SERVER, PORT);
    join(
        in_netns(v.client.name(), move || davids_client(to, nodelay, gap)),
        "client",
    )?;
    join(srv, "server")?;
    let pkts = cap.finish()?;
    Ok(davids_counts(&pkts, V_CLIENT))
}

fn kernel_blocks(
    timestamps: bool,
    block: usize,
    nodelay: bool,
    outstanding: u32,
    dur: Duration,
) -> Result<(f64, f64), String> {
    let v = Veth::new(timestamps)?;
    let srv = serve_in(v.server.name(), move |l| block_server(l, block as u64))?;
    let to = SocketAddrV4::new(V_SERVER, PORT);
    let (rate, blocks, segs) = join(
        in_netns(v.client.name(), move || {
            block_client(to, block, nodelay, outstanding, dur)
        }),
        "client",
    )?;
    let got = join(srv, "server")?;
    if got != blocks * block as u64 {
        return Err(format!(
            "the server got {got} bytes for {blocks} blocks of {block}"
        ));
    }
    Ok((rate, f64::from(segs) / blocks.max(1) as f64))
}

/// The veth pair's round trip for a 1-byte exchange, syscalls and wakeups
/// included: the median of 500, in microseconds.
fn veth_round_trip_us() -> Result<f64, String> {
    let v = Veth::new(true)?;
    let srv = serve_in(v.server.name(), |l| block_server(l, 1))?;
    let to = SocketAddrV4::new(V_SERVER, PORT);
    let mut rtts = join(
        in_netns(v.client.name(), move || {
            let mut s = connect(to, None, true)?;
            let mut one = [0u8; 1];
            let mut v = Vec::new();
            for _ in 0..500 {
                let t = Instant::now();
                s.write_all(b"?").map_err(|e| e.to_string())?;
                s.read_exact(&mut one).map_err(|e| e.to_string())?;
                v.push(t.elapsed().as_secs_f64() * 1e6);
            }
            Ok(v)
        }),
        "client",
    )?;
    join(srv, "server")?;
    rtts.sort_by(f64::total_cmp);
    Ok(rtts[rtts.len() / 2])
}

// ----- tinygram over TUN against the kernel ----------------------------------------------

/// A namespace with tinygram's TUN device `tg0` (tinygram 10.7.0.2, kernel 10.7.0.1).
struct TunRun {
    ns: Netns,
}

impl TunRun {
    fn new() -> Result<TunRun, String> {
        Ok(TunRun { ns: netns("t")? })
    }

    /// Starts tinygram with `role` for at most `limit`; returns once the device is open.
    fn start(
        &self,
        config: Config,
        role: Role,
        limit: Duration,
    ) -> Result<NsThread<RunReport>, String> {
        config.validate().map_err(|e| e.to_string())?;
        let opts = RunOptions {
            device: DeviceConfig {
                name: "tg0".into(),
                addr: T_TG,
                prefix: 24,
                kernel_addr: T_KERNEL,
                mtu: 1500,
            },
            config,
            role,
            pcap: None,
            duration: Some(limit),
            status: false,
            stop: Arc::new(AtomicBool::new(false)),
            backlog: tinygram_net::host::DEFAULT_BACKLOG,
        };
        let (tx, rx) = mpsc::channel();
        let h = in_netns(self.ns.name(), move || {
            let tun = tinygram_net::Tun::open(&opts.device).map_err(|e| e.to_string());
            let _ = tx.send(tun.as_ref().map(|_| ()).map_err(Clone::clone));
            tinygram_net::run_on(&tun?, &opts).map_err(|e| e.to_string())
        });
        match rx.recv_timeout(Duration::from_secs(10)) {
            Ok(Ok(())) => Ok(h),
            Ok(Err(e)) => Err(format!("cannot open the TUN device: {e}")),
            Err(_) => Err("the TUN device did not open within 10 s".into()),
        }
    }
}

fn one_conn(r: &RunReport) -> Result<&tinygram_net::ConnReport, String> {
    match r.conns.as_slice() {
        [c] => Ok(c),
        cs => Err(format!("tinygram ran {} connections, expected 1", cs.len())),
    }
}

/// tinygram serves Doupnik's web pattern (`http` app) to the kernel's client.
fn tun_web(cfg: Config, rwnd: usize, file: usize, dur: Duration) -> Result<f64, String> {
    let t = TunRun::new()?;
    let tg = t.start(
        cfg,
        Role::Serve {
            port: PORT,
            app: AppSpec::Http { body: file },
            conns: Some(1),
        },
        dur + IO_LIMIT,
    )?;
    let to = SocketAddrV4::new(T_TG, PORT);
    let c = join(
        in_netns(t.ns.name(), move || web_client(to, rwnd, file, dur)),
        "client",
    )?;
    let r = join(tg, "tinygram")?;
    let conn = one_conn(&r)?;
    if conn.app.transactions < c.requests {
        return Err(format!(
            "tinygram answered {} requests, the kernel completed {}",
            conn.app.transactions, c.requests
        ));
    }
    if c.requests == 0 {
        return Err("no request completed".into());
    }
    Ok(c.requests as f64 / c.elapsed_s)
}

/// The kernel's client sends Davids' 50 writes to tinygram's `ack-after:500`.
fn tun_davids(cfg: Config, nodelay: bool, gap: Duration) -> Result<(u32, u32, f64), String> {
    let t = TunRun::new()?;
    let tg = t.start(
        cfg,
        Role::Serve {
            port: PORT,
            app: AppSpec::AckAfter { n: 500 },
            conns: Some(1),
        },
        IO_LIMIT,
    )?;
    let cap = Capture::start(t.ns.name(), "tg0")?;
    let to = SocketAddrV4::new(T_TG, PORT);
    join(
        in_netns(t.ns.name(), move || davids_client(to, nodelay, gap)),
        "client",
    )?;
    let r = join(tg, "tinygram")?;
    let pkts = cap.finish()?;
    let c = one_conn(&r)?;
    if c.app.bytes_in != 500 || c.app.bytes_out != 1 {
        return Err(format!(
            "tinygram read {} bytes and wrote {} (expected 500 and 1)",
            c.app.bytes_in, c.app.bytes_out
        ));
    }
    Ok(davids_counts(&pkts, T_KERNEL))
}

/// tinygram's `request` client sends Cheshire's blocks to the kernel's server.
fn tun_blocks(cfg: Config, block: usize, dur: Duration) -> Result<f64, String> {
    let t = TunRun::new()?;
    let srv = serve_in(t.ns.name(), move |l| block_server(l, block as u64))?;
    let tg = t.start(
        cfg,
        Role::Connect {
            to: SocketAddrV4::new(T_KERNEL, PORT),
            app: AppSpec::Request {
                request: block,
                reply: 1,
                count: 1_000_000,
            },
            local_port: None,
        },
        dur,
    )?;
    let r = join(tg, "tinygram")?;
    let got = join(srv, "server")?;
    let c = one_conn(&r)?;
    let (n, out) = (c.app.transactions, c.app.bytes_out);
    if n == 0 {
        return Err("no block completed".into());
    }
    if got < n * block as u64 || got > out {
        return Err(format!(
            "the kernel got {got} bytes; tinygram wrote {out} and saw {n} blocks answered"
        ));
    }
    Ok(c.app.transactions_per_s())
}

// ----- the simulated `linux` stack ------------------------------------------------------------

/// The simulated `linux` stack for one host: the `linux` profile, with the
/// keys the experiments' base files and jobs set explicitly put back to the
/// profile's values (or, where the profile leaves a key alone, the engine's
/// defaults, as drill's `--stack linux` does), and TCP_NODELAY if asked.
pub fn simulated_linux(host: &str, nodelay: bool) -> Vec<String> {
    let send = if nodelay { "nodelay" } else { "minshall" };
    [
        ("profile", "\"linux\"".to_string()),
        ("send_policy", format!("\"{send}\"")),
        ("ack_policy", "\"quickack\"".into()),
        ("mss", "1460".into()),
        ("rto_min", "\"200ms\"".into()),
        ("rcv_buf", "65536".into()),
        ("delack", "\"200ms\"".into()),
        ("delack_count", "\"any\"".into()),
        ("delack_segments", "2".into()),
        ("delack_tick", "\"none\"".into()),
    ]
    .into_iter()
    .map(|(k, v)| format!("{host}.{k}={v}"))
    .collect()
}

/// Each simulated linux run stops after 300 transactions or 5 simulated
/// seconds, whichever comes first: enough for a steady rate, and for a
/// stalled one (a few per second) to show.
const SIM_BOUND: [&str; 2] = ["workload.requests=300", "duration=\"5s\""];

/// The simulated veth: no serialization, and a one-way delay of half the
/// kernel's measured 1-byte round trip.
fn veth_link(rtt_us: f64) -> Vec<String> {
    vec![
        "link.rate=\"unlimited\"".into(),
        format!("link.delay=\"{}us\"", (rtt_us / 2.0).round().max(1.0)),
    ]
}

fn base(name: &str) -> &'static str {
    EXPERIMENTS
        .iter()
        .find(|e| e.name == name)
        .map(|e| e.base)
        .unwrap_or("")
}

fn sim_job(exp: &str, key: Vec<String>, overrides: Vec<String>, capture: bool) -> Job {
    Job {
        key,
        scenario: scenario(base(exp), &format!("scenarios/{exp}.toml"), &overrides),
        capture,
    }
}

/// The row's host configuration, as `reproduce` simulates it.
fn row_config(exp: &str, quick: bool, key: &[&str], client: bool) -> Option<Config> {
    let e = EXPERIMENTS.iter().find(|e| e.name == exp)?;
    let job = (e.jobs)(quick, &crate::At::default())
        .into_iter()
        .find(|j| j.key.iter().map(String::as_str).eq(key.iter().copied()))?;
    Some(if client {
        job.scenario.client.tcp
    } else {
        job.scenario.server.tcp
    })
}

fn agree(kernel: f64, sim: f64) -> bool {
    kernel > 0.0 && ((sim - kernel) / kernel).abs() <= TOLERANCE
}

/// How the simulated linux stack is checked against the kernel, for the notes.
fn how_checked(rtt: f64) -> String {
    format!(
        "The simulated linux stack (drill's `--stack linux` settings at both ends) runs the \
         same patterns on a link with no serialization and a one-way delay of half the veth's \
         measured 1-byte round trip ({rtt:.0} us). It is checked on what it models: packet and \
         segment counts agree when within {:.0} % of the kernel's, and a run that stalls on a \
         timer (under {STALLED:.0} transactions/s) must stall on both. Rates are shown, not \
         checked: on veth the kernel's rate is bound by host CPU time (system calls, copies, \
         wakeups on two shared cores), which the simulator does not model.",
        TOLERANCE * 100.0
    )
}

/// Under this many transactions per second a run is stalled on a timer (a
/// delayed ACK, a retransmission), not bound by host time.
const STALLED: f64 = 50.0;

fn stalled(rate: f64) -> bool {
    rate < STALLED
}

/// Checks what the simulator models, and rates only for a stall: on veth the
/// kernel's rate is bound by host CPU time (system calls, copies, wakeups on
/// two shared cores), which the simulator does not model. `k` and `s` are
/// (rate, segments); the sentence, if they disagree.
fn compare(what: &str, k: (f64, f64), s: (f64, f64), rate: &str, segs: &str) -> Option<String> {
    let mut v = Vec::new();
    if stalled(k.0) != stalled(s.0) {
        v.push(format!(
            "{} stalls (kernel {:.1} {rate}, simulated linux {:.1})",
            if stalled(s.0) {
                "only the simulated stack"
            } else {
                "only the kernel"
            },
            k.0,
            s.0
        ));
    }
    if !agree(k.1, s.1) {
        v.push(format!(
            "{segs}: kernel {:.1}, simulated linux {:.1} ({:+.0} %)",
            k.1,
            s.1,
            (s.1 - k.1) / k.1.max(1e-9) * 100.0
        ));
    }
    (!v.is_empty()).then(|| format!("{what}: {}.", v.join("; ")))
}

fn val(x: Option<f64>) -> Val {
    Val {
        published: None,
        measured: x,
        ..Val::default()
    }
}

fn cell(r: &Result<f64, String>) -> LiveCell {
    match r {
        Ok(x) => LiveCell::Value(*x),
        Err(e) => LiveCell::Absent(format!("failed: {e}")),
    }
}

/// Progress on stderr: what ran, its result, and the time so far.
struct Progress {
    start: Instant,
    exp: &'static str,
    n: usize,
    total: usize,
}

impl Progress {
    fn step(&mut self, what: &str, result: &str) {
        self.n += 1;
        eprintln!(
            "live {}: {}/{} {what}: {result} ({:.0} s)",
            self.exp,
            self.n,
            self.total,
            self.start.elapsed().as_secs_f64()
        );
    }
}

fn show<T: std::fmt::Debug>(r: &Result<T, String>) -> String {
    match r {
        Ok(x) => format!("{x:.1?}"),
        Err(e) if e.starts_with("no Linux") => format!("n/a: {e}"),
        Err(e) => format!("failed: {e}"),
    }
}

// ----- per experiment ---------------------------------------------------------------------

/// Runs every live pattern for the sections given, adding the live columns,
/// the comparison tables and the disagreements. Returns the wall time taken.
pub fn run(sections: &mut [Section], quick: bool, threads: usize) -> Result<Duration, String> {
    let start = Instant::now();
    let rtt = veth_round_trip_us()?;
    eprintln!("live: veth 1-byte round trip {rtt:.0} us (median of 500)");
    let dur = Duration::from_millis(if quick { 500 } else { 2000 });
    for sec in sections.iter_mut() {
        match sec.name {
            "doupnik-web" => live_doupnik(sec, quick, threads, dur, rtt, start),
            "davids-traces" => live_davids(sec, quick, threads, rtt, start),
            "cheshire-cliff" => live_cheshire(sec, quick, threads, dur, rtt, start),
            "westfield-ftp" => no_equivalent(
                sec,
                "Westfield's Tops-20 receiver advertises a fixed 1456-byte window and announces \
                 window updates only with its 250 ms delayed ACK; Linux has a setting for \
                 neither (SO_RCVBUF sizes a buffer the kernel doubles and scales, and a read that \
                 opens the window is announced at once), and the 10 Mb/s Ethernet would need \
                 shaping, for which there is no netem here",
            ),
            "fox-satellite" => no_equivalent(
                sec,
                "NAK and Big Window options have no Linux equivalent, and a 1.544 Mb/s satellite \
                 channel with a 580 ms round trip and bit errors needs netem, which this machine \
                 does not have",
            ),
            _ => {}
        }
    }
    Ok(start.elapsed())
}

/// `--live`: runs the live patterns, or says on stderr and in the report why
/// the column is absent; the rest of the report stands either way.
pub fn run_or_explain(sections: &mut [Section], quick: bool, threads: usize) {
    let why = match unavailable() {
        Some(why) => why,
        None => match run(sections, quick, threads) {
            Ok(t) => {
                eprintln!("live: done in {:.0} s", t.as_secs_f64());
                return;
            }
            Err(e) => e,
        },
    };
    eprintln!("live: no \"{}\" column: {why}", column_name());
    absent(sections, &why);
}

/// Marks a section whose patterns cannot run live, saying why.
fn no_equivalent(sec: &mut Section, why: &str) {
    let name = column_name();
    for (i, t) in sec.tables.iter().enumerate() {
        sec.live.columns.push(LiveColumn {
            table: i,
            name: name.clone(),
            unit: String::new(),
            digits: 0,
            cells: t
                .rows
                .iter()
                .map(|r| LiveCell::Absent(no_equivalent_cell(sec.name, &r.labels)))
                .collect(),
        });
    }
    sec.live.note = Some(format!("Not run live: {why}."));
}

/// What a row of Westfield's or RFC 1106's table lacks on Linux or here.
fn no_equivalent_cell(exp: &str, labels: &[String]) -> String {
    let l = labels.join(" ").to_ascii_lowercase();
    match exp {
        "fox-satellite" if l.contains("nak") => "no Linux equivalent (NAK)".into(),
        "fox-satellite" if l.contains("big window") => "no Linux equivalent (Big Window)".into(),
        "fox-satellite" => "needs netem (a satellite delay)".into(),
        _ if l.contains("immediate window updates") => {
            "no Linux equivalent (a 1456-byte window)".into()
        }
        _ => "no Linux equivalent (a 1456-byte window, Tops-20 ACKs)".into(),
    }
}

/// Marks every section as having no live column, saying why.
pub fn absent(sections: &mut [Section], why: &str) {
    for sec in sections.iter_mut() {
        sec.live.note = Some(format!(
            "No \"{}\" column: `--live` could not run ({why}).",
            column_name()
        ));
    }
}

const WEB_FILES: [(&str, usize); 2] = [("2.2 KB", 2250), ("33 KB", 33_000)];

fn rwnd_bytes(r: &str) -> usize {
    r.trim_end_matches("KiB").parse::<usize>().unwrap_or(16) * 1024
}

fn live_doupnik(
    sec: &mut Section,
    quick: bool,
    threads: usize,
    dur: Duration,
    rtt: f64,
    start: Instant,
) {
    const EXP: &str = "doupnik-web";
    let rwnds: Vec<&str> = if quick {
        vec!["16KiB", "4KiB"]
    } else {
        vec!["32KiB", "16KiB", "4KiB"]
    };
    let pols = [("Nagle on", false), ("Nagle off", true)];
    let Some(t) = sec.tables.first() else { return };
    // TUN runs: one per (client, rwnd, server, policy) row of the table, and file.
    let mut tun_keys: Vec<(String, String, String, String)> = Vec::new();
    for r in &t.rows {
        let k = (
            r.labels[0].clone(),
            r.labels[1].clone(),
            r.labels[2].clone(),
            r.labels[3].clone(),
        );
        if !tun_keys.contains(&k) {
            tun_keys.push(k);
        }
    }
    let mut p = Progress {
        start,
        exp: EXP,
        n: 0,
        total: rwnds.len() * pols.len() * WEB_FILES.len() + tun_keys.len() * WEB_FILES.len(),
    };
    // The kernel at both ends, and the simulated linux stack, per (rwnd, policy, file).
    let mut kernel = Vec::new();
    let mut jobs = Vec::new();
    for &rw in &rwnds {
        for (pol, nodelay) in pols {
            for (file, bytes) in WEB_FILES {
                let r = kernel_web(rwnd_bytes(rw), nodelay, bytes, dur);
                p.step(
                    &format!("kernel, client rwnd {rw}, server {pol}, {file}"),
                    &show(&r),
                );
                kernel.push(((rw, pol, file), r));
                let response = format!(
                    "workload.response=[40, 150, {}]",
                    web_body(bytes)
                        .iter()
                        .map(|b| b.len().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                );
                let mut ov = simulated_linux("client", false);
                ov.extend(simulated_linux("server", nodelay));
                ov.extend(veth_link(rtt));
                ov.push(format!("client.rcv_buf=\"{rw}\""));
                ov.push(response);
                ov.extend(SIM_BOUND.map(String::from));
                jobs.push(sim_job(
                    EXP,
                    vec![rw.into(), pol.into(), file.into()],
                    ov,
                    false,
                ));
            }
        }
    }
    let sim = run_jobs(jobs, threads, &|_, _| {});
    let mut tun = Vec::new();
    for (client, rw, server, pol) in &tun_keys {
        for (file, bytes) in WEB_FILES {
            let r = match row_config(EXP, quick, &[client, rw, server, pol, file], false) {
                Some(cfg) => tun_web(cfg, rwnd_bytes(rw), bytes, dur),
                None => Err("no such simulated row".into()),
            };
            p.step(
                &format!(
                    "tinygram {server} server {pol} over TUN, kernel client rwnd {rw}, {file}"
                ),
                &show(&r),
            );
            tun.push((
                (format!("{client}|{server}"), rw.clone(), pol.clone(), file),
                r,
            ));
        }
    }
    let kget = |rw: &str, pol: &str, file: &str| {
        kernel
            .iter()
            .find(|((a, b, c), _)| *a == rw && *b == pol && *c == file)
            .map(|(_, r)| r.as_ref().map(|x| x.0).map_err(Clone::clone))
    };
    let sget = |rw: &str, pol: &str, file: &str| -> Option<&Done> {
        sim.iter().find(|d| d.key == [rw, pol, file])
    };
    // The main table's columns.
    let name = column_name();
    let t = &sec.tables[0];
    for (file, _) in WEB_FILES {
        let cells = t
            .rows
            .iter()
            .map(|r| match kget(&r.labels[1], &r.labels[3], file) {
                Some(x) => cell(&x),
                None if r.labels[3] == "new policy" => {
                    LiveCell::Absent("no Linux equivalent (Doupnik's policy)".into())
                }
                None => LiveCell::Absent("not run".into()),
            })
            .collect();
        sec.live.columns.push(LiveColumn {
            table: 0,
            name: format!("{name}: {file} rate"),
            unit: "req/s".into(),
            digits: 0,
            cells,
        });
    }
    for (file, _) in WEB_FILES {
        let cells = t
            .rows
            .iter()
            .map(|r| {
                tun.iter()
                    .find(|((s, rw, pol, f), _)| {
                        *s == format!("{}|{}", r.labels[0], r.labels[2])
                            && *rw == r.labels[1]
                            && *pol == r.labels[3]
                            && *f == file
                    })
                    .map_or(LiveCell::Absent("not run".into()), |(_, x)| cell(x))
            })
            .collect();
        sec.live.columns.push(LiveColumn {
            table: 0,
            name: format!("tinygram server over TUN: {file} rate"),
            unit: "req/s".into(),
            digits: 0,
            cells,
        });
    }
    // The comparison table and the disagreements.
    let mut columns = Vec::new();
    for (file, _) in WEB_FILES {
        columns.push(Column::new(&format!("{file}: {name}"), "req/s", 0));
        columns.push(Column::new(&format!("{file}: simulated linux"), "req/s", 0));
        columns.push(Column::new(
            &format!("{file}: kernel server data segments"),
            "per request",
            1,
        ));
        columns.push(Column::new(
            &format!("{file}: simulated server data segments"),
            "per request",
            1,
        ));
    }
    let mut cmp = Table {
        title: format!(
            "{name} at both ends over veth against the simulated linux stack (both hosts), \
             Doupnik's web pattern"
        ),
        label_headers: vec!["client rwnd".into(), "server".into()],
        columns,
        rows: Vec::new(),
    };
    for &rw in &rwnds {
        for (pol, _) in pols {
            let mut values = Vec::new();
            for (file, _) in WEB_FILES {
                let k = kernel
                    .iter()
                    .find(|((a, b, c), _)| *a == rw && *b == pol && *c == file)
                    .and_then(|(_, r)| r.as_ref().ok().copied());
                let s = sget(rw, pol, file).map(|d| {
                    let n = d.result.transactions.max(1) as f64;
                    (
                        d.result.transactions_per_s,
                        d.result.server.data_segments as f64 / n,
                        d,
                    )
                });
                values.push(val(k.map(|k| k.0)));
                values.push(val(s.map(|s| s.0)));
                values.push(val(k.map(|k| k.1)));
                values.push(val(s.map(|s| s.1)));
                if let (Some(k), Some(s)) = (k, s) {
                    let what =
                        format!("Doupnik's web pattern, client window {rw}, server {pol}, {file}");
                    if let Some(x) = compare(
                        &what,
                        (k.0, k.1),
                        (s.0, s.1),
                        "req/s",
                        "server data segments per request",
                    ) {
                        sec.live
                            .disagreements
                            .push(x + &web_cause((k.0, k.1), (s.0, s.1), s.2));
                    }
                }
            }
            cmp.rows.push(Row {
                labels: vec![rw.into(), pol.into()],
                values,
            });
        }
    }
    sec.live.tables.push(cmp);
    sec.live.note = Some(format!(
        "Measured live on this machine: {name} at both ends of a veth pair (MTU 1500, the \
         kernel's defaults, the client's SO_RCVBUF set to the row's window), runs of {:.1} s; \
         the kernel column depends only on the client window and Nagle on/off, so it repeats \
         for each simulated server and ACK-counting rule. The TUN column runs tinygram as the \
         row's server (its simulated settings) against the kernel's client; tinygram's `http` \
         app writes headers of 36 and about 100 bytes where the simulated server writes 40 \
         and 150. {}",
        dur.as_secs_f64(),
        how_checked(rtt)
    ));
}

fn web_cause(k: (f64, f64), s: (f64, f64), d: &Done) -> String {
    let fired = d.result.server.delack_timer_fired + d.result.client.delack_timer_fired;
    if stalled(s.0) && !stalled(k.0) {
        format!(
            " Cause: the simulated hosts wait on a delayed ACK ({fired} delayed-ACK timer \
             firings) where the kernel does not: a gap in the simulated linux ACK rules."
        )
    } else if k.1 > s.1 {
        " Cause: the kernel's server cuts the response into more segments than the simulated \
         one; not established which of its rules (window rounding in tcp_select_window, \
         TSO/GSO sizing) does it."
            .into()
    } else {
        " Cause: not established.".into()
    }
}

fn live_davids(sec: &mut Section, quick: bool, threads: usize, rtt: f64, start: Instant) {
    const EXP: &str = "davids-traces";
    let Some(t) = sec.tables.first() else { return };
    let rows: Vec<(String, String, String, String)> = t
        .rows
        .iter()
        .map(|r| {
            (
                r.labels[0].clone(),
                r.labels[1].clone(),
                r.labels[2].clone(),
                r.labels[3].clone(),
            )
        })
        .collect();
    let gap_of = |w: &str| {
        if w.contains("back to back") {
            Duration::ZERO
        } else {
            Duration::from_millis(10)
        }
    };
    let mut p = Progress {
        start,
        exp: EXP,
        n: 0,
        total: 0,
    };
    p.total = rows.len() * 2;
    let mut kernel: Vec<Result<(u32, u32, f64), String>> = Vec::new();
    let mut tun: Vec<Result<(u32, u32, f64), String>> = Vec::new();
    let mut jobs = Vec::new();
    for (n, policy, writes, delack) in &rows {
        let gap = gap_of(writes);
        let nodelay = match policy.as_str() {
            "nagle" => Some(false),
            "nodelay" => Some(true),
            _ => None,
        };
        let k = match (nodelay, delack.as_str()) {
            (None, _) => Err(format!("no Linux equivalent ({policy} is Solaris')")),
            (_, "50ms") => {
                Err("no Linux equivalent (Linux's delayed-ACK time is not a setting)".into())
            }
            (Some(nd), _) => {
                let mut ov = simulated_linux("client", nd);
                ov.extend(simulated_linux("server", false));
                ov.extend(veth_link(rtt));
                ov.push(format!("workload.request_gap=\"{}ms\"", gap.as_millis()));
                jobs.push(sim_job(EXP, vec![n.clone()], ov, true));
                kernel_davids(nd, gap)
            }
        };
        p.step(&format!("kernel, trace {n}"), &show(&k));
        kernel.push(k);
        let key = format!("trace {n}");
        let r = match (nodelay, row_config(EXP, quick, &[&key], false)) {
            (Some(nd), Some(cfg)) => tun_davids(cfg, nd, gap),
            (None, _) => Err(format!("no Linux client equivalent ({policy})")),
            (_, None) => Err("no such simulated row".into()),
        };
        p.step(
            &format!("tinygram server over TUN, kernel client, trace {n}"),
            &show(&r),
        );
        tun.push(r);
    }
    let sim = run_jobs(jobs, threads, &|_, _| {});
    let name = column_name();
    let absent = |e: &String| {
        if e.starts_with("no Linux") {
            LiveCell::Absent(e.clone())
        } else {
            LiveCell::Absent(format!("failed: {e}"))
        }
    };
    let col = |label: &str,
               unit: &str,
               digits: usize,
               src: &[Result<(u32, u32, f64), String>],
               f: fn(&(u32, u32, f64)) -> f64| LiveColumn {
        table: 0,
        name: label.to_string(),
        unit: unit.into(),
        digits,
        cells: src
            .iter()
            .map(|r| match r {
                Ok(x) => LiveCell::Value(f(x)),
                Err(e) => absent(e),
            })
            .collect(),
    };
    let tunname = "tinygram server over TUN";
    sec.live.columns.extend([
        col(
            &format!("{name}: data packets"),
            "packets",
            0,
            &kernel,
            |x| f64::from(x.0),
        ),
        col(
            &format!("{name}: ACK packets"),
            "packets",
            0,
            &kernel,
            |x| f64::from(x.1),
        ),
        col(&format!("{name}: time to send"), "ms", 0, &kernel, |x| x.2),
        col(
            &format!("{tunname}: data packets"),
            "packets",
            0,
            &tun,
            |x| f64::from(x.0),
        ),
        col(
            &format!("{tunname}: ACK packets"),
            "packets",
            0,
            &tun,
            |x| f64::from(x.1),
        ),
        col(&format!("{tunname}: time to send"), "ms", 0, &tun, |x| x.2),
    ]);
    let mut cmp = Table {
        title: format!(
            "{name} at both ends over veth against the simulated linux stack, Davids' 50 writes"
        ),
        label_headers: vec!["trace".into(), "client".into(), "writes".into()],
        columns: vec![
            Column::new(&format!("data packets: {name}"), "packets", 0),
            Column::new("data packets: simulated linux", "packets", 0),
            Column::new(&format!("ACK packets: {name}"), "packets", 0),
            Column::new("ACK packets: simulated linux", "packets", 0),
            Column::new(&format!("time to send: {name}"), "ms", 0),
            Column::new("time to send: simulated linux", "ms", 0),
        ],
        rows: Vec::new(),
    };
    for (i, (n, policy, writes, _)) in rows.iter().enumerate() {
        let (Some(Ok(k)), Some(d)) = (kernel.get(i), sim.iter().find(|d| d.key == [n.clone()]))
        else {
            continue;
        };
        let s = super::experiments::trace_figures(d);
        cmp.rows.push(Row {
            labels: vec![
                n.clone(),
                if policy == "nagle" {
                    "Nagle on".into()
                } else {
                    "TCP_NODELAY".into()
                },
                writes.clone(),
            ],
            values: vec![
                val(Some(f64::from(k.0))),
                val(Some(f64::from(s.0))),
                val(Some(f64::from(k.1))),
                val(Some(f64::from(s.1))),
                val(Some(k.2)),
                val(Some(s.2)),
            ],
        });
        let off: Vec<(&str, f64, f64)> = [
            ("data packets", f64::from(k.0), f64::from(s.0)),
            ("ACK packets", f64::from(k.1), f64::from(s.1)),
            ("time to send (ms)", k.2, s.2),
        ]
        .into_iter()
        // A time under 5 ms on both is scheduling noise on the kernel's side.
        .filter(|(what, kv, sv)| {
            !(agree(*kv, *sv) || what.starts_with("time") && kv.max(*sv) < 5.0)
        })
        .collect();
        if !off.is_empty() {
            sec.live
                .disagreements
                .push(davids_disagreement(n, policy, writes, &off, d));
        }
    }
    sec.live.tables.push(cmp);
    sec.live.note = Some(format!(
        "Measured live on this machine: {name} at both ends of a veth pair (MTU 1500, the \
         kernel's defaults), counted from a capture on the client's interface exactly as the \
         simulated traces are counted. Trace 5 (Solaris' naglim) and traces 6 and 7 (a 50 ms \
         delayed ACK) have no Linux equivalent. The TUN columns run tinygram as the row's \
         server (its simulated settings) against the kernel's client. {} Times to send \
         are checked too (with the same tolerance; under 5 ms on both counts as agreeing).",
        how_checked(rtt)
    ));
}

/// One trace's disagreements, (metric, kernel, simulated), with their cause.
fn davids_disagreement(
    n: &str,
    policy: &str,
    writes: &str,
    off: &[(&str, f64, f64)],
    d: &Done,
) -> String {
    let c = &d.result;
    let fewer_acks = off.iter().any(|(w, k, s)| *w == "ACK packets" && k > s);
    let fewer_data = off.iter().any(|(w, k, s)| *w == "data packets" && k > s);
    let more_data = off.iter().any(|(w, k, s)| *w == "data packets" && k < s);
    let back_to_back = writes.contains("back to back");
    let sim_data = off
        .iter()
        .find(|(w, _, _)| *w == "data packets")
        .map(|x| x.2);
    // The simulated server answered every segment at once (quick-ACK mode,
    // no delayed-ACK timer): its ACK rules did what the kernel's do.
    let acked_each_at_once =
        c.server.delack_timer_fired == 0 && sim_data.is_none_or(|n| c.server.pure_acks as f64 >= n);
    let cause = if back_to_back && policy == "nagle" && fewer_data && acked_each_at_once {
        format!(
            "timing, not the ACK rules. The simulated server ACKed each segment at once \
             (quick-ACK mode: {} pure ACKs, its delayed-ACK timer fired {} times), as the \
             kernel's did; under Minshall's rule (tcp_nagle_check) each ACK releases what the \
             application wrote meanwhile. The kernel client's 50 write() calls take about 0.1 ms \
             and on veth its ACK comes back within microseconds (softirq, no application \
             wakeup), so the writes leave in many small packets; the simulated writes are \
             instantaneous and its link takes half the application-level round trip, so all \
             49 held writes leave with the first ACK. Host timing is not modelled",
            c.server.pure_acks, c.server.delack_timer_fired
        )
    } else if back_to_back && policy == "nodelay" && fewer_acks && !fewer_data {
        "timing of the server's reads, not the ACK rules. After the quick ACKs at the start of \
         the connection, Linux ACKs small pushed segments when a read empties the receive \
         queue (tcp.c tcp_cleanup_rbuf, ICSK_ACK_PUSHED), once per read; the kernel's server \
         wakes up less often than segments microseconds apart arrive, so each read takes \
         several, while the simulated application reads each segment as it arrives and the \
         same rule ACKs every one. Host scheduling is not modelled"
            .to_string()
    } else if (fewer_acks || fewer_data) && c.server.delack_timer_fired > 0 {
        format!(
            "Linux's receiver ACKs a pushed small segment as soon as the application's read \
             empties the receive queue (tcp_cleanup_rbuf, ICSK_ACK_PUSHED), and every segment \
             in quick-ACK mode at the start of a connection; the simulated quickack policy \
             delays some of those ACKs (its server fired the delayed-ACK timer {} times and \
             sent {} pure ACKs){}",
            c.server.delack_timer_fired,
            c.server.pure_acks,
            if policy == "nagle" {
                ", so the simulated Linux Nagle holds writes that the kernel's sends at once"
            } else {
                ""
            }
        )
    } else if more_data && policy == "nodelay" {
        "autocorking (net.ipv4.tcp_autocorking, tcp_push): the kernel holds a small write while \
         an earlier packet of the flow is still queued in the device, which the simulator does \
         not model"
            .into()
    } else {
        "not established".into()
    };
    let what: Vec<String> = off
        .iter()
        .map(|(w, k, s)| format!("{w}: kernel {k:.0}, simulated linux {s:.0}"))
        .collect();
    format!(
        "Davids' trace {n} ({policy}, {writes}): {}. Cause: {cause}.",
        what.join("; ")
    )
}

/// A pattern's key and what measuring it gave.
type Measured<K, V = f64> = (K, Result<V, String>);
/// (MSS, client, block size).
type BlockKey = (String, String, u32);

fn live_cheshire(
    sec: &mut Section,
    quick: bool,
    threads: usize,
    dur: Duration,
    rtt: f64,
    start: Instant,
) {
    const EXP: &str = "cheshire-cliff";
    let Some(t) = sec.tables.first() else { return };
    let blocks: Vec<u32> = t
        .columns
        .iter()
        .filter_map(|c| c.name.strip_suffix(" B rate"))
        .filter_map(|b| b.parse().ok())
        .collect();
    let rows: Vec<(String, String, String)> = t
        .rows
        .iter()
        .map(|r| {
            (
                r.labels[0].clone(),
                r.labels[1].clone(),
                r.labels[2].clone(),
            )
        })
        .collect();
    /// The client's Linux setting for a row: (TCP_NODELAY, outstanding), or why none.
    fn linux_client(client: &str) -> Result<(bool, u32), String> {
        match client {
            "macosx-tiger" | "macosx" | "windows-xp" => Ok((false, 1)),
            "macosx-tiger, nodelay" => Ok((true, 1)),
            "macosx-tiger, 2 outstanding" => Ok((false, 2)),
            "macosx-tiger, 3 outstanding" => Ok((false, 3)),
            "macosx-tiger, 4 outstanding" => Ok((false, 4)),
            _ => Err(format!("no Linux equivalent ({client})")),
        }
    }
    let mut kernel: Vec<Measured<BlockKey, (f64, f64)>> = Vec::new();
    let mut tun: Vec<Measured<(String, String, String, u32)>> = Vec::new();
    let measured = |l: &str| l.starts_with("1 Gb/s");
    let kernel_rows: Vec<(String, String)> = {
        let mut v = Vec::new();
        for (link, mss, client) in &rows {
            if measured(link) && client != "macosx" && linux_client(client).is_ok() {
                let k = (mss.clone(), client.clone());
                if !v.contains(&k) {
                    v.push(k);
                }
            }
        }
        v
    };
    let tun_rows: Vec<&(String, String, String)> = rows
        .iter()
        .filter(|(l, _, c)| measured(l) && !c.contains("outstanding"))
        .collect();
    let mut p = Progress {
        start,
        exp: EXP,
        n: 0,
        total: (kernel_rows.len() + tun_rows.len()) * blocks.len(),
    };
    let mut jobs = Vec::new();
    for (mss, client) in &kernel_rows {
        let Ok((nodelay, outstanding)) = linux_client(client) else {
            continue;
        };
        for &b in &blocks {
            let r = kernel_blocks(mss != "1460", b as usize, nodelay, outstanding, dur);
            p.step(&format!("kernel, MSS {mss}, {client}, {b} B"), &show(&r));
            kernel.push(((mss.clone(), client.clone(), b), r));
            let mut ov = simulated_linux("client", nodelay);
            ov.extend(simulated_linux("server", false));
            if mss == "1460" {
                for h in ["client", "server"] {
                    ov.push(format!("{h}.options=[\"wscale\", \"sack\"]"));
                }
            }
            ov.extend(veth_link(rtt));
            ov.push(format!("workload.request=[{b}]"));
            ov.push(format!("workload.outstanding={outstanding}"));
            ov.extend(SIM_BOUND.map(String::from));
            jobs.push(sim_job(
                EXP,
                vec![mss.clone(), client.clone(), b.to_string()],
                ov,
                false,
            ));
        }
    }
    for (link, mss, client) in &tun_rows {
        for &b in &blocks {
            let key = [link.as_str(), mss.as_str(), client.as_str(), &b.to_string()];
            let r = match row_config(EXP, quick, &key, true) {
                Some(cfg) => tun_blocks(cfg, b as usize, dur),
                None => Err("no such simulated row".into()),
            };
            p.step(
                &format!("tinygram {client} client over TUN, MSS {mss}, {b} B"),
                &show(&r),
            );
            tun.push(((link.clone(), mss.clone(), client.clone(), b), r));
        }
    }
    let sim = run_jobs(jobs, threads, &|_, _| {});
    let name = column_name();
    for &b in &blocks {
        let cells = rows
            .iter()
            .map(|(link, mss, client)| {
                if !measured(link) {
                    return LiveCell::Absent("needs link shaping (no netem here)".into());
                }
                let c = if client == "macosx" {
                    "macosx-tiger"
                } else {
                    client.as_str()
                };
                match linux_client(client) {
                    Err(e) => LiveCell::Absent(e),
                    Ok(_) => kernel
                        .iter()
                        .find(|((m, cl, bb), _)| m == mss && cl == c && *bb == b)
                        .map_or(LiveCell::Absent("not run".into()), |(_, r)| {
                            cell(&r.as_ref().map(|x| x.0).map_err(Clone::clone))
                        }),
                }
            })
            .collect();
        sec.live.columns.push(LiveColumn {
            table: 0,
            name: format!("{name}: {b} B rate"),
            unit: "blocks/s".into(),
            digits: 1,
            cells,
        });
    }
    for &b in &blocks {
        let cells = rows
            .iter()
            .map(|(link, mss, client)| {
                if !measured(link) {
                    return LiveCell::Absent("needs link shaping (no netem here)".into());
                }
                if client.contains("outstanding") {
                    return LiveCell::Absent(
                        "the TUN request app keeps one block outstanding".into(),
                    );
                }
                tun.iter()
                    .find(|((l, m, c, bb), _)| l == link && m == mss && c == client && *bb == b)
                    .map_or(LiveCell::Absent("not run".into()), |(_, r)| cell(r))
            })
            .collect();
        sec.live.columns.push(LiveColumn {
            table: 0,
            name: format!("tinygram client over TUN: {b} B rate"),
            unit: "blocks/s".into(),
            digits: 1,
            cells,
        });
    }
    let mut columns = Vec::new();
    for &b in &blocks {
        columns.push(Column::new(&format!("{b} B: {name}"), "blocks/s", 1));
        columns.push(Column::new(
            &format!("{b} B: simulated linux"),
            "blocks/s",
            1,
        ));
        columns.push(Column::new(
            &format!("{b} B: {name} segments"),
            "per block",
            1,
        ));
        columns.push(Column::new(
            &format!("{b} B: simulated linux segments"),
            "per block",
            1,
        ));
    }
    let mut cmp = Table {
        title: format!(
            "{name} at both ends over veth against the simulated linux stack, Cheshire's blocks \
             (the client's data segments per block)"
        ),
        label_headers: vec!["MSS".into(), "client".into()],
        columns,
        rows: Vec::new(),
    };
    for (mss, client) in &kernel_rows {
        let mut values = Vec::new();
        for &b in &blocks {
            let k = kernel
                .iter()
                .find(|((m, c, bb), _)| m == mss && c == client && *bb == b)
                .and_then(|(_, r)| r.as_ref().ok().copied());
            let d = sim
                .iter()
                .find(|d| d.key == [mss.clone(), client.clone(), b.to_string()]);
            let s = d.map(|d| {
                let r = &d.result;
                (
                    r.transactions_per_s,
                    r.client.data_segments as f64 / r.transactions.max(1) as f64,
                )
            });
            values.extend([
                val(k.map(|k| k.0)),
                val(s.map(|s| s.0)),
                val(k.map(|k| k.1)),
                val(s.map(|s| s.1)),
            ]);
            if let (Some(k), Some(s), Some(d)) = (k, s, d) {
                let what = format!("Cheshire's blocks, MSS {mss}, {client}, {b} B");
                if let Some(x) = compare(&what, k, s, "blocks/s", "data segments per block") {
                    sec.live.disagreements.push(x + &cheshire_cause(k, s, d));
                }
            }
        }
        let label = if client == "nagle" {
            "Nagle on (Linux's is Minshall's)".to_string()
        } else {
            client.replace("nodelay", "TCP_NODELAY")
        };
        cmp.rows.push(Row {
            labels: vec![mss.clone(), label],
            values,
        });
    }
    sec.live.tables.push(cmp);
    sec.live.note = Some(format!(
        "Measured live on this machine: {name} at both ends of a veth pair (MTU 1500, the \
         kernel's defaults; the MSS 1460 rows turn timestamps off in both namespaces), runs of \
         {:.1} s. Linux's Nagle is Minshall's (tcp_nagle_check, tcp_minshall_check), so the \
         macosx (Minshall) row shows the kernel's Nagle, and the WiFi rows need link shaping. The TUN columns run tinygram as the row's \
         client (its simulated settings) against the kernel's server. {}",
        dur.as_secs_f64(),
        how_checked(rtt)
    ));
}

fn cheshire_cause(k: (f64, f64), s: (f64, f64), d: &Done) -> String {
    let c = &d.result;
    if stalled(s.0) && !stalled(k.0) {
        format!(
            " Cause: the simulated server delays an ACK the kernel's sends at once ({} \
             delayed-ACK timer firings): a gap in the simulated linux ACK rules.",
            c.server.delack_timer_fired
        )
    } else if s.1 > k.1 {
        " Cause: the kernel sends fewer segments than the simulated stack; not established \
         which of its rules (TSO/GSO sizing, tcp_tso_should_defer) does it."
            .into()
    } else {
        " Cause: not established.".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The simulated linux keys give exactly drill's `--stack linux` settings,
    /// so the column checked against the kernel is that stack.
    #[test]
    fn simulated_linux_keys_are_drills_linux_stack() {
        let base = "name = \"t\"\n[workload]\ntype = \"request-response\"\n";
        for nodelay in [false, true] {
            let mut ov = simulated_linux("client", nodelay);
            ov.extend(simulated_linux("server", false));
            let s = scenario(base, "test", &ov);
            let mut want = tinygram_drill::stack::Stack::linux().config();
            if nodelay {
                want.send_policy = tinygram_proto::policy::SendPolicyKind::NoDelay;
            }
            assert_eq!(format!("{:?}", s.client.tcp), format!("{want:?}"));
            assert_eq!(
                format!("{:?}", s.server.tcp),
                format!("{:?}", tinygram_drill::stack::Stack::linux().config())
            );
        }
    }

    #[test]
    fn cells_without_a_linux_equivalent_say_what_is_missing() {
        let l = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let f = |v: &[&str]| no_equivalent_cell("fox-satellite", &l(v));
        assert_eq!(
            f(&["big windows + NAK, noise", "64K"]),
            "no Linux equivalent (NAK)"
        );
        assert_eq!(
            f(&["big windows", "92K"]),
            "no Linux equivalent (Big Window)"
        );
        assert_eq!(
            f(&["window scale + SACK", "64K"]),
            "needs netem (a satellite delay)"
        );
        let w = no_equivalent_cell("westfield-ftp", &l(&["fuzzball (Mills)"]));
        assert!(w.contains("1456-byte window"), "{w}");
    }

    #[test]
    fn web_messages_have_the_simulated_sizes() {
        assert_eq!(web_header1().len(), 40);
        assert_eq!(web_header2(2250).len(), 150);
        assert_eq!(web_header2(33_000).len(), 150);
        assert_eq!(web_get().len(), 120);
        assert_eq!(web_body(33_000).iter().map(Vec::len).sum::<usize>(), 33_000);
        assert_eq!(
            web_body(9000).iter().map(Vec::len).collect::<Vec<_>>(),
            [4096, 4096, 808]
        );
    }

    fn pkt(
        ms: u64,
        src: Ipv4Addr,
        seq: u32,
        ack: u32,
        flags: u8,
        payload: u32,
        t0: Instant,
    ) -> Pkt {
        Pkt {
            at: t0 + Duration::from_millis(ms),
            src,
            seq,
            ack,
            flags,
            payload,
        }
    }

    /// Davids' counting on a hand-made capture: data packets, advancing ACKs
    /// up to the last byte (a duplicate and a later one do not count), span.
    #[test]
    fn davids_counts_reads_a_capture() {
        let t0 = Instant::now();
        let (c, s) = (V_CLIENT, V_SERVER);
        let pkts = vec![
            pkt(0, c, 100, 0, 0x02, 0, t0),
            pkt(0, s, 900, 101, 0x12, 0, t0),
            pkt(1, c, 101, 901, 0x18, 10, t0),
            pkt(2, s, 901, 111, 0x10, 0, t0),
            pkt(3, s, 901, 111, 0x10, 0, t0),
            pkt(40, c, 111, 901, 0x18, 490, t0),
            pkt(41, s, 901, 601, 0x18, 1, t0),
            pkt(42, s, 902, 601, 0x10, 0, t0),
        ];
        assert_eq!(davids_counts(&pkts, c), (2, 2, 39.0));
        assert_eq!(davids_counts(&pkts[..2], c), (0, 0, 0.0));
    }

    #[test]
    fn parses_an_ipv4_tcp_packet() {
        let mut p = vec![0u8; 40 + 5];
        p[0] = 0x45;
        p[2..4].copy_from_slice(&45u16.to_be_bytes());
        p[9] = 6;
        p[12..16].copy_from_slice(&[10, 9, 0, 1]);
        p[24..28].copy_from_slice(&7u32.to_be_bytes());
        p[32] = 5 << 4;
        p[33] = 0x18;
        let sum = tinygram_proto::wire::internet_checksum(&p[..20]);
        p[10..12].copy_from_slice(&sum.to_be_bytes());
        let x = parse_ipv4_tcp(Instant::now(), &p).expect("a TCP packet");
        assert_eq!((x.src, x.seq, x.flags, x.payload), (V_CLIENT, 7, 0x18, 5));
        p[9] = 17;
        assert!(parse_ipv4_tcp(Instant::now(), &p).is_none());
        assert!(parse_ipv4_tcp(Instant::now(), &p[..10]).is_none());
    }
}
