//! `tinygram diagnose` on a capture of many flows: the flows analysed stop
//! at `--max-flows`, the text stops at `--top`, and the rest are counted;
//! `--all` and `--json` list every flow, the summarised ones a line each.
//! Structural checks only (flows and lines), never a time or a memory reading.

#[path = "../../analyze/tests/support/syn_flows.rs"]
#[allow(dead_code)]
mod syn_flows;

use assert_cmd::Command;
use std::path::Path;

fn tinygram() -> Command {
    Command::cargo_bin("tinygram").unwrap()
}

/// Flows the text shows in full (each has one "round trip" line).
fn full(text: &str) -> usize {
    text.matches("\n  round trip from the capture point")
        .count()
}

fn diagnose(pcap: &Path, args: &[&str]) -> (bool, String, String) {
    let out = tinygram()
        .arg("diagnose")
        .arg(pcap)
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// 200,000 one-SYN flows, 500 analysed: the text shows 20 flows in full and
/// counts the rest in two lines; `--all` adds one line per summarised flow;
/// the JSON lists the 500 reports and the 199,500 summaries.
#[test]
fn a_syn_flood_gives_a_capped_report_and_counts_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let pcap = dir.path().join("flood.pcap");
    let n = 200_000;
    let f = std::fs::File::create(&pcap).unwrap();
    syn_flows::write_syn_flows(std::io::BufWriter::new(f), n).unwrap();

    let (ok, text, err) = diagnose(&pcap, &["--max-flows", "500"]);
    assert!(ok && err.is_empty(), "{err}");
    assert!(text.contains("in 200000 flow(s)"), "{text}");
    assert!(
        text.contains("199500 flow(s) past --max-flows 500 summarised, not analysed"),
        "{text}"
    );
    assert!(text.contains("199500 unanswered SYN(s)"), "{text}");
    assert_eq!(full(&text), 20, "{text}");
    assert!(
        text.contains("... and 480 more analysed flow(s) not shown: 0 with findings"),
        "{text}"
    );
    assert!(text.lines().count() < 200, "{} lines", text.lines().count());

    let (ok, top, _) = diagnose(&pcap, &["--max-flows", "500", "--top", "3"]);
    assert!(ok);
    assert_eq!(full(&top), 3, "{top}");

    let (ok, all, _) = diagnose(&pcap, &["--max-flows", "500", "--all"]);
    assert!(ok);
    assert_eq!(full(&all), 500);
    let lines: Vec<&str> = all
        .lines()
        .filter(|l| l.ends_with("[summary only]"))
        .collect();
    assert_eq!(lines.len(), 199_500);
    assert!(
        lines[0].starts_with(
            "flow 501: 10.0.0.0:1524 (client) <-> 192.0.2.1:80 (server): 1 segment(s)"
        ) && lines[0].contains("SYN unanswered"),
        "{}",
        lines[0]
    );

    let (ok, json, _) = diagnose(&pcap, &["--max-flows", "500", "--json"]);
    assert!(ok);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["flows"].as_array().unwrap().len(), 500);
    assert_eq!(v["flows"][499]["flow"], 500);
    let s = v["flow_summaries"].as_array().unwrap();
    assert_eq!(s.len(), 199_500);
    assert_eq!(s[0]["flow"], 501);
    assert_eq!(s[0]["state"], "syn_unanswered");
    assert_eq!(v["summarised"]["flows"], 199_500);
}

/// `--max-flows` is bounded both ways, with clap's message naming the range.
#[test]
fn max_flows_out_of_range_is_refused() {
    for bad in ["0", "1000001"] {
        let out = tinygram()
            .args(["diagnose", "x.pcap", "--max-flows", bad])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("--max-flows") && err.contains("1..=1000000"),
            "{err}"
        );
    }
}
