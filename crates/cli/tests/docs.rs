//! The docs' commands, run as a reader would: every `tinygram` line of a
//! ```sh block in README.md and docs/*.md either runs (with the binary this
//! test builds, from a copy of the repository's examples in a temp directory
//! where outputs go) and must exit 0, or is skipped by a rule of `SKIPS`,
//! which says why. Every relative link of those pages must name a file that
//! exists, and an in-repository `#anchor` a heading of that page.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Lines not run, by the first pattern they contain, with the reason.
const SKIPS: &[(&str, &str)] = &[
    ("sudo ", "needs root (TUN devices, namespaces, /usr/local)"),
    ("T=$PWD/target/release/tinygram", "names the release binary for the root-only TUN walkthrough"),
    ("cargo build", "builds the release binary for the root-only TUN walkthrough"),
    ("reproduce", "over a minute even with --quick (87 s measured on 2 loaded cores); crates/cli/tests/reproduce.rs runs it"),
    ("capture.pcap", "a capture the reader supplies"),
    ("--suite", "the upstream packetdrill suites are not in this repository (fetched by the reader)"),
    ("bench sim", "minutes of CPU (1 GB transfers, ns-3, 100,000 flows)"),
    ("rpc-100k", "100,000 connections: about 1 GB of memory (the page says so)"),
    ("import tinygram", "needs the Python package built (pip install ./python); python/tests runs it"),
];

/// Rewrites applied before a line runs, each with its reason: (from, to).
const REWRITES: &[(&str, &str, &str)] = &[
    (
        "cargo run --release -p tinygram --",
        "tinygram",
        "the same binary, built by cargo test",
    ),
    (
        "--seeds 1..10",
        "--seeds 1",
        "one seed: sixty runs take minutes in a debug build",
    ),
    (" && man -l tinygram.1", "", "man opens a pager"),
    (
        " > ~/.local/share/bash-completion/completions/tinygram",
        " > completions.out",
        "writes into the reader's home",
    ),
    (
        " > \"${fpath[1]}/_tinygram\"",
        " > completions.out",
        "writes into the reader's zsh $fpath",
    ),
    (
        " > ~/.config/fish/completions/tinygram.fish",
        " > completions.out",
        "writes into the reader's home",
    ),
];

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// README.md and every docs/*.md, in a fixed order.
fn pages() -> Vec<PathBuf> {
    let root = repo();
    let mut pages = vec![root.join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    pages.extend(docs);
    pages
}

/// The logical lines of a page's ```sh blocks: continuations joined, comments cut.
fn sh_lines(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_sh = false;
    let mut in_block = false;
    let mut pending = String::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_sh = !in_block && line.trim() == "```sh";
            in_block = !in_block;
            continue;
        }
        if !in_sh {
            continue;
        }
        if let Some(head) = line.strip_suffix('\\') {
            pending.push_str(head);
            continue;
        }
        pending.push_str(line);
        let logical = strip_comment(&pending).trim().to_string();
        pending.clear();
        if !logical.is_empty() {
            out.push(logical);
        }
    }
    out
}

/// Cuts a shell comment (`#` at a word's start, outside quotes).
fn strip_comment(line: &str) -> &str {
    let (mut single, mut double) = (false, false);
    let mut prev = ' ';
    for (i, c) in line.char_indices() {
        match c {
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '#' if !single && !double && prev.is_whitespace() => return &line[..i],
            _ => {}
        }
        prev = c;
    }
    line
}

/// Whether a line runs tinygram: one of its shell words is the command.
fn is_tinygram(line: &str) -> bool {
    line.split(|c: char| c.is_whitespace() || ";|&()".contains(c))
        .any(|w| w == "tinygram" || w.ends_with("/tinygram") || w == "$T")
}

/// A copy of what the docs' commands read, in a fresh directory.
fn workdir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for sub in ["examples", "scenarios", "tests/drill"] {
        copy_dir(&repo().join(sub), &dir.path().join(sub));
    }
    dir
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

#[test]
fn every_tinygram_command_of_the_docs_runs_or_is_skipped_by_a_rule() {
    let bin = assert_cmd::cargo::cargo_bin("tinygram");
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut used_skips = BTreeSet::new();
    let mut used_rewrites = BTreeSet::new();
    let mut ran = 0;
    let mut failures = Vec::new();
    for page in pages() {
        let name = page.strip_prefix(repo()).unwrap().display().to_string();
        let text = std::fs::read_to_string(&page).unwrap();
        // Each page's commands share one directory, so a later line reads an
        // earlier one's output (`--pcap run.pcap`, then `diagnose run.pcap`).
        let dir = workdir();
        for line in sh_lines(&text).into_iter().filter(|l| is_tinygram(l)) {
            if let Some((pat, why)) = SKIPS.iter().find(|(p, _)| line.contains(p)) {
                used_skips.insert(*pat);
                eprintln!("skip {name}: {line}\n     ({why})");
                continue;
            }
            let mut cmd = line.clone();
            for (from, to, _) in REWRITES {
                if cmd.contains(from) {
                    used_rewrites.insert(*from);
                    cmd = cmd.replace(from, to);
                }
            }
            eprintln!("run  {name}: {cmd}");
            let out = Command::new("sh")
                .arg("-c")
                .arg(&cmd)
                .current_dir(dir.path())
                .env("PATH", &path)
                .output()
                .unwrap();
            ran += 1;
            if !out.status.success() {
                failures.push(format!(
                    "{name}: `{cmd}` exited {}:\n{}",
                    out.status,
                    String::from_utf8_lossy(&out.stderr)
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        ran >= 10,
        "only {ran} commands ran: are the pages' ```sh blocks read?"
    );
    let stale: Vec<_> = SKIPS
        .iter()
        .map(|(p, _)| *p)
        .filter(|p| !used_skips.contains(p))
        .chain(
            REWRITES
                .iter()
                .map(|(f, _, _)| *f)
                .filter(|f| !used_rewrites.contains(f)),
        )
        .collect();
    assert!(
        stale.is_empty(),
        "rules that match no line any more: {stale:?}"
    );
}

/// A command shown in another kind of block would escape the test above.
#[test]
fn commands_are_in_sh_blocks() {
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        let mut lang: Option<String> = None;
        for (n, line) in text.lines().enumerate() {
            if let Some(tag) = line.trim_start().strip_prefix("```") {
                lang = if lang.is_some() {
                    None
                } else {
                    Some(tag.trim().to_string())
                };
                continue;
            }
            if let Some(tag) = &lang {
                let shellish =
                    tag.is_empty() || matches!(tag.as_str(), "bash" | "shell" | "console");
                assert!(
                    !(shellish && line.trim_start().starts_with("tinygram ")),
                    "{}:{}: a tinygram command in a ```{tag} block; make it ```sh so docs.rs runs it",
                    page.display(),
                    n + 1
                );
            }
        }
    }
}

/// GitHub's anchor for a heading: lower case, punctuation dropped, spaces to '-'.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

fn anchors(text: &str) -> BTreeSet<String> {
    let mut code = false;
    let mut out = BTreeSet::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            code = !code;
        } else if !code && line.starts_with('#') {
            out.insert(anchor(line.trim_start_matches('#')));
        }
    }
    out
}

/// Every `](target)` outside code blocks that is not a URL.
fn links(text: &str) -> Vec<String> {
    let mut code = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            code = !code;
            continue;
        }
        if code {
            continue;
        }
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            let tail = &rest[at + 2..];
            let end = tail.find(')').unwrap_or(tail.len());
            let target = &tail[..end];
            if !target.contains("://") && !target.starts_with("mailto:") {
                out.push(target.to_string());
            }
            rest = &tail[end..];
        }
    }
    out
}

#[test]
fn every_relative_link_of_the_docs_exists() {
    let mut broken = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        for target in links(&text) {
            let (file, frag) = match target.split_once('#') {
                Some((f, a)) => (f, Some(a)),
                None => (target.as_str(), None),
            };
            let path = if file.is_empty() {
                page.clone()
            } else {
                page.parent().unwrap().join(file)
            };
            if !path.exists() {
                broken.push(format!("{}: {target} (no such file)", page.display()));
                continue;
            }
            if let (Some(frag), true) = (frag, path.extension().is_some_and(|e| e == "md")) {
                if !anchors(&std::fs::read_to_string(&path).unwrap()).contains(frag) {
                    broken.push(format!("{}: {target} (no such heading)", page.display()));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}
