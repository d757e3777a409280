"""A run's identity holds declared inputs only: keys measured at run time are refused in a
config and left out of content checksums (frontierbo.experiments.identity, issue 56 item 8)."""

from __future__ import annotations

import pytest

from frontierbo.experiments import (
    ResultStore,
    RunSpec,
    is_measured,
    measured_keys,
    run_sweep,
    without_measured,
)


@pytest.mark.parametrize(
    "key", ["seconds", "mle_seconds", "fit_elapsed", "machine", "hostname", "pid", "Timestamp"]
)
def test_keys_measured_at_run_time(key):
    assert is_measured(key)


@pytest.mark.parametrize(
    "key", ["seed", "T", "iterations", "anytime_iterations", "seconds_per_iteration", 3, "budget"]
)
def test_declared_keys(key):
    assert not is_measured(key)


def test_measured_keys_are_found_and_stripped_at_any_depth():
    value = {
        "a": 1,
        "meta": {"mle_seconds": 2.5, "nll": -3.0, "rows": [{"host": "x", "i": 0}]},
        "seconds": 1.0,
        "t": ({"machine": "cpu"},),
    }
    assert measured_keys(value) == [
        "meta.mle_seconds",
        "meta.rows[0].host",
        "seconds",
        "t[0].machine",
    ]
    assert without_measured(value) == {
        "a": 1,
        "meta": {"nll": -3.0, "rows": [{"i": 0}]},
        "t": ({},),
    }
    assert measured_keys(without_measured(value)) == []


@pytest.mark.parametrize(
    "config", [{"seconds": 1.0}, {"problem": {"mle_seconds": 3.2}}, {"runs": [{"hostname": "h"}]}]
)
def test_runspec_refuses_a_config_measured_at_run_time(config):
    with pytest.raises(ValueError, match="measured at run time") as info:
        RunSpec("r", config, 0)
    assert "'r'" in str(info.value)


def _worker(spec):
    return {"value": spec.config["x"], "seconds": 0.123}  # measured values are results


def test_measured_values_are_stored_as_results_and_a_changed_config_is_named(tmp_path):
    store = ResultStore(tmp_path / "runs.jsonl")
    (record,) = run_sweep([RunSpec("r", {"x": 1, "y": 2}, 0)], _worker, store, progress=False)
    assert record["seconds"] == 0.123 and record["config"] == {"x": 1, "y": 2}
    with pytest.raises(ValueError, match=r"different config or seed \(config key\(s\) 'y'\)"):
        run_sweep([RunSpec("r", {"x": 1, "y": 3}, 0)], _worker, store, progress=False)
    with pytest.raises(ValueError, match="seed 0 stored, 5 planned"):
        run_sweep([RunSpec("r", {"x": 1, "y": 2}, 5)], _worker, store, progress=False)
