//! `tinygram reproduce --quick`: the qualitative claims of the source
//! documents, checked on our own numbers (never tuned to theirs).

use tinygram_cli::reproduce::{reproduce, Section};

fn quick(name: &str) -> Section {
    let mut s = reproduce(&[name.to_string()], true, 2, false).unwrap();
    s.remove(0)
}

fn check<'a>(sec: &'a Section, needle: &str) -> Vec<&'a (String, bool)> {
    let found: Vec<_> = sec
        .checks
        .iter()
        .filter(|(c, _)| c.contains(needle))
        .collect();
    assert!(
        !found.is_empty(),
        "no check mentions {needle:?}: {:?}",
        sec.checks
    );
    found
}

#[test]
fn cheshire_cliff_under_nagle_only() {
    let sec = quick("cheshire-cliff");
    for (claim, ok) in check(&sec, "cliff") {
        assert!(ok, "{claim}");
    }
}

#[test]
fn doupnik_new_policy_keeps_up_with_nagle_off() {
    let sec = quick("doupnik-web");
    for (claim, ok) in check(&sec, "within 10 % of Nagle-off") {
        assert!(ok, "{claim}");
    }
    // The strict-Nagle stall on the 33 KB file (the held tail, Doupnik 1.4).
    let row = sec
        .table
        .rows
        .iter()
        .find(|r| r[0] == "FreeBSD-like" && r[2] == "Nagle on")
        .unwrap();
    let rps: f64 = row[6].split_whitespace().next().unwrap().parse().unwrap();
    assert!(
        (3.0..=7.0).contains(&rps),
        "FreeBSD-like Nagle on, 33 KB: {rps}"
    );
}

#[test]
fn davids_nagle_off_sends_every_write() {
    let sec = quick("davids-traces");
    for (claim, ok) in check(&sec, "send 50 data packets") {
        assert!(ok, "{claim}");
    }
    // Trace 2: all 50 back-to-back writes in 2 packets, 200 ms (Davids: 2, 201 ms).
    let t2 = &sec.table.rows[1];
    assert!(t2[4].starts_with("2 "), "{t2:?}");
}

#[test]
fn report_is_written_and_self_contained() {
    let dir = tempfile::tempdir().unwrap();
    let secs = reproduce(&["cheshire-cliff".to_string()], true, 2, false).unwrap();
    tinygram_cli::reproduce::write_report(dir.path(), &secs, true).unwrap();
    let html = std::fs::read_to_string(dir.path().join("index.html")).unwrap();
    assert!(html.contains("<svg") && html.contains("</html>"));
    assert!(html.contains("99,913"));
    let md = std::fs::read_to_string(dir.path().join("report.md")).unwrap();
    assert!(md.contains("| link |"));
    assert!(dir.path().join("cheshire-cliff-1.svg").exists());
}

#[test]
fn unknown_experiment_is_a_clear_error() {
    let e = reproduce(&["nope".to_string()], true, 1, false).unwrap_err();
    assert!(
        e.contains("unknown experiment \"nope\"") && e.contains("cheshire-cliff"),
        "{e}"
    );
}
