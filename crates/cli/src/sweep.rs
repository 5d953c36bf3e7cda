//! `tinygram sweep`'s output: the rows of the run library's sweep
//! (`tinygram_lab::sweep`) written as CSV, JSON lines or Parquet as they
//! finish, in job order, and its progress bar.
//!
//! Rows stream: each is written once the rows before it are (a reorder
//! buffer of a few rows per thread), so a sweep of a million runs holds a
//! few rows, not a million. CSV and Parquet need their columns up front:
//! they take them from the first row (Parquet: the first row group of
//! [`GROUP_ROWS`]). The columns of every row come from one scenario's world
//! and are the same; should a later row have a column the header lacks, it
//! is left out of that file and named in a note at the end (JSON lines keep
//! every field of every row).

use indicatif::{ProgressBar, ProgressStyle};
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
pub use tinygram_lab::sweep::{columns, Row};
use tinygram_lab::sweep::{Job, SeedEffect};
use tinygram_lab::Source;

/// Rows per Parquet row group (the first one fixes the columns and types).
pub const GROUP_ROWS: usize = 1024;

/// What a finished sweep wrote.
pub struct Written {
    pub rows: usize,
    /// Every seed gave the same results at every point.
    pub seeds_changed_nothing: bool,
    /// Notes for stderr: columns a later row had that the file could not take.
    pub notes: Vec<String>,
}

/// Runs every job on `threads` threads with a progress bar on stderr,
/// writing each row to `out` as soon as the rows before it are written.
pub fn run(
    src: &Source,
    base: &[String],
    jobs: &[Job],
    threads: usize,
    progress: bool,
    out: &Path,
) -> Result<Written, String> {
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
    let mut sink = Sink::create(out)?;
    let mut effect = SeedEffect::default();
    let ran =
        tinygram_lab::sweep::run_each(src, base, jobs, threads, &|| bar.inc(1), &mut |j, row| {
            effect.see(j, &row);
            sink.row(row)
        });
    bar.finish_and_clear();
    let rows = sink.rows;
    match ran {
        Ok(()) => Ok(Written {
            rows,
            seeds_changed_nothing: effect.none(),
            notes: sink.finish()?,
        }),
        Err(e) => {
            let kept = sink.finish().map(|_| rows).unwrap_or(0);
            Err(format!(
                "{e} ({kept} rows before it are in {})",
                out.display()
            ))
        }
    }
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

/// Rows written to one file in its format, one at a time.
pub struct Sink {
    path: std::path::PathBuf,
    kind: Kind,
    rows: usize,
    /// Columns a row had that the file's header lacks: name -> first row (0-based).
    dropped: BTreeMap<String, usize>,
}

enum Kind {
    Csv {
        w: csv::Writer<Box<dyn Write>>,
        cols: Option<Vec<String>>,
    },
    Jsonl(std::io::BufWriter<Box<dyn Write>>),
    Parquet(ParquetSink),
}

impl Sink {
    /// A sink writing `path` in the format its extension names.
    pub fn create(path: &Path) -> Result<Sink, String> {
        let format = Format::of(path)?;
        let file = std::fs::File::create(path)
            .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
        let kind = match format {
            Format::Csv => Kind::Csv {
                w: csv::Writer::from_writer(Box::new(std::io::BufWriter::new(file))),
                cols: None,
            },
            Format::Jsonl => Kind::Jsonl(std::io::BufWriter::new(Box::new(file))),
            Format::Parquet => Kind::Parquet(ParquetSink::new(file)),
        };
        Ok(Sink::of(path, kind))
    }

    fn of(path: &Path, kind: Kind) -> Sink {
        Sink {
            path: path.to_path_buf(),
            kind,
            rows: 0,
            dropped: BTreeMap::new(),
        }
    }

    /// Writes one row.
    pub fn row(&mut self, row: Row) -> Result<(), String> {
        let index = self.rows;
        let fail = |e: String| format!("cannot write {}: {e}", self.path.display());
        match &mut self.kind {
            Kind::Csv { w, cols } => {
                let cols = match cols {
                    Some(c) => c,
                    None => {
                        let c: Vec<String> = row.iter().map(|(k, _)| k.clone()).collect();
                        w.write_record(&c).map_err(|e| fail(e.to_string()))?;
                        cols.insert(c)
                    }
                };
                note_new_columns(&mut self.dropped, index, cols, &row);
                let rec: Vec<String> = cols
                    .iter()
                    .map(|c| lookup(&row, c).map(text).unwrap_or_default())
                    .collect();
                w.write_record(&rec).map_err(|e| fail(e.to_string()))?;
            }
            Kind::Jsonl(w) => w
                .write_all(json_line(&row)?.as_bytes())
                .map_err(|e| fail(e.to_string()))?,
            Kind::Parquet(p) => p.row(row, index, &mut self.dropped).map_err(fail)?,
        }
        self.rows += 1;
        Ok(())
    }

    /// Flushes the file; the notes say which later columns it could not take.
    pub fn finish(self) -> Result<Vec<String>, String> {
        let Sink {
            path,
            kind,
            mut dropped,
            ..
        } = self;
        let fail = |e: String| format!("cannot write {}: {e}", path.display());
        match kind {
            Kind::Csv { mut w, .. } => w.flush().map_err(|e| fail(e.to_string()))?,
            Kind::Jsonl(mut w) => w.flush().map_err(|e| fail(e.to_string()))?,
            Kind::Parquet(p) => p.finish(&mut dropped).map_err(fail)?,
        }
        Ok(dropped
            .iter()
            .map(|(c, row)| {
                format!(
                    "column {c} first appeared in row {} after {}'s columns were fixed, so it is not in that file (.jsonl keeps every field)",
                    row + 1,
                    path.display()
                )
            })
            .collect())
    }
}

/// Records the columns of `row` (row `index`) that `cols` lacks.
fn note_new_columns(
    dropped: &mut BTreeMap<String, usize>,
    index: usize,
    cols: &[String],
    row: &Row,
) {
    for (k, _) in row {
        if !cols.contains(k) {
            dropped.entry(k.clone()).or_insert(index);
        }
    }
}

/// Writes `rows` to `path` in its format (a sweep's rows all at once).
pub fn write(path: &Path, rows: &[Row]) -> Result<Vec<String>, String> {
    let mut sink = Sink::create(path)?;
    for r in rows {
        sink.row(r.clone())?;
    }
    sink.finish()
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

/// One row as a JSON object on one line, keys in column order.
fn json_line(row: &Row) -> Result<String, String> {
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
    Ok(line)
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

/// Parquet written a row group at a time: every column optional (a run may
/// lack a field), typed from the first group's values: boolean, int64,
/// double, or UTF-8 text. A later value of another type is written as the
/// column's type allows (an integer in a double column), else left null.
pub struct ParquetSink {
    file: Option<std::fs::File>,
    writer: Option<parquet::file::writer::SerializedFileWriter<std::fs::File>>,
    cols: Vec<String>,
    types: Vec<ColType>,
    group: Vec<Row>,
    /// Row index of the group's first row.
    first: usize,
}

impl ParquetSink {
    fn new(file: std::fs::File) -> ParquetSink {
        ParquetSink {
            file: Some(file),
            writer: None,
            cols: Vec::new(),
            types: Vec::new(),
            group: Vec::new(),
            first: 0,
        }
    }

    fn row(
        &mut self,
        row: Row,
        index: usize,
        dropped: &mut BTreeMap<String, usize>,
    ) -> Result<(), String> {
        if self.group.is_empty() {
            self.first = index;
        }
        self.group.push(row);
        if self.group.len() >= GROUP_ROWS {
            self.flush(dropped)?;
        }
        Ok(())
    }

    /// Writes the rows held as one row group; the first fixes the schema.
    fn flush(&mut self, dropped: &mut BTreeMap<String, usize>) -> Result<(), String> {
        use parquet::basic::{LogicalType, Repetition, Type as Physical};
        use parquet::file::properties::WriterProperties;
        use parquet::file::writer::SerializedFileWriter;
        use parquet::schema::types::Type;
        use std::sync::Arc;

        let e = |e: parquet::errors::ParquetError| e.to_string();
        let rows = std::mem::take(&mut self.group);
        if let Some(file) = self.file.take() {
            self.cols = columns(&rows);
            self.types = self
                .cols
                .iter()
                .map(|c| col_type(rows.iter().map(|r| lookup(r, c))))
                .collect();
            let mut fields = Vec::with_capacity(self.cols.len());
            for (c, t) in self.cols.iter().zip(&self.types) {
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
            self.writer = Some(
                SerializedFileWriter::new(
                    file,
                    schema,
                    Arc::new(WriterProperties::builder().build()),
                )
                .map_err(e)?,
            );
        }
        for (i, r) in rows.iter().enumerate() {
            note_new_columns(dropped, self.first + i, &self.cols, r);
        }
        if rows.is_empty() {
            return Ok(());
        }
        let w = self
            .writer
            .as_mut()
            .expect("schema written with the first group");
        write_group(w, &self.cols, &self.types, &rows)
    }

    fn finish(mut self, dropped: &mut BTreeMap<String, usize>) -> Result<(), String> {
        self.flush(dropped)?;
        if let Some(w) = self.writer.take() {
            w.close().map_err(|e| e.to_string())?;
        }
        Ok(())
    }
}

/// One row group of `rows` in columns `cols` of `types`.
fn write_group(
    w: &mut parquet::file::writer::SerializedFileWriter<std::fs::File>,
    cols: &[String],
    types: &[ColType],
    rows: &[Row],
) -> Result<(), String> {
    use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DoubleType, Int64Type};
    let e = |e: parquet::errors::ParquetError| e.to_string();
    let mut rg = w.next_row_group().map_err(e)?;
    let mut i = 0;
    while let Some(mut col) = rg.next_column().map_err(e)? {
        let name = &cols[i];
        let cells = rows
            .iter()
            .map(|r| lookup(r, name).filter(|v| !v.is_null()));
        let written = match types[i] {
            ColType::Bool => {
                let (defs, data) = typed(cells, Value::as_bool);
                col.typed::<BoolType>()
                    .write_batch(&data, Some(&defs), None)
            }
            ColType::Int => {
                let (defs, data) = typed(cells, Value::as_i64);
                col.typed::<Int64Type>()
                    .write_batch(&data, Some(&defs), None)
            }
            ColType::Double => {
                let (defs, data) = typed(cells, Value::as_f64);
                col.typed::<DoubleType>()
                    .write_batch(&data, Some(&defs), None)
            }
            ColType::Text => {
                let (defs, data) = typed(cells, |v| Some(ByteArray::from(text(v).as_str())));
                col.typed::<ByteArrayType>()
                    .write_batch(&data, Some(&defs), None)
            }
        };
        written.map_err(e)?;
        col.close().map_err(e)?;
        i += 1;
    }
    rg.close().map_err(e)?;
    Ok(())
}

/// Definition levels and the present values of one column: a cell that is
/// missing, null or not convertible to the column's type is null.
fn typed<'a, T>(
    cells: impl Iterator<Item = Option<&'a Value>>,
    convert: impl Fn(&Value) -> Option<T>,
) -> (Vec<i16>, Vec<T>) {
    let mut defs = Vec::new();
    let mut data = Vec::new();
    for c in cells {
        match c.and_then(&convert) {
            Some(v) => {
                defs.push(1);
                data.push(v);
            }
            None => defs.push(0),
        }
    }
    (defs, data)
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
        let dir = tempfile::tempdir().unwrap();
        let read = |name: &str| std::fs::read_to_string(dir.path().join(name)).unwrap();
        // The header is the first row's: a column first seen later is left
        // out of a CSV, and named.
        let notes = write(&dir.path().join("r.csv"), &rows).unwrap();
        assert_eq!(read("r.csv"), "k,n,x\n\"a,b\",1,0.5\nc,2,\n");
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0].starts_with("column b first appeared in row 2"),
            "{notes:?}"
        );
        assert!(write(&dir.path().join("r.jsonl"), &rows)
            .unwrap()
            .is_empty());
        let jl = read("r.jsonl");
        assert_eq!(jl.lines().next().unwrap(), r#"{"k":"a,b","n":1,"x":0.5}"#);
        assert_eq!(jl.lines().nth(1).unwrap(), r#"{"k":"c","n":2,"b":true}"#);
        let p = dir.path().join("r.parquet");
        // Both rows in the first row group: its columns are every row's.
        assert!(write(&p, &rows).unwrap().is_empty());
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
