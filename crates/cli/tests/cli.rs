//! The `tinygram` command as a user runs it.

use assert_cmd::Command;
use std::io::Write;

fn tinygram() -> Command {
    Command::cargo_bin("tinygram").unwrap()
}

fn scenario(text: &str) -> tempfile::NamedTempFile {
    let mut f = tempfile::Builder::new().suffix(".toml").tempfile().unwrap();
    f.write_all(text.as_bytes()).unwrap();
    f
}

/// A malformed scenario prints one clear error naming file, line and key, and exits non-zero.
#[test]
fn malformed_scenarios_are_clear_errors() {
    for (text, key, line) in [
        ("[link]\nrate = \"1Gbps\"\nspeed = 3\n", "link.speed", 3),
        ("[client]\ndelack = \"20 parsecs\"\n", "client.delack", 2),
        ("[link]\n\nrate = \"-1Mbps\"\n", "link.rate", 3),
    ] {
        let f = scenario(text);
        let out = tinygram().arg("run").arg(f.path()).output().unwrap();
        assert!(!out.status.success(), "{text}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "one error line: {err}");
        let name = f.path().file_name().unwrap().to_string_lossy().to_string();
        assert!(err.contains(&name), "names the file: {err}");
        assert!(err.contains(key), "names the key {key}: {err}");
        assert!(
            err.contains(&format!(":{line}:")),
            "names line {line}: {err}"
        );
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn json_output_is_deterministic_and_has_the_stable_fields() {
    let f = scenario("[workload]\nrequest = [5000]\nresponse = [100]\nrequests = 10\n");
    let run = || {
        tinygram()
            .args(["run", "--json"])
            .arg(f.path())
            .output()
            .unwrap()
    };
    let (a, b) = (run(), run());
    assert!(a.status.success());
    assert_eq!(a.stdout, b.stdout);
    let v: serde_json::Value = serde_json::from_slice(&a.stdout).unwrap();
    for k in [
        "transactions",
        "transactions_per_s",
        "goodput_bytes_per_s",
        "integrity_ok",
    ] {
        assert!(v.get(k).is_some(), "missing {k}");
    }
    for k in ["p50", "p99", "max"] {
        assert!(
            v["completion_ms"].get(k).is_some(),
            "missing completion_ms.{k}"
        );
    }
    for h in ["client", "server"] {
        for k in [
            "data_segments",
            "small_segments",
            "pure_acks",
            "retransmits",
            "naks_sent",
            "wire_bytes",
        ] {
            assert!(v[h].get(k).is_some(), "missing {h}.{k}");
        }
    }
    assert_eq!(v["transactions"], 10);
    assert_eq!(v["integrity_ok"], true);
}

#[test]
fn set_overrides_and_explain_names_the_rules() {
    let out = tinygram()
        .args([
            "run",
            "../../examples/cheshire.toml",
            "--explain",
            "--set",
            "workload.requests=5",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.contains("client held 88 B (nagle)"), "{s}");
    assert!(s.contains("server delayed its ACK"), "{s}");
    let out = tinygram()
        .args([
            "run",
            "../../examples/cheshire.toml",
            "--explain",
            "--set",
            "workload.requests=5",
            "--set",
            "client.send_policy=doupnik",
        ])
        .output()
        .unwrap();
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.contains("no Nagle x delayed-ACK stall"), "{s}");
}

#[test]
fn policies_lists_every_policy() {
    let out = tinygram().arg("policies").output().unwrap();
    let s = String::from_utf8_lossy(&out.stdout);
    for p in [
        "nodelay",
        "nagle",
        "nagle-liberal",
        "minshall",
        "doupnik",
        "doupnik-liberal",
        "naglim:N",
        "cork",
        "delayed",
        "immediate",
    ] {
        assert!(s.contains(p), "missing {p}");
    }
}

#[test]
fn congestion_lists_every_module_with_its_rfc() {
    let out = tinygram().arg("congestion").output().unwrap();
    assert!(out.status.success());
    let s = String::from_utf8_lossy(&out.stdout);
    for p in [
        "newreno",
        "cubic",
        "RFC 9438",
        "hystart",
        "hystart++",
        "RFC 9406",
        "prr",
        "RFC 6937",
        "ecn",
        "RFC 3168",
        "ecn-only",
        "EXPERIMENTAL",
        "tlp",
        "RFC 8985",
    ] {
        assert!(s.contains(p), "missing {p}:\n{s}");
    }
}

/// `tinygram ... | head -1`: a reader that goes away ends tinygram quietly,
/// with no "failed printing to stdout" panic, for every printing subcommand.
#[test]
fn closed_stdout_ends_quietly() {
    use std::process::{Command as Std, Stdio};
    let f = scenario("[workload]\nrequest = [5000]\nresponse = [100]\nrequests = 200\n");
    let path = f.path().to_str().unwrap().to_string();
    let runs: [&[&str]; 5] = [
        &["run", "--json", &path],
        &["run", &path],
        &["scenario"],
        &["policies"],
        &["congestion"],
    ];
    for args in runs {
        let mut child = Std::new(assert_cmd::cargo::cargo_bin("tinygram"))
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Close the read end before tinygram writes anything.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(!err.contains("Broken pipe"), "{args:?}: {err}");
        assert_ne!(
            out.status.code(),
            Some(101),
            "{args:?}: a panic's exit code"
        );
    }
}

/// The key help shows the engine's real defaults (from `Config::default()`), not placeholders.
#[test]
fn key_help_shows_real_defaults() {
    for args in [&["scenario"][..], &["run", "--help"][..]] {
        let out = tinygram().args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(!text.contains("engine default"), "{args:?}: {text}");
        for key in ["client.send_policy", "server.ack_policy"] {
            let line = text
                .lines()
                .find(|l| l.trim_start().starts_with(key))
                .unwrap();
            let want = if key.ends_with("send_policy") {
                "\"nagle\""
            } else {
                "\"delayed\""
            };
            assert!(line.contains(want), "{line}");
        }
    }
}

/// `run --trace FILE` writes the why-trace as JSON lines. In Cheshire's
/// example the stall shows as the client's Nagle holds of the 88-byte runt,
/// each released about 200 ms later, and the server's delayed-ACK timer.
#[test]
fn trace_file_is_json_lines_with_nagle_holds_and_delayed_ack_timers() {
    let example =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/cheshire.toml");
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("trace.jsonl");
    let out = tinygram()
        .arg("run")
        .arg(&example)
        .arg("--trace")
        .arg(&trace)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&trace).unwrap();
    let events: Vec<serde_json::Value> = text
        .lines()
        .enumerate()
        .map(|(i, l)| {
            serde_json::from_str(l)
                .unwrap_or_else(|e| panic!("line {} is not JSON ({e}): {l}", i + 1))
        })
        .collect();
    assert!(events.len() > 100, "{} events", events.len());
    for e in &events {
        assert!(
            e["t"].is_number() && e["host"].is_string() && e["event"].is_string(),
            "{e}"
        );
    }
    let of = |host: &str, event: &str, rule: &str| -> Vec<&serde_json::Value> {
        events
            .iter()
            .filter(|e| {
                e["host"] == host && e["event"] == event && (rule.is_empty() || e["rule"] == rule)
            })
            .collect()
    };
    let holds = of("client", "hold", "nagle");
    let releases = of("client", "release", "nagle");
    assert!(!holds.is_empty(), "no nagle hold on the client");
    assert_eq!(holds.len(), releases.len(), "every nagle hold is released");
    assert!(
        holds.iter().all(|e| e["bytes"] == 88),
        "the runt: {holds:?}"
    );
    assert!(
        releases
            .iter()
            .all(|e| e["held_ms"].as_f64().unwrap() >= 199.0),
        "each runt waits for the delayed ACK: {releases:?}"
    );
    assert!(
        !of("server", "ack_delayed", "").is_empty(),
        "no delayed ACK on the server"
    );
    assert!(
        of("server", "ack_sent", "timer").len() >= holds.len(),
        "the server's delayed-ACK timer releases each held runt"
    );
}

/// The Cheshire example's `[[variant]]` tables: one run shows the stall and
/// what each fix does, in the JSON under `variants`.
#[test]
fn cheshire_variants_show_each_fix() {
    let out = tinygram()
        .args(["run", "../../examples/cheshire.toml", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let p50 = |r: &serde_json::Value| r["completion_ms"]["p50"].as_f64().unwrap();
    assert!(p50(&v) > 150.0, "base: {}", v["completion_ms"]);
    let variants = v["variants"].as_array().expect("variants");
    let get = |name: &str| {
        &variants
            .iter()
            .find(|x| x["name"] == name)
            .unwrap_or_else(|| panic!("no variant {name}"))["result"]
    };
    for fixed in [
        "client minshall",
        "client doupnik",
        "client nodelay",
        "99,912-byte blocks",
        "server Linux-like",
    ] {
        assert!(
            p50(get(fixed)) < 10.0,
            "{fixed}: {}",
            get(fixed)["completion_ms"]
        );
        assert_eq!(get(fixed)["integrity_ok"], true);
    }
    let q = p50(get("server quickack"));
    assert!((35.0..50.0).contains(&q), "server quickack p50 {q}");
    // Human output: the table follows the run, one row per variant.
    let out = tinygram()
        .args(["run", "../../examples/cheshire.toml", "-q"])
        .output()
        .unwrap();
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(
        s.contains("Variants (") && s.contains("server Linux-like"),
        "{s}"
    );
    let bad = tinygram()
        .args(["run", "../../examples/cheshire.toml", "--variant", "nope"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("client minshall"));
}

/// A connection that aborts with data undelivered: the run says it had nothing
/// left to do and why, integrity FAILED with the byte counts, completion n/a,
/// and a non-zero exit; the JSON has the same facts.
#[test]
fn aborted_run_reports_undelivered_bytes() {
    let f = scenario(
        "duration = \"600s\"\n[link]\nloss = 0.6\n[client]\nmax_retries = 2\n\
         [workload]\ntype = \"bulk\"\nbytes = \"1MB\"\n",
    );
    let out = tinygram().arg("run").arg(f.path()).output().unwrap();
    assert!(!out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let first = text.lines().next().unwrap();
    assert!(
        first.contains("nothing left to do (client aborted after 2 retransmissions"),
        "{first}"
    );
    assert!(!text.contains("duration cap"), "{text}");
    assert!(
        text.contains("integrity      FAILED: 0 of 262,144 written bytes delivered client to server (client aborted"),
        "{text}"
    );
    assert!(text.contains("completion     n/a"), "{text}");
    let out = tinygram()
        .args(["run", "--json"])
        .arg(f.path())
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["integrity_ok"], false);
    assert_eq!(v["ended"], "idle");
    assert!(v["completion_ms"].is_null());
    assert_eq!(v["delivery"]["client_to_server"]["bytes_delivered"], 0);
    assert_eq!(v["client"]["app_bytes_written"], 262_144);
    // The exit status and stderr say why, also with --json.
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("integrity check failed: 0 of 262,144 written bytes delivered"),
        "{err}"
    );
}

/// `tun --set` takes a host's keys bare; a scenario's `client.`/`server.`
/// prefix is named as the mistake (not "unknown key"), before any device is touched.
#[test]
fn tun_set_names_the_scenario_prefix() {
    for (args, bare) in [
        (
            &[
                "serve",
                "--port",
                "9000",
                "--set",
                "client.send_policy=nodelay",
            ][..],
            "send_policy",
        ),
        (
            &[
                "connect",
                "--to",
                "10.7.0.1:9000",
                "--set",
                "server.mss=1000",
            ][..],
            "mss",
        ),
    ] {
        let out = tinygram().arg("tun").args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("without the `client.` / `server.` prefix")
                && err.contains(&format!("use --set {bare}=")),
            "{err}"
        );
        assert!(!err.contains("unknown key"), "{err}");
        assert!(!err.contains("serving"), "{err}");
    }
    for args in [&["tun", "serve", "--help"][..], &["tun", "--help"][..]] {
        let help = tinygram().args(args).output().unwrap();
        let help = String::from_utf8_lossy(&help.stdout).replace('\n', " ");
        assert!(
            help.contains("without the `client.` / `server.` prefix"),
            "{args:?}: {help}"
        );
    }
}

/// A device that cannot be opened is an error, and "serving" is never said.
#[test]
fn tun_does_not_say_serving_without_a_device() {
    let out = tinygram()
        .args([
            "tun",
            "serve",
            "--port",
            "9000",
            "--dev",
            "a-name-longer-than-ifnamsiz",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("error:"), "{err}");
    assert!(!err.contains("serving"), "{err}");
}

/// Why the TUN tests cannot run here (no /dev/net/tun, no `ip`, not root).
fn tun_unavailable() -> Option<String> {
    tinygram_net::netns::unavailable()
}

/// `tun serve` says "serving" only once the device is up with the kernel's
/// address, so a peer can connect the moment the line appears; the exit
/// summary's connection line shows both ends. Needs root (skipped otherwise,
/// unless TINYGRAM_REAL_WIRE=require).
#[test]
fn tun_serving_line_comes_once_the_device_is_up() {
    use std::io::BufRead;
    use std::process::{Command as Std, Stdio};
    if let Some(why) = tun_unavailable() {
        if std::env::var("TINYGRAM_REAL_WIRE").as_deref() == Ok("require") {
            panic!("TINYGRAM_REAL_WIRE=require but: {why}");
        }
        eprintln!("SKIPPED tun_serving_line_comes_once_the_device_is_up: {why}");
        return;
    }
    let ns = tinygram_net::netns::Netns::new("cli").unwrap();
    let mut child = Std::new("ip")
        .args(["netns", "exec", ns.name()])
        .arg(assert_cmd::cargo::cargo_bin("tinygram"))
        .args([
            "tun",
            "serve",
            "--port",
            "9000",
            "--conns",
            "1",
            "--duration",
            "20s",
            "--quiet",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            let _ = tx.send(line);
        }
    });
    let mut seen = Vec::new();
    let serving = loop {
        match rx.recv_timeout(std::time::Duration::from_secs(15)) {
            Ok(line) if line.contains("serving") => break line,
            Ok(line) => seen.push(line),
            Err(_) => {
                let _ = child.kill();
                panic!("no serving line; stderr so far: {seen:?}");
            }
        }
    };
    // At that moment the device is up and has the kernel's address.
    let ip = |args: &[&str]| {
        let out = Std::new("ip")
            .arg("-n")
            .arg(ns.name())
            .args(args)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    let link = ip(&["-o", "link", "show", "dev", "tg0"]);
    let addr = ip(&["-o", "-4", "addr", "show", "dev", "tg0"]);
    // And a peer can connect at once: the echo app answers.
    let echo = Std::new("ip")
        .args(["netns", "exec", ns.name(), "timeout", "10", "bash", "-c"])
        .arg("exec 3<>/dev/tcp/10.7.0.2/9000; printf hi >&3; head -c 2 <&3")
        .output()
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let summary = String::from_utf8_lossy(&out.stdout);
    assert!(serving.contains("10.7.0.2:9000"), "{serving}");
    assert!(
        link.contains(",UP") || link.contains("<UP"),
        "device not up when serving was said: {link}"
    );
    assert!(
        addr.contains("10.7.0.1/24"),
        "no kernel address yet: {addr}"
    );
    assert_eq!(String::from_utf8_lossy(&echo.stdout), "hi", "{echo:?}");
    assert!(
        summary.contains("connection 10.7.0.2:9000 <-> 10.7.0.1:"),
        "{summary}"
    );
}

/// `tinygram drill`: a script that could not run (missing, binary, empty,
/// comment-only) is an error on stderr with exit 2, distinct from a script
/// that ran and failed (exit 1); alone or among other scripts.
#[test]
fn drill_scripts_that_cannot_run_exit_2() {
    let drill = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/drill");
    let good = drill.join("handshake-passive.pkt");
    let failing = drill.join("must-fail/wrong-seq.pkt");
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.pkt");
    std::fs::write(&empty, "").unwrap();
    let comments = dir.path().join("comments.pkt");
    std::fs::write(
        &comments,
        "// just a comment\n/* and a block */\n\n--tolerance_usecs=1000\n",
    )
    .unwrap();
    let binary = dir.path().join("binary.pkt");
    std::fs::write(
        &binary,
        [0xd4, 0xc3, 0xb2, 0xa1, 0x02, 0x00, 0x04, 0x00, 0, 0],
    )
    .unwrap();
    let missing = dir.path().join("missing.pkt");
    let drill_run = |paths: &[&std::path::Path]| {
        let out = tinygram().arg("drill").args(paths).output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).to_string(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    for (path, why) in [
        (&empty, "no events"),
        (&comments, "no events"),
        (&binary, "not a packetdrill script"),
        (&missing, "cannot read"),
    ] {
        let (code, out, err) = drill_run(&[path]);
        assert_eq!(code, Some(2), "{path:?}: {out} {err}");
        assert!(
            err.contains(why) && err.contains("ERROR"),
            "{path:?}: {err}"
        );
        assert!(out.contains("0 passed, 0 failed, 1 not run"), "{out}");
        assert!(!out.contains(why), "the reason goes to stderr: {out}");
    }
    let (code, out, err) = drill_run(&[&good, &missing]);
    assert_eq!(code, Some(2), "{out} {err}");
    assert!(
        out.contains("PASS ") && out.contains("1 passed, 0 failed, 1 not run"),
        "{out}"
    );
    let (code, out, _) = drill_run(&[&good, &failing]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("1 passed, 1 failed"), "{out}");
    let (code, _, _) = drill_run(&[&good]);
    assert_eq!(code, Some(0));
    // A script that cannot run wins over one that failed: 2, not 1.
    let (code, _, _) = drill_run(&[&failing, &binary]);
    assert_eq!(code, Some(2));
}

/// `tinygram diagnose` on a capture cut mid-record (tcpdump killed while
/// writing: `head -c N run.pcap`) analyses every complete frame and warns,
/// on stderr and in the JSON's capture stats, where the file ends.
#[test]
fn diagnose_reads_a_truncated_capture_and_warns() {
    let f = scenario("[workload]\nrequest = [5000]\nresponse = [100]\nrequests = 20\n");
    let dir = tempfile::tempdir().unwrap();
    let whole = dir.path().join("run.pcap");
    let out = tinygram()
        .arg("run")
        .arg(f.path())
        .arg("--pcap")
        .arg(&whole)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let bytes = std::fs::read(&whole).unwrap();
    // Record ends (little-endian pcap, as tinygram writes it), to cut inside one.
    let mut ends = Vec::new();
    let mut at = 24;
    while at < bytes.len() {
        let incl = u32::from_le_bytes(bytes[at + 8..at + 12].try_into().unwrap()) as usize;
        at += 16 + incl;
        ends.push(at);
    }
    let complete = ends.len() / 2;
    let cut = ends[complete - 1] + 20;
    let short = dir.path().join("t.pcap");
    std::fs::write(&short, &bytes[..cut]).unwrap();
    let json = tinygram()
        .args(["diagnose", "--json"])
        .arg(&short)
        .output()
        .unwrap();
    assert!(json.status.success(), "{json:?}");
    let err = String::from_utf8_lossy(&json.stderr);
    assert!(
        err.contains("warning:")
            && err.contains(&format!(
                "ends inside a packet record after {complete} complete frame(s)"
            )),
        "{err}"
    );
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["capture"]["frames"], complete as u64, "{v}");
    assert_eq!(v["capture"]["truncated"], "a packet record", "{v}");
    // The text report too; a whole file gives no warning and `truncated: null`.
    let text = tinygram().arg("diagnose").arg(&short).output().unwrap();
    assert!(text.status.success() && !text.stdout.is_empty());
    let ok = tinygram()
        .args(["diagnose", "--json"])
        .arg(&whole)
        .output()
        .unwrap();
    assert!(
        ok.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&ok.stdout).unwrap();
    assert!(v["capture"]["truncated"].is_null(), "{v}");
    assert_eq!(v["capture"]["frames"], ends.len() as u64);
}

/// The error texts of issue-class mistakes, as `tinygram run` prints them: a
/// variant's typo at the key's own line, one real range, "did you mean" for
/// a policy, the README's rate notation accepted and byte rates explained.
#[test]
fn run_errors_say_exactly_what_is_wrong() {
    let run = |text: &str, sets: &[&str]| {
        let f = scenario(text);
        let mut cmd = tinygram();
        cmd.arg("run").arg(f.path());
        for s in sets {
            cmd.args(["--set", s]);
        }
        let out = cmd.output().unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    let small = "[workload]\nrequests = 3\n";
    let variant = format!(
        "{small}\n[[variant]]\nname = \"v\"\nclient.mss = 1000\nclient.send_polcy = \"nodelay\"\n"
    );
    let (ok, err) = run(&variant, &[]);
    assert!(!ok);
    assert!(err.contains(":7: client.send_polcy"), "{err}");
    let (ok, err) = run(small, &["client.mss=-1"]);
    assert!(!ok && err.contains("out of range (64 to 65535)"), "{err}");
    let (ok, err) = run(small, &["client.send_policy=nagel"]);
    assert!(!ok && err.contains("did you mean \"nagle\"?"), "{err}");
    let (ok, err) = run(small, &["link.rate=1.544Mb/s"]);
    assert!(ok, "{err}");
    let (ok, err) = run(small, &["link.rate=1MB/s"]);
    assert!(
        !ok && err.contains("bytes per second") && err.contains("8Mbps"),
        "{err}"
    );
}

/// `tun link` end to end: it names the namespaces it made, a UDP echo
/// across it takes at least the 2 x 5 ms asked, it stops by itself after
/// `--for`, prints both directions' counts, and deletes its namespaces.
/// Needs root (skipped otherwise, unless TINYGRAM_REAL_WIRE=require).
#[test]
fn tun_link_carries_packets_with_the_delay_asked() {
    use std::io::BufRead;
    use std::net::UdpSocket;
    use std::process::{Command as Std, Stdio};
    use std::time::{Duration, Instant};
    use tinygram_net::netns::Netns;
    if let Some(why) = tun_unavailable() {
        if std::env::var("TINYGRAM_REAL_WIRE").as_deref() == Ok("require") {
            panic!("TINYGRAM_REAL_WIRE=require but: {why}");
        }
        eprintln!("SKIPPED tun_link_carries_packets_with_the_delay_asked: {why}");
        return;
    }
    let mut child = Std::new(assert_cmd::cargo::cargo_bin("tinygram"))
        .args([
            "tun",
            "link",
            "--delay",
            "5ms",
            "--subnet",
            "10.78.0.1/24",
            "--for",
            "4s",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut names = Vec::new();
    for line in stderr.lines().map_while(Result::ok) {
        if let Some(rest) = line.split("namespace ").nth(1) {
            names.push(rest.split_whitespace().next().unwrap().to_string());
        }
        if line.starts_with("Forwarding until") {
            break;
        }
    }
    assert_eq!(names.len(), 2, "{names:?}");
    let (left, right) = (
        Netns::existing(&names[0]).unwrap(),
        Netns::existing(&names[1]).unwrap(),
    );
    let echo = right
        .run(|| UdpSocket::bind("10.78.0.2:7000"))
        .unwrap()
        .unwrap();
    echo.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    std::thread::spawn(move || {
        let mut b = [0u8; 64];
        while let Ok((n, from)) = echo.recv_from(&mut b) {
            let _ = echo.send_to(&b[..n], from);
        }
    });
    let probe = left
        .run(|| UdpSocket::bind("10.78.0.1:0"))
        .unwrap()
        .unwrap();
    probe
        .set_read_timeout(Some(Duration::from_secs(2)))
        .unwrap();
    let mut b = [0u8; 64];
    for _ in 0..5 {
        let t = Instant::now();
        probe.send_to(b"ping", "10.78.0.2:7000").unwrap();
        probe.recv_from(&mut b).expect("an echo across the link");
        assert!(
            t.elapsed() >= Duration::from_millis(10),
            "{:?}",
            t.elapsed()
        );
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let summary = String::from_utf8_lossy(&out.stdout);
    assert!(summary.contains("duration reached"), "{summary}");
    assert_eq!(
        summary
            .matches("5 packets (160 bytes) offered, 5 delivered")
            .count(),
        2,
        "{summary}"
    );
    drop((left, right));
    let list = Std::new("ip").args(["netns", "list"]).output().unwrap();
    let list = String::from_utf8_lossy(&list.stdout);
    assert!(names.iter().all(|n| !list.contains(n.as_str())), "{list}");
}

/// `diagnose --rank` on the classic stall (strict Nagle on the client's
/// 2,000-byte request, a 200 ms delayed ACK at the server): each fix is
/// replayed, and the order follows the replay. Writing the message at once
/// cannot help (it already is one write: the runt is the MSS remainder), so
/// it ranks below every fix that removes the hold, and the first fix must
/// cut the median exchange to well under the delayed ACK.
#[test]
fn diagnose_rank_puts_the_fix_that_helps_first() {
    let f = scenario(
        "seed = 1\n[link]\nrate = \"100Mbps\"\ndelay = \"5ms\"\n[client]\nsend_policy = \"nagle\"\nrto_min = \"500ms\"\n[server]\nack_policy = \"delayed\"\ndelack = \"200ms\"\n[workload]\ntype = \"request-response\"\nrequest = [2000]\nresponse = [100]\nrequests = 8\n",
    );
    let dir = tempfile::tempdir().unwrap();
    let pcap = dir.path().join("run.pcap");
    let out = tinygram()
        .arg("run")
        .arg(f.path())
        .arg("--pcap")
        .arg(&pcap)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let out = tinygram()
        .args(["diagnose", "--rank", "--json"])
        .arg(&pcap)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let x = v["flows"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["kind"] == "held_tail" && x["sender"] == "client")
        .expect("the held tail is found");
    let recs = x["recommendations"].as_array().unwrap();
    let p50 = |r: &serde_json::Value| r["replay"]["p50_ms"].as_f64();
    let measured: Vec<f64> = recs.iter().map_while(p50).collect();
    assert!(measured.len() >= 4, "{recs:#?}");
    assert!(measured.windows(2).all(|w| w[0] <= w[1]), "{measured:?}");
    let first = &recs[0]["replay"];
    let base = first["baseline_p50_ms"].as_f64().unwrap();
    assert_eq!(first["replay_matches"], true, "{first}");
    assert!(base > 200.0, "the replay keeps the stall: {base}");
    assert!(measured[0] < 30.0, "{recs:#?}");
    let one_write = recs
        .iter()
        .position(|r| r["remedy"] == "one_write")
        .expect("the one-write fix");
    assert!(p50(&recs[one_write]).unwrap() > 0.9 * base, "{recs:#?}");
    assert_eq!(one_write, measured.len() - 1, "{recs:#?}");
    // Text output says the number beside each fix.
    let out = tinygram()
        .args(["diagnose", "--rank"])
        .arg(&pcap)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("replayed (client nodelay): median exchange"),
        "{text}"
    );
}

/// `bench sim --flows N --memory-layout` prints where the endpoint table and
/// the event counter lie (a range holding N x 2 endpoints), runs once, and
/// prints its segment count and integrity, each as one line a trace reader finds.
#[test]
fn memory_layout_run_prints_the_table_and_the_run() {
    let out = tinygram()
        .args([
            "bench",
            "sim",
            "--flows",
            "3",
            "--requests",
            "2",
            "--memory-layout",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    let layout: Vec<&str> = err
        .lines()
        .find(|l| l.starts_with("tinygram-layout endpoints "))
        .expect("layout line")
        .split_whitespace()
        .collect();
    let hex = |s: &str| usize::from_str_radix(s.trim_start_matches("0x"), 16).unwrap();
    let (start, end, size) = (
        hex(layout[2]),
        hex(layout[3]),
        layout[5].parse::<usize>().unwrap(),
    );
    assert_eq!(end - start, 6 * size, "{err}");
    let run = err
        .lines()
        .find(|l| l.starts_with("tinygram-layout segments "))
        .expect("run line");
    let segments: u64 = run.split_whitespace().nth(2).unwrap().parse().unwrap();
    assert!(segments > 3 * 2 * 2, "{run}");
    assert!(run.ends_with("integrity ok"), "{run}");
}
