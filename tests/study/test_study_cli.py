"""``frontierbo study create | show | plot``, ``ask`` and ``tell`` from the shell."""

from __future__ import annotations

import json

import numpy as np

import frontierbo


def _candidates(write_csv):
    rng = np.random.default_rng(0)
    rows = [[f"{a:.4f}", f"{b:.4f}", "x"] for a, b in rng.uniform(0, 1, size=(50, 2))]
    return write_csv(["temp", "time", "note"], rows)


def test_the_shell_workflow(cli, write_csv, tmp_path):
    path = _candidates(write_csv)
    db = tmp_path / "study.db"
    status, out, err = cli(
        ["study", "create", "--candidates", path, "--features", "temp", "time", "--storage", db,
         "--set", "n_initial=2"]
    )  # fmt: skip
    assert status == 0, err
    assert "50 candidates, 2 features (temp, time)" in out
    # Optuna's default, said where an Optuna user telling losses would look
    assert "direction minimize (lower values are better; --direction maximize to maximise)" in out
    for k in range(4):
        status, out, err = cli(["ask", "--storage", db])
        assert status == 0, err
        asked = json.loads(out)
        assert asked["trial"] == k and set(asked["params"]) == {"temp", "time"}
        value = asked["params"]["temp"] - asked["params"]["time"]
        status, out, err = cli(["tell", "--storage", db, "--trial", k, "--value", value])
        assert status == 0, err
    study = frontierbo.load_study(storage=db)
    assert [t.state for t in study.trials] == ["complete"] * 4
    assert study.direction == "minimize" and asked["direction"] == "minimize"
    assert study.best_value == min(t.value for t in study.trials)
    status, out, _ = cli(["study", "show", "--storage", db])
    assert "(gp-ei, minimize)" in out
    # the text column 'note' is not a feature: carried, shown with its row
    assert status == 0 and "| trial | row | note | temp | time | state | value |" in out
    assert f"value {study.best_value:g}" in out
    status, out, _ = cli(["study", "show", "--storage", db, "--json"])
    assert len(json.loads(out)["trials"]) == 4
    status, out, err = cli(["study", "plot", "--storage", db, "--out", tmp_path / "best.png"])
    assert status == 0, err
    assert (tmp_path / "best.png").stat().st_size > 1000


def test_shell_errors_are_one_line_with_status_2(cli, write_csv, tmp_path):
    path = _candidates(write_csv)
    db = tmp_path / "study.db"
    typo = write_csv(["temp", "time"], [["0.5", "1"], ["0.7", "n/a"], ["0.2", "3"]], "typo.csv")
    status, _, err = cli(["study", "create", "--candidates", typo, "--storage", db])
    assert status == 2 and "feature column 'time' is not numeric (row 1: 'n/a')" in err
    assert not db.exists()
    cases = [
        (["ask", "--storage", tmp_path / "none.db"], "does not exist"),
        (["study", "create", "--candidates", tmp_path / "no.csv"], "--candidates"),
        (["study", "create", "--candidates", path, "--features", "temp", "--set", "beta"],
         "--set must be KEY=VALUE"),
    ]  # fmt: skip
    for argv, message in cases:
        status, _, err = cli(argv)
        assert status == 2 and message in err and err.count("\n") == 1, err
    cli(["study", "create", "--candidates", path, "--features", "temp", "--storage", db])
    status, _, err = cli(["tell", "--storage", db, "--trial", "0", "--value", "1"])
    assert status == 2 and "trial 0 does not exist" in err
    status, _, err = cli(["tell", "--storage", db, "--trial", "0", "--value", "inf"])
    assert status == 2 and "finite number" in err
    status, _, err = cli(["study", "plot", "--storage", db, "--out", tmp_path / "b.png"])
    assert status == 2 and "no told trial yet" in err


def test_python_entry_points_are_the_top_level_names(tmp_path):
    study = frontierbo.create_study(np.eye(3), storage=tmp_path / "s.db", algorithm="random")
    study.tell(study.ask(), 1.0)
    assert frontierbo.load_study(storage=tmp_path / "s.db").best_value == 1.0
    assert "create_study" in dir(frontierbo)


def test_output_into_a_closed_pipe_is_not_an_error(tmp_path):
    """``frontierbo study show | head``: the reader leaves early; no traceback, status 0."""
    import subprocess
    import sys

    study = frontierbo.create_study(np.eye(3), storage=tmp_path / "s.db", algorithm="random")
    study.tell(study.ask(), 1.0)
    show = subprocess.Popen(
        [sys.executable, "-m", "frontierbo.cli", "study", "show", "--storage", tmp_path / "s.db"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    show.stdout.close()  # the reader leaves before the table is printed
    assert show.wait(timeout=60) == 0
    assert b"Traceback" not in show.stderr.read()
