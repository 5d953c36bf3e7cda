//! The kernel's own TCP running known exchange patterns, client in one
//! network namespace and server in another (typically the two ends of a
//! [`crate::link`]), with std::net sockets: what `whatif`'s predictions are
//! checked against. Each side may set TCP_NODELAY, and may set TCP_QUICKACK
//! again after every read (Linux clears it as it goes; set after each read
//! it acknowledges every segment at once, tinygram's `immediate` ACK
//! policy). The client times each exchange from its first write call to the
//! last byte of the answer read.
//!
//! [`Tcpdump`] records an interface of a namespace to a pcap while the
//! exchanges run.

use crate::netns::{self, Netns};
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{Ipv4Addr, Shutdown, SocketAddrV4, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// One request/response exchange: the request as the client's write calls,
/// the server's think time, the answer as the server's write calls.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pattern {
    pub name: &'static str,
    pub request_writes: Vec<usize>,
    pub think: Duration,
    pub response_writes: Vec<usize>,
}

/// Requests or answers larger than this are refused (they are held whole).
pub const MAX_MESSAGE: usize = 64 << 20;
/// Exchanges per run are bounded (each one's time is kept).
pub const MAX_EXCHANGES: usize = 1_000_000;

impl Pattern {
    /// Cheshire, "TCP Performance problems caused by interaction between
    /// Nagle's Algorithm and Delayed ACK": a 3,000-byte request written as
    /// 2,000 then 1,000 bytes, a 100-byte answer.
    pub fn cheshire() -> Pattern {
        Pattern {
            name: "cheshire",
            request_writes: vec![2000, 1000],
            think: Duration::ZERO,
            response_writes: vec![100],
        }
    }

    /// Doupnik, "A new TCP transmission policy replacing Nagle mode", 3 (the
    /// web-serving test): a one-packet GET, answered by two short writes
    /// (server identification, document description) and then a
    /// 33,000-byte body in 4 KB writes. Sizes as the simulated web server's
    /// and `reproduce --live`'s: a 120-byte GET, headers of 40 and 150 bytes.
    pub fn doupnik_web() -> Pattern {
        let mut writes = WEB_HEADERS.to_vec();
        let mut left = WEB_BODY;
        while left > 0 {
            let k = left.min(crate::app::HTTP_BODY_WRITE);
            writes.push(k);
            left -= k;
        }
        Pattern {
            name: "doupnik-web",
            request_writes: vec![WEB_REQUEST],
            think: Duration::ZERO,
            response_writes: writes,
        }
    }

    /// A remote procedure call: a 200-byte request, 2 ms of server work, a
    /// 400-byte answer, one write each.
    pub fn rpc() -> Pattern {
        Pattern {
            name: "rpc",
            request_writes: vec![200],
            think: Duration::from_millis(2),
            response_writes: vec![400],
        }
    }

    /// 100 bytes each way, one write each: nothing for Nagle to hold (every
    /// write goes out at once, and the answer carries the ACK), the control.
    pub fn ping_pong() -> Pattern {
        Pattern {
            name: "ping-pong",
            request_writes: vec![100],
            think: Duration::ZERO,
            response_writes: vec![100],
        }
    }

    pub fn request_len(&self) -> usize {
        self.request_writes.iter().sum()
    }

    pub fn response_len(&self) -> usize {
        self.response_writes.iter().sum()
    }

    fn check(&self) -> Result<(), String> {
        for (what, w) in [
            ("request", &self.request_writes),
            ("response", &self.response_writes),
        ] {
            if w.is_empty() || w.contains(&0) {
                return Err(format!(
                    "pattern {}: every {what} write needs at least one byte",
                    self.name
                ));
            }
            if w.iter()
                .try_fold(0usize, |a, &b| a.checked_add(b))
                .is_none_or(|n| n > MAX_MESSAGE)
            {
                return Err(format!(
                    "pattern {}: the {what} exceeds {MAX_MESSAGE} bytes",
                    self.name
                ));
            }
        }
        Ok(())
    }
}

/// The web pattern's GET (one packet).
const WEB_REQUEST: usize = 120;
/// The web pattern's two header writes, before the body.
const WEB_HEADERS: [usize; 2] = [40, 150];
/// The web pattern's body (Doupnik's 33,000-byte page).
const WEB_BODY: usize = 33_000;

/// One side's socket options.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SideOptions {
    /// TCP_NODELAY: Nagle off.
    pub nodelay: bool,
    /// TCP_QUICKACK set on accept/connect and again after every read.
    pub quickack: bool,
}

/// How to run the exchanges.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunSpec {
    pub pattern: Pattern,
    /// Exchanges on the one connection.
    pub exchanges: usize,
    /// Pause of the client between an answer and its next request.
    pub gap: Duration,
    pub client: SideOptions,
    pub server: SideOptions,
    pub port: u16,
}

impl RunSpec {
    /// `exchanges` of `pattern` back to back on port 8080, default socket options.
    pub fn new(pattern: Pattern, exchanges: usize) -> RunSpec {
        RunSpec {
            pattern,
            exchanges,
            gap: Duration::ZERO,
            client: SideOptions::default(),
            server: SideOptions::default(),
            port: 8080,
        }
    }
}

/// What the client measured.
#[derive(Clone, Debug, PartialEq)]
pub struct Exchanges {
    /// Each exchange's completion time: first request byte written (the
    /// first write call) to the last answer byte read.
    pub completions: Vec<Duration>,
    /// Segments with data the client and the server sent (TCP_INFO tcpi_data_segs_out).
    pub client_data_segs: u32,
    pub server_data_segs: u32,
}

impl Exchanges {
    /// The median completion time.
    pub fn median(&self) -> Duration {
        let mut v = self.completions.clone();
        v.sort();
        v.get(v.len() / 2).copied().unwrap_or_default()
    }
}

/// Every blocking socket call gives up after this (a peer that died).
const IO_LIMIT: Duration = Duration::from_secs(30);

fn set_int(s: &impl AsRawFd, level: i32, name: i32, v: i32) -> io::Result<()> {
    // SAFETY: an open socket; the value is a c_int of the size given.
    let r = unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            level,
            name,
            (&v as *const i32).cast(),
            std::mem::size_of::<i32>() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// TCP_QUICKACK on: Linux leaves its delayed-ACK mode for now and clears
/// the flag again as it goes (tcp(7)), so it is set after every read.
fn quickack(s: &TcpStream) -> io::Result<()> {
    set_int(s, libc::IPPROTO_TCP, libc::TCP_QUICKACK, 1)
}

/// tcpi_data_segs_out of struct tcp_info (include/uapi/linux/tcp.h).
fn data_segs_out(s: &TcpStream) -> u32 {
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
    const OFF: usize = 156;
    if r == 0 && len as usize >= OFF + 4 {
        u32::from_ne_bytes([buf[OFF], buf[OFF + 1], buf[OFF + 2], buf[OFF + 3]])
    } else {
        0
    }
}

fn prepare(s: &TcpStream, o: SideOptions) -> io::Result<()> {
    s.set_nodelay(o.nodelay)?;
    s.set_read_timeout(Some(IO_LIMIT))?;
    s.set_write_timeout(Some(IO_LIMIT))?;
    if o.quickack {
        quickack(s)?;
    }
    Ok(())
}

/// Reads exactly `n` bytes with one read(2) per call, setting TCP_QUICKACK
/// after each when asked.
fn read_n(s: &mut TcpStream, buf: &mut [u8], n: usize, o: SideOptions) -> io::Result<()> {
    let mut got = 0;
    while got < n {
        let k = s.read(&mut buf[got..n])?;
        if k == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("the peer closed after {got} of {n} bytes"),
            ));
        }
        got += k;
        if o.quickack {
            quickack(s)?;
        }
    }
    Ok(())
}

fn write_pieces(s: &mut TcpStream, pieces: &[usize], data: &[u8]) -> io::Result<()> {
    let mut at = 0;
    for &p in pieces {
        s.write_all(&data[at..at + p])?;
        at += p;
    }
    Ok(())
}

/// Bytes of a message: a repeating pattern, so a short read shows as a mismatch.
fn message(len: usize, salt: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31) ^ salt)
        .collect()
}

fn server(l: TcpListener, spec: RunSpec) -> Result<u32, String> {
    let (mut s, _) = l.accept().map_err(|e| format!("server accept: {e}"))?;
    prepare(&s, spec.server).map_err(|e| format!("server socket options: {e}"))?;
    let p = &spec.pattern;
    let want = message(p.request_len(), 0x5a);
    let answer = message(p.response_len(), 0xa5);
    let mut buf = vec![0u8; p.request_len()];
    for i in 0..spec.exchanges {
        read_n(&mut s, &mut buf, want.len(), spec.server)
            .map_err(|e| format!("server, request {i}: {e}"))?;
        if buf != want {
            return Err(format!(
                "server, request {i}: the bytes differ from those sent"
            ));
        }
        if !p.think.is_zero() {
            std::thread::sleep(p.think);
        }
        write_pieces(&mut s, &p.response_writes, &answer)
            .map_err(|e| format!("server, answer {i}: {e}"))?;
    }
    let mut rest = [0u8; 64];
    match s.read(&mut rest) {
        Ok(0) => {}
        Ok(_) => return Err("server: bytes after the last request".into()),
        Err(e) => return Err(format!("server, waiting for the client's close: {e}")),
    }
    Ok(data_segs_out(&s))
}

fn client(to: SocketAddrV4, spec: RunSpec) -> Result<(Vec<Duration>, u32), String> {
    let mut s = TcpStream::connect_timeout(&to.into(), IO_LIMIT)
        .map_err(|e| format!("client connect to {to}: {e}"))?;
    prepare(&s, spec.client).map_err(|e| format!("client socket options: {e}"))?;
    let p = &spec.pattern;
    let request = message(p.request_len(), 0x5a);
    let want = message(p.response_len(), 0xa5);
    let mut buf = vec![0u8; want.len()];
    let mut times = Vec::with_capacity(spec.exchanges);
    for i in 0..spec.exchanges {
        if i > 0 && !spec.gap.is_zero() {
            std::thread::sleep(spec.gap);
        }
        let t0 = Instant::now();
        write_pieces(&mut s, &p.request_writes, &request)
            .map_err(|e| format!("client, request {i}: {e}"))?;
        read_n(&mut s, &mut buf, want.len(), spec.client)
            .map_err(|e| format!("client, answer {i}: {e}"))?;
        times.push(t0.elapsed());
        if buf != want {
            return Err(format!(
                "client, answer {i}: the bytes differ from those sent"
            ));
        }
    }
    let segs = data_segs_out(&s);
    s.shutdown(Shutdown::Write)
        .map_err(|e| format!("client shutdown: {e}"))?;
    let mut rest = [0u8; 64];
    while s
        .read(&mut rest)
        .map_err(|e| format!("client, waiting for the server's close: {e}"))?
        > 0
    {}
    Ok((times, segs))
}

/// Runs `spec`: the server listens on `server_addr:port` in `server_ns`, the
/// client connects from `client_ns`; one connection, the exchanges back to
/// back (with `gap` between them). Connection setup is not timed.
pub fn run_exchanges(
    client_ns: &Netns,
    server_ns: &Netns,
    server_addr: Ipv4Addr,
    spec: &RunSpec,
) -> Result<Exchanges, String> {
    spec.pattern.check()?;
    if spec.exchanges == 0 || spec.exchanges > MAX_EXCHANGES {
        return Err(format!(
            "{} exchanges: expected 1 to {MAX_EXCHANGES}",
            spec.exchanges
        ));
    }
    let to = SocketAddrV4::new(server_addr, spec.port);
    let (tx, rx) = mpsc::channel();
    let sspec = spec.clone();
    let srv = server_ns.spawn(move || {
        let l = match TcpListener::bind(to) {
            Ok(l) => l,
            Err(e) => {
                let e = format!("bind {to}: {e}");
                let _ = tx.send(Err(e.clone()));
                return Err(e);
            }
        };
        let _ = tx.send(Ok(()));
        server(l, sspec)
    });
    match rx.recv_timeout(Duration::from_secs(10)) {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return Err(e),
        Err(_) => return Err("the server did not start within 10 s".into()),
    }
    let cspec = spec.clone();
    let (completions, client_data_segs) =
        netns::join(client_ns.spawn(move || client(to, cspec)), "client")?;
    let server_data_segs = netns::join(srv, "server")?;
    Ok(Exchanges {
        completions,
        client_data_segs,
        server_data_segs,
    })
}

/// tcpdump writing one interface of a namespace to a pcap file, from
/// [`start`](Self::start) (which returns once it is listening) to
/// [`stop`](Self::stop).
pub struct Tcpdump {
    child: Child,
    pub path: PathBuf,
    lines: mpsc::Receiver<String>,
}

/// What tcpdump said when it stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaptureCounts {
    /// "N packets captured".
    pub captured: u64,
    /// "N packets dropped by kernel".
    pub dropped_by_kernel: u64,
}

impl Tcpdump {
    /// Starts `tcpdump -i IFACE -w PATH` (whole packets, written as they
    /// come, running as root so it may write anywhere) inside `ns`, and waits
    /// until it says "listening on".
    pub fn start(ns: &Netns, iface: &str, path: &Path) -> Result<Tcpdump, String> {
        let mut child = ns
            .command("tcpdump")
            .args([
                "-i",
                iface,
                "-n",
                "-s",
                "0",
                "-U",
                "--immediate-mode",
                "-Z",
                "root",
                "-w",
            ])
            .arg(path)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start tcpdump (apt package tcpdump): {e}"))?;
        let stderr = child.stderr.take().expect("piped");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for l in BufReader::new(stderr).lines().map_while(Result::ok) {
                if tx.send(l).is_err() {
                    return;
                }
            }
        });
        let mut said = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match lines.recv_timeout(left) {
                Ok(l) if l.contains("listening on") => break,
                Ok(l) => said.push(l),
                Err(_) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(format!(
                        "tcpdump on {iface} in {} did not start listening within 10 s: {}",
                        ns.name(),
                        said.join("; ")
                    ));
                }
            }
        }
        Ok(Tcpdump {
            child,
            path: path.to_path_buf(),
            lines,
        })
    }

    /// Lets the last packets in (`settle`), stops tcpdump with SIGINT (it
    /// flushes the file), and reads its counts.
    pub fn stop(mut self, settle: Duration) -> Result<CaptureCounts, String> {
        std::thread::sleep(settle);
        // SAFETY: kill(2) on our own child's pid.
        unsafe {
            libc::kill(self.child.id() as libc::pid_t, libc::SIGINT);
        }
        let status = self.child.wait().map_err(|e| format!("tcpdump: {e}"))?;
        let said: Vec<String> = self.lines.iter().collect();
        let count = |what: &str| {
            said.iter()
                .find(|l| l.ends_with(what))
                .and_then(|l| l.split_whitespace().next()?.parse().ok())
        };
        match (
            count("packets captured"),
            count("packets dropped by kernel"),
        ) {
            (Some(captured), Some(dropped_by_kernel)) => Ok(CaptureCounts {
                captured,
                dropped_by_kernel,
            }),
            _ => Err(format!(
                "tcpdump ended ({status}) without its counts: {}",
                said.join("; ")
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_patterns_are_the_documents() {
        let c = Pattern::cheshire();
        assert_eq!((c.request_len(), c.response_len()), (3000, 100));
        let w = Pattern::doupnik_web();
        assert_eq!(w.response_len(), 40 + 150 + 33_000);
        assert_eq!(
            w.response_writes.len(),
            2 + 9,
            "8 full 4 KB pieces and the rest"
        );
        assert_eq!(&w.response_writes[..3], &[40, 150, 4096]);
        assert_eq!(w.response_writes[10], 33_000 - 8 * 4096);
        assert_eq!(Pattern::rpc().response_len(), 400);
        assert_eq!(Pattern::ping_pong().request_writes, vec![100]);
    }

    #[test]
    fn bad_patterns_are_named() {
        let mut p = Pattern::rpc();
        p.response_writes = vec![0];
        assert!(p.check().unwrap_err().contains("at least one byte"));
        p.response_writes = vec![MAX_MESSAGE, 1];
        assert!(p.check().unwrap_err().contains("exceeds"));
        p.response_writes = vec![usize::MAX, 2];
        assert!(p.check().unwrap_err().contains("exceeds"));
    }
}
