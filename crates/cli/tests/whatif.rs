//! `tinygram whatif` as a user runs it: a capture of a stalling exchange
//! (made by `run --pcap`), the text report, `--json`, and `--out` with the
//! scenario file(s) `tinygram run` accepts and the HTML page.

use assert_cmd::Command;
use std::path::Path;

fn tinygram() -> Command {
    Command::cargo_bin("tinygram").unwrap()
}

/// Cheshire's pattern under Minshall's rule (python/tests/data/minshall.toml).
const MINSHALL: &str = "duration = \"10s\"\n[link]\ndelay = \"10ms\"\nrate = \"100Mbps\"\n\
    [client]\nsend_policy = \"minshall\"\n[server]\ndelack = \"40ms\"\n\
    [workload]\nrequest = [2000, 1000]\nresponse = [100]\nrequests = 6\nthink = \"2ms\"\n";

/// Writes `toml` and its capture into `dir`; returns the capture's path.
fn capture(dir: &Path, name: &str, toml: &str) -> std::path::PathBuf {
    let sc = dir.join(format!("{name}.toml"));
    std::fs::write(&sc, toml).unwrap();
    let pcap = dir.join(format!("{name}.pcap"));
    let o = tinygram()
        .args(["run", "-q", "--pcap"])
        .arg(&pcap)
        .arg(&sc)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    pcap
}

#[test]
fn the_report_the_json_the_scenario_and_the_page() {
    let dir = tempfile::tempdir().unwrap();
    let pcap = capture(dir.path(), "minshall", MINSHALL);
    let out = dir.path().join("out");
    let o = tinygram()
        .args(["whatif", "--samples", "2", "-q", "--out"])
        .arg(&out)
        .arg(&pcap)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    // A replay that matches says so, and no warning comes first.
    assert!(text.starts_with("whatif "), "{text}");
    assert!(
        text.contains("replay of the capture") && text.contains("median error"),
        "{text}"
    );
    assert!(
        text.contains("client sends") && text.contains("minshall"),
        "{text}"
    );
    let nodelay = text
        .lines()
        .find(|l| l.trim_start().starts_with("client nodelay"))
        .unwrap();
    assert!(nodelay.contains("% lower"), "{nodelay}");
    // The page: the slowest exchange three ways, and the scenario.
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert_eq!(
        html.matches("<svg").count(),
        3,
        "captured, replayed, best fix"
    );
    assert!(html.contains("as captured") && html.contains("under the best alternative"));
    // The scenario it wrote runs as it stands.
    let sc = out.join("scenario-flow-1.toml");
    let o = tinygram()
        .args(["run", "--json", "-q"])
        .arg(&sc)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    // The rate no packet train showed is left open: one run per value.
    assert_eq!(v["points"], 3);
    assert_eq!(v["runs"][0]["result"]["transactions"], 6);
    // --json: every number, with the evidence.
    let o = tinygram()
        .args(["whatif", "--samples", "2", "--json"])
        .arg(&pcap)
        .output()
        .unwrap();
    assert!(o.status.success());
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let f = &j["flows"][0];
    assert_eq!(f["held_side"], "client");
    assert!(f["baseline"]["matches"].as_bool().unwrap());
    assert!(f["inference"]["path"]["min_rtt_s"]["evidence"].is_string());
    assert!(f["alternatives"].as_array().unwrap().len() > 10);
}

#[test]
fn several_flows_also_make_one_many_flow_scenario() {
    let dir = tempfile::tempdir().unwrap();
    let two = "duration = \"20s\"\n[bottleneck]\nrate = \"20Mbps\"\ndelay = \"5ms\"\n\
        [workload]\nrequests = 5\n[[flows]]\nclient_hosts = \"a\"\nclient.send_policy = \"minshall\"\n\
        workload.request = [2000, 1000]\nworkload.response = [100]\n[[flows]]\nclient_hosts = \"b\"\n\
        workload.request = [300]\nworkload.response = [5000]\nworkload.think = \"3ms\"\n";
    let pcap = capture(dir.path(), "two", two);
    let out = dir.path().join("out");
    let o = tinygram()
        .args(["whatif", "--busiest", "2", "--samples", "2", "-q", "--out"])
        .arg(&out)
        .arg(&pcap)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(text.matches("replay of the capture").count(), 2, "{text}");
    let o = tinygram()
        .args(["run", "--json", "-q"])
        .arg(out.join("scenario-flows.toml"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let first = if v.get("runs").is_some() {
        &v["runs"][0]["result"]
    } else {
        &v
    };
    assert_eq!(first["flow_count"], 2);
    assert_eq!(first["transactions"], 10);
}

#[test]
fn a_file_that_is_not_a_capture_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("notes.txt");
    std::fs::write(&p, "not a capture").unwrap();
    let o = tinygram().arg("whatif").arg(&p).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("notes.txt") && err.contains("not a capture"),
        "{err}"
    );
}
