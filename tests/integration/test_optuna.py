"""The Optuna sampler on frontierbo's study model and the export of a study to Optuna (issue 59,
item 6): frontierbo.integration.optuna."""

from __future__ import annotations

import importlib
import math
import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pytest

optuna = pytest.importorskip("optuna")

from optuna.distributions import (  # noqa: E402
    CategoricalDistribution,
    FloatDistribution,
    IntDistribution,
)
from optuna.trial import TrialState, create_trial  # noqa: E402

from frontierbo.integration import optuna as bridge  # noqa: E402
from frontierbo.integration.optuna import FrontierboSampler, to_optuna  # noqa: E402
from frontierbo.study import Categorical, Float, Int, create_study  # noqa: E402

optuna.logging.set_verbosity(optuna.logging.ERROR)

CHOICES = ["relu", None, 3, True, 2.5]


def _objective(trial):
    x = trial.suggest_float("x", -2.0, 2.0)
    lr = trial.suggest_float("lr", 1e-5, 1e-1, log=True)
    n = trial.suggest_int("n", 1, 8)
    width = trial.suggest_int("width", 2, 256, log=True)
    frac = trial.suggest_float("frac", 0.0, 1.0, step=0.1)
    even = trial.suggest_int("even", 0, 10, step=2)
    act = trial.suggest_categorical("act", CHOICES)
    return (x - 0.5) ** 2 + (math.log10(lr) + 3) ** 2 + (n - 3) ** 2 + abs(math.log2(width) - 5) \
        + frac + even / 10 + CHOICES.index(act)  # fmt: skip


def _relative(trial) -> dict:
    """The params the sampler chose for a trial (its system attribute)."""
    return bridge._asked_params(SimpleNamespace(system_attrs=trial.system_attrs, params={}))


@pytest.mark.parametrize("direction", ["minimize", "maximize"])
def test_every_distribution_kind_comes_back_as_optuna_gives_it(direction):
    sampler = FrontierboSampler(seed=0)
    study = optuna.create_study(direction=direction, sampler=sampler)
    sign = 1.0 if direction == "minimize" else -1.0
    study.optimize(lambda t: sign * _objective(t), n_trials=14)
    assert study.direction.name.lower() == direction
    assert [t.state for t in study.trials] == [TrialState.COMPLETE] * 14
    for t in study.trials:
        p = t.params
        assert type(p["x"]) is float and -2.0 <= p["x"] <= 2.0
        assert type(p["lr"]) is float and 1e-5 <= p["lr"] <= 1e-1
        assert type(p["n"]) is int and 1 <= p["n"] <= 8
        assert type(p["width"]) is int and 2 <= p["width"] <= 256
        assert type(p["even"]) is int and p["even"] in range(0, 11, 2)
        assert p["frac"] in [k / 10 for k in range(11)]  # 0.3, not 0.30000000000000004
        assert any(p["act"] is c or (p["act"] == c and type(p["act"]) is type(c)) for c in CHOICES)
    # from trial 1 on every parameter is the sampler's joint choice, none sampled independently
    for t in study.trials[1:]:
        assert _relative(t) == t.params
    assert sampler.sampler.name == "gp-ei"


def test_the_mapping_keeps_log_steps_ints_and_choices():
    encoding = bridge._Encoding({
        "lr": FloatDistribution(1e-5, 1e-1, log=True),
        "x": FloatDistribution(0.0, 1.0),
        "f": FloatDistribution(0.0, 1.0, step=0.25),
        "n": IntDistribution(1, 64, log=True),
        "k": IntDistribution(1, 9, step=4),
        "c": CategoricalDistribution(["a", None, False]),
    })  # fmt: skip
    lr, x, f, n, k, c = encoding.space.params
    assert isinstance(lr, Float) and lr.log and (lr.low, lr.high) == (1e-5, 1e-1)
    assert isinstance(x, Float) and not x.log
    assert isinstance(f, Int) and (f.low, f.high) == (0, 4)  # the 5 values' indices
    assert isinstance(n, Int) and n.log and (n.low, n.high) == (1, 64)
    assert isinstance(k, Int) and (k.low, k.high) == (0, 2)  # 1, 5, 9
    assert isinstance(c, Categorical) and c.count == 3
    params = {"lr": 3e-4, "x": 0.25, "f": 0.75, "n": 17, "k": 5, "c": None}
    back = encoding.params(encoding.point(params))
    assert back["lr"] == pytest.approx(3e-4, rel=1e-12)
    assert {**back, "lr": 3e-4} == params and type(back["n"]) is int and back["c"] is None
    assert encoding.point({**params, "f": 0.3}) is None  # not on the step grid
    assert encoding.point({**params, "c": "b"}) is None  # not a choice
    assert encoding.point({**params, "x": 1.5}) is None  # outside the range
    # a log float is searched on its log scale: half of a design of a 6-decade range lies in
    # the lowest 3 decades (a linear search would put 0.1 % there)
    study = optuna.create_study(sampler=FrontierboSampler(seed=1, n_startup_trials=33))
    study.optimize(lambda t: t.suggest_float("lr", 1e-6, 1.0, log=True), n_trials=33)
    low = np.mean([t.params["lr"] < 1e-3 for t in study.trials[1:]])
    assert 0.35 <= low <= 0.65


def test_the_same_seed_gives_the_same_trials():
    def run(seed):
        study = optuna.create_study(sampler=FrontierboSampler(seed=seed))
        study.optimize(_objective, n_trials=12)
        return [(t.params, t.value) for t in study.trials]

    first = run(7)
    assert run(7) == first
    assert run(8) != first


def test_the_startup_trials_are_a_frontierbo_studys_design(tmp_path):
    """Trials 1 .. n0-1 are points 1 .. n0-1 of the Sobol design a frontierbo study with the
    same space (in name order) and seed asks (trial 0 precedes any search space)."""
    space = [Categorical("act", ["a", "b", "c"]), Float("lr", 1e-4, 1e-1, log=True),
             Int("n", 1, 6), Float("x", -1.0, 1.0)]  # fmt: skip
    ours = create_study(space=space, storage=tmp_path / "s.db", seed=5)
    expected = []
    for _ in range(5):  # n0 = min(10, 4 + 1)
        trial = ours.ask()
        expected.append(trial.params)
        ours.tell(trial, 0.0)

    def objective(t):
        t.suggest_categorical("act", ["a", "b", "c"])
        t.suggest_float("lr", 1e-4, 1e-1, log=True)
        t.suggest_int("n", 1, 6)
        return t.suggest_float("x", -1.0, 1.0)

    study = optuna.create_study(sampler=FrontierboSampler(seed=5))
    study.optimize(objective, n_trials=5)
    for k in range(1, 5):
        got, want = study.trials[k].params, expected[k]
        assert got["act"] == want["act"] and got["n"] == want["n"]
        assert got["lr"] == pytest.approx(want["lr"], rel=1e-12)
        assert got["x"] == pytest.approx(want["x"], abs=1e-12)


def _spy(monkeypatch) -> list:
    seen = []
    real = bridge.suggest_point

    def spy(sampler, history, seed, fits):
        seen.append(history)
        return real(sampler, history, seed, fits)

    monkeypatch.setattr(bridge, "suggest_point", spy)
    return seen


def test_failed_trials_are_points_asked_never_values(monkeypatch):
    dists = {"x": FloatDistribution(0.0, 1.0), "y": FloatDistribution(0.0, 1.0)}
    study = optuna.create_study(sampler=FrontierboSampler(seed=0))
    done = [(0.1, 0.2, 1.0), (0.8, 0.3, 2.0), (0.4, 0.9, 0.5), (0.6, 0.6, 0.7)]
    for x, y, v in done:
        study.add_trial(create_trial(params={"x": x, "y": y}, distributions=dists, value=v))
    study.add_trial(
        create_trial(state=TrialState.FAIL, params={"x": 0.25, "y": 0.75}, distributions=dists)
    )
    seen = _spy(monkeypatch)
    trial = study.ask(dists)
    (h,) = seen
    assert h.values.tolist() == [-1.0, -2.0, -0.5, -0.7]  # minimised: negated, no failed value
    assert h.points.shape == (4, 2) and h.failed.shape == (1, 2) and h.pending.shape == (0, 2)
    np.testing.assert_allclose(h.failed[0], [0.25, 0.75])
    assert (trial.params["x"], trial.params["y"]) != (0.25, 0.75)
    # the asked trial is pending for the next ask, at the point the sampler chose
    study.ask(dists)
    np.testing.assert_allclose(seen[1].pending, [[trial.params["x"], trial.params["y"]]])
    assert seen[1].values.size == 4


def test_the_gp_beats_random_search_on_a_quadratic():
    def quadratic(t):
        x, y = t.suggest_float("x", -1.0, 1.0), t.suggest_float("y", -1.0, 1.0)
        return (x - 0.3) ** 2 + (y + 0.2) ** 2

    ours = optuna.create_study(sampler=FrontierboSampler(seed=0))
    ours.optimize(quadratic, n_trials=25)
    random = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    random.optimize(quadratic, n_trials=25)
    assert ours.best_value < 1e-3 < random.best_value


def test_dynamic_params_are_sampled_independently():
    def objective(t):
        kind = t.suggest_categorical("kind", ["a", "b"])
        x = t.suggest_float("x", 0.0, 1.0)
        extra = t.suggest_int(f"extra_{kind}", 0, 5)  # in half of the trials each
        return x + extra

    study = optuna.create_study(sampler=FrontierboSampler(seed=0))
    study.optimize(objective, n_trials=12)
    assert all(t.state == TrialState.COMPLETE for t in study.trials)
    for t in study.trials[2:]:
        assert set(_relative(t)) == {"kind", "x"}  # the intersection space only
        extra = t.params[f"extra_{t.params['kind']}"]
        assert type(extra) is int and 0 <= extra <= 5


def test_a_finite_space_asked_whole_falls_back_to_repeats():
    study = optuna.create_study(sampler=FrontierboSampler(seed=0))
    study.optimize(lambda t: t.suggest_int("a", 0, 1) + t.suggest_int("b", 0, 1), n_trials=8)
    assert len(study.trials) == 8 and study.best_value == 0
    asked = {(t.params["a"], t.params["b"]) for t in study.trials}
    assert asked == {(0, 0), (0, 1), (1, 0), (1, 1)}


def test_threads_and_reseeding():
    sampler = FrontierboSampler(seed=3)
    sampler.reseed_rng()
    assert sampler.seed != 3
    study = optuna.create_study(sampler=sampler)
    study.optimize(lambda t: t.suggest_float("x", 0.0, 1.0) ** 2, n_trials=10, n_jobs=2)
    assert sum(t.state == TrialState.COMPLETE for t in study.trials) == 10


def test_bad_input_is_one_error_naming_it():
    with pytest.raises(ValueError, match="algorithm must be one of"):
        FrontierboSampler(algorithm="nope")
    with pytest.raises(ValueError, match="algorithm 'po-gp-ucb' chooses among candidate rows"):
        FrontierboSampler(algorithm="po-gp-ucb")
    with pytest.raises(ValueError, match="seed"):
        FrontierboSampler(seed=-1)
    with pytest.raises(ValueError, match="n_startup_trials"):
        FrontierboSampler(n_startup_trials=0)
    with pytest.raises(ValueError, match="n_startup_trials: algorithm 'random' has no initial"):
        FrontierboSampler(algorithm="random", n_startup_trials=5)
    with pytest.raises(ValueError, match="n_startup_trials=5 contradicts settings n_initial=4"):
        FrontierboSampler(n_startup_trials=5, settings={"n_initial": 4})
    with pytest.raises(ValueError, match="settings of algorithm 'gp-ei': unknown"):
        FrontierboSampler(settings={"bogus": 1})
    study = optuna.create_study(directions=["minimize", "maximize"], sampler=FrontierboSampler())
    with pytest.raises(ValueError, match="one objective; this study has 2"):
        study.optimize(lambda t: (t.suggest_float("x", 0, 1), 0.0), n_trials=1)


def test_settings_and_random_search_pass_through():
    sampler = FrontierboSampler("gp-ucb", seed=0, n_startup_trials=3, settings={"beta": 2.0})
    assert sampler.sampler.n_initial == 3 and sampler.sampler.beta == 2.0
    study = optuna.create_study(sampler=FrontierboSampler("random", seed=0))
    study.optimize(lambda t: t.suggest_float("x", 0.0, 1.0), n_trials=5)
    assert len({t.params["x"] for t in study.trials}) == 5


def test_import_frontierbo_does_not_import_optuna():
    code = (
        "import sys, frontierbo, frontierbo.study\n"
        "assert 'optuna' not in sys.modules, 'optuna'\n"
        "assert 'frontierbo.integration' not in sys.modules, 'integration'\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_without_optuna_the_import_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "optuna", None)  # import optuna now raises ImportError
    monkeypatch.delitem(sys.modules, "frontierbo.integration.optuna")
    with pytest.raises(ImportError, match=r"pip install 'frontierbo\[optuna\]'"):
        importlib.import_module("frontierbo.integration.optuna")


# -- to_optuna ------------------------------------------------------------------------------------
def test_a_space_study_round_trips_to_optuna(tmp_path):
    space = [Float("lr", 1e-4, 1e-1, log=True), Float("f", 0.0, 1.0, step=0.25),
             Int("layers", 1, 4), Categorical("act", ["a", "b", 3])]  # fmt: skip
    study = create_study(space=space, storage=tmp_path / "s.db", seed=2, direction="maximize")
    for k in range(7):
        t = study.ask()
        if k == 3:
            study.tell(t, state="fail")
        elif k < 6:
            study.tell(t, t.params["lr"] * t.params["layers"] + (t.params["act"] == "b"))
    out = to_optuna(study, storage=f"sqlite:///{tmp_path / 'optuna.db'}")
    assert out.direction.name == "MAXIMIZE" and out.study_name == study.name
    told = [t for t in study.trials if t.state in ("complete", "fail")]  # not the pending one
    assert len(out.trials) == len(told) == 6
    for mine, theirs in zip(told, out.trials, strict=True):
        assert theirs.params == mine.params
        assert theirs.user_attrs["frontierbo_trial"] == mine.number
        if mine.state == "complete":
            assert theirs.state == TrialState.COMPLETE and theirs.value == mine.value
        else:
            assert theirs.state == TrialState.FAIL and theirs.value is None
        assert theirs.datetime_start.timestamp() == pytest.approx(mine.asked_at, abs=1e-3)
    dists = out.trials[0].distributions
    assert dists["lr"] == FloatDistribution(1e-4, 1e-1, log=True)
    assert dists["f"] == FloatDistribution(0.0, 1.0, step=0.25)
    assert dists["layers"] == IntDistribution(1, 4)
    assert dists["act"] == CategoricalDistribution(["a", "b", 3])
    assert out.best_value == study.best_value
    again = optuna.load_study(study_name=study.name, storage=f"sqlite:///{tmp_path / 'optuna.db'}")
    assert len(again.trials) == 6
    # an Optuna study made so goes on with the frontierbo sampler
    again.sampler = FrontierboSampler(seed=0)
    again.optimize(lambda t: t.suggest_float("lr", 1e-4, 1e-1, log=True), n_trials=2)
    assert len(again.trials) == 8


def test_a_rows_study_round_trips_to_optuna(tmp_path):
    from frontierbo.study.tables import read_candidates

    path = tmp_path / "rows.csv"
    path.write_text(
        "sample_id,temp,n,solvent,ok\nS-1,80.5,3,water,True\nS-2,70,5,ethanol,False\n"
        "S-3,60,2,water,True\nS-4,65.5,4,acetone,False\nS-5,75,1,ethanol,True\n"
    )
    study = create_study(read_candidates(path), storage=tmp_path / "s.db", algorithm="random")
    study.optimize(lambda t: t.params["temp"] + t.params["n"], n_trials=4)
    out = to_optuna(study, study_name="rows")
    assert out.study_name == "rows" and out.direction.name == "MINIMIZE"
    assert len(out.trials) == 4
    for mine, theirs in zip(study.trials, out.trials, strict=True):
        assert theirs.params == mine.params and theirs.value == mine.value
        assert theirs.user_attrs["row"] == mine.row
        assert theirs.user_attrs["carried_sample_id"] == f"S-{mine.row + 1}"
    dists = out.trials[0].distributions
    assert dists["temp"] == FloatDistribution(60.0, 80.5)
    assert dists["n"] == IntDistribution(1, 5)
    assert dists["solvent"] == CategoricalDistribution(["acetone", "ethanol", "water"])
    assert dists["ok"] == CategoricalDistribution([False, True])

    X = np.array([[0.0, 5.0], [1.0, 2.0], [0.5, 9.0]])
    plain = create_study(X, storage=tmp_path / "m.db", algorithm="random", name="matrix")
    plain.optimize(lambda t: float(t.x.sum()), n_trials=3)
    out = to_optuna(plain)
    assert [t.value for t in out.trials] == [t.value for t in plain.trials]
    assert out.trials[0].distributions == {
        name: FloatDistribution(lo, hi)
        for name, lo, hi in zip(plain.columns, (0.0, 2.0), (1.0, 9.0), strict=True)
    }
    assert [t.params for t in out.trials] == [t.params for t in plain.trials]
