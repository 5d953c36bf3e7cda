//! The repository stands on its own: nothing tracked points at files a clone
//! does not have (the design notes and source documents live outside it).
//! Sources are cited by author and title instead.

use std::path::Path;

/// Every tracked file under the repository root, or `None` outside a git checkout.
fn tracked_files(root: &Path) -> Option<Vec<String>> {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["ls-files", "-z"])
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let list = String::from_utf8(out.stdout).ok()?;
    Some(
        list.split('\0')
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect(),
    )
}

/// A source document's file name: three digits, `_`, 16 hex digits, `.txt`.
fn names_a_source_file(line: &str) -> bool {
    let b = line.as_bytes();
    line.match_indices(".txt").any(|(i, _)| {
        i >= 20
            && b[i - 16..i].iter().all(u8::is_ascii_hexdigit)
            && b[i - 17] == b'_'
            && b[i - 20..i - 17].iter().all(u8::is_ascii_digit)
    })
}

#[test]
fn nothing_points_outside_the_repository() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let Some(files) = tracked_files(&root) else {
        println!("skipped: not a git checkout");
        return;
    };
    assert!(
        files.iter().any(|f| f == "README.md"),
        "the listing is the repository's"
    );
    // Spelled in pieces so this file does not match itself.
    let mut needles = vec![format!("{}/", "shared"), format!("{}.md", "DESIGN")];
    needles.extend((0..=4).map(|d| format!("{} 00{d}", "seed")));
    let mut hits = Vec::new();
    for f in &files {
        let Ok(text) = std::fs::read_to_string(root.join(f)) else {
            continue; // binary files
        };
        for (i, line) in text.lines().enumerate() {
            if needles.iter().any(|n| line.contains(n.as_str())) || names_a_source_file(line) {
                hits.push(format!("{f}:{}: {}", i + 1, line.trim()));
            }
        }
    }
    assert!(
        hits.is_empty(),
        "tracked files point outside the repository:\n{}",
        hits.join("\n")
    );
}
