"""The systems' algorithms as study samplers (entry points): PO-GP-UCB's modeler, the LDP
algorithms with privatised tells, Q-GP-UCB with the evaluator's oracle."""

from __future__ import annotations

import json
import math
import sqlite3
import time

import numpy as np
import pytest

from frontierbo.core.kernels import make_kernel
from frontierbo.ldp.moma_gp_ucb import MoMAGPUCB
from frontierbo.po.po_gp_ucb import POGPUCBModeler
from frontierbo.quantum.q_gp_ucb import QGPUCB
from frontierbo.study import create_study, load_study
from frontierbo.study import samplers as study_samplers
from frontierbo.study.samplers import available_samplers, make_sampler, unit_cube
from frontierbo.study.storage import SCHEMA_VERSION

#: every registered system sampler with settings that make it run
SYSTEM_SAMPLERS = {
    "po-gp-ucb": {},
    "ata-gp-ucb": {"horizon": 30, "B": 1.0, "R": 1.0, "epsilon": 2.0},
    "tgp-ucb": {"horizon": 30, "B": 1.0, "v": 2.0},
    "moma-gp-ucb": {"horizon": 30, "B": 1.0, "R": 0.5, "epsilon": 4.0},
    "q-gp-ucb": {"lengthscale": 0.3},
    "q-linucb": {"width": "log"},
}


@pytest.fixture
def rows():
    return np.random.default_rng(1).uniform(size=(25, 2))


def f(x):
    return float(np.exp(-8 * np.sum((np.asarray(x) - 0.6) ** 2)))


def test_the_systems_register_their_samplers_through_entry_points():
    from frontierbo.registry import systems

    assert set(SYSTEM_SAMPLERS) == {name for s in systems() for name in s.samplers}
    found = available_samplers()
    assert set(SYSTEM_SAMPLERS) | {"gp-ucb", "gp-ei", "random"} <= set(found)
    for name, settings in SYSTEM_SAMPLERS.items():
        sampler = make_sampler(name, settings)
        assert sampler.name == name
        # the stored settings rebuild the same sampler (what load_study does)
        assert make_sampler(name, json.loads(json.dumps(sampler.settings()))) == sampler


@pytest.mark.parametrize("name", sorted(SYSTEM_SAMPLERS))
def test_a_system_sampler_runs_a_study_and_resumes_from_the_database(tmp_path, rows, name):
    study = create_study(rows, storage=tmp_path / "s.db", algorithm=name,
                         settings=SYSTEM_SAMPLERS[name], seed=5)  # fmt: skip
    study.optimize(lambda t: f(t.x), n_trials=12)
    trials = study.trials
    assert [t.state for t in trials] == ["complete"] * 12
    assert all(0 <= t.row < rows.shape[0] for t in trials)
    # a fresh process (no cached replay) asks what this one would ask next
    cached = study.ask()
    study.storage.close()
    study_samplers._REPLAYS.clear()
    fresh = load_study(storage=tmp_path / "s.db")
    assert fresh.trials[-1].row == cached.row and fresh.trials[-1].request == cached.request


def test_bad_settings_name_the_setting():
    with pytest.raises(ValueError, match="horizon"):
        make_sampler("ata-gp-ucb", {"B": 1.0})
    with pytest.raises(ValueError, match="R "):
        make_sampler("ata-gp-ucb", {"horizon": 10, "B": 1.0, "epsilon": 1.0})
    with pytest.raises(ValueError, match=r"\bv\b"):
        make_sampler("tgp-ucb", {"horizon": 10, "B": 1.0})
    with pytest.raises(ValueError, match="missing"):
        make_sampler("po-gp-ucb", {"lengthscale": 0.5})
    with pytest.raises(ValueError, match="width"):
        make_sampler("q-gp-ucb", {"width": "wide"})


def test_ldp_study_arms_are_those_of_the_algorithm_run_directly(tmp_path, rows):
    """Rebuilt and replayed at every ask (no cache), the study plays the arms of one
    continuous run of the paper's algorithm on the same kernel and seed."""
    settings = {"horizon": 20, "B": 1.0, "c": 0.5, "lengthscale": 0.3}
    study = create_study(rows, storage=tmp_path / "s.db", algorithm="moma-gp-ucb",
                         settings=settings, seed=2, direction="maximize")  # fmt: skip
    noise = np.random.default_rng(9).standard_t(3, size=20) * 0.1
    for k in range(20):
        study_samplers._REPLAYS.clear()
        trial = study.ask()
        study.tell(trial, f(trial.x) + noise[k])
    K = make_kernel("se", 0.3, 1.0)(unit_cube(rows))
    direct = MoMAGPUCB(K, 20, B=1.0, c=0.5, beta_scale=0.1, seed=np.random.default_rng([2, 0x1D9]))
    arms = []
    for k in range(20):
        arms.append(direct.ask())
        direct.tell(arms[-1], f(rows[arms[-1]]) + noise[k])
    assert [t.row for t in study.trials] == arms
    assert len(set(arms)) < len(arms)  # MoMA plays each chosen arm k_mom times


def test_ldp_tells_are_privatised_in_the_telling_process(tmp_path, rows):
    settings = {"horizon": 40, "B": 1.0, "R": 1.0, "epsilon": 1.0}
    study = create_study(rows, storage=tmp_path / "s.db", algorithm="ata-gp-ucb", settings=settings)
    raw = []
    for _ in range(10):
        trial = study.ask()
        raw.append(f(trial.x))
        study.tell(trial, raw[-1])
    stored = np.array([t.value for t in study.trials])
    granularity = study.sampler.randomiser().granularity
    assert np.all(stored != np.array(raw))  # never the raw value
    assert np.allclose(stored / granularity, np.round(stored / granularity))  # CTL's grid
    with sqlite3.connect(tmp_path / "s.db") as conn:
        in_db = [r[0] for r in conn.execute("SELECT value FROM frontierbo_trials")]
    assert not set(raw) & set(in_db)
    guarantee = study.sampler.privacy()
    assert guarantee.epsilon == 1.0 and guarantee.delta == 0.0
    # the noise is not re-drawable from the stored seed: the same study again differs
    twin = create_study(rows, storage=tmp_path / "t.db", algorithm="ata-gp-ucb",
                        settings=settings)  # fmt: skip
    trial = twin.ask()
    assert trial.row == study.trials[0].row  # the same first ask (seeded)
    again = [twin.tell(trial, raw[0]).value] + [
        twin.sampler.privatise_tell(raw[0]) for _ in range(2)
    ]
    assert any(v != stored[0] for v in again)  # all three equal to it: probability ~1e-10


def test_the_privatised_tell_is_unbiased_inside_the_range_and_clips_outside():
    sampler = make_sampler("tgp-ucb", {"horizon": 10, "B": 1.0, "R": 1.0, "epsilon": 1.0})
    ctl = sampler.randomiser()  # what privatise_tell draws from, seeded here for the statistics
    scale = ctl.noise_scale  # Laplace scale 2 (B + R) / eps = 4
    n = 4000
    se = math.sqrt(2.0) * scale / math.sqrt(n)
    inside = ctl.randomise(np.full(n, 0.5), np.random.default_rng(3))
    assert abs(inside.mean() - 0.5) < 4 * se
    # the sample variance of Laplace draws has relative s.e. sqrt(5 / n): 4 of them
    assert inside.var() == pytest.approx(2 * scale**2, rel=4 * math.sqrt(5 / n))
    outside = ctl.randomise(np.full(n, 50.0), np.random.default_rng(4))
    assert abs(outside.mean() - 2.0) < 4 * se  # clipped to B + R = 2 first
    told = [sampler.privatise_tell(0.5) for _ in range(3)]  # fresh OS entropy each time
    assert len(set(told)) > 1  # three equal draws: probability about 1e-7


def test_sequential_samplers_refuse_a_second_pending_trial(tmp_path, rows):
    settings = {"horizon": 10, "B": 1.0, "v": 1.0}
    study = create_study(rows, storage=tmp_path / "s.db", algorithm="tgp-ucb", settings=settings)
    first = study.ask()
    with pytest.raises(ValueError, match="sequential.*trial 0 is pending"):
        study.ask()
    assert len(study.trials) == 1  # nothing written
    study.tell(first, 0.1)
    assert study.ask().number == 1
    again = create_study(rows, storage=tmp_path / "s.db", name="timeout", algorithm="tgp-ucb",
                         settings=settings, pending_timeout=1e-6)  # fmt: skip
    abandoned = again.ask()
    time.sleep(0.01)
    reoffered = again.ask()  # the worker died: the same trial again
    assert (reoffered.number, reoffered.row, reoffered.offers) == (0, abandoned.row, 2)


def _run_stages(study, n: int) -> list[float]:
    """Tell each stage an estimate off by a third of its requested accuracy."""
    estimates = []
    for _ in range(n):
        trial = study.ask()
        estimates.append(f(trial.x) + 0.3 * trial.request["accuracy"])
        study.tell(trial, estimates[-1])
    return estimates


@pytest.mark.parametrize("algorithm", ["q-gp-ucb", "q-linucb"])
def test_stage_samplers_ask_the_stages_of_their_algorithm(tmp_path, rows, algorithm):
    """The same stages as QGPUCB / QLinUCB driven directly: line 2's arm and line 3's accuracy
    eps_s = sigma / sqrt(lambda), each estimate weighted by 1 / eps_s^2."""
    from frontierbo.quantum.linear import QLinUCB

    settings = {"lengthscale": 0.3} if algorithm == "q-gp-ucb" else {}
    study = create_study(rows, storage=tmp_path / "s.db", algorithm=algorithm,
                         settings=settings, seed=4, direction="maximize")  # fmt: skip
    estimates = _run_stages(study, 8)
    trials = study.trials
    assert trials[0].request == {"accuracy": 1.0, "delta": 0.05, "initial": True}
    if algorithm == "q-gp-ucb":
        direct = QGPUCB(make_kernel("se", 0.3, 1.0)(unit_cube(rows)))
    else:
        direct = QLinUCB(unit_cube(rows))  # Theorem 6's width, the sampler's default
    direct.observe(trials[0].row, estimates[0], 1.0)
    for trial, y in zip(trials[1:], estimates[1:], strict=True):
        stage = direct.ask()
        assert stage.index == trial.row
        assert stage.accuracy == pytest.approx(trial.request["accuracy"])
        direct.tell(stage.index, y, stage.accuracy)


def test_po_gp_ucb_study_with_public_hyperparameters_is_algorithm_2(tmp_path):
    Z = np.random.default_rng(3).normal(size=(60, 3))
    y = np.sin(Z[:, 0]) + 0.5 * Z[:, 1]
    hyper = {"lengthscale": 1.2, "signal_variance": 0.8, "noise_variance": 0.01, "prior_mean": 0.1}
    study = create_study(Z, storage=tmp_path / "s.db", algorithm="po-gp-ucb", settings=hyper,
                         direction="maximize")  # fmt: skip
    study.optimize(lambda t: float(y[t.row]), n_trials=15)
    rows = [t.row for t in study.trials]
    n0 = study.sampler.initial_trials(3)
    modeler = POGPUCBModeler(Z, **hyper)  # beta_t of line 3 with delta' = 0.025
    for r in rows[:n0]:
        modeler.tell(r, float(y[r]))
    for r in rows[n0:]:
        assert modeler.ask() == r
        modeler.tell(r, float(y[r]))


def test_a_schema_1_database_is_migrated_when_opened(tmp_path, rows):
    path = tmp_path / "old.db"
    study = create_study(rows, storage=path)
    study.optimize(lambda t: f(t.x), n_trials=3)
    asked = [t.row for t in study.trials]
    study.storage.close()
    with sqlite3.connect(path) as conn:  # rewrite it as schema 1 had it
        conn.executescript(
            """CREATE TABLE t1 (study_id INTEGER NOT NULL, number INTEGER NOT NULL,
                row_index INTEGER NOT NULL, state VARCHAR(16) NOT NULL, value DOUBLE PRECISION,
                asked_at DOUBLE PRECISION NOT NULL, told_at DOUBLE PRECISION,
                offers INTEGER NOT NULL, PRIMARY KEY (study_id, number),
                UNIQUE (study_id, row_index));
            INSERT INTO t1 SELECT study_id, number, row_index, state, value, asked_at, told_at,
                offers FROM frontierbo_trials;
            DROP TABLE frontierbo_trials;
            ALTER TABLE t1 RENAME TO frontierbo_trials;
            ALTER TABLE frontierbo_studies DROP COLUMN space;
            UPDATE frontierbo_meta SET value = '1' WHERE key = 'schema_version';"""
        )
    old = load_study(storage=path)
    assert [(t.row, t.request) for t in old.trials] == [(row, {}) for row in asked]
    with sqlite3.connect(path) as conn:
        version = conn.execute("SELECT value FROM frontierbo_meta WHERE key = 'schema_version'")
        assert version.fetchone()[0] == str(SCHEMA_VERSION)  # 1 -> 2 -> current
    bandit = create_study(rows, storage=path, name="bandit", algorithm="moma-gp-ucb",
                          settings={"horizon": 10, "B": 1.0, "c": 1.0})  # fmt: skip
    bandit.optimize(lambda t: f(t.x), n_trials=4)  # repeated rows: the UNIQUE is gone
    assert len({t.row for t in bandit.trials}) == 1


def test_ask_prints_the_request_from_the_shell(cli, write_csv, tmp_path, rows):
    path = write_csv(["a", "b"], [[f"{a:.4f}", f"{b:.4f}"] for a, b in rows])
    db = tmp_path / "q.db"
    status, out, err = cli(["study", "create", "--candidates", path, "--storage", db,
                            "--algorithm", "q-gp-ucb"])  # fmt: skip
    assert status == 0, err
    for k in range(3):
        status, out, err = cli(["ask", "--storage", db])
        asked = json.loads(out)
        assert asked["request"]["accuracy"] > 0 and asked["request"]["delta"] == 0.05
        status, out, err = cli(["tell", "--storage", db, "--trial", k, "--value", 0.5])
        assert status == 0, err
    status, out, err = cli(["study", "create", "--candidates", path, "--storage", db, "--name",
                            "p", "--algorithm", "ata-gp-ucb", "--set", "horizon=5", "--set",
                            "B=1", "--set", "R=1", "--set", "epsilon=1"])  # fmt: skip
    assert status == 0, err
    cli(["ask", "--storage", db, "--name", "p"])
    status, out, err = cli(["tell", "--storage", db, "--name", "p", "--trial", 0, "--value", 0.5])
    assert status == 0 and "privatised to" in out
    status, out, err = cli(["study", "show", "--storage", db, "--name", "p"])
    assert status == 0 and "1-LDP per value" in out
