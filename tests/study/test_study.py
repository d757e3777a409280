"""Persistent ask / tell studies: resume exactly, honest fits, pending trials, bad input."""

from __future__ import annotations

import json
import sqlite3
import time

import numpy as np
import pytest

from frontierbo.study import GPUCBSampler, StorageError, create_study, load_study
from frontierbo.study.samplers import History, SuggestContext, make_sampler, unit_cube


def branin(x):
    x1, x2 = x[..., 0], x[..., 1]
    b, c, t = 5.1 / (4 * np.pi**2), 5 / np.pi, 1 / (8 * np.pi)
    return -((x2 - b * x1**2 + c * x1 - 6) ** 2 + 10 * (1 - t) * np.cos(x1) + 10)


@pytest.fixture
def rows():
    rng = np.random.default_rng(0)
    return np.column_stack([rng.uniform(-5, 10, 400), rng.uniform(0, 15, 400)])


def _objective(trial):
    return float(branin(trial.x))


@pytest.mark.parametrize("algorithm", ["gp-ei", "gp-ucb"])
def test_gp_studies_find_the_best_row_of_branin(tmp_path, rows, algorithm):
    study = create_study(rows, storage=tmp_path / "s.db", columns=["a", "b"], algorithm=algorithm,
                         direction="maximize")  # fmt: skip
    assert create_study(rows, storage=tmp_path / "d.db").algorithm == "gp-ei"  # the default
    study.optimize(_objective, n_trials=40)
    trials = study.trials
    assert [t.number for t in trials] == list(range(40))
    assert len({t.row for t in trials}) == 40  # never the same row twice
    assert all(t.state == "complete" and t.params == {"a": t.x[0], "b": t.x[1]} for t in trials)
    best = branin(rows).max()
    assert study.best_value == pytest.approx(best)  # the optimum of the 400 rows, within 40
    assert np.all(np.diff(study.best_so_far()) >= 0)
    random = create_study(rows, storage=tmp_path / "s.db", name="random", algorithm="random")
    random.optimize(_objective, n_trials=40)
    assert random.best_value < best  # 40 of 400 at random: the best row is missed here


def test_a_resumed_study_asks_what_an_uninterrupted_one_asks(tmp_path, rows):
    straight = create_study(rows, storage=tmp_path / "a.db", seed=3)
    straight.optimize(_objective, n_trials=16)
    first = create_study(rows, storage=tmp_path / "b.db", seed=3)
    first.optimize(_objective, n_trials=9)
    first.storage.close()
    resumed = load_study(storage=tmp_path / "b.db")
    resumed.optimize(_objective, n_trials=7)
    assert [t.row for t in resumed.trials] == [t.row for t in straight.trials]


def test_fits_see_only_told_values(tmp_path, rows):
    study = create_study(rows, storage=tmp_path / "s.db", settings={"n_initial": 3},
                         direction="maximize")  # fmt: skip
    study.optimize(_objective, n_trials=8)
    con = sqlite3.connect(tmp_path / "s.db")
    fits = con.execute("SELECT observations, hyperparameters FROM frontierbo_fits").fetchall()
    assert sorted(t for t, _ in fits) == list(range(3, 8))  # after 3, 4, ... 7 told values
    for t, text in fits:
        hyper = json.loads(text)
        told = np.array([_objective(tr) for tr in study.trials[:t]])
        assert hyper["observations"] == t
        assert hyper["y_mean"] == pytest.approx(told.mean())
        assert hyper["y_std"] == pytest.approx(told.std())


def test_pending_rows_are_never_offered_twice_and_spread_out(tmp_path, rows):
    study = create_study(rows, storage=tmp_path / "s.db", settings={"n_initial": 4})
    for _ in range(6):
        study.tell(study.ask(), 0.0)
    study.tell(study.ask(), 5.0)  # a clear incumbent near which UCB will look
    a, b, c = study.ask(), study.ask(), study.ask()  # three workers at once
    assert len({a.row, b.row, c.row}) == 3
    assert {t.state for t in (a, b, c)} == {"pending"}


def test_gp_bucb_hallucinates_pending_rows_at_the_posterior_mean(rows):
    sampler = GPUCBSampler(n_initial=3)
    X = unit_cube(rows)
    told = np.array([5, 80, 200, 321])
    values = branin(rows[told])

    class Fits(dict):
        def put(self, t, h):
            self[t] = h

    def context(pending):
        h = History(rows, told, values, np.asarray(pending, dtype=int), number=len(told))
        return SuggestContext(h, np.random.default_rng(0), 0, Fits())

    plain = sampler.posterior(context([]).history, context([]))
    first = sampler.suggest(context([]))
    gp = sampler.posterior(context([first]).history, context([first]))  # the told values only
    np.testing.assert_array_equal(gp.mean, plain.mean)
    mean, var = gp.hallucinated(np.arange(gp.n), [first])
    np.testing.assert_array_equal(mean, plain.mean)  # mean unchanged
    v, noise = plain.variance[first], plain.noise_variance  # one noisy observation's update:
    assert var[first] == pytest.approx(v * noise / (v + noise), rel=1e-6)
    assert np.all(var <= plain.variance + 1e-12)
    # ... the same as telling the GP its own mean there (GP-BUCB's hallucination, done by hand)
    gp.add(first, float(gp.mean[first]))
    np.testing.assert_allclose(var, gp.variance, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(mean, gp.mean, rtol=0, atol=1e-12)
    assert sampler.suggest(context([first])) != first
    assert X.min() == 0.0 and X.max() == 1.0


def test_a_pending_trial_is_offered_again_after_the_timeout(tmp_path, rows):
    study = create_study(rows, storage=tmp_path / "s.db", pending_timeout=0.05)
    lost = study.ask()  # its worker dies
    time.sleep(0.1)
    again = study.ask()
    assert again.number == lost.number and again.row == lost.row and again.offers == 2
    fresh = study.ask()  # not expired: a new trial
    assert fresh.number == lost.number + 1
    study.tell(again, 1.0)
    with pytest.raises(ValueError, match="already told"):
        study.tell(lost, 2.0)  # the first worker comes back too late
    assert [t.state for t in study.trials] == ["complete", "pending"]


def test_minimize_negates_what_the_sampler_sees(tmp_path, rows):
    study = create_study(rows, storage=tmp_path / "s.db", direction="minimize")
    study.optimize(lambda t: -_objective(t), n_trials=30)
    assert study.best_value == pytest.approx(-branin(rows).max())


def _db_state(path):
    if not path.exists():
        return None
    con = sqlite3.connect(path)
    try:
        return con.execute("SELECT * FROM frontierbo_trials ORDER BY number").fetchall()
    finally:
        con.close()


@pytest.mark.parametrize(
    "bad, match",
    [
        (lambda s: s.tell(99, 1.0), "trial 99 does not exist"),
        (lambda s: s.tell(0, float("nan")), "finite number"),
        (lambda s: s.tell(0, float("inf")), "finite number"),
        (lambda s: s.tell(0, True), "finite number"),
        (lambda s: s.tell(0, "3"), "finite number"),
        (lambda s: s.tell(-1, 1.0), "trial must be"),
        (lambda s: s.optimize(_objective, 0), "n_trials"),
    ],
)
def test_bad_tells_raise_one_error_and_write_nothing(tmp_path, rows, bad, match):
    study = create_study(rows, storage=tmp_path / "s.db")
    study.ask()
    before = _db_state(tmp_path / "s.db")
    with pytest.raises(ValueError, match=match):
        bad(study)
    assert _db_state(tmp_path / "s.db") == before


def test_a_told_trial_cannot_be_told_again(tmp_path, rows):
    study = create_study(rows, storage=tmp_path / "s.db")
    trial = study.ask()
    study.tell(trial, 1.0)
    with pytest.raises(ValueError, match="already told"):
        study.tell(trial, 2.0)
    assert study.trials[0].value == 1.0


def test_storage_errors(tmp_path, rows):
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    with pytest.raises(StorageError, match="not a SQLite database"):
        load_study(storage=text)
    other = tmp_path / "other.db"
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE x (a)")
    con.commit()
    con.close()
    with pytest.raises(StorageError, match="something else"):
        create_study(rows, storage=other)
    with pytest.raises(StorageError, match="not a frontierbo study"):
        load_study(storage=other)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_study(storage=tmp_path / "missing.db")
    assert not (tmp_path / "missing.db").exists()


def test_names_candidates_and_versions_are_checked(tmp_path, rows):
    path = tmp_path / "s.db"
    create_study(rows, storage=path)
    with pytest.raises(ValueError, match="already has a study named 'default'"):
        create_study(rows, storage=path)
    assert create_study(rows, storage=path, load_if_exists=True).name == "default"
    changed = rows.copy()
    changed[7, 1] += 1e-9
    with pytest.raises(ValueError, match="candidates differ"):
        create_study(changed, storage=path, load_if_exists=True)
    create_study(rows, storage=path, name="second")
    with pytest.raises(ValueError, match="holds 2 studies"):
        load_study(storage=path)
    with pytest.raises(ValueError, match="no study named 'third'"):
        load_study(storage=path, name="third")
    con = sqlite3.connect(path)
    con.execute("UPDATE frontierbo_meta SET value = '99' WHERE key = 'schema_version'")
    con.commit()
    con.close()
    with pytest.raises(StorageError, match="newer frontierbo"):
        load_study(storage=path, name="second")


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"algorithm": "tpe"}, "algorithm must be one of"),
        ({"algorithm": "gp-ucb", "settings": {"beta": -1}}, "beta must be in"),
        ({"settings": {"xi": -1}}, "xi must be in"),
        ({"settings": {"lengthscale": 2}}, "unknown \\['lengthscale'\\]"),
        ({"direction": "up"}, "direction must be one of"),
        ({"columns": ["a"]}, "columns must be 2 distinct names"),
        ({"columns": ["a", "a"]}, "columns must be 2 distinct names"),
        ({"name": ""}, "name must be"),
        ({"seed": -1}, "seed must be"),
        ({"pending_timeout": 0}, "pending_timeout"),
    ],
)
def test_bad_study_options_create_no_file(tmp_path, rows, kwargs, match):
    with pytest.raises(ValueError, match=match):
        create_study(rows, storage=tmp_path / "s.db", **kwargs)
    assert not (tmp_path / "s.db").exists()


def test_non_finite_candidates_are_refused(tmp_path, rows):
    rows[3, 0] = np.nan
    with pytest.raises(ValueError, match="candidates must be finite"):
        create_study(rows, storage=tmp_path / "s.db")


def test_every_row_asked_ends_the_study(tmp_path):
    study = create_study(np.arange(3.0)[:, None], storage=tmp_path / "s.db")
    for _ in range(3):
        study.tell(study.ask(), 1.0)
    with pytest.raises(ValueError, match="every one of the 3 candidates has been asked"):
        study.ask()


def test_sqlalchemy_urls_run_the_same_sql(tmp_path, rows):
    pytest.importorskip("sqlalchemy")
    url = f"sqlite+pysqlite:///{tmp_path / 'sa.db'}"
    study = create_study(rows, storage=url, seed=3)
    study.optimize(_objective, n_trials=12)
    plain = create_study(rows, storage=tmp_path / "plain.db", seed=3)
    plain.optimize(_objective, n_trials=12)
    assert [t.row for t in study.trials] == [t.row for t in plain.trials]
    again = load_study(storage=url)
    assert len(again.trials) == 12 and again.best_value == plain.best_value


def test_unknown_url_schemes_are_clear_errors(tmp_path, rows):
    pytest.importorskip("sqlalchemy")
    with pytest.raises(ValueError, match="storage must be a path or a database URL"):
        create_study(rows, storage="nosuchdb://host/x")


def test_make_sampler_round_trips_settings():
    sampler = make_sampler("gp-ucb", {"beta": "srinivas", "n_initial": 4})
    assert make_sampler("gp-ucb", sampler.settings()) == sampler


def test_log_expected_improvement_matches_the_closed_form_and_its_tail():
    from scipy.stats import norm

    from frontierbo.study.samplers import log_expected_improvement

    gain = np.array([-2.0, -0.3, 0.0, 0.4, 1.5, -4.9])
    std = np.array([0.5, 1.0, 2.0, 0.1, 1.0, 1.0])
    z = gain / std
    closed = std * (norm.pdf(z) + z * norm.cdf(z))
    np.testing.assert_allclose(log_expected_improvement(gain, std), np.log(closed), rtol=1e-10)
    # far below the incumbent EI underflows to 0; its log keeps ranking (h(z) ~ phi(z) / z^2)
    far = log_expected_improvement(np.array([-40.0, -60.0]), np.ones(2))
    assert far[0] > far[1] and np.all(np.isfinite(far))
    np.testing.assert_allclose(far, norm.logpdf([40.0, 60.0]) - 2 * np.log([40.0, 60.0]), atol=2e-3)
    assert log_expected_improvement(np.array([0.5, -0.5]), np.zeros(2))[0] == np.log(0.5)
    assert log_expected_improvement(np.array([-0.5]), np.zeros(1))[0] == -np.inf


def test_gp_ei_study_finds_the_best_row_of_branin(tmp_path, rows):
    study = create_study(rows, storage=tmp_path / "s.db", algorithm="gp-ei", direction="maximize")
    study.optimize(_objective, n_trials=40)
    assert study.best_value == pytest.approx(branin(rows).max())
    assert len({t.row for t in study.trials}) == 40
    assert load_study(storage=tmp_path / "s.db").sampler.name == "gp-ei"


def test_refits_are_warm_between_doublings(tmp_path, monkeypatch):
    """Full fits (fit_restarts) at the first fit and when the observations double; one warm
    restart otherwise; warm_refits=False makes every refit full."""
    from frontierbo.study import samplers

    calls = []
    real = samplers.fit_hyperparameters

    def spy(X, y, **kwargs):
        calls.append((X.shape[0], kwargs["n_restarts"], kwargs["initial"] is not None))
        return real(X, y, **kwargs)

    monkeypatch.setattr(samplers, "fit_hyperparameters", spy)
    rows = np.random.default_rng(0).random((60, 2))
    for warm in (True, False):
        calls.clear()
        study = create_study(rows, storage=tmp_path / f"{warm}.db", direction="maximize",
                             settings={"n_initial": 2, "warm_refits": warm})  # fmt: skip
        study.optimize(lambda t: float(np.sin(5 * t.x[0]) + t.x[1]), n_trials=12)
        full = [t for t, restarts, _ in calls if restarts == 2]
        assert [t for t, _, _ in calls] == list(range(2, 12))
        assert full == ([2, 4, 8] if warm else list(range(2, 12)))
        assert all(initial for t, _, initial in calls if t > 2)  # each starts at the last optimum
    with pytest.raises(ValueError, match="warm_refits must be true or false"):
        create_study(rows, storage=tmp_path / "x.db", settings={"warm_refits": "yes"})


def test_a_study_command_does_not_import_the_systems(tmp_path):
    """``frontierbo ask`` / ``study ...`` build no system's parser (a second of start-up)."""
    import subprocess
    import sys

    db = tmp_path / "s.db"
    create_study(np.eye(3), storage=db, algorithm="random").storage.close()
    code = (
        "import sys; from frontierbo.cli import main; main(['ask', '--storage', sys.argv[1]]); "
        "print(sorted(m for m in sys.modules if m.endswith('.experiment')))"
    )
    out = subprocess.run([sys.executable, "-c", code, str(db)], capture_output=True, text=True,
                         check=True).stdout  # fmt: skip
    assert out.strip().splitlines()[-1] == "[]"


def test_auto_refits_every_observation_then_every_64th_growth():
    from frontierbo.study.samplers import AUTO_REFIT_ALL, GPEISampler

    auto, every = GPEISampler(), GPEISampler(refit_every=1)
    assert all(auto.fit_schedule(t, 5) == every.fit_schedule(t, 5) for t in range(1, 129))
    fits = sorted({auto.fit_schedule(t, 5)[0] for t in range(1, 2101)})
    steps = np.diff(fits)
    assert set(steps[: AUTO_REFIT_ALL - 5]) == {1}
    for previous, step in zip(fits[:-1], steps, strict=True):  # each fit's step is its t // 64
        assert step == (1 if previous < AUTO_REFIT_ALL else previous // 64)
    t_fit, previous = auto.fit_schedule(2000, 5)
    assert previous < t_fit <= 2000 and t_fit + t_fit // 64 > 2000
    with pytest.raises(ValueError, match="refit_every must be an integer >= 1 or 'auto', got 0"):
        GPEISampler(refit_every=0)
