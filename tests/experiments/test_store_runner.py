"""Tests for the experiment store, sweep runner, aggregation and plots."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from frontierbo.experiments.plots import plot_metric_vs_param, plot_regret_curves
from frontierbo.experiments.runner import RunSpec, aggregate, run_sweep, seed_for
from frontierbo.experiments.schedulers import check_scheduler
from frontierbo.experiments.store import (
    ResultStore,
    to_jsonable,
    write_json_atomic,
    write_text_atomic,
)

SRC = Path(__file__).resolve().parents[2] / "src"

# Worker bookkeeping; only meaningful with n_jobs=1 (workers run in this process).
worker_calls: list[str] = []
FAIL_AFTER: int | None = None


def toy_worker(spec: RunSpec) -> dict:
    """A deterministic fake BO run: a simple-regret trace of shape (5,) from spec.seed."""
    worker_calls.append(spec.run_id)
    if FAIL_AFTER is not None and len(worker_calls) > FAIL_AFTER:
        raise RuntimeError("simulated kill")
    rng = np.random.default_rng(spec.seed)
    trace = np.minimum.accumulate(rng.random(5) * spec.config["scale"])
    return {"simple_regret": trace, "final": trace[-1], "n_evals": np.int64(5)}


@pytest.fixture(autouse=True)
def _reset_worker_state(monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "worker_calls", [])
    monkeypatch.setattr(sys.modules[__name__], "FAIL_AFTER", None)


def make_specs(n: int = 10) -> list[RunSpec]:
    return [
        RunSpec(f"run{i}", {"scale": float(i + 1), "tag": ("a", i)}, seed_for(0, "toy", i))
        for i in range(n)
    ]


# --------------------------------------------------------------------------- store


def test_append_load_round_trip_with_numpy(tmp_path):
    store = ResultStore(tmp_path / "sub" / "runs.jsonl")
    rec = {
        "run_id": "a",
        "trace": np.array([1.5, 0.25]),
        "matrix": np.eye(2, dtype=np.float32),
        "x": np.float64(3.0),
        "k": np.int32(7),
        "flag": np.bool_(True),
        "nested": {"t": (1, 2), 3: np.array([4])},
    }
    store.append(rec)
    store.append({"run_id": "b", "nan": float("nan")})
    loaded = store.load()
    assert [r["run_id"] for r in loaded] == ["a", "b"]
    a = loaded[0]
    assert a["trace"] == [1.5, 0.25]
    assert a["matrix"] == [[1.0, 0.0], [0.0, 1.0]]
    assert a["x"] == 3.0 and a["k"] == 7 and a["flag"] is True
    assert a["nested"] == {"t": [1, 2], "3": [4]}
    assert np.isnan(loaded[1]["nan"])
    assert store.done_ids() == {"a", "b"}
    # One record per line, each valid JSON.
    lines = store.path.read_text().splitlines()
    assert len(lines) == 2 and all(json.loads(line)["run_id"] for line in lines)


def test_load_missing_file_is_empty(tmp_path):
    store = ResultStore(tmp_path / "none.jsonl")
    assert store.load() == [] and store.done_ids() == set()


def test_append_rejects_bad_records(tmp_path):
    store = ResultStore(tmp_path / "runs.jsonl")
    with pytest.raises(ValueError, match="run_id"):
        store.append({"x": 1})
    with pytest.raises(ValueError, match="run_id"):
        store.append({"run_id": ""})
    with pytest.raises(TypeError, match="record must be a dict"):
        store.append(["run_id", "a"])
    with pytest.raises(TypeError, match="cannot convert"):
        store.append({"run_id": "a", "obj": object()})
    assert not store.path.exists() or store.load() == []


def test_truncated_last_line_is_ignored_and_repaired(tmp_path):
    store = ResultStore(tmp_path / "runs.jsonl")
    store.append({"run_id": "a", "v": [1.0, 2.0]})
    store.append({"run_id": "b", "v": [3.0]})
    good_size = store.path.stat().st_size
    # Simulate a kill in the middle of writing the third line.
    full = json.dumps({"run_id": "c", "v": [4.0, 5.0]})
    with open(store.path, "ab") as fh:
        fh.write(full[: len(full) // 2].encode())
    assert [r["run_id"] for r in store.load()] == ["a", "b"]
    assert store.path.stat().st_size == good_size  # load() cut the torn tail off
    store.append({"run_id": "c", "v": [4.0, 5.0]})
    lines = store.path.read_text().splitlines()
    assert [json.loads(line)["run_id"] for line in lines] == ["a", "b", "c"]


def test_append_repairs_torn_tail_without_load(tmp_path):
    store = ResultStore(tmp_path / "runs.jsonl")
    store.append({"run_id": "a"})
    with open(store.path, "ab") as fh:
        fh.write(b'{"run_id": "b", "v": [1.')
    ResultStore(store.path).append({"run_id": "c"})
    assert store.path.read_text() == '{"run_id":"a"}\n{"run_id":"c"}\n'


def test_complete_bytes_stops_at_the_last_record_and_leaves_the_file_alone(tmp_path):
    store = ResultStore(tmp_path / "runs.jsonl")
    assert store.complete_bytes() == b""  # no file yet
    store.append({"run_id": "a"})
    store.append({"run_id": "b"})
    with open(store.path, "ab") as fh:
        fh.write(b'{"run_id": "c", "v": [1.')  # a record being written
    before = store.path.read_bytes()
    assert store.complete_bytes() == b'{"run_id":"a"}\n{"run_id":"b"}\n'
    assert store.path.read_bytes() == before  # unlike load(), no repair of a writer's file


def test_invalid_last_line_with_newline_is_dropped(tmp_path):
    store = ResultStore(tmp_path / "runs.jsonl")
    store.append({"run_id": "a"})
    with open(store.path, "ab") as fh:
        fh.write(b"\x00\x00\x00\n")  # e.g. zero-filled block after a power loss
    assert store.done_ids() == {"a"}
    assert store.path.read_text() == '{"run_id":"a"}\n'


def test_corruption_in_the_middle_raises(tmp_path):
    path = tmp_path / "runs.jsonl"
    path.write_text('{"run_id":"a"}\nnot json\n{"run_id":"b"}\n')
    with pytest.raises(ValueError, match="line 2"):
        ResultStore(path).load()


def test_duplicate_run_ids_keep_first(tmp_path):
    store = ResultStore(tmp_path / "runs.jsonl")
    store.append({"run_id": "a", "v": 1})
    store.append({"run_id": "b", "v": 2})
    store.append({"run_id": "a", "v": 3})
    assert [(r["run_id"], r["v"]) for r in store.load()] == [("a", 1), ("b", 2)]


def test_atomic_writers(tmp_path):
    out = write_json_atomic(tmp_path / "d" / "results.json", {"x": np.arange(3), "y": 1.5})
    assert json.loads(out.read_text()) == {"x": [0, 1, 2], "y": 1.5}
    write_text_atomic(out, "replaced\n")
    assert out.read_text() == "replaced\n"
    assert sorted(p.name for p in out.parent.iterdir()) == ["results.json"]  # no temp files left
    with pytest.raises(TypeError):
        write_json_atomic(out, {"bad": object()})
    assert out.read_text() == "replaced\n"  # failed write leaves the old file intact
    assert sorted(p.name for p in out.parent.iterdir()) == ["results.json"]


def test_to_jsonable_rejects_non_string_keys():
    with pytest.raises(TypeError, match="dict keys"):
        to_jsonable({(1, 2): 3})


# --------------------------------------------------------------------------- runner


def test_runspec_validation():
    with pytest.raises(ValueError, match="run_id"):
        RunSpec("", {}, 0)
    with pytest.raises(ValueError, match=r"seed must be an integer in \[0, 4294967295\]"):
        RunSpec("a", {}, -1)
    with pytest.raises(TypeError, match="config"):
        RunSpec("a", [], 0)


def test_sweep_resumes_after_kill(tmp_path):
    global FAIL_AFTER
    specs = make_specs(10)
    store = ResultStore(tmp_path / "runs.jsonl")
    FAIL_AFTER = 4
    with pytest.raises(RuntimeError, match="simulated kill"):
        run_sweep(specs, toy_worker, store, progress=False)
    assert store.done_ids() == {f"run{i}" for i in range(4)}
    first_records = store.load()

    FAIL_AFTER = None
    worker_calls.clear()
    records = run_sweep(specs, toy_worker, store, progress=False)
    assert worker_calls == [f"run{i}" for i in range(4, 10)]  # finished runs were not recomputed
    assert [r["run_id"] for r in records] == [s.run_id for s in specs]
    ids = [json.loads(line)["run_id"] for line in store.path.read_text().splitlines()]
    assert sorted(ids) == sorted(s.run_id for s in specs)  # every run exactly once
    assert records[:4] == first_records

    # A third call is a no-op.
    worker_calls.clear()
    assert run_sweep(specs, toy_worker, store, progress=False) == records
    assert worker_calls == []


def test_sweep_record_contents(tmp_path):
    spec = make_specs(1)[0]
    (rec,) = run_sweep([spec], toy_worker, ResultStore(tmp_path / "r.jsonl"), progress=False)
    assert rec["run_id"] == "run0" and rec["seed"] == spec.seed
    assert rec["config"] == {"scale": 1.0, "tag": ["a", 0]}
    assert len(rec["simple_regret"]) == 5 and rec["final"] == rec["simple_regret"][-1]


def test_parallel_matches_sequential(tmp_path):
    specs = make_specs(6)
    seq = run_sweep(
        specs, toy_worker, ResultStore(tmp_path / "seq.jsonl"), n_jobs=1, progress=False
    )
    par = run_sweep(
        specs, toy_worker, ResultStore(tmp_path / "par.jsonl"), n_jobs=2, progress=False
    )
    assert par == seq


def _sleepy_worker(spec: RunSpec) -> dict:
    """Sleeps, then fails if told to, else logs that it finished (O_APPEND) and returns."""
    import time

    time.sleep(spec.config["sleep"])
    if spec.config["fail"]:
        raise RuntimeError("simulated crash")
    with open(spec.config["log"], "a", encoding="utf-8") as fh:
        fh.write(spec.run_id + "\n")
    return {"ok": True}


def test_parallel_sweep_stores_each_run_as_it_finishes_not_per_batch(tmp_path):
    # Quick runs make joblib's automatic batching group several runs per task; a batch's
    # results come back only when all of it is done, so a crash (or a kill) in a batch would
    # lose the runs before it that had finished. Each run must be stored on its own.
    log = tmp_path / "finished.log"
    specs = [
        RunSpec(
            f"r{i:02d}", {"sleep": 1.5 if i == 30 else 0.01, "fail": i == 30, "log": str(log)}, i
        )
        for i in range(40)
    ]
    store = ResultStore(tmp_path / "runs.jsonl")
    with pytest.raises(RuntimeError, match="simulated crash"):
        run_sweep(specs, _sleepy_worker, store, n_jobs=2, progress=False)
    finished_first = {r for r in log.read_text().split() if r < "r30"}
    assert len(finished_first) == 30  # all ran long before r30 crashed...
    assert finished_first <= {rec["run_id"] for rec in store.load()}  # ...and all were stored


def test_sweep_argument_checks(tmp_path):
    store = ResultStore(tmp_path / "runs.jsonl")
    specs = make_specs(2)
    with pytest.raises(ValueError, match="n_jobs"):
        run_sweep(specs, toy_worker, store, n_jobs=0)
    with pytest.raises(ValueError, match="unique run_ids"):
        run_sweep([specs[0], specs[0]], toy_worker, store)
    run_sweep(specs, toy_worker, store, progress=False)
    changed = RunSpec("run0", {"scale": 99.0}, specs[0].seed)
    with pytest.raises(ValueError, match="different config or seed"):
        run_sweep([changed], toy_worker, store)


def test_worker_must_return_dict_without_overriding_identity(tmp_path):
    store = ResultStore(tmp_path / "runs.jsonl")
    with pytest.raises(TypeError, match="worker must return a dict"):
        run_sweep(make_specs(1), _list_worker, store, progress=False)
    with pytest.raises(ValueError, match="reserved key 'seed'"):
        run_sweep(make_specs(1), _bad_seed_worker, store, progress=False)
    assert store.load() == []


def _list_worker(spec):
    return [1, 2]


def _bad_seed_worker(spec):
    return {"seed": spec.seed + 1}


def test_progress_bar_does_not_break(tmp_path, capsys):
    records = run_sweep(
        make_specs(3), toy_worker, ResultStore(tmp_path / "r.jsonl"), progress=True, desc="toy"
    )
    assert len(records) == 3


# --------------------------------------------------------------------------- seeds


def test_seed_for_deterministic_and_distinct():
    s = seed_for(0, "fig2a", "po-gp-ucb", 3)
    assert s == seed_for(0, "fig2a", "po-gp-ucb", 3)
    assert isinstance(s, int) and 0 <= s < 2**32
    others = {
        seed_for(1, "fig2a", "po-gp-ucb", 3),
        seed_for(0, "fig2a", "po-gp-ucb", 4),
        seed_for(0, "fig2a", "gp-ucb", 3),
        seed_for(0, "fig2a", "po-gp-ucb", "3"),
        seed_for(0, "fig2a", "po-gp-ucb"),
    }
    assert s not in others and len(others) == 5
    assert seed_for(0, np.int64(3)) == seed_for(0, 3)
    with pytest.raises(TypeError, match="keys must be str or int"):
        seed_for(0, 1.5)
    with pytest.raises(ValueError, match="base_seed"):
        seed_for(-1)


def test_seed_for_stable_across_processes():
    code = "from frontierbo.experiments.runner import seed_for; print(seed_for(7, 'a', 3))"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]),
    }
    outs = set()
    for hash_seed in ("1", "2"):  # different str-hash salts must not matter
        proc = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            env={**env, "PYTHONHASHSEED": hash_seed},
            check=True,
        )
        outs.add(int(proc.stdout))
    assert outs == {seed_for(7, "a", 3)}


# --------------------------------------------------------------------------- aggregate


def test_aggregate_mean_and_stderr():
    records = [
        {"run_id": "1", "m": "A", "r": [1.0, 4.0]},
        {"run_id": "2", "m": "A", "r": [3.0, 4.0]},
        {"run_id": "3", "m": "A", "r": [5.0, 10.0]},
        {"run_id": "4", "m": "B", "r": [2.0, 0.5]},
    ]
    agg = aggregate(records, lambda r: r["m"], "r")
    assert list(agg) == ["A", "B"]
    a = agg["A"]
    assert a["n"] == 3
    np.testing.assert_allclose(a["mean"], [3.0, 6.0])
    # std(ddof=1): [2, sqrt(12)]; divided by sqrt(3).
    np.testing.assert_allclose(a["stderr"], [2.0 / np.sqrt(3), 2.0])
    b = agg["B"]
    assert b["n"] == 1
    np.testing.assert_allclose(b["mean"], [2.0, 0.5])
    np.testing.assert_array_equal(b["stderr"], [0.0, 0.0])


def test_aggregate_errors():
    with pytest.raises(KeyError, match="value_key"):
        aggregate([{"run_id": "x"}], lambda r: 0, "r")
    with pytest.raises(ValueError, match="differing shapes"):
        aggregate([{"r": [1.0]}, {"r": [1.0, 2.0]}], lambda r: 0, "r")
    assert aggregate([], lambda r: 0, "r") == {}


# --------------------------------------------------------------------------- plots


def test_plot_regret_curves_writes_png(tmp_path):
    t = np.arange(1, 21)
    curves = {"GP-UCB": (1 / t, 0.1 / t), "PO-GP-UCB": (1.5 / t, 0.2 / t)}
    out = plot_regret_curves(curves, tmp_path / "fig" / "regret.png", "Synthetic", log_y=True)
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 1000
    assert sorted(p.name for p in out.parent.iterdir()) == ["regret.png"]
    with pytest.raises(ValueError, match="stderr"):
        plot_regret_curves({"x": ([1.0, 2.0], [0.1])}, tmp_path / "bad.png", "bad")
    with pytest.raises(ValueError, match="curves"):
        plot_regret_curves({}, tmp_path / "bad.png", "bad")


def test_plot_metric_vs_param_writes_png(tmp_path):
    x = np.log([0.1, 1.0, 10.0])
    series = {"PO-GP-UCB": (x, [0.5, 0.3, 0.2], [0.05, 0.04, 0.03])}
    out = plot_metric_vs_param(
        series, tmp_path / "eps.png", "final regret", "log epsilon", "simple regret S_T"
    )
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(ValueError, match="x must have length 3"):
        plot_metric_vs_param(
            {"a": ([1.0], [1.0, 2.0, 3.0], [0, 0, 0])}, tmp_path / "b.png", "t", "x", "y"
        )


@pytest.mark.parametrize(
    "scheduler", ["dsk", "Local", "", "tcp://host", "host:8786", "tcp://:8786", 4, object()]
)
def test_scheduler_must_be_local_dask_an_address_or_a_client(tmp_path, scheduler):
    store = ResultStore(tmp_path / "runs.jsonl")
    with pytest.raises(ValueError, match="scheduler must be 'local', 'dask', a Dask scheduler"):
        run_sweep(make_specs(2), toy_worker, store, scheduler=scheduler)
    assert not store.path.exists()
    with pytest.raises(ValueError, match="scheduler must be"):
        check_scheduler(scheduler)


@pytest.mark.parametrize("scheduler", ["local", None])
def test_local_scheduler_is_the_default_path(tmp_path, scheduler):
    ref = run_sweep(make_specs(3), toy_worker, ResultStore(tmp_path / "a.jsonl"), progress=False)
    store = ResultStore(tmp_path / "b.jsonl")
    assert run_sweep(make_specs(3), toy_worker, store, progress=False, scheduler=scheduler) == ref


@pytest.mark.parametrize("scheduler", ["dask", "tcp://127.0.0.1:8786", "tls://[::1]:8786"])
def test_dask_without_the_extra_gives_one_clear_error(tmp_path, monkeypatch, scheduler):
    monkeypatch.setitem(sys.modules, "distributed", None)  # makes `import distributed` fail
    store = ResultStore(tmp_path / "runs.jsonl")
    with pytest.raises(
        ImportError, match=r'needs the \[dask\] extra: pip install "frontierbo\[dask\]"'
    ):
        run_sweep(make_specs(2), toy_worker, store, scheduler=scheduler)
    assert worker_calls == []
    with pytest.raises(ImportError, match=r"needs the \[dask\] extra"):
        check_scheduler(scheduler)


def test_a_killed_sweep_takes_its_worker_processes_with_it(tmp_path):
    """SIGKILL of the sweep: its joblib workers end within seconds instead of finishing (and
    wasting) the long runs they hold."""
    import os
    import signal
    import subprocess
    import sys
    import textwrap
    import time

    script = tmp_path / "sweep.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import os, time
            from frontierbo.experiments.runner import RunSpec, run_sweep
            from frontierbo.experiments.store import ResultStore

            def worker(spec):
                with open({str(tmp_path)!r} + f"/pid-{{os.getpid()}}", "w"):
                    pass
                time.sleep(120)
                return {{}}

            if __name__ == "__main__":
                specs = [RunSpec(f"r{{i}}", {{}}, i) for i in range(4)]
                run_sweep(specs, worker, ResultStore({str(tmp_path / "runs.jsonl")!r}), 2, False)
            """
        )
    )
    sweep = subprocess.Popen([sys.executable, str(script)])
    try:
        deadline = time.time() + 60
        while len(list(tmp_path.glob("pid-*"))) < 2 and time.time() < deadline:
            time.sleep(0.2)
        pids = [int(p.name.split("-")[1]) for p in tmp_path.glob("pid-*")]
        assert len(pids) == 2, "the workers did not start"
    finally:
        sweep.send_signal(signal.SIGKILL)
        sweep.wait()

    def alive(pid):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        with open(f"/proc/{pid}/stat") as fh:  # a zombie has ended
            return fh.read().split()[2] != "Z"

    deadline = time.time() + 15
    while any(alive(p) for p in pids) and time.time() < deadline:
        time.sleep(0.2)
    survivors = [p for p in pids if alive(p)]
    for pid in survivors:  # do not leave them sleeping if the check fails
        os.kill(pid, signal.SIGKILL)
    assert not survivors
