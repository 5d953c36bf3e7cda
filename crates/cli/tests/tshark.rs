//! tshark reads a capture from every built-in example, and one segment
//! carrying every TCP option the codec knows, with no malformed packet, no
//! expert item from any dissector but TCP's own sequence analysis, and every
//! IPv4 and TCP checksum verified good. tshark runs with its default
//! settings (no `-d` decode-as): what a user sees on opening the file.
//! Skipped, with the reason printed, where tshark is missing (CI installs it;
//! there it must run).

use std::path::Path;
use std::process::Command;
use tinygram_proto::wire::{Nak, SackBlocks, Timestamps};
use tinygram_proto::{Flags, Instant, SeqNumber, TcpOptions, TcpRepr};
use tinygram_sim::pcap::{write_pcap, Vantage};
use tinygram_sim::world::{WireEvent, CLIENT_PORT, SERVER_PORT};

fn tshark() -> bool {
    let ok = Command::new("tshark")
        .arg("-v")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var_os("CI").is_none(),
            "tshark is missing on CI: .ci/run installs it"
        );
        println!("skipped: tshark is not installed (apt-get install tshark)");
    }
    ok
}

/// Frames tshark reads, and what it flags: malformed frames, expert errors,
/// IPv4/TCP checksums not verified good, and any expert item (from `-z
/// expert`) in the Malformed or Checksum group or from a dissector other than
/// TCP (a protocol guessed from the payload). TCP's own sequence analysis
/// (retransmissions, duplicate ACKs) describes the traffic and is allowed.
fn check(pcap: &Path) -> (usize, Vec<String>) {
    let run = |args: &[&str]| {
        let mut c = Command::new("tshark");
        c.args(["-n", "-r"]).arg(pcap).args([
            "-o",
            "tcp.check_checksum:TRUE",
            "-o",
            "ip.check_checksum:TRUE",
        ]);
        c.args(args);
        let out = c.output().expect("tshark runs");
        assert!(
            out.status.success(),
            "tshark failed on {}: {}",
            pcap.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    let all = run(&[]).len();
    let mut bad = run(&[
        "-Y",
        "_ws.malformed || _ws.expert.severity >= error || tcp.checksum.status != 1 || ip.checksum.status != 1",
    ]);
    // Expert summary lines: frequency, group, protocol, summary.
    for line in run(&["-q", "-z", "expert"]) {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 4 || f[0].parse::<u64>().is_err() {
            continue;
        }
        let (group, proto) = (f[1], f[2]);
        if group == "Malformed" || group == "Checksum" || proto != "TCP" {
            bad.push(format!("expert: {}", line.trim()));
        }
    }
    (all, bad)
}

#[test]
fn tshark_reads_every_example_capture_cleanly() {
    if !tshark() {
        return;
    }
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut files: Vec<_> = std::fs::read_dir(&examples)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        // Many-flow examples are captured at their bottleneck, hundreds of MB
        // each: a small many-flow scenario is checked below instead.
        .filter(|p| {
            let text = std::fs::read_to_string(p).unwrap();
            !text.contains("[[flows]]") && !text.contains("[bottleneck]")
        })
        .collect();
    files.sort();
    assert!(!files.is_empty());
    // Removed when the test ends, pass or fail: each capture is tens of MB.
    let dir = tempfile::tempdir().unwrap();
    for f in files {
        let pcap = dir
            .path()
            .join(format!("{}.pcap", f.file_stem().unwrap().to_string_lossy()));
        let out = Command::new(env!("CARGO_BIN_EXE_tinygram"))
            .arg("run")
            .arg(&f)
            .arg("-q")
            .arg("--pcap")
            .arg(&pcap)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}: {}",
            f.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        let (n, bad) = check(&pcap);
        println!(
            "{}: tshark read {n} frames, {} flagged",
            f.display(),
            bad.len()
        );
        assert!(n > 0, "{}: tshark read no frame", f.display());
        assert!(
            bad.is_empty(),
            "{}: tshark flags:\n{}",
            f.display(),
            bad.join("\n")
        );
        // The same capture through diagnose.
        let out = Command::new(env!("CARGO_BIN_EXE_tinygram"))
            .arg("diagnose")
            .arg(&pcap)
            .output()
            .unwrap();
        assert!(out.status.success());
        assert!(String::from_utf8_lossy(&out.stdout).contains(&format!(
            "flow 1: 10.0.0.1:{CLIENT_PORT} (client) <-> 10.0.0.2:{SERVER_PORT} (server)"
        )));
    }
}

/// A handshake and a data segment carrying every option the codec encodes:
/// MSS, window scale, SACK-permitted, timestamps, RFC 1106 big window and
/// NAK-permitted (RFC 6994 experimental kind 253), SACK blocks, a NAK.
#[test]
fn tshark_reads_every_option_cleanly() {
    if !tshark() {
        return;
    }
    let mut syn = TcpOptions {
        mss: Some(1448),
        window_scale: Some(7),
        sack_permitted: true,
        timestamps: Some(Timestamps { tsval: 1, tsecr: 0 }),
        ..TcpOptions::default()
    };
    let ev =
        |at_us: u64, dir: u8, flags: Flags, seq: u32, ack: u32, options: TcpOptions, len: usize| {
            WireEvent {
                at: Instant::from_micros(at_us),
                dir,
                repr: TcpRepr {
                    src_port: if dir == 0 { CLIENT_PORT } else { SERVER_PORT },
                    dst_port: if dir == 0 { SERVER_PORT } else { CLIENT_PORT },
                    seq: SeqNumber(seq),
                    ack: SeqNumber(ack),
                    flags,
                    window: 512,
                    urgent: 0,
                    options,
                },
                payload_len: len,
                dropped: false,
                arrived: Some(Instant::from_micros(at_us + 100)),
                duplicate_arrived: None,
            }
        };
    let mut events = vec![ev(0, 0, Flags::SYN, 1000, 0, syn, 0)];
    syn.big_window_offer = Some(1 << 20);
    syn.nak_permitted = true;
    syn.window_scale = None;
    events.push(ev(100, 1, Flags::SYN | Flags::ACK, 5000, 1001, syn, 0));
    let mut blocks = SackBlocks::default();
    blocks.push(SeqNumber(3001), SeqNumber(4001));
    blocks.push(SeqNumber(5001), SeqNumber(6001));
    let data = TcpOptions {
        timestamps: Some(Timestamps { tsval: 5, tsecr: 2 }),
        ..TcpOptions::default()
    };
    events.push(ev(200, 0, Flags::ACK | Flags::PSH, 1001, 5001, data, 100));
    let ack = TcpOptions {
        sack_blocks: blocks,
        timestamps: Some(Timestamps { tsval: 6, tsecr: 5 }),
        ..TcpOptions::default()
    };
    events.push(ev(300, 1, Flags::ACK, 5001, 1101, ack, 0));
    let nak = TcpOptions {
        nak: Some(Nak {
            seq: SeqNumber(1101),
            count: 2,
        }),
        big_window_upper: Some(3),
        ..TcpOptions::default()
    };
    events.push(ev(400, 1, Flags::ACK, 5001, 1101, nak, 0));
    let dir = tempfile::tempdir().unwrap();
    let pcap = dir.path().join("options.pcap");
    write_pcap(
        std::fs::File::create(&pcap).unwrap(),
        &events,
        None,
        Vantage::Client,
    )
    .unwrap();
    let (n, bad) = check(&pcap);
    assert_eq!(n, events.len());
    assert!(bad.is_empty(), "tshark flags:\n{}", bad.join("\n"));
    // tshark sees the options where a real wire puts them.
    let out = Command::new("tshark")
        .args(["-n", "-r"])
        .arg(&pcap)
        .args([
            "-T",
            "fields",
            "-e",
            "tcp.options.mss_val",
            "-e",
            "tcp.options.wscale.shift",
            "-e",
            "tcp.options.sack_le",
            "-e",
            "tcp.option_kind",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("1448"), "{text}");
    assert!(text.contains("253"), "RFC 1106 options as kind 253: {text}");
}

/// A small many-flow scenario: Nagle request/response flows from two hosts
/// and a bulk transfer from a third, through a 10 Mbit/s bottleneck.
const SMALL_MANY: &str = r#"
name = "small-many"
seed = 3
duration = "30s"

[bottleneck]
rate = "10Mbps"
delay = "5ms"
queue = "30KB"

[[flows]]
name = "nagle"
count = 6
client_hosts = ["a", "b"]
server_host = "srv"
spread = "uniform"
interval = "10ms"
client.send_policy = "nagle"
workload = { request = [3000, 100], response = [200], requests = 3 }

[[flows]]
name = "bulk"
count = 1
client_hosts = ["c"]
server_host = "srv"
workload = { type = "bulk", bytes = 300000 }
"#;

fn tinygram(args: &[&str], file: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_tinygram"))
        .args(args)
        .arg(file)
        .output()
        .unwrap()
}

/// `run --pcap` on a many-flow scenario writes the bottleneck's packets:
/// the run's results are the same with and without it, the frame count is
/// what the run announced, `diagnose` finds every flow at its capture
/// address, and tshark reads the file cleanly.
#[test]
fn many_flow_pcap_holds_every_flow_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("small-many.toml");
    std::fs::write(&file, SMALL_MANY).unwrap();
    let pcap = dir.path().join("small-many.pcap");
    let pcap_arg = pcap.to_str().unwrap();

    let plain = tinygram(&["run", "--json"], &file);
    let captured = tinygram(&["run", "--json", "--pcap", pcap_arg], &file);
    assert!(
        plain.status.success() && captured.status.success(),
        "{captured:?}"
    );
    assert_eq!(plain.stdout, captured.stdout, "capturing changed the run");

    let shown = tinygram(&["run", "--pcap", pcap_arg], &file);
    let err = String::from_utf8_lossy(&shown.stderr);
    assert!(err.contains("pcap: hosts srv 10.0.0.1"), "{err}");
    let frames: u64 = err
        .lines()
        .find_map(|l| {
            l.strip_prefix("pcap: ")?
                .split(" frames")
                .next()?
                .replace(',', "")
                .parse()
                .ok()
        })
        .unwrap_or_else(|| panic!("no frame count in: {err}"));

    let d = tinygram(&["diagnose", "--json"], &pcap);
    assert!(d.status.success(), "{d:?}");
    let v: serde_json::Value = serde_json::from_slice(&d.stdout).unwrap();
    assert_eq!(v["capture"]["frames"], frames, "{}", v["capture"]);
    let flows = v["flows"].as_array().unwrap();
    assert_eq!(flows.len(), 7, "six request/response flows and one bulk");
    let text = serde_json::to_string(flows).unwrap();
    for host in ["10.0.0.2", "10.0.0.3", "10.0.0.4"] {
        assert!(text.contains(host), "no flow from {host}");
    }

    if tshark() {
        let (n, bad) = check(&pcap);
        assert_eq!(n as u64, frames);
        assert!(bad.is_empty(), "tshark flagged: {bad:?}");
    }
}
