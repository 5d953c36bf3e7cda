//! Every shipped scenario and example gives the same `run --json` through
//! the run library as the stored copy made by `tinygram run --json` before
//! the run path moved into this crate (the refactor keeps behaviour).
//! A deliberate change of a result regenerates the copy in the same commit:
//! `tinygram run FILE --json -q > crates/lab/tests/golden/DIR-NAME.json`.

use std::path::Path;
use tinygram_lab::Source;

fn check(dir: &str) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut seen = 0;
    let mut files: Vec<_> = std::fs::read_dir(root.join(dir))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    for path in files {
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        let golden = root.join(format!("crates/lab/tests/golden/{dir}-{stem}.json"));
        let want: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&golden).unwrap_or_else(|e| {
                panic!(
                    "{}: {e} (no stored copy for {})",
                    golden.display(),
                    path.display()
                )
            }))
            .unwrap();
        let got = tinygram_lab::run_json(&Source::file(&path).unwrap(), &[], None).unwrap();
        // Through text, as the stored copy went: JSON floats parse back
        // within an ulp, so compare the text `run --json` prints.
        let got: serde_json::Value =
            serde_json::from_str(&serde_json::to_string_pretty(&got).unwrap()).unwrap();
        assert!(got == want, "{}: run --json changed", path.display());
        seen += 1;
    }
    assert!(seen >= 5, "{dir}: only {seen} scenarios");
}

#[test]
fn the_built_in_scenarios_give_the_stored_results() {
    check("scenarios");
}

#[test]
fn the_examples_give_the_stored_results() {
    check("examples");
}
