//! Shell completions and man pages, as a user installs them.

use assert_cmd::Command;
use std::process::Stdio;

fn tinygram() -> Command {
    Command::cargo_bin("tinygram").unwrap()
}

const SUBCOMMANDS: [&str; 10] = [
    "run",
    "diagnose",
    "drill",
    "reproduce",
    "scenario",
    "policies",
    "tun",
    "bench",
    "completions",
    "man",
];

fn stdout_of(args: &[&str]) -> String {
    let out = tinygram().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Every shell gets a script that names every subcommand; bash's parses.
#[test]
fn completions_for_every_shell_name_every_subcommand() {
    for shell in ["bash", "zsh", "fish", "powershell"] {
        let script = stdout_of(&["completions", shell]);
        for sub in SUBCOMMANDS {
            assert!(script.contains(sub), "{shell} completion lacks {sub}");
        }
    }
    let bash = stdout_of(&["completions", "bash"]);
    assert!(
        bash.contains("complete -F _tinygram"),
        "registers the function"
    );
    // `bash -n` checks the syntax without running it.
    let mut check = std::process::Command::new("bash")
        .arg("-n")
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    check
        .stdin
        .take()
        .unwrap()
        .write_all(bash.as_bytes())
        .unwrap();
    assert!(
        check.wait().unwrap().success(),
        "bash -n rejects the script"
    );
    // A shell clap does not know is a usage error naming the choices.
    let out = tinygram().args(["completions", "tcsh"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bash") && err.contains("zsh"), "{err}");
}

/// `tinygram man` is one roff page listing the subcommands; `--dir` writes
/// one page per subcommand, nested ones too.
#[test]
fn man_pages_render() {
    let page = stdout_of(&["man"]);
    assert!(
        page.contains(".TH tinygram 1"),
        "a roff page: {}",
        &page[..200.min(page.len())]
    );
    for sub in SUBCOMMANDS {
        assert!(page.contains(sub), "the page lists {sub}");
    }
    let dir = tempfile::tempdir().unwrap();
    let out = tinygram()
        .args(["man", "--dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    for sub in SUBCOMMANDS {
        let file = dir.path().join(format!("tinygram-{sub}.1"));
        let text =
            std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        assert!(
            text.contains(&format!(".TH tinygram-{sub} 1")),
            "{}",
            file.display()
        );
    }
    let run = std::fs::read_to_string(dir.path().join("tinygram-run.1")).unwrap();
    assert!(run.contains("\\-\\-set"), "tinygram-run.1 documents --set");
    assert!(
        dir.path().join("tinygram-tun-serve.1").exists(),
        "nested subcommands get pages"
    );
}
