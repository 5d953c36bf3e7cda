"""tinygram.reproduce(): report.json's structure from Python."""

import pytest

import tinygram


def test_reproduce_returns_the_report_structure():
    r = tinygram.reproduce("doupnik-web", quick=True, jobs=2)
    assert r["mode"] == "quick"
    assert [e["name"] for e in r["experiments"]] == ["doupnik-web"]
    e = r["experiments"][0]
    # What the paper leaves open is listed, with a range and why, and each
    # claim says at how many points of it it held.
    keys = {u["key"] for u in e["unknowns"]}
    assert {"file.33KB", "workload.response_gap"} <= keys
    assert all(".." in u["range"] and u["why"] for u in e["unknowns"])
    assert e["points"] > 1
    verdicts = {"reproduced", "not_reproduced", "not_testable"}
    for c in e["claims"]:
        assert c["verdict"] in verdicts
        assert c["points"]["of"] == e["points"]
    counts = e["counts"]
    assert sum(counts.values()) == len(e["claims"])


def test_reproduce_is_deterministic():
    a = tinygram.reproduce("davids-traces", quick=True, jobs=1)
    b = tinygram.reproduce("davids-traces", quick=True, jobs=2)
    assert a == b


def test_an_unknown_experiment_names_the_known_ones():
    with pytest.raises(ValueError, match="doupnik-web"):
        tinygram.reproduce("nope", quick=True)
    with pytest.raises(ValueError, match="jobs"):
        tinygram.reproduce("davids-traces", jobs=0)
