"""``frontierbo run po-gp-ucb``: an ``--r`` that is no reduction is explained before any work, and
the random projection's NOT-DP caveat is said once (the report's last line), not twice."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from frontierbo.po.random_projection import NOT_PRIVATE_MESSAGE

#: The CLI in a fresh interpreter: Python's own warning display, as a user sees it (in-process,
#: pytest records warnings instead of printing them).
CLI = "import sys; from frontierbo.cli import main; sys.exit(main(sys.argv[1:]))"
PRIVATE = ["--epsilon", "10", "--delta", "1e-4"]


def frontierbo(*argv) -> tuple[int, str, str]:
    done = subprocess.run(
        [sys.executable, "-c", CLI, *map(str, argv)], capture_output=True, text=True, timeout=300
    )
    return done.returncode, done.stdout, done.stderr


@pytest.fixture
def rows(tmp_path):
    """40 rows, d = 4 features (a, b, c, e) and a target y."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1.0, 1.0, size=(40, 4))
    y = np.sin(3.0 * X[:, 0]) + X[:, 1] ** 2 - 0.5 * X[:, 2] + X[:, 3]
    path = tmp_path / "rows.csv"
    lines = ["a,b,c,e,y"] + [",".join(f"{v:.6f}" for v in row) for row in np.column_stack([X, y])]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def run(path, *extra):
    return frontierbo(
        "run", "po-gp-ucb", "--data", path, "--target", "y", "-T", 2, *PRIVATE, *extra
    )


def test_r_above_d_is_explained_once_before_the_run_and_not_dp_is_said_once(rows):
    status, out, err = run(rows, "--r", 15)
    assert status == 0, err
    warned = [line for line in err.splitlines() if line.startswith("frontierbo: warning: ")]
    assert len(warned) == 1, err
    assert "--r 15 is above d = 4 features" in warned[0]
    assert "rank-4 linear image" in warned[0] and "d + 1 known rows" in warned[0]
    # the NOT-DP caveat: once in all the output, as the report's last line
    said = (out + err).count("NOT differentially private")
    assert said == 1, out + err
    assert out.rstrip().splitlines()[-1] == f"privacy: {NOT_PRIVATE_MESSAGE}"


def test_r_below_d_runs_without_a_word_on_stderr(rows):
    status, out, err = run(rows, "--r", 3)
    assert status == 0, err
    assert err == ""
    assert out.count("NOT differentially private") == 1


def test_gaussian_r_not_below_d_is_explained(rows):
    status, out, err = run(rows, "--r", 4, "--mechanism", "gaussian")
    assert status == 0, err
    assert err.count("frontierbo: warning: ") == 1, err
    assert "--r 4 is not below d = 4 features" in err and "leave --r out" in err
    assert "NOT differentially private" not in out + err


@pytest.mark.parametrize(
    "r, d, mechanism, says",
    [
        (5, 4, "random-projection", "above d = 4"),
        (4, 4, "random-projection", None),
        (2, 4, "random-projection", None),
        (4, 4, "gaussian", "not below d = 4"),
        (3, 4, "gaussian", None),
    ],
)
def test_projection_note(r, d, mechanism, says):
    from frontierbo.po.userdata import projection_note

    note = projection_note(r, d, mechanism)
    assert (note is None) if says is None else (says in note and f"--r {r}" in note)


def test_the_library_run_warns_of_r_above_d(rows):
    from frontierbo.po.userdata import run_on_csv

    with pytest.warns(UserWarning, match=r"--r 9 is above d = 4 features"):
        result = run_on_csv(rows, "y", "po-gp-ucb", 2, 0, epsilon=10.0, delta=1e-4, r=9)
    assert result["privacy"] == NOT_PRIVATE_MESSAGE
