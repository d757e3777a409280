"""Issue 56's study items: private files, stuck trials and changed settings on load, the busy
timeout of SQLAlchemy SQLite URLs, bad files, negative values on the command line, duplicate
candidate rows."""

from __future__ import annotations

import json
import math
import os
import sqlite3
import stat
import threading
import time
import types
import warnings

import numpy as np
import pytest

import frontierbo.study.study as study_module
from frontierbo.study import create_study, load_study
from frontierbo.study.storage import Storage


@pytest.fixture
def rows():
    return np.random.default_rng(0).uniform(0, 1, size=(60, 2))


@pytest.fixture
def umask_022():
    """The usual umask, so that a file created without an explicit mode would be 0644."""
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def _study_rows():
    return np.random.default_rng(0).uniform(size=(300, 3))


def _study_db(tmp_path, name="real.db", n_told=20):
    """A study database with ``n_told`` told trials, closed (its WAL checkpointed away)."""
    path = tmp_path / name
    X = _study_rows()
    study = create_study(X, storage=path, algorithm="random")
    for _ in range(n_told):
        study.tell(study.ask(), 1.0)
    study.storage.close()
    return path


# -- 7. file modes ------------------------------------------------------------------------------
def test_new_study_databases_are_private(tmp_path, rows, umask_022):
    path = tmp_path / "s.db"
    study = create_study(rows, storage=path)
    study.tell(study.ask(), 1.0)
    assert _mode(path) == 0o600
    for side in ("-wal", "-shm"):  # SQLite gives them the main file's mode
        if os.path.exists(f"{path}{side}"):
            assert _mode(f"{path}{side}") == 0o600, side
    assert os.path.exists(f"{path}-wal")  # the connection is open: the check above ran


def test_new_sqlalchemy_sqlite_databases_are_private(tmp_path, rows, umask_022):
    pytest.importorskip("sqlalchemy")
    path = tmp_path / "sa.db"
    create_study(rows, storage=f"sqlite+pysqlite:///{path}")
    assert _mode(path) == 0o600


def test_new_curator_databases_are_private(tmp_path, umask_022):
    from frontierbo.po.service.store import CuratorStore

    path = tmp_path / "curator.db"
    store = CuratorStore(path)
    store.add_modeler("alice", 5)
    assert _mode(path) == 0o600
    assert os.path.exists(f"{path}-wal")
    for side in ("-wal", "-shm"):
        if os.path.exists(f"{path}{side}"):
            assert _mode(f"{path}{side}") == 0o600, side
    store.close()


def test_existing_files_keep_their_mode(tmp_path, rows, umask_022):
    path = tmp_path / "s.db"
    create_study(rows, storage=path).storage.close()
    os.chmod(path, 0o640)  # the user's choice
    load_study(storage=path).ask()
    assert _mode(path) == 0o640
    empty = tmp_path / "empty.db"
    empty.touch(mode=0o644)
    create_study(rows, storage=empty)
    assert _mode(empty) == 0o644


# -- 9. stuck trials, changed settings on load ---------------------------------------------------
def _advance_clock(monkeypatch, seconds: float) -> None:
    real = time.time
    monkeypatch.setattr(study_module, "time", types.SimpleNamespace(time=lambda: real() + seconds))


def test_a_dead_workers_trial_is_offered_again_after_the_default_timeout(
    tmp_path, rows, monkeypatch
):
    study = create_study(rows, storage=tmp_path / "s.db", algorithm="random")
    lost = study.ask()  # its worker is killed: never told
    _advance_clock(monkeypatch, 3600.0)  # an hour: still running, for all we know
    assert study.ask().number == lost.number + 1
    _advance_clock(monkeypatch, 24 * 3600.0 + 1)
    again = study.ask()
    assert (again.number, again.row, again.offers) == (lost.number, lost.row, 2)
    assert study.pending_timeout == 24 * 3600.0
    assert load_study(storage=tmp_path / "s.db").pending_timeout == 24 * 3600.0


def test_an_infinite_pending_timeout_never_offers_a_trial_again(tmp_path, rows, monkeypatch):
    study = create_study(rows, storage=tmp_path / "s.db", algorithm="random",
                         pending_timeout=math.inf)  # fmt: skip
    lost = study.ask()
    _advance_clock(monkeypatch, 365 * 24 * 3600.0)
    assert study.ask().number == lost.number + 1
    assert load_study(storage=tmp_path / "s.db").pending_timeout is None


@pytest.mark.parametrize(
    "changed, message",
    [
        (
            {"algorithm": "random", "settings": None},
            "algorithm: the study has 'gp-ucb', given 'random'",
        ),
        ({"direction": "maximize"}, "direction: the study has 'minimize', given 'maximize'"),
        ({"seed": 4}, "seed: the study has 3, given 4"),
        ({"settings": {"beta": 2.0}}, "settings: the study has"),
        ({"columns": ["a", "c"]}, "columns: the study has \\['a', 'b'\\], given \\['a', 'c'\\]"),
    ],
)
def test_loading_refuses_a_changed_identity_setting(tmp_path, rows, changed, message):
    path = tmp_path / "s.db"
    kwargs = {"algorithm": "gp-ucb", "seed": 3, "columns": ["a", "b"], "settings": {"beta": 4}}
    create_study(rows, storage=path, **kwargs).storage.close()
    with pytest.raises(ValueError, match=message):
        create_study(rows, storage=path, load_if_exists=True, **{**kwargs, **changed})
    # the same values, or none given, load the study
    assert create_study(rows, storage=path, load_if_exists=True, **kwargs).seed == 3
    loaded = create_study(rows, storage=path, load_if_exists=True)
    assert (loaded.algorithm, loaded.seed, loaded.direction) == ("gp-ucb", 3, "minimize")


def test_loading_applies_and_stores_a_changed_pending_timeout(tmp_path, rows, monkeypatch):
    path = tmp_path / "s.db"
    worker = create_study(rows, storage=path, algorithm="random")
    lost = worker.ask()
    assert create_study(rows, storage=path, load_if_exists=True).pending_timeout == 86400.0
    changed = create_study(rows, storage=path, load_if_exists=True, pending_timeout=60)
    assert changed.pending_timeout == 60.0
    assert load_study(storage=path).pending_timeout == 60.0
    _advance_clock(monkeypatch, 61.0)
    again = worker.ask()  # a worker loaded before the change uses the stored timeout
    assert (again.number, again.offers) == (lost.number, 2)


def test_cli_load_if_exists_refuses_or_applies_changed_settings(cli, write_csv, tmp_path):
    path = write_csv(["a", "b"], [[i, i % 7] for i in range(20)])
    db = tmp_path / "s.db"
    create = ["study", "create", "--candidates", path, "--storage", db]
    assert cli([*create, "--seed", "2", "--algorithm", "random"])[0] == 0
    for flag, value, message in [
        ("--seed", "5", "seed: the study has 2, given 5"),
        ("--algorithm", "gp-ei", "algorithm: the study has 'random', given 'gp-ei'"),
        ("--direction", "maximize", "direction: the study has 'minimize', given 'maximize'"),
    ]:
        status, _, err = cli([*create, "--load-if-exists", flag, value])
        assert status == 2 and message in err and err.count("\n") == 1, err
    status, out, err = cli([*create, "--load-if-exists", "--pending-timeout", "90"])
    assert status == 0, err
    assert "pending timeout 90 s (was 86400 s)" in out
    assert load_study(storage=db).pending_timeout == 90.0
    status, out, err = cli([*create, "--load-if-exists", "--seed", "2"])
    assert status == 0 and "pending timeout 90 s" in out, err


@pytest.mark.parametrize(
    "text, outcome",
    [("inf", "pending timeout never"), ("600", "pending timeout 600 s"),
     ("0", "--pending-timeout must be seconds in (0, inf]"),
     ("-1e3", "--pending-timeout must be seconds in (0, inf]")],
)  # fmt: skip
def test_cli_pending_timeout_values(cli, write_csv, tmp_path, text, outcome):
    path = write_csv(["a"], [[1], [2]])
    argv = ["study", "create", "--candidates", path, "--storage", tmp_path / "s.db"]
    status, out, err = cli([*argv, "--pending-timeout", text])
    assert outcome in out + err and status == (0 if "must" not in outcome else 2), err


# -- 10. SQLAlchemy SQLite URLs wait like plain paths ---------------------------------------------
def _busy_timeout(storage) -> int:
    with storage.transaction(write=False) as ex:
        return ex("PRAGMA busy_timeout")[0][0]


def test_sqlalchemy_sqlite_urls_have_the_plain_paths_busy_timeout(tmp_path, rows):
    pytest.importorskip("sqlalchemy")
    create_study(rows, storage=tmp_path / "plain.db").storage.close()
    plain = _busy_timeout(Storage(tmp_path / "plain.db"))
    assert plain == 60_000
    url = f"sqlite+pysqlite:///{tmp_path / 'sa.db'}"
    create_study(rows, storage=url).storage.close()
    assert _busy_timeout(Storage(url)) == plain


@pytest.mark.slow
def test_a_sqlalchemy_sqlite_worker_waits_out_a_six_second_lock(tmp_path, rows):
    pytest.importorskip("sqlalchemy")
    path = tmp_path / "sa.db"
    study = create_study(rows, storage=f"sqlite+pysqlite:///{path}", algorithm="random")
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")  # another worker's long write transaction
    release = threading.Timer(6.0, lambda: holder.execute("COMMIT"))
    release.start()
    try:
        start = time.monotonic()
        trial = study.ask()  # waited instead of "database is locked" after 5 s
        assert trial.number == 0 and time.monotonic() - start >= 5.5
    finally:
        release.join()
        holder.close()


# -- 11. bad files ---------------------------------------------------------------------------------
def _truncated(tmp_path):
    path = tmp_path / "truncated.db"
    path.write_bytes(_study_db(tmp_path).read_bytes()[:100])
    return path, "is truncated"


def _garbage(tmp_path):
    path = tmp_path / "garbage.db"
    path.write_bytes(np.random.default_rng(1).bytes(5000))
    return path, "is not a SQLite database"


def _corrupt_page(page: int):
    def make(tmp_path):
        path = tmp_path / f"page{page}.db"
        data = bytearray(_study_db(tmp_path).read_bytes())
        data[(page - 1) * 4096 : page * 4096] = np.random.default_rng(page).bytes(4096)
        path.write_bytes(bytes(data))
        return path, "is damaged: database disk image is malformed"

    return make


def _missing_folder(tmp_path):
    return tmp_path / "no-such-folder" / "s.db", "does not exist"


def _directory(tmp_path):
    folder = tmp_path / "folder.db"
    folder.mkdir()
    return folder, "is a directory"


def _folder_is_a_file(tmp_path):
    (tmp_path / "notes").write_text("x")
    return tmp_path / "notes" / "s.db", "is not a directory"


@pytest.mark.parametrize(
    "make",
    [_truncated, _garbage, _corrupt_page(2), _corrupt_page(4), _corrupt_page(6), _missing_folder,
     _directory, _folder_is_a_file],
    ids=["truncated", "garbage", "meta-page", "studies-page", "trials-page", "missing-folder",
         "directory", "folder-is-a-file"],
)  # fmt: skip
@pytest.mark.parametrize("command", ["ask", "show", "create"])
def test_bad_storage_files_are_one_line_naming_the_file(cli, write_csv, tmp_path, make, command):
    path, message = make(tmp_path)
    argv = {
        "ask": ["ask"],
        "show": ["study", "show"],
        "create": ["study", "create", "--load-if-exists", "--candidates",
                   write_csv(["x0", "x1", "x2"], [[repr(float(v)) for v in r] for r in _study_rows()])],
    }[command]  # fmt: skip
    status, out, err = cli([*argv, "--storage", path])
    assert status == 2, (out, err)
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith(f"frontierbo: error: --storage {str(path)!r} "), err
    if command == "create" and make is _missing_folder:
        message = "cannot be created"
    if command != "create" and make in (_missing_folder, _folder_is_a_file):
        message = "does not exist"
    assert message in err, err


@pytest.mark.parametrize("make", [_truncated, _garbage, _corrupt_page(2), _directory])
def test_bad_files_behind_sqlalchemy_sqlite_urls_are_one_line(cli, tmp_path, make):
    pytest.importorskip("sqlalchemy")
    path, message = make(tmp_path)
    status, _, err = cli(["ask", "--storage", f"sqlite+pysqlite:///{path}"])
    assert status == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert str(path) in err and (message in err or "not a SQLite database" in err), err


def test_a_storage_file_that_cannot_be_read_is_one_line(cli, tmp_path, monkeypatch):
    """What a file without read permission gives a user who is not root (simulated: root
    reads any file; the next test does it for real where it can)."""
    import frontierbo.study.storage as storage_module

    path = _study_db(tmp_path)

    def denied(file, *args, **kwargs):
        raise PermissionError(13, "Permission denied", str(file))

    monkeypatch.setattr(storage_module, "open", denied, raising=False)
    status, _, err = cli(["ask", "--storage", path])
    assert status == 2 and err.count("\n") == 1, err
    assert f"--storage {str(path)!r} cannot be opened: Permission denied" in err


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_an_unreadable_storage_file_is_one_line(cli, tmp_path):
    path = _study_db(tmp_path)
    os.chmod(path, 0)
    status, _, err = cli(["ask", "--storage", path])
    assert status == 2 and "cannot be opened" in err and err.count("\n") == 1, err


# -- 12. negative values on the command line --------------------------------------------------------
@pytest.mark.parametrize(
    "argv, value",
    [
        (["--value", "-1e3"], -1000.0),
        (["--value=-1e3"], -1000.0),
        (["--value", "-1E-3"], -0.001),
        (["--value", "-0.5"], -0.5),
        (["--value", "-.5"], -0.5),
        (["--value", "-3"], -3.0),
    ],
)
def test_tell_parses_negative_values(cli, tmp_path, argv, value):
    create_study(np.eye(3), storage=tmp_path / "s.db", algorithm="random").ask()
    status, out, err = cli(["tell", "--storage", tmp_path / "s.db", "--trial", "0", *argv])
    assert status == 0, err
    assert load_study(storage=tmp_path / "s.db").trials[0].value == value


@pytest.mark.parametrize("text", ["-inf", "inf", "nan", "-nan", "1e999", "x"])
def test_tell_refuses_non_finite_values_naming_the_flag(cli, tmp_path, text):
    create_study(np.eye(3), storage=tmp_path / "s.db", algorithm="random").ask()
    status, _, err = cli(["tell", "--storage", tmp_path / "s.db", "--trial", "0", "--value", text])
    assert status == 2 and err.count("\n") == 1, err
    assert "--value must be a finite number" in err and repr(text) in err, err


# -- 13. duplicate candidate rows --------------------------------------------------------------------
def test_duplicate_candidates_are_asked_once_with_a_warning(tmp_path):
    X = np.array([[0.0, 1.0], [2.0, 3.0], [0.0, 1.0], [0.0, 1.0], [4.0, 5.0], [2.0, 3.0]])
    with pytest.warns(UserWarning, match="3 duplicate rows") as caught:
        study = create_study(X, storage=tmp_path / "s.db", algorithm="random")
    assert "rows 2, 3 repeat row 0; row 5 repeats row 1" in str(caught[0].message)
    asked = [study.ask() for _ in range(3)]
    assert sorted(t.row for t in asked) == [0, 1, 4]  # the first row of each keeps its index
    assert len({tuple(t.x) for t in asked}) == 3
    with pytest.raises(ValueError, match="every one of the 3 distinct candidates"):
        study.ask()
    assert study.candidates.shape == (6, 2)  # the rows as given (their sha256 is the study's)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        create_study(np.eye(3), storage=tmp_path / "s.db", name="distinct")  # no warning


def test_duplicate_candidates_with_a_gp_sampler(tmp_path):
    base = np.random.default_rng(2).uniform(size=(15, 2))
    X = np.vstack([base, base, base])  # 45 rows, 15 distinct
    with pytest.warns(UserWarning, match="30 duplicate rows"):
        study = create_study(X, storage=tmp_path / "s.db", settings={"n_initial": 3})
    study.optimize(lambda t: float(-np.sum((t.x - 0.5) ** 2)), n_trials=15)
    rows = [t.row for t in study.trials]
    assert sorted(rows) == list(range(15))


def test_cli_create_warns_about_duplicate_rows(cli, write_csv, tmp_path):
    path = write_csv(["a", "b", "note"], [[1, 2, "x"], [1, 2, "y"], [3, 4, "z"], [1, 2, "w"]])
    status, out, err = cli(["study", "create", "--candidates", path, "--features", "a", "b",
                            "--storage", tmp_path / "s.db", "--algorithm", "random"])  # fmt: skip
    assert status == 0, err
    assert "frontierbo: warning: candidates: 2 duplicate rows" in err, err
    asked = [json.loads(cli(["ask", "--storage", tmp_path / "s.db"])[1]) for _ in range(2)]
    assert sorted(a["row"] for a in asked) == [0, 2]
    assert len({tuple(a["params"].values()) for a in asked}) == 2
    status, _, err = cli(["ask", "--storage", tmp_path / "s.db"])
    assert status == 2 and "every one of the 2 distinct candidates" in err
