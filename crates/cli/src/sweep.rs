//! `tinygram sweep`: the cross product of `--grid` values and `--seeds`, run
//! on all cores, written as one row per run (CSV, JSON lines or Parquet).

use crate::api::{self, Source};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::Value;
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

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

/// One run of a sweep: the swept keys' values (in `--grid` order) and the seed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Job {
    pub sets: Vec<(String, String)>,
    pub seed: u64,
}

/// The cross product, first axis slowest and seeds fastest: the output order.
pub fn jobs(axes: &[Axis], seeds: &[u64]) -> Vec<Job> {
    let mut combos: Vec<Vec<(String, String)>> = vec![Vec::new()];
    for axis in axes {
        combos = combos
            .into_iter()
            .flat_map(|c| {
                axis.values.iter().map(move |v| {
                    let mut c = c.clone();
                    c.push((axis.key.clone(), v.clone()));
                    c
                })
            })
            .collect();
    }
    combos
        .into_iter()
        .flat_map(|sets| {
            seeds.iter().map(move |&seed| Job {
                sets: sets.clone(),
                seed,
            })
        })
        .collect()
}

fn sets_of(base: &[String], job_sets: &[(String, String)]) -> Vec<String> {
    base.iter()
        .cloned()
        .chain(job_sets.iter().map(|(k, v)| format!("{k}={v}")))
        .collect()
}

/// Checks every value of every axis, then every combination, before anything
/// runs: the error names the key and value (and the combination) at fault.
pub fn validate(src: &Source, base: &[String], axes: &[Axis], seeds: &[u64]) -> Result<(), String> {
    if seeds.is_empty() {
        return Err("--seeds: no seeds".into());
    }
    for (i, a) in axes.iter().enumerate() {
        if axes[..i].iter().any(|b| b.key == a.key) {
            return Err(format!("--grid {}: the key is swept twice", a.key));
        }
    }
    for a in axes {
        for v in &a.values {
            api::check(src, &sets_of(base, &[(a.key.clone(), v.clone())]), None)
                .map_err(|e| format!("--grid {}={v}: {}", a.key, e.message))?;
        }
    }
    for job in jobs(axes, &seeds[..1]) {
        api::check(src, &sets_of(base, &job.sets), Some(job.seed)).map_err(|e| {
            let combo: Vec<String> = job.sets.iter().map(|(k, v)| format!("{k}={v}")).collect();
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

/// Runs one job into its row.
pub fn run_row(src: &Source, base: &[String], job: &Job) -> Result<Row, String> {
    let result =
        api::run_json(src, &sets_of(base, &job.sets), Some(job.seed)).map_err(|e| e.to_string())?;
    let swept: Vec<String> = job.sets.iter().map(|(k, _)| k.clone()).collect();
    let mut row: Row = job
        .sets
        .iter()
        .map(|(k, v)| (k.clone(), cell_of_setting(v)))
        .collect();
    row.push(("seed".into(), Value::from(job.seed)));
    row.extend(api::result_columns(&result, &swept));
    Ok(row)
}

/// Runs every job on `threads` threads; rows come back in job order.
pub fn run(
    src: &Source,
    base: &[String],
    jobs: &[Job],
    threads: usize,
    progress: bool,
) -> Result<Vec<Row>, String> {
    let bar = if progress {
        let b = ProgressBar::new(jobs.len() as u64);
        b.set_style(
            ProgressStyle::with_template(
                "{spinner} sweep [{wide_bar}] {pos}/{len} runs {elapsed} (eta {eta})",
            )
            .expect("valid template"),
        );
        b
    } else {
        ProgressBar::hidden()
    };
    let next = AtomicUsize::new(0);
    let rows: Vec<Mutex<Option<Result<Row, String>>>> =
        jobs.iter().map(|_| Mutex::new(None)).collect();
    std::thread::scope(|s| {
        for _ in 0..threads.clamp(1, jobs.len().max(1)) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(job) = jobs.get(i) else { break };
                let row = run_row(src, base, job);
                *rows[i].lock().expect("row slot") = Some(row);
                bar.inc(1);
            });
        }
    });
    bar.finish_and_clear();
    rows.into_iter()
        .map(|m| m.into_inner().expect("row slot").expect("every job ran"))
        .collect()
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

/// Output formats, chosen by the file's extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Csv,
    Jsonl,
    Parquet,
}

impl Format {
    /// The format of `path` from its extension.
    pub fn of(path: &Path) -> Result<Format, String> {
        match path.extension().and_then(|e| e.to_str()) {
            Some("csv") => Ok(Format::Csv),
            Some("jsonl") | Some("ndjson") => Ok(Format::Jsonl),
            Some("parquet") => Ok(Format::Parquet),
            _ => Err(format!(
                "--out {}: unknown format (the file name must end in .csv, .jsonl or .parquet)",
                path.display()
            )),
        }
    }
}

/// Writes the rows to `path` in its format.
pub fn write(path: &Path, rows: &[Row]) -> Result<(), String> {
    let format = Format::of(path)?;
    let file = std::fs::File::create(path)
        .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    let fail = |e: String| format!("cannot write {}: {e}", path.display());
    match format {
        Format::Csv => write_csv(file, rows).map_err(fail),
        Format::Jsonl => write_jsonl(file, rows).map_err(fail),
        Format::Parquet => write_parquet(file, rows).map_err(fail),
    }
}

fn lookup<'a>(row: &'a Row, col: &str) -> Option<&'a Value> {
    row.iter().find(|(k, _)| k == col).map(|(_, v)| v)
}

/// A scalar as CSV text: null is an empty cell.
fn text(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// CSV with a header of every column; a run without a column leaves it empty.
pub fn write_csv(out: impl Write, rows: &[Row]) -> Result<(), String> {
    let cols = columns(rows);
    let mut w = csv::Writer::from_writer(out);
    w.write_record(&cols).map_err(|e| e.to_string())?;
    for row in rows {
        let rec: Vec<String> = cols
            .iter()
            .map(|c| lookup(row, c).map(text).unwrap_or_default())
            .collect();
        w.write_record(&rec).map_err(|e| e.to_string())?;
    }
    w.flush().map_err(|e| e.to_string())
}

/// One JSON object per line, keys in column order.
pub fn write_jsonl(out: impl Write, rows: &[Row]) -> Result<(), String> {
    let mut w = std::io::BufWriter::new(out);
    for row in rows {
        let mut line = String::from("{");
        for (i, (k, v)) in row.iter().enumerate() {
            if i > 0 {
                line.push(',');
            }
            line += &serde_json::to_string(k).map_err(|e| e.to_string())?;
            line.push(':');
            line += &serde_json::to_string(v).map_err(|e| e.to_string())?;
        }
        line += "}\n";
        w.write_all(line.as_bytes()).map_err(|e| e.to_string())?;
    }
    w.flush().map_err(|e| e.to_string())
}

/// A column's Parquet type, from its values (nulls aside).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ColType {
    Bool,
    Int,
    Double,
    Text,
}

fn col_type<'a>(values: impl Iterator<Item = Option<&'a Value>>) -> ColType {
    let mut t: Option<ColType> = None;
    for v in values.flatten() {
        let this = match v {
            Value::Null => continue,
            Value::Bool(_) => ColType::Bool,
            Value::Number(n) if n.as_i64().is_some() => ColType::Int,
            Value::Number(_) => ColType::Double,
            _ => ColType::Text,
        };
        t = Some(match (t, this) {
            (None, x) => x,
            (Some(a), b) if a == b => a,
            (Some(ColType::Int), ColType::Double) | (Some(ColType::Double), ColType::Int) => {
                ColType::Double
            }
            _ => ColType::Text,
        });
    }
    t.unwrap_or(ColType::Text)
}

/// Parquet: one row group, every column optional (a run may lack a field),
/// typed from its values: boolean, int64, double, or UTF-8 text.
pub fn write_parquet(out: std::fs::File, rows: &[Row]) -> Result<(), String> {
    use parquet::basic::{LogicalType, Repetition, Type as Physical};
    use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DoubleType, Int64Type};
    use parquet::file::properties::WriterProperties;
    use parquet::file::writer::SerializedFileWriter;
    use parquet::schema::types::Type;
    use std::sync::Arc;

    let e = |e: parquet::errors::ParquetError| e.to_string();
    let cols = columns(rows);
    let types: Vec<ColType> = cols
        .iter()
        .map(|c| col_type(rows.iter().map(|r| lookup(r, c))))
        .collect();
    let mut fields = Vec::with_capacity(cols.len());
    for (c, t) in cols.iter().zip(&types) {
        let (phys, logical) = match t {
            ColType::Bool => (Physical::BOOLEAN, None),
            ColType::Int => (Physical::INT64, None),
            ColType::Double => (Physical::DOUBLE, None),
            ColType::Text => (Physical::BYTE_ARRAY, Some(LogicalType::String)),
        };
        fields.push(Arc::new(
            Type::primitive_type_builder(c, phys)
                .with_repetition(Repetition::OPTIONAL)
                .with_logical_type(logical)
                .build()
                .map_err(e)?,
        ));
    }
    let schema = Arc::new(
        Type::group_type_builder("sweep")
            .with_fields(fields)
            .build()
            .map_err(e)?,
    );
    let mut w =
        SerializedFileWriter::new(out, schema, Arc::new(WriterProperties::builder().build()))
            .map_err(e)?;
    let mut rg = w.next_row_group().map_err(e)?;
    let mut i = 0;
    while let Some(mut col) = rg.next_column().map_err(e)? {
        let name = &cols[i];
        let vals: Vec<Option<&Value>> = rows
            .iter()
            .map(|r| lookup(r, name).filter(|v| !v.is_null()))
            .collect();
        let defs: Vec<i16> = vals.iter().map(|v| i16::from(v.is_some())).collect();
        let present = vals.iter().flatten();
        match types[i] {
            ColType::Bool => {
                let data: Vec<bool> = present.map(|v| v.as_bool().unwrap_or(false)).collect();
                col.typed::<BoolType>()
                    .write_batch(&data, Some(&defs), None)
            }
            ColType::Int => {
                let data: Vec<i64> = present.map(|v| v.as_i64().unwrap_or(0)).collect();
                col.typed::<Int64Type>()
                    .write_batch(&data, Some(&defs), None)
            }
            ColType::Double => {
                let data: Vec<f64> = present.map(|v| v.as_f64().unwrap_or(f64::NAN)).collect();
                col.typed::<DoubleType>()
                    .write_batch(&data, Some(&defs), None)
            }
            ColType::Text => {
                let data: Vec<ByteArray> =
                    present.map(|v| ByteArray::from(text(v).as_str())).collect();
                col.typed::<ByteArrayType>()
                    .write_batch(&data, Some(&defs), None)
            }
        }
        .map_err(e)?;
        col.close().map_err(e)?;
        i += 1;
    }
    rg.close().map_err(e)?;
    w.close().map_err(e)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn the_cross_product_runs_seeds_fastest() {
        let axes = [parse_axis("a=1,2").unwrap(), parse_axis("b=x,y,z").unwrap()];
        let j = jobs(&axes, &[5, 6]);
        assert_eq!(j.len(), 12);
        assert_eq!(
            j[0].sets,
            [("a".into(), "1".into()), ("b".into(), "x".into())]
        );
        assert_eq!((j[1].seed, j[2].seed), (6, 5));
        assert_eq!(j[2].sets[1].1, "y");
        assert_eq!(j[11].sets[0].1, "2");
        assert_eq!(jobs(&[], &[1, 2]).len(), 2);
    }

    const SMALL: &str = "duration = \"2s\"\n[workload]\nrequests = 3\n";

    #[test]
    fn validation_names_the_bad_key_and_value() {
        let src = Source::text(SMALL);
        let bad = [parse_axis("client.sendpolicy=nagle").unwrap()];
        let e = validate(&src, &[], &bad, &[1]).unwrap_err();
        assert!(e.contains("client.sendpolicy"), "{e}");
        let bad = [parse_axis("client.send_policy=nagle,fastest").unwrap()];
        let e = validate(&src, &[], &bad, &[1]).unwrap_err();
        assert!(e.contains("client.send_policy=fastest"), "{e}");
        let twice = [parse_axis("a.b=1").unwrap(), parse_axis("a.b=2").unwrap()];
        assert!(validate(&src, &[], &twice, &[1])
            .unwrap_err()
            .contains("twice"));
        let good = [parse_axis("client.send_policy=nagle,nodelay").unwrap()];
        validate(&src, &[], &good, &[1]).unwrap();
        assert!(validate(&src, &[], &good, &[]).is_err());
    }

    #[test]
    fn rows_come_back_in_job_order_whatever_the_threads() {
        let src = Source::text(SMALL);
        let axes = [
            parse_axis("client.send_policy=nagle,nodelay").unwrap(),
            parse_axis("server.delack=40ms,200ms").unwrap(),
        ];
        let j = jobs(&axes, &[1, 2, 3]);
        let one = run(&src, &[], &j, 1, false).unwrap();
        let four = run(&src, &[], &j, 4, false).unwrap();
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
    fn writes_every_format_with_the_same_columns() {
        let rows: Vec<Row> = vec![
            vec![
                ("k".into(), Value::from("a,b")),
                ("n".into(), Value::from(1)),
                ("x".into(), Value::from(0.5)),
            ],
            vec![
                ("k".into(), Value::from("c")),
                ("n".into(), Value::from(2)),
                ("b".into(), Value::from(true)),
            ],
        ];
        let mut csv = Vec::new();
        write_csv(&mut csv, &rows).unwrap();
        assert_eq!(
            String::from_utf8(csv).unwrap(),
            "k,n,x,b\n\"a,b\",1,0.5,\n c,2,,true\n".replace("\n c", "\nc")
        );
        let mut jl = Vec::new();
        write_jsonl(&mut jl, &rows).unwrap();
        let jl = String::from_utf8(jl).unwrap();
        assert_eq!(jl.lines().next().unwrap(), r#"{"k":"a,b","n":1,"x":0.5}"#);
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.parquet");
        write(&p, &rows).unwrap();
        use parquet::file::reader::{FileReader, SerializedFileReader};
        use parquet::record::RowAccessor;
        let reader = SerializedFileReader::new(std::fs::File::open(&p).unwrap()).unwrap();
        let meta = reader.metadata().file_metadata();
        assert_eq!(meta.num_rows(), 2);
        let names: Vec<&str> = meta
            .schema_descr()
            .columns()
            .iter()
            .map(|c| c.name())
            .collect();
        assert_eq!(names, ["k", "n", "x", "b"]);
        let first = reader.get_row_iter(None).unwrap().next().unwrap().unwrap();
        assert_eq!(first.get_string(0).unwrap(), "a,b");
        assert_eq!(first.get_long(1).unwrap(), 1);
        assert!(Format::of(Path::new("r.txt")).is_err());
        assert_eq!(
            col_type([Some(&Value::from(1)), Some(&Value::from(1.5))].into_iter()),
            ColType::Double
        );
        assert_eq!(
            col_type([Some(&Value::from(1)), None, Some(&Value::Null)].into_iter()),
            ColType::Int
        );
        assert_eq!(
            col_type([Some(&Value::from(true)), Some(&Value::from(1))].into_iter()),
            ColType::Text
        );
    }
}
