"""``Study.optimize`` as Optuna's (n_trials, timeout, n_jobs, callbacks) and ``frontierbo study
optimize --command`` (issue 59, item 5)."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time

import numpy as np
import pytest

from frontierbo.study import Float, Int, create_study, load_study
from frontierbo.study.command import CommandFailed, CommandObjective

TRAIN = """import math, sys, time
args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
lr, layers = float(args["--lr"]), int(args["--layers"])
time.sleep(float(args.get("--sleep", 0)))
if layers == 3:
    sys.exit("diverged at layers 3")
print("epoch 1 loss 9.0")
print(f"final loss {(math.log10(lr) + 2) ** 2 + (layers - 2) ** 2 / 10:.6f}")
"""
SPACE = [Float("lr", 1e-5, 0.1, log=True), Int("layers", 1, 4)]


def test_optimize_with_threads_runs_exactly_n_trials(tmp_path):
    rows = np.random.default_rng(0).random((40, 2))
    study = create_study(rows, storage=tmp_path / "s.db", seed=1)
    seen = []
    study.optimize(lambda t: float(t.x.sum()), n_trials=12, n_jobs=3,
                   callbacks=[lambda s, t: seen.append(t.number)], show_progress_bar=True)  # fmt: skip
    trials = study.trials
    assert len(trials) == 12 and {t.state for t in trials} == {"complete"}
    assert len({t.row for t in trials}) == 12 and sorted(seen) == list(range(12))


def test_optimize_stops_at_its_timeout(tmp_path):
    study = create_study(space=SPACE, storage=tmp_path / "s.db", algorithm="random")
    start = time.monotonic()
    study.optimize(lambda t: time.sleep(0.05) or 1.0, timeout=0.4)
    assert time.monotonic() - start < 2.0 and 2 <= len(study.trials) <= 12


@pytest.mark.parametrize(
    "kwargs, message",
    [({}, "give n_trials or timeout"), ({"n_trials": 0}, "n_trials must be an integer >= 1"),
     ({"timeout": -1}, r"timeout must be seconds in \(0, inf\)"),
     ({"n_trials": 2, "n_jobs": 0}, "n_jobs must be an integer >= 1, or -1")],
)  # fmt: skip
def test_optimize_checks_its_arguments(tmp_path, kwargs, message):
    study = create_study(space=SPACE, storage=tmp_path / "s.db")
    with pytest.raises(ValueError, match=message):
        study.optimize(lambda t: 1.0, **kwargs)
    assert study.trials == []


def test_an_error_in_one_thread_fails_its_trial_and_is_raised(tmp_path):
    study = create_study(space=SPACE, storage=tmp_path / "s.db", algorithm="random", seed=3)

    def objective(trial):
        if trial.number == 2:
            raise ZeroDivisionError("bad")
        time.sleep(0.02)
        return 1.0

    with pytest.raises(ZeroDivisionError):
        study.optimize(objective, n_trials=20, n_jobs=2)
    states = [t.state for t in study.trials]
    assert states[2] == "fail" and "pending" not in states and len(states) < 20


def test_a_command_objective_fills_words_and_reads_the_last_number(tmp_path):
    objective = CommandObjective("python3 t.py --lr {lr} --name 'a {layers} b'", {"lr", "layers"})
    trial = type("T", (), {"params": {"lr": 0.001, "layers": 3}, "number": 7, "row": None})()
    assert objective.argv(trial) == ["python3", "t.py", "--lr", "0.001", "--name", "a 3 b"]
    assert objective.value("loss 1.5\nacc 0.93\nfinal -2e-3\n") == -0.002
    with pytest.raises(CommandFailed, match="printed no number"):
        objective.value("done\n")
    regex = CommandObjective("x", set(), value_regex=r"val_loss=(\S+)")
    assert regex.value("val_loss=0.25 loss=0.1\nval_loss=0.2 loss=0.3\n") == 0.2
    with pytest.raises(ValueError, match=r"names \{lrr\}, which is no parameter; it may use"):
        CommandObjective("python3 t.py --lr {lrr}", {"lr"})
    with pytest.raises(ValueError, match="--value-regex is not a regular expression"):
        CommandObjective("x", set(), value_regex="(")


def test_a_command_that_fails_times_out_or_is_missing_fails_its_trial(tmp_path):
    trial = type("T", (), {"params": {}, "number": 0, "row": None})()
    with pytest.raises(CommandFailed, match="exit status 3: boom"):
        CommandObjective(f"{sys.executable} -c \"import sys; sys.exit('x\\nboom') if 0 else "
                         "(print('boom', file=sys.stderr), sys.exit(3))\"", set())(trial)  # fmt: skip
    with pytest.raises(CommandFailed, match="timed out after 0.3 s"):
        CommandObjective(f"{sys.executable} -c 'import time; time.sleep(5)'", set(),
                         trial_timeout=0.3)(trial)  # fmt: skip
    with pytest.raises(CommandFailed, match="cannot run 'no-such-program-here'"):
        CommandObjective("no-such-program-here --x", set())(trial)


def test_the_shell_optimizes_a_command(cli, tmp_path):
    (tmp_path / "train.py").write_text(TRAIN)
    db = tmp_path / "s.db"
    create_study(space=SPACE, storage=db, seed=2).storage.close()
    command = f"{sys.executable} {tmp_path / 'train.py'} --lr {{lr}} --layers {{layers}}"
    status, out, err = cli(["study", "optimize", "--storage", db, "--command", command,
                            "--n-trials", 10, "--n-jobs", 2])  # fmt: skip
    assert status == 0, err
    trials = load_study(storage=db).trials
    assert len(trials) == 10 and "pending" not in {t.state for t in trials}
    for t in trials:
        assert (t.state == "fail") == (t.params["layers"] == 3)
        if t.state == "complete":
            expected = (np.log10(t.params["lr"]) + 2) ** 2 + (t.params["layers"] - 2) ** 2 / 10
            assert t.value == pytest.approx(expected, abs=1e-6)
    n_fail = sum(t.state == "fail" for t in trials)
    assert f"ran 10 trials ({10 - n_fail} complete, {n_fail} fail)" in out
    assert err.count("failed (exit status 1: diverged at layers 3)") == n_fail
    status, _, err = cli(["study", "optimize", "--storage", db, "--command", "python3 {lrr}",
                          "--n-trials", 1])  # fmt: skip
    assert status == 2 and "names {lrr}, which is no parameter" in err


def test_ctrl_c_kills_the_commands_and_abandons_their_trials(tmp_path):
    (tmp_path / "train.py").write_text(TRAIN)
    db = tmp_path / "s.db"
    create_study(space=SPACE, storage=db, algorithm="random").storage.close()
    command = f"{sys.executable} {tmp_path / 'train.py'} --lr {{lr}} --layers 2 --sleep 30"
    argv = [sys.executable, "-m", "frontierbo.cli", "study", "optimize", "--storage", str(db),
            "--command", command, "--n-trials", "6", "--n-jobs", "2"]  # fmt: skip
    # A terminal's default disposition: pytest started in the background of a non-interactive
    # shell ignores SIGINT, and its children would inherit that and never see the Ctrl-C.
    process = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # both commands running
        with sqlite3.connect(db) as conn:
            n = conn.execute("SELECT COUNT(*) FROM frontierbo_trials WHERE state = 'pending'")
            if n.fetchone()[0] == 2:
                break
        time.sleep(0.1)
    time.sleep(0.5)
    os.killpg(process.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: the whole group
    _, err = process.communicate(timeout=30)
    assert process.returncode == 130, err
    assert "interrupted: 0 trials told, 2 abandoned" in err
    with sqlite3.connect(db) as conn:
        states = [r[0] for r in conn.execute("SELECT state FROM frontierbo_trials")]
        assert states == ["abandoned", "abandoned"]
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
