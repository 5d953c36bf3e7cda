//! The measured ratios of docs/benchmarks.toml and the chart drawn from them
//! (docs/img/benchmark-ratios.svg), so the page and its plot cannot disagree.

use serde::Deserialize;
use tinygram_report::ratios::{ratios_svg, RatioBar};

/// One measured ratio as docs/benchmarks.toml records it.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Ratio {
    /// What was measured.
    pub what: String,
    /// The ratio measured.
    pub measured: f64,
    /// The goal.
    pub goal: f64,
    /// The goal is a ceiling (cost ratios), not a floor (speed-ups).
    #[serde(default)]
    pub lower_is_better: bool,
    /// The command that measures it.
    pub command: String,
    /// Where it was measured.
    pub machine: String,
    /// When (YYYY-MM-DD).
    pub date: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    ratio: Vec<Ratio>,
}

/// Parses docs/benchmarks.toml's text.
pub fn parse(text: &str) -> Result<Vec<Ratio>, String> {
    let f: File = toml::from_str(text).map_err(|e| format!("docs/benchmarks.toml: {e}"))?;
    Ok(f.ratio)
}

/// The chart of `ratios` against their goals, as SVG.
pub fn chart(ratios: &[Ratio]) -> Result<String, String> {
    let bars: Vec<RatioBar> = ratios
        .iter()
        .map(|r| RatioBar {
            what: r.what.clone(),
            measured: r.measured,
            goal: r.goal,
            lower_is_better: r.lower_is_better,
        })
        .collect();
    ratios_svg(&bars, "tinygram's speed ratios against their goals")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn docs() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs")
    }

    /// The chart in the docs is the one this file draws; TINYGRAM_BLESS=1 redraws it.
    #[test]
    fn the_docs_chart_is_current() {
        let text = std::fs::read_to_string(docs().join("benchmarks.toml")).unwrap();
        let ratios = parse(&text).unwrap();
        assert!(ratios.len() >= 5, "{ratios:?}");
        for r in &ratios {
            assert!(!r.command.is_empty() && r.date.len() == 10, "{r:?}");
        }
        let svg = chart(&ratios).unwrap();
        let path = docs().join("img/benchmark-ratios.svg");
        if std::env::var_os("TINYGRAM_BLESS").is_some() {
            std::fs::write(&path, &svg).unwrap();
        }
        let stored = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            stored == svg,
            "docs/img/benchmark-ratios.svg is not drawn from docs/benchmarks.toml: \
             run TINYGRAM_BLESS=1 cargo test -p tinygram-benches --lib"
        );
    }

    #[test]
    fn unknown_keys_are_refused() {
        let e = parse("[[ratio]]\nwhat = \"x\"\nmeasured = 1\ngoal = 2\ncommand = \"c\"\nmachine = \"m\"\ndate = \"2026-01-01\"\nspeed = 3\n")
            .unwrap_err();
        assert!(e.contains("speed"), "{e}");
    }
}
