"""Warm start (issue 59, item 2): add_trial(s), enqueue_trial, tell --row / --params without an
ask, study enqueue and study create --observed."""

from __future__ import annotations

import json

import numpy as np
import pytest

from frontierbo.study import Categorical, Float, Int, create_study, load_study

SPACE = [Float("lr", 1e-4, 1e-1, log=True), Int("layers", 1, 4), Categorical("act", ["a", "b"])]
CSV = "sample_id,temp,solvent\nS-1,80.5,water\nS-2,70,ethanol\nS-3,60,water\nS-4,50,toluene\n"


def test_an_added_trial_is_a_told_trial_the_model_sees(tmp_path):
    rows = np.random.default_rng(0).random((30, 2))
    f = lambda x: float(np.sin(4 * x[0]) + x[1])  # noqa: E731
    asked = create_study(rows, storage=tmp_path / "a.db", seed=4, settings={"n_initial": 2})
    for _ in range(5):
        t = asked.ask()
        asked.tell(t, f(t.x))
    warm = create_study(rows, storage=tmp_path / "b.db", seed=4, settings={"n_initial": 2})
    added = [warm.add_trial(row=t.row, value=t.value) for t in asked.trials]
    assert [(t.number, t.state, t.offers) for t in added] == [(k, "complete", 0) for k in range(5)]
    # the same told rows and values: the next ask is the same row
    assert warm.ask().row == asked.ask().row
    row = int(asked.trials[0].row)
    with pytest.raises(ValueError, match=rf"row {row} is already in trial 0 \(complete\)"):
        warm.add_trial(row=row, value=1.0)


def test_add_trial_by_params_in_a_space_and_in_a_csv(tmp_path):
    space = create_study(space=SPACE, storage=tmp_path / "s.db")
    t = space.add_trial(params={"lr": 0.01, "layers": 3, "act": "b"}, value=0.5)
    assert t.params == {"lr": 0.01, "layers": 3, "act": "b"} and t.row is None
    with pytest.raises(ValueError, match="layers"):
        space.add_trial(params={"lr": 0.01, "layers": 9, "act": "b"}, value=0.5)
    with pytest.raises(ValueError, match="has no rows: give params="):
        space.add_trial(row=0, value=1.0)
    from frontierbo.study.tables import read_candidates

    (tmp_path / "rows.csv").write_text(CSV)
    study = create_study(read_candidates(tmp_path / "rows.csv"), storage=tmp_path / "r.db")
    t = study.add_trial(params={"temp": 70, "solvent": "ethanol"}, value=2.0)
    assert t.row == 1 and t.carried == {"sample_id": "S-2"}
    with pytest.raises(ValueError, match="are no candidate row"):
        study.add_trial(params={"temp": 71, "solvent": "ethanol"}, value=2.0)
    with pytest.raises(
        ValueError, match=r"solvent must be one of \['ethanol', 'toluene', 'water'\]"
    ):
        study.add_trial(params={"temp": 70, "solvent": "acetone"}, value=2.0)


def test_add_trials_is_all_or_nothing(tmp_path):
    study = create_study(np.eye(4), storage=tmp_path / "s.db", algorithm="random")
    with pytest.raises(ValueError, match="row 1 is already in trial 1"):
        study.add_trials([{"row": 0, "value": 1.0}, {"row": 1, "value": 2.0},
                          {"row": 1, "value": 3.0}])  # fmt: skip
    assert study.trials == []
    with pytest.raises(ValueError, match="value must be a finite number"):
        study.add_trials([{"row": 0, "value": 1.0}, {"row": 2, "value": float("nan")}])
    assert study.trials == []


def test_an_ldp_study_privatises_an_added_value(tmp_path):
    rows = np.random.default_rng(1).random((10, 2))
    settings = {"horizon": 20, "B": 1.0, "R": 1.0, "epsilon": 1.0}
    study = create_study(rows, storage=tmp_path / "s.db", algorithm="ata-gp-ucb",
                         settings=settings, direction="maximize")  # fmt: skip
    t = study.add_trial(row=3, value=0.25)
    assert t.value != 0.25  # what the database holds is the privatised value


def test_enqueued_points_are_asked_first_in_order(tmp_path):
    study = create_study(space=SPACE, storage=tmp_path / "s.db", seed=1)
    first = {"lr": 0.001, "layers": 1, "act": "a"}
    second = {"lr": 0.05, "layers": 4, "act": "b"}
    assert study.enqueue_trial(params=first).state == "waiting"
    study.enqueue_trial(params=second)
    a, b, c = study.ask(), study.ask(), study.ask()
    assert (a.params, b.params, a.number, b.number) == (first, second, 0, 1)
    assert c.number == 2 and c.state == "pending" and c.offers == 1


def test_enqueue_offers_a_failed_row_again(tmp_path):
    study = create_study(np.eye(3), storage=tmp_path / "s.db", algorithm="random", seed=0)
    t = study.ask()
    study.tell(t, state="fail")
    study.enqueue_trial(row=t.row)
    again = study.ask()
    assert again.row == t.row and again.number == 1
    study.tell(again, 1.5)
    with pytest.raises(ValueError, match=f"row {t.row} is already in trial 1"):
        study.enqueue_trial(row=t.row)


def test_the_shell_warm_starts(cli, tmp_path):
    (tmp_path / "rows.csv").write_text(CSV)
    (tmp_path / "done.csv").write_text("temp,solvent,yield\n80.5,water,0.3\n50,toluene,0.9\n")
    db = tmp_path / "s.db"
    status, out, err = cli(["study", "create", "--candidates", tmp_path / "rows.csv", "--storage",
                            db, "--observed", tmp_path / "done.csv", "--target", "yield"])  # fmt: skip
    assert status == 0, err
    assert out.startswith("told 2 observed points (--observed)")
    study = load_study(storage=db)
    assert [(t.row, t.value) for t in study.trials] == [(0, 0.3), (3, 0.9)]
    status, out, err = cli(["tell", "--storage", db, "--row", 1, "--value", 0.5])
    assert status == 0 and out.startswith("added trial 2: row 1, sample_id=S-2"), err
    status, out, err = cli(["tell", "--storage", db, "--params",
                            '{"temp": 60, "solvent": "water"}', "--value", 0.7])  # fmt: skip
    assert status == 0 and "added trial 3: row 2" in out, err
    status, _, err = cli(["tell", "--storage", db, "--params", "[1]", "--value", 1])
    assert status == 2 and "--params must be a JSON object" in err
    status, _, err = cli(["tell", "--storage", db, "--row", 1, "--trial", 0, "--value", 1])
    assert status == 2 and "not allowed with argument" in err


def test_observed_is_checked_before_anything_is_made(cli, tmp_path):
    space_file = tmp_path / "space.json"
    space_file.write_text(json.dumps({"params": [p.to_dict() for p in SPACE]}))
    bad = tmp_path / "bad.csv"
    bad.write_text("lr,layers,act,loss\n0.01,2,a,0.5\n0.01,7,a,0.4\n")
    db = tmp_path / "s.db"
    argv = ["study", "create", "--space", space_file, "--storage", db]
    status, _, err = cli([*argv, "--observed", bad, "--target", "loss"])
    assert status == 2 and "--observed line 3:" in err and "layers" in err
    assert not db.exists()
    status, _, err = cli([*argv, "--observed", bad])
    assert status == 2 and "--observed and --target go together" in err
    good = tmp_path / "good.csv"
    good.write_text("lr,layers,act,loss,note\n0.01,2,a,0.5,x\n0.001,3,b,0.25,y\n")
    status, out, err = cli([*argv, "--observed", good, "--target", "loss"])
    assert status == 0, err
    assert [t.params for t in load_study(storage=db).trials] == [
        {"lr": 0.01, "layers": 2, "act": "a"}, {"lr": 0.001, "layers": 3, "act": "b"}
    ]  # fmt: skip
    status, out, err = cli(["study", "enqueue", "--storage", db, "--params",
                            '{"lr": 0.02, "layers": 1, "act": "b"}'])  # fmt: skip
    assert status == 0 and "trial 2 waits to be asked" in out, err
    status, out, err = cli(["ask", "--storage", db])
    assert json.loads(out)["params"] == {"lr": 0.02, "layers": 1, "act": "b"}
