//! Real captures: two network namespaces joined by veth, a Linux TCP server
//! answering each request with two short writes and then a 33 KB body in
//! 4 KB writes (the web test of Doupnik, A new TCP transmission policy, 3.0) to
//! a Linux client, captured with tcpdump (or tshark) on the server's interface.
//!
//! The veth MTU is 65535, so the whole response fits in one segment and every
//! write is a runt: with Nagle on, the server sends the status line, then
//! holds the rest (Linux's Minshall rule: a runt is unacknowledged) until the
//! client's delayed ACK, about 40 ms later, on nearly every request. How many
//! requests the kernel stalls still depends on the machine's load, so the test
//! does not count findings: it works out from the capture's segments alone,
//! without `diagnose`, which responses waited (more than 20 ms from their
//! first byte to their last; one that flows takes well under a millisecond on
//! veth), and demands that `diagnose` puts a held tail inside every one of
//! those and nowhere else. With TCP_NODELAY on the server nothing is held and
//! it must report none. The scripts run at a real-time priority (where `chrt`
//! may), so a loaded machine does not stall them mid-response.
//!
//! Skipped, with the reason printed, without root, `ip netns`, python3 or a
//! capture tool. Traffic stays inside the two namespaces this test creates;
//! every process runs under `timeout` and every wait has a deadline.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tinygram_analyze::diagnose::Kind;
use tinygram_analyze::{diagnose, read_file, Capture, Flow, Thresholds};

/// About 23 requests a second with Nagle on (each waits for a delayed ACK):
/// a run takes two seconds.
const REQUESTS: usize = 40;
/// `GET / HTTP/1.0\r\nHost: test\r\n\r\n`, as the client sends it.
const REQUEST_LEN: u64 = 30;
/// `HTTP/1.0 200 OK\r\n` (17 B), `Content-Length: 33000\r\n\r\n` (25 B) and the body.
const RESPONSE_LEN: u64 = 17 + 25 + 33_000;
/// A response whose last byte left this long after its first waited for
/// something: on veth one takes well under a millisecond, a delayed ACK 40 ms
/// or more.
const STALL_S: f64 = 0.020;
/// Hang guard for each process and for waiting on the capture.
const DEADLINE_S: u64 = 30;
const MTU: &str = "65535";
const SERVER_IP: &str = "10.231.77.1";
const CLIENT_IP: &str = "10.231.77.2";

const SERVER_PY: &str = r#"
import socket, sys
nodelay = sys.argv[1] == "1"
ls = socket.socket(); ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.settimeout(30)
ls.bind((sys.argv[2], 8080)); ls.listen(1)
print("ready", flush=True)
c, _ = ls.accept()
c.settimeout(30)
if nodelay:
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
body = b"x" * 33000
buf = b""
while True:
    d = c.recv(4096)
    if not d:
        break
    buf += d
    while b"\r\n\r\n" in buf:
        _, buf = buf.split(b"\r\n\r\n", 1)
        c.send(b"HTTP/1.0 200 OK\r\n")
        c.send(b"Content-Length: 33000\r\n\r\n")
        for i in range(0, len(body), 4096):
            c.sendall(body[i:i + 4096])
c.close()
"#;

const CLIENT_PY: &str = r#"
import socket, sys
s = socket.create_connection((sys.argv[1], 8080), timeout=30)
for i in range(int(sys.argv[2])):
    s.sendall(b"GET / HTTP/1.0\r\nHost: test\r\n\r\n")
    need = None; got = b""
    while need is None or len(got) < need:
        d = s.recv(65536)
        if not d:
            sys.exit("server closed during response %d" % i)
        got += d
        if need is None and b"\r\n\r\n" in got:
            head, rest = got.split(b"\r\n\r\n", 1)
            need = len(head) + 4 + 33000
s.close()
"#;

fn sh(args: &[&str]) -> bool {
    Command::new(args[0])
        .args(&args[1..])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn have(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Two namespaces and a veth pair with a 65535-byte MTU, removed on drop.
struct Netns {
    srv: String,
    cli: String,
}

impl Netns {
    fn new(tag: &str) -> Result<Netns, String> {
        let id = std::process::id() % 100_000;
        let n = Netns {
            srv: format!("tgs{tag}{id}"),
            cli: format!("tgc{tag}{id}"),
        };
        let (vs, vc) = (format!("tvs{tag}{id}"), format!("tvc{tag}{id}"));
        let steps: Vec<Vec<String>> = vec![
            vec!["netns", "add", &n.srv],
            vec!["netns", "add", &n.cli],
            vec!["link", "add", &vs, "type", "veth", "peer", "name", &vc],
            vec!["link", "set", &vs, "netns", &n.srv],
            vec!["link", "set", &vc, "netns", &n.cli],
            vec!["-n", &n.srv, "link", "set", &vs, "mtu", MTU],
            vec!["-n", &n.cli, "link", "set", &vc, "mtu", MTU],
            vec![
                "-n",
                &n.srv,
                "addr",
                "add",
                &format!("{SERVER_IP}/24"),
                "dev",
                &vs,
            ],
            vec![
                "-n",
                &n.cli,
                "addr",
                "add",
                &format!("{CLIENT_IP}/24"),
                "dev",
                &vc,
            ],
            vec!["-n", &n.srv, "link", "set", &vs, "up"],
            vec!["-n", &n.cli, "link", "set", &vc, "up"],
            vec!["-n", &n.srv, "link", "set", "lo", "up"],
            vec!["-n", &n.cli, "link", "set", "lo", "up"],
        ]
        .into_iter()
        .map(|v| v.into_iter().map(String::from).collect())
        .collect();
        for step in steps {
            let mut args = vec!["ip"];
            args.extend(step.iter().map(String::as_str));
            if !sh(&args) {
                // Drop removes whatever was made so far.
                return Err(format!("`{}` failed", args.join(" ")));
            }
        }
        // Segments as they go on a wire, not offload-sized (best effort: at
        // this MTU one segment already carries a whole response).
        for (ns, dev) in [(&n.srv, &vs), (&n.cli, &vc)] {
            sh(&[
                "ip", "netns", "exec", ns, "ethtool", "-K", dev, "tso", "off", "gso", "off", "gro",
                "off",
            ]);
        }
        Ok(n)
    }
    fn dev(&self) -> String {
        self.srv.replacen("tgs", "tvs", 1)
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        sh(&["ip", "netns", "del", &self.srv]);
        sh(&["ip", "netns", "del", &self.cli]);
    }
}

/// A child process ended on drop (also when an assertion fails), by its own
/// id: SIGTERM, which `timeout` passes on to the program it runs.
struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        if matches!(self.0.try_wait(), Ok(None)) {
            sh(&["kill", "-TERM", &self.0.id().to_string()]);
        }
        let _ = self.0.wait();
    }
}

fn skip_reason() -> Option<String> {
    let uid = Command::new("id").arg("-u").output().ok()?;
    if String::from_utf8_lossy(&uid.stdout).trim() != "0" {
        return Some("needs root to create network namespaces".into());
    }
    for t in ["ip", "python3", "timeout"] {
        if !have(t) {
            return Some(format!("{t} is not installed"));
        }
    }
    if !have("tcpdump") && !have("tshark") {
        return Some("neither tcpdump nor tshark is installed".into());
    }
    let probe = format!("tgprobe{}", std::process::id() % 100_000);
    if !sh(&["ip", "netns", "add", &probe]) {
        return Some("cannot create network namespaces here".into());
    }
    sh(&["ip", "netns", "del", &probe]);
    None
}

/// `chrt` arguments that run the server and the client at a real-time
/// priority where the machine allows it, so that no load keeps them from a CPU
/// and every wait in a response is TCP's; nothing where it does not.
fn realtime() -> Vec<&'static str> {
    static CHRT: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let ok = *CHRT.get_or_init(|| {
        let ok = sh(&["chrt", "-f", "10", "sh", "-c", ":"]);
        if !ok {
            println!("note: no real-time priority here (chrt -f failed): a loaded machine may delay the scripts");
        }
        ok
    });
    if ok {
        vec!["chrt", "-f", "10"]
    } else {
        Vec::new()
    }
}

/// Starts the capture tool and waits until it says it is listening.
fn start_capture(ns: &Netns, file: &Path) -> Proc {
    use std::io::BufRead;
    let dev = ns.dev();
    let mut cmd = Command::new("ip");
    // `ip netns exec` execs the tool, so the child's id is the tool's own.
    cmd.args(["netns", "exec", &ns.srv]);
    if have("tcpdump") {
        cmd.args([
            "tcpdump",
            "-n",
            "-U",
            "--immediate-mode",
            "-s",
            "256",
            "-i",
            &dev,
            "-w",
        ])
        .arg(file)
        .arg("tcp");
    } else {
        cmd.args(["tshark", "-n", "-s", "256", "-i", &dev, "-w"])
            .arg(file)
            .args(["-f", "tcp"]);
    }
    let mut child = Proc(
        cmd.stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("capture starts"),
    );
    let mut err = std::io::BufReader::new(child.0.stderr.take().expect("piped"));
    let mut line = String::new();
    let mut said = String::new();
    loop {
        line.clear();
        if !err.read_line(&mut line).is_ok_and(|n| n > 0) {
            panic!("the capture tool exited before listening: {said}");
        }
        said.push_str(&line);
        if line.contains("listening on") || line.contains("Capturing on") {
            break;
        }
    }
    // Keep draining its messages so it never blocks on a full pipe.
    std::thread::spawn(move || std::io::copy(&mut err, &mut std::io::sink()));
    child
}

/// The web flow of a capture, once both sides' FINs are in it.
fn web_flow(cap: &Capture) -> Option<Flow> {
    let (_, flows) = diagnose(cap, &Thresholds::default());
    flows.into_iter().find(|f| {
        f.addr(1).port() == 8080
            && (0..2).all(|d| f.segs.iter().any(|g| g.dir == d && g.flags.fin()))
    })
}

/// Runs the web pattern once; returns the capture's path.
fn run(nodelay: bool, dir: &Path) -> PathBuf {
    let tag = if nodelay { "n" } else { "d" };
    let ns = Netns::new(tag).unwrap_or_else(|e| panic!("namespaces: {e}"));
    let srv_py = dir.join("server.py");
    let cli_py = dir.join("client.py");
    std::fs::write(&srv_py, SERVER_PY).unwrap();
    std::fs::write(&cli_py, CLIENT_PY).unwrap();
    let file = dir.join(format!(
        "web-{}.pcap",
        if nodelay { "nodelay" } else { "default" }
    ));
    let _ = std::fs::remove_file(&file);
    let limit = DEADLINE_S.to_string();
    let mut cap = start_capture(&ns, &file);
    let mut server = Proc(
        Command::new("ip")
            .args(["netns", "exec", &ns.srv])
            .args(realtime())
            .args(["timeout", &limit, "python3"])
            .arg(&srv_py)
            .args([if nodelay { "1" } else { "0" }, SERVER_IP])
            .stdout(Stdio::piped())
            .spawn()
            .expect("server starts"),
    );
    {
        use std::io::BufRead;
        let mut line = String::new();
        let _ = std::io::BufReader::new(server.0.stdout.as_mut().unwrap()).read_line(&mut line);
        assert_eq!(line.trim(), "ready", "the server did not start");
    }
    let status = Command::new("ip")
        .args(["netns", "exec", &ns.cli])
        .args(realtime())
        .args(["timeout", &limit, "python3"])
        .arg(&cli_py)
        .args([SERVER_IP, &REQUESTS.to_string()])
        .status()
        .expect("client runs");
    assert!(
        status.success(),
        "client failed ({status}; exit 124 is the {DEADLINE_S} s timeout)"
    );
    let served = server.0.wait().expect("server ends");
    assert!(served.success(), "server failed ({served})");
    // The capture tool writes packets as they come (tcpdump -U; tshark
    // flushes often): wait until the connection's close is in the file,
    // however loaded the machine is.
    let t0 = Instant::now();
    while read_file(&file).ok().and_then(|c| web_flow(&c)).is_none() {
        assert!(
            t0.elapsed() < Duration::from_secs(DEADLINE_S),
            "the capture still lacks the connection's close after {DEADLINE_S} s"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // Stop it with SIGINT so it flushes, by its own id.
    sh(&["kill", "-INT", &cap.0.id().to_string()]);
    let _ = cap.0.wait();
    file
}

/// One request as the capture shows it, worked out without `diagnose`.
#[derive(Debug)]
struct Request {
    /// When the request's first byte reached the capture point.
    sent: f64,
    /// When the first byte of its response left the server.
    answered: f64,
    /// When the last byte of its response first left the server.
    done: f64,
}

impl Request {
    /// The response stopped on its way for longer than any send takes: TCP
    /// held part of it. (The time before its first byte is the server
    /// program's, not TCP's.)
    fn stalled(&self) -> bool {
        self.done - self.answered > STALL_S
    }
    fn holds(&self, t: f64) -> bool {
        (self.sent..=self.done).contains(&t)
    }
}

/// Each request's times, from sequence numbers: request `i` is client bytes
/// `[1 + i*REQUEST_LEN, ...)`, its response server bytes `[1 + i*RESPONSE_LEN,
/// 1 + (i+1)*RESPONSE_LEN)` (the SYN is sequence number 0).
fn requests(f: &Flow) -> Vec<Request> {
    assert!(f.saw_syn, "the handshake is in the capture");
    let first_covering = |dir: usize, byte: u64| {
        f.segs
            .iter()
            .find(|g| g.dir == dir && g.len > 0 && g.seq <= byte && byte < g.end())
            .map(|g| g.t)
    };
    (0..REQUESTS as u64)
        .map(|i| {
            let sent = first_covering(0, 1 + i * REQUEST_LEN)
                .unwrap_or_else(|| panic!("request {i} is not in the capture"));
            let answered = first_covering(1, 1 + i * RESPONSE_LEN)
                .unwrap_or_else(|| panic!("the start of response {i} is not in the capture"));
            let done = first_covering(1, (i + 1) * RESPONSE_LEN)
                .unwrap_or_else(|| panic!("the end of response {i} is not in the capture"));
            Request {
                sent,
                answered,
                done,
            }
        })
        .collect()
}

/// Checks one run: returns (stalled requests, held tails).
fn check(nodelay: bool, file: &Path) -> (usize, usize) {
    let name = if nodelay { "TCP_NODELAY" } else { "default" };
    let cap = read_file(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let (d, flows) = diagnose(&cap, &Thresholds::default());
    let k = flows
        .iter()
        .position(|f| f.addr(1).port() == 8080)
        .expect("the web flow is in the capture");
    let f = &flows[k];
    // The scripts send exactly the bytes the constants say (the kernel may
    // resend a response's tail when the client's ACK is slow: a loss probe).
    let top = |d: usize| {
        f.segs
            .iter()
            .filter(|g| g.dir == d && g.len > 0)
            .map(|g| g.end())
            .max()
    };
    assert_eq!(
        (top(0), top(1)),
        (
            Some(1 + REQUESTS as u64 * REQUEST_LEN),
            Some(1 + REQUESTS as u64 * RESPONSE_LEN)
        ),
        "{name}: the highest byte each way (the SYN is sequence number 0)"
    );
    let reqs = requests(f);
    let tails: Vec<f64> = d.flows[k]
        .findings
        .iter()
        .filter(|x| x.kind == Kind::HeldTail)
        .inspect(|x| assert_eq!(x.sender, "server", "{name}: the client sends one segment a request"))
        .flat_map(|x| x.events.iter().map(|e| (e.at_s, e.lost_s)))
        .map(|(at, lost)| {
            let r = reqs.iter().position(|r| r.holds(at)).unwrap_or_else(|| {
                panic!("{name}: held tail at {at:.6} s lies in no request's span: {reqs:?}")
            });
            assert!(
                reqs[r].stalled(),
                "{name}: held tail at {at:.6} s ({:.1} ms lost) on request {r}, which did not stall: {:?}",
                lost * 1e3,
                reqs[r]
            );
            assert!(
                reqs[r].holds(at - lost),
                "{name}: held tail at {at:.6} s lost {:.1} ms, more than request {r} took: {:?}",
                lost * 1e3,
                reqs[r]
            );
            at
        })
        .collect();
    let stalled: Vec<usize> = (0..REQUESTS).filter(|&i| reqs[i].stalled()).collect();
    let missed: Vec<String> = stalled
        .iter()
        .filter(|&&i| !tails.iter().any(|&t| reqs[i].holds(t)))
        .map(|&i| {
            format!(
                "request {i} at {:.6} s: response from {:.6} s to {:.6} s",
                reqs[i].sent, reqs[i].answered, reqs[i].done
            )
        })
        .collect();
    let slowest = reqs.iter().map(|r| r.done - r.answered).fold(0.0, f64::max);
    println!(
        "{name} server: {} of {REQUESTS} responses took over {:.0} ms from first to last byte (slowest {:.1} ms); {} held tail(s); {} segments",
        stalled.len(),
        STALL_S * 1e3,
        slowest * 1e3,
        tails.len(),
        f.segs.len()
    );
    assert!(
        missed.is_empty(),
        "{name}: stalled requests without a held tail: {}",
        missed.join("; ")
    );
    (stalled.len(), tails.len())
}

#[test]
fn real_linux_web_pattern_held_tails() {
    if let Some(why) = skip_reason() {
        println!("skipped: {why}");
        return;
    }
    let dir = std::env::temp_dir().join(format!("tinygram-real-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (stalled, tails) = check(false, &run(false, &dir));
    // At this MTU every response is one runt behind another: nearly every
    // request waits for the client's delayed ACK (only while the client's
    // first quick ACKs last does one not), whatever the load.
    assert!(
        stalled * 2 >= REQUESTS,
        "only {stalled} of {REQUESTS} responses waited for a delayed ACK"
    );
    assert!(tails >= stalled);
    // Nothing is held: no held tail, and so (as `check` matches every
    // stalled response to one) no response stalled either.
    let (stalled, tails) = check(true, &run(true, &dir));
    assert_eq!(tails, 0, "TCP_NODELAY must leave no held tail");
    assert_eq!(stalled, 0);
    let _ = std::fs::remove_dir_all(&dir);
}
