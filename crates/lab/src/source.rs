//! A scenario's text and where it came from, checked before it runs: a file,
//! TOML text, or a JSON object of tables (a Python dict).

use serde_json::Value;
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
            also: Vec::new(),
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
        also: Vec::new(),
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
            also: Vec::new(),
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
                    also: Vec::new(),
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
                        also: Vec::new(),
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
pub(crate) fn with_seed(overrides: &[String], seed: Option<u64>) -> Vec<String> {
    let mut sets = overrides.to_vec();
    if let Some(s) = seed {
        sets.push(format!("seed={s}"));
    }
    sets
}

/// Reads and validates the scenario with its overrides, without running it.
pub fn check(src: &Source, overrides: &[String], seed: Option<u64>) -> Result<(), ScenarioError> {
    src.set(overrides, seed).map(|_| ())
}

impl Source {
    /// The scenario and its `[[variant]]`s with `overrides` (`KEY=VALUE`, as
    /// `--set`) and, when given, `seed` applied last.
    pub fn set(
        &self,
        overrides: &[String],
        seed: Option<u64>,
    ) -> Result<ScenarioSet, ScenarioError> {
        ScenarioSet::from_named_str(
            &self.text,
            &self.origin,
            &with_seed(overrides, seed),
            &self.name,
        )
    }
}
