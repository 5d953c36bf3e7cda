//! `sweep` as a library: the cross product of grid values, the file's open
//! values and seeds, each job run through the one run path into a row of
//! columns (swept keys, `seed`, every result field). The CLI writes the rows
//! (CSV, JSON lines, Parquet); Python turns them into a DataFrame.

use crate::source::Source;
use crate::space::{Open, Point, Space, Spec, MAX_POINTS};
use serde_json::Value;

/// One `--grid KEY=V1,V2,...`: a scenario key and the values it takes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Axis {
    pub key: String,
    /// Each value as `--set` takes it (TOML, or a bare string).
    pub values: Vec<String>,
}

/// Parses `KEY=V1,V2,...`, or `KEY=[V1, V2, ...]` (a TOML array) when a value
/// itself holds commas: `client.options=[["wscale","sack"],[]]`.
pub fn parse_axis(arg: &str) -> Result<Axis, String> {
    let (key, values) = arg
        .split_once('=')
        .ok_or_else(|| format!("--grid {arg:?}: expected KEY=V1,V2,..."))?;
    let key = key.trim();
    if key.is_empty() || key.contains(char::is_whitespace) {
        return Err(format!("--grid {arg:?}: {key:?} is not a scenario key"));
    }
    if key == "seed" {
        return Err("--grid seed: give the seeds with --seeds (e.g. --seeds 1..10)".into());
    }
    let values = values.trim();
    let list: Vec<String> = if values.starts_with('[') {
        let parsed: toml_edit::Value = values
            .parse()
            .map_err(|e| format!("--grid {key}: {values:?} is not a TOML array of values: {e}"))?;
        let toml_edit::Value::Array(a) = parsed else {
            return Err(format!("--grid {key}: {values:?} is not a TOML array"));
        };
        a.iter().map(|v| v.to_string().trim().to_string()).collect()
    } else {
        values.split(',').map(|v| v.trim().to_string()).collect()
    };
    if list.is_empty() {
        return Err(format!("--grid {key}: no values"));
    }
    if let Some(i) = list.iter().position(|v| v.is_empty()) {
        return Err(format!("--grid {key}: value {} is empty", i + 1));
    }
    Ok(Axis {
        key: key.to_string(),
        values: list,
    })
}

/// Parses `--seeds`: `1..10` (inclusive: ten seeds), `7`, or a comma list of
/// either (`1..3,10`).
pub fn parse_seeds(arg: &str) -> Result<Vec<u64>, String> {
    let num = |s: &str| {
        s.trim()
            .parse::<u64>()
            .map_err(|_| format!("--seeds {arg:?}: {:?} is not a seed (0 or more)", s.trim()))
    };
    let mut seeds = Vec::new();
    for part in arg.split(',') {
        match part.split_once("..") {
            Some((a, b)) => {
                let (a, b) = (num(a)?, num(b.strip_prefix('=').unwrap_or(b))?);
                if a > b {
                    return Err(format!("--seeds {arg:?}: {a}..{b} is empty (ranges are A..B, A <= B, both included)"));
                }
                if b - a >= 10_000_000 {
                    return Err(format!("--seeds {arg:?}: more than ten million seeds"));
                }
                seeds.extend(a..=b);
            }
            None => seeds.push(num(part)?),
        }
    }
    Ok(seeds)
}

/// One run of a sweep: its point's settings (grid keys, then the file's open
/// keys, in the order given) and the seed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Job {
    pub sets: Vec<(String, String)>,
    pub seed: u64,
}

/// The space a sweep expands: the file's `[open]` values and `--open`s with
/// each `--grid` axis as a list of values (a grid key replaces an open one).
pub fn space(src: &Source, axes: &[Axis], opens: &[String]) -> Result<Space, String> {
    let mut space = Space::of_source(src, opens).map_err(|e| e.to_string())?;
    for (i, a) in axes.iter().enumerate() {
        if axes[..i].iter().any(|b| b.key == a.key) {
            return Err(format!("--grid {}: the key is swept twice", a.key));
        }
    }
    space.open.retain(|o| !axes.iter().any(|a| a.key == o.key));
    let grid = axes.iter().map(|a| Open {
        key: a.key.clone(),
        spec: Spec::Values(a.values.clone()),
        at: format!("--grid {}", a.key),
    });
    space.open.splice(0..0, grid);
    Ok(space)
}

/// Every job: the space's points (first key slowest) and, for each, every
/// seed (fastest). Refused with the count when it is more than `MAX_POINTS`.
pub fn jobs(space: &Space, seeds: &[u64]) -> Result<Vec<Job>, String> {
    let points = space.count(MAX_POINTS)?;
    let total = points.saturating_mul(seeds.len() as u64);
    if total > MAX_POINTS {
        return Err(format!(
            "{points} combinations x {} seeds = {total} runs, more than the {MAX_POINTS} a sweep may ask for",
            seeds.len()
        ));
    }
    let points: Vec<Point> = space.points()?;
    Ok(points
        .into_iter()
        .flat_map(|p| {
            seeds.iter().map(move |&seed| Job {
                sets: p.sets.clone(),
                seed,
            })
        })
        .collect())
}

fn sets_of(base: &[String], job_sets: &[(String, String)]) -> Vec<String> {
    base.iter()
        .cloned()
        .chain(job_sets.iter().map(|(k, v)| format!("{k}={v}")))
        .collect()
}

/// Checks the scenario, every value of every axis and the ends of every
/// range, then the first combination, before anything runs: the error names
/// the key and value (and the combination) at fault.
pub fn validate(src: &Source, base: &[String], space: &Space, seeds: &[u64]) -> Result<(), String> {
    if seeds.is_empty() {
        return Err("--seeds: no seeds".into());
    }
    crate::source::check(src, base, None).map_err(|e| e.to_string())?;
    for o in &space.open {
        if let Spec::Values(values) = &o.spec {
            for v in values {
                crate::source::check(src, &sets_of(base, &[(o.key.clone(), v.clone())]), None)
                    .map_err(|e| format!("{}={v}: {}", o.at, e.message))?;
            }
        }
    }
    space.validate(src, base).map_err(|e| e.to_string())?;
    if let Some(first) = space.points()?.first() {
        crate::source::check(src, &sets_of(base, &first.sets), Some(seeds[0])).map_err(|e| {
            let combo: Vec<String> = first.sets.iter().map(|(k, v)| format!("{k}={v}")).collect();
            format!("the combination {}: {e}", combo.join(" "))
        })?;
    }
    Ok(())
}

/// A swept value as a column value: a TOML number, boolean or string as
/// itself, anything else (a list, a table, a bare word) as its text.
pub fn cell_of_setting(v: &str) -> Value {
    match v.parse::<toml_edit::Value>() {
        Ok(toml_edit::Value::Integer(i)) => Value::from(*i.value()),
        Ok(toml_edit::Value::Float(f)) => Value::from(*f.value()),
        Ok(toml_edit::Value::Boolean(b)) => Value::from(*b.value()),
        Ok(toml_edit::Value::String(s)) => Value::from(s.value().as_str()),
        _ => Value::from(v),
    }
}

/// One row: the swept keys, `seed`, then the result's fields.
pub type Row = Vec<(String, Value)>;

/// Runs one job into its row, through the one run path.
pub fn run_row(src: &Source, base: &[String], job: &Job) -> Result<Row, String> {
    let result = crate::run::run_point(src, &sets_of(base, &job.sets), Some(job.seed))
        .map_err(|e| e.to_string())?;
    let swept: Vec<String> = job.sets.iter().map(|(k, _)| k.clone()).collect();
    let mut row: Row = job
        .sets
        .iter()
        .map(|(k, v)| (k.clone(), cell_of_setting(v)))
        .collect();
    row.push(("seed".into(), Value::from(job.seed)));
    row.extend(result_columns(&result, &swept));
    Ok(row)
}

/// Runs every job on `threads` threads, calling `done()` after each; rows
/// come back in job order whatever the threads.
pub fn run(
    src: &Source,
    base: &[String],
    jobs: &[Job],
    threads: usize,
    done: &(dyn Fn() + Sync),
) -> Result<Vec<Row>, String> {
    crate::pool::map(jobs.len(), threads, &|i| run_row(src, base, &jobs[i]), done)
        .into_iter()
        .collect()
}

/// Runs every job on `threads` threads and hands each row to `emit` as soon
/// as the rows before it are done, in job order whatever the threads (see
/// [`crate::pool::for_each_in_order`]: only a bounded number of rows wait in
/// memory, however many jobs). The first failing run or `emit` stops the
/// sweep; the rows before it have been emitted.
pub fn run_each(
    src: &Source,
    base: &[String],
    jobs: &[Job],
    threads: usize,
    done: &(dyn Fn() + Sync),
    emit: &mut dyn FnMut(&Job, Row) -> Result<(), String>,
) -> Result<(), String> {
    let f = |i: usize| {
        let row = run_row(src, base, &jobs[i]);
        done();
        row
    };
    crate::pool::for_each_in_order(jobs.len(), threads, &f, &mut |i, row| emit(&jobs[i], row?))
}

/// Whether any seed changed a result, learnt one row at a time in job
/// order (the seed fastest, so a point's rows come together): the first row
/// of the current point is kept to compare its other seeds' rows with.
#[derive(Default)]
pub struct SeedEffect {
    seeds: std::collections::BTreeSet<u64>,
    first: Option<(Vec<(String, String)>, Row)>,
    differed: bool,
}

impl SeedEffect {
    /// Takes one job's row into account.
    pub fn see(&mut self, job: &Job, row: &Row) {
        self.seeds.insert(job.seed);
        if self.differed {
            return;
        }
        let mine: Row = row
            .iter()
            .filter(|(k, _)| k != "seed" && k != "name")
            .cloned()
            .collect();
        match &self.first {
            Some((sets, other)) if *sets == job.sets => self.differed = *other != mine,
            _ => self.first = Some((job.sets.clone(), mine)),
        }
    }

    /// More than one seed ran and none changed any result.
    pub fn none(&self) -> bool {
        self.seeds.len() >= 2 && !self.differed
    }
}

/// A JSON value as one row's columns: nested fields get dotted names
/// (`client.data_segments`), items of a list of tables their index
/// (`variants.0.name`); a list of plain values (`client.options`) stays one
/// column holding the list. One flow or many flatten the same way.
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
            Value::Array(a) if a.iter().any(|x| x.is_object() || x.is_array()) => {
                for (i, x) in a.iter().enumerate() {
                    go(&name(&i.to_string()), x, out);
                }
            }
            // An empty table has no fields; keep the column anyway.
            Value::Object(_) => out.push((prefix.to_string(), Value::Null)),
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

/// Whether every seed gave the same results at every point (nothing in the
/// scenario draws from the run's RNG: no loss, no jitter): then the extra
/// seeds only repeated runs, and the user should hear it.
pub fn seeds_made_no_difference(jobs: &[Job], rows: &[Row]) -> bool {
    if jobs.len() != rows.len() {
        return false;
    }
    let mut effect = SeedEffect::default();
    for (j, r) in jobs.iter().zip(rows) {
        effect.see(j, r);
    }
    effect.none()
}

/// The columns of all rows, in order of first appearance.
pub fn columns(rows: &[Row]) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    let mut cols = Vec::new();
    for row in rows {
        for (k, _) in row {
            if seen.insert(k.as_str()) {
                cols.push(k.clone());
            }
        }
    }
    cols
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lookup<'a>(row: &'a Row, col: &str) -> Option<&'a Value> {
        row.iter().find(|(k, _)| k == col).map(|(_, v)| v)
    }

    #[test]
    fn axes_split_on_commas_or_read_a_toml_array() {
        let a = parse_axis("client.send_policy=nagle, doupnik,nodelay").unwrap();
        assert_eq!(a.key, "client.send_policy");
        assert_eq!(a.values, ["nagle", "doupnik", "nodelay"]);
        let b = parse_axis(r#"client.options=[["wscale","sack"],[]]"#).unwrap();
        assert_eq!(b.values, [r#"["wscale","sack"]"#, "[]"]);
        for bad in ["nokey", "=1,2", "a=1,,2", "a=", "a=[1,", "a=[]", "seed=1,2"] {
            assert!(parse_axis(bad).is_err(), "{bad}");
        }
        assert!(parse_axis("a=1,,2")
            .unwrap_err()
            .contains("value 2 is empty"));
    }

    #[test]
    fn seed_ranges_are_inclusive() {
        assert_eq!(parse_seeds("1..10").unwrap(), (1..=10).collect::<Vec<_>>());
        assert_eq!(parse_seeds("3").unwrap(), [3]);
        assert_eq!(parse_seeds("1..2,7,9..=9").unwrap(), [1, 2, 7, 9]);
        for bad in ["", "a", "5..1", "1...3", "-1", "1..x"] {
            assert!(parse_seeds(bad).is_err(), "{bad}");
        }
    }

    const SMALL: &str = "duration = \"2s\"\n[workload]\nrequests = 3\n";

    fn grid(axes: &[&str]) -> Space {
        let axes: Vec<Axis> = axes.iter().map(|a| parse_axis(a).unwrap()).collect();
        space(&Source::text(SMALL), &axes, &[]).unwrap()
    }

    #[test]
    fn rows_stream_in_job_order_before_the_sweep_ends() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let src = Source::text(SMALL);
        let seeds: Vec<u64> = (1..=100).collect();
        let j = jobs(&grid(&["client.send_policy=nagle"]), &seeds).unwrap();
        let done = AtomicUsize::new(0);
        let mut at_first = None;
        let mut order = Vec::new();
        run_each(
            &src,
            &[],
            &j,
            1,
            &|| {
                done.fetch_add(1, Ordering::SeqCst);
            },
            &mut |job, row| {
                at_first.get_or_insert(done.load(Ordering::SeqCst));
                order.push((job.seed, lookup(&row, "seed").cloned()));
                Ok(())
            },
        )
        .unwrap();
        // The first row was out while most runs had not even started.
        let first = at_first.unwrap();
        assert!(first <= 17, "{first} of 100 runs done before the first row");
        let want: Vec<(u64, Option<Value>)> =
            seeds.iter().map(|&s| (s, Some(Value::from(s)))).collect();
        assert_eq!(order, want);
        // A failing emit stops the sweep with its error.
        let e = run_each(&src, &[], &j, 2, &|| {}, &mut |job, _| {
            if job.seed == 5 {
                Err("disk full".into())
            } else {
                Ok(())
            }
        });
        assert_eq!(e, Err("disk full".to_string()));
    }

    #[test]
    fn the_cross_product_runs_seeds_fastest() {
        let j = jobs(&grid(&["a=1,2", "b=x,y,z"]), &[5, 6]).unwrap();
        assert_eq!(j.len(), 12);
        assert_eq!(
            j[0].sets,
            [("a".into(), "1".into()), ("b".into(), "x".into())]
        );
        assert_eq!((j[1].seed, j[2].seed), (6, 5));
        assert_eq!(j[2].sets[1].1, "y");
        assert_eq!(j[11].sets[0].1, "2");
        assert_eq!(jobs(&grid(&[]), &[1, 2]).unwrap().len(), 2);
    }

    #[test]
    fn a_grid_too_large_is_refused_before_it_allocates() {
        let thousand: Vec<String> = (0..1000).map(|i| i.to_string()).collect();
        let axis = |k: &str| format!("{k}={}", thousand.join(","));
        let (a, b, c) = (axis("a"), axis("b"), axis("c"));
        let e = jobs(&grid(&[&a, &b, &c]), &[1]).unwrap_err();
        assert!(e.contains("1000000000 runs"), "{e}");
        let e = jobs(&grid(&[&a]), &(0..2000).collect::<Vec<_>>()).unwrap_err();
        assert!(e.contains("x 2000 seeds"), "{e}");
    }

    #[test]
    fn validation_names_the_bad_key_and_value() {
        let src = Source::text(SMALL);
        let e = validate(&src, &[], &grid(&["client.sendpolicy=nagle"]), &[1]).unwrap_err();
        assert!(e.contains("client.sendpolicy"), "{e}");
        let e = validate(
            &src,
            &[],
            &grid(&["client.send_policy=nagle,fastest"]),
            &[1],
        )
        .unwrap_err();
        assert!(e.contains("client.send_policy=fastest"), "{e}");
        let twice = [parse_axis("a.b=1").unwrap(), parse_axis("a.b=2").unwrap()];
        assert!(space(&src, &twice, &[]).unwrap_err().contains("twice"));
        let good = grid(&["client.send_policy=nagle,nodelay"]);
        validate(&src, &[], &good, &[1]).unwrap();
        assert!(validate(&src, &[], &good, &[]).is_err());
    }

    #[test]
    fn rows_come_back_in_job_order_whatever_the_threads() {
        let src = Source::text(SMALL);
        let j = jobs(
            &grid(&[
                "client.send_policy=nagle,nodelay",
                "server.delack=40ms,200ms",
            ]),
            &[1, 2, 3],
        )
        .unwrap();
        let one = run(&src, &[], &j, 1, &|| {}).unwrap();
        let four = run(&src, &[], &j, 4, &|| {}).unwrap();
        assert_eq!(one, four);
        assert_eq!(one.len(), 12);
        assert_eq!(
            one[0][0],
            ("client.send_policy".into(), Value::from("nagle"))
        );
        assert_eq!(one[0][1], ("server.delack".into(), Value::from("40ms")));
        assert_eq!(one[0][2], ("seed".into(), Value::from(1)));
        assert_eq!(lookup(&one[4], "seed"), Some(&Value::from(2)));
        assert!(lookup(&one[0], "transactions_per_s").is_some());
        assert!(lookup(&one[0], "client.data_segments").is_some());
        // The 200 ms delayed ACK shows in the completion time under Nagle.
        let p50 = |r: &Row| {
            lookup(r, "completion_ms.p50")
                .and_then(Value::as_f64)
                .unwrap()
        };
        assert!(
            p50(&one[3]) >= p50(&one[0]),
            "{} {}",
            p50(&one[3]),
            p50(&one[0])
        );
    }

    #[test]
    fn a_sweep_says_when_its_seeds_changed_nothing() {
        let src = Source::text(SMALL);
        let j = jobs(&grid(&["client.send_policy=nagle,nodelay"]), &[1, 2]).unwrap();
        let rows = run(&src, &[], &j, 2, &|| {}).unwrap();
        assert!(seeds_made_no_difference(&j, &rows));
        let lossy = Source::text(&format!("{SMALL}[link]\nloss = 0.2\n"));
        let rows = run(&lossy, &[], &j, 2, &|| {}).unwrap();
        assert!(!seeds_made_no_difference(&j, &rows));
        let one = jobs(&grid(&[]), &[1]).unwrap();
        let rows = run(&src, &[], &one, 1, &|| {}).unwrap();
        assert!(
            !seeds_made_no_difference(&one, &rows),
            "one seed: nothing to say"
        );
    }

    #[test]
    fn the_files_open_values_are_swept_too() {
        let text =
            format!("{SMALL}[open]\n\"server.delack\" = {{ values = [\"40ms\", \"200ms\"] }}\n");
        let src = Source::text(&text);
        let axes = [parse_axis("client.send_policy=nagle,nodelay").unwrap()];
        let s = space(&src, &axes, &[]).unwrap();
        let j = jobs(&s, &[1]).unwrap();
        assert_eq!(j.len(), 4);
        assert_eq!(
            j[1].sets,
            [
                ("client.send_policy".into(), "nagle".into()),
                ("server.delack".into(), "\"200ms\"".into())
            ]
        );
        let rows = run(&src, &[], &j, 2, &|| {}).unwrap();
        assert_eq!(
            lookup(&rows[1], "server.delack"),
            Some(&Value::from("200ms"))
        );
        assert!(
            lookup(&rows[1], "points").is_none(),
            "one run per row, not an expansion"
        );
    }

    #[test]
    fn flatten_names_nested_fields_and_keeps_plain_lists_whole() {
        let v = serde_json::json!({"a": 1, "b": {"c": true, "d": [{"e": "x"}, {"e": "y"}]}, "f": [], "g": null, "o": ["sack", "wscale"]});
        let got: Vec<String> = flatten(&v).into_iter().map(|(k, _)| k).collect();
        assert_eq!(got, ["a", "b.c", "b.d.0.e", "b.d.1.e", "f", "g", "o"]);
        assert_eq!(flatten(&v)[6].1, serde_json::json!(["sack", "wscale"]));
        let cols = result_columns(
            &serde_json::json!({"seed": 1, "client": {"mss": 1448}}),
            &["client.mss".into()],
        );
        assert_eq!(cols, [("result.client.mss".to_string(), Value::from(1448))]);
    }
}
