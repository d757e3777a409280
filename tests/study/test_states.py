"""Failed and abandoned trials (issue 59, item 3): Python, the shell, rows and spaces."""

from __future__ import annotations

import numpy as np
import pytest

from frontierbo.study import Float, create_study, load_study


@pytest.fixture
def rows():
    return np.random.default_rng(0).random((12, 2))


def test_a_failed_row_is_never_offered_again_and_has_no_value(tmp_path, rows):
    study = create_study(rows, storage=tmp_path / "s.db", algorithm="gp-ei", seed=1)
    first = study.ask()
    failed = study.tell(first, state="fail")
    assert (failed.state, failed.value) == ("fail", None)
    seen = set()
    for _ in range(rows.shape[0] - 1):  # every other row, then the study is complete
        trial = study.ask()
        seen.add(trial.row)
        study.tell(trial, float(trial.x.sum()))
    assert first.row not in seen and len(seen) == rows.shape[0] - 1
    with pytest.raises(ValueError, match="study is complete"):
        study.ask()
    assert study.best_value == min(float(rows[r].sum()) for r in seen)  # minimise, no fail


def test_a_failed_trial_never_reaches_the_model(tmp_path, rows):
    """A fail adds no observation: the next ask refits nothing and asks another row."""
    study = create_study(rows, storage=tmp_path / "s.db", seed=3, settings={"n_initial": 2})
    for _ in range(3):
        t = study.ask()
        study.tell(t, float(np.sin(4 * t.x[0]) + t.x[1]))
    t = study.ask()  # chosen on the fit after 3 values
    fits = _fit_counts(study)
    study.tell(t, state="fail")
    after = study.ask()
    assert after.row != t.row and _fit_counts(study) == fits == [(2,), (3,)]


def _fit_counts(study):
    with study.storage.transaction(write=False) as ex:
        return ex("SELECT observations FROM frontierbo_fits WHERE study_id = :s ORDER BY 1",
                  {"s": study.study_id})  # fmt: skip


def test_an_abandoned_row_may_be_asked_again(tmp_path):
    rows = np.arange(3.0)[:, None]
    study = create_study(rows, storage=tmp_path / "s.db", algorithm="random", seed=0)
    gave_up = study.ask()
    study.tell(gave_up, state="abandoned")
    asked = []
    for _ in range(3):
        t = study.ask()
        asked.append(t.row)
        study.tell(t, 1.0)
    assert sorted(asked) == [0, 1, 2] and gave_up.row in asked


def test_tell_checks_state_and_value(tmp_path, rows):
    study = create_study(rows, storage=tmp_path / "s.db", algorithm="random")
    t = study.ask()
    with pytest.raises(ValueError, match="state must be one of"):
        study.tell(t, 1.0, state="pruned")
    with pytest.raises(ValueError, match="a fail trial has no value, got value=1.0"):
        study.tell(t, 1.0, state="fail")
    with pytest.raises(ValueError, match="value must be a finite number, got None"):
        study.tell(t)
    study.tell(t, state="fail")
    with pytest.raises(ValueError, match=r"trial 0 was already told \(fail\)"):
        study.tell(t, 2.0)


def test_optimize_fails_a_crash_and_catch_goes_on(tmp_path, rows):
    study = create_study(rows, storage=tmp_path / "s.db", algorithm="random", seed=2)

    def objective(trial):
        if trial.number % 3 == 1:
            raise RuntimeError("simulation diverged")
        if trial.number % 3 == 2:
            return float("nan")
        return float(trial.x[0])

    with pytest.warns(UserWarning) as caught:
        study.optimize(objective, n_trials=6, catch=(RuntimeError,))
    assert [str(w.message) for w in caught] == [
        "trial 1 failed: RuntimeError: simulation diverged",
        "trial 2 failed: the objective returned nan, not a finite number",
        "trial 4 failed: RuntimeError: simulation diverged",
        "trial 5 failed: the objective returned nan, not a finite number",
    ]
    states = [t.state for t in study.trials]
    assert states == ["complete", "fail", "fail"] * 2
    with pytest.raises(RuntimeError, match="diverged"):  # not caught: failed, then raised
        study.optimize(objective, n_trials=3)
    assert study.trials[-1].state == "fail" and len(study.trials) == 8
    with pytest.raises(ValueError, match="catch must be an exception class"):
        study.optimize(objective, n_trials=1, catch=("RuntimeError",))


def test_ctrl_c_abandons_the_trial(tmp_path, rows):
    study = create_study(rows, storage=tmp_path / "s.db", algorithm="random")

    def objective(trial):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        study.optimize(objective, n_trials=2)
    assert [t.state for t in load_study(storage=tmp_path / "s.db").trials] == ["abandoned"]


def test_a_space_study_with_failed_points_goes_on(tmp_path):
    study = create_study(space=[Float("a", 0, 1), Float("b", 0, 1)], storage=tmp_path / "s.db")
    for k in range(10):
        t = study.ask()
        if k % 2:
            study.tell(t, state="fail")
        else:
            study.tell(t, float((t.params["a"] - 0.3) ** 2 + t.params["b"]))
    assert [t.state for t in study.trials].count("fail") == 5
    assert study.best_trial.state == "complete"


def test_a_repeating_sampler_that_picks_a_failed_row_says_so(tmp_path, rows):
    """Q-GP-UCB measures one row several times in a stage; a failed row would fail forever."""
    pytest.importorskip("qiskit")
    study = create_study(rows, storage=tmp_path / "s.db", algorithm="q-gp-ucb",
                         direction="maximize")  # fmt: skip
    for _ in range(2):
        t = study.ask()
        study.tell(t, float(t.x.sum()))
    t = study.ask()  # the third row starts a stage of several measurements of it
    study.tell(t, state="fail")
    with pytest.raises(ValueError, match=f"chose row {t.row} again, whose evaluation failed"):
        study.ask()
    assert [x.state for x in study.trials] == ["complete", "complete", "fail"]  # no half-ask


def test_the_shell_tells_failed_and_abandoned(cli, tmp_path, rows):
    db = tmp_path / "s.db"
    create_study(rows, storage=db, algorithm="random").storage.close()
    for k, state in enumerate(["fail", "abandoned"]):
        assert cli(["ask", "--storage", db])[0] == 0
        status, out, err = cli(["tell", "--storage", db, "--trial", k, "--state", state])
        assert status == 0, err
        assert f"trial {k} (row " in out and f") {state}: no value" in out
    status, _, err = cli(["tell", "--storage", db, "--trial", 0])
    assert status == 2 and "--value is required (or --state fail / abandoned" in err
    assert cli(["ask", "--storage", db])[0] == 0
    status, _, err = cli(["tell", "--storage", db, "--trial", 2, "--state", "fail",
                          "--value", 1])  # fmt: skip
    assert status == 2 and "--state fail takes no --value" in err
    status, out, _ = cli(["study", "show", "--storage", db])
    assert "3 trials, 1 pending, 1 failed, 1 abandoned" in out
