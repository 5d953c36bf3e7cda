//! `drill` and `diagnose` reports as JSON, for the Python package.

use serde_json::{Map, Value};
use std::path::Path;

/// Settings of [`drill_json`]; the defaults are `tinygram drill`'s.
#[derive(Clone, Debug, Default)]
pub struct DrillOptions {
    pub settings: tinygram_drill::Settings,
}

/// Runs one packetdrill script (a path, or the script's text when it holds a
/// newline) and returns its report: `passed`, `failure`, `skipped`, `notes`.
pub fn drill_json(script: &str, settings: &tinygram_drill::Settings) -> Value {
    let report = if script.contains('\n') {
        match tinygram_drill::parse_script(script, "<string>") {
            Ok(s) => tinygram_drill::run_script(&s, settings),
            Err(e) => tinygram_drill::ScriptReport {
                path: "<string>".into(),
                failure: Some(tinygram_drill::Failure::new(
                    e.line,
                    tinygram_drill::FailKind::Parse,
                    e.msg,
                )),
                skipped: Vec::new(),
                notes: Vec::new(),
                trace: Vec::new(),
            },
        }
    } else {
        tinygram_drill::run_file(Path::new(script), settings)
    };
    let failure = report.failure.as_ref().map(|f| {
        let mut m = Map::new();
        m.insert("line".into(), f.line.into());
        m.insert("kind".into(), f.kind.to_string().into());
        m.insert("message".into(), f.msg.clone().into());
        for (k, v) in [
            ("script", &f.script),
            ("expected", &f.expected),
            ("actual", &f.actual),
            ("hint", &f.hint),
        ] {
            m.insert(k.into(), v.clone().map_or(Value::Null, Value::from));
        }
        m.insert(
            "time_s".into(),
            f.time_ns.map_or(Value::Null, |ns| (ns as f64 / 1e9).into()),
        );
        Value::Object(m)
    });
    serde_json::json!({
        "path": report.path,
        "passed": report.passed(),
        "failure": failure,
        "skipped": report.skipped.iter().map(|(line, why)| serde_json::json!({"line": line, "reason": why})).collect::<Vec<_>>(),
        "notes": report.notes,
    })
}

/// `tinygram diagnose FILE --json` as a function: the busiest
/// `DEFAULT_MAX_FLOWS` flows analysed, the rest counted under `summarised`
/// (not listed one by one, as the CLI's `flow_summaries` does).
pub fn diagnose_json(path: &Path) -> Result<Value, String> {
    let d = tinygram_analyze::diagnose_file(
        path,
        tinygram_analyze::flowtable::DEFAULT_MAX_FLOWS,
        &tinygram_analyze::Thresholds::default(),
        &mut |_, _| {},
    )
    .map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::to_value(&d.diagnosis).map_err(|e| format!("cannot encode the diagnosis: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drill_reports_a_parse_error_with_its_line() {
        let v = drill_json(
            "0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\nthis is not a line\n",
            &Default::default(),
        );
        assert_eq!(v["passed"], false);
        assert_eq!(v["failure"]["line"], 2, "{v}");
        let missing = drill_json("/nonexistent/x.pkt", &Default::default());
        assert_eq!(missing["passed"], false);
    }

    #[test]
    fn diagnose_names_a_file_that_is_not_a_capture() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.pcap");
        std::fs::write(&p, b"not a capture").unwrap();
        let e = diagnose_json(&p).unwrap_err();
        assert!(e.contains("x.pcap") && e.contains("not a capture"), "{e}");
    }
}
