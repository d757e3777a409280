"""Studies on a real PostgreSQL server: the same trials as on SQLite, workers in several
processes, and creators that race (two transactions both finding a name or a study_id free)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

from frontierbo.study import create_study, load_study
from frontierbo.study.storage import Storage

WORKER = textwrap.dedent(
    """
    import sys
    import numpy as np
    from frontierbo.study import create_study
    rows = np.random.default_rng(0).uniform(0, 1, size=(200, 3))
    study = create_study(rows, storage=sys.argv[1], name="shared", load_if_exists=True,
                         settings={"n_initial": 4})
    for _ in range(int(sys.argv[2])):
        trial = study.ask()
        study.tell(trial, float(np.sin(3 * trial.x).sum()))
    """
)


def _rows(n=200, d=3, seed=0):
    return np.random.default_rng(seed).uniform(0, 1, size=(n, d))


def _run(study, n):
    for _ in range(n):
        trial = study.ask()
        study.tell(trial, float(np.sin(3 * trial.x).sum()))
    return [(t.number, t.row, t.value) for t in study.trials]


def test_a_postgresql_study_asks_what_a_sqlite_study_asks(postgres_url, tmp_path):
    on_postgres = create_study(_rows(), storage=postgres_url, settings={"n_initial": 4}, seed=3)
    on_sqlite = create_study(_rows(), storage=tmp_path / "s.db", settings={"n_initial": 4}, seed=3)
    assert _run(on_postgres, 10) == _run(on_sqlite, 10)
    # and a second process (a fresh load) continues it from the stored trials and fits
    resumed = load_study(storage=postgres_url)
    assert _run(resumed, 2) == _run(on_sqlite, 2)


def test_four_processes_create_and_share_one_postgresql_study(postgres_url):
    # all four create the tables and the study at once on an empty database
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, postgres_url, "6"], stderr=subprocess.PIPE, text=True
        )
        for _ in range(4)
    ]
    for w in workers:
        _, err = w.communicate(timeout=300)
        assert w.returncode == 0, err
    study = load_study(storage=postgres_url)
    trials = study.trials
    assert study.name == "shared" and study.study_id == 1
    assert [t.number for t in trials] == list(range(24))
    assert len({t.row for t in trials}) == 24
    assert all(t.state == "complete" and t.offers == 1 for t in trials)


def _insert_uncommitted(url, name):
    """Another process's create_study, stopped before its commit: (engine, connection, tx)."""
    import sqlalchemy

    engine = sqlalchemy.create_engine(url)
    conn = engine.connect()
    tx = conn.begin()
    conn.execute(sqlalchemy.text(
        "INSERT INTO frontierbo_studies SELECT 2, :name, algorithm, settings, seed, columns, "
        "n_candidates, candidates, candidates_sha256, pending_timeout, created_at, direction, "
        "frontierbo_version FROM frontierbo_studies WHERE study_id = 1"), {"name": name})  # fmt: skip
    return engine, conn, tx


def _wait_for_a_blocked_writer(conn, timeout=30.0):
    """Poll (outside a transaction: one would keep reading the same statistics snapshot)."""
    import sqlalchemy

    deadline = time.monotonic() + timeout
    query = sqlalchemy.text(
        "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND pid <> "
        "pg_backend_pid()"
    )
    while conn.execute(query).scalar() == 0:
        assert time.monotonic() < deadline, "the second writer never blocked on the first"
        time.sleep(0.02)


def _create_in_thread(url, name):
    out = {}

    def create():
        try:
            out["study"] = create_study(_rows(), storage=url, name=name, load_if_exists=True)
        except Exception as exc:  # reported by the test
            out["error"] = exc

    thread = threading.Thread(target=create)
    thread.start()
    return thread, out


@pytest.mark.parametrize(("name", "study_id"), [("racer", 2), ("another", 3)])
def test_a_creator_that_loses_the_race_reads_the_winners_row(postgres_url, name, study_id):
    # Both transactions find the name (or the next study_id) free; the loser's insert waits on
    # the winner's uncommitted row and fails when it commits. Without the re-run that was an
    # IntegrityError on study_id = 2; with it the loser loads "racer" or takes study_id 3.
    create_study(_rows(), storage=postgres_url, name="first")
    engine, conn, tx = _insert_uncommitted(postgres_url, "racer")
    try:
        thread, out = _create_in_thread(postgres_url, name)
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as watcher:
            _wait_for_a_blocked_writer(watcher)
        tx.commit()
        thread.join(timeout=60)
    finally:
        conn.close()
        engine.dispose()
    assert "error" not in out, out.get("error")
    assert (out["study"].name, out["study"].study_id) == (name, study_id)
    names = [s.name for s in (load_study(storage=postgres_url, name=n) for n in ("first", name))]
    assert names == ["first", name]


def test_initialising_a_database_another_process_is_initialising(postgres_url):
    import sqlalchemy

    from frontierbo.study.storage import _SCHEMA

    engine = sqlalchemy.create_engine(postgres_url)
    conn = engine.connect()
    tx = conn.begin()
    for statement in _SCHEMA:  # the other process's tables, not yet committed
        conn.execute(sqlalchemy.text(statement))
    out = {}
    thread = threading.Thread(target=lambda: out.update(r=Storage(postgres_url).initialise("x")))
    try:
        thread.start()
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as watcher:
            _wait_for_a_blocked_writer(watcher)
        tx.commit()
        thread.join(timeout=60)
    finally:
        conn.close()
        engine.dispose()
    assert out == {"r": None}  # it returned: the conflict was re-run, not raised
    Storage(postgres_url).check_readable()
