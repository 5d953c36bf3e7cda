"""Tests of the tinygram Python package: every function, bad input, and a
sweep through a real Dask scheduler with two worker processes."""

import json
import os
import pathlib
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

import pandas as pd
import pytest

import tinygram

REPO = pathlib.Path(__file__).resolve().parents[2]
SMALL = {"duration": "2s", "workload": {"requests": 3}}
SMALL_TOML = 'duration = "2s"\n[workload]\nrequests = 3\n'
RESULT_FIELDS = {"name", "seed", "transactions", "transactions_per_s", "completion_ms",
                 "goodput_bytes_per_s", "integrity_ok", "client", "server"}


def test_run_returns_the_json_fields():
    r = tinygram.run(SMALL)
    assert RESULT_FIELDS <= set(r), sorted(r)
    assert r["transactions"] == 3
    assert r["integrity_ok"] is True
    assert r["client"]["data_segments"] > 0


def test_a_dict_toml_text_and_path_give_the_same_result(tmp_path):
    p = tmp_path / "small.toml"
    p.write_text(SMALL_TOML)
    by_dict = tinygram.run(SMALL)
    by_text = tinygram.run(SMALL_TOML)
    by_path = tinygram.run(p)
    by_str_path = tinygram.run(str(p))
    assert by_dict == by_text
    # A file's runs are named after it; everything else is the same.
    assert by_path["name"] == by_str_path["name"] == "small"
    assert {**by_path, "name": "scenario"} == by_dict


def test_overrides_are_dotted_keys_and_seed():
    base = tinygram.run(REPO / "scenarios" / "cheshire-cliff.toml")
    fixed = tinygram.run(REPO / "scenarios" / "cheshire-cliff.toml", **{"client.send_policy": "nodelay"})
    # Cheshire's cliff: strict Nagle holds the runt for the 200 ms delayed ACK.
    assert base["completion_ms"]["p50"] > 150
    assert fixed["completion_ms"]["p50"] < 20
    assert tinygram.run(SMALL, seed=9)["seed"] == 9
    listed = tinygram.run(SMALL, **{"workload.request": [100, 200], "link": {"rate": "1Mbps"}})
    assert listed["transactions"] == 3
    assert tinygram.run(SMALL, seed=4) == tinygram.run(SMALL, seed=4)


@pytest.mark.parametrize(
    "overrides, key",
    [
        ({"client.sendpolicy": "nagle"}, "client.sendpolicy"),
        ({"client.send_policy": "fastest"}, "client.send_policy"),
        ({"link.rate": "-1Mbps"}, "link.rate"),
        ({"link.rate": None}, "link.rate"),
        ({"client.mss": object()}, "client.mss"),
        ({"seed": -1}, "seed"),
    ],
)
def test_bad_overrides_raise_scenario_error_naming_the_key(overrides, key):
    with pytest.raises(tinygram.ScenarioError) as e:
        tinygram.run(SMALL, **overrides)
    assert e.value.key == key, str(e.value)
    assert key in str(e.value)
    assert isinstance(e.value, ValueError)


def test_bad_scenarios_raise_scenario_error():
    with pytest.raises(tinygram.ScenarioError) as e:
        tinygram.run({"link": {"speed": 3}})
    assert e.value.key == "link.speed"
    with pytest.raises(tinygram.ScenarioError) as e:
        tinygram.run('[link]\nrate = "1Gbps"\nspeed = 3\n')
    assert e.value.key == "link.speed" and e.value.line == 3
    with pytest.raises(tinygram.ScenarioError) as e:
        tinygram.run("/nonexistent/nothing.toml")
    assert "cannot read" in str(e.value)
    with pytest.raises(tinygram.ScenarioError):
        tinygram.run({"workload": {"requests": None}})
    with pytest.raises(TypeError):
        tinygram.run(42)


def test_scenario_error_pickles():
    import pickle

    e = tinygram.ScenarioError("x: bad", key="x", file="f.toml", line=3)
    back = pickle.loads(pickle.dumps(e))
    assert (back.key, back.file, back.line, str(back)) == ("x", "f.toml", 3, "x: bad")


def test_the_gil_is_released_while_simulating():
    # A run long enough to notice; if the GIL were held, this thread could
    # not count while the other simulates.
    long = {"duration": "60s", "link": {"rate": "100Mbps"},
            "workload": {"type": "bulk", "bytes": "200MB"}}
    done = []
    t = threading.Thread(target=lambda: done.append(tinygram.run(long)))
    t.start()
    ticks = 0
    while t.is_alive():
        ticks += 1
        time.sleep(0.001)
    t.join()
    assert done and done[0]["integrity_ok"]
    assert ticks > 20, f"main thread ran only {ticks} times during the simulation"


GRID = {"client.send_policy": ["nagle", "nodelay"], "server.delack": ["40ms", "200ms"]}


def test_sweep_returns_one_row_per_run_in_order():
    df = tinygram.sweep(SMALL, GRID, seeds=[1, 2, 3], processes=2)
    assert isinstance(df, pd.DataFrame)
    assert len(df) == 12
    assert list(df.columns[:3]) == ["client.send_policy", "server.delack", "seed"]
    assert list(df["seed"][:4]) == [1, 2, 3, 1]
    assert list(df["client.send_policy"]) == ["nagle"] * 6 + ["nodelay"] * 6
    assert {"transactions", "completion_ms.p50", "client.data_segments"} <= set(df.columns)
    # Each row is the run of its settings.
    row = df.iloc[7]
    one = tinygram.run(SMALL, seed=int(row["seed"]), **{k: row[k] for k in GRID})
    assert one["completion_ms"]["p50"] == row["completion_ms.p50"]
    assert one["client"]["data_segments"] == row["client.data_segments"]


def test_sweep_is_the_same_on_one_process_and_many():
    a = tinygram.sweep(SMALL, GRID, seeds=range(3), processes=1)
    b = tinygram.sweep(SMALL, GRID, seeds=range(3))
    pd.testing.assert_frame_equal(a, b)


def test_sweep_a_value_that_is_a_list_and_a_swept_result_name():
    df = tinygram.sweep(SMALL, {"client.options": [["wscale", "sack"], []], "client.mss": [536, 1448]},
                        seeds=[1], processes=1)
    assert df["client.options"][0] == ["wscale", "sack"]
    # client.mss is both a key and the effective MSS of the result.
    assert list(df["client.mss"]) == [536, 1448, 536, 1448]
    assert "result.client.mss" in df.columns


@pytest.mark.parametrize(
    "grid, seeds, key",
    [
        ({"client.sendpolicy": ["nagle"]}, [1], "client.sendpolicy"),
        ({"client.send_policy": ["nagle", "fastest"]}, [1], "client.send_policy"),
        ({"client.send_policy": "nagle"}, [1], "client.send_policy"),
        ({"client.send_policy": []}, [1], "client.send_policy"),
        ({"seed": [1, 2]}, [1], "seed"),
        (GRID, [], "seed"),
        (GRID, [-1], "seed"),
        (GRID, ["1"], "seed"),
    ],
)
def test_bad_sweeps_raise_before_running(grid, seeds, key):
    with pytest.raises(tinygram.ScenarioError) as e:
        tinygram.sweep(SMALL, grid, seeds=seeds)
    assert e.value.key == key, str(e.value)


def test_drill_passes_and_fails_with_the_line():
    ok = tinygram.drill(REPO / "tests" / "drill" / "accept-blocking.pkt")
    assert ok["passed"] is True and ok["failure"] is None, ok
    script = (REPO / "tests" / "drill" / "accept-blocking.pkt").read_text()
    broken = script.replace("> P. 1:11(10)", "> P. 1:12(11)")
    assert broken != script
    bad = tinygram.drill(broken)
    assert bad["passed"] is False
    assert bad["failure"]["line"] == 11 and bad["failure"]["kind"], bad
    missing = tinygram.drill("/nonexistent/x.pkt")
    assert missing["passed"] is False and "cannot read" in missing["failure"]["message"]
    with pytest.raises(ValueError, match="stack"):
        tinygram.drill(broken, stack="windows")


def test_diagnose_reads_a_capture_and_rejects_what_is_not_one(tmp_path):
    d = tinygram.diagnose(REPO / "fuzz" / "corpus" / "pcap" / "ethernet.pcapng")
    assert isinstance(d, dict) and d, d
    bad = tmp_path / "x.pcap"
    bad.write_bytes(b"not a capture at all")
    with pytest.raises(ValueError, match="not a capture"):
        tinygram.diagnose(bad)
    with pytest.raises(ValueError, match="cannot read"):
        tinygram.diagnose(tmp_path / "missing.pcap")


def _dask_cli():
    exe = pathlib.Path(sys.executable).with_name("dask")
    return str(exe) if exe.exists() else shutil.which("dask")


@pytest.mark.skipif(_dask_cli() is None, reason="dask distributed is not installed")
def test_a_sweep_through_a_dask_scheduler_and_two_workers_equals_the_local_one(tmp_path):
    from dask.distributed import Client

    dask = _dask_cli()
    sched_file = tmp_path / "scheduler.json"
    env = {**os.environ, "DASK_DISTRIBUTED__WORKER__DAEMON": "False"}
    procs = [subprocess.Popen(
        [dask, "scheduler", "--host", "127.0.0.1", "--port", "0", "--dashboard-address", ":0",
         "--scheduler-file", str(sched_file)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)]
    try:
        for _ in range(600):
            if sched_file.exists() and sched_file.stat().st_size > 0:
                break
            time.sleep(0.1)
        for _ in range(2):
            procs.append(subprocess.Popen(
                [dask, "worker", "--scheduler-file", str(sched_file), "--nworkers", "1",
                 "--nthreads", "1", "--no-dashboard", "--host", "127.0.0.1"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env))
        with Client(scheduler_file=str(sched_file), timeout="60s") as client:
            client.wait_for_workers(2, timeout=120)
            assert len(client.scheduler_info()["workers"]) == 2
            grid = {"client.send_policy": ["nagle", "doupnik", "nodelay"],
                    "server.delack": ["40ms", "200ms"]}
            seeds = range(1, 36)
            remote = tinygram.sweep(SMALL, grid, seeds=seeds, client=client, progress=False)
            # Two worker processes served it.
            who = client.run(os.getpid)
        local = tinygram.sweep(SMALL, grid, seeds=seeds)
        assert len(remote) == 3 * 2 * 35 >= 200
        assert len(who) == 2
        pd.testing.assert_frame_equal(remote, local)
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()


def test_the_policy_sweep_example_writes_its_figures(tmp_path):
    pytest.importorskip("matplotlib")
    example = REPO / "examples" / "python" / "policy_sweep.py"
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, str(example), "--quick", "--out", str(out)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    df = pd.read_csv(out / "results.csv")
    # 5 workloads x 2 send policies x 2 ACK policies x 2 delayed-ACK times x 1 size.
    assert len(df) == 40
    assert set(df["name"]) == {"cheshire-cliff", "davids-traces", "doupnik-web",
                               "fox-satellite", "westfield-ftp"}
    for png in ("heatmap.png", "pareto.png"):
        assert (out / png).read_bytes()[:4] == b"\x89PNG"


DATA = pathlib.Path(__file__).parent / "data"


def test_a_many_flow_file_runs_many_flows_in_run_and_sweep():
    # The one run path: Python's run and sweep of a [[flows]] file run the
    # many-flow world, each sweep row the flattened run of its settings.
    path = REPO / "examples" / "competing-policies.toml"
    one = tinygram.run(path, **{"bottleneck.qdisc": "codel"})
    assert one["flow_count"] > 2 and "client" not in one
    df = tinygram.sweep(path, {"bottleneck.qdisc": ["codel", "drop-tail"]}, seeds=[1], processes=1)
    assert len(df) == 2
    row = df.iloc[0]
    assert row["transactions"] == one["transactions"]
    assert row["completion_ms.p50"] == one["completion_ms"]["p50"]
    assert "client.data_segments" not in df.columns


def test_open_values_are_swept_and_run_as_distributions():
    text = SMALL_TOML + '\n[open]\n"server.delack" = { values = ["40ms", "200ms"] }\n'
    r = tinygram.run(text, **{"client.send_policy": "nagle"})
    assert r["points"] == 2 and len(r["runs"]) == 2
    assert r["distribution"]["completion_ms.p50"]["n"] == 2
    df = tinygram.sweep(text, {"client.send_policy": ["nagle", "nodelay"]}, seeds=[1], processes=1)
    assert len(df) == 4
    assert list(df["server.delack"]) == ["40ms", "200ms", "40ms", "200ms"]


def test_version_and_override_errors_name_no_file():
    assert tinygram.__version__.count(".") == 2
    with pytest.raises(tinygram.ScenarioError) as e:
        tinygram.run(SMALL, **{"client.send_polcy": "nagle"})
    assert e.value.key == "client.send_polcy" and e.value.file == ""


def test_whatif_predicts_what_each_fix_does_to_a_capture():
    df = tinygram.whatif(DATA / "minshall.pcap", samples=2)
    assert isinstance(df, pd.DataFrame)
    assert df.iloc[0]["configuration"] == "replay (as captured)"
    assert bool(df.iloc[0]["replay_matches"])
    by = df.set_index("configuration")
    # The runt waits a round trip (~20 ms) under the client's Minshall rule.
    assert by.loc["client nodelay", "p50_ms"] < by.loc["replay (as captured)", "p50_ms"] - 15
    assert by.loc["client nodelay", "p50_change"] == "lower"
    assert by.loc["client minshall", "p50_change"] == "same"
    assert df["pareto"].any()
    report = df.attrs["report"]
    assert report["flows"][0]["inference"]["path"]["vantage"]["value"] == "client"
    assert "[workload]" in report["flows"][0]["scenario"]
    with pytest.raises(ValueError, match="not a capture"):
        bad = DATA / "minshall.toml"
        tinygram.whatif(bad)


def test_a_sweep_warns_when_its_seeds_changed_nothing():
    with pytest.warns(UserWarning, match="every seed gave the same results"):
        tinygram.sweep(SMALL, {"client.send_policy": ["nagle"]}, seeds=[1, 2], processes=1)
    lossy = SMALL_TOML + "[link]\nloss = 0.2\n"
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tinygram.sweep(lossy, {"client.send_policy": ["nagle"]}, seeds=[1, 2], processes=1)
