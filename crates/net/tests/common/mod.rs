//! Test rig for the real-wire tests: network namespaces made and removed by
//! each test, tinygram's host run in a thread that entered the namespace, and
//! the kernel's side as `python3 peer.py` under `ip netns exec` and `timeout`.
#![allow(dead_code)]

use serde_json::Value;
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::net::{Ipv4Addr, SocketAddrV4};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;
use tinygram_net::{AppSpec, DeviceConfig, Role, RunOptions, RunReport, TunOptions};
use tinygram_proto::Config;

/// tinygram's address and the kernel's, inside every test namespace.
pub const TG: Ipv4Addr = Ipv4Addr::new(10, 7, 0, 2);
pub const KERNEL: Ipv4Addr = Ipv4Addr::new(10, 7, 0, 1);

/// Prints past the test harness's capture, so skips and measurements show in CI logs.
pub fn say(msg: &str) {
    let _ = writeln!(std::io::stderr(), "{msg}");
}

/// One test at a time: they measure time and share two cores.
pub fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

fn have(cmd: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {cmd}")])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Why these tests cannot run here, if they cannot (probed once per process:
/// tests run in parallel threads and must not race on the probe namespace).
pub fn unavailable() -> Option<String> {
    static WHY: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    WHY.get_or_init(probe).clone()
}

fn probe() -> Option<String> {
    if let Some(why) = tinygram_net::netns::unavailable() {
        return Some(why);
    }
    for cmd in ["python3", "timeout"] {
        if !have(cmd) {
            return Some(format!("`{cmd}` is not installed"));
        }
    }
    None
}

/// Set to `require` (CI does, as root) to make a test that cannot run here
/// fail instead of skipping.
pub const REQUIRE_ENV: &str = "TINYGRAM_REAL_WIRE";

/// The line a skipped test prints, or a panic when [`REQUIRE_ENV`] is `require`.
/// The line starts and ends with a newline so that it never runs into the
/// harness's own `test NAME ... ok` output, which parallel tests interleave.
pub fn skip(name: &str, why: &str) {
    if std::env::var(REQUIRE_ENV).is_ok_and(|v| v == "require") {
        panic!("{name} cannot run here and {REQUIRE_ENV}=require: {why}");
    }
    say(&format!(
        "\nSKIPPED {name}: {why} (set {REQUIRE_ENV}=require to fail instead)"
    ));
}

/// Skips (with the reason printed) when the machine cannot run real-wire tests.
#[macro_export]
macro_rules! require_real_wire {
    ($name:expr) => {
        if let Some(why) = common::unavailable() {
            common::skip($name, &why);
            return;
        }
    };
}

/// A network namespace (crates/net's, deleted on drop, also when the test
/// panics) with the test rig's shell and python peers.
pub struct Netns {
    pub name: String,
    pub ns: tinygram_net::netns::Netns,
}

impl Netns {
    pub fn new(tag: &str) -> Netns {
        let ns = tinygram_net::netns::Netns::new(tag)
            .unwrap_or_else(|e| panic!("make a namespace: {e}"));
        Netns {
            name: ns.name().to_string(),
            ns,
        }
    }

    /// `ip netns exec NAME sh -c CMD`, which must succeed.
    pub fn sh(&self, cmd: &str) -> String {
        sh(&format!("ip netns exec {} sh -c '{cmd}'", self.name))
    }

    /// `python3 tests/py/SCRIPT ARGS` in this namespace, killed after `limit_s`.
    pub fn python(&self, script: &str, args: &[String], limit_s: u32) -> Peer {
        self.python_env(script, args, limit_s, &[])
    }

    /// [`python`](Self::python) with extra environment variables.
    pub fn python_env(
        &self,
        script: &str,
        args: &[String],
        limit_s: u32,
        env: &[(&str, &std::path::Path)],
    ) -> Peer {
        let path = py(script);
        let mut child = Command::new("ip")
            .args(["netns", "exec", &self.name, "timeout", &limit_s.to_string()])
            .arg("python3")
            .arg(path)
            .args(args)
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn python3");
        let (tx, rx) = mpsc::channel();
        let stdout = child.stdout.take().expect("piped");
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        Peer { child, lines: rx }
    }

    /// The kernel's side of the python peer (`peer.py`).
    pub fn peer(&self, role: &str, addr: Ipv4Addr, port: u16, action: &str, limit_s: u32) -> Peer {
        let p = self.python(
            "peer.py",
            &peer_args(role, addr, port, action, limit_s),
            limit_s + 5,
        );
        if role == "listen" {
            p.expect_line("listening", 10);
        }
        p
    }

    /// A connecting `peer.py` that, once connected, waits for `gate` to exist
    /// before it starts its action.
    pub fn gated_peer(
        &self,
        addr: Ipv4Addr,
        port: u16,
        action: &str,
        limit_s: u32,
        gate: &std::path::Path,
    ) -> Peer {
        let args = peer_args("connect", addr, port, action, limit_s);
        self.python_env("peer.py", &args, limit_s + 5, &[("PEER_GATE", gate)])
    }
}

fn peer_args(role: &str, addr: Ipv4Addr, port: u16, action: &str, limit_s: u32) -> Vec<String> {
    vec![
        role.to_string(),
        addr.to_string(),
        port.to_string(),
        action.to_string(),
        limit_s.to_string(),
    ]
}

pub fn sh(cmd: &str) -> String {
    let out = Command::new("sh")
        .args(["-c", cmd])
        .output()
        .expect("run sh");
    assert!(
        out.status.success(),
        "`{cmd}` failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn py(script: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/py")
        .join(script)
}

/// A running python peer: its stdout lines.
pub struct Peer {
    child: Child,
    lines: mpsc::Receiver<String>,
}

impl Peer {
    /// Waits for a line containing `what`.
    pub fn expect_line(&self, what: &str, secs: u64) -> String {
        loop {
            match self.lines.recv_timeout(Duration::from_secs(secs)) {
                Ok(l) if l.contains(what) => return l,
                Ok(_) => continue,
                Err(e) => panic!("peer did not print {what:?} within {secs} s: {e}"),
            }
        }
    }

    /// The peer's final JSON line (it exits on its own, bounded by `timeout`).
    pub fn finish(mut self) -> Value {
        let mut last = None;
        while let Ok(l) = self.lines.recv_timeout(Duration::from_secs(120)) {
            last = Some(l);
        }
        let _ = self.child.wait();
        let l = last.expect("peer printed a result");
        serde_json::from_str(&l).unwrap_or_else(|e| panic!("bad peer output {l:?}: {e}"))
    }
}

/// tinygram's host, running in a thread inside a namespace.
pub struct Tinygram {
    handle: Option<JoinHandle<RunReport>>,
    pub stop: Arc<AtomicBool>,
}

impl Tinygram {
    /// Opens tg0 in `ns` (tinygram 10.7.0.2/24, kernel 10.7.0.1) and runs `role`,
    /// for at most `limit`.
    pub fn start(ns: &Netns, config: Config, role: Role, mtu: u16, limit: Duration) -> Tinygram {
        Self::start_captured(ns, config, role, mtu, limit, None)
    }

    /// [`start`](Self::start), recording every packet to `pcap` (tinygram's `--pcap`).
    pub fn start_captured(
        ns: &Netns,
        config: Config,
        role: Role,
        mtu: u16,
        limit: Duration,
        pcap: Option<PathBuf>,
    ) -> Tinygram {
        Self::start_tun(ns, config, role, mtu, limit, pcap, TunOptions::default())
    }

    /// [`start_captured`](Self::start_captured) with the device's offload
    /// and polling settings.
    pub fn start_tun(
        ns: &Netns,
        config: Config,
        role: Role,
        mtu: u16,
        limit: Duration,
        pcap: Option<PathBuf>,
        tun: TunOptions,
    ) -> Tinygram {
        let stop = Arc::new(AtomicBool::new(false));
        let opts = RunOptions {
            device: DeviceConfig {
                name: "tg0".into(),
                addr: TG,
                prefix: 24,
                kernel_addr: KERNEL,
                mtu,
            },
            config,
            role,
            pcap,
            duration: Some(limit),
            status: false,
            stop: stop.clone(),
            backlog: tinygram_net::host::DEFAULT_BACKLOG,
        };
        let (ready_tx, ready_rx) = mpsc::channel();
        let handle = in_netns(&ns.name, move || {
            let tun = match tinygram_net::Tun::open_with(&opts.device, tun) {
                Ok(t) => t,
                Err(e) => {
                    let _ = ready_tx.send(Err(e.to_string()));
                    panic!("open tg0: {e}");
                }
            };
            let _ = ready_tx.send(Ok(()));
            tinygram_net::run_on(&tun, &opts).expect("tinygram run")
        });
        match ready_rx.recv_timeout(Duration::from_secs(10)) {
            Ok(Ok(())) => {}
            Ok(Err(e)) => panic!("cannot open the TUN device: {e}"),
            Err(_) => panic!("the TUN device did not open within 10 s"),
        }
        Tinygram {
            handle: Some(handle),
            stop,
        }
    }

    pub fn serve(ns: &Netns, config: Config, port: u16, app: &str, conns: u64) -> Tinygram {
        Self::start(
            ns,
            config,
            Role::Serve {
                port,
                app: AppSpec::parse(app).unwrap(),
                conns: Some(conns),
            },
            1500,
            Duration::from_secs(60),
        )
    }

    pub fn connect(ns: &Netns, config: Config, port: u16, app: &str) -> Tinygram {
        Self::start(
            ns,
            config,
            Role::Connect {
                to: SocketAddrV4::new(KERNEL, port),
                app: AppSpec::parse(app).unwrap(),
                local_port: None,
            },
            1500,
            Duration::from_secs(60),
        )
    }

    /// Waits for the run to end by itself.
    pub fn join(mut self) -> RunReport {
        self.handle
            .take()
            .unwrap()
            .join()
            .expect("tinygram thread panicked")
    }

    /// Asks the run to stop (live connections are aborted) and waits.
    pub fn stop(self) -> RunReport {
        self.stop.store(true, Ordering::Relaxed);
        self.join()
    }
}

impl Drop for Tinygram {
    fn drop(&mut self) {
        if let Some(h) = self.handle.take() {
            self.stop.store(true, Ordering::Relaxed);
            let _ = h.join();
        }
    }
}

/// The raw IPv4 packets of a pcap written by `--pcap` (link type RAW).
pub fn read_pcap(path: &std::path::Path) -> Vec<Vec<u8>> {
    let file = File::open(path).unwrap_or_else(|e| panic!("open {}: {e}", path.display()));
    let mut r = pcap_file::pcap::PcapReader::new(file).expect("a pcap header");
    let mut out = Vec::new();
    while let Some(p) = r.next_packet() {
        out.push(p.expect("a pcap record").data.into_owned());
    }
    out
}

/// TCP options as (kind, data) pairs.
pub type RawOptions = Vec<(u8, Vec<u8>)>;

/// The TCP flags byte and options of a raw IPv4 packet, walked by hand
/// (independently of the codec under test). None if it is not TCP.
pub fn raw_tcp_options(pkt: &[u8]) -> Option<(u8, RawOptions)> {
    if pkt.len() < 20 || pkt[0] >> 4 != 4 || pkt[9] != 6 {
        return None;
    }
    let tcp = &pkt[usize::from(pkt[0] & 0x0f) * 4..];
    let flags = tcp[13];
    let opts = &tcp[20..usize::from(tcp[12] >> 4) * 4];
    let mut v = Vec::new();
    let mut i = 0;
    while i < opts.len() {
        match opts[i] {
            0 => break,
            1 => i += 1,
            kind => {
                let len = usize::from(opts[i + 1]);
                v.push((kind, opts[i + 2..i + len].to_vec()));
                i += len;
            }
        }
    }
    Some((flags, v))
}

/// Runs `f` in a new thread that has entered network namespace `ns`.
pub fn in_netns<T: Send + 'static>(
    ns: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> JoinHandle<T> {
    let ns = ns.to_string();
    std::thread::spawn(move || {
        tinygram_net::netns::enter(&ns).unwrap_or_else(|e| panic!("{e}"));
        f()
    })
}

/// Config with the given `--set` style settings, as the CLI would build it
/// (the CLI reuses the scenario parser; here the few keys tests need).
pub fn config(send_policy: &str, wscale: bool) -> Config {
    let mut c = Config {
        send_policy: send_policy.parse().unwrap(),
        ..Config::default()
    };
    c.options.window_scale = wscale;
    c
}

impl Tinygram {
    /// Waits up to `secs` for the run to end by itself, then asks it to stop
    /// and waits 5 s more (a working loop looks at the flag every 50 ms). A host loop that never returns (the far-SACK hang
    /// spun and grew without bound) ends the whole test process with a message
    /// instead of hanging the suite or eating the machine's memory.
    pub fn finish_within(mut self, secs: u64) -> RunReport {
        let h = self.handle.take().expect("running");
        let wait = |h: &JoinHandle<RunReport>, d: Duration| {
            let end = std::time::Instant::now() + d;
            while !h.is_finished() && std::time::Instant::now() < end {
                std::thread::sleep(Duration::from_millis(20));
            }
            h.is_finished()
        };
        if !wait(&h, Duration::from_secs(secs)) {
            self.stop.store(true, Ordering::Relaxed);
            if !wait(&h, Duration::from_secs(5)) {
                say(&format!(
                    "\nFATAL: tinygram's host loop did not stop within {secs} + 5 s \
                     (stuck in a loop?); aborting the test process"
                ));
                std::process::exit(101);
            }
        }
        h.join().expect("tinygram thread panicked")
    }
}
