//! The applications `tun serve` and `tun connect` run on a connection.
//!
//! Each `write` is one application write, pushed to the engine at once, like a
//! `write(2)` on a socket: the engine sees the write boundary (Doupnik 2.0) and
//! its send policy decides right away, as a kernel's does inside the call.

use sha2::{Digest, Sha256};
use std::collections::VecDeque;
use std::fmt;
use tinygram_proto::{Connection, Instant, State};

/// Doupnik section 3: the web server's body goes out in 4 KB writes.
pub const HTTP_BODY_WRITE: usize = 4096;

/// Which application, with its parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AppSpec {
    /// Writes back what it reads.
    Echo,
    /// Reads and drops everything (sha256 of what arrived is reported).
    Discard,
    /// Writes `bytes` bytes of a fixed pseudo-random stream, then closes.
    Source { bytes: u64 },
    /// Reads and drops everything, hashing nothing: a benchmark's receiver,
    /// as cheap as the kernel-side reader it is compared with.
    Sink,
    /// Writes `bytes` bytes of one 64 KiB block over and over, hashing
    /// nothing, then closes: a benchmark's sender.
    Blast { bytes: u64 },
    /// Answers each GET with a `body`-byte document as Doupnik's web server
    /// does (section 3): two short writes (server line, headers), then the body
    /// in 4 KB writes. Keep-alive.
    Http { body: usize },
    /// Cheshire's server: one byte back after each `n` bytes received.
    AckAfter { n: u64 },
    /// The matching client: `count` times, write `request` bytes and wait for
    /// `reply` bytes; then close.
    Request {
        request: usize,
        reply: usize,
        count: u64,
    },
}

impl AppSpec {
    /// Names and syntax, for help texts.
    pub const HELP: &'static str = "echo | discard | source:N | sink | blast:N | http:N | ack-after:N | request:N[:REPLY[:COUNT]] \
(sizes like 100MB, 33KB; sink and blast:N are discard and source:N without sha256, for benchmarks; http's N is the body, default 33KB; request's REPLY defaults to 1, COUNT to 100)";

    pub fn parse(s: &str) -> Result<AppSpec, String> {
        let (name, arg) = match s.split_once(':') {
            Some((n, a)) => (n, Some(a)),
            None => (s, None),
        };
        let need = |what: &str| {
            arg.ok_or_else(|| format!("app {name:?} needs {what}, e.g. {name}:100000"))
        };
        Ok(match name {
            "echo" => AppSpec::Echo,
            "discard" => AppSpec::Discard,
            "sink" => AppSpec::Sink,
            "blast" => AppSpec::Blast {
                bytes: parse_size(need("a byte count")?)?,
            },
            "source" => AppSpec::Source {
                bytes: parse_size(need("a byte count")?)?,
            },
            "http" => AppSpec::Http {
                body: match arg {
                    Some(a) => parse_size(a)? as usize,
                    None => 33 * 1024,
                },
            },
            "ack-after" => {
                let n = parse_size(need("a byte count")?)?;
                if n == 0 {
                    return Err("ack-after needs a positive byte count".into());
                }
                AppSpec::AckAfter { n }
            }
            "request" => {
                let a = need("a request size")?;
                let mut parts = a.split(':');
                let request = parse_size(parts.next().unwrap_or(""))? as usize;
                let reply = match parts.next() {
                    Some(r) => parse_size(r)? as usize,
                    None => 1,
                };
                let count = match parts.next() {
                    Some(c) => c.parse().map_err(|_| format!("bad request count {c:?}"))?,
                    None => 100,
                };
                if parts.next().is_some() || request == 0 || reply == 0 || count == 0 {
                    return Err(format!(
                        "bad request app {s:?}: expected request:N[:REPLY[:COUNT]], all positive"
                    ));
                }
                AppSpec::Request {
                    request,
                    reply,
                    count,
                }
            }
            _ => return Err(format!("unknown app {s:?} (expected {})", Self::HELP)),
        })
    }

    /// A fresh instance for one connection (`passive`: accepted by a listener).
    pub fn build(&self, _passive: bool) -> Box<dyn App> {
        match *self {
            AppSpec::Echo => Box::new(Echo::default()),
            AppSpec::Discard => Box::new(Discard {
                hash: true,
                ..Discard::default()
            }),
            AppSpec::Source { bytes } => Box::new(Source::new(bytes)),
            AppSpec::Sink => Box::new(Discard::default()),
            AppSpec::Blast { bytes } => Box::new(Source {
                repeat: true,
                ..Source::new(bytes)
            }),
            AppSpec::Http { body } => Box::new(Http::new(body)),
            AppSpec::AckAfter { n } => Box::new(AckAfter::new(n)),
            AppSpec::Request {
                request,
                reply,
                count,
            } => Box::new(Request::new(request, reply, count)),
        }
    }
}

impl fmt::Display for AppSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AppSpec::Echo => f.write_str("echo"),
            AppSpec::Discard => f.write_str("discard"),
            AppSpec::Source { bytes } => write!(f, "source:{bytes}"),
            AppSpec::Sink => f.write_str("sink"),
            AppSpec::Blast { bytes } => write!(f, "blast:{bytes}"),
            AppSpec::Http { body } => write!(f, "http:{body}"),
            AppSpec::AckAfter { n } => write!(f, "ack-after:{n}"),
            AppSpec::Request {
                request,
                reply,
                count,
            } => write!(f, "request:{request}:{reply}:{count}"),
        }
    }
}

/// "100000", "100KB" (1000s), "64KiB" (1024s), "1MB", "1GB".
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: u64 = num
        .parse()
        .map_err(|_| format!("bad size {s:?} (expected e.g. 100000, 33KB, 64KiB, 100MB)"))?;
    let mult: u64 = match unit.trim() {
        "" | "B" => 1,
        "KB" | "kB" | "K" | "k" => 1000,
        "KiB" => 1024,
        "MB" | "M" => 1_000_000,
        "MiB" => 1 << 20,
        "GB" | "G" => 1_000_000_000,
        "GiB" => 1 << 30,
        u => return Err(format!("bad size unit {u:?} in {s:?}")),
    };
    n.checked_mul(mult)
        .ok_or_else(|| format!("size {s:?} too large"))
}

/// What an application did, for the exit summary and tests.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AppResult {
    pub bytes_in: u64,
    pub bytes_out: u64,
    /// sha256 of every byte read, hex (discard, source, echo).
    pub sha256_in: Option<String>,
    /// sha256 of every byte written, hex (source, echo).
    pub sha256_out: Option<String>,
    /// Completed requests (http: responses queued; request client: replies received).
    pub transactions: u64,
    /// First request to last completed reply, seconds (request client).
    pub elapsed_s: f64,
}

impl AppResult {
    pub fn transactions_per_s(&self) -> f64 {
        if self.elapsed_s > 0.0 {
            self.transactions as f64 / self.elapsed_s
        } else {
            0.0
        }
    }
}

impl fmt::Display for AppResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} B in, {} B out", self.bytes_in, self.bytes_out)?;
        if self.transactions > 0 {
            write!(f, ", {} transactions", self.transactions)?;
            if self.elapsed_s > 0.0 {
                write!(
                    f,
                    " in {:.3} s ({:.1}/s)",
                    self.elapsed_s,
                    self.transactions_per_s()
                )?;
            }
        }
        if let Some(h) = &self.sha256_in {
            write!(f, "\n  sha256 in  {h}")?;
        }
        if let Some(h) = &self.sha256_out {
            write!(f, "\n  sha256 out {h}")?;
        }
        Ok(())
    }
}

/// An application on one connection.
pub trait App: Send {
    /// Runs after each batch of input and timers: read, write, close.
    fn step(&mut self, io: &mut AppIo<'_>);
    /// The application has nothing more to do (a client that finished).
    fn done(&self) -> bool {
        false
    }
    fn result(&self) -> AppResult;
}

/// Where a connection's output goes: the host frames and queues what the
/// engine emits. Apps never see the host, only this.
pub trait Transmit {
    /// Drains everything `conn` has to send now.
    fn transmit(&mut self, conn: &mut Connection, now: Instant);
}

/// The handle an application acts on its connection through: socket-like
/// calls; each write is pushed to the wire at once.
pub struct AppIo<'a> {
    conn: &'a mut Connection,
    now: Instant,
    out: &'a mut dyn Transmit,
}

impl<'a> AppIo<'a> {
    /// The handle for `conn` at `now`, whose output goes to `out`.
    pub fn new(conn: &'a mut Connection, now: Instant, out: &'a mut dyn Transmit) -> Self {
        AppIo { conn, now, out }
    }
    pub fn now(&self) -> Instant {
        self.now
    }
    pub fn state(&self) -> State {
        self.conn.state()
    }
    /// Data can flow: the handshake is done and we have not closed.
    pub fn writable(&self) -> bool {
        self.conn.send_space() > 0
            && matches!(self.conn.state(), State::Established | State::CloseWait)
    }
    /// One application write: queues what fits and lets the engine send now.
    pub fn write(&mut self, data: &[u8]) -> usize {
        if !matches!(self.conn.state(), State::Established | State::CloseWait) {
            return 0;
        }
        let n = self.conn.write(data, false).unwrap_or(0);
        if n > 0 {
            self.transmit();
        }
        n
    }
    /// Consumes up to `n` readable bytes, handing them to `f` in place.
    pub fn read_with(&mut self, n: usize, f: impl FnMut(&[u8])) -> usize {
        self.conn.read_with(n, f)
    }
    pub fn read_closed(&self) -> bool {
        self.conn.read_closed()
    }
    pub fn close(&mut self) {
        self.conn.close();
    }
    pub fn abort(&mut self) {
        self.conn.abort();
    }
    pub fn conn(&self) -> &Connection {
        self.conn
    }

    /// Sends what the engine has ready (after each write, and after the app's step).
    pub fn transmit(&mut self) {
        self.out.transmit(self.conn, self.now);
    }
}

fn hex(d: impl AsRef<[u8]>) -> String {
    d.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

/// Reads everything available into `f`; returns bytes read.
/// The bytes are handed to `f` where they lie in the receive buffer, not
/// copied out first (a read by reference, as smoltcp's `recv` closure).
fn read_all(io: &mut AppIo<'_>, f: impl FnMut(&[u8])) -> u64 {
    io.read_with(usize::MAX, f) as u64
}

/// Close our side once the peer closed and we have nothing left to send.
fn close_when_peer_did(io: &mut AppIo<'_>, nothing_pending: bool) {
    if io.read_closed() && nothing_pending && io.state() == State::CloseWait {
        io.close();
    }
}

#[derive(Default)]
struct Echo {
    pending: VecDeque<u8>,
    bytes_in: u64,
    bytes_out: u64,
    hash_in: Sha256,
}

impl App for Echo {
    fn step(&mut self, io: &mut AppIo<'_>) {
        let pending = &mut self.pending;
        let hash = &mut self.hash_in;
        self.bytes_in += read_all(io, |b| {
            hash.update(b);
            pending.extend(b);
        });
        while !self.pending.is_empty() && io.writable() {
            let (a, _) = self.pending.as_slices();
            let n = io.write(a);
            if n == 0 {
                break;
            }
            self.pending.drain(..n);
            self.bytes_out += n as u64;
        }
        close_when_peer_did(io, self.pending.is_empty());
    }
    fn result(&self) -> AppResult {
        AppResult {
            bytes_in: self.bytes_in,
            bytes_out: self.bytes_out,
            sha256_in: Some(hex(self.hash_in.clone().finalize())),
            ..AppResult::default()
        }
    }
}

#[derive(Default)]
struct Discard {
    bytes_in: u64,
    hash_in: Sha256,
    /// Hash what arrives (discard) or not (sink).
    hash: bool,
}

impl App for Discard {
    fn step(&mut self, io: &mut AppIo<'_>) {
        let hash = &mut self.hash_in;
        self.bytes_in += if self.hash {
            read_all(io, |b| hash.update(b))
        } else {
            read_all(io, |_| {})
        };
        close_when_peer_did(io, true);
    }
    fn done(&self) -> bool {
        false
    }
    fn result(&self) -> AppResult {
        AppResult {
            bytes_in: self.bytes_in,
            sha256_in: self.hash.then(|| hex(self.hash_in.clone().finalize())),
            ..AppResult::default()
        }
    }
}

/// A fixed pseudo-random stream (xorshift64), so both ends can check it.
pub struct StreamGen {
    state: u64,
    /// Generated bytes not yet handed out (the word generator makes 8 at a time).
    spare: Vec<u8>,
    block: Vec<u8>,
}

impl Default for StreamGen {
    fn default() -> Self {
        StreamGen {
            state: 0x9e37_79b9_7f4a_7c15,
            spare: Vec::new(),
            block: Vec::new(),
        }
    }
}

impl StreamGen {
    /// The next `n` bytes of the stream.
    pub fn next_block(&mut self, n: usize) -> &[u8] {
        self.block.clear();
        self.block.append(&mut self.spare);
        while self.block.len() < n {
            let mut x = self.state;
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            self.state = x;
            self.block.extend_from_slice(&x.to_le_bytes());
        }
        self.spare.extend_from_slice(&self.block[n..]);
        self.block.truncate(n);
        &self.block
    }
}

struct Source {
    total: u64,
    sent: u64,
    gen: StreamGen,
    /// Generated but not yet accepted by the send buffer: `carry[taken..]`
    /// (an offset, so a partial write moves nothing).
    carry: Vec<u8>,
    taken: usize,
    hash_out: Sha256,
    bytes_in: u64,
    closed: bool,
    /// One block over and over, no hash (blast) instead of the hashed stream.
    repeat: bool,
}

impl Source {
    fn new(total: u64) -> Source {
        Source {
            total,
            sent: 0,
            gen: StreamGen::default(),
            carry: Vec::new(),
            taken: 0,
            hash_out: Sha256::new(),
            bytes_in: 0,
            closed: false,
            repeat: false,
        }
    }
}

/// Source's write size: 64 KiB, a typical bulk writer's buffer.
const SOURCE_WRITE: usize = 64 * 1024;

impl App for Source {
    fn step(&mut self, io: &mut AppIo<'_>) {
        self.bytes_in += read_all(io, |_| {});
        while io.writable() && (self.sent < self.total || self.taken < self.carry.len()) {
            if self.taken == self.carry.len() {
                let n = (self.total - self.sent).min(SOURCE_WRITE as u64) as usize;
                if !self.repeat {
                    self.carry.clear();
                    self.carry.extend_from_slice(self.gen.next_block(n));
                } else if self.carry.len() != n {
                    // The block is made once (the last write may be shorter).
                    let block = self.gen.next_block(SOURCE_WRITE).to_vec();
                    self.carry = block[..n].to_vec();
                }
                self.taken = 0;
                self.sent += n as u64;
            }
            let n = io.write(&self.carry[self.taken..]);
            if n == 0 {
                break;
            }
            if !self.repeat {
                self.hash_out
                    .update(&self.carry[self.taken..self.taken + n]);
            }
            self.taken += n;
        }
        if !self.closed
            && self.sent == self.total
            && self.taken == self.carry.len()
            && matches!(io.state(), State::Established | State::CloseWait)
        {
            io.close();
            self.closed = true;
        }
    }
    fn done(&self) -> bool {
        self.closed
    }
    fn result(&self) -> AppResult {
        AppResult {
            bytes_in: self.bytes_in,
            bytes_out: self.sent - (self.carry.len() - self.taken) as u64,
            sha256_out: (!self.repeat).then(|| hex(self.hash_out.clone().finalize())),
            ..AppResult::default()
        }
    }
}

struct Http {
    body: usize,
    input: Vec<u8>,
    writes: VecDeque<Vec<u8>>,
    close_after: bool,
    bytes_in: u64,
    bytes_out: u64,
    responses: u64,
}

impl Http {
    fn new(body: usize) -> Http {
        Http {
            body,
            input: Vec::new(),
            writes: VecDeque::new(),
            close_after: false,
            bytes_in: 0,
            bytes_out: 0,
            responses: 0,
        }
    }

    /// Doupnik section 3: "two short write()'s followed by a succession of 4KB write()'s".
    fn respond(&mut self, head_only: bool) {
        self.writes
            .push_back(b"HTTP/1.1 200 OK\r\nServer: tinygram\r\n".to_vec());
        let conn = if self.close_after {
            "close"
        } else {
            "keep-alive"
        };
        self.writes.push_back(
            format!(
                "Content-Type: application/octet-stream\r\nContent-Length: {}\r\nConnection: {conn}\r\n\r\n",
                self.body
            )
            .into_bytes(),
        );
        if !head_only {
            let mut gen = StreamGen::default();
            let mut left = self.body;
            while left > 0 {
                let n = left.min(HTTP_BODY_WRITE);
                self.writes.push_back(gen.next_block(n).to_vec());
                left -= n;
            }
        }
        self.responses += 1;
    }
}

impl App for Http {
    fn step(&mut self, io: &mut AppIo<'_>) {
        let input = &mut self.input;
        self.bytes_in += read_all(io, |b| input.extend_from_slice(b));
        while !self.close_after {
            let Some(end) = self.input.windows(4).position(|w| w == b"\r\n\r\n") else {
                break;
            };
            let req: Vec<u8> = self.input.drain(..end + 4).collect();
            let text = String::from_utf8_lossy(&req).to_ascii_lowercase();
            let http10 = text.lines().next().is_some_and(|l| l.ends_with("http/1.0"));
            if text.contains("connection: close")
                || (http10 && !text.contains("connection: keep-alive"))
            {
                self.close_after = true;
            }
            self.respond(text.starts_with("head "));
        }
        while let Some(front) = self.writes.front_mut() {
            if !io.writable() {
                break;
            }
            let n = io.write(front);
            if n == 0 {
                break;
            }
            self.bytes_out += n as u64;
            front.drain(..n);
            if front.is_empty() {
                self.writes.pop_front();
            }
        }
        if self.writes.is_empty()
            && (self.close_after || io.read_closed())
            && matches!(io.state(), State::Established | State::CloseWait)
        {
            io.close();
        }
    }
    fn result(&self) -> AppResult {
        AppResult {
            bytes_in: self.bytes_in,
            bytes_out: self.bytes_out,
            transactions: self.responses,
            ..AppResult::default()
        }
    }
}

struct AckAfter {
    n: u64,
    bytes_in: u64,
    bytes_out: u64,
    owed: u64,
}

impl AckAfter {
    fn new(n: u64) -> AckAfter {
        AckAfter {
            n,
            bytes_in: 0,
            bytes_out: 0,
            owed: 0,
        }
    }
}

impl App for AckAfter {
    fn step(&mut self, io: &mut AppIo<'_>) {
        let before = self.bytes_in;
        self.bytes_in += read_all(io, |_| {});
        self.owed += self.bytes_in / self.n - before / self.n;
        while self.owed > 0 && io.writable() {
            if io.write(b"a") == 0 {
                break;
            }
            self.owed -= 1;
            self.bytes_out += 1;
        }
        close_when_peer_did(io, self.owed == 0);
    }
    fn result(&self) -> AppResult {
        AppResult {
            bytes_in: self.bytes_in,
            bytes_out: self.bytes_out,
            transactions: self.bytes_out,
            ..AppResult::default()
        }
    }
}

struct Request {
    request: usize,
    reply: usize,
    count: u64,
    /// Bytes of the current request not yet written.
    to_write: usize,
    /// Bytes of the current reply still expected.
    awaiting: usize,
    done_count: u64,
    started: Option<Instant>,
    last: Option<Instant>,
    bytes_in: u64,
    bytes_out: u64,
    closed: bool,
    gen: StreamGen,
}

impl Request {
    fn new(request: usize, reply: usize, count: u64) -> Request {
        Request {
            request,
            reply,
            count,
            to_write: 0,
            awaiting: 0,
            done_count: 0,
            started: None,
            last: None,
            bytes_in: 0,
            bytes_out: 0,
            closed: false,
            gen: StreamGen::default(),
        }
    }
}

impl App for Request {
    fn step(&mut self, io: &mut AppIo<'_>) {
        if !matches!(io.state(), State::Established | State::CloseWait) {
            // Still connecting, or closing: just drain input.
            self.bytes_in += read_all(io, |_| {});
            return;
        }
        loop {
            let got = read_all(io, |_| {});
            self.bytes_in += got;
            let mut got = got as usize;
            while got > 0 && self.awaiting > 0 {
                let k = got.min(self.awaiting);
                self.awaiting -= k;
                got -= k;
                if self.awaiting == 0 {
                    self.done_count += 1;
                    self.last = Some(io.now());
                }
            }
            if self.to_write == 0 && self.awaiting == 0 && self.done_count < self.count {
                self.started.get_or_insert(io.now());
                self.to_write = self.request;
                self.awaiting = self.reply;
            }
            let mut progressed = false;
            while self.to_write > 0 && io.writable() {
                let n = self.to_write.min(64 * 1024);
                let block = self.gen.next_block(n).to_vec();
                let w = io.write(&block);
                if w == 0 {
                    break;
                }
                // Bytes not accepted are regenerated next time: the stream only
                // matters to the server as a count.
                self.to_write -= w;
                self.bytes_out += w as u64;
                progressed = true;
            }
            if !progressed || self.to_write > 0 {
                break;
            }
            if io.conn().recv_available() == 0 {
                break;
            }
        }
        if self.done_count >= self.count && !self.closed {
            io.close();
            self.closed = true;
        }
        if io.read_closed() && !self.closed {
            io.close();
            self.closed = true;
        }
    }
    fn done(&self) -> bool {
        self.closed
    }
    fn result(&self) -> AppResult {
        let elapsed_s = match (self.started, self.last) {
            (Some(a), Some(b)) => (b - a).as_secs_f64(),
            _ => 0.0,
        };
        AppResult {
            bytes_in: self.bytes_in,
            bytes_out: self.bytes_out,
            transactions: self.done_count,
            elapsed_s,
            ..AppResult::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_app() {
        assert_eq!(AppSpec::parse("echo"), Ok(AppSpec::Echo));
        assert_eq!(
            AppSpec::parse("source:100MB"),
            Ok(AppSpec::Source { bytes: 100_000_000 })
        );
        assert_eq!(
            AppSpec::parse("http"),
            Ok(AppSpec::Http { body: 33 * 1024 })
        );
        assert_eq!(
            AppSpec::parse("http:33000"),
            Ok(AppSpec::Http { body: 33000 })
        );
        assert_eq!(
            AppSpec::parse("ack-after:100000"),
            Ok(AppSpec::AckAfter { n: 100_000 })
        );
        assert_eq!(
            AppSpec::parse("request:100000"),
            Ok(AppSpec::Request {
                request: 100_000,
                reply: 1,
                count: 100
            })
        );
        assert_eq!(
            AppSpec::parse("request:10:2:5"),
            Ok(AppSpec::Request {
                request: 10,
                reply: 2,
                count: 5
            })
        );
        assert_eq!(AppSpec::parse("sink"), Ok(AppSpec::Sink));
        assert_eq!(
            AppSpec::parse("blast:1GB"),
            Ok(AppSpec::Blast {
                bytes: 1_000_000_000
            })
        );
        assert!(AppSpec::parse("blast").is_err());
        for spec in ["sink", "blast:5", "source:5", "discard"] {
            assert_eq!(AppSpec::parse(spec).unwrap().to_string(), spec);
        }
        assert!(AppSpec::parse("source").is_err());
        assert!(AppSpec::parse("ack-after:0").is_err());
        assert!(AppSpec::parse("bogus").is_err());
        assert!(AppSpec::parse("request:1:1:1:1").is_err());
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("64KiB"), Ok(65536));
        assert_eq!(parse_size("33KB"), Ok(33000));
        assert!(parse_size("1XB").is_err());
        assert!(parse_size("").is_err());
    }

    #[test]
    fn stream_is_deterministic_across_block_sizes() {
        let mut a = StreamGen::default();
        let whole = a.next_block(24).to_vec();
        let mut b = StreamGen::default();
        let mut parts = b.next_block(3).to_vec();
        parts.extend_from_slice(b.next_block(13));
        parts.extend_from_slice(b.next_block(8));
        assert_eq!(whole, parts);
    }
}
