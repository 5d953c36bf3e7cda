"""tinygram from Python: the deterministic TCP simulator as functions.

``run`` runs one scenario and returns the ``tinygram run --json`` result as a
dict; ``sweep`` runs the cross product of a grid of keys and seeds on a local
process pool or a Dask cluster and returns a pandas DataFrame, one row per run
(the columns of ``tinygram sweep``); ``drill`` and ``diagnose`` return their
reports as dicts. The simulation is the Rust library's (``tinygram._native``);
this module only converts arguments and schedules runs.
"""

from __future__ import annotations

import json
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from typing import Any, Iterable, Mapping

from . import _native
from ._errors import ScenarioError

__all__ = ["run", "sweep", "drill", "diagnose", "whatif", "reproduce", "ScenarioError", "__version__"]

__version__: str = _native.__version__


def _jsonable(o: Any) -> Any:
    # numpy scalars and the like
    item = getattr(o, "item", None)
    if callable(item):
        return item()
    if isinstance(o, (tuple, range)):
        return list(o)
    raise TypeError(f"{type(o).__name__} is not a scenario value")


def _scenario(scenario: Any) -> tuple[str, str]:
    """The scenario as (kind, payload) for the native layer."""
    if isinstance(scenario, Mapping):
        try:
            return "json", json.dumps(dict(scenario), default=_jsonable)
        except (TypeError, ValueError) as e:
            raise ScenarioError(f"scenario: {e}") from None
    if isinstance(scenario, os.PathLike):
        return "path", os.fspath(scenario)
    if isinstance(scenario, str):
        one_line = "\n" not in scenario
        if one_line and (scenario.endswith(".toml") or os.path.isfile(scenario)):
            return "path", scenario
        return "text", scenario
    raise TypeError(
        "scenario must be a dict, TOML text or a path, not " + type(scenario).__name__
    )


def _overrides(pairs: Iterable[tuple[str, Any]]) -> str:
    """Dotted keys and Python values as the native layer's JSON pairs."""
    out = []
    for key, value in pairs:
        if not isinstance(key, str):
            raise ScenarioError(f"{key!r}: scenario keys are strings", key=str(key))
        try:
            json.dumps(value, default=_jsonable)
        except (TypeError, ValueError) as e:
            raise ScenarioError(f"{key}: {e}", key=key) from None
        out.append([key, value])
    return json.dumps(out, default=_jsonable)


def run(scenario: Any, /, **overrides: Any) -> dict:
    """Runs one scenario and returns its result (the fields of ``--json``).

    ``scenario`` is a dict of tables, TOML text, or a path to a file;
    ``overrides`` are dotted keys, e.g. ``**{"client.send_policy": "doupnik"}``
    or ``seed=3``. A bad key or value raises :class:`ScenarioError` naming it.
    """
    kind, payload = _scenario(scenario)
    return json.loads(_native.run_json(kind, payload, _overrides(overrides.items())))


def drill(
    script: Any,
    *,
    stack: str = "tinygram",
    tolerance_usecs: int = 4000,
    strict_segments: bool = False,
) -> dict:
    """Runs one packetdrill script (a path, or the script's text) against the
    engine on virtual time; returns ``passed``, ``failure`` (line, kind,
    message, expected, actual, ...), ``skipped`` and ``notes``."""
    if isinstance(script, os.PathLike):
        script = os.fspath(script)
    if not isinstance(script, str):
        raise TypeError("script must be a path or the script's text")
    return json.loads(
        _native.drill_json(script, stack, int(tolerance_usecs), bool(strict_segments))
    )


def diagnose(path: Any) -> dict:
    """Diagnoses a capture (pcap or pcapng) as ``tinygram diagnose --json``
    does. An unreadable or damaged file raises ``ValueError`` saying why."""
    return json.loads(_native.diagnose_json(os.fspath(path)))


_WHATIF_FIGURES = (
    ("p50_ms", "p50_ms"),
    ("p99_ms", "p99_ms"),
    ("max_ms", "max_ms"),
    ("total_s", "total_s"),
    ("data_segments", "data_segments"),
    ("small_segments", "small_segments"),
    ("wire_bytes", "wire_bytes"),
)


def whatif(
    path: Any,
    *,
    flow: int | None = None,
    busiest: int = 1,
    side: str | None = None,
    tries: Iterable[str] = (),
    samples: int = 8,
):
    """What would each fix have done to a captured exchange? As
    ``tinygram whatif``: infers the path, each side's TCP and the
    application from the capture, replays it, and runs every send and ACK
    policy and stack profile against the replay.

    Returns a pandas DataFrame, one row per flow and configuration (the
    replay first, as ``"replay (as captured)"``): for each headline figure its
    median over the values the capture cannot show and the range
    (``p50_ms``, ``p50_ms_min``, ``p50_ms_max``, ...), the change of the median
    exchange time against the replay (``lower``, ``higher``, ``same`` or
    ``flips``), and whether it is Pareto-best. The full report (inferred
    values with their evidence, the scenario, the replay's match) is in
    ``df.attrs["report"]``. A capture that cannot be read, or holds nothing to
    replay, raises ``ValueError`` saying why.
    """
    import pandas as pd

    if flow is not None and (isinstance(flow, bool) or not isinstance(flow, int) or flow < 1):
        raise ValueError(f"flow={flow!r}: flows are numbered from 1")
    report = json.loads(
        _native.whatif_json(
            os.fspath(path), flow, int(busiest), side, [str(t) for t in tries], int(samples)
        )
    )
    rows = []
    for f in report["flows"]:
        base = f["baseline"]

        def row(name, kind, metrics, change=None, ratio=None, pareto=False):
            r = {"flow": f["flow"], "configuration": name, "kind": kind}
            for col, key in _WHATIF_FIGURES:
                d = metrics[key]
                r[col], r[col + "_min"], r[col + "_max"] = d["p50"], d["min"], d["max"]
            r["p50_change"] = None if change is None else change["change"]
            r["p50_ratio"] = ratio
            r["pareto"] = pareto
            r["replay_matches"] = base["matches"]
            return r

        rows.append(row("replay (as captured)", "replay", base["metrics"]))
        for a in f["alternatives"]:
            if a["metrics"] is not None:
                rows.append(
                    row(a["name"], a["kind"], a["metrics"], a["p50_change"], a["p50_ratio"], a["pareto"])
                )
    df = pd.DataFrame.from_records(rows)
    df.attrs["report"] = report
    return df


def reproduce(*names: str, quick: bool = False, jobs: int | None = None) -> dict:
    """Runs the source documents' experiments as ``tinygram reproduce --json``
    does and returns report.json's structure: every claim with its verdict,
    the values each document leaves open (``experiments[i]["unknowns"]``)
    and every table. ``names`` picks experiments (all when none are given);
    ``quick`` runs the reduced set with fewer draws of the open values;
    ``jobs`` is the number of threads (default: one per core). No report
    directory is written. An unknown name raises ``ValueError``."""
    if jobs is not None and int(jobs) < 1:
        raise ValueError(f"jobs: {jobs} is not a thread count (1 or more)")
    return json.loads(
        _native.reproduce_json([str(n) for n in names], bool(quick), None if jobs is None else int(jobs))
    )


def _run_task(task: tuple) -> list:
    """One sweep run (in a worker process or on a Dask worker): the row's
    columns as ``[name, value]`` pairs, as ``tinygram sweep`` writes them."""
    kind, payload, job = task
    return json.loads(_native.run_job(kind, payload, job))


def _tasks(scenario: Any, grid: Mapping[str, Any], seeds: Iterable[int]):
    """The sweep's jobs, expanded by the run library (the grid, then the
    file's ``[open]`` values, times the seeds), each with its grid values."""
    if not isinstance(grid, Mapping):
        raise TypeError("grid must be a dict of key to list of values")
    axes = []
    for key, values in grid.items():
        if key == "seed":
            raise ScenarioError("seed: give the seeds with seeds=, not in the grid", key="seed")
        if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Iterable):
            raise ScenarioError(
                f"{key}: the grid's values must be a list, not {type(values).__name__}",
                key=str(key),
            )
        values = list(values)
        if not values:
            raise ScenarioError(f"{key}: no values in the grid", key=str(key))
        axes.append((key, values))
    seed_list = []
    for s in seeds:
        if isinstance(s, bool) or not isinstance(s, int) or s < 0:
            raise ScenarioError(f"seed {s!r}: seeds are integers >= 0", key="seed")
        seed_list.append(int(s))
    if not seed_list:
        raise ScenarioError("seeds: no seeds", key="seed")
    kind, payload = _scenario(scenario)
    # Every value on its own first, so an error names its key.
    for key, values in axes:
        for v in values:
            _native.check(kind, payload, _overrides([(key, v)]))
    grid_json = json.dumps([[k, v] for k, v in axes], default=_jsonable)
    jobs = json.loads(_native.sweep_jobs(kind, payload, grid_json, seed_list))
    tasks, labels = [], []
    for job in jobs:
        tasks.append((kind, payload, json.dumps({"sets": job["sets"], "seed": job["seed"]})))
        labels.append([(k, vals[i]) for (k, vals), i in zip(axes, job["grid"])])
    return tasks, labels


def sweep(
    scenario: Any,
    grid: Mapping[str, Iterable[Any]],
    seeds: Iterable[int] = (1,),
    client: Any = None,
    *,
    processes: int | None = None,
    progress: bool = True,
):
    """Runs ``scenario`` for every combination of ``grid`` (dict of dotted key
    to list of values) and every seed; returns a pandas DataFrame, one row per
    run: the swept keys (and any the file's ``[open]`` table leaves open),
    ``seed``, then every result field flattened with dotted names: the
    columns of ``tinygram sweep``, whose default seed (1) it shares.

    With ``client=None`` the runs go to a local process pool of ``processes``
    workers (default: one per core). With a ``dask.distributed.Client`` they
    are mapped on that cluster, with Dask's progress display. The rows are the
    same either way: the first grid key varies slowest, seeds fastest.
    """
    import pandas as pd

    tasks, labels = _tasks(scenario, grid, seeds)
    if client is None:
        workers = processes or os.cpu_count() or 1
        if workers == 1 or len(tasks) == 1:
            results = [_run_task(t) for t in tasks]
        else:
            import multiprocessing

            # fork: no re-import of the caller's script (spawn would run its
            # top level again); the workers only call the native library.
            ctx = multiprocessing.get_context("fork" if sys.platform == "linux" else None)
            chunk = max(1, len(tasks) // (workers * 8))
            with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
                results = list(pool.map(_run_task, tasks, chunksize=chunk))
    else:
        futures = client.map(_run_task, tasks, pure=False)
        if progress:
            from dask.distributed import progress as show_progress

            show_progress(futures)
        results = client.gather(futures)
    rows = []
    for grid_values, cols in zip(labels, results):
        row = dict(cols)
        # The grid's columns hold the Python values given, not their TOML text.
        row.update(grid_values)
        rows.append(row)
    df = pd.DataFrame.from_records(rows)
    seeds_n = df["seed"].nunique() if "seed" in df else 0
    if seeds_n > 1:
        # As `tinygram sweep` does: say when the seeds only repeated runs.
        rest = df.drop(columns=["seed"]).astype(str).drop_duplicates()
        if len(rest) * seeds_n == len(df):
            import warnings

            warnings.warn(
                "every seed gave the same results: nothing in this scenario draws from "
                "the run's random numbers (no loss, bit errors, reordering or jitter), "
                "so one seed is enough",
                stacklevel=2,
            )
    return df
