"""Tests for the "your own data" entry point (frontierbo.po.userdata)."""

from __future__ import annotations

import csv
import json
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

from frontierbo.io import RESULT_FILENAME
from frontierbo.po.random_projection import NotDifferentiallyPrivateWarning
from frontierbo.po.userdata import PRIVACY_NOTE, format_result, load_csv_problem, run_on_csv

PO_ARGS = {"epsilon": 2.0, "delta": 1e-3, "r": 10}


def write_csv(path: Path, header, rows) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def smooth(X: np.ndarray) -> np.ndarray:
    """A smooth 2-D function with one main bump; the second input has a 10x larger scale."""
    a, b = X[:, 0], X[:, 1] / 10.0
    return np.exp(-((a - 0.5) ** 2 + (b + 0.3) ** 2)) + 0.3 * np.sin(a)


@pytest.fixture(scope="module")
def smooth_csv(tmp_path_factory) -> Path:
    """200 rows: numeric a, b, target y, and a non-numeric label column."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-2.0, 2.0, size=(200, 2)) * [1.0, 10.0]
    y = smooth(X)
    rows = [[X[i, 0], X[i, 1], y[i], f"row{i}"] for i in range(len(y))]
    path = tmp_path_factory.mktemp("data") / "smooth.csv"
    return write_csv(path, ["a", "b", "y", "label"], rows)


@pytest.fixture(scope="module")
def gp_result(smooth_csv) -> dict:
    return run_on_csv(smooth_csv, "y", "gp-ucb", 20, 7, features=["a", "b"])


@pytest.fixture
def tiny_csv(tmp_path) -> Path:
    rows = [[0.0, 1.0, 3.0], [1.0, 0.5, 2.0], [2.0, 0.0, 5.0], [3.0, 2.0, 1.0], [4.0, 1.5, 4.0]]
    return write_csv(tmp_path / "tiny.csv", ["x1", "x2", "f"], rows)


# -- load_csv_problem ----------------------------------------------------------------------------
def test_load_defaults_to_all_other_columns(tiny_csv):
    X, y, names = load_csv_problem(tiny_csv, "f")
    assert names == ["x1", "x2"]
    assert X.shape == (5, 2) and X.dtype == float
    np.testing.assert_array_equal(y, [3.0, 2.0, 5.0, 1.0, 4.0])
    np.testing.assert_array_equal(X[:, 0], [0, 1, 2, 3, 4])


def test_load_explicit_features_and_order(tiny_csv):
    X, _, names = load_csv_problem(tiny_csv, "f", features=["x2", "x1"])
    assert names == ["x2", "x1"]
    np.testing.assert_array_equal(X[:, 1], [0, 1, 2, 3, 4])
    X1, _, names1 = load_csv_problem(tiny_csv, "f", features="x2")
    assert names1 == ["x2"] and X1.shape == (5, 1)


def test_load_minimize_negates(tiny_csv):
    _, y, _ = load_csv_problem(tiny_csv, "f")
    _, y_min, _ = load_csv_problem(tiny_csv, "f", minimize=True)
    np.testing.assert_array_equal(y_min, -y)


def test_load_tolerates_bom_blank_lines_and_spaces(tmp_path):
    path = tmp_path / "bom.csv"
    path.write_text("\ufeffx , f\n1, 2\n\n 3 ,4\n", encoding="utf-8")
    X, y, names = load_csv_problem(path, "f")
    assert names == ["x"]
    np.testing.assert_array_equal(X[:, 0], [1.0, 3.0])
    np.testing.assert_array_equal(y, [2.0, 4.0])


def test_missing_file_names_data(tmp_path):
    with pytest.raises(FileNotFoundError, match="--data .*does not exist"):
        load_csv_problem(tmp_path / "nope.csv", "f")
    with pytest.raises(FileNotFoundError, match="--data .*directory"):
        load_csv_problem(tmp_path, "f")


def test_missing_target_lists_columns(tiny_csv):
    with pytest.raises(ValueError, match=r"--target column 'g' not found.*'x1', 'x2', 'f'"):
        load_csv_problem(tiny_csv, "g")


@pytest.mark.parametrize(
    ("features", "pattern"),
    [
        (["x1", "zz"], r"--features column\(s\) \['zz'\] not found.*available columns"),
        (["x1", "f"], r"--features must not contain the --target column 'f'"),
        (["x1", "x1"], r"--features lists column\(s\) more than once"),
        ([], r"--features must name at least one column"),
    ],
)
def test_bad_features(tiny_csv, features, pattern):
    with pytest.raises(ValueError, match=pattern):
        load_csv_problem(tiny_csv, "f", features=features)


def test_non_numeric_feature_names_column_and_row(tmp_path):
    path = write_csv(tmp_path / "d.csv", ["x", "f"], [[1, 2], [2, 3], ["abc", 4]])
    with pytest.raises(ValueError, match=r"feature column 'x', row 2 \(file line 4\): 'abc'"):
        load_csv_problem(path, "f", features=["x"])


def test_non_numeric_default_column_suggests_features(tmp_path):
    path = write_csv(tmp_path / "d.csv", ["x", "name", "f"], [[1, "a", 2], [2, "b", 3]])
    with pytest.raises(ValueError, match=r"column 'name' is not numeric.*--features"):
        load_csv_problem(path, "f")
    X, _, names = load_csv_problem(path, "f", features=["x"])  # the suggested fix works
    assert names == ["x"] and X.shape == (2, 1)


@pytest.mark.parametrize("bad", ["", "nan", "NaN", "inf", "-inf"])
@pytest.mark.parametrize(("column", "role"), [("x", "feature"), ("f", "--target")])
def test_missing_or_non_finite_values(tmp_path, bad, column, role):
    rows = [[1.0, 2.0], [2.0, 3.0], [3.0, 4.0]]
    rows[1][0 if column == "x" else 1] = bad
    path = write_csv(tmp_path / "d.csv", ["x", "f"], rows)
    with pytest.raises(ValueError, match=rf"{role} column '{column}', row 1 \(file line 3\)"):
        load_csv_problem(path, "f")


def test_non_numeric_target(tmp_path):
    path = write_csv(tmp_path / "d.csv", ["x", "f"], [[1, "high"], [2, 3]])
    with pytest.raises(ValueError, match=r"--target column 'f', row 0 .*'high' is not a number"):
        load_csv_problem(path, "f")


@pytest.mark.parametrize("n_rows", [0, 1])
def test_too_few_rows(tmp_path, n_rows):
    path = write_csv(tmp_path / "d.csv", ["x", "f"], [[1.0, 2.0]] * n_rows)
    with pytest.raises(ValueError, match=rf"at least 2 data rows \(n >= 2\), got n={n_rows}"):
        load_csv_problem(path, "f")


def test_malformed_files(tmp_path):
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(ValueError, match="--data .*empty"):
        load_csv_problem(empty, "f")
    ragged = tmp_path / "ragged.csv"
    ragged.write_text("x,f\n1,2\n3,4,5\n")
    with pytest.raises(ValueError, match="--data .*line 3 has 3 field"):
        load_csv_problem(ragged, "f")
    dup = tmp_path / "dup.csv"
    dup.write_text("x,x,f\n1,2,3\n4,5,6\n")
    with pytest.raises(ValueError, match="--data .*duplicate column name 'x'"):
        load_csv_problem(dup, "f")
    only_target = tmp_path / "only.csv"
    only_target.write_text("f\n1\n2\n")
    with pytest.raises(ValueError, match="only the --target column"):
        load_csv_problem(only_target, "f")


# -- run_on_csv: validation ----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("kwargs", "pattern"),
    [
        ({"algorithm": "ucb"}, r"algorithm must be one of"),
        ({"iterations": 0}, r"iterations \(--iterations\) must be an integer in \[1"),
        ({"iterations": 5}, r"iterations \(--iterations\) must be <= n - n_init = 5 - 1 = 4"),
        ({"n_init": 3, "iterations": 3}, r"iterations .* <= n - n_init = 5 - 3 = 2"),
        ({"n_init": 0}, r"n_init \(--n-init\) must be an integer in \[1"),
        ({"n_init": 5}, r"n_init \(--n-init\) must be in \[1, n - 1\] = \[1, 4\] for n=5 rows"),
        ({"seed": -1}, r"seed \(--seed\) must be an integer in \[0"),
        ({"algorithm": "po-gp-ucb", "epsilon": None}, r"epsilon \(--epsilon\) is required"),
        ({"algorithm": "po-gp-ucb", "delta": None}, r"delta \(--delta\) is required"),
        ({"algorithm": "po-gp-ucb", "r": None}, r"r \(--r\) is required"),
        ({"algorithm": "po-gp-ucb", "epsilon": 0.0}, r"epsilon \(--epsilon\) must be in \(0"),
        ({"algorithm": "po-gp-ucb", "epsilon": -1.0}, r"epsilon \(--epsilon\) must be in \(0"),
        ({"algorithm": "po-gp-ucb", "delta": 1.0}, r"delta \(--delta\) must be in \(0, 1\)"),
        ({"algorithm": "po-gp-ucb", "delta": 0.0}, r"delta \(--delta\) must be in \(0, 1\)"),
        ({"algorithm": "po-gp-ucb", "r": 0}, r"r \(--r\) must be an integer in \[1"),
        ({"target": "nope"}, r"--target column 'nope' not found"),
        ({"features": ["x1", "q"]}, r"--features column\(s\) \['q'\] not found"),
    ],
)
def test_run_rejects_bad_parameters_without_writing(tiny_csv, tmp_path, kwargs, pattern):
    out = tmp_path / "out"
    args = {"target": "f", "algorithm": "gp-ucb", "iterations": 2, "seed": 0}
    if kwargs.get("algorithm") == "po-gp-ucb":
        args.update(PO_ARGS)
    args.update(kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("error", NotDifferentiallyPrivateWarning)  # no release was made
        with pytest.raises(ValueError, match=pattern):
            run_on_csv(tiny_csv, out=out, **args)
    assert not out.exists()


def test_run_missing_file_without_writing(tmp_path):
    out = tmp_path / "out"
    with pytest.raises(FileNotFoundError, match="--data"):
        run_on_csv(tmp_path / "missing.csv", "f", "gp-ucb", 2, 0, out=out)
    assert not out.exists()


def test_run_rejects_out_that_is_a_file(tiny_csv, tmp_path):
    out = tmp_path / "taken"
    out.write_text("keep me")
    with pytest.raises(ValueError, match="--out .*not a directory"):
        run_on_csv(tiny_csv, "f", "gp-ucb", 2, 0, out=out)
    assert out.read_text() == "keep me"


def test_run_rejects_degenerate_data(tmp_path):
    const_y = write_csv(tmp_path / "cy.csv", ["x", "f"], [[1, 2], [2, 2], [3, 2]])
    with pytest.raises(ValueError, match="--target column 'f' has the same value in every row"):
        run_on_csv(const_y, "f", "gp-ucb", 1, 0)
    const_x = write_csv(tmp_path / "cx.csv", ["x", "f"], [[1, 2], [1, 3], [1, 4]])
    with pytest.raises(ValueError, match="--features columns .* identical in every row"):
        run_on_csv(const_x, "f", "gp-ucb", 1, 0)


def test_po_params_are_refused_for_gp_ucb(tiny_csv, tmp_path):
    """gp-ucb releases nothing: a privacy parameter given to it is an error, not ignored."""
    out = tmp_path / "out"
    for name, value in PO_ARGS.items():
        with pytest.raises(ValueError, match=rf"--{name} applies to po-gp-ucb only, not gp-ucb"):
            run_on_csv(tiny_csv, "f", "gp-ucb", 2, 0, out=out, **{name: value})
    with pytest.raises(ValueError, match=r"epsilon \(--epsilon\) must be in \(0"):
        run_on_csv(tiny_csv, "f", "gp-ucb", 2, 0, out=out, epsilon=-1.0)
    assert not out.exists()


@pytest.mark.parametrize(
    ("given", "missing"),
    [
        ([], "--epsilon"),
        (["--epsilon", "1"], "--delta"),
        (["--epsilon", "1", "--delta", "0.1"], "--r"),
    ],
)
def test_po_gp_ucb_names_a_missing_privacy_flag(tiny_csv, cli, tmp_path, given, missing):
    out = tmp_path / "out"
    argv = ["run", "po-gp-ucb", "--data", tiny_csv, "--target", "f", "-T", "2", "--out", out]
    status, _, err = cli([*argv, *given])
    assert status == 2 and len(err.strip().splitlines()) == 1, err
    assert f"{missing[2:]} ({missing}) is required for po-gp-ucb" in err
    assert not out.exists()


# -- run_on_csv: behaviour -----------------------------------------------------------------------
def test_gp_ucb_finds_a_top_row(smooth_csv, gp_result):
    X, y, _ = load_csv_problem(smooth_csv, "y", features=["a", "b"])
    best = gp_result["best"]
    assert best["value"] >= np.quantile(y, 0.95)
    assert best["value"] == pytest.approx(y[best["index"]])
    assert best["features"] == {"a": X[best["index"], 0], "b": X[best["index"], 1]}
    regret = np.array(gp_result["simple_regret"])
    assert regret.shape == (21,)
    assert np.all(regret >= 0) and np.all(np.diff(regret) <= 0)
    assert regret[-1] == pytest.approx(gp_result["best_in_data"]["value"] - best["value"])
    queried = gp_result["initial_indices"] + gp_result["queried_indices"]
    assert len(set(queried)) == len(queried) == 21  # rows are never repeated


def test_run_is_reproducible(smooth_csv, gp_result):
    again = run_on_csv(smooth_csv, "y", "gp-ucb", 20, 7, features=["a", "b"])
    assert again == gp_result
    other = run_on_csv(smooth_csv, "y", "gp-ucb", 20, 8, features=["a", "b"], fit_restarts=1)
    assert other["initial_indices"] != gp_result["initial_indices"]


def test_po_gp_ucb_runs_and_reports_release(smooth_csv, gp_result, tmp_path):
    with warnings.catch_warnings():  # not DP: said once, by the result (its "privacy"), no warning
        warnings.simplefilter("error", NotDifferentiallyPrivateWarning)
        result = run_on_csv(
            smooth_csv, "y", "po-gp-ucb", 20, 7, features=["a", "b"], out=tmp_path, **PO_ARGS
        )
    assert result["privacy"] == PRIVACY_NOTE
    rel = result["release"]
    assert set(rel) >= {"omega", "sigma_min", "branch", "c_prime"}
    assert rel["branch"] in {"if", "else"} and rel["r"] == 10
    # same seed -> same initial rows as the gp-ucb baseline; each learns its own GP
    assert result["initial_indices"] == gp_result["initial_indices"]
    assert result["hyperparameters"]["source"].startswith("queried rows only")
    assert len(result["hyperparameters"]["lengthscales"]) == 1  # isotropic on the release
    assert len(result["queried_indices"]) == 20
    stored = json.loads((tmp_path / RESULT_FILENAME).read_text())
    assert stored == result
    text = format_result(result)
    assert PRIVACY_NOTE in text and "branch=" in text


def test_gp_ucb_does_not_warn(tiny_csv):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run_on_csv(tiny_csv, "f", "gp-ucb", 2, 0, fit_restarts=1)


def test_minimize_matches_maximizing_the_negation(tmp_path):
    rng = np.random.default_rng(3)
    X = rng.uniform(0.0, 1.0, size=(40, 2))
    f = smooth(X * [2.0, 20.0])
    up = write_csv(tmp_path / "up.csv", ["u", "v", "f"], np.column_stack([X, f]).tolist())
    down = write_csv(tmp_path / "down.csv", ["u", "v", "f"], np.column_stack([X, -f]).tolist())
    r_max = run_on_csv(up, "f", "gp-ucb", 8, 1, fit_restarts=1)
    r_min = run_on_csv(down, "f", "gp-ucb", 8, 1, minimize=True, fit_restarts=1)
    assert r_min["minimize"] is True
    assert r_min["queried_indices"] == r_max["queried_indices"]
    assert r_min["best"]["index"] == r_max["best"]["index"]
    assert r_min["best"]["value"] == pytest.approx(-r_max["best"]["value"])
    assert r_min["best_in_data"]["value"] == pytest.approx(-f.max())
    np.testing.assert_allclose(r_min["simple_regret"], r_max["simple_regret"])
    assert "minimised" in format_result(r_min)


def test_result_json_fields_and_atomic_write(tiny_csv, tmp_path):
    out = tmp_path / "nested" / "out"
    result = run_on_csv(tiny_csv, "f", "gp-ucb", 3, 2, n_init=2, out=out, fit_restarts=1)
    assert sorted(p.name for p in out.iterdir()) == [RESULT_FILENAME]  # no temp file left

    def reject(constant):
        raise AssertionError(f"non-standard JSON constant {constant}")

    stored = json.loads((out / RESULT_FILENAME).read_text(), parse_constant=reject)
    assert stored == result
    for key in (
        "algorithm", "n", "d", "features", "target", "minimize", "hyperparameters", "best",
        "best_in_data", "simple_regret", "initial_indices", "queried_indices",
    ):  # fmt: skip
        assert key in stored
    assert stored["algorithm"] == "gp-ucb" and stored["n"] == 5 and stored["d"] == 2
    assert stored["features"] == ["x1", "x2"] and stored["target"] == "f"
    hyper = stored["hyperparameters"]
    assert len(hyper["lengthscales"]) == 2
    assert {"signal_variance", "noise_variance", "mean"} <= set(hyper)
    assert len(stored["initial_indices"]) == 2 and len(stored["queried_indices"]) == 3
    assert len(stored["simple_regret"]) == 4
    assert stored["simple_regret"][-1] == 0.0  # all 5 rows seen
    assert "privacy" not in stored
    # a second run replaces the file in place
    run_on_csv(tiny_csv, "f", "gp-ucb", 1, 2, out=out, fit_restarts=1)
    assert json.loads((out / RESULT_FILENAME).read_text())["iterations"] == 1


def test_format_result_summary(gp_result):
    text = format_result(gp_result)
    assert "gp-ucb" in text and "best row found" in text
    assert "t=0:" in text and "t=10:" in text and "t=20:" in text
    assert "privacy" not in text


# -- defects from the reliability probe (issue 10) ------------------------------------------------
@pytest.fixture
def no_fit(monkeypatch):
    """Makes the fit (the first piece of work) fail loudly: an error raised instead of it was
    found before any work."""

    def fit(*args, **kwargs):
        raise AssertionError("the fit ran: the check came too late")

    monkeypatch.setattr("frontierbo.po.userdata.fit_hyperparameters", fit)
    monkeypatch.setattr("frontierbo.study.samplers.fit_hyperparameters", fit)


def test_small_epsilon_gaussian_release_runs_from_the_cli(tiny_csv, cli, tmp_path):
    """The probe's command: a bare AssertionError before the fix."""
    argv = ["run", "po-gp-ucb", "--mechanism", "gaussian", "--data", tiny_csv, "--target", "f"]
    status, out, err = cli([*argv, "-T", "3", "--epsilon", "1e-9", "--delta", "1e-5"])
    assert status == 0, err
    assert "epsilon=1e-09, delta=1e-05" in out


@pytest.mark.parametrize(
    ("epsilon", "delta", "message"),
    [
        (
            "1e300",
            "1e-300",
            r"--epsilon 1e\+300 / --delta 1e-300: .*epsilon is too large.*"
            r"supported at this delta: epsilon <= ",
        ),
        (
            "1e-12",
            "1e-5",
            r"--epsilon 1e-12 / --delta 1e-05: .*epsilon is too small.*"
            r"supported at this delta: epsilon >= ",
        ),
    ],
)
def test_gaussian_epsilon_out_of_range_is_named_before_any_work(
    tiny_csv, cli, no_fit, epsilon, delta, message
):
    argv = ["run", "po-gp-ucb", "--mechanism", "gaussian", "--data", tiny_csv, "--target", "f"]
    status, _, err = cli([*argv, "-T", "2", "--epsilon", epsilon, "--delta", delta])
    assert status == 2 and len(err.strip().splitlines()) == 1, err
    assert re.search(message, err) and "granularity" not in err, err


@pytest.mark.parametrize("algorithm", ["gp-ucb", "po-gp-ucb"])
@pytest.mark.parametrize(
    ("out", "message"),
    [
        ("/proc/x", r"--out '/proc/x' cannot be created or written"),
        ("FILE/x", r"--out '.*tiny\.csv/x' cannot be created: '.*tiny\.csv' is a file"),
    ],
)
def test_unwritable_out_is_named_before_any_work(tiny_csv, cli, no_fit, algorithm, out, message):
    """Tests may run as root, for whom permission bits mean nothing: /proc refuses new entries
    and nothing can be created under a regular file, for anyone."""
    out = out.replace("FILE", str(tiny_csv))
    po = ["--epsilon", "2", "--delta", "1e-3", "--r", "1"] if algorithm == "po-gp-ucb" else []
    argv = ["run", algorithm, "--data", tiny_csv, "--target", "f", "-T", "2", "--out", out]
    status, _, err = cli([*argv, *po])
    assert status == 2 and len(err.strip().splitlines()) == 1, err
    assert re.search(message, err), err


def test_values_near_the_float_limit_are_named_before_any_work(tmp_path, no_fit):
    huge = write_csv(
        tmp_path / "h.csv", ["x1", "x2", "y"], [[1e308, 0, 1], [-1e308, 1, 2], [3, 2, 0]]
    )
    with pytest.raises(
        ValueError,
        match=r"--data '.*h\.csv': feature column 'x1', row 0 \(file "
        r"line 2\): 1e\+308 is too large in magnitude",
    ):
        run_on_csv(huge, "y", "gp-ucb", 1, 0)
    big_y = write_csv(tmp_path / "t.csv", ["x", "y"], [[0, 1e200], [1, -1e200], [2, 0]])
    with pytest.raises(ValueError, match=r"--target column 'y', row 0 .* too large"):
        run_on_csv(big_y, "y", "gp-ucb", 1, 0)


def test_progress_shows_the_fit_then_the_queries_on_stderr(tiny_csv, capsys):
    run_on_csv(tiny_csv, "f", "gp-ucb", 2, 0, fit_restarts=2, progress=True, prefit_on_table=True)
    err = capsys.readouterr().err
    # A fast run draws each bar once (tqdm redraws at most every 0.1 s): the totals show.
    assert "gp-ucb: fitting the GP (5 rows)" in err and "/2 [" in err  # 2 restarts
    assert "gp-ucb: queries" in err and "/3 [" in err  # n_init = 1, then T = 2
    assert err.index("fitting the GP") < err.index("queries")
    run_on_csv(tiny_csv, "f", "gp-ucb", 2, 0, fit_restarts=2, progress=False)
    run_on_csv(tiny_csv, "f", "gp-ucb", 2, 0, fit_restarts=2)  # default: stderr is no terminal
    assert capsys.readouterr().err == ""
    with pytest.raises(TypeError, match="progress must be True, False or None"):
        run_on_csv(tiny_csv, "f", "gp-ucb", 2, 0, progress="yes")


def test_progress_counts_po_gp_ucb_queries(tiny_csv, capsys):
    run_on_csv(
        tiny_csv,
        "f",
        "po-gp-ucb",
        3,
        0,
        mechanism="gaussian",
        epsilon=1.0,
        delta=1e-3,
        n_init=1,
        fit_restarts=1,
        progress=True,
    )
    assert "po-gp-ucb: queries" in capsys.readouterr().err


def test_gp_ucb_rejects_the_flags_of_po_gp_ucb(tiny_csv, cli):
    """Per-command options: gp-ucb has no privacy flags, so these cannot be silently ignored."""
    argv = ["run", "gp-ucb", "--data", tiny_csv, "--target", "f", "-T", "2"]
    status, _, err = cli(
        [*argv, "--epsilon", "0", "--delta", "5", "--r", "0", "--mechanism", "gaussian"]
    )
    assert status == 2
    assert "unrecognized arguments: --epsilon 0 --delta 5 --r 0 --mechanism gaussian" in err


# -- where the hyperparameters come from (issue 13) ------------------------------------------------
@pytest.mark.parametrize("algorithm", ["gp-ucb", "po-gp-ucb"])
def test_by_default_fits_see_only_queried_rows(smooth_csv, monkeypatch, algorithm):
    """Every fit's targets are standardised values of rows already queried, never the table."""
    import frontierbo.study.samplers as samplers

    real, seen = samplers.fit_hyperparameters, []

    def spy(X, y, **kwargs):
        seen.append(len(y))
        return real(X, y, **kwargs)

    monkeypatch.setattr(samplers, "fit_hyperparameters", spy)
    kwargs = PO_ARGS if algorithm == "po-gp-ucb" else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotDifferentiallyPrivateWarning)
        result = run_on_csv(smooth_csv, "y", algorithm, 15, 3, features=["a", "b"], **kwargs)
    assert seen and max(seen) <= 1 + 15  # n_init + queries told so far
    assert seen == sorted(seen)  # one fit per new observation count, growing
    assert result["hyperparameters"]["fit_points"] == max(seen)


def test_prefit_on_table_fits_the_whole_column_first(smooth_csv, monkeypatch):
    import frontierbo.po.userdata as userdata

    real, seen = userdata.fit_hyperparameters, []

    def spy(X, y, **kwargs):
        seen.append(len(y))
        return real(X, y, **kwargs)

    monkeypatch.setattr(userdata, "fit_hyperparameters", spy)
    result = run_on_csv(
        smooth_csv, "y", "gp-ucb", 5, 3, features=["a", "b"], fit_restarts=1, prefit_on_table=True
    )
    assert seen == [200]  # every row of the table, before the first query
    assert result["hyperparameters"]["source"].startswith("table")


def test_prefit_flag_on_the_command_line(smooth_csv, cli):
    status, out, err = cli(
        ["run", "gp-ucb", "--data", smooth_csv, "--target", "y", "--features", "a", "b",
         "--iterations", "3", "--prefit-on-table"]
    )  # fmt: skip
    assert status == 0, err


def test_prefit_flag_is_explained_in_help(capsys):
    from frontierbo.cli import main

    with pytest.raises(SystemExit):
        main(["run", "gp-ucb", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "--prefit-on-table" in out and "rows of the target column" in out
