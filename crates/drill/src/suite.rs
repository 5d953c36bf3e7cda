//! `tinygram drill --suite DIR`: every script under a directory, in parallel,
//! summarised per directory the way upstream packetdrill's `run_all.py` runs a
//! suite for IPv4 (each `*.pkt` found by walking the tree, sorted; scripts whose
//! name ends in `v6.pkt` are IPv6-only and left out).

use crate::report::{FailKind, Failure, ScriptReport};
use crate::runner::Settings;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// How one script of a suite ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verdict {
    /// Every line ran and matched.
    Pass,
    /// The script uses syntax or a feature the runner does not support.
    Unsupported,
    /// The engine's behaviour differed from the script.
    Fail,
    /// The file could not be read or is not a script.
    Error,
}

impl Verdict {
    /// Lower-case name used in the table and the JSON.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Unsupported => "unsupported",
            Verdict::Fail => "fail",
            Verdict::Error => "error",
        }
    }

    /// The verdict for a script's report.
    pub fn of(rep: &ScriptReport) -> Verdict {
        match rep.failure.as_ref().map(|f| f.kind) {
            None => Verdict::Pass,
            Some(FailKind::Unsupported | FailKind::Parse) => Verdict::Unsupported,
            Some(FailKind::Io | FailKind::NotAScript) => Verdict::Error,
            Some(_) => Verdict::Fail,
        }
    }
}

/// One script's result within a suite.
#[derive(Clone, Debug)]
pub struct SuiteEntry {
    /// Path relative to the suite root.
    pub rel: String,
    /// Directory relative to the suite root (`.` for the root itself).
    pub dir: String,
    /// Its verdict.
    pub verdict: Verdict,
    /// The full report.
    pub report: ScriptReport,
}

/// Per-directory counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Scripts run.
    pub scripts: usize,
    /// Passed.
    pub pass: usize,
    /// Unsupported syntax or feature.
    pub unsupported: usize,
    /// Behaviour failures.
    pub fail: usize,
    /// Unreadable or not a script.
    pub error: usize,
}

impl Counts {
    fn add(&mut self, v: Verdict) {
        self.scripts += 1;
        match v {
            Verdict::Pass => self.pass += 1,
            Verdict::Unsupported => self.unsupported += 1,
            Verdict::Fail => self.fail += 1,
            Verdict::Error => self.error += 1,
        }
    }
}

/// Every `*.pkt` under `root` (or `root` itself when it is a file), sorted,
/// without IPv6-only scripts (`*v6.pkt`), as run_all.py selects for IPv4.
pub fn find_scripts(root: &Path) -> std::io::Result<Vec<PathBuf>> {
    if root.is_file() {
        return Ok(vec![root.to_path_buf()]);
    }
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let p = entry?.path();
            if p.is_dir() {
                stack.push(p);
            } else if let Some(name) = p.file_name().and_then(|n| n.to_str()) {
                if name.ends_with(".pkt") && !name.ends_with("v6.pkt") {
                    out.push(p);
                }
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Runs every script on `jobs` threads; results come back in path order.
pub fn run_suite(
    root: &Path,
    settings: &Settings,
    jobs: usize,
) -> std::io::Result<Vec<SuiteEntry>> {
    let paths = find_scripts(root)?;
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<ScriptReport>>> = Mutex::new(vec![None; paths.len()]);
    let jobs = jobs.clamp(1, paths.len().max(1));
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(p) = paths.get(i) else { break };
                let rep = run_one(p, settings);
                if let Ok(mut r) = results.lock() {
                    r[i] = Some(rep);
                }
            });
        }
    });
    let results = results.into_inner().unwrap_or_else(|e| e.into_inner());
    Ok(paths
        .iter()
        .zip(results)
        .map(|(p, rep)| {
            let rep = rep.unwrap_or_else(|| lost(p));
            let rel_path = p.strip_prefix(root).unwrap_or(p);
            let dir = rel_path
                .parent()
                .map(|d| d.display().to_string())
                .filter(|d| !d.is_empty())
                .unwrap_or_else(|| ".".into());
            SuiteEntry {
                rel: rel_path.display().to_string(),
                dir,
                verdict: Verdict::of(&rep),
                report: rep,
            }
        })
        .collect())
}

/// Runs one script; an engine panic becomes that script's failure, not the suite's end.
fn run_one(p: &Path, settings: &Settings) -> ScriptReport {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        crate::run_file(p, settings)
    })) {
        Ok(r) => r,
        Err(e) => {
            let msg = e
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| e.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            ScriptReport {
                path: p.display().to_string(),
                failure: Some(Failure::new(
                    0,
                    FailKind::Engine,
                    format!("the runner or engine panicked: {msg}"),
                )),
                skipped: Vec::new(),
                notes: Vec::new(),
                trace: Vec::new(),
            }
        }
    }
}

/// Report for a script whose worker died before recording it.
fn lost(p: &Path) -> ScriptReport {
    ScriptReport {
        path: p.display().to_string(),
        failure: Some(Failure::new(0, FailKind::Engine, "no result recorded")),
        skipped: Vec::new(),
        notes: Vec::new(),
        trace: Vec::new(),
    }
}

/// Counts per directory (sorted by name) and the total.
pub fn tally(entries: &[SuiteEntry]) -> (BTreeMap<String, Counts>, Counts) {
    let mut per = BTreeMap::new();
    let mut total = Counts::default();
    for e in entries {
        per.entry(e.dir.clone())
            .or_insert_with(Counts::default)
            .add(e.verdict);
        total.add(e.verdict);
    }
    (per, total)
}

/// The first failure of a report on one line: `line N: kind: message`.
pub fn first_problem(rep: &ScriptReport) -> String {
    match &rep.failure {
        None => String::new(),
        Some(f) => {
            let mut s = if f.line > 0 {
                format!("line {}: {}: {}", f.line, f.kind, f.msg)
            } else {
                format!("{}: {}", f.kind, f.msg)
            };
            if let (Some(e), Some(a)) = (&f.expected, &f.actual) {
                s.push_str(&format!(" (expected `{e}`, got `{a}`)"));
            }
            s
        }
    }
}

/// The per-directory table, then one line per script that did not pass.
pub fn write_table(
    out: &mut dyn std::io::Write,
    root: &Path,
    entries: &[SuiteEntry],
    quiet: bool,
) -> std::io::Result<()> {
    let (per, total) = tally(entries);
    let w = per.keys().map(|k| k.len()).max().unwrap_or(5).max(9);
    writeln!(out, "suite {}", root.display())?;
    writeln!(
        out,
        "{:<w$}  {:>7}  {:>4}  {:>11}  {:>4}  {:>5}",
        "directory", "scripts", "pass", "unsupported", "fail", "error"
    )?;
    let row = |out: &mut dyn std::io::Write, name: &str, c: &Counts| {
        writeln!(
            out,
            "{:<w$}  {:>7}  {:>4}  {:>11}  {:>4}  {:>5}",
            name, c.scripts, c.pass, c.unsupported, c.fail, c.error
        )
    };
    for (d, c) in &per {
        row(out, d, c)?;
    }
    row(out, "total", &total)?;
    if quiet {
        return Ok(());
    }
    for e in entries.iter().filter(|e| e.verdict != Verdict::Pass) {
        writeln!(
            out,
            "{:<11} {}: {}",
            e.verdict.name().to_uppercase(),
            e.rel,
            first_problem(&e.report)
        )?;
    }
    Ok(())
}

/// The same as [`write_table`], as one JSON document.
pub fn to_json(root: &Path, settings: &Settings, entries: &[SuiteEntry]) -> serde_json::Value {
    use serde_json::json;
    let (per, total) = tally(entries);
    let counts = |c: &Counts| {
        json!({
            "scripts": c.scripts, "pass": c.pass, "unsupported": c.unsupported,
            "fail": c.fail, "error": c.error,
        })
    };
    let dirs: Vec<_> = per
        .iter()
        .map(|(d, c)| {
            let mut v = counts(c);
            v["directory"] = json!(d);
            v
        })
        .collect();
    let scripts: Vec<_> = entries
        .iter()
        .map(|e| {
            let f = e.report.failure.as_ref();
            json!({
                "path": e.rel,
                "directory": e.dir,
                "result": e.verdict.name(),
                "kind": f.map(|f| f.kind.to_string()),
                "line": f.map(|f| f.line),
                "message": f.map(|f| f.msg.clone()),
                "expected": f.and_then(|f| f.expected.clone()),
                "actual": f.and_then(|f| f.actual.clone()),
                "skipped": e.report.skipped.iter().map(|(l, w)| json!({"line": l, "what": w})).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({
        "suite": root.display().to_string(),
        "stack": settings.stack.to_string(),
        "ip_version": "ipv4",
        "directories": dirs,
        "total": counts(&total),
        "scripts": scripts,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmpdir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("tinygram-suite-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("a/b")).unwrap();
        d
    }

    #[test]
    fn finds_pkt_files_sorted_without_ipv6_only_ones() {
        let d = tmpdir("find");
        for f in [
            "z.pkt",
            "a/x.pkt",
            "a/b/y.pkt",
            "a/only-v6.pkt",
            "a/notes.txt",
            "a/b/v4.pkt",
        ] {
            std::fs::write(d.join(f), "").unwrap();
        }
        let got: Vec<String> = find_scripts(&d)
            .unwrap()
            .iter()
            .map(|p| p.strip_prefix(&d).unwrap().display().to_string())
            .collect();
        assert_eq!(got, ["a/b/v4.pkt", "a/b/y.pkt", "a/x.pkt", "z.pkt"]);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn tallies_per_directory_and_classifies() {
        let d = tmpdir("tally");
        let ok = "0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n+0 close(3) = 0\n";
        let bad = "0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n+0 close(3) = -1 EBADF (x)\n";
        let unsup = "0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n+0 frobnicate(3) = 0\n";
        std::fs::write(d.join("a/ok.pkt"), ok).unwrap();
        std::fs::write(d.join("a/bad.pkt"), bad).unwrap();
        std::fs::write(d.join("a/b/unsup.pkt"), unsup).unwrap();
        std::fs::write(d.join("bin.pkt"), b"\0\x01").unwrap();
        let entries = run_suite(&d, &Settings::default(), 3).unwrap();
        let (per, total) = tally(&entries);
        assert_eq!(
            per["a"],
            Counts {
                scripts: 2,
                pass: 1,
                unsupported: 0,
                fail: 1,
                error: 0
            }
        );
        assert_eq!(per["a/b"].unsupported, 1);
        assert_eq!(per["."].error, 1);
        assert_eq!(total.scripts, 4);
        let mut out = Vec::new();
        write_table(&mut out, &d, &entries, false).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("FAIL        a/bad.pkt: line 2:"), "{text}");
        let j = to_json(&d, &Settings::default(), &entries);
        assert_eq!(j["total"]["pass"], 1);
        assert_eq!(j["scripts"][0]["path"], "a/b/unsup.pkt");
        let _ = std::fs::remove_dir_all(&d);
    }
}
