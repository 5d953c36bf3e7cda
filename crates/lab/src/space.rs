//! Values a scenario leaves open, and the runs they expand into.
//!
//! A file's `[open]` table (or `--open KEY=SPEC`) names keys whose value the
//! experiment does not fix: a list of values, an evenly spaced grid, or a
//! range drawn from by seeded samples. The space expands into points (the
//! grid's cross product, each with the same `samples` draws: common random
//! numbers, so grid points compare like with like), each point a run with
//! the keys set as `--set` would; each numeric result field then becomes a
//! [`Distribution`], read against a number by one rule ([`Distribution::read`]).
//!
//! ```toml
//! [open]
//! samples = 16                                             # draws per grid point
//! "workload.response_gap" = { from = "0us", to = "1ms" }   # uniform draws
//! "workload.think" = { from = "1ms", to = "100ms", dist = "log-uniform" }
//! "workload.response" = { values = [[32768], [33000], [33792]] }
//! "server.delack" = { from = "40ms", to = "200ms", steps = 5 }
//! ```

use crate::source::Source;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::time::Duration;
use tinygram_sim::scenario::OPEN_TABLE;
use tinygram_sim::units::{fmt_duration, parse_duration, parse_rate, parse_size};
use tinygram_sim::ScenarioError;
use toml_edit::{ImDocument, Item, TableLike};

/// Draws per grid point when a space has ranges to sample and does not say.
pub const DEFAULT_SAMPLES: u32 = 16;
/// Most runs one expansion may ask for; sized before anything is allocated.
pub const MAX_POINTS: u64 = 1_000_000;
/// Most points of one `steps` grid or draws of one space.
pub const MAX_STEPS: u32 = 100_000;

/// The unit a range's ends are written in; interpolation is in its base unit
/// (nanoseconds, bytes, bits per second) and the result written back in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unit {
    Integer,
    Float,
    Duration,
    Size,
    Rate,
}

/// A range's end: one number, or a list of numbers (a list-valued key such
/// as `workload.response`, interpolated element by element).
#[derive(Clone, Debug, PartialEq)]
struct Quantity {
    unit: Unit,
    values: Vec<f64>,
    list: bool,
}

impl Quantity {
    fn parse(v: &toml_edit::Value) -> Result<Quantity, String> {
        let scalar = |v: &toml_edit::Value| -> Result<(Unit, f64), String> {
            match v {
                toml_edit::Value::Integer(i) => Ok((Unit::Integer, *i.value() as f64)),
                toml_edit::Value::Float(f) if f.value().is_finite() => {
                    Ok((Unit::Float, *f.value()))
                }
                toml_edit::Value::String(s) => {
                    let s = s.value();
                    if let Ok(d) = parse_duration(s) {
                        Ok((Unit::Duration, d.as_nanos() as f64))
                    } else if let Ok(b) = parse_size(s) {
                        Ok((Unit::Size, b as f64))
                    } else if let Ok(r) = parse_rate(s) {
                        Ok((Unit::Rate, r))
                    } else {
                        Err(format!(
                            "{s:?} is not a number, duration (\"10ms\"), size (\"32KB\") or rate (\"10Mbps\")"
                        ))
                    }
                }
                other => Err(format!(
                    "{} is not a number or a quantity",
                    other.to_string().trim()
                )),
            }
        };
        let (list, items): (bool, Vec<&toml_edit::Value>) = match v {
            toml_edit::Value::Array(a) => (true, a.iter().collect()),
            other => (false, vec![other]),
        };
        if items.is_empty() {
            return Err("an empty list has nothing to interpolate".into());
        }
        let mut unit = None;
        let mut values = Vec::with_capacity(items.len());
        for it in items {
            let (u, x) = scalar(it)?;
            unit = Some(match (unit, u) {
                (None, u) => u,
                (Some(a), b) if a == b => a,
                (Some(Unit::Integer), Unit::Float) | (Some(Unit::Float), Unit::Integer) => {
                    Unit::Float
                }
                (Some(_), _) => return Err("the list mixes units".into()),
            });
            values.push(x);
        }
        Ok(Quantity {
            unit: unit.expect("one item at least"),
            values,
            list,
        })
    }

    /// The value `t` of the way from `self` to `to` (0: self, 1: to), or on a
    /// log scale.
    fn lerp(&self, to: &Quantity, t: f64, log: bool) -> Quantity {
        let values = self
            .values
            .iter()
            .zip(&to.values)
            .map(|(&a, &b)| {
                if log {
                    (a.ln() + t * (b.ln() - a.ln())).exp()
                } else {
                    a + t * (b - a)
                }
            })
            .collect();
        Quantity {
            unit: self.unit,
            values,
            list: self.list,
        }
    }

    /// The value as TOML text, as `--set` takes it.
    fn toml(&self) -> String {
        let one = |x: f64| match self.unit {
            Unit::Integer | Unit::Size => format!("{}", x.round() as i64),
            Unit::Float => {
                let v: toml_edit::Value = x.into();
                v.to_string().trim().to_string()
            }
            Unit::Duration => {
                let d = Duration::from_nanos(x.round() as u64);
                let text = fmt_duration(d);
                if parse_duration(&text) == Ok(d) {
                    format!("{text:?}")
                } else {
                    format!("\"{}ns\"", d.as_nanos())
                }
            }
            Unit::Rate => format!("\"{}bps\"", x.round() as u64),
        };
        if self.list {
            let items: Vec<String> = self.values.iter().map(|&x| one(x)).collect();
            format!("[{}]", items.join(", "))
        } else {
            one(self.values[0])
        }
    }
}

/// How a drawn value is distributed between its ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Dist {
    Uniform,
    /// Uniform in the logarithm: each decade equally likely (think times).
    LogUniform,
}

/// What one open key may take.
#[derive(Clone, Debug, PartialEq)]
pub enum Spec {
    /// Exactly these values (TOML text each), a grid axis.
    Values(Vec<String>),
    /// `steps` evenly spaced values from `from` to `to`, both included.
    Steps {
        from: String,
        to: String,
        steps: u32,
    },
    /// Seeded draws between `from` and `to`.
    Draw {
        from: String,
        to: String,
        dist: Dist,
    },
}

impl Spec {
    /// The spec in the words a report uses: `40ms..200ms in 5 steps`.
    pub fn describe(&self) -> String {
        match self {
            Spec::Values(v) => format!("one of {}", v.join(", ")),
            Spec::Steps { from, to, steps } => format!("{from}..{to} in {steps} steps"),
            Spec::Draw { from, to, dist } => {
                let d = match dist {
                    Dist::Uniform => "uniform",
                    Dist::LogUniform => "log-uniform",
                };
                format!("{from}..{to} ({d})")
            }
        }
    }
}

/// One key left open, and where it was given (for errors).
#[derive(Clone, Debug, PartialEq)]
pub struct Open {
    pub key: String,
    pub spec: Spec,
    /// `file:line` or `--open KEY`.
    pub at: String,
}

/// The values a run leaves open, and how many draws each grid point takes.
#[derive(Clone, Debug, PartialEq)]
pub struct Space {
    pub open: Vec<Open>,
    /// Draws per grid point of the keys given as ranges to draw from.
    pub samples: u32,
    /// Seed of the draws (default 1): the same space always gives the same points.
    pub draw_seed: u64,
}

/// One point of a space: each open key's value as `--set` TOML text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Point {
    pub sets: Vec<(String, String)>,
}

impl Point {
    /// The point's settings as `KEY=VALUE` overrides.
    pub fn overrides(&self) -> Vec<String> {
        self.sets.iter().map(|(k, v)| format!("{k}={v}")).collect()
    }
}

fn err(at: &str, key: &str, message: impl Into<String>) -> ScenarioError {
    ScenarioError {
        file: at.to_string(),
        line: None,
        key: key.to_string(),
        message: message.into(),
        also: Vec::new(),
    }
}

/// Reads a spec's TOML: a table (`{ from, to [, steps | dist] }` or `{ values }`),
/// or on the command line `A..B` (draws), `A..B:N` (N steps), `[V1, V2]` (values).
fn parse_spec(v: &Item, at: &str, key: &str) -> Result<Spec, ScenarioError> {
    let fail = |m: String| err(at, key, m);
    let t: &dyn TableLike = match v {
        Item::Table(t) => t,
        Item::Value(toml_edit::Value::InlineTable(t)) => t,
        Item::Value(toml_edit::Value::Array(a)) => {
            return values_spec(a).map_err(fail);
        }
        _ => {
            return Err(fail(
                "an open value is a table: { from = A, to = B } (drawn), \
                 { from = A, to = B, steps = N } (a grid) or { values = [...] }"
                    .into(),
            ))
        }
    };
    for (name, _) in t.iter() {
        if !["from", "to", "steps", "dist", "values"].contains(&name) {
            return Err(fail(format!(
                "unknown field {name:?} (from, to, steps, dist, values)"
            )));
        }
    }
    if let Some(values) = t.get("values") {
        if t.len() > 1 {
            return Err(fail(
                "values = [...] stands alone (no from, to or steps)".into(),
            ));
        }
        let Some(toml_edit::Value::Array(a)) = values.as_value() else {
            return Err(fail("values must be a list".into()));
        };
        return values_spec(a).map_err(fail);
    }
    let end = |name: &str| -> Result<String, ScenarioError> {
        let v = t
            .get(name)
            .and_then(Item::as_value)
            .ok_or_else(|| fail(format!("needs {name} = VALUE (or values = [...])")))?;
        Quantity::parse(v).map_err(|m| fail(format!("{name}: {m}")))?;
        Ok(v.to_string().trim().to_string())
    };
    let (from, to) = (end("from")?, end("to")?);
    let steps = match t.get("steps").and_then(Item::as_value) {
        None => None,
        Some(toml_edit::Value::Integer(i)) if (2..=i64::from(MAX_STEPS)).contains(i.value()) => {
            Some(*i.value() as u32)
        }
        Some(other) => {
            return Err(fail(format!(
                "steps: {} is not a count from 2 to {MAX_STEPS}",
                other.to_string().trim()
            )))
        }
    };
    let dist = match t.get("dist").and_then(Item::as_value).map(|v| v.as_str()) {
        None => None,
        Some(Some("uniform")) => Some(Dist::Uniform),
        Some(Some("log-uniform")) => Some(Dist::LogUniform),
        Some(other) => {
            return Err(fail(format!(
                "dist: {other:?} is not a distribution (uniform, log-uniform)"
            )))
        }
    };
    let spec = match (steps, dist) {
        (Some(_), Some(_)) => {
            return Err(fail("give steps (a grid) or dist (draws), not both".into()))
        }
        (Some(steps), None) => Spec::Steps { from, to, steps },
        (None, dist) => Spec::Draw {
            from,
            to,
            dist: dist.unwrap_or(Dist::Uniform),
        },
    };
    check_ends(&spec).map_err(fail)?;
    Ok(spec)
}

fn values_spec(a: &toml_edit::Array) -> Result<Spec, String> {
    if a.is_empty() {
        return Err("values: the list is empty".into());
    }
    if a.len() > MAX_STEPS as usize {
        return Err(format!("values: more than {MAX_STEPS}"));
    }
    Ok(Spec::Values(
        a.iter().map(|v| v.to_string().trim().to_string()).collect(),
    ))
}

/// Both ends parse, in one unit, with one length; a log scale needs them above 0.
fn check_ends(spec: &Spec) -> Result<(), String> {
    let (from, to, log) = match spec {
        Spec::Values(_) => return Ok(()),
        Spec::Steps { from, to, .. } => (from, to, false),
        Spec::Draw { from, to, dist } => (from, to, *dist == Dist::LogUniform),
    };
    let (a, b) = (quantity(from)?, quantity(to)?);
    let kind = |u: Unit| matches!(u, Unit::Integer | Unit::Float);
    if a.unit != b.unit && !(kind(a.unit) && kind(b.unit)) {
        return Err(format!("from {from} and to {to} are in different units"));
    }
    if a.values.len() != b.values.len() || a.list != b.list {
        return Err(format!("from {from} and to {to} differ in length"));
    }
    if log && a.values.iter().chain(&b.values).any(|&x| x <= 0.0) {
        return Err("a log-uniform range needs both ends above zero".into());
    }
    Ok(())
}

fn quantity(text: &str) -> Result<Quantity, String> {
    let v: toml_edit::Value = text.parse().map_err(|e| format!("{text}: {e}"))?;
    Quantity::parse(&v)
}

/// A `--open KEY=SPEC` argument's SPEC as a TOML item: the shorthand
/// `A..B` / `A..B:N`, or TOML (`{ from = "1ms", to = "9ms" }`, `[1, 2]`).
fn cli_spec(spec: &str) -> Result<Item, String> {
    let spec = spec.trim();
    let shorthand = !spec.starts_with('{') && (!spec.starts_with('[') || spec.contains("]..["));
    if shorthand {
        if let Some((a, rest)) = spec.split_once("..") {
            let (b, steps) = match rest.rsplit_once(':') {
                Some((b, n)) => (b, Some(n)),
                None => (rest, None),
            };
            let q = |s: &str| {
                let s = s.trim();
                if s.parse::<f64>().is_ok() || s.starts_with('[') {
                    s.to_string()
                } else {
                    format!("{s:?}")
                }
            };
            let mut text = format!("{{ from = {}, to = {}", q(a), q(b));
            if let Some(n) = steps {
                text += &format!(", steps = {}", n.trim());
            }
            text += " }";
            return text
                .parse::<toml_edit::Value>()
                .map(Item::Value)
                .map_err(|e| format!("{spec:?}: {e}"));
        }
    }
    spec.parse::<toml_edit::Value>()
        .map(Item::Value)
        .map_err(|_| {
            format!("{spec:?} is not A..B (drawn), A..B:N (N steps), [V1, V2] or a TOML table")
        })
}

impl Space {
    /// No open values: a run is one point.
    pub fn is_empty(&self) -> bool {
        self.open.is_empty()
    }

    /// The `[open]` table of a scenario and then each `--open KEY=SPEC`
    /// (which replaces the file's spec of the same key).
    pub fn of_source(src: &Source, cli: &[String]) -> Result<Space, ScenarioError> {
        let mut space = Space {
            open: Vec::new(),
            samples: DEFAULT_SAMPLES,
            draw_seed: 1,
        };
        // Syntax errors are the scenario reader's to report, with their line.
        if let Ok(doc) = ImDocument::parse(src.text.as_str()) {
            if let Some(item) = doc.as_table().get(OPEN_TABLE) {
                let Some(t) = item.as_table_like() else {
                    return Err(err(&src.origin, OPEN_TABLE, "[open] must be a table"));
                };
                space.read_table(t, "", src, &doc)?;
            }
        }
        for arg in cli {
            let (key, spec) = arg
                .split_once('=')
                .ok_or_else(|| err("--open", "", format!("{arg:?}: expected KEY=SPEC")))?;
            let key = key.trim();
            let at = format!("--open {key}");
            let item = cli_spec(spec).map_err(|m| err(&at, key, m))?;
            let spec = parse_spec(&item, &at, key)?;
            space.open.retain(|o| o.key != key);
            space.open.push(Open {
                key: key.to_string(),
                spec,
                at,
            });
        }
        Ok(space)
    }

    fn read_table(
        &mut self,
        t: &dyn TableLike,
        prefix: &str,
        src: &Source,
        doc: &ImDocument<&str>,
    ) -> Result<(), ScenarioError> {
        for (name, item) in t.iter() {
            let key = if prefix.is_empty() {
                name.to_string()
            } else {
                format!("{prefix}.{name}")
            };
            let line = t
                .get_key_value(name)
                .and_then(|(k, _)| k.span())
                .map(|s| doc.raw()[..s.start].matches('\n').count() + 1);
            let at = match line {
                Some(l) => format!("{}:{l}", src.origin),
                None => src.origin.clone(),
            };
            let located = |mut e: ScenarioError| {
                e.file = src.origin.clone();
                e.line = line;
                e.key = format!("{OPEN_TABLE}.{key}");
                e
            };
            if prefix.is_empty() && (name == "samples" || name == "seed") {
                let n = item
                    .as_integer()
                    .filter(|&n| n >= 0)
                    .ok_or_else(|| located(err("", "", "must be a whole number >= 0")))?;
                if name == "samples" {
                    if !(1..=i64::from(MAX_STEPS)).contains(&n) {
                        return Err(located(err(
                            "",
                            "",
                            format!("{n} draws: give 1 to {MAX_STEPS}"),
                        )));
                    }
                    self.samples = n as u32;
                } else {
                    self.draw_seed = n as u64;
                }
                continue;
            }
            let leaf = item
                .as_table_like()
                .is_some_and(|t| t.contains_key("from") || t.contains_key("values"));
            match item.as_table_like() {
                Some(sub) if !leaf => self.read_table(sub, &key, src, doc)?,
                _ => {
                    let spec = parse_spec(item, &at, &key).map_err(located)?;
                    self.open.push(Open { key, spec, at });
                }
            }
        }
        Ok(())
    }

    /// Whether any key is drawn (so each grid point takes `samples` draws).
    fn draws(&self) -> bool {
        self.open
            .iter()
            .any(|o| matches!(o.spec, Spec::Draw { .. }))
    }

    /// How many points the space expands into, or an error saying how many
    /// it would be when that is more than `max`. Computed before allocating.
    pub fn count(&self, max: u64) -> Result<u64, String> {
        let mut n: u64 = if self.draws() {
            u64::from(self.samples)
        } else {
            1
        };
        for o in &self.open {
            let k = match &o.spec {
                Spec::Values(v) => v.len() as u64,
                Spec::Steps { steps, .. } => u64::from(*steps),
                Spec::Draw { .. } => 1,
            };
            n = n.saturating_mul(k);
        }
        if n > max {
            return Err(format!(
                "the open values expand into {n} runs, more than the {max} allowed (fewer values, steps or samples)"
            ));
        }
        Ok(n)
    }

    /// Every point: grid axes in key order (first slowest), then the draws
    /// (the same `samples` draws at every grid point).
    pub fn points(&self) -> Result<Vec<Point>, String> {
        let n = self.count(MAX_POINTS)?;
        let mut grid: Vec<Vec<(String, String)>> = vec![Vec::new()];
        for o in &self.open {
            let values = match &o.spec {
                Spec::Values(v) => v.clone(),
                Spec::Steps { from, to, steps } => {
                    let (a, b) = (quantity(from)?, quantity(to)?);
                    (0..*steps)
                        .map(|i| {
                            a.lerp(&b, f64::from(i) / f64::from(steps - 1), false)
                                .toml()
                        })
                        .collect()
                }
                Spec::Draw { .. } => continue,
            };
            grid = grid
                .into_iter()
                .flat_map(|c| {
                    values.iter().map(move |v| {
                        let mut c = c.clone();
                        c.push((o.key.clone(), v.clone()));
                        c
                    })
                })
                .collect();
        }
        let draws = self.draw_values()?;
        let mut out = Vec::with_capacity(n as usize);
        for g in grid {
            for d in &draws {
                let mut sets = g.clone();
                sets.extend(d.iter().cloned());
                // Keep the keys in the order they were given.
                sets.sort_by_key(|(k, _)| self.open.iter().position(|o| &o.key == k));
                out.push(Point { sets });
            }
        }
        Ok(out)
    }

    /// `samples` seeded draws of every drawn key (one empty draw if none).
    fn draw_values(&self) -> Result<Vec<Vec<(String, String)>>, String> {
        if !self.draws() {
            return Ok(vec![Vec::new()]);
        }
        let mut rng = ChaCha8Rng::seed_from_u64(self.draw_seed);
        let mut out = Vec::with_capacity(self.samples as usize);
        for _ in 0..self.samples {
            let mut d = Vec::new();
            for o in &self.open {
                if let Spec::Draw { from, to, dist } = &o.spec {
                    let (a, b) = (quantity(from)?, quantity(to)?);
                    let u: f64 = rng.gen();
                    d.push((
                        o.key.clone(),
                        a.lerp(&b, u, *dist == Dist::LogUniform).toml(),
                    ));
                }
            }
            out.push(d);
        }
        Ok(out)
    }

    /// Checks every open key against the scenario at its range's ends and at
    /// each listed value, before anything runs.
    pub fn validate(&self, src: &Source, overrides: &[String]) -> Result<(), ScenarioError> {
        for o in &self.open {
            let probes: Vec<String> = match &o.spec {
                Spec::Values(v) => v.clone(),
                Spec::Steps { from, to, .. } | Spec::Draw { from, to, .. } => {
                    let (a, b) = (
                        quantity(from).map_err(|m| err(&o.at, &o.key, m))?,
                        quantity(to).map_err(|m| err(&o.at, &o.key, m))?,
                    );
                    vec![a.toml(), b.toml()]
                }
            };
            for v in probes {
                let mut sets = overrides.to_vec();
                sets.push(format!("{}={v}", o.key));
                src.set(&sets, None).map_err(|mut e| {
                    e.message = format!("open value {v} ({}): {}", o.at, e.message);
                    e
                })?;
            }
        }
        Ok(())
    }
}

/// A run with values left open: every point's result and each numeric
/// field's distribution over the points.
#[derive(Clone, Debug)]
pub struct OpenRun {
    pub space: Space,
    pub runs: Vec<(Point, Value)>,
}

impl OpenRun {
    /// Each numeric result field (dotted, as sweep columns) over the points.
    pub fn distributions(&self) -> BTreeMap<String, Distribution> {
        let mut cols: BTreeMap<String, Vec<f64>> = BTreeMap::new();
        for (_, r) in &self.runs {
            for (k, v) in crate::sweep::flatten(r) {
                if let Some(x) = v.as_f64().filter(|_| v.is_number() && k != "seed") {
                    cols.entry(k).or_default().push(x);
                }
            }
        }
        cols.into_iter()
            .filter_map(|(k, v)| Distribution::of(&v).map(|d| (k, d)))
            .collect()
    }

    /// `run --json` of a file with open values.
    pub fn to_json(&self) -> Value {
        let first = self.runs.first().map(|(_, r)| r);
        let open: Vec<Value> = self
            .space
            .open
            .iter()
            .map(|o| serde_json::json!({"key": o.key, "spec": o.spec.describe()}))
            .collect();
        let runs: Vec<Value> = self
            .runs
            .iter()
            .map(|(p, r)| {
                let values: serde_json::Map<String, Value> = p
                    .sets
                    .iter()
                    .map(|(k, v)| (k.clone(), crate::sweep::cell_of_setting(v)))
                    .collect();
                serde_json::json!({"values": values, "result": r})
            })
            .collect();
        serde_json::json!({
            "name": first.and_then(|r| r.get("name")).cloned().unwrap_or(Value::Null),
            "seed": first.and_then(|r| r.get("seed")).cloned().unwrap_or(Value::Null),
            "open": open,
            "samples": self.space.samples,
            "points": self.runs.len(),
            "integrity_ok": self.runs.iter().all(|(_, r)| r["integrity_ok"] != false),
            "distribution": self.distributions(),
            "runs": runs,
        })
    }
}

/// Runs every point of `space` (on all cores), each with `overrides` then
/// the point's values, and `seed` when given.
pub fn run_open(
    src: &Source,
    space: &Space,
    overrides: &[String],
    seed: Option<u64>,
) -> Result<OpenRun, ScenarioError> {
    space.validate(src, overrides)?;
    let points = space
        .points()
        .map_err(|m| err(&src.origin, OPEN_TABLE, m))?;
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let results = crate::pool::map(
        points.len(),
        threads,
        &|i| {
            let mut sets = overrides.to_vec();
            sets.extend(points[i].overrides());
            crate::run::run_point(src, &sets, seed)
        },
        &|| {},
    );
    let mut runs = Vec::with_capacity(points.len());
    for (p, r) in points.into_iter().zip(results) {
        runs.push((p, r?));
    }
    Ok(OpenRun {
        space: space.clone(),
        runs,
    })
}

/// A result field over the points of a space: its quantiles and every value.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Distribution {
    pub n: usize,
    pub min: f64,
    pub p10: f64,
    pub p50: f64,
    pub p90: f64,
    pub max: f64,
    pub mean: f64,
    /// Every value, ascending.
    #[serde(skip)]
    pub values: Vec<f64>,
}

/// A tolerance for reading a value against a number: within a factor
/// (`Factor(2.0)`: from half to twice) or within an absolute distance.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Tolerance {
    Factor(f64),
    Absolute(f64),
}

impl Tolerance {
    /// Whether `x` is within this tolerance of `target`.
    pub fn admits(self, x: f64, target: f64) -> bool {
        match self {
            Tolerance::Factor(f) => {
                if target == 0.0 || x == 0.0 {
                    x == target
                } else {
                    let r = x / target;
                    r > 0.0 && r <= f && r >= 1.0 / f
                }
            }
            Tolerance::Absolute(d) => (x - target).abs() <= d,
        }
    }
}

/// How a distribution reads against a number or a comparison: the same
/// answer at every point, or a conclusion that flips inside the range.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "reading")]
pub enum Reading {
    /// True at every point.
    Holds,
    /// False at every point.
    Fails,
    /// True at `yes` of `of` points: the open values decide it.
    Flips { yes: usize, of: usize },
}

impl Reading {
    /// The reading of a predicate's value at each point.
    pub fn of(answers: impl IntoIterator<Item = bool>) -> Reading {
        let (mut yes, mut of) = (0, 0);
        for a in answers {
            of += 1;
            yes += usize::from(a);
        }
        match yes {
            _ if of == 0 => Reading::Fails,
            y if y == of => Reading::Holds,
            0 => Reading::Fails,
            _ => Reading::Flips { yes, of },
        }
    }
}

impl Distribution {
    /// The distribution of `values` (NaNs left out); `None` when empty.
    pub fn of(values: &[f64]) -> Option<Distribution> {
        let mut v: Vec<f64> = values.iter().copied().filter(|x| !x.is_nan()).collect();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let q = |p: f64| {
            // Nearest rank: the value at or above fraction p of the points.
            let i = ((p * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1;
            v[i]
        };
        Some(Distribution {
            n: v.len(),
            min: v[0],
            p10: q(0.10),
            p50: q(0.50),
            p90: q(0.90),
            max: v[v.len() - 1],
            mean: v.iter().sum::<f64>() / v.len() as f64,
            values: v,
        })
    }

    /// One rule for reading a distribution against a number: the number
    /// holds where every point is within `tol` of it, fails where none is,
    /// and flips where some are.
    pub fn read(&self, target: f64, tol: Tolerance) -> Reading {
        Reading::of(self.values.iter().map(|&x| tol.admits(x, target)))
    }

    /// Where `x` falls among the values, as a percentile from 0 to 100: the
    /// share of points below it plus half of those equal to it (the mid-rank,
    /// so a value equal to every point is the 50th percentile).
    pub fn percentile_of(&self, x: f64) -> f64 {
        let below = self.values.iter().filter(|&&v| v < x).count() as f64;
        let equal = self.values.iter().filter(|&&v| v == x).count() as f64;
        100.0 * (below + equal / 2.0) / self.n as f64
    }

    /// Where `x` falls in the distribution, in the words a report uses:
    /// "below our minimum", "between our 10th and 90th percentile", ...
    pub fn place(&self, x: f64) -> &'static str {
        if self.min == self.max && x == self.min {
            "equal to ours at every point"
        } else if x < self.min {
            "below our minimum"
        } else if x > self.max {
            "above our maximum"
        } else if x < self.p10 {
            "between our minimum and 10th percentile"
        } else if x <= self.p90 {
            "between our 10th and 90th percentile"
        } else {
            "between our 90th percentile and maximum"
        }
    }
}

impl Reading {
    /// One rule for "A beats B" over a space: the two are read point by point
    /// (each pair ran with the same open values and seed), and A beats B at a
    /// point when it is better by more than `margin` (a share of B: 0.0 asks
    /// only for better). The claim holds when A wins at every point, fails
    /// when it wins at none, and flips otherwise, so a difference counts only
    /// when it is larger than the spread the open values cause.
    pub fn paired(a: &[f64], b: &[f64], higher_is_better: bool, margin: f64) -> Reading {
        Reading::of(a.iter().zip(b).map(|(&a, &b)| {
            if higher_is_better {
                a > b * (1.0 + margin)
            } else {
                a * (1.0 + margin) < b
            }
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: &str = "duration = \"2s\"\n[workload]\nrequests = 3\n";

    fn space(text: &str, cli: &[&str]) -> Result<Space, ScenarioError> {
        let cli: Vec<String> = cli.iter().map(|s| s.to_string()).collect();
        Space::of_source(&Source::text(text), &cli)
    }

    #[test]
    fn a_file_without_open_values_is_one_point() {
        let s = space(SMALL, &[]).unwrap();
        assert!(s.is_empty());
        assert_eq!(s.points().unwrap(), [Point { sets: vec![] }]);
    }

    #[test]
    fn steps_include_both_ends_in_the_ends_unit() {
        let s = space(
            &format!("{SMALL}[open]\n\"server.delack\" = {{ from = \"40ms\", to = \"200ms\", steps = 5 }}\n"),
            &[],
        )
        .unwrap();
        let got: Vec<String> = s
            .points()
            .unwrap()
            .iter()
            .map(|p| p.sets[0].1.clone())
            .collect();
        assert_eq!(
            got,
            [
                "\"40ms\"",
                "\"80ms\"",
                "\"120ms\"",
                "\"160ms\"",
                "\"200ms\""
            ]
        );
    }

    #[test]
    fn draws_are_seeded_shared_by_grid_points_and_inside_their_range() {
        let text = format!(
            "{SMALL}[open]\nsamples = 8\nworkload.think = {{ from = \"1ms\", to = \"100ms\", dist = \"log-uniform\" }}\n\
             \"client.send_policy\" = {{ values = [\"nagle\", \"nodelay\"] }}\n"
        );
        let s = space(&text, &[]).unwrap();
        let p = s.points().unwrap();
        assert_eq!(p.len(), 16);
        assert_eq!(p, space(&text, &[]).unwrap().points().unwrap(), "seeded");
        // Keys in the order given; the grid slowest; draws repeat per grid value.
        assert_eq!(p[0].sets[0].0, "workload.think");
        assert_eq!(p[0].sets[1].1, "\"nagle\"");
        assert_eq!(p[8].sets[1].1, "\"nodelay\"");
        assert_eq!(p[0].sets[0], p[8].sets[0]);
        for pt in &p {
            let d = parse_duration(pt.sets[0].1.trim_matches('"')).unwrap();
            assert!(
                d >= Duration::from_millis(1) && d <= Duration::from_millis(100),
                "{d:?}"
            );
        }
        let distinct: std::collections::BTreeSet<_> =
            p.iter().map(|x| x.sets[0].1.clone()).collect();
        assert_eq!(distinct.len(), 8);
    }

    #[test]
    fn lists_interpolate_element_by_element() {
        let s = space(SMALL, &["workload.response=[32700]..[33800]:3"]).unwrap();
        let got: Vec<String> = s
            .points()
            .unwrap()
            .iter()
            .map(|p| p.sets[0].1.clone())
            .collect();
        assert_eq!(got, ["[32700]", "[33250]", "[33800]"]);
        let s = space(SMALL, &["link.rate=1Mbps..2Mbps:2"]).unwrap();
        assert_eq!(s.points().unwrap()[1].sets[0].1, "\"2000000bps\"");
    }

    #[test]
    fn bad_specs_name_the_key_and_what_is_wrong() {
        let e = space(
            &format!("{SMALL}[open]\n\"server.delack\" = {{ from = \"40ms\", to = \"2KB\" }}\n"),
            &[],
        )
        .unwrap_err();
        assert_eq!(
            (e.key.as_str(), e.line),
            ("open.server.delack", Some(5)),
            "{e}"
        );
        assert!(e.message.contains("different units"), "{e}");
        let e = space(SMALL, &["a.b=1..2:1"]).unwrap_err();
        assert!(e.message.contains("steps"), "{e}");
        let e = space(SMALL, &["a.b=nonsense"]).unwrap_err();
        assert!(e.message.contains("A..B"), "{e}");
        let e = space(
            &format!("{SMALL}[open]\nx = {{ from = 1, to = 2, bins = 3 }}\n"),
            &[],
        )
        .unwrap_err();
        assert!(e.message.contains("bins"), "{e}");
        // A key the scenario does not know is caught before anything runs.
        let s = space(SMALL, &["client.sendpolicy=[\"nagle\"]"]).unwrap();
        let e = s.validate(&Source::text(SMALL), &[]).unwrap_err();
        assert_eq!(e.key, "client.sendpolicy", "{e}");
    }

    #[test]
    fn a_space_too_large_is_refused_before_it_allocates() {
        let s = space(SMALL, &["a=0..1:100000", "b=0..1:100000"]).unwrap();
        let e = s.points().unwrap_err();
        assert!(e.contains("10000000000 runs"), "{e}");
    }

    #[test]
    fn one_rule_reads_a_distribution_against_a_number() {
        let d = Distribution::of(&[4.8, 5.0, 200.0, 220.0]).unwrap();
        assert_eq!((d.min, d.p50, d.max), (4.8, 5.0, 220.0));
        assert_eq!(
            d.read(5.0, Tolerance::Factor(2.0)),
            Reading::Flips { yes: 2, of: 4 }
        );
        assert_eq!(d.read(1000.0, Tolerance::Factor(2.0)), Reading::Fails);
        assert_eq!(d.read(100.0, Tolerance::Absolute(200.0)), Reading::Holds);
        assert!(Distribution::of(&[f64::NAN]).is_none());
    }

    #[test]
    fn a_published_value_is_placed_in_our_distribution() {
        let d = Distribution::of(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0]).unwrap();
        assert_eq!(d.percentile_of(0.5), 0.0);
        assert_eq!(d.percentile_of(10.5), 100.0);
        assert_eq!(d.percentile_of(5.0), 45.0);
        assert_eq!(d.place(0.5), "below our minimum");
        assert_eq!(d.place(5.0), "between our 10th and 90th percentile");
        assert_eq!(d.place(9.5), "between our 90th percentile and maximum");
        assert_eq!(d.place(11.0), "above our maximum");
        let one = Distribution::of(&[4.0]).unwrap();
        assert_eq!(one.percentile_of(4.0), 50.0);
        assert_eq!(one.place(4.0), "equal to ours at every point");
    }

    #[test]
    fn a_comparison_holds_only_where_it_wins_at_every_point() {
        let a = [10.0, 20.0, 30.0];
        assert_eq!(
            Reading::paired(&a, &[5.0, 19.0, 29.0], true, 0.0),
            Reading::Holds
        );
        // Better at every point, but not by 10 % at the last two.
        assert_eq!(
            Reading::paired(&a, &[5.0, 19.0, 29.0], true, 0.1),
            Reading::Flips { yes: 1, of: 3 }
        );
        assert_eq!(
            Reading::paired(&a, &[11.0, 21.0, 31.0], false, 0.0),
            Reading::Holds
        );
        assert_eq!(Reading::paired(&a, &a, true, 0.0), Reading::Fails);
    }

    #[test]
    fn an_open_run_gives_each_fields_distribution() {
        let text =
            format!("{SMALL}[open]\n\"server.delack\" = {{ values = [\"40ms\", \"200ms\"] }}\n");
        let src = Source::text(&text);
        let v = crate::run::run_json(&src, &["client.send_policy=nagle".into()], None).unwrap();
        assert_eq!(v["points"], 2, "{v}");
        assert_eq!(v["runs"][1]["values"]["server.delack"], "200ms");
        let d = &v["distribution"]["completion_ms.max"];
        assert!(
            d["max"].as_f64().unwrap() >= d["min"].as_f64().unwrap(),
            "{v}"
        );
        assert_eq!(d["n"], 2);
        let one = crate::run::run_point(
            &src,
            &[
                "client.send_policy=nagle".into(),
                "server.delack=\"200ms\"".into(),
            ],
            None,
        )
        .unwrap();
        assert_eq!(
            v["runs"][1]["result"], one,
            "each point is the run of its values"
        );
    }
}
