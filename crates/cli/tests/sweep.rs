//! `tinygram sweep` as a user runs it: rows, formats, and errors naming the key.

use assert_cmd::Command;

const SMALL: &str = "duration = \"2s\"\n[workload]\nrequests = 3\n";

fn setup() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let sc = dir.path().join("small.toml");
    std::fs::write(&sc, SMALL).unwrap();
    (dir, sc)
}

fn sweep(sc: &std::path::Path, args: &[&str]) -> std::process::Output {
    Command::cargo_bin("tinygram")
        .unwrap()
        .arg("sweep")
        .arg(sc)
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn a_csv_row_per_run_with_swept_keys_seed_and_results() {
    let (dir, sc) = setup();
    let out = dir.path().join("r.csv");
    let o = sweep(
        &sc,
        &[
            "--grid",
            "client.send_policy=nagle,nodelay",
            "--grid",
            r#"client.options=[["wscale","sack"],[]]"#,
            "--seeds",
            "1..3",
            "-q",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut r = csv::Reader::from_path(&out).unwrap();
    let head: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(&head[..3], ["client.send_policy", "client.options", "seed"]);
    for col in [
        "transactions",
        "completion_ms.p50",
        "client.data_segments",
        "name",
    ] {
        assert!(head.iter().any(|h| h == col), "{col} in {head:?}");
    }
    let rows: Vec<csv::StringRecord> = r.records().map(|x| x.unwrap()).collect();
    // 2 policies x 2 option sets x 3 seeds (1..3 is inclusive).
    assert_eq!(rows.len(), 12);
    assert_eq!(&rows[0][0], "nagle");
    assert_eq!(&rows[0][1], r#"["wscale","sack"]"#);
    assert_eq!(&rows[2][2], "3");
    assert_eq!(&rows[3][1], "[]");
    assert_eq!(&rows[11][0], "nodelay");
    let name_col = head.iter().position(|h| h == "name").unwrap();
    assert_eq!(&rows[0][name_col], "small");
}

#[test]
fn jsonl_and_parquet_hold_the_same_runs() {
    let (dir, sc) = setup();
    let jl = dir.path().join("r.jsonl");
    let pq = dir.path().join("r.parquet");
    for out in [&jl, &pq] {
        let o = sweep(
            &sc,
            &[
                "--grid",
                "server.delack=40ms,200ms",
                "--seeds",
                "4",
                "-q",
                "--out",
                out.to_str().unwrap(),
            ],
        );
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&jl)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[1]["server.delack"], "200ms");
    assert_eq!(lines[1]["seed"], 4);
    assert!(lines[0]["transactions"].is_u64());
    assert_eq!(&std::fs::read(&pq).unwrap()[..4], b"PAR1");
}

#[test]
fn bad_grids_are_errors_naming_the_key() {
    let (dir, sc) = setup();
    let out = dir.path().join("r.csv");
    let out = out.to_str().unwrap();
    for (args, needle) in [
        (
            vec!["--grid", "client.sendpolicy=nagle"],
            "client.sendpolicy",
        ),
        (
            vec!["--grid", "client.send_policy=nagle,fastest"],
            "client.send_policy=fastest",
        ),
        (vec!["--grid", "client.send_policy"], "KEY=V1,V2"),
        (
            vec!["--grid", "link.rate=1Mbps,,2Mbps"],
            "link.rate: value 2 is empty",
        ),
        (vec!["--grid", "seed=1,2"], "--seeds"),
        (vec!["--seeds", "10..1"], "is empty"),
    ] {
        let mut a = args.clone();
        a.extend(["--out", out]);
        let o = sweep(&sc, &a);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(
            !std::path::Path::new(out).exists(),
            "nothing written on error"
        );
    }
    let o = sweep(&sc, &["--out", dir.path().join("r.xlsx").to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&o.stderr).contains(".csv, .jsonl or .parquet"));
}

/// The library function that sweep and the Python package call is
/// `tinygram run --json`: the same document, field for field.
#[test]
fn run_json_is_what_run_dash_dash_json_prints() {
    let (_dir, sc) = setup();
    std::fs::write(
        &sc,
        format!("{SMALL}\n[[variant]]\nname = \"nd\"\nclient.send_policy = \"nodelay\"\n"),
    )
    .unwrap();
    let o = Command::cargo_bin("tinygram")
        .unwrap()
        .args(["run", "--json", "--set", "seed=5"])
        .arg(&sc)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let src = tinygram_lab::Source::file(&sc).unwrap();
    let called = tinygram_lab::run_json(&src, &[], Some(5)).unwrap();
    // Compared as text: parsing the printed floats back may differ in the last bit.
    let text = serde_json::to_string_pretty(&called).unwrap() + "\n";
    assert_eq!(String::from_utf8_lossy(&o.stdout), text);
    assert_eq!(called["variants"][0]["name"], "nd");
}

/// The regression of the one run path: a sweep of a many-flow file runs the
/// many-flow world, each row the flattened `run --json` of its settings
/// (before, `sweep` ran such a file as two hosts, 20 transactions a row).
#[test]
fn a_sweep_of_a_many_flow_file_gives_the_rows_of_run_json() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let sc = root.join("examples/competing-policies.toml");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("s.jsonl");
    let o = sweep(
        &sc,
        &[
            "--grid",
            "bottleneck.qdisc=codel,drop-tail",
            "--seeds",
            "1..1",
            "-q",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rows: Vec<serde_json::Value> = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 2);
    for (row, qdisc) in rows.iter().zip(["codel", "drop-tail"]) {
        let o = Command::cargo_bin("tinygram")
            .unwrap()
            .args(["run", "--json", "-q", "--set", "seed=1", "--set"])
            .arg(format!("bottleneck.qdisc={qdisc}"))
            .arg(&sc)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let run: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert!(run["flow_count"].as_u64().unwrap() > 2, "a many-flow run");
        assert_eq!(row["bottleneck.qdisc"], qdisc);
        assert_eq!(row["seed"], 1);
        let swept = ["bottleneck.qdisc".to_string()];
        for (k, v) in tinygram_lab::sweep::result_columns(&run, &swept) {
            assert_eq!(row[&k], v, "column {k}");
        }
        assert_eq!(row["transactions"], run["transactions"]);
        assert!(
            row.get("client.data_segments").is_none(),
            "not a two-host row"
        );
    }
}
