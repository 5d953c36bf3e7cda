//! `tinygram bench tun` (root): tinygram over a TUN device against the
//! kernel's TCP in a network namespace, and the kernel against itself over a
//! veth pair between two namespaces, in interleaved rounds: bulk transfers
//! (Gbit/s, per MTU, the veth with its offloads on and off) and 100-byte
//! request/response with TCP_NODELAY (transactions/s). Each case prints
//! both sides' medians and the ratio tinygram/kernel, its minimum and
//! median over the rounds (ratios taken within a round).

use std::io::{Read, Write};
use std::net::{Ipv4Addr, Shutdown, SocketAddrV4, TcpListener, TcpStream};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU16, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use tinygram_net::{AppSpec, DeviceConfig, Role, RunOptions, TunOptions};
use tinygram_proto::Config;

/// What to measure.
#[derive(Clone, Debug)]
pub struct TunBench {
    pub rounds: usize,
    /// Bytes per bulk transfer.
    pub bytes: u64,
    /// Length of one request/response measurement.
    pub rr_time: Duration,
    /// MTUs of the bulk cases.
    pub mtus: Vec<u16>,
    /// tinygram's device settings.
    pub tun: TunOptions,
}

/// tinygram's and the kernel's addresses on the TUN device; the veth pair's.
const TG: Ipv4Addr = Ipv4Addr::new(10, 201, 0, 2);
const TG_KERNEL: Ipv4Addr = Ipv4Addr::new(10, 201, 0, 1);
const VETH_SERVER: Ipv4Addr = Ipv4Addr::new(10, 202, 0, 1);
const VETH_CLIENT: Ipv4Addr = Ipv4Addr::new(10, 202, 0, 2);
/// Bytes of each request and each response.
const RR_SIZE: usize = 100;
/// No single transfer may take longer than this.
const LIMIT: Duration = Duration::from_secs(300);

/// Why this machine cannot run the benchmark, if it cannot.
fn unavailable() -> Option<String> {
    tinygram_net::netns::unavailable().map(|why| {
        format!(
            "bench tun needs namespaces, a veth pair and a TUN device: {why} (run it with sudo)"
        )
    })
}

/// A network namespace of crates/net's, deleted on drop.
struct Netns(tinygram_net::netns::Netns);

impl Netns {
    fn new(tag: &str) -> Result<Netns, String> {
        tinygram_net::netns::Netns::new(tag)
            .map(Netns)
            .map_err(|e| e.to_string())
    }
    /// Runs `f` on a thread inside this namespace.
    fn spawn<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> Result<T, String> + Send + 'static,
    ) -> JoinHandle<Result<T, String>> {
        let name = self.0.name().to_string();
        std::thread::spawn(move || {
            tinygram_net::netns::enter(&name).map_err(|e| e.to_string())?;
            f()
        })
    }
}

fn join<T>(h: JoinHandle<Result<T, String>>) -> Result<T, String> {
    h.join()
        .map_err(|_| "a benchmark thread panicked".to_string())?
}

/// Two namespaces joined by a veth pair: the kernel against itself.
struct Veth {
    server: Netns,
    client: Netns,
}

impl Veth {
    fn new(mtu: u16, offloads: bool) -> Result<Veth, String> {
        let tag = format!("{mtu}{}", if offloads { "on" } else { "off" });
        let server = Netns::new(&format!("bs{tag}"))?;
        let client = Netns::new(&format!("bc{tag}"))?;
        let e = |e: std::io::Error| e.to_string();
        server
            .0
            .add_veth("tgbv0", &client.0, "tgbv1", mtu)
            .map_err(e)?;
        for (ns, dev, addr) in [
            (&server, "tgbv0", VETH_SERVER),
            (&client, "tgbv1", VETH_CLIENT),
        ] {
            ns.0.addr_up(dev, &format!("{addr}/24"), mtu).map_err(e)?;
            if !offloads {
                ns.0.exec(&[
                    "ethtool", "-K", dev, "tso", "off", "gso", "off", "gro", "off", "tx", "off",
                    "rx", "off",
                ])
                .map_err(|e| format!("turning the veth's offloads off needs ethtool: {e}"))?;
            }
        }
        Ok(Veth { server, client })
    }
}

fn next_port() -> u16 {
    static PORT: AtomicU16 = AtomicU16::new(20000);
    PORT.fetch_add(1, Ordering::Relaxed)
}

/// Reads to EOF; the bytes and the time from `start`.
fn sink(mut s: TcpStream, start: Instant) -> Result<(u64, Duration), String> {
    let mut buf = vec![0u8; 256 * 1024];
    let mut n = 0u64;
    loop {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(k) => n += k as u64,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(format!("kernel sink: {e}")),
        }
    }
    Ok((n, start.elapsed()))
}

/// Writes `bytes`, half-closes, waits for the peer's EOF.
fn source(mut s: TcpStream, bytes: u64) -> Result<(), String> {
    let buf = vec![0x5au8; 128 * 1024];
    let mut left = bytes;
    while left > 0 {
        let k = left.min(buf.len() as u64) as usize;
        s.write_all(&buf[..k])
            .map_err(|e| format!("kernel source: {e}"))?;
        left -= k as u64;
    }
    s.shutdown(Shutdown::Write)
        .map_err(|e| format!("kernel source: {e}"))?;
    let mut b = [0u8; 4096];
    while s.read(&mut b).map_err(|e| format!("kernel source: {e}"))? > 0 {}
    Ok(())
}

/// Requests of 100 bytes, each waiting for its 100-byte answer, for `time`.
fn rr_client(mut s: TcpStream, time: Duration) -> Result<f64, String> {
    s.set_nodelay(true).map_err(|e| e.to_string())?;
    s.set_read_timeout(Some(Duration::from_secs(10)))
        .map_err(|e| e.to_string())?;
    let req = [0x42u8; RR_SIZE];
    let mut resp = [0u8; RR_SIZE];
    let start = Instant::now();
    let mut n = 0u64;
    while start.elapsed() < time {
        s.write_all(&req).map_err(|e| format!("rr client: {e}"))?;
        s.read_exact(&mut resp)
            .map_err(|e| format!("rr client: {e}"))?;
        if resp != req {
            return Err("rr client: the answer is not the request echoed".into());
        }
        n += 1;
    }
    let rate = n as f64 / start.elapsed().as_secs_f64();
    let _ = s.shutdown(Shutdown::Write);
    let mut b = [0u8; 64];
    while s.read(&mut b).unwrap_or(0) > 0 {}
    Ok(rate)
}

/// Echoes 100-byte requests until EOF.
fn rr_server(mut s: TcpStream) -> Result<(), String> {
    s.set_nodelay(true).map_err(|e| e.to_string())?;
    let mut b = [0u8; RR_SIZE];
    loop {
        match s.read_exact(&mut b) {
            Ok(()) => s.write_all(&b).map_err(|e| format!("rr server: {e}"))?,
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(()),
            Err(e) => return Err(format!("rr server: {e}")),
        }
    }
}

fn gbps(bytes: u64, d: Duration) -> f64 {
    bytes as f64 * 8.0 / d.as_secs_f64() / 1e9
}

fn listen(addr: Ipv4Addr, port: u16) -> Result<TcpListener, String> {
    TcpListener::bind(SocketAddrV4::new(addr, port)).map_err(|e| format!("bind {addr}:{port}: {e}"))
}

/// Kernel to kernel over the veth: bulk, measured at the receiver.
fn veth_bulk(v: &Veth, bytes: u64) -> Result<f64, String> {
    let port = next_port();
    let (tx, rx) = mpsc::channel();
    let server = v.server.spawn(move || {
        let l = listen(VETH_SERVER, port)?;
        let _ = tx.send(());
        let (s, _) = l.accept().map_err(|e| e.to_string())?;
        sink(s, Instant::now())
    });
    rx.recv_timeout(Duration::from_secs(10))
        .map_err(|_| "the veth server did not start".to_string())?;
    let client = v.client.spawn(move || {
        let s = TcpStream::connect(SocketAddrV4::new(VETH_SERVER, port))
            .map_err(|e| format!("connect over veth: {e}"))?;
        source(s, bytes)
    });
    join(client)?;
    let (n, d) = join(server)?;
    if n != bytes {
        return Err(format!("veth sink got {n} of {bytes} bytes"));
    }
    Ok(gbps(n, d))
}

/// Kernel to kernel over the veth: 100-byte request/response.
fn veth_rr(v: &Veth, time: Duration) -> Result<f64, String> {
    let port = next_port();
    let (tx, rx) = mpsc::channel();
    let server = v.server.spawn(move || {
        let l = listen(VETH_SERVER, port)?;
        let _ = tx.send(());
        let (s, _) = l.accept().map_err(|e| e.to_string())?;
        rr_server(s)
    });
    rx.recv_timeout(Duration::from_secs(10))
        .map_err(|_| "the veth server did not start".to_string())?;
    let client = v.client.spawn(move || {
        let s = TcpStream::connect(SocketAddrV4::new(VETH_SERVER, port))
            .map_err(|e| format!("connect over veth: {e}"))?;
        rr_client(s, time)
    });
    let r = join(client)?;
    join(server)?;
    Ok(r)
}

/// tinygram's settings for a run: Linux's options, 4 MiB buffers (Linux
/// autotunes up to 4-6 MiB), MSS from the MTU.
fn tg_config(mtu: u16, nodelay: bool) -> Result<Config, String> {
    let mut c = Config {
        mss: mtu - 40,
        rcv_buf: 4 << 20,
        snd_buf: 4 << 20,
        ..Config::default()
    };
    for o in crate::tun::LINUX_DEFAULT_OPTIONS {
        c.options.enable(o)?;
    }
    if nodelay {
        c.send_policy = "nodelay".parse().map_err(|e: String| e)?;
    }
    Ok(c)
}

/// A tinygram run on its thread.
type TinygramRun = JoinHandle<Result<tinygram_net::RunReport, String>>;

/// tinygram on a TUN device in `ns`: the device is opened, then `ready`
/// says so, then the run waits for `go` (so a kernel listener can bind the
/// device's address first).
fn start_tinygram(
    ns: &Netns,
    mtu: u16,
    config: Config,
    role: Role,
    tun: TunOptions,
) -> Result<(TinygramRun, mpsc::Sender<()>), String> {
    let opts = RunOptions {
        device: DeviceConfig {
            name: "tgb0".into(),
            addr: TG,
            prefix: 24,
            kernel_addr: TG_KERNEL,
            mtu,
        },
        config,
        role,
        pcap: None,
        duration: Some(LIMIT),
        status: false,
        stop: Arc::new(AtomicBool::new(false)),
        backlog: tinygram_net::host::DEFAULT_BACKLOG,
    };
    let (ready_tx, ready_rx) = mpsc::channel();
    let (go_tx, go_rx) = mpsc::channel::<()>();
    let h = ns.spawn(move || {
        let dev = tinygram_net::Tun::open_with(&opts.device, tun);
        let dev = match dev {
            Ok(d) => d,
            Err(e) => {
                let _ = ready_tx.send(Err(e.to_string()));
                return Err(format!("open the TUN device: {e}"));
            }
        };
        let _ = ready_tx.send(Ok(()));
        go_rx
            .recv_timeout(Duration::from_secs(10))
            .map_err(|_| "no go".to_string())?;
        tinygram_net::run_on(&dev, &opts).map_err(|e| e.to_string())
    });
    match ready_rx.recv_timeout(Duration::from_secs(10)) {
        Ok(Ok(())) => Ok((h, go_tx)),
        Ok(Err(e)) => Err(format!("cannot open the TUN device: {e}")),
        Err(_) => Err("the TUN device did not open within 10 s".into()),
    }
}

fn tg_ok(r: Result<tinygram_net::RunReport, String>) -> Result<tinygram_net::RunReport, String> {
    let r = r?;
    if let Some(e) = r.conns.iter().find_map(|c| c.error.clone()) {
        return Err(format!("tinygram's connection failed: {e}"));
    }
    Ok(r)
}

/// tinygram sends `bytes` (`blast`: no hashing, like the kernel-side
/// writer) to a kernel sink; measured at the kernel.
fn tun_bulk_out(ns: &Netns, mtu: u16, bytes: u64, tun: TunOptions) -> Result<f64, String> {
    let port = next_port();
    let role = Role::Connect {
        to: SocketAddrV4::new(TG_KERNEL, port),
        app: AppSpec::Blast { bytes },
        local_port: None,
    };
    let (tg, go) = start_tinygram(ns, mtu, tg_config(mtu, false)?, role, tun)?;
    let (tx, rx) = mpsc::channel();
    let server = ns.spawn(move || {
        let l = listen(TG_KERNEL, port)?;
        let _ = tx.send(());
        let (s, _) = l.accept().map_err(|e| e.to_string())?;
        sink(s, Instant::now())
    });
    rx.recv_timeout(Duration::from_secs(10))
        .map_err(|_| "the kernel sink did not start".to_string())?;
    let _ = go.send(());
    let (n, d) = join(server)?;
    tg_ok(join(tg))?;
    if n != bytes {
        return Err(format!(
            "kernel sink got {n} of {bytes} bytes from tinygram"
        ));
    }
    Ok(gbps(n, d))
}

/// The kernel sends `bytes` to tinygram's `sink` server (no hashing, like
/// the kernel-side reader); measured at the
/// kernel, from connect to tinygram's FIN.
fn tun_bulk_in(ns: &Netns, mtu: u16, bytes: u64, tun: TunOptions) -> Result<f64, String> {
    let port = next_port();
    let role = Role::Serve {
        port,
        app: AppSpec::Sink,
        conns: Some(1),
    };
    let (tg, go) = start_tinygram(ns, mtu, tg_config(mtu, false)?, role, tun)?;
    let _ = go.send(());
    let client = ns.spawn(move || {
        let start = Instant::now();
        let s = TcpStream::connect(SocketAddrV4::new(TG, port))
            .map_err(|e| format!("connect to tinygram: {e}"))?;
        source(s, bytes)?;
        Ok(start.elapsed())
    });
    let d = join(client)?;
    let r = tg_ok(join(tg))?;
    let got = r
        .conns
        .iter()
        .map(|c| c.app.bytes_in)
        .max()
        .unwrap_or(r.closed.bytes_in);
    if got < bytes {
        return Err(format!("tinygram got {got} of {bytes} bytes"));
    }
    Ok(gbps(bytes, d))
}

/// A kernel client's 100-byte requests to tinygram's echo server.
fn tun_rr(ns: &Netns, time: Duration, tun: TunOptions) -> Result<f64, String> {
    let port = next_port();
    let role = Role::Serve {
        port,
        app: AppSpec::parse("echo")?,
        conns: Some(1),
    };
    let (tg, go) = start_tinygram(ns, 1500, tg_config(1500, true)?, role, tun)?;
    let _ = go.send(());
    let client = ns.spawn(move || {
        let s = TcpStream::connect(SocketAddrV4::new(TG, port))
            .map_err(|e| format!("connect to tinygram: {e}"))?;
        rr_client(s, time)
    });
    let r = join(client)?;
    tg_ok(join(tg))?;
    Ok(r)
}

/// One line of the result table: a case measured on both sides each round.
struct Case {
    name: String,
    unit: &'static str,
    kernel: Vec<f64>,
    tinygram: Vec<f64>,
}

fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

impl Case {
    /// Ratios tinygram/kernel within each round: (min, median).
    fn ratios(&self) -> (f64, f64) {
        let r: Vec<f64> = self
            .kernel
            .iter()
            .zip(&self.tinygram)
            .map(|(k, t)| t / k)
            .collect();
        let min = r.iter().copied().fold(f64::INFINITY, f64::min);
        (min, median(&r))
    }
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

/// The table: per case, each side's median, the ratio's min and median.
fn table(cases: &[Case]) -> String {
    let mut s = format!(
        "{:<50} {:>16} {:>16} {:>18}\n",
        "case", "kernel (veth)", "tinygram (TUN)", "ratio min/median"
    );
    for c in cases {
        if c.kernel.is_empty() {
            continue;
        }
        let (min, med) = c.ratios();
        s += &format!(
            "{:<50} {:>16} {:>16} {:>18}\n",
            c.name,
            format!("{} {}", fmt_val(median(&c.kernel), c.unit), c.unit),
            format!("{} {}", fmt_val(median(&c.tinygram), c.unit), c.unit),
            format!("{min:.2}x / {med:.2}x"),
        );
    }
    s
}

fn fmt_val(v: f64, unit: &str) -> String {
    if unit == "Gbit/s" {
        format!("{v:.2}")
    } else {
        format!("{:.1}k", v / 1e3)
    }
}

/// `tinygram bench tun`.
pub fn run(b: &TunBench) -> ExitCode {
    if let Some(why) = unavailable() {
        eprintln!("error: {why}");
        return ExitCode::from(2);
    }
    if b.rounds == 0 {
        eprintln!("error: --rounds must be at least 1");
        return ExitCode::from(2);
    }
    if let Some(m) = b.mtus.iter().find(|&&m| !(576..=65535).contains(&m)) {
        eprintln!("error: --mtu {m}: expected 576 to 65535");
        return ExitCode::from(2);
    }
    match measure(b) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn measure(b: &TunBench) -> Result<(), String> {
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    println!(
        "bench tun: {} round(s), bulk {} bytes per transfer, request/response {} B for {:.1} s; tinygram offloads {}, busy-poll {}; {cpus} CPU(s), load average {} at start",
        b.rounds,
        b.bytes,
        RR_SIZE,
        b.rr_time.as_secs_f64(),
        if b.tun.offload { "on" } else { "off" },
        if b.tun.busy_poll { "on" } else { "off" },
        loadavg()
    );
    let tg_ns = Netns::new("tun")?;
    let mut veths = Vec::new();
    let mut cases = Vec::new();
    for &mtu in &b.mtus {
        for offloads in [true, false] {
            veths.push((mtu, offloads, Veth::new(mtu, offloads)?));
            let off = if offloads { "on" } else { "off" };
            cases.push(Case {
                name: format!("bulk MTU {mtu}, tinygram->kernel (veth offl. {off})"),
                unit: "Gbit/s",
                kernel: vec![],
                tinygram: vec![],
            });
            cases.push(Case {
                name: format!("bulk MTU {mtu}, kernel->tinygram (veth offl. {off})"),
                unit: "Gbit/s",
                kernel: vec![],
                tinygram: vec![],
            });
        }
    }
    cases.push(Case {
        name: "100 B request/response, NODELAY".into(),
        unit: "trans/s",
        kernel: vec![],
        tinygram: vec![],
    });
    let rr_veth = Veth::new(1500, true)?;
    for round in 1..=b.rounds {
        let mut k = 0;
        for (mtu, _, veth) in &veths {
            // One kernel measurement serves both directions' rows (the veth
            // is symmetric); each tinygram direction is measured on its own.
            let kern = veth_bulk(veth, b.bytes)?;
            let out = tun_bulk_out(&tg_ns, *mtu, b.bytes, b.tun)?;
            let inn = tun_bulk_in(&tg_ns, *mtu, b.bytes, b.tun)?;
            for (i, t) in [out, inn].into_iter().enumerate() {
                let c = &mut cases[k + i];
                c.kernel.push(kern);
                c.tinygram.push(t);
                eprintln!(
                    "round {round}: {:<50} kernel {kern:.2} Gbit/s, tinygram {t:.2} Gbit/s ({:.2}x)",
                    c.name,
                    t / kern
                );
            }
            k += 2;
        }
        let kern = veth_rr(&rr_veth, b.rr_time)?;
        let t = tun_rr(&tg_ns, b.rr_time, b.tun)?;
        let c = &mut cases[k];
        c.kernel.push(kern);
        c.tinygram.push(t);
        eprintln!(
            "round {round}: {:<50} kernel {kern:.0}/s, tinygram {t:.0}/s ({:.2}x)",
            c.name,
            t / kern
        );
    }
    print!("{}", table(&cases));
    println!("load average {} at the end", loadavg());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_are_taken_within_rounds() {
        let c = Case {
            name: "x".into(),
            unit: "Gbit/s",
            kernel: vec![2.0, 4.0, 1.0],
            tinygram: vec![1.0, 4.0, 1.5],
        };
        // Per round: 0.5, 1.0, 1.5.
        assert_eq!(c.ratios(), (0.5, 1.0));
        assert_eq!(median(&[3.0, 1.0, 2.0, 10.0]), 2.5);
        let t = table(&[c]);
        assert!(
            t.contains("2.00 Gbit/s") && t.contains("1.50 Gbit/s"),
            "{t}"
        );
        assert!(t.contains("0.50x / 1.00x"), "{t}");
    }
}
