//! `whatif` checked against the real kernel: Linux exchanges with Nagle on,
//! across `tun link` (10 ms each way at 10 Mbit/s: netem is not available, so the delay
//! is the simulator's own link model in real time), captured with tcpdump;
//! `whatif` predicts from the capture what TCP_NODELAY on the sender and
//! immediate ACKs on the receiver (TCP_QUICKACK set again after every read)
//! would do; then the same programs run with those options and the kernel
//! says what they did. Root only: skipped with the reason otherwise,
//! required when TINYGRAM_REAL_WIRE=require (CI, as root).
//!
//! Required: the replay within 15 % of the capture's median exchange; each
//! prediction within 20 % of what the kernel did (or 2 ms where the times
//! are under 10 ms); and the direction of every change right.

use std::io::Write;
use std::net::Ipv4Addr;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tinygram_lab::whatif::{self, Options};
use tinygram_net::kernel_apps::{run_exchanges, Pattern, RunSpec, SideOptions, Tcpdump};
use tinygram_net::link::{LinkEnds, LinkOptions, LinkRun, LinkSetup, LEFT_DEV};
use tinygram_net::netns::Netns;
use tinygram_sim::link::{Framing, LinkConfig};

const LEFT: Ipv4Addr = Ipv4Addr::new(10, 78, 0, 1);
const RIGHT: Ipv4Addr = Ipv4Addr::new(10, 78, 0, 2);
const EXCHANGES: usize = 20;

/// Past the test harness's capture, so the table shows in `cargo test`'s output.
fn say(msg: &str) {
    let _ = writeln!(std::io::stderr(), "{msg}");
}

/// Skips with the reason, or fails when TINYGRAM_REAL_WIRE=require.
fn unavailable(name: &str) -> bool {
    let why = tinygram_net::netns::unavailable().or_else(|| {
        let ok = std::process::Command::new("tcpdump")
            .arg("--version")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        (!ok).then(|| "tcpdump is not installed (apt package tcpdump)".to_string())
    });
    let Some(why) = why else { return false };
    if std::env::var("TINYGRAM_REAL_WIRE").is_ok_and(|v| v == "require") {
        panic!("{name} cannot run here and TINYGRAM_REAL_WIRE=require: {why}");
    }
    say(&format!(
        "\nSKIPPED {name}: {why} (set TINYGRAM_REAL_WIRE=require to fail instead)"
    ));
    true
}

/// A link of 10 ms each way at 10 Mbit/s between two fresh namespaces. The
/// rate is set, not left unlimited: an unlimited link runs as fast as the
/// forwarding process, whose speed on a loaded machine varies from run to
/// run, so the capture and the kernel's later runs would cross different paths.
fn link() -> LinkRun {
    let config = LinkConfig {
        rate_bps: 10e6,
        delay: Duration::from_millis(10),
        framing: Framing::Ethernet,
        ..LinkConfig::default()
    };
    let ends = LinkEnds::open(LinkSetup {
        left: Netns::new("wl").expect("left namespace"),
        right: Netns::new("wr").expect("right namespace"),
        left_addr: LEFT,
        prefix: 24,
        mtu: 1500,
    })
    .expect("open the link's devices");
    LinkRun::start(
        ends,
        LinkOptions {
            configs: [config.clone(), config],
            seed: 1,
            duration: Some(Duration::from_secs(120)),
            stop: Arc::new(AtomicBool::new(false)),
            realtime: true,
        },
    )
}

/// The kernel's median exchange time (ms) for `pattern` with these options,
/// and the capture at the client when `pcap` is given.
fn kernel(
    pattern: &Pattern,
    client: SideOptions,
    server: SideOptions,
    pcap: Option<&std::path::Path>,
) -> f64 {
    let l = link();
    let cap = pcap.map(|p| Tcpdump::start(&l.ends.left.ns, LEFT_DEV, p).expect("tcpdump"));
    let mut spec = RunSpec::new(pattern.clone(), EXCHANGES);
    spec.client = client;
    spec.server = server;
    let ex = run_exchanges(&l.ends.left.ns, &l.ends.right.ns, RIGHT, &spec)
        .expect("the kernel's exchanges");
    if let Some(c) = cap {
        c.stop(Duration::from_millis(50)).expect("tcpdump's counts");
    }
    l.stop().expect("the link stops");
    ex.median().as_secs_f64() * 1e3
}

/// lower / same / higher, with the tolerance the predictions are held to.
fn direction(base: f64, x: f64) -> &'static str {
    let tol = (0.1 * base).max(2.0);
    if x < base - tol {
        "lower"
    } else if x > base + tol {
        "higher"
    } else {
        "same"
    }
}

/// A prediction is right within 20 %, or 2 ms where the times are under 10 ms.
fn close(pred: f64, real: f64) -> bool {
    let d = (pred - real).abs();
    d <= 0.2 * real || (real < 10.0 && pred < 10.0 && d <= 2.0)
}

fn options(nodelay: bool, quickack: bool) -> SideOptions {
    SideOptions { nodelay, quickack }
}

/// One pattern: capture, predict, run the fixes, compare. Returns the
/// table's row and the failures.
fn check(pattern: Pattern, dir: &std::path::Path) -> (String, Vec<String>) {
    let pcap = dir.join(format!("{}.pcap", pattern.name));
    let base = kernel(
        &pattern,
        options(false, false),
        options(false, false),
        Some(&pcap),
    );
    let opts = Options {
        samples: 4,
        ..Options::default()
    };
    if let Ok(keep) = std::env::var("TINYGRAM_WHATIF_KEEP") {
        // Keeps the kernel's captures for a look with `tinygram whatif`.
        let _ = std::fs::create_dir_all(&keep);
        let _ = std::fs::copy(
            &pcap,
            std::path::Path::new(&keep).join(format!("{}.pcap", pattern.name)),
        );
    }
    let report = whatif::whatif_file(&pcap, &opts, &|_| {})
        .unwrap_or_else(|e| panic!("{}: whatif: {e}", pattern.name));
    let f = &report.flows[0];
    let replay = f.baseline.metrics.p50_ms.p50;
    let side = f.held_side.clone();
    let other = if side == "client" { "server" } else { "client" };
    let predicted = |name: &str| -> f64 {
        f.alternatives
            .iter()
            .find(|a| a.name == name)
            .and_then(|a| a.metrics.as_ref())
            .unwrap_or_else(|| panic!("{}: no alternative {name:?}", pattern.name))
            .p50_ms
            .p50
    };
    let nd_pred = predicted(&format!("{side} nodelay"));
    let ack_pred = predicted(&format!("{other} immediate ACKs"));
    let (nd_c, nd_s) = (side == "client", side == "server");
    let nd_real = kernel(&pattern, options(nd_c, false), options(nd_s, false), None);
    let (qa_c, qa_s) = (other == "client", other == "server");
    let ack_real = kernel(&pattern, options(false, qa_c), options(false, qa_s), None);
    let mut fails = Vec::new();
    if (replay - base).abs() > 0.15 * base && (base >= 10.0 || (replay - base).abs() > 2.0) {
        fails.push(format!(
            "{}: the replay's median exchange {replay:.1} ms is not within 15 % of the capture's {base:.1} ms (whatif's own per-turn error {:.1} %)",
            pattern.name,
            f.baseline.median_rel_error * 100.0
        ));
    }
    for (what, pred, real) in [
        (format!("{side} TCP_NODELAY"), nd_pred, nd_real),
        (format!("{other} immediate ACKs"), ack_pred, ack_real),
    ] {
        if !close(pred, real) {
            fails.push(format!(
                "{}: {what}: predicted {pred:.1} ms, the kernel took {real:.1} ms",
                pattern.name
            ));
        }
        if direction(replay, pred) != direction(base, real) {
            fails.push(format!(
                "{}: {what}: predicted {} ({replay:.1} -> {pred:.1} ms), the kernel went {} ({base:.1} -> {real:.1} ms)",
                pattern.name,
                direction(replay, pred),
                direction(base, real)
            ));
        }
    }
    let row = format!(
        "| {:<12} | {:>7.1} | {:>7.1} | {:<6} | {:>8.1} | {:>8.1} | {:>8.1} | {:>8.1} |",
        pattern.name, base, replay, side, nd_pred, nd_real, ack_pred, ack_real
    );
    (row, fails)
}

#[test]
fn whatif_predicts_what_the_kernel_does_with_each_fix() {
    let name = "whatif_predicts_what_the_kernel_does_with_each_fix";
    if unavailable(name) {
        return;
    }
    static ONE: Mutex<()> = Mutex::new(());
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let mut rows = vec![
        "| pattern      | capture | replay  | sender | nodelay predicted | nodelay kernel | immediate ACKs predicted | kernel |".to_string(),
        "|---|---:|---:|---|---:|---:|---:|---:|".to_string(),
    ];
    let mut fails = Vec::new();
    for p in [
        Pattern::cheshire(),
        Pattern::doupnik_web(),
        Pattern::rpc(),
        Pattern::ping_pong(),
    ] {
        let (row, f) = check(p, dir.path());
        rows.push(row);
        fails.extend(f);
    }
    say(&format!(
        "\nwhatif against Linux over tun link, 10 ms each way at 10 Mbit/s, {EXCHANGES} exchanges, median exchange ms:\n{}",
        rows.join("\n")
    ));
    assert!(fails.is_empty(), "{}", fails.join("\n"));
}
