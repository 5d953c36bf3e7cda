//! Runs every drill script of the workspace: `tests/drill/*.pkt` must pass,
//! `tests/drill/must-fail/*.pkt` must fail at the line their header names,
//! `tests/drill/pending/*.pkt` document known engine gaps and must still fail,
//! `tests/drill/linux/*.pkt` pass under `--stack linux` only.

use std::path::{Path, PathBuf};
use tinygram_drill::report::FailKind;
use tinygram_drill::{parse_script, run_file, run_script, DrillArgs, Settings, Stack};
use tinygram_drill::{ScriptReport, QUICK_ACK_HINT};

/// The workspace's `tests/drill` directory.
fn drill_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/drill")
}

/// Sorted `*.pkt` files directly in `dir`.
fn scripts(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "pkt"))
        .collect();
    v.sort();
    v
}

/// The value after `// <key>:` in the script's header comments.
fn header(path: &Path, key: &str) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    text.lines()
        .take_while(|l| l.trim_start().starts_with("//"))
        .find_map(|l| {
            l.trim_start()
                .trim_start_matches('/')
                .trim()
                .strip_prefix(key)
                .and_then(|r| r.strip_prefix(':'))
                .map(|r| r.trim().to_string())
        })
}

#[test]
fn every_drill_script_passes() {
    let all = scripts(&drill_dir());
    assert!(
        all.len() >= 20,
        "expected at least 20 scripts, found {}",
        all.len()
    );
    let failing: Vec<String> = all
        .iter()
        .map(|p| run_file(p, &Settings::default()))
        .filter(|r| !r.passed())
        .map(|r| r.to_string())
        .collect();
    assert!(
        failing.is_empty(),
        "{} drill script(s) failed:\n{}",
        failing.len(),
        failing.join("\n")
    );
}

#[test]
fn must_fail_scripts_fail_at_their_line() {
    let all = scripts(&drill_dir().join("must-fail"));
    assert!(all.len() >= 8, "expected at least 8 must-fail scripts");
    let mut problems = Vec::new();
    for p in &all {
        let Some(want) = header(p, "drill-expect-fail") else {
            problems.push(format!(
                "{}: no `// drill-expect-fail: line N` header",
                p.display()
            ));
            continue;
        };
        let want: usize = want
            .trim_start_matches("line")
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{}: bad header {want:?}", p.display()));
        let rep = run_file(p, &Settings::default());
        match &rep.failure {
            None => problems.push(format!(
                "{}: passed but must fail at line {want}",
                p.display()
            )),
            Some(f) if f.line != want => problems.push(format!(
                "{}: failed at line {} instead of {want}:\n{rep}",
                p.display(),
                f.line
            )),
            Some(_) => {
                let text = rep.to_string();
                let needle = format!(":{want}: ");
                if !text.contains(&needle) {
                    problems.push(format!(
                        "{}: message does not name line {want}:\n{text}",
                        p.display()
                    ));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn pending_scripts_still_fail() {
    let dir = drill_dir().join("pending");
    if !dir.exists() {
        return; // nothing pending
    }
    let now_passing: Vec<String> = scripts(&dir)
        .iter()
        .filter(|p| {
            assert!(
                header(p, "drill-pending").is_some(),
                "{}: needs a `// drill-pending: why` header",
                p.display()
            );
            run_file(p, &Settings::default()).passed()
        })
        .map(|p| p.display().to_string())
        .collect();
    assert!(
        now_passing.is_empty(),
        "these pending scripts pass now; move them to tests/drill/: {now_passing:?}"
    );
}

/// Settings for `--stack linux`.
fn linux() -> Settings {
    Settings {
        stack: Stack::linux(),
        ..Settings::default()
    }
}

/// Runs script text under `settings`.
fn run_text(text: &str, settings: &Settings) -> ScriptReport {
    run_script(&parse_script(text, "inline.pkt").expect("parses"), settings)
}

#[test]
fn linux_scripts_pass_under_stack_linux_only() {
    let all = scripts(&drill_dir().join("linux"));
    assert!(all.len() >= 3, "expected at least 3 --stack linux scripts");
    let mut problems = Vec::new();
    for p in &all {
        let rep = run_file(p, &linux());
        if !rep.passed() {
            problems.push(format!("fails under --stack linux:\n{rep}"));
        }
        let want = header(p, "drill-tinygram-fail")
            .and_then(|w| w.trim_start_matches("line").trim().parse::<usize>().ok())
            .unwrap_or_else(|| panic!("{}: needs `// drill-tinygram-fail: line N`", p.display()));
        let hint = match header(p, "drill-tinygram-hint").as_deref() {
            Some("yes") => true,
            Some("no") => false,
            _ => panic!("{}: needs `// drill-tinygram-hint: yes|no`", p.display()),
        };
        let rep = run_file(p, &Settings::default());
        let text = rep.to_string();
        match &rep.failure {
            None => problems.push(format!(
                "{}: passes under --stack tinygram too",
                p.display()
            )),
            Some(f) if f.line != want => problems.push(format!(
                "{}: under --stack tinygram fails at line {} instead of {want}:\n{text}",
                p.display(),
                f.line
            )),
            Some(_) if text.contains(QUICK_ACK_HINT) != hint => problems.push(format!(
                "{}: the quick-ACK hint should {}appear:\n{text}",
                p.display(),
                if hint { "" } else { "not " }
            )),
            Some(_) => {}
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// A passive open whose script sets no ACK policy, then `tail`.
fn no_ack_policy_script(tail: &str) -> String {
    format!(
        "    0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
   +0 bind(3, ..., ...) = 0
   +0 listen(3, 1) = 0
   +0 < S 0:0(0) win 65535 <mss 1000>
   +0 > S. 0:0(0) ack 1 <mss 1460>
 +.01 < . 1:1(0) ack 1 win 65535
   +0 accept(3, ..., ...) = 4
{tail}"
    )
}

#[test]
fn quick_ack_hint_only_for_ack_timing_under_stack_tinygram() {
    let hinted = |r: &ScriptReport| r.to_string().contains(QUICK_ACK_HINT);
    // Expected at once, the engine delays it (nothing sent in time): hint,
    // on its own line after the unchanged failure.
    let at_once =
        no_ack_policy_script("   +0 < P. 1:101(100) ack 1 win 65535\n   +0 > . 1:1(0) ack 101\n");
    let r = run_text(&at_once, &Settings::default());
    let f = r.failure.as_ref().expect("fails under tinygram");
    assert_eq!(f.line, 9);
    assert!(f.msg.starts_with("expected segment was not sent by"), "{r}");
    assert_eq!(f.expected.as_deref(), Some(". 1:1(0) ack 101"));
    assert_eq!(f.time_ns, Some(14_000_000));
    assert!(
        r.to_string()
            .lines()
            .last()
            .is_some_and(|l| l.trim() == format!("hint: {QUICK_ACK_HINT}")),
        "{r}"
    );
    // The same under --stack linux passes; a failing ACK there gets no hint.
    assert!(run_text(&at_once, &linux()).passed());
    let wrong_ack = at_once.replace("ack 101\n", "ack 100\n");
    let r = run_text(&wrong_ack, &linux());
    assert!(!r.passed() && !hinted(&r), "{r}");
    // Expected at a later time, the engine's delayed ACK is later still.
    let late =
        no_ack_policy_script("   +0 < P. 1:101(100) ack 1 win 65535\n +.04 > . 1:1(0) ack 101\n");
    let r = run_text(&late, &Settings::default());
    assert!(!r.passed() && hinted(&r), "{r}");
    // Vice versa: the script expects the ACK to wait 40 ms (Linux past its
    // quick ACKs), the engine ACKs the second segment at once: hint.
    let early = no_ack_policy_script(
        "   +0 < P. 1:101(100) ack 1 win 65535
 +.01 < P. 101:201(100) ack 1 win 65535
 +.04 > . 1:1(0) ack 201
",
    );
    let r = run_text(&early, &Settings::default());
    let f = r.failure.as_ref().expect("fails");
    assert_eq!(f.kind, tinygram_drill::FailKind::Timing, "{r}");
    assert!(hinted(&r), "{r}");
    // The script expects the ACK on the response data; the engine sends a
    // pure ACK at once (the second segment): hint.
    let piggyback = no_ack_policy_script(
        "   +0 < P. 1:101(100) ack 1 win 65535
 +.01 < P. 101:201(100) ack 1 win 65535
   +0 write(4, ..., 10) = 10
   +0 > P. 1:11(10) ack 201
",
    );
    let r = run_text(&piggyback, &Settings::default());
    assert!(!r.passed() && hinted(&r), "{r}");
    // Unrelated mismatches get no hint: a wrong seq, with the ACK policy left
    // to the stack or not.
    let d = drill_dir();
    let r = run_file(&d.join("must-fail/wrong-seq.pkt"), &Settings::default());
    assert!(r.to_string().contains("sequence number"), "{r}");
    assert!(!hinted(&r), "{r}");
    let text = std::fs::read_to_string(d.join("must-fail/wrong-seq.pkt")).unwrap();
    let text: String = text
        .lines()
        .filter(|l| !l.contains("TCP_TINYGRAM_ACK_POLICY"))
        .map(|l| format!("{l}\n"))
        .collect();
    let r = run_text(&text, &Settings::default());
    assert!(!r.passed() && !hinted(&r), "{r}");
    // A script that chose its ACK policy gets no hint: --stack would not change it.
    let r = run_file(
        &d.join("must-fail/segment-too-late.pkt"),
        &Settings::default(),
    );
    assert!(!r.passed() && !hinted(&r), "{r}");
    // An ACK the engine owes nothing for (a pure ACK never acknowledged).
    let text = std::fs::read_to_string(d.join("must-fail/missing-segment.pkt")).unwrap();
    let text = text.replace(
        "TCP_TINYGRAM_ACK_POLICY, \"delayed\"",
        "TCP_TINYGRAM_DELACK, \"200ms\"",
    );
    let r = run_text(&text, &Settings::default());
    assert!(!r.passed() && !hinted(&r), "{r}");
}

#[test]
fn cli_prints_summary_and_fails_on_failure() {
    let d = drill_dir();
    let args = DrillArgs::parse_words(&[
        d.join("handshake-passive.pkt").display().to_string(),
        d.join("must-fail/wrong-seq.pkt").display().to_string(),
    ])
    .unwrap();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let outcome = tinygram_drill::cli::run_scripts(&args, &mut out, &mut err);
    let out = String::from_utf8(out).unwrap();
    assert_eq!(outcome, tinygram_drill::cli::Outcome::Failed);
    assert!(err.is_empty());
    assert!(out.contains("PASS "), "{out}");
    assert!(out.contains("wrong-seq.pkt:13: segment mismatch"), "{out}");
    assert!(out.trim_end().ends_with("1 passed, 1 failed"), "{out}");
    assert_eq!(tinygram_drill::run_cli(&["--bogus".to_string()]), 2);
    // --stack linux: a script written for Linux's quick ACKs passes.
    let linux_script = d.join("linux/quick-ack-at-start.pkt");
    let mut args = args;
    args.scripts = vec![linux_script.clone()];
    args.stack = Stack::linux();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    assert_eq!(
        tinygram_drill::cli::run_scripts(&args, &mut out, &mut err),
        tinygram_drill::cli::Outcome::Passed
    );
    let run = |stack: &str| {
        tinygram_drill::run_cli(&[
            "--quiet".to_string(),
            format!("--stack={stack}"),
            linux_script.display().to_string(),
        ])
    };
    assert_eq!(run("linux"), 0);
    assert_eq!(run("tinygram"), 1);
    assert_eq!(run("bsd"), 2);
}

#[test]
fn suite_runs_a_directory_with_run_all_flags_and_prints_a_table() {
    let d = drill_dir().join("must-fail");
    let words = [
        "--stack",
        "linux",
        "--suite",
        d.to_str().unwrap(),
        "--send_omit_free",
        "--ip_version=ipv4",
        "--local_ip=192.168.0.1",
        "--gateway_ip=192.168.0.1",
        "--netmask_ip=255.255.0.0",
        "--remote_ip=192.0.2.1",
        "-D",
        "TFO_COOKIE=3021b9d889017eeb",
        "-D",
        "CODE=host_unreachable",
        "--jobs",
        "2",
    ];
    let args = DrillArgs::parse_words(&words).unwrap();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let outcome = tinygram_drill::cli::run_scripts(&args, &mut out, &mut err);
    let out = String::from_utf8(out).unwrap();
    // Every script there is meant to fail.
    assert_ne!(outcome, tinygram_drill::cli::Outcome::Passed, "{out}");
    let total = out
        .lines()
        .find(|l| l.starts_with("total"))
        .expect("a total row");
    let cols: Vec<&str> = total.split_whitespace().collect();
    assert_eq!(cols[2], "0", "no script in must-fail passes: {out}");
    assert!(
        out.contains("wrong-seq.pkt: line 13: segment mismatch"),
        "{out}"
    );
    // --json gives the same counts.
    let mut words = words.to_vec();
    words.push("--json");
    let args = DrillArgs::parse_words(&words).unwrap();
    let mut js = Vec::new();
    tinygram_drill::cli::run_scripts(&args, &mut js, &mut Vec::new());
    let js = String::from_utf8(js).unwrap();
    assert!(js.contains("\"pass\": 0"), "{js}");
    // IPv6 is refused with a reason, and a bad address by clap.
    let args = DrillArgs::parse_words(&["--suite", ".", "--ip_version=ipv6"]).unwrap();
    let mut e = Vec::new();
    let o = tinygram_drill::cli::run_scripts(&args, &mut Vec::new(), &mut e);
    assert_eq!(o, tinygram_drill::cli::Outcome::NotRun);
    assert!(String::from_utf8(e).unwrap().contains("only ipv4"));
    assert!(DrillArgs::parse_words(&["--suite", ".", "--local_ip=300.1.1.1"]).is_err());
    assert!(DrillArgs::parse_words(&["--suite", ".", "-D", "1X=2"]).is_err());
}

/// `tests/drill/stacks/*.pkt` pass under the profile their `// stack: NAME`
/// header names, and fail under `--stack rfc` (the engine's defaults, which
/// is how the engine behaved before the profile's rule existed) at the line
/// `// rfc-fails-at: line N` names.
#[test]
fn stack_scripts_pass_under_their_profile_and_fail_under_rfc() {
    let all = scripts(&drill_dir().join("stacks"));
    assert!(!all.is_empty(), "expected scripts in tests/drill/stacks");
    let mut problems = Vec::new();
    for p in &all {
        let stack: Stack = header(p, "stack")
            .unwrap_or_else(|| panic!("{}: needs `// stack: NAME`", p.display()))
            .parse()
            .unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        let want: usize = header(p, "rfc-fails-at")
            .and_then(|w| w.trim_start_matches("line").trim().parse().ok())
            .unwrap_or_else(|| panic!("{}: needs `// rfc-fails-at: line N`", p.display()));
        let rep = run_file(
            p,
            &Settings {
                stack,
                ..Settings::default()
            },
        );
        if !rep.passed() {
            problems.push(format!("fails under --stack {stack}:\n{rep}"));
        }
        let rfc = run_file(p, &Settings::default());
        match &rfc.failure {
            Some(f) if f.line == want => {}
            Some(f) => problems.push(format!(
                "{}: under --stack rfc failed at line {} instead of {want}:\n{rfc}",
                p.display(),
                f.line
            )),
            None => problems.push(format!(
                "{}: passes under --stack rfc; it must fail at line {want}",
                p.display()
            )),
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// A script whose `%{ }%` block writes a file (`marker`), then hangs.
fn hostile_python(marker: &std::path::Path) -> String {
    format!(
        "0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n\
         +0 bind(3, ..., ...) = 0\n\
         +0 listen(3, 1) = 0\n\
         +0 < S 0:0(0) win 65535 <mss 1000>\n\
         +0 > S. 0:0(0) ack 1 <mss 1460>\n\
         +.1 < . 1:1(0) ack 1 win 65535\n\
         +0 accept(3, ..., ...) = 4\n\
         +0 %{{\nopen('{}', 'w').write('ran')\nwhile True: pass\n}}%\n",
        marker.display()
    )
}

#[test]
fn no_python_refuses_python_blocks_and_a_hanging_block_is_killed() {
    let marker = std::env::temp_dir().join(format!("tinygram-py-{}", std::process::id()));
    let _ = std::fs::remove_file(&marker);
    let text = hostile_python(&marker);
    let refused = run_text(
        &text,
        &Settings {
            no_python: true,
            ..Settings::default()
        },
    );
    let f = refused.failure.expect("refused");
    assert_eq!(f.kind, FailKind::Unsupported, "{}", f.msg);
    assert!(f.msg.contains("--no-python"), "{}", f.msg);
    assert!(!marker.exists(), "a refused block ran");
    // Without the flag the block runs, and is killed at the timeout.
    let started = std::time::Instant::now();
    let rep = run_text(
        &text,
        &Settings {
            python_timeout: std::time::Duration::from_millis(500),
            ..Settings::default()
        },
    );
    let f = rep.failure.expect("a hanging block fails the script");
    if f.msg.contains("cannot run python3") {
        eprintln!("python3 not installed: not checked");
        return;
    }
    assert_eq!(f.kind, FailKind::Check, "{}", f.msg);
    assert!(f.msg.contains("still running after 0.5 s"), "{}", f.msg);
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    assert!(marker.exists(), "the block did run");
    std::fs::remove_file(&marker).unwrap();
}

/// One 4000-byte write: Linux sends it in TSO packets of two segments, each
/// with PSH on its last (tcp_write_xmit, tcp_tso_autosize), while FreeBSD sets
/// PSH only on the segment that empties the send buffer (tcp_output.c, TH_PUSH
/// when `off + len == sbused`), as RFC 9293 3.9.1's end of data.
#[test]
fn psh_on_tso_packets_under_linux_only_at_write_end_under_freebsd() {
    let burst = |flags: [&str; 4]| {
        no_ack_policy_script(&format!(
            "   +0 write(4, ..., 4000) = 4000
   +0 > {} 1:1001(1000) ack 1
   +0 > {} 1001:2001(1000) ack 1
   +0 > {} 2001:3001(1000) ack 1
   +0 > {} 3001:4001(1000) ack 1
",
            flags[0], flags[1], flags[2], flags[3]
        ))
    };
    let linux_rule = burst([".", "P.", ".", "P."]);
    let end_only = burst([".", ".", ".", "P."]);
    let freebsd = Settings {
        stack: "freebsd".parse().expect("a stack"),
        ..Settings::default()
    };
    let r = run_text(&linux_rule, &linux());
    assert!(r.passed(), "{r}");
    let r = run_text(&end_only, &freebsd);
    assert!(r.passed(), "{r}");
    let r = run_text(&linux_rule, &freebsd);
    assert_eq!(r.failure.as_ref().map(|f| f.line), Some(10), "{r}");
    let r = run_text(&end_only, &linux());
    assert_eq!(r.failure.as_ref().map(|f| f.line), Some(10), "{r}");
}
