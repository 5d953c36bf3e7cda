//! The library entry points that the CLI's `sweep` and the Python package
//! share: a run as a pure function of (scenario, overrides, seed) to the
//! result JSON of `tinygram run --json`, and drill and diagnose as JSON.

use serde_json::{Map, Value};
use std::path::Path;
use tinygram_sim::{ScenarioError, ScenarioSet};

/// A scenario's text with the names its errors and results use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Source {
    /// TOML text.
    pub text: String,
    /// Where it came from, for errors: a path or `"<string>"`.
    pub origin: String,
    /// The run's name unless the text sets `name` (a file's stem).
    pub name: String,
}

impl Source {
    /// Reads a scenario file once; its runs are named after the file.
    pub fn file(path: &Path) -> Result<Source, ScenarioError> {
        let origin = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| ScenarioError {
            file: origin.clone(),
            line: None,
            key: String::new(),
            message: format!("cannot read scenario file: {e}"),
        })?;
        let name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "scenario".to_string());
        Ok(Source { text, origin, name })
    }

    /// Scenario TOML given as a string.
    pub fn text(text: &str) -> Source {
        Source {
            text: text.to_string(),
            origin: "<string>".to_string(),
            name: "scenario".to_string(),
        }
    }

    /// A scenario given as a JSON object of tables (a Python dict), written
    /// out as TOML so it is read exactly as a file would be.
    pub fn json(v: &Value) -> Result<Source, ScenarioError> {
        if !v.is_object() {
            return Err(plain(format!(
                "a scenario must be a table of keys, not {}",
                kind(v)
            )));
        }
        check_no_null(v, "")?;
        let text = toml::to_string(v).map_err(|e| plain(format!("cannot write as TOML: {e}")))?;
        Ok(Source {
            text,
            origin: "<dict>".to_string(),
            name: "scenario".to_string(),
        })
    }
}

fn plain(message: String) -> ScenarioError {
    ScenarioError {
        file: "<dict>".to_string(),
        line: None,
        key: String::new(),
        message,
    }
}

/// TOML has no null: name the key that holds one.
fn check_no_null(v: &Value, at: &str) -> Result<(), ScenarioError> {
    let join = |k: &str| {
        if at.is_empty() {
            k.to_string()
        } else {
            format!("{at}.{k}")
        }
    };
    match v {
        Value::Null => Err(ScenarioError {
            file: "<dict>".to_string(),
            line: None,
            key: at.to_string(),
            message: "None is not a value (leave the key out for its default)".into(),
        }),
        Value::Object(m) => m.iter().try_for_each(|(k, v)| check_no_null(v, &join(k))),
        Value::Array(a) => a
            .iter()
            .enumerate()
            .try_for_each(|(i, v)| check_no_null(v, &join(&i.to_string()))),
        _ => Ok(()),
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a table",
    }
}

/// An override's VALUE text (TOML) for a JSON value: `"nagle"` for a string,
/// `[100, 200]` for a list, `{ rate = "1Mbps" }` for a table.
pub fn toml_value_text(key: &str, v: &Value) -> Result<String, ScenarioError> {
    fn conv(key: &str, v: &Value) -> Result<toml_edit::Value, ScenarioError> {
        Ok(match v {
            Value::Null => {
                return Err(ScenarioError {
                    file: format!("--set {key}"),
                    line: None,
                    key: key.to_string(),
                    message: "None is not a value".into(),
                })
            }
            Value::Bool(b) => (*b).into(),
            Value::Number(n) => match (n.as_i64(), n.as_f64()) {
                (Some(i), _) => i.into(),
                (None, Some(f)) => f.into(),
                _ => {
                    return Err(ScenarioError {
                        file: format!("--set {key}"),
                        line: None,
                        key: key.to_string(),
                        message: format!("{n} does not fit a TOML integer"),
                    })
                }
            },
            Value::String(s) => s.as_str().into(),
            Value::Array(a) => {
                let mut arr = toml_edit::Array::new();
                for x in a {
                    arr.push(conv(key, x)?);
                }
                toml_edit::Value::Array(arr)
            }
            Value::Object(m) => {
                let mut t = toml_edit::InlineTable::new();
                for (k, x) in m {
                    t.insert(k, conv(&format!("{key}.{k}"), x)?);
                }
                toml_edit::Value::InlineTable(t)
            }
        })
    }
    Ok(conv(key, v)?.to_string().trim().to_string())
}

/// The `--set`-style overrides of a run: `overrides`, then `seed=N`.
fn with_seed(overrides: &[String], seed: Option<u64>) -> Vec<String> {
    let mut sets = overrides.to_vec();
    if let Some(s) = seed {
        sets.push(format!("seed={s}"));
    }
    sets
}

/// Reads and validates the scenario with its overrides, without running it.
pub fn check(src: &Source, overrides: &[String], seed: Option<u64>) -> Result<(), ScenarioError> {
    ScenarioSet::from_named_str(
        &src.text,
        &src.origin,
        &with_seed(overrides, seed),
        &src.name,
    )
    .map(|_| ())
}

/// `tinygram run --json` as a function: the scenario with `overrides`
/// (`KEY=VALUE`, as `--set`) and, when given, `seed`, run to its end with
/// every `[[variant]]`. Deterministic: the same arguments give the same value.
pub fn run_json(
    src: &Source,
    overrides: &[String],
    seed: Option<u64>,
) -> Result<Value, ScenarioError> {
    let set = ScenarioSet::from_named_str(
        &src.text,
        &src.origin,
        &with_seed(overrides, seed),
        &src.name,
    )?;
    let result = tinygram_sim::run(&set.base);
    let rows = crate::variants::run_all(&set.variants);
    Ok(crate::variants::json(&result, &rows))
}

/// A JSON value as one row's columns: nested fields get dotted names
/// (`client.data_segments`), list items their index (`variants.0.name`).
/// Whatever the result holds (one flow or many) flattens the same way.
pub fn flatten(v: &Value) -> Vec<(String, Value)> {
    fn go(prefix: &str, v: &Value, out: &mut Vec<(String, Value)>) {
        let name = |k: &str| {
            if prefix.is_empty() {
                k.to_string()
            } else {
                format!("{prefix}.{k}")
            }
        };
        match v {
            Value::Object(m) if !m.is_empty() => {
                for (k, x) in m {
                    go(&name(k), x, out);
                }
            }
            Value::Array(a) if !a.is_empty() => {
                for (i, x) in a.iter().enumerate() {
                    go(&name(&i.to_string()), x, out);
                }
            }
            // An empty table or list has no fields; keep the column anyway.
            Value::Object(_) | Value::Array(_) => out.push((prefix.to_string(), Value::Null)),
            _ => out.push((prefix.to_string(), v.clone())),
        }
    }
    let mut out = Vec::new();
    go("", v, &mut out);
    out
}

/// A result's columns beside the swept keys of its row: the flattened result
/// without its `seed` (the row's own seed column), and with `result.` before
/// a field that has a swept key's name (`client.mss` is a key and the
/// effective MSS).
pub fn result_columns(result: &Value, swept: &[String]) -> Vec<(String, Value)> {
    flatten(result)
        .into_iter()
        .filter(|(k, _)| k != "seed")
        .map(|(k, v)| {
            if swept.contains(&k) {
                (format!("result.{k}"), v)
            } else {
                (k, v)
            }
        })
        .collect()
}

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

/// `tinygram diagnose FILE --json` as a function.
pub fn diagnose_json(path: &Path) -> Result<Value, String> {
    let cap = tinygram_analyze::read_file(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let (d, _) = tinygram_analyze::diagnose(&cap, &tinygram_analyze::Thresholds::default());
    serde_json::to_value(&d).map_err(|e| format!("cannot encode the diagnosis: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: &str = "duration = \"2s\"\n[workload]\nrequests = 3\n";

    #[test]
    fn run_json_is_a_pure_function_of_its_arguments() {
        let src = Source::text(SMALL);
        let a = run_json(&src, &["client.send_policy=nodelay".into()], Some(7)).unwrap();
        let b = run_json(&src, &["client.send_policy=nodelay".into()], Some(7)).unwrap();
        assert_eq!(a, b);
        assert_eq!(a["seed"], 7);
        assert_eq!(a["transactions"], 3);
        let other = run_json(&src, &[], Some(8)).unwrap();
        assert_eq!(other["seed"], 8);
    }

    #[test]
    fn a_bad_override_names_its_key() {
        let e = run_json(
            &Source::text(SMALL),
            &["client.sendpolicy=nagle".into()],
            None,
        )
        .unwrap_err();
        assert_eq!(e.key, "client.sendpolicy", "{e}");
    }

    #[test]
    fn a_json_scenario_reads_like_its_toml() {
        let v = serde_json::json!({"duration": "2s", "workload": {"requests": 3}});
        let from_json = run_json(&Source::json(&v).unwrap(), &[], None).unwrap();
        let from_text = run_json(&Source::text(SMALL), &[], None).unwrap();
        assert_eq!(from_json, from_text);
        let e = Source::json(&serde_json::json!({"link": {"rate": null}})).unwrap_err();
        assert_eq!(e.key, "link.rate");
        assert!(Source::json(&serde_json::json!([1])).is_err());
    }

    #[test]
    fn toml_values_of_json() {
        let t = |v: Value| toml_value_text("k", &v).unwrap();
        assert_eq!(t(serde_json::json!("nagle")), "\"nagle\"");
        assert_eq!(t(serde_json::json!([100, 200])), "[100, 200]");
        assert_eq!(
            t(serde_json::json!({"rate": "1Mbps"})),
            "{ rate = \"1Mbps\" }"
        );
        assert_eq!(t(serde_json::json!(1.5)), "1.5");
        assert!(toml_value_text("k", &Value::Null).is_err());
    }

    #[test]
    fn flatten_names_nested_fields_and_list_items() {
        let v = serde_json::json!({"a": 1, "b": {"c": true, "d": [{"e": "x"}, {"e": "y"}]}, "f": [], "g": null});
        let got: Vec<String> = flatten(&v).into_iter().map(|(k, _)| k).collect();
        assert_eq!(got, ["a", "b.c", "b.d.0.e", "b.d.1.e", "f", "g"]);
        let cols = result_columns(
            &serde_json::json!({"seed": 1, "client": {"mss": 1448}}),
            &["client.mss".into()],
        );
        assert_eq!(cols, [("result.client.mss".to_string(), Value::from(1448))]);
    }

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
