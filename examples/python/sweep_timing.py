"""Measures a sweep of 1,000 runs three ways: one local process, a local
process pool on every core, and a `dask scheduler` with two `dask worker`
processes on this machine (started and stopped here). Prints the speed-up of
all cores over one and Dask's overhead per run, and checks the three results
are identical.

    python examples/python/sweep_timing.py [--runs-per-seed-block 100]
"""

import argparse
import os
import pathlib
import subprocess
import sys
import tempfile
import time

import pandas as pd

import tinygram

REPO = pathlib.Path(__file__).resolve().parents[2]
SCENARIO = REPO / "scenarios" / "cheshire-cliff.toml"
GRID = {
    "client.send_policy": ["nagle", "minshall", "doupnik", "nodelay", "nagle-liberal"],
    "server.delack": ["40ms", "200ms"],
}


def timed(label, f):
    t = time.perf_counter()
    df = f()
    s = time.perf_counter() - t
    print(f"{label:<34} {len(df):>5} runs  {s:7.2f} s  {1e3 * s / len(df):6.2f} ms/run", flush=True)
    return df, s


def dask_cluster(tmp: pathlib.Path):
    dask = str(pathlib.Path(sys.executable).with_name("dask"))
    sched = tmp / "scheduler.json"
    quiet = dict(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    procs = [subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", "0",
                               "--dashboard-address", ":0", "--scheduler-file", str(sched)], **quiet)]
    while not (sched.exists() and sched.stat().st_size):
        time.sleep(0.1)
    for _ in range(2):
        procs.append(subprocess.Popen([dask, "worker", "--scheduler-file", str(sched), "--nworkers", "1",
                                       "--nthreads", "1", "--no-dashboard", "--host", "127.0.0.1"], **quiet))
    return sched, procs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=100, help="seeds per combination (10 combinations)")
    args = ap.parse_args()
    seeds = range(1, args.seeds + 1)
    print(f"{os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f}")
    one, t1 = timed("local, 1 process", lambda: tinygram.sweep(SCENARIO, GRID, seeds, processes=1))
    allc, tn = timed(f"local, {os.cpu_count()} processes", lambda: tinygram.sweep(SCENARIO, GRID, seeds))
    from dask.distributed import Client

    with tempfile.TemporaryDirectory() as tmp:
        sched, procs = dask_cluster(pathlib.Path(tmp))
        try:
            with Client(scheduler_file=str(sched)) as client:
                client.wait_for_workers(2, timeout=120)
                remote, td = timed("dask scheduler + 2 workers", lambda: tinygram.sweep(
                    SCENARIO, GRID, seeds, client=client, progress=False))
        finally:
            for p in procs:
                p.terminate()
            for p in procs:
                p.wait()
    pd.testing.assert_frame_equal(one, allc)
    pd.testing.assert_frame_equal(one, remote)
    n = len(one)
    print(f"speed-up of all cores over one: {t1 / tn:.2f}x")
    print(f"Dask's overhead per run over the local pool: {1e3 * (td - tn) / n:.2f} ms")
    print("results identical on 1 process, the pool and Dask")


if __name__ == "__main__":
    main()
