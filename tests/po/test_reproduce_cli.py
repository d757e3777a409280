"""End-to-end: the reproduction pipeline (resume included), the demo and the CLI."""

import json
import os
import warnings
from dataclasses import replace

import numpy as np
import pytest

from frontierbo.cli import main
from frontierbo.experiments import ResultStore
from frontierbo.po import experiment as exp
from frontierbo.po import report
from frontierbo.po.problems.synthetic import synthetic_gp_grid
from frontierbo.po.report import reproduce

pytestmark = pytest.mark.filterwarnings(
    "ignore::frontierbo.po.random_projection.NotDifferentiallyPrivateWarning"
)


def small_synthetic(name):
    assert name == "synthetic"
    return synthetic_gp_grid(0, grid_size=25)


def reproduce_small(out, runs=2):
    """The synthetic reproduction on a 25 x 25 grid."""
    return reproduce(
        out, datasets=("synthetic",), runs=runs, progress=False, problem_factory=small_synthetic
    )


def test_configurations_cover_sweep_tables_and_privacy_once():
    setup = exp.SETUPS["synthetic"]
    configs = exp.configurations(setup)
    assert len(configs) == len(set(configs))
    assert configs[0] == (exp.NON_PRIVATE, None, None)
    expected = {(exp.PO, le, setup.sweep_r) for le in setup.sweep_log_eps}
    expected |= {(exp.PO, t.log_eps, r) for t in setup.tables for r in t.paper}
    for le in setup.privacy_grid:
        expected |= {(exp.PO, le, setup.sweep_r), (exp.GAUSSIAN, le, None)}
        expected.add((exp.GAUSSIAN_AWARE, le, None))
    assert set(configs) == expected | {(exp.NON_PRIVATE, None, None)}
    assert 1.1 in setup.privacy_grid  # the threshold eps is on the privacy grid


def test_reproduce_writes_every_artefact(tmp_path):
    result = reproduce_small(tmp_path)
    for name in ("results.json", "summary.csv", "report.md", "runs.jsonl"):
        assert (tmp_path / name).stat().st_size > 0
    assert (tmp_path / "fig_synthetic_eps_sweep.png").exists()
    assert (tmp_path / "fig_synthetic_r_sweep.png").exists()
    report = (tmp_path / "report.md").read_text()
    assert (
        "Table 1" in report and "Table 3" in report and "**not** differentially private" in report
    )
    assert "## Audit of the published release" in report and "9997/9997" not in report
    assert "ours, ref" in report and "S + omega" in report and "variance" in report
    assert "paper ≈ 0.003" in report  # the derived non-private baseline beside ours
    assert result["audit"][0]["distinguisher"]["accuracy"] == 1.0
    summary = result["datasets"]["synthetic"]
    for config in summary["configs"].values():
        s = np.asarray(config["mean"])
        assert len(s) == 51 and np.all(np.diff(s) <= 1e-12) and config["n_runs"] == 2
    loaded = json.loads((tmp_path / "results.json").read_text())
    assert loaded["runs"] == 2
    n_lines = len((tmp_path / "summary.csv").read_text().strip().splitlines())
    assert n_lines == 1 + len(summary["configs"])


def test_options_quick_defaults_and_bad_datasets(tmp_path):
    rep = report.REPRODUCTION
    assert rep.options(tmp_path).runs == 50 and rep.options(tmp_path, quick=True).runs == 3
    assert rep.options(tmp_path, quick=True, runs=7).runs == 7
    assert rep.options(tmp_path).datasets == ("synthetic", "loan", "property", "branin")
    assert rep.options(tmp_path, datasets=["loan", "loan"]).datasets == ("loan",)
    with pytest.raises(ValueError, match=r"--datasets must be among \['synthetic', .*'mnist'"):
        reproduce(tmp_path / "x", datasets=["synthetic", "mnist"])
    with pytest.raises(ValueError, match=r"runs \(--runs\)"):
        reproduce(tmp_path / "x", runs=0)
    with pytest.raises(TypeError, match="beta_scale"):
        rep.options(tmp_path, beta_scale=0.1)
    assert rep.options(tmp_path)["synthetic_geometry"] == "authors"
    with pytest.raises(ValueError, match="synthetic_geometry must be one of"):
        reproduce(tmp_path / "x", synthetic_geometry="wide")
    assert not (tmp_path / "x").exists()  # nothing written before the inputs are valid


def test_common_random_numbers_within_a_run(tmp_path):
    reproduce_small(tmp_path)
    records = ResultStore(tmp_path / "runs.jsonl").load()
    by_run = {}
    for rec in records:
        by_run.setdefault(rec["config"]["run"], set()).add(rec["seed"])
    assert all(len(seeds) == 1 for seeds in by_run.values())
    assert len({next(iter(s)) for s in by_run.values()}) == 2


def test_interrupted_sweep_resumes_without_losing_or_repeating(tmp_path, monkeypatch):
    calls = []
    real = report.REPRODUCTION

    def dying_worker(spec):
        if len(calls) == 7:
            raise KeyboardInterrupt("killed")
        calls.append(spec.run_id)
        return exp.run_worker(spec)

    monkeypatch.setattr(report, "REPRODUCTION", replace(real, worker=dying_worker))
    with pytest.raises(KeyboardInterrupt):
        reproduce_small(tmp_path)
    stored = ResultStore(tmp_path / "runs.jsonl").load()
    assert [r["run_id"] for r in stored] == calls
    monkeypatch.setattr(report, "REPRODUCTION", real)
    reproduce_small(tmp_path)
    ids = [r["run_id"] for r in ResultStore(tmp_path / "runs.jsonl").load()]
    setup = exp.SETUPS["synthetic"]
    n_configs = sum(len(exp.configurations(setup, p)) for p in exp.PROFILES)
    assert len(ids) == len(set(ids)) == 2 * n_configs
    assert ids[:7] == calls


def test_reproduce_is_deterministic(tmp_path):
    a = reproduce_small(tmp_path / "a", runs=1)
    b = reproduce_small(tmp_path / "b", runs=1)
    for key, config in a["datasets"]["synthetic"]["configs"].items():
        np.testing.assert_array_equal(
            config["mean"], b["datasets"]["synthetic"]["configs"][key]["mean"]
        )


def test_problem_cache_round_trip(tmp_path):
    problem = small_synthetic("synthetic")
    path = exp.save_problem(problem, tmp_path / "p.npz")
    loaded = exp.load_problem(str(path))
    np.testing.assert_array_equal(loaded.inputs, problem.inputs)
    np.testing.assert_array_equal(loaded.values, problem.values)
    assert loaded.lengthscale == problem.lengthscale and loaded.meta == problem.meta
    assert exp.problem_checksum(loaded) == exp.problem_checksum(problem)
    with pytest.raises(ValueError, match="does not hold the problem"):
        exp.load_problem(str(path), "0" * 64)


def test_problem_files_get_unique_temporary_names(tmp_path, monkeypatch):
    """Two sweeps writing the same problem file must not share a temporary file."""
    names, real = [], os.replace

    def recording_replace(src, dst, *args, **kwargs):
        names.append(str(src))
        return real(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "replace", recording_replace)
    problem = small_synthetic("synthetic")
    exp.save_problem(problem, tmp_path / "p.npz")
    exp.save_problem(problem, tmp_path / "p.npz")
    assert len(names) == 2 and names[0] != names[1]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.npz"]  # no temporary left


def test_resume_does_not_depend_on_how_out_is_spelled(tmp_path, monkeypatch):
    """--out /abs/rep, then --out rep from its parent, then the folder moved: nothing re-runs."""
    calls = []
    real = report.REPRODUCTION

    def counting_worker(spec):
        calls.append(spec.run_id)
        return exp.run_worker(spec)

    monkeypatch.setattr(report, "REPRODUCTION", replace(real, worker=counting_worker))
    first = reproduce_small(tmp_path / "rep", runs=1)
    n_runs = len(calls)
    assert n_runs > 0
    monkeypatch.chdir(tmp_path)
    again = reproduce_small("rep", runs=1)
    (tmp_path / "rep").rename(tmp_path / "moved")
    moved = reproduce_small(tmp_path / "moved", runs=1)
    assert len(calls) == n_runs  # nothing recomputed
    for result in (again, moved):
        for key, config in first["datasets"]["synthetic"]["configs"].items():
            other = result["datasets"]["synthetic"]["configs"][key]
            np.testing.assert_array_equal(other["mean"], config["mean"])


def test_specs_key_on_content_and_share_what_the_profiles_share(tmp_path):
    problem = small_synthetic("synthetic")
    setup = exp.SETUPS["synthetic"]
    path = exp.save_problem(problem, tmp_path / "p.npz")
    specs = exp.dataset_specs(setup, problem, path, 2, 0)
    assert all(str(tmp_path) not in json.dumps(s.config) for s in specs)
    assert {s.config["problem_sha256"] for s in specs} == {exp.problem_checksum(problem)}
    # a new GP sample per run, shared by every configuration of that run (and both profiles)
    by_run = {}
    for s in specs:
        by_run.setdefault(s.config["run"], set()).add(s.config["function_seed"])
    assert all(len(v) == 1 for v in by_run.values()) and by_run[0] != by_run[1]
    # reference profile: one M per (run, r) for every eps; paper profile: one per configuration
    for profile, shared in (("paper", False), ("reference", True)):
        seeds = {
            (s.config["log_eps"], s.config["run"]): s.config["release_seed"]
            for s in specs
            if s.config["profile"] == profile
            and s.config["method"] == exp.PO
            and s.config["r"] == 10
        }
        assert (seeds[(0.9, 0)] == seeds[(1.1, 0)]) is shared
        assert seeds[(1.1, 0)] != seeds[(1.1, 1)]
    ref = [s for s in specs if s.config["profile"] == "reference"]
    assert ref and all(s.run_id.startswith("synthetic|ref|") for s in ref)
    assert not any(s.config["method"] in exp.PRIVATE_METHODS for s in ref)


def test_cli_demo(tmp_path, capsys):
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert main(["demo", "--out", str(tmp_path), "--runs", "2"]) == 0
    out, err = capsys.readouterr()
    assert "PO-GP-UCB eps=e^1.1" in out
    # the NOT-DP caveat is said once: the table's last line, not also as a warning (issue 60)
    said = [str(w.message) for w in caught] + (out + err).splitlines()
    assert sum("NOT differentially private" in line for line in said) == 1, said
    assert (tmp_path / "demo_simple_regret.png").stat().st_size > 0
    # it runs only what it prints: the baseline and three epsilons, 2 runs each
    printed = [line for line in out.splitlines() if line.startswith(("GP-UCB (", "PO-GP-UCB eps"))]
    assert len(printed) == 4
    assert len(ResultStore(tmp_path / "runs.jsonl").load()) == 4 * 2


def _csv(tmp_path, rows=60):
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (rows, 2))
    y = np.sin(3 * X[:, 0]) + X[:, 1]
    path = tmp_path / "data.csv"
    lines = ["a,b,y"] + [f"{a},{b},{v}" for (a, b), v in zip(X, y, strict=True)]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--epsilon", "0", "--delta", "0.1", "--r", "3"], "epsilon"),
        (["--epsilon", "1", "--delta", "1.5", "--r", "3"], "delta"),
        (["--epsilon", "1", "--delta", "0.1", "--r", "0"], "r"),
        (["--epsilon", "nan", "--delta", "0.1", "--r", "3"], "epsilon"),
    ],
)
def test_cli_run_rejects_bad_privacy_parameters(tmp_path, capsys, extra, message):
    path = _csv(tmp_path)
    args = [
        "run",
        "po-gp-ucb",
        "--data",
        str(path),
        "--target",
        "y",
        "-T",
        "5",
        "--out",
        str(tmp_path / "o"),
    ]
    assert main(args + extra) == 2
    err = capsys.readouterr().err
    assert (
        err.startswith("frontierbo: error:")
        and message in err
        and len(err.strip().splitlines()) == 1
    )
    assert not (tmp_path / "o").exists()


def test_cli_run_missing_column_and_file(tmp_path, capsys):
    path = _csv(tmp_path)
    assert main(["run", "gp-ucb", "--data", str(path), "--target", "price", "-T", "5"]) == 2
    assert "price" in capsys.readouterr().err
    assert (
        main(["run", "gp-ucb", "--data", str(tmp_path / "none.csv"), "--target", "y", "-T", "5"])
        == 2
    )
    assert "--data" in capsys.readouterr().err
    assert main(["run", "gp-ucb", "--data", str(path), "--target", "y", "-T", "0"]) == 2
    assert "iterations" in capsys.readouterr().err


def test_cli_run_po_gp_ucb_writes_result(tmp_path, capsys):
    path = _csv(tmp_path)
    out = tmp_path / "o"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        code = main(
            [
                "run",
                "po-gp-ucb",
                "--data",
                str(path),
                "--target",
                "y",
                "-T",
                "8",
                "--epsilon",
                "5",
                "--delta",
                "0.01",
                "--r",
                "4",
                "--out",
                str(out),
            ]
        )
    assert code == 0
    result = json.loads((out / "result.json").read_text())
    assert result["algorithm"] == "po-gp-ucb" and len(result["queried_indices"]) == 8
    assert "NOT differentially private" in capsys.readouterr().out


def test_cli_reproduce_rejects_unknown_dataset(capsys):
    assert main(["reproduce", "po-gp-ucb", "--quick", "--datasets", "mnist"]) == 2
    assert "--datasets" in capsys.readouterr().err


def test_cli_run_gaussian_mechanism_is_private_and_says_what_is_not(tmp_path, capsys):
    path = _csv(tmp_path)
    out = tmp_path / "g"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the DP release must not raise the not-DP warning
        code = main(
            ["run", "po-gp-ucb", "--mechanism", "gaussian", "--data", str(path), "--target", "y"]
            + ["-T", "6", "--epsilon", "3", "--delta", "1e-4", "--out", str(out)]
        )
    assert code == 0
    result = json.loads((out / "result.json").read_text())
    assert result["release"]["mechanism"] == "gaussian" and result["release"]["noise_std"] > 0
    assert result["privacy"].startswith("(3, 0.0001)-DP") and "NOT covered" in result["privacy"]
    assert "Gaussian, noise sd=" in capsys.readouterr().out


def test_dask_local_cluster_finds_the_problem_from_a_relative_out(tmp_path, monkeypatch):
    """Workers of a LocalCluster read the problem file by its resolved path; a local resume
    afterwards (the same runs, keyed on content) recomputes nothing."""
    pytest.importorskip("dask.distributed")
    monkeypatch.chdir(tmp_path)
    kwargs = {"datasets": ("synthetic",), "runs": 1, "progress": False}
    dask_result = reproduce(
        "rep", n_jobs=2, scheduler="dask", problem_factory=small_synthetic, **kwargs
    )
    n_stored = len(ResultStore(tmp_path / "rep" / "runs.jsonl").load())
    local = reproduce(tmp_path / "rep", problem_factory=small_synthetic, **kwargs)
    assert len(ResultStore(tmp_path / "rep" / "runs.jsonl").load()) == n_stored
    key = exp.config_key(exp.PO, 1.1, 10, exp.REFERENCE)
    np.testing.assert_array_equal(
        dask_result["datasets"]["synthetic"]["configs"][key]["mean"],
        local["datasets"]["synthetic"]["configs"][key]["mean"],
    )
