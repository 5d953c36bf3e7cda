//! `[[variant]]` tables: one scenario file, several configurations run side by side.
//!
//! Each variant names itself and overrides any scenario keys, exactly as a
//! `--set` would; the file's own keys are the base run. Order of application:
//! the file, then the variant's keys, then the user's `--set` overrides.
//!
//! ```toml
//! [[variant]]
//! name = "bigwin + NAK"
//! client.options = ["bigwin", "nak"]
//! server.options = ["bigwin", "nak"]
//! ```

use crate::scenario::{Scenario, ScenarioError};
use std::path::Path;
use toml_edit::{ImDocument, Item, TableLike, Value};

/// The table name of variants in a scenario file.
pub const VARIANT_TABLE: &str = "variant";

/// One named variant: the keys it overrides, as `--set`-style `KEY=VALUE` strings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VariantSpec {
    pub name: String,
    /// 1-based line of its `[[variant]]` header (or name), for errors.
    pub line: usize,
    pub sets: Vec<String>,
    /// 1-based line of each of `sets`' keys (same order), so an error in one
    /// is reported at that key, not at the header.
    pub set_lines: Vec<usize>,
}

/// A scenario file's base run and its variants, each validated.
#[derive(Clone, Debug)]
pub struct ScenarioSet {
    pub base: Scenario,
    pub variants: Vec<(VariantSpec, Scenario)>,
}

impl ScenarioSet {
    /// Reads `path`, validates the base and every variant, applying `overrides` last.
    pub fn from_file(path: &Path, overrides: &[String]) -> Result<ScenarioSet, ScenarioError> {
        let (text, origin, name) = Scenario::read_file(path)?;
        Self::parse(&text, &origin, overrides, &name)
    }

    /// Parses scenario text (`origin` names it in errors).
    pub fn from_str(
        text: &str,
        origin: &str,
        overrides: &[String],
    ) -> Result<ScenarioSet, ScenarioError> {
        Self::parse(text, origin, overrides, "scenario")
    }

    /// Parses scenario text whose runs are called `name` unless it sets
    /// `name` itself (`from_file` uses the file name; a caller holding a
    /// file's text passes it here to run it many times without re-reading).
    pub fn from_named_str(
        text: &str,
        origin: &str,
        overrides: &[String],
        name: &str,
    ) -> Result<ScenarioSet, ScenarioError> {
        Self::parse(text, origin, overrides, name)
    }

    fn parse(
        text: &str,
        origin: &str,
        overrides: &[String],
        name: &str,
    ) -> Result<ScenarioSet, ScenarioError> {
        let base = Scenario::build(text, origin, overrides, name)?;
        let specs = parse_variants(text, origin)?;
        let mut variants = Vec::with_capacity(specs.len());
        for spec in specs {
            let mut sets = spec.sets.clone();
            sets.extend(overrides.iter().cloned());
            let sc =
                Scenario::build(text, origin, &sets, name).map_err(|e| locate(e, &spec, origin))?;
            variants.push((spec, sc));
        }
        Ok(ScenarioSet { base, variants })
    }

    /// The variant called `name` (case-sensitive), or an error listing the names.
    pub fn select(&self, name: &str) -> Result<&Scenario, String> {
        self.variants
            .iter()
            .find(|(s, _)| s.name == name)
            .map(|(_, sc)| sc)
            .ok_or_else(|| {
                let names: Vec<&str> = self.variants.iter().map(|(s, _)| s.name.as_str()).collect();
                if names.is_empty() {
                    format!("no variant {name:?}: the scenario has no [[variant]] tables")
                } else {
                    format!(
                        "no variant {name:?}{} (variants: {})",
                        tinygram_proto::suggest::did_you_mean(name, names.iter().copied()),
                        names.join("; ")
                    )
                }
            })
    }
}

/// An error raised by a variant's key is reported at that key's line in the
/// file (and names the variant), not as a `--set`.
fn locate(mut e: ScenarioError, spec: &VariantSpec, origin: &str) -> ScenarioError {
    if e.file != format!("--set {}", e.key) {
        return e;
    }
    let at = spec
        .sets
        .iter()
        .position(|s| s.split_once('=').map(|(k, _)| k.trim()) == Some(e.key.as_str()));
    if let Some(i) = at {
        e.file = origin.to_string();
        e.line = Some(spec.set_lines.get(i).copied().unwrap_or(spec.line));
        e.message = format!("in variant {:?}: {}", spec.name, e.message);
    }
    e
}

fn fail(origin: &str, line: Option<usize>, key: &str, message: impl Into<String>) -> ScenarioError {
    ScenarioError {
        file: origin.to_string(),
        line,
        key: key.to_string(),
        message: message.into(),
        also: Vec::new(),
    }
}

/// The `[[variant]]` tables of a scenario text, in file order.
pub fn parse_variants(text: &str, origin: &str) -> Result<Vec<VariantSpec>, ScenarioError> {
    let line_of = |offset: usize| text[..offset.min(text.len())].matches('\n').count() + 1;
    let doc = ImDocument::parse(text).map_err(|e| {
        fail(
            origin,
            e.span().map(|s| line_of(s.start)),
            "",
            format!("TOML syntax: {}", e.message().trim()),
        )
    })?;
    let Some(item) = doc.as_table().get(VARIANT_TABLE) else {
        return Ok(Vec::new());
    };
    let key_line = doc
        .as_table()
        .key(VARIANT_TABLE)
        .and_then(|k| k.span())
        .map(|s| line_of(s.start));
    let Item::ArrayOfTables(tables) = item else {
        return Err(fail(
            origin,
            key_line,
            VARIANT_TABLE,
            "expected [[variant]] tables, each with a name and the keys it overrides",
        ));
    };
    let mut out: Vec<VariantSpec> = Vec::new();
    for t in tables.iter() {
        let line = t.span().map(|s| line_of(s.start)).or(key_line).unwrap_or(1);
        let mut leaves = Vec::new();
        flatten("", t, &line_of, &mut leaves);
        let mut name = None;
        let mut sets = Vec::new();
        let mut set_lines = Vec::new();
        for (key, value, key_line) in leaves {
            let key_line = key_line.unwrap_or(line);
            if key == "name" {
                match value.as_str() {
                    Some(s) if !s.trim().is_empty() => name = Some(s.trim().to_string()),
                    _ => {
                        return Err(fail(
                            origin,
                            Some(key_line),
                            "variant.name",
                            "must be a non-empty string",
                        ))
                    }
                }
            } else if key == VARIANT_TABLE || key.starts_with("variant.") {
                return Err(fail(origin, Some(key_line), &key, "variants cannot nest"));
            } else {
                sets.push(format!("{key}={}", value.to_string().trim()));
                set_lines.push(key_line);
            }
        }
        let Some(name) = name else {
            return Err(fail(
                origin,
                Some(line),
                "variant.name",
                "every [[variant]] needs a name = \"...\"",
            ));
        };
        if out.iter().any(|v| v.name == name) {
            return Err(fail(
                origin,
                Some(line),
                "variant.name",
                format!("two variants are named {name:?}"),
            ));
        }
        out.push(VariantSpec {
            name,
            line,
            sets,
            set_lines,
        });
    }
    Ok(out)
}

/// Flattens a table into (dotted key, leaf value, line of the leaf's key) triples.
fn flatten(
    prefix: &str,
    t: &dyn TableLike,
    line_of: &dyn Fn(usize) -> usize,
    out: &mut Vec<(String, Value, Option<usize>)>,
) {
    for (k, item) in t.iter() {
        let key = if prefix.is_empty() {
            k.to_string()
        } else {
            format!("{prefix}.{k}")
        };
        let line = t
            .get_key_value(k)
            .and_then(|(key, _)| key.span())
            .map(|s| line_of(s.start));
        match item {
            Item::Table(t) => flatten(&key, t, line_of, out),
            Item::Value(Value::InlineTable(t)) => flatten(&key, t, line_of, out),
            Item::Value(v) => {
                let mut v = v.clone();
                v.decor_mut().clear();
                out.push((key, v, line));
            }
            Item::None | Item::ArrayOfTables(_) => out.push((key, Value::from("[[...]]"), line)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = r#"
name = "v"
[workload]
type = "bulk"
bytes = "100KB"

[[variant]]
name = "nodelay"
client.send_policy = "nodelay"

[[variant]]
name = "wide"
[variant.client]
rcv_buf = "128KiB"
options = ["wscale", "sack"]
"#;

    #[test]
    fn variants_override_the_base_and_user_sets_override_both() {
        let set = ScenarioSet::from_str(BASE, "t.toml", &[]).unwrap();
        assert_eq!(set.variants.len(), 2);
        assert_eq!(set.variants[0].0.name, "nodelay");
        assert_eq!(set.variants[0].0.line, 7);
        assert_ne!(
            set.base.client.tcp.send_policy,
            set.variants[0].1.client.tcp.send_policy
        );
        assert_eq!(set.variants[1].1.client.tcp.rcv_buf, 128 * 1024);
        assert_eq!(
            set.variants[1].0.sets,
            vec![
                "client.rcv_buf=\"128KiB\"".to_string(),
                "client.options=[\"wscale\", \"sack\"]".to_string()
            ]
        );
        let user = ScenarioSet::from_str(BASE, "t.toml", &["client.rcv_buf=32KiB".into()]).unwrap();
        assert_eq!(user.variants[1].1.client.tcp.rcv_buf, 32 * 1024);
        assert_eq!(user.base.client.tcp.rcv_buf, 32 * 1024);
        assert!(set.select("wide").is_ok());
        assert!(set.select("narrow").unwrap_err().contains("nodelay; wide"));
        let typo = set.select("wdie").unwrap_err();
        assert!(typo.contains("did you mean \"wide\"?"), "{typo}");
    }

    #[test]
    fn a_bad_variant_is_located_in_the_file() {
        let text = "[[variant]]\nname = \"x\"\nclient.send_policy = \"nagel\"\n";
        let e = ScenarioSet::from_str(text, "t.toml", &[]).unwrap_err();
        assert_eq!((e.file.as_str(), e.line), ("t.toml", Some(3)), "{e}");
        assert!(e.to_string().contains("in variant \"x\""), "{e}");
        let e =
            ScenarioSet::from_str("[[variant]]\nclient.mss = 1000\n", "t.toml", &[]).unwrap_err();
        assert!(e.message.contains("needs a name"), "{e}");
        let twice = "[[variant]]\nname = \"a\"\n[[variant]]\nname = \"a\"\n";
        assert!(ScenarioSet::from_str(twice, "t.toml", &[])
            .unwrap_err()
            .message
            .contains("two variants"));
        let e = ScenarioSet::from_str("variant = 3\n", "t.toml", &[]).unwrap_err();
        assert_eq!(e.line, Some(1), "{e}");
    }

    /// A typo inside a variant is reported at the key's own line, whether the
    /// key is dotted, in a `[variant.client]` subtable or in an inline table.
    #[test]
    fn a_bad_variant_key_is_reported_at_its_own_line() {
        let text =
            "[[variant]]\nname = \"x\"\nclient.mss = 1000\n\nclient.send_polcy = \"nodelay\"\n";
        let e = ScenarioSet::from_str(text, "t.toml", &[]).unwrap_err();
        assert_eq!((e.file.as_str(), e.line), ("t.toml", Some(5)), "{e}");
        assert!(
            e.message.contains("did you mean `client.send_policy`"),
            "{e}"
        );
        assert!(e.message.contains("in variant \"x\""), "{e}");
        let sub =
            "[[variant]]\nname = \"y\"\n[variant.server]\nmss = 1000\nack_policy = \"delyed\"\n";
        let e = ScenarioSet::from_str(sub, "t.toml", &[]).unwrap_err();
        assert_eq!(
            (e.key.as_str(), e.line),
            ("server.ack_policy", Some(5)),
            "{e}"
        );
        let inline =
            "[[variant]]\nname = \"z\"\n\nlink = { rate = \"1Mbps\", delay = \"5 parsecs\" }\n";
        let e = ScenarioSet::from_str(inline, "t.toml", &[]).unwrap_err();
        assert_eq!((e.key.as_str(), e.line), ("link.delay", Some(4)), "{e}");
        // A variant's errors are located in the file, not blamed on a --set.
        let user = ScenarioSet::from_str(text, "t.toml", &["client.mss=70000".into()]).unwrap_err();
        assert_eq!(user.file, "--set client.mss", "{user}");
    }

    #[test]
    fn no_variants_is_just_the_base() {
        let set = ScenarioSet::from_str("seed = 4\n", "t.toml", &[]).unwrap();
        assert!(set.variants.is_empty());
        assert_eq!(set.base.seed, 4);
    }
}
