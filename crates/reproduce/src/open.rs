//! What the documents leave open, and the one rule that reads a claim over it.
//!
//! Each experiment lists the values its document does not give (a file size
//! read from "33 KB", the pacing of a server's writes, ...) as ranges of the
//! run library's [`Space`]; every published cell runs at every point of that
//! space, and each point gives a verdict by the experiment's reading. The
//! points are then read together by one rule ([`verdict_over`]): a claim is
//! reproduced when it is reproduced at every point, not reproduced when it
//! is not at any, and not testable when where in the range the truth lies
//! decides it. Numbers become distributions over the points.

use crate::{Cell, Claim, Quantity, Rule, Section, Table, Verdict, TOLERANCE};
use serde_json::{json, Value};
use tinygram_lab::space::{Open, Point, Space, Spec, Tolerance};
use tinygram_lab::{Distribution, Reading};

/// Draws per experiment space in a full run, and with `--quick`.
pub const SAMPLES: u32 = 16;
/// Draws with `--quick`: fewer, and the report says so.
pub const QUICK_SAMPLES: u32 = 4;

/// A value an experiment's document leaves open: the key it sets (a scenario
/// key such as `workload.response_gap`, or the experiment's own such as
/// `file.33KB`), its plausible range, and why that range.
#[derive(Clone, Debug)]
pub struct Unknown {
    pub key: String,
    pub spec: Spec,
    pub why: String,
}

impl Unknown {
    /// An unknown drawn uniformly from `from` to `to` (TOML values: `"1ms"`, `32768`).
    pub fn drawn(key: &str, from: &str, to: &str, why: &str) -> Unknown {
        Unknown {
            key: key.into(),
            spec: Spec::Draw {
                from: from.into(),
                to: to.into(),
                dist: tinygram_lab::space::Dist::Uniform,
            },
            why: why.into(),
        }
    }

    /// report.json's `experiments[].unknowns[]` entry.
    pub fn to_json(&self) -> Value {
        json!({ "key": self.key, "range": self.spec.describe(), "why": self.why })
    }
}

/// The space of an experiment's unknowns: `samples` seeded draws (seed 1,
/// so every run of `reproduce` gives the same points).
pub fn space(unknowns: &[Unknown], samples: u32) -> Space {
    Space {
        open: unknowns
            .iter()
            .map(|u| Open {
                key: u.key.clone(),
                spec: u.spec.clone(),
                at: "reproduce".into(),
            })
            .collect(),
        samples,
        draw_seed: 1,
    }
}

/// The values of the open keys at one point of an experiment's space.
#[derive(Clone, Debug, Default)]
pub struct At {
    pub sets: Vec<(String, String)>,
}

impl At {
    pub fn of(p: &Point) -> At {
        At {
            sets: p.sets.clone(),
        }
    }

    /// The value of `key` here as TOML text, if the space leaves it open.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.sets
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// A whole number of bytes at `key`, or `default` when it is not open.
    pub fn bytes(&self, key: &str, default: u64) -> u64 {
        self.get(key)
            .and_then(|v| v.trim_matches('"').parse::<f64>().ok())
            .map_or(default, |x| x.round().max(0.0) as u64)
    }

    /// A number at `key`, or `default` when it is not open.
    pub fn number(&self, key: &str, default: f64) -> f64 {
        self.get(key)
            .and_then(|v| v.trim_matches('"').parse::<f64>().ok())
            .unwrap_or(default)
    }

    /// The open scenario keys as `KEY=VALUE` overrides (the experiment's own
    /// keys, which name no scenario table, are left to its jobs).
    pub fn overrides(&self) -> Vec<String> {
        self.sets
            .iter()
            .filter(|(k, _)| {
                ["workload.", "client.", "server.", "link."]
                    .iter()
                    .any(|t| k.starts_with(t))
            })
            .map(|(k, v)| format!("{k}={v}"))
            .collect()
    }

    /// The point in words: `file.33KB=33120, workload.response_gap="310us"`
    /// (drawn fractions to four significant digits).
    pub fn describe(&self) -> String {
        self.sets
            .iter()
            .map(|(k, v)| match v.parse::<f64>() {
                Ok(x) if x.fract() != 0.0 => format!("{k}={}", crate::fmt_num(sig4(x))),
                _ => format!("{k}={v}"),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// `x` to four significant digits.
fn sig4(x: f64) -> f64 {
    if x == 0.0 {
        return 0.0;
    }
    let m = 10f64.powi(3 - x.abs().log10().floor() as i32);
    (x * m).round() / m
}

/// Verdicts at the points of a space, counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub reproduced: usize,
    pub not_reproduced: usize,
    pub not_testable: usize,
}

impl Tally {
    pub fn one(v: Verdict) -> Tally {
        let mut t = Tally::default();
        t.add(v);
        t
    }

    pub fn add(&mut self, v: Verdict) {
        match v {
            Verdict::Reproduced => self.reproduced += 1,
            Verdict::NotReproduced => self.not_reproduced += 1,
            Verdict::NotTestable => self.not_testable += 1,
        }
    }

    pub fn of(&self) -> usize {
        self.reproduced + self.not_reproduced + self.not_testable
    }

    pub fn to_json(&self) -> Value {
        json!({
            "reproduced": self.reproduced,
            "not_reproduced": self.not_reproduced,
            "not_testable": self.not_testable,
            "of": self.of(),
        })
    }
}

/// THE verdict rule over the points of an experiment's space: reproduced at
/// every point, reproduced; not reproduced at every point, not reproduced;
/// anything else (it flips inside the range, or the claim is untestable at
/// some point) not testable. Every verdict in the report comes from here.
pub fn verdict_over(t: Tally) -> Verdict {
    match Reading::of(
        std::iter::repeat_n(true, t.reproduced)
            .chain(std::iter::repeat_n(false, t.of() - t.reproduced)),
    ) {
        Reading::Holds => Verdict::Reproduced,
        Reading::Fails if t.not_testable == 0 => Verdict::NotReproduced,
        _ => Verdict::NotTestable,
    }
}

/// A number of ours over the points, read against the published figure.
#[derive(Clone, Debug)]
pub struct Spread {
    pub dist: Distribution,
    /// The published value read by the tolerance at every point.
    pub reading: Option<Reading>,
    /// Where the published value falls among ours (0-100).
    pub percentile: Option<f64>,
}

impl Spread {
    /// The values at each point, with the published figure if there is one
    /// (read within the tolerance).
    pub fn of(values: &[f64], published: Option<f64>) -> Option<Spread> {
        Spread::read_by(values, published, Rule::Within)
    }

    /// [`Spread::of`] with the published figure read by `rule` at each point.
    pub fn read_by(values: &[f64], published: Option<f64>, rule: Rule) -> Option<Spread> {
        let dist = Distribution::of(values)?;
        let reading = published.and_then(|p| match rule {
            Rule::Within => Some(dist.read(p, Tolerance::Factor(TOLERANCE))),
            Rule::Untestable => None,
            _ => Some(Reading::of(
                dist.values.iter().map(|&m| rule.holds(p, m) == Some(true)),
            )),
        });
        Some(Spread {
            reading,
            percentile: published.map(|p| dist.percentile_of(p)),
            dist,
        })
    }

    /// Ours varies across the points.
    pub fn varies(&self) -> bool {
        self.dist.min != self.dist.max
    }

    /// "12.1 (4.8-221)": the median, then the 10th to 90th percentile when they differ.
    pub fn text(&self, digits: usize) -> String {
        let d = &self.dist;
        if d.p10 == d.p90 {
            format!("{:.digits$}", d.p50)
        } else {
            format!("{:.digits$} ({:.digits$}-{:.digits$})", d.p50, d.p10, d.p90)
        }
    }

    /// The published figure's place among ours, in words.
    pub fn place(&self, published: f64) -> String {
        match self.percentile {
            Some(p) if self.varies() => format!(
                "published {} is {} (percentile {p:.0})",
                crate::fmt_num(published),
                self.dist.place(published)
            ),
            _ => String::new(),
        }
    }

    /// Outside the tolerance at every point (tables shade it).
    pub fn outside(&self) -> bool {
        self.reading == Some(Reading::Fails)
    }

    /// Inside at some points and outside at others.
    pub fn flips(&self) -> bool {
        matches!(self.reading, Some(Reading::Flips { .. }))
    }

    pub fn to_json(&self) -> Value {
        let d = &self.dist;
        json!({
            "n": d.n, "min": d.min, "p10": d.p10, "p50": d.p50, "p90": d.p90, "max": d.max,
            "published_percentile": self.percentile,
            "published_within_tolerance": self.reading,
        })
    }
}

fn values_of(q: &[Option<&Quantity>]) -> Vec<f64> {
    q.iter().flatten().map(|q| q.value).collect()
}

/// One claim or cell over the points: the tally, the verdict by the rule, our
/// number as a distribution, and a cause that says what flips it.
fn merge_verdicts(
    verdicts: &[Verdict],
    measured: &[Option<&Quantity>],
    published: Option<&Quantity>,
    unknowns: &str,
) -> (Tally, Verdict, Option<Spread>, Option<String>) {
    let mut t = Tally::default();
    for v in verdicts {
        t.add(*v);
    }
    let verdict = verdict_over(t);
    let spread = Spread::of(&values_of(measured), published.map(|p| p.value));
    let flips = t.of() > 1 && verdict == Verdict::NotTestable && t.not_testable < t.of();
    let cause = flips.then(|| {
        let untestable = if t.not_testable > 0 {
            format!(" and not testable at {}", t.not_testable)
        } else {
            String::new()
        };
        let mut s = format!(
            "Reproduced at {} of {} points of what the document leaves open{untestable} \
             ({unknowns}): where in that range the truth lies decides it.",
            t.reproduced,
            t.of()
        );
        if let (Some(sp), Some(p)) = (&spread, published) {
            let place = sp.place(p.value);
            if !place.is_empty() {
                s += &format!(" The {place}.");
            }
        }
        s
    });
    (t, verdict, spread, cause)
}

/// One section from the sections of every point of an experiment's space
/// (`points[i]` ran at `at[i]`): tables, claims and cells read over the
/// points by [`verdict_over`]; text (findings, differences, plots) from the
/// first point, which the section names.
pub fn merge(mut points: Vec<Section>, at: &[At], unknowns: &[Unknown], samples: u32) -> Section {
    let n = points.len();
    let mut sec = points.remove(0);
    sec.unknowns = unknowns.to_vec();
    sec.samples = if unknowns.is_empty() { 0 } else { samples };
    sec.points = n;
    let keys = unknowns
        .iter()
        .map(|u| u.key.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    if n > 1 {
        sec.findings.insert(
            0,
            format!(
                "Tables show ours as the median and the 10th-90th percentile over {n} points of \
                 what the document leaves open ({keys}); the findings below are read at the \
                 first point ({}).",
                at[0].describe()
            ),
        );
    }
    let all: Vec<&Section> = std::iter::once(&sec).chain(points.iter()).collect();
    // Tables: each value over the points.
    let mut tables = sec.tables.clone();
    for (ti, t) in tables.iter_mut().enumerate() {
        merge_table(t, ti, &all);
    }
    // Claims and their cells, matched by id and labels.
    let mut claims = sec.claims.clone();
    for c in claims.iter_mut() {
        let same: Vec<&Claim> = all
            .iter()
            .filter_map(|s| s.claims.iter().find(|x| x.id == c.id))
            .collect();
        if c.cells.is_empty() {
            let v: Vec<Verdict> = same.iter().map(|x| x.verdict).collect();
            let m: Vec<Option<&Quantity>> = same.iter().map(|x| x.measured.as_ref()).collect();
            let (t, verdict, spread, cause) = merge_verdicts(&v, &m, c.published.as_ref(), &keys);
            c.points = t;
            c.verdict = verdict;
            c.spread = spread;
            if verdict == Verdict::Reproduced {
                c.cause = None;
            } else if let Some(why) = cause {
                c.cause = Some(why);
            }
            if let (Some(sp), Some(m)) = (&c.spread, c.measured.as_mut()) {
                m.value = sp.dist.p50;
            }
        } else {
            for cell in c.cells.iter_mut() {
                let mine: Vec<&Cell> = same
                    .iter()
                    .filter_map(|x| x.cells.iter().find(|y| y.labels == cell.labels))
                    .collect();
                let v: Vec<Verdict> = mine.iter().map(|x| x.verdict).collect();
                let m: Vec<Option<&Quantity>> = mine.iter().map(|x| x.measured.as_ref()).collect();
                let (t, verdict, spread, cause) =
                    merge_verdicts(&v, &m, cell.published.as_ref(), &keys);
                cell.points = t;
                cell.verdict = verdict;
                cell.spread = spread;
                if verdict == Verdict::Reproduced {
                    cell.cause = None;
                } else if let Some(why) = cause {
                    cell.cause = Some(why);
                }
                if let (Some(sp), Some(m)) = (&cell.spread, cell.measured.as_mut()) {
                    m.value = sp.dist.p50;
                }
            }
            let mut t = Tally::default();
            for x in &same {
                t.add(x.verdict);
            }
            let merged = Claim::matrix("", "", "", String::new(), &[], c.cells.clone());
            c.points = t;
            c.verdict = merged.verdict;
            c.cause = merged.cause;
        }
    }
    // Charts: each bar the median over the points, its whisker the range.
    let mut charts = sec.charts.clone();
    for (ci, chart) in charts.iter_mut().enumerate() {
        let title = chart.title.clone();
        for ser in chart.series.iter_mut() {
            ser.spread = vec![None; ser.values.len()];
            for gi in 0..ser.values.len() {
                let xs: Vec<f64> = all
                    .iter()
                    .filter_map(|s| {
                        let c = s.charts.get(ci).filter(|c| c.title == title)?;
                        let other = c.series.iter().find(|x| x.label == ser.label)?;
                        other.values.get(gi).copied()
                    })
                    .collect();
                if let Some(d) = Distribution::of(&xs) {
                    ser.values[gi] = d.p50;
                    ser.spread[gi] = (d.min < d.max).then_some((d.min, d.max));
                }
            }
        }
    }
    sec.tables = tables;
    sec.claims = claims;
    sec.charts = charts;
    sec
}

fn merge_table(t: &mut Table, ti: usize, all: &[&Section]) {
    let title = t.title.clone();
    for row in t.rows.iter_mut() {
        for (vi, v) in row.values.iter_mut().enumerate() {
            let xs: Vec<f64> = all
                .iter()
                .filter_map(|s| {
                    let tt = s.tables.get(ti).filter(|x| x.title == title)?;
                    let r = tt.rows.iter().find(|r| r.labels == row.labels)?;
                    r.values.get(vi)?.measured
                })
                .collect();
            v.spread = Spread::read_by(&xs, v.published, v.rule);
            if let Some(sp) = &v.spread {
                v.measured = Some(sp.dist.p50);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{q, Claim};

    fn section(verdict: Verdict, value: f64) -> Section {
        let mut s = crate::experiments::shell("doupnik-web");
        s.claims.push(Claim::new(
            "x",
            "c",
            "1",
            "a claim".into(),
            q(10.0, "req/s"),
            q(value, "req/s"),
            verdict,
            || Some("at this point it fails".into()),
        ));
        s
    }

    #[test]
    fn the_rule_reads_every_point() {
        let t = |r, n, u| Tally {
            reproduced: r,
            not_reproduced: n,
            not_testable: u,
        };
        assert_eq!(verdict_over(t(4, 0, 0)), Verdict::Reproduced);
        assert_eq!(verdict_over(t(0, 4, 0)), Verdict::NotReproduced);
        assert_eq!(verdict_over(t(3, 1, 0)), Verdict::NotTestable);
        assert_eq!(verdict_over(t(0, 3, 1)), Verdict::NotTestable);
        assert_eq!(verdict_over(t(0, 0, 1)), Verdict::NotTestable);
    }

    #[test]
    fn a_claim_that_flips_inside_the_range_is_not_testable_and_says_where() {
        let at = vec![At::default(), At::default()];
        let u = [Unknown::drawn(
            "file.x",
            "1",
            "2",
            "the document says neither",
        )];
        let m = merge(
            vec![
                section(Verdict::Reproduced, 12.0),
                section(Verdict::NotReproduced, 40.0),
            ],
            &at,
            &u,
            2,
        );
        let c = &m.claims[0];
        assert_eq!(c.verdict, Verdict::NotTestable);
        assert_eq!(c.points.reproduced, 1);
        let cause = c.cause.as_deref().unwrap();
        assert!(cause.contains("1 of 2 points"), "{cause}");
        assert!(cause.contains("below our minimum"), "{cause}");
        let same = merge(
            vec![
                section(Verdict::Reproduced, 12.0),
                section(Verdict::Reproduced, 11.0),
            ],
            &at,
            &u,
            2,
        );
        assert_eq!(same.claims[0].verdict, Verdict::Reproduced);
        assert!(same.claims[0].cause.is_none());
        assert_eq!(same.claims[0].measured.as_ref().unwrap().value, 11.0);
    }
}
