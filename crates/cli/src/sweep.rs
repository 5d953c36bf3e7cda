//! `tinygram sweep`'s output: the rows of the run library's sweep
//! (`tinygram_lab::sweep`) written as CSV, JSON lines or Parquet, and its
//! progress bar.

use indicatif::{ProgressBar, ProgressStyle};
use serde_json::Value;
use std::io::Write;
use std::path::Path;
use tinygram_lab::sweep::Job;
pub use tinygram_lab::sweep::{columns, Row};
use tinygram_lab::Source;

/// Runs every job on `threads` threads with a progress bar on stderr;
/// rows come back in job order.
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
    let rows = tinygram_lab::sweep::run(src, base, jobs, threads, &|| bar.inc(1));
    bar.finish_and_clear();
    rows
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
