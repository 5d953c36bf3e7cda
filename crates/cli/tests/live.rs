//! `reproduce --live` on one small pattern (Davids' 50 writes), as root: the
//! "Linux <version> today" column is there, the kernel's numbers are positive
//! and finite, and tinygram over TUN passed its integrity checks. Nothing here
//! asserts the kernel's timing. Without root, /dev/net/tun or namespaces the
//! test prints why it skipped (TINYGRAM_REAL_WIRE=require makes that a failure).

use std::io::Write;
use tinygram_cli::reproduce::{json, live, reproduce, LiveCell};

const REQUIRE_ENV: &str = "TINYGRAM_REAL_WIRE";

/// True (after printing why) when the live runs cannot happen here.
fn skip(name: &str) -> bool {
    let Some(why) = live::unavailable() else {
        return false;
    };
    if std::env::var(REQUIRE_ENV).is_ok_and(|v| v == "require") {
        panic!("{name} cannot run here and {REQUIRE_ENV}=require: {why}");
    }
    let _ = writeln!(
        std::io::stderr(),
        "\nSKIPPED {name}: {why} (set {REQUIRE_ENV}=require to fail instead)"
    );
    true
}

#[test]
fn live_davids_column_and_tun_integrity() {
    if skip("live_davids_column_and_tun_integrity") {
        return;
    }
    let mut secs = reproduce(&["davids-traces".to_string()], true, 2, &|_, _| {}).unwrap();
    let took = live::run(&mut secs, true, 2).expect("the live run");
    let _ = writeln!(std::io::stderr(), "live davids-traces took {took:?}");
    let sec = &secs[0];
    let name = live::column_name();
    assert!(
        name.starts_with("Linux ") && name.ends_with(" today"),
        "{name}"
    );
    let rows = &sec.tables[0].rows;
    let col = |n: &str| {
        sec.live
            .columns
            .iter()
            .find(|c| c.name == n)
            .unwrap_or_else(|| panic!("no live column {n:?}"))
    };
    // The kernel at both ends: traces 1-4 measured, 5-7 say why not.
    for metric in ["data packets", "ACK packets", "time to send"] {
        let c = col(&format!("{name}: {metric}"));
        assert_eq!(c.table, 0);
        assert_eq!(c.cells.len(), rows.len());
        for (row, cell) in rows.iter().zip(&c.cells) {
            match (row.labels[0].as_str(), cell) {
                ("1" | "2" | "3" | "4", LiveCell::Value(x)) => {
                    assert!(
                        x.is_finite() && *x >= 0.0,
                        "{metric}, trace {}: {x}",
                        row.labels[0]
                    );
                    if metric != "time to send" {
                        assert!(*x > 0.0, "{metric}, trace {}: {x}", row.labels[0]);
                    }
                }
                ("5" | "6" | "7", LiveCell::Absent(why)) => {
                    assert!(why.starts_with("no Linux equivalent"), "{why}")
                }
                (t, c) => panic!("{metric}, trace {t}: unexpected {c:?}"),
            }
        }
    }
    // tinygram over TUN: every run but trace 5's passed its integrity checks
    // (500 bytes in, 1 out), and its packets were counted.
    let data = col("tinygram server over TUN: data packets");
    for (row, cell) in rows.iter().zip(&data.cells) {
        match (row.labels[0].as_str(), cell) {
            ("5", LiveCell::Absent(_)) => {}
            (_, LiveCell::Value(x)) => assert!(*x >= 1.0, "trace {}: {x}", row.labels[0]),
            (t, c) => panic!("tinygram over TUN, trace {t}: {c:?}"),
        }
    }
    // The comparison with the simulated linux stack, and what the report says.
    assert_eq!(sec.live.tables.len(), 1);
    assert_eq!(sec.live.tables[0].rows.len(), 4);
    assert!(sec.live.note.as_deref().unwrap_or("").contains("25 %"));
    for d in &sec.live.disagreements {
        assert!(d.contains("Cause: "), "{d}");
    }
    let j = json(&secs, true);
    let t = &j["experiments"][0]["tables"][0];
    assert_eq!(t["live_columns"].as_array().map(Vec::len), Some(6));
    assert!(j["experiments"][0]["live"]["note"].is_string());
}

/// Without a live run, each section says why its column is absent.
#[test]
fn absent_column_says_why() {
    let mut secs = reproduce(&["davids-traces".to_string()], true, 2, &|_, _| {}).unwrap();
    live::absent(&mut secs, "not running as root");
    let note = secs[0].live.note.clone().unwrap_or_default();
    assert!(note.contains("not running as root") && note.contains(&live::column_name()));
    assert!(secs[0].live.columns.is_empty());
}
