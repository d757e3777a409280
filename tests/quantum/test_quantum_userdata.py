"""``frontierbo run quantum-bo``: Q-GP-UCB / GP-UCB / Q-LinUCB / LinUCB on a user's arm table."""

from __future__ import annotations

import importlib.util
import json
import re
import sys

import numpy as np
import pytest

from frontierbo.cli import main
from frontierbo.quantum.userdata import format_quantum_result, run_quantum_on_csv

ALGORITHMS = ("q-gp-ucb", "gp-ucb", "q-linucb", "linucb")
QUANTUM = ("q-gp-ucb", "q-linucb")
BUDGET = 2000


def write_gaussian(path, n=15, sigma=0.3):
    """1-D Gaussian arms, a clear peak at x = 0.6 (row 8 of 15)."""
    x = np.linspace(0.0, 1.0, n)
    means = np.round(np.exp(-((x - 0.6) ** 2) / 0.02), 4)
    lines = ["x,mean,sigma"] + [f"{a:.4f},{m:.4f},{sigma}" for a, m in zip(x, means, strict=True)]
    path.write_text("\n".join(lines) + "\n")
    return path, means


def write_bernoulli(path, n=12):
    """2-D Bernoulli arms on a grid, success probability increasing in x1 + x2 (also linear)."""
    rng = np.random.default_rng(5)
    pts = rng.uniform(size=(n, 2))
    p = np.round(0.1 + 0.4 * pts.sum(axis=1), 4)
    lines = ["x1,x2,p"] + [f"{a:.3f},{b:.3f},{q:.4f}" for (a, b), q in zip(pts, p, strict=True)]
    path.write_text("\n".join(lines) + "\n")
    return path, p


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    root = tmp_path_factory.mktemp("quantum-userdata")
    return {
        "gaussian": write_gaussian(root / "gauss.csv"),
        "bernoulli": write_bernoulli(root / "bern.csv"),
    }


@pytest.fixture(scope="module")
def results(tables):
    return {
        (alg, kind): run_quantum_on_csv(path, BUDGET, 0, algorithm=alg)
        for alg in ALGORITHMS
        for kind, (path, _) in tables.items()
    }


def independent_regret(result, means, budget):
    """Sum of gap x queries over the stages, the last one cut at ``budget``, from the table."""
    gaps = means.max() - means
    if "stages" in result:
        total = 0.0
        for st in result["stages"]:
            used = min(st["queries"], max(0, budget - st["started_at"]))
            total += gaps[st["arm"]] * used
        return total
    # classical: one query per stage, so exactly ``budget`` queries (queries_per_arm sums to it)
    return float(np.dot(gaps, result["queries_per_arm"]))


@pytest.mark.parametrize("kind", ["gaussian", "bernoulli"])
@pytest.mark.parametrize("alg", ALGORITHMS)
def test_budget_accounting_and_regret(results, tables, alg, kind):
    res = results[(alg, kind)]
    _, means = tables[kind]
    assert res["algorithm"] == alg and res["reward_model"] == kind and res["n_arms"] == means.size
    assert res["total_queries"] >= BUDGET > res["last_stage_start"]
    assert sum(res["queries_per_arm"]) == res["total_queries"]
    assert sum(res["stages_per_arm"]) == res["num_stages"]
    assert res["regret"]["at_budget"] == pytest.approx(independent_regret(res, means, BUDGET))
    assert res["regret"]["queries"][-1] == BUDGET
    assert res["regret"]["cumulative"][-1] == res["regret"]["at_budget"]
    assert np.all(np.diff(res["regret"]["cumulative"]) >= 0)
    assert res["best_arm"]["index"] == int(np.argmax(means))
    assert res["best_arm"]["mean"] == pytest.approx(means.max())
    visited = {i for i, c in enumerate(res["stages_per_arm"]) if c}
    assert set(res["distinct_arms"]) == visited
    assert res["parameters"]["initial"]["arm"] in visited
    if alg in QUANTUM:
        stages = res["stages"]
        assert len(stages) == res["num_stages"] and stages[0]["epsilon"] == 1.0
        assert stages[-1]["started_at"] == res["last_stage_start"]
        assert res["recommended"]["last_stage"]["index"] == stages[-1]["arm"]
        assert res["parameters"]["beta"] == "log"
    else:
        assert "stages" not in res and res["total_queries"] == BUDGET
        assert res["parameters"]["beta"] == pytest.approx(np.sqrt(2.0))
    json.dumps(res, allow_nan=False)  # strict JSON


def test_q_gp_ucb_finds_the_optimum(results, tables):
    res = results[("q-gp-ucb", "gaussian")]
    best = int(np.argmax(tables["gaussian"][1]))
    assert res["recommended"]["last_stage"]["index"] == best
    assert res["recommended"]["posterior_mean"]["index"] == best
    assert res["best_arm"]["features"] == {"x": pytest.approx(best / 14, abs=1e-4)}
    assert res["stages"][-1]["queries"] > res["stages"][1]["queries"]  # epsilon shrinks


def test_same_seed_same_result_other_seed_differs(tables):
    path, _ = tables["bernoulli"]
    a = run_quantum_on_csv(path, 800, 3)
    b = run_quantum_on_csv(path, 800, 3)
    c = run_quantum_on_csv(path, 800, 4)
    drop = ("seconds",)
    assert {k: v for k, v in a.items() if k not in drop} == {
        k: v for k, v in b.items() if k not in drop
    }
    assert a["stages"] != c["stages"]


def test_options_are_used_and_reported(tables):
    path, _ = tables["gaussian"]
    res = run_quantum_on_csv(
        path, 500, 1, width="1.5", weighting="reference", encoding="reference", delta=0.1
    )
    p = res["parameters"]
    assert p["beta"] == 1.5 and p["weighting"] == "reference" and p["encoding"] == "reference"
    assert p["delta"] == 0.1 and p["lengthscale"] == 0.2 and p["kernel"] == "squared_exponential"
    assert {st["beta"] for st in res["stages"][1:]} == {1.5}
    lin = run_quantum_on_csv(path, 300, 1, algorithm="linucb", width="theory")
    assert lin["parameters"]["kernel"] == "linear" and lin["parameters"]["lengthscale"] is None
    assert lin["parameters"]["encoding"] is None


def test_features_selection_and_normalisation(tmp_path):
    path = tmp_path / "t.csv"
    rows = ["name,a,b,const,p"] + [f"arm{i},{i * 10},{5 - i},7,{0.1 * i:.1f}" for i in range(6)]
    path.write_text("\n".join(rows) + "\n")
    res = run_quantum_on_csv(path, 200, 0, features=["a", "const"])
    assert res["features"] == ["a", "const"] and res["d"] == 2
    norm = res["parameters"]["normalisation"]
    assert norm == {"a": {"min": 0.0, "max": 50.0}, "const": {"min": 7.0, "max": 7.0}}
    assert res["best_arm"] == {"index": 5, "mean": 0.5, "features": {"a": 50.0, "const": 7.0}}


def test_result_json_and_format(tables, tmp_path):
    path, _ = tables["gaussian"]
    out = tmp_path / "nested" / "out"
    res = run_quantum_on_csv(path, 600, 0, out=out)
    stored = json.loads((out / "result.json").read_text())
    assert "seconds" not in stored and isinstance(res["seconds"], float)  # timing: printed only
    assert stored == json.loads(json.dumps({k: v for k, v in res.items() if k != "seconds"}))
    assert not [p.name for p in out.iterdir() if p.name != "result.json"]  # no temp file left
    text = format_quantum_result(res)
    assert "Q-GP-UCB" in text and "cumulative regret at T = 600" in text
    assert "wall time:" in text
    assert "more stages" in text or len(res["stages"]) <= 6
    classical = format_quantum_result(run_quantum_on_csv(path, 100, 0, algorithm="gp-ucb"))
    assert "most pulled arm" in classical


def test_cli_run_quantum_bo(tables, tmp_path, capsys):
    path, means = tables["gaussian"]
    out = tmp_path / "cli"
    argv = ["run", "quantum-bo", "--data", str(path), "--queries", "500", "--out", str(out)]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "Q-GP-UCB" in text and "result.json" in text
    stored = json.loads((out / "result.json").read_text())
    assert stored["algorithm"] == "q-gp-ucb" and stored["budget"] == 500
    assert stored["best_arm"]["index"] == int(np.argmax(means))
    argv = ["run", "quantum-bo", "--algorithm", "linucb", "--data", str(path), "--queries", "50"]
    assert main([*argv, "--width", "2", "--seed", "3"]) == 0
    text = capsys.readouterr().out
    assert "LinUCB" in text
    # the old spelling --beta is refused with its new name (no alias: one flag, one meaning)
    assert main([*argv, "--beta", "2", "--seed", "3"]) == 2
    assert "--beta was renamed --width" in capsys.readouterr().err


def _bad(tmp_path, content):
    path = tmp_path / "bad.csv"
    path.write_text(content)
    return str(path)


GOOD = "x,p\n0,0.1\n1,0.5\n2,0.9\n"


@pytest.mark.parametrize(
    ("content", "extra", "message"),
    [
        (None, [], r"--data '.*none\.csv' does not exist"),
        ("x,y\n0,1\n1,2\n", [], r"no reward columns.*'p'.*'mean' and 'sigma'"),
        ("x,mean\n0,1\n1,2\n", [], r"missing column 'sigma'"),
        ("x,p,mean\n0,0.1,1\n1,0.2,2\n", [], r"both .*'p'.*\['mean'\]"),
        ("x,p\n0,0.1\n1,abc\n", [], r"reward column 'p', row 1 \(file line 3\): 'abc' is not a"),
        ("x,p\n0,0.1\n1,nan\n", [], r"reward column 'p', row 1 .*finite"),
        ("x,p\n0,0.1\n1,\n", [], r"reward column 'p', row 1 .*is empty"),
        ("x,p\n0,0.1\n1,1.5\n", [], r"reward column 'p', row 1 .*p = 1.5 is outside \[0, 1\]"),
        ("x,mean,sigma\n0,1,0.3\n1,2,0\n", [], r"reward column 'sigma', row 1 .*must be > 0"),
        ("x,p\n0,0.1\nfoo,0.2\n", [], r"feature column 'x' is not numeric \(row 1"),
        ("x,p\n0,0.1\ninf,0.2\n", [], r"feature column 'x', row 1 .*finite"),
        ("x,p\n0,0.1\n", [], r"at least 2 data rows"),
        ("p\n0.1\n0.2\n", [], r"at least one feature column"),
        (GOOD, ["--features", "z"], r"--features column\(s\) \['z'\] not found"),
        (GOOD, ["--features", "p"], r"--features must not contain the reward column"),
        (GOOD, ["--queries", "0"], r"budget \(--queries\) must be an integer in \[1, inf\]"),
        (
            GOOD,
            ["--failure-probability", "1"],
            r"delta \(--failure-probability\) must be in \(0, 1\)",
        ),
        (GOOD, ["--failure-probability", "0"], r"delta \(--failure-probability\)"),
        (GOOD, ["--lengthscale", "0"], r"lengthscale \(--lengthscale\) must be in \(0, inf\)"),
        (GOOD, ["--lengthscale", "-1"], r"lengthscale \(--lengthscale\)"),
        (GOOD, ["--width", "wide"], r"width \(--width\) must be 'log', 'theory' or a positive"),
        (GOOD, ["--width", "-1"], r"width \(--width\) must be in \(0, inf\)"),
        (GOOD, ["--seed", "-1"], r"seed \(--seed\)"),
        (GOOD, ["--algorithm", "tgp"], r"argument --algorithm: invalid choice: 'tgp'"),
        (
            GOOD,
            ["--algorithm", "gp-ucb", "--weighting", "reference"],
            r"--weighting applies to q-g",
        ),
        (GOOD, ["--algorithm", "linucb", "--encoding", "exact"], r"--encoding applies to q-gp-"),
        (GOOD, ["--algorithm", "gp-ucb", "--backend", "aer"], r"--backend applies to q-gp-ucb"),
        (GOOD, ["--algorithm", "q-linucb", "--lengthscale", "1"], r"--lengthscale applies to"),
        (GOOD, ["--weighting", "w"], r"argument --weighting: invalid choice: 'w'"),
        # another system's flags: argparse rejects them, pointing at this command's --help
        (GOOD, ["--target", "p"], r"unrecognized arguments: --target p \(see .*quantum-bo --help"),
        (GOOD, ["--minimize"], r"unrecognized arguments: --minimize"),
        (GOOD, ["--epsilon", "1"], r"unrecognized arguments: --epsilon 1"),
        (GOOD, ["--r", "2"], r"unrecognized arguments: --r 2"),
        (GOOD, ["--mechanism", "gaussian"], r"unrecognized arguments: --mechanism"),
        (GOOD, ["--n-init", "2"], r"unrecognized arguments: --n-init 2"),
        (GOOD, ["--beta-scale", "0.1"], r"unrecognized arguments: --beta-scale"),
        (GOOD, ["--exclude", "x"], r"unrecognized arguments: --exclude x"),
    ],
)
def test_cli_quantum_bo_bad_inputs_are_named(tmp_path, capsys, content, extra, message):
    path = str(tmp_path / "none.csv") if content is None else _bad(tmp_path, content)
    out = tmp_path / "never"
    argv = ["run", "quantum-bo", "--data", path, "--queries", "20", "--out", str(out)]
    assert main([*argv, *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith("frontierbo: error: ") and len(err.strip().splitlines()) == 1
    assert re.search(message, err), err
    assert not out.exists()  # nothing written before the inputs are validated


def test_cli_out_that_is_a_file(tmp_path, capsys):
    path = _bad(tmp_path, GOOD)
    (tmp_path / "file").write_text("x")
    argv = ["run", "quantum-bo", "--data", path, "--queries", "20", "--out", str(tmp_path / "file")]
    assert main(argv) == 2
    assert "--out" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["ldp-bo", "--algorithm", "q-gp-ucb"], r"--algorithm: invalid choice: 'q-gp-ucb'"),
        (["ldp-bo", "--algorithm", "tgp", "--lengthscale", "1"], r"unrecognized.*--lengthscale"),
        (["ldp-bo", "--algorithm", "tgp", "--beta", "1"], r"unrecognized arguments: --beta 1"),
        (["gp-ucb", "--target", "p", "--backend", "aer"], r"unrecognized arguments: --backend"),
        (["gp-ucb", "--target", "p", "--weighting", "paper"], r"unrecognized.*--weighting"),
        (
            ["po-gp-ucb", "--target", "p", "--epsilon", "1", "--delta", "0.1", "--encoding", "x"],
            r"run po-gp-ucb: unrecognized.*--encoding",
        ),
        (["gp-ucb", "--target", "p", "--algorithm", "linucb"], r"unrecognized.*--algorithm"),
    ],
)
def test_cli_other_commands_reject_quantum_options(tmp_path, capsys, argv, message):
    path = _bad(tmp_path, GOOD)
    assert main(["run", *argv, "--data", path, "-T", "2"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("frontierbo: error: ") and len(err.strip().splitlines()) == 1
    assert re.search(message, err), err


def test_library_rejects_bad_choices(tables):
    path, _ = tables["bernoulli"]
    for kwargs, name in [
        ({"algorithm": "ucb"}, "algorithm"),
        ({"weighting": "w"}, "weighting"),
        ({"encoding": "e"}, "encoding"),
        ({"backend": "gpu"}, "backend"),
    ]:
        with pytest.raises(ValueError, match=name):
            run_quantum_on_csv(path, 10, **kwargs)
    with pytest.raises(TypeError, match="budget"):
        run_quantum_on_csv(path, 10.5)


def test_library_call_obeys_the_same_applies_rules(tables):
    """The Python call refuses what the command line refuses: a setting of the quantum oracle
    for a classical method, a GP length-scale for a linear one (None keeps the default)."""
    path, _ = tables["bernoulli"]
    for algorithm, kwargs, flag in [
        ("gp-ucb", {"backend": "numpy"}, "--backend"),
        ("linucb", {"weighting": "paper"}, "--weighting"),
        ("gp-ucb", {"encoding": "reference"}, "--encoding"),
        ("q-linucb", {"lengthscale": 0.2}, "--lengthscale"),
        ("linucb", {"lengthscale": 1.0}, "--lengthscale"),
    ]:
        with pytest.raises(ValueError, match=rf"^{flag} applies to .* only, not {algorithm}"):
            run_quantum_on_csv(path, 10, algorithm=algorithm, **kwargs)
    res = run_quantum_on_csv(path, 10, algorithm="gp-ucb", lengthscale=None, backend=None)
    assert res["parameters"]["lengthscale"] == 0.2 and res["parameters"]["backend"] is None


def test_declared_choices_are_the_algorithms_own():
    from frontierbo.quantum.q_gp_ucb import WEIGHTINGS, WIDTH_SCHEDULES
    from frontierbo.quantum.rewards import ENCODINGS
    from frontierbo.quantum.system import RUN, WIDTHS

    assert tuple(WEIGHTINGS) == RUN.param("weighting").choices
    assert tuple(ENCODINGS) == RUN.param("encoding").choices
    assert tuple(WIDTH_SCHEDULES) == WIDTHS


def test_missing_qiskit_names_the_extra(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "qiskit_algorithms", None)  # import fails as if absent
    path = _bad(tmp_path, GOOD)
    out = tmp_path / "never"
    argv = ["run", "quantum-bo", "--data", path, "--queries", "20", "--backend", "statevector"]
    assert main([*argv, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "backend (--backend)" in err and "frontierbo[quantum]" in err
    assert len(err.strip().splitlines()) == 1 and not out.exists()


def test_q_linucb_zero_feature_arm_is_explained(tmp_path, capsys):
    # every mean < 0: the UCB of the arm at the origin (score 0) wins, and it has no variance
    path = _bad(tmp_path, "x,mean,sigma\n0,-1,0.3\n0.5,-0.5,0.3\n1,-0.8,0.3\n")
    assert (
        main(["run", "quantum-bo", "--algorithm", "q-linucb", "--data", path, "--queries", "300"])
        == 2
    )
    err = capsys.readouterr().err
    assert err.startswith("frontierbo: error: q-linucb:") and "no intercept" in err


@pytest.mark.skipif(
    importlib.util.find_spec("qiskit_algorithms") is None, reason="needs frontierbo[quantum]"
)
def test_statevector_backend_smoke(tmp_path):
    path = _bad(tmp_path, GOOD)
    res = run_quantum_on_csv(path, 30, 0, backend="statevector")
    assert res["parameters"]["backend"] == "statevector"
    assert res["total_queries"] >= 30 > res["last_stage_start"]
    assert all(0.0 <= st["estimate"] <= 1.0 for st in res["stages"])


def test_identical_runs_write_byte_identical_result_json(tables, tmp_path):
    """Wall-clock time stays out of result.json, so a seed fixes the file's bytes."""
    path, _ = tables["bernoulli"]
    run_quantum_on_csv(path, 300, 5, out=tmp_path / "a")
    run_quantum_on_csv(path, 300, 5, out=tmp_path / "b")
    first = (tmp_path / "a" / "result.json").read_bytes()
    assert first == (tmp_path / "b" / "result.json").read_bytes()
    assert b"seconds" not in first


@pytest.mark.parametrize(
    ("header", "rows", "column"),
    [
        ("x,p", [f"{i},0.4" for i in range(5)], "p"),
        ("x,mean,sigma", [f"{i},1.5,{0.1 + i}" for i in range(5)], "mean"),
    ],
)
def test_a_constant_reward_is_refused_like_a_constant_target(tmp_path, header, rows, column):
    """One rule for every `run` command: a constant objective has every arm optimal."""
    path = tmp_path / "const.csv"
    path.write_text("\n".join([header, *rows]) + "\n")
    with pytest.raises(
        ValueError,
        match=rf"reward column '{column}' has the same value .* every "
        r"arm is optimal and there is nothing to optimise",
    ):
        run_quantum_on_csv(path, 50, 0)


@pytest.mark.parametrize(("cells", "column"), [("1e308,0.5", "x"), ("0.5,1e200", "mean")])
def test_values_near_the_float_limit_are_named_before_any_work(tmp_path, cells, column):
    path = tmp_path / "huge.csv"
    rows = ["x,mean,sigma", f"{cells},1", "0.1,0.2,1", "0.3,0.9,1"]
    path.write_text("\n".join(rows) + "\n")
    with pytest.raises(
        ValueError,
        match=rf"column '{column}', row 0 \(file line 2\): .* too large"
        r" in magnitude; every value must satisfy \|value\| <= 1e\+150",
    ):
        run_quantum_on_csv(path, 50, 0)
