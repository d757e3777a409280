"""The curator's end-to-end private mode: public scaling, noisy answers, one ledger."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from frontierbo.po.service.client import modeler_settings
from frontierbo.po.service.curator import CuratorService, prepare
from frontierbo.po.service.privacy import MAX_NORM, public_scaling, read_bounds
from frontierbo.po.service.store import CuratorStore, StoreError

N = 60


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(1)
    X = rng.uniform(0, 10, size=(N, 2))
    y = X[:, 0] - X[:, 1]
    rows = ["a,b,y"] + [f"{a:.6f},{b:.6f},{v:.6f}" for (a, b), v in zip(X, y, strict=True)]
    (tmp_path / "private.csv").write_text("\n".join(rows) + "\n")
    (tmp_path / "bounds.csv").write_text("column,low,high\na,0,10\nb,0,10\ny,-10,10\n")
    return tmp_path, X, np.round(y, 6)


def _e2e(store, folder, **kw):
    args = dict(epsilon=1.0, delta=1e-5, privacy="end-to-end", bounds=folder / "bounds.csv",
                answer_epsilon=0.5)  # fmt: skip
    return prepare(store, folder / "private.csv", "y", **{**args, **kw})


def test_public_scaling_uses_only_the_bounds_and_keeps_row_norms_under_25():
    lows, highs = np.array([0.0, -5.0, 1.0]), np.array([10.0, 5.0, 2.0])
    X = np.array([[0, -5, 1], [10, 5, 2], [50, 0, 1.5], [5, 0, 1.5]], dtype=float)
    Z = public_scaling(X, lows, highs)
    assert np.all(np.linalg.norm(Z, axis=1) <= MAX_NORM + 1e-12)
    np.testing.assert_allclose(Z[0], -Z[1])  # the corners map to opposite corners
    np.testing.assert_allclose(Z[2], public_scaling(X[[1]], lows, highs)[0] * [1, 0, 0])  # clipped
    np.testing.assert_allclose(Z[3], 0.0)  # the midpoint is the origin
    # a row's image depends on that row alone: changing another row changes nothing
    other = X.copy()
    other[0] = [3, 3, 1.2]
    np.testing.assert_allclose(public_scaling(other, lows, highs)[1:], Z[1:])


def test_answers_are_noisy_unbiased_and_replayed_free(files):
    folder, _, y = files
    store = CuratorStore(folder / "c.db")
    served = _e2e(store, folder)
    served.noise.rng = np.random.default_rng(7)  # seeded here; OS entropy when serving
    service = CuratorService(store, served)
    token = store.add_modeler("m", 3000)
    row = 7
    values = [service.query(token, row, f"r{k}")[1]["value"] for k in range(2400)]
    scale = 20 / 0.5  # (high - low) / answer_epsilon, up to the grid's rounding
    se = math.sqrt(2) * scale / math.sqrt(len(values))
    assert abs(np.mean(values) - y[row]) < 4 * se
    # the sample variance of Laplace draws has relative s.e. sqrt(5 / n) = 4.6 %: 4 s.e.
    assert np.var(values) == pytest.approx(2 * scale**2, rel=4 * math.sqrt(5 / len(values)))
    status, again = service.query(token, row, "r3")  # a retry: the stored answer, no charge
    assert status == 200 and again["replayed"] and again["value"] == values[3]
    assert store.modelers()[0]["used"] == 2400


def test_the_ledger_covers_the_release_and_every_answer(files):
    folder, _, _ = files
    store = CuratorStore(folder / "c.db")
    served = _e2e(store, folder)
    service = CuratorService(store, served)
    alice, bob = store.add_modeler("alice", 40), store.add_modeler("bob", 10)
    for k in range(5):
        service.query(alice, k, f"a{k}")
    status, ledger = service.ledger(alice)
    assert status == 200 and ledger["privacy"] == "end-to-end"
    labels = [e["label"] for e in ledger["entries"]]
    assert labels == ["gaussian", "answers (per answer)"]
    release_eps = ledger["entries"][0]["guarantee"]["epsilon"]
    assert release_eps == 1.0
    assert ledger["session_total"]["epsilon"] == pytest.approx(1.0 + 40 * 0.5)
    assert ledger["spent_so_far"]["epsilon"] == pytest.approx(1.0 + 5 * 0.5)
    assert ledger["curator_total"]["epsilon"] == pytest.approx(1.0 + 50 * 0.5)
    assert ledger["session_total"]["delta"] == pytest.approx(1e-5)
    assert "public --bounds" in ledger["entries"][0]["covers"]
    assert service.ledger(bob)[1]["session_total"]["epsilon"] == pytest.approx(1.0 + 10 * 0.5)
    public = served.public
    assert public["privacy"] == "end-to-end" and public["bounds"] == {"a": [0, 10], "b": [0, 10]}
    assert public["answer_noise"]["epsilon"] == 0.5


def test_long_sessions_may_use_advanced_composition(files):
    folder, _, _ = files
    store = CuratorStore(folder / "c.db")
    service = CuratorService(store, _e2e(store, folder, answer_epsilon=0.01, delta_slack=1e-6))
    token = store.add_modeler("long", 1000)
    ledger = service.ledger(token)[1]
    total = ledger["session_total"]
    # 1000 answers at 0.01 and the release at 1: basic gives 11; advanced
    # sqrt(2 ln(1e6) (1 + 1000 * 1e-4)) + (e - 1) + 1000 * 0.01 (e^0.01 - 1)
    expected = math.sqrt(2 * math.log(1e6) * 1.1) + math.expm1(1.0) + 10 * math.expm1(0.01)
    assert total["rule"] == "advanced" and total["epsilon"] == pytest.approx(expected)
    assert total["epsilon"] < 11 and total["delta"] == pytest.approx(1e-5 + 1e-6)
    assert ledger["spent_so_far"] == {"epsilon": 1.0, "delta": 1e-5,
                                      "differentially_private": True, "rule": "basic"}  # fmt: skip
    with pytest.raises(ValueError, match="delta_slack"):
        CuratorService(store, _e2e(store, folder, answer_epsilon=0.01, delta_slack=2.0))


def test_the_paper_mode_says_what_it_does_not_cover(files):
    folder, _, y = files
    store = CuratorStore(folder / "c.db")
    service = CuratorService(store, prepare(store, folder / "private.csv", "y", epsilon=1.0,
                                            delta=1e-5))  # fmt: skip
    token = store.add_modeler("m", 5)
    assert service.query(token, 2, None)[1]["value"] == y[2]  # exact, in the clear
    ledger = service.ledger(token)[1]
    assert ledger["privacy"] == "paper" and len(ledger["entries"]) == 1
    assert "NOT covered" in ledger["entries"][0]["covers"]
    assert ledger["session_total"]["epsilon"] == 1.0  # the release only: answers are not DP


def test_bad_end_to_end_settings_are_refused(files):
    folder, _, _ = files
    store = CuratorStore(folder / "c.db")
    with pytest.raises(ValueError, match="needs --mechanism gaussian"):
        _e2e(store, folder, mechanism="random-projection", r=2)
    with pytest.raises(ValueError, match="needs --bounds and --answer-epsilon"):
        _e2e(store, folder, answer_epsilon=None)
    (folder / "short.csv").write_text("column,low,high\na,0,10\n")
    with pytest.raises(ValueError, match=r"no bounds for \['b', 'y'\]"):
        _e2e(store, folder, bounds=folder / "short.csv")
    (folder / "bad.csv").write_text("column,low,high\na,5,1\nb,0,1\ny,0,1\n")
    with pytest.raises(ValueError, match="finite low < high"):
        read_bounds(folder / "bad.csv", ["a", "b"], "y")
    with pytest.raises(ValueError, match="belong to --privacy end-to-end"):
        prepare(store, folder / "private.csv", "y", answer_epsilon=1.0)
    _e2e(store, folder)
    with pytest.raises(StoreError, match="answer_epsilon"):
        _e2e(store, folder, answer_epsilon=0.25)  # the release is served as made


def test_the_modeler_uses_public_hyperparameters_with_the_answer_noise(files):
    folder, _, _ = files
    (folder / "hyper.json").write_text(
        '{"lengthscale": 8.0, "signal_variance": 2.0, "noise_variance": 0.1}'
    )
    store = CuratorStore(folder / "c.db")
    served = _e2e(store, folder, hyperparameters=folder / "hyper.json")
    settings = modeler_settings(served.public)
    scale = served.public["answer_noise"]["laplace_scale"]
    assert settings["noise_variance"] == pytest.approx(0.1 + 2 * scale**2)
    assert settings["release_noise_std"] == served.public["noise_std"]
    assert modeler_settings({"hyperparameters": None}) == {}


def test_viewers_and_the_schema_1_migration(tmp_path):
    import sqlite3

    path = tmp_path / "old.db"
    with sqlite3.connect(path) as conn:  # a schema-1 database: no role column
        conn.executescript(
            """CREATE TABLE curator_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
            INSERT INTO curator_meta VALUES ('schema_version', '1');
            CREATE TABLE curator_modelers (id INTEGER PRIMARY KEY AUTOINCREMENT,
                name TEXT NOT NULL UNIQUE, token_sha256 TEXT NOT NULL UNIQUE,
                budget INTEGER NOT NULL CHECK (budget >= 0),
                used INTEGER NOT NULL DEFAULT 0 CHECK (used >= 0 AND used <= budget),
                revoked INTEGER NOT NULL DEFAULT 0, created_at REAL NOT NULL);
            INSERT INTO curator_modelers (name, token_sha256, budget, created_at)
                VALUES ('old', 'x', 3, 0);"""
        )
    store = CuratorStore(path)
    assert [(m["name"], m["role"]) for m in store.modelers()] == [("old", "modeler")]
    assert store.read("SELECT value FROM curator_meta WHERE key = 'schema_version'") == [("2",)]
    viewer = store.add_modeler("screen", 0, role="viewer")
    assert store.role(viewer) == "viewer" and store.role("fbo_nothing") is None
    store.revoke_modeler("screen")
    assert store.role(viewer) is None
    with pytest.raises(ValueError, match="role must be one of"):
        store.add_modeler("x", 1, role="admin")


def test_the_curator_commands(cli, files):
    folder, _, _ = files
    db = folder / "c.db"
    status, out, err = cli(["curator", "add-modeler", "alice", "--queries", "7", "--db", db])
    assert status == 0, err
    token = out.splitlines()[0]
    assert token.startswith("fbo_") and "shown once" in out
    assert token.encode() not in db.read_bytes()  # only its sha256 is stored
    status, out, _ = cli(["curator", "add-viewer", "screen", "--db", db])
    assert status == 0 and "dashboard#token=" in out
    status, out, err = cli(["curator", "add-modeler", "alice", "--queries", "1", "--db", db])
    assert status == 2 and "already exists" in err
    status, out, _ = cli(["curator", "modelers", "--db", db])
    assert "| alice | modeler | 7 | 0 | 7 | no |" in out and "| screen | viewer |" in out
    store = CuratorStore(db)
    service = CuratorService(store, _e2e(store, folder))
    service.query(token, 3, "q1")
    service.query(None, 4, None)
    status, out, _ = cli(["curator", "audit", "--db", db, "--json"])
    lines = [json.loads(line) for line in out.splitlines()]
    assert [(a["modeler"], a["row"], a["outcome"], a["status"]) for a in lines] == [
        ("alice", 3, "answered", 200), (None, 4, "no token", 401)]  # fmt: skip
    status, out, _ = cli(["curator", "revoke-modeler", "alice", "--db", db])
    assert status == 0 and store.role(token) is None
    status, _, err = cli(["curator", "audit", "--db", folder / "missing.db"])
    assert status == 2 and "does not exist" in err
