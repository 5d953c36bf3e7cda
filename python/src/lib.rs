//! `tinygram._native`: the Python package's thin layer over the run library
//! (`tinygram_lab`). Every function takes and returns JSON text; the
//! simulation, the scenario checks, the sweep's expansion and the flattening
//! of results are the library's own code, the same the CLI runs.
//! The GIL is released while anything runs.

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use serde_json::Value;
use std::path::Path;
use tinygram_lab::{self as api, Source};
use tinygram_sim::ScenarioError;

/// The file an error is in: empty for an override (`--set KEY`), which is
/// not a file but a keyword argument here.
fn file_of(e: &ScenarioError) -> String {
    if e.file.starts_with("--") {
        String::new()
    } else {
        e.file.clone()
    }
}

/// Raises `tinygram.ScenarioError(message, key, file, line)`.
fn scenario_error(py: Python<'_>, e: &ScenarioError) -> PyErr {
    let made = py
        .import("tinygram._errors")
        .and_then(|m| m.getattr("ScenarioError"))
        .and_then(|cls| cls.call1((e.to_string(), e.key.clone(), file_of(e), e.line)));
    match made {
        Ok(obj) => PyErr::from_value(obj),
        Err(err) => err,
    }
}

fn bad(py: Python<'_>, key: &str, message: String) -> PyErr {
    scenario_error(
        py,
        &ScenarioError {
            file: String::new(),
            line: None,
            key: key.to_string(),
            message,
            also: Vec::new(),
        },
    )
}

/// The scenario as the Python layer hands it over: `("path", p)`,
/// `("text", toml)` or `("json", object)`.
fn source(py: Python<'_>, kind: &str, payload: &str) -> PyResult<Source> {
    let r = match kind {
        "path" => Source::file(Path::new(payload)),
        "text" => Ok(Source::text(payload)),
        "json" => {
            let v: Value = serde_json::from_str(payload)
                .map_err(|e| PyValueError::new_err(format!("scenario JSON: {e}")))?;
            Source::json(&v)
        }
        other => {
            return Err(PyValueError::new_err(format!(
                "unknown scenario kind {other:?}"
            )))
        }
    };
    r.map_err(|e| scenario_error(py, &e))
}

/// `[[key, value], ...]` (JSON) as `--set` strings `key=<TOML value>`.
fn overrides(py: Python<'_>, json: &str) -> PyResult<Vec<String>> {
    let pairs: Vec<(String, Value)> = serde_json::from_str(json)
        .map_err(|e| PyValueError::new_err(format!("overrides JSON: {e}")))?;
    pairs
        .iter()
        .map(|(k, v)| {
            if k.trim().is_empty() || k.contains(char::is_whitespace) || k.contains('=') {
                return Err(bad(py, k, format!("{k:?} is not a scenario key")));
            }
            api::toml_value_text(k, v)
                .map(|t| format!("{k}={t}"))
                .map_err(|e| scenario_error(py, &e))
        })
        .collect()
}

/// Runs `f` without the GIL; a Rust panic becomes a Python `RuntimeError`
/// naming it, never an abort of the interpreter.
fn detached<T: Send>(py: Python<'_>, f: impl FnOnce() -> T + Send) -> PyResult<T> {
    py.allow_threads(|| std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)))
        .map_err(|p| {
            let why = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown".into());
            PyRuntimeError::new_err(format!("tinygram panicked (a bug; please report): {why}"))
        })
}

/// Validates the scenario with its overrides and seed, without running it.
#[pyfunction]
#[pyo3(signature = (kind, payload, overrides_json, seed=None))]
fn check(
    py: Python<'_>,
    kind: &str,
    payload: &str,
    overrides_json: &str,
    seed: Option<u64>,
) -> PyResult<()> {
    let src = source(py, kind, payload)?;
    let sets = overrides(py, overrides_json)?;
    detached(py, || api::check(&src, &sets, seed))?.map_err(|e| scenario_error(py, &e))
}

/// `tinygram run --json`: the result as JSON text.
#[pyfunction]
#[pyo3(signature = (kind, payload, overrides_json, seed=None))]
fn run_json(
    py: Python<'_>,
    kind: &str,
    payload: &str,
    overrides_json: &str,
    seed: Option<u64>,
) -> PyResult<String> {
    let src = source(py, kind, payload)?;
    let sets = overrides(py, overrides_json)?;
    let v = detached(py, || api::run_json(&src, &sets, seed))?
        .map_err(|e| scenario_error(py, &e))?;
    Ok(v.to_string())
}

/// A sweep's jobs, expanded by the run library: the grid (`[[key, [value,
/// ...]], ...]`, Python values as JSON) and the file's open values, times
/// `seeds`. Each job: `{"sets": [[key, toml], ...], "seed": n, "grid": [i,
/// ...]}`, `grid` giving each grid key's value index (first key slowest).
#[pyfunction]
fn sweep_jobs(
    py: Python<'_>,
    kind: &str,
    payload: &str,
    grid_json: &str,
    seeds: Vec<u64>,
) -> PyResult<String> {
    let src = source(py, kind, payload)?;
    let grid: Vec<(String, Vec<Value>)> = serde_json::from_str(grid_json)
        .map_err(|e| PyValueError::new_err(format!("grid JSON: {e}")))?;
    let mut axes = Vec::with_capacity(grid.len());
    for (key, values) in &grid {
        let texts = values
            .iter()
            .map(|v| api::toml_value_text(key, v))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| scenario_error(py, &e))?;
        axes.push(api::sweep::Axis {
            key: key.clone(),
            values: texts,
        });
    }
    let jobs = detached(py, || {
        let space = api::sweep::space(&src, &axes, &[])?;
        api::sweep::validate(&src, &[], &space, &seeds)?;
        api::sweep::jobs(&space, &seeds)
    })?
    .map_err(|e| bad(py, "", e))?;
    let out: Vec<Value> = jobs
        .iter()
        .map(|j| {
            let idx: Vec<usize> = axes
                .iter()
                .map(|a| {
                    let v = j.sets.iter().find(|(k, _)| *k == a.key).map(|(_, v)| v);
                    a.values.iter().position(|x| Some(x) == v).unwrap_or(0)
                })
                .collect();
            serde_json::json!({"sets": j.sets, "seed": j.seed, "grid": idx})
        })
        .collect();
    Ok(Value::Array(out).to_string())
}

/// One sweep job's row (`tinygram sweep`'s columns: its keys, `seed`, every
/// result field flattened), as a JSON list of `[name, value]` pairs.
#[pyfunction]
fn run_job(py: Python<'_>, kind: &str, payload: &str, job_json: &str) -> PyResult<String> {
    let src = source(py, kind, payload)?;
    #[derive(serde::Deserialize)]
    struct Job {
        sets: Vec<(String, String)>,
        seed: u64,
    }
    let j: Job = serde_json::from_str(job_json)
        .map_err(|e| PyValueError::new_err(format!("job JSON: {e}")))?;
    let job = api::sweep::Job {
        sets: j.sets,
        seed: j.seed,
    };
    let row = detached(py, || api::sweep::run_row(&src, &[], &job))?
        .map_err(|e| bad(py, "", e))?;
    serde_json::to_string(&row).map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

/// One packetdrill script (path or text) against the engine: the report as JSON.
#[pyfunction]
fn drill_json(
    py: Python<'_>,
    script: &str,
    stack: &str,
    tolerance_usecs: i64,
    strict_segments: bool,
) -> PyResult<String> {
    let stack: tinygram_drill::Stack = stack
        .parse()
        .map_err(|e: String| PyValueError::new_err(format!("stack: {e}")))?;
    if tolerance_usecs < 0 {
        return Err(PyValueError::new_err(format!(
            "tolerance_usecs: {tolerance_usecs} is negative"
        )));
    }
    let settings = tinygram_drill::Settings {
        tolerance_usecs,
        strict_segments,
        stack,
        ..Default::default()
    };
    let script = script.to_string();
    Ok(detached(py, move || api::reports::drill_json(&script, &settings))?.to_string())
}

/// `tinygram diagnose FILE --json`: the diagnosis as JSON.
#[pyfunction]
fn diagnose_json(py: Python<'_>, path: &str) -> PyResult<String> {
    let p = path.to_string();
    detached(py, move || api::reports::diagnose_json(Path::new(&p)))?
        .map(|v| v.to_string())
        .map_err(PyValueError::new_err)
}

/// `tinygram whatif CAPTURE --json`: the report as JSON.
#[pyfunction]
#[pyo3(signature = (path, flow=None, busiest=1, side=None, tries=Vec::new(), samples=8))]
fn whatif_json(
    py: Python<'_>,
    path: &str,
    flow: Option<usize>,
    busiest: usize,
    side: Option<String>,
    tries: Vec<String>,
    samples: u32,
) -> PyResult<String> {
    let opts = api::whatif::Options {
        flow,
        busiest,
        side,
        tries,
        samples,
        ..Default::default()
    };
    let p = path.to_string();
    let r = detached(py, move || api::whatif::whatif_file(Path::new(&p), &opts, &|_| {}))?
        .map_err(PyValueError::new_err)?;
    serde_json::to_string(&r).map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

/// `tinygram reproduce --json`: the named experiments (all when empty) run
/// in the simulator, as report.json's structure in JSON text. An unknown
/// name is a `ValueError` listing the experiments.
#[pyfunction]
#[pyo3(signature = (names, quick, threads=None))]
fn reproduce_json(
    py: Python<'_>,
    names: Vec<String>,
    quick: bool,
    threads: Option<usize>,
) -> PyResult<String> {
    let threads = threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);
    let sections = detached(py, || {
        tinygram_reproduce::reproduce(&names, quick, threads, &|_, _| {})
    })?
    .map_err(PyValueError::new_err)?;
    serde_json::to_string(&tinygram_reproduce::json(&sections, quick))
        .map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(check, m)?)?;
    m.add_function(wrap_pyfunction!(run_json, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_jobs, m)?)?;
    m.add_function(wrap_pyfunction!(run_job, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(drill_json, m)?)?;
    m.add_function(wrap_pyfunction!(diagnose_json, m)?)?;
    m.add_function(wrap_pyfunction!(whatif_json, m)?)?;
    m.add_function(wrap_pyfunction!(reproduce_json, m)?)?;
    Ok(())
}
