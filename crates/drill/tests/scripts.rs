//! Runs every drill script of the workspace: `tests/drill/*.pkt` must pass,
//! `tests/drill/must-fail/*.pkt` must fail at the line their header names,
//! `tests/drill/pending/*.pkt` document known engine gaps and must still fail.

use std::path::{Path, PathBuf};
use tinygram_drill::{run_file, DrillArgs, Settings};

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

#[test]
fn cli_prints_summary_and_fails_on_failure() {
    let d = drill_dir();
    let args = DrillArgs {
        scripts: vec![
            d.join("handshake-passive.pkt"),
            d.join("must-fail/wrong-seq.pkt"),
        ],
        tolerance_usecs: 4000,
        strict_segments: false,
        verbose: false,
        quiet: false,
    };
    let mut out = Vec::new();
    let ok = tinygram_drill::cli::run_scripts(&args, &mut out);
    let out = String::from_utf8(out).unwrap();
    assert!(!ok);
    assert!(out.contains("PASS "), "{out}");
    assert!(out.contains("wrong-seq.pkt:13: segment mismatch"), "{out}");
    assert!(out.trim_end().ends_with("1 passed, 1 failed"), "{out}");
    assert_eq!(tinygram_drill::run_cli(&["--bogus".to_string()]), 2);
}
