"""Export and inspection (issue 59, item 4): trials_dataframe, study export / list / best /
delete, --version and FRONTIERBO_STORAGE."""

from __future__ import annotations

import io
import json
import sqlite3

import numpy as np
import pandas as pd
import pytest

import frontierbo
from frontierbo.study import Categorical, Float, Int, create_study, load_study
from frontierbo.study.records import export_text

SPACE = [Float("lr", 1e-4, 1e-1, log=True), Int("layers", 1, 4), Categorical("act", ["a", "b"])]


def _space_study(path, n=5):
    study = create_study(space=SPACE, storage=path, seed=2)
    for k in range(n):
        t = study.ask()
        if k == 3:
            study.tell(t, state="fail")
        elif k < n - 1:
            study.tell(t, t.params["lr"] * t.params["layers"] + (t.params["act"] == "b"))
    return study  # the last trial pending


def test_trials_dataframe_is_optunas_table_with_typed_params(tmp_path):
    study = _space_study(tmp_path / "s.db")
    frame = study.trials_dataframe()
    assert list(frame.columns) == [
        "number", "value", "state", "datetime_start", "datetime_complete", "duration",
        "params_lr", "params_layers", "params_act",
    ]  # fmt: skip
    assert frame["number"].tolist() == [0, 1, 2, 3, 4]
    assert frame["state"].tolist() == ["complete"] * 3 + ["fail", "pending"]
    assert frame["params_layers"].dtype.kind == "i" and set(frame["params_act"]) <= {"a", "b"}
    assert str(frame["datetime_start"].dt.tz) == "UTC" and frame["datetime_complete"].isna()[4]
    assert frame["value"].isna().tolist() == [False] * 3 + [True, True]
    told = [t for t in study.trials if t.state == "complete"]
    np.testing.assert_allclose(frame["value"][:3], [t.value for t in told])
    np.testing.assert_allclose(
        frame["duration"][:3], [t.told_at - t.asked_at for t in told], rtol=1e-12
    )


def test_csv_and_json_exports_hold_the_same_records(tmp_path):
    study = _space_study(tmp_path / "s.db")
    frame = study.trials_dataframe()
    back = pd.read_csv(io.StringIO(export_text(study, "csv")))
    assert list(back.columns) == list(frame.columns)
    pd.testing.assert_series_equal(back["value"], frame["value"])
    assert back["params_act"].tolist() == frame["params_act"].tolist()
    assert back["params_layers"].tolist() == frame["params_layers"].tolist()
    data = json.loads(export_text(study, "json"))
    assert data["direction"] == "minimize" and len(data["trials"]) == 5
    assert data["trials"][3] == {**data["trials"][3], "state": "fail", "value": None}
    with pytest.raises(ValueError, match=r"format must be one of \('csv', 'json'\)"):
        export_text(study, "xlsx")


def test_a_csv_study_exports_its_rows_and_carried_columns(tmp_path):
    from frontierbo.study.tables import read_candidates

    path = tmp_path / "rows.csv"
    path.write_text("sample_id,temp,solvent\nS-1,80.5,water\nS-2,70,ethanol\nS-3,60,water\n")
    study = create_study(read_candidates(path), storage=tmp_path / "s.db", algorithm="random")
    study.optimize(lambda t: t.params["temp"], n_trials=2)
    frame = study.trials_dataframe()
    assert {"row", "params_temp", "params_solvent", "carried_sample_id"} <= set(frame.columns)
    for _, record in frame.iterrows():
        assert record["carried_sample_id"] == f"S-{record['row'] + 1}"


def test_the_model_best_is_not_the_lucky_value(tmp_path):
    """Two clusters, values 1 and 0.5 plus noise, one lucky 1.45 in the low cluster: the
    luckiest trial is that one, the model's best is in the high cluster."""
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.uniform(0.75, 0.85, 20), rng.uniform(0.15, 0.25, 20)])
    values = np.where(x > 0.5, 1.0, 0.5) + 0.1 * rng.standard_normal(40)
    values[25] = 1.45
    rows = np.c_[x, np.zeros(40)]
    study = create_study(rows, storage=tmp_path / "s.db", algorithm="random",
                         direction="maximize")  # fmt: skip
    assert study.best_by_model() is None  # nothing told
    study.optimize(lambda t: float(values[t.row]), n_trials=40)
    assert study.best_trial.row == 25
    trial, mean = study.best_by_model()
    assert x[trial.row] > 0.5 and 0.9 < mean < 1.1 and trial.state == "complete"
    minimising = create_study(rows, storage=tmp_path / "m.db", algorithm="random")
    minimising.optimize(lambda t: float(-values[t.row]), n_trials=40)
    trial_min, mean_min = minimising.best_by_model()
    assert x[trial_min.row] > 0.5 and mean_min == pytest.approx(-mean, abs=0.05)


def test_list_and_delete(tmp_path):
    db = tmp_path / "s.db"
    _space_study(db)
    rows = create_study(np.eye(3), storage=db, name="rows", algorithm="random")
    rows.optimize(lambda t: 1.0, n_trials=2)
    summaries = frontierbo.study_summaries(storage=db)
    assert [(s["name"], s["kind"], s["trials"]) for s in summaries] == [
        ("default", "space", 5), ("rows", "rows", 2)
    ]  # fmt: skip
    assert summaries[0]["states"] == {"complete": 3, "fail": 1, "pending": 1}
    assert summaries[0]["best_value"] == load_study(storage=db, name="default").best_value
    assert frontierbo.delete_study(name="default", storage=db) == 5
    with sqlite3.connect(db) as conn:
        for table in ("frontierbo_trials", "frontierbo_fits", "frontierbo_studies"):
            ids = {r[0] for r in conn.execute(f"SELECT study_id FROM {table}")}
            assert ids <= {rows.study_id}
    assert len(load_study(storage=db).trials) == 2  # the other study is whole
    with pytest.raises(ValueError, match=r"has no study named 'default' \(it has \['rows'\]\)"):
        frontierbo.delete_study(name="default", storage=db)
    create_study(space=SPACE, storage=db, name="default")  # the name is free again


def test_the_shell_lists_exports_shows_the_best_and_deletes(cli, tmp_path):
    db = tmp_path / "s.db"
    _space_study(db)
    status, out, err = cli(["study", "list", "--storage", db])
    assert status == 0, err
    assert "| default | space | gp-ei | minimize | 5 | 3 complete, 1 fail, 1 pending |" in out
    status, out, err = cli(["study", "best", "--storage", db, "--json"])
    best = load_study(storage=db).best_trial
    assert status == 0 and json.loads(out)["trial"] == best.number, err
    assert json.loads(out)["by_model"]["trial"] in {0, 1, 2}
    status, out, err = cli(["study", "best", "--storage", db])
    assert (
        out.startswith(f"best value: {best.value:g}, trial {best.number}: lr=")
        and "best by the model" in out
    )
    status, out, err = cli(["study", "export", "--storage", db, "--format", "json"])
    assert status == 0 and len(json.loads(out)["trials"]) == 5, err
    target = tmp_path / "out" / "trials.csv"
    status, out, err = cli(["study", "export", "--storage", db, "--out", target])
    assert status == 0 and out.strip() == f"wrote {target}", err
    assert pd.read_csv(target).shape == (5, 9)
    status, _, err = cli(["study", "delete", "--storage", db])
    assert status == 2 and "--name" in err
    status, out, err = cli(["study", "delete", "--storage", db, "--name", "default"])
    assert status == 0 and "deleted study 'default' and its 5 trials" in out, err
    status, out, _ = cli(["study", "list", "--storage", db])
    assert status == 0 and "no studies" in out


def test_frontierbo_storage_is_the_default_storage(cli, tmp_path, monkeypatch, capsys):
    db = tmp_path / "env.db"
    monkeypatch.setenv("FRONTIERBO_STORAGE", str(db))
    create_study(np.eye(3), algorithm="random")  # no storage given: the variable's
    assert load_study().storage.url.endswith("env.db")
    status, out, err = cli(["ask"])
    assert status == 0 and json.loads(out)["trial"] == 0, err
    with pytest.raises(SystemExit):
        cli(["study", "create", "--help"])
    assert "$FRONTIERBO_STORAGE" in capsys.readouterr().out


def test_version(cli):
    status, out, _ = cli(["--version"])
    assert status == 0 and out.strip() == f"frontierbo {frontierbo.__version__}"
