"""Studies on a real PostgreSQL server: the same trials as on SQLite, workers in several
processes, and creators that race (two transactions both finding a name or a study_id free)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

from frontierbo.dashboard.study import study_snapshot
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


def _insert_racer(conn):
    """Another process's create_study of "racer", at study_id 2."""
    import sqlalchemy

    conn.execute(sqlalchemy.text(
        "INSERT INTO frontierbo_studies SELECT 2, 'racer', algorithm, settings, seed, columns, "
        "n_candidates, candidates, candidates_sha256, pending_timeout, created_at, direction, "
        "frontierbo_version FROM frontierbo_studies WHERE study_id = 1"))  # fmt: skip


def _create_tables(conn):
    """Another process's initialise of a new database."""
    from frontierbo.study.schema import metadata

    metadata.create_all(conn)


def _race(url, first_writes, second) -> dict:
    """Run ``first_writes(conn)`` in a transaction left open, start ``second()`` in a thread,
    wait until it blocks on that transaction's locks, commit, and return ``{"result": ...}``
    or ``{"error": ...}`` of ``second``."""
    import sqlalchemy

    out = {}

    def run_second():
        try:
            out["result"] = second()
        except Exception as exc:  # reported by the test
            out["error"] = exc

    engine = sqlalchemy.create_engine(url)
    thread = threading.Thread(target=run_second)
    try:
        with engine.connect() as conn:
            tx = conn.begin()
            first_writes(conn)
            thread.start()
            # polled outside a transaction: one would keep reading one statistics snapshot
            with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as watcher:
                _wait_for_a_blocked_writer(watcher)
            tx.commit()
        thread.join(timeout=60)
    finally:
        engine.dispose()
    return out


def _wait_for_a_blocked_writer(conn, timeout=30.0):
    import sqlalchemy

    deadline = time.monotonic() + timeout
    query = sqlalchemy.text(
        "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND pid <> "
        "pg_backend_pid()"
    )
    while conn.execute(query).scalar() == 0:
        assert time.monotonic() < deadline, "the second writer never blocked on the first"
        time.sleep(0.02)


@pytest.mark.parametrize(("name", "study_id"), [("racer", 2), ("another", 3)])
def test_a_creator_that_loses_the_race_reads_the_winners_row(postgres_url, name, study_id):
    # Both transactions find the name (or the next study_id) free; the loser's insert waits on
    # the winner's uncommitted row and fails when it commits. Without the re-run that was an
    # IntegrityError on study_id = 2; with it the loser loads "racer" or takes study_id 3.
    create_study(_rows(), storage=postgres_url, name="first")
    out = _race(
        postgres_url,
        _insert_racer,
        lambda: create_study(_rows(), storage=postgres_url, name=name, load_if_exists=True),
    )
    assert "error" not in out, out.get("error")
    assert (out["result"].name, out["result"].study_id) == (name, study_id)
    names = [s.name for s in (load_study(storage=postgres_url, name=n) for n in ("first", name))]
    assert names == ["first", name]


def test_initialising_a_database_another_process_is_initialising(postgres_url):
    out = _race(postgres_url, _create_tables, lambda: Storage(postgres_url).initialise("x"))
    assert out == {"result": None}  # it returned: the conflict was re-run, not raised
    Storage(postgres_url).check_readable()


def test_the_shell_workflow_on_a_database_url(cli, write_csv, postgres_url):
    rows = [[f"{a:.4f}", f"{b:.4f}"] for a, b in _rows(30, 2)]
    path = write_csv(["temp", "time"], rows)
    status, out, err = cli(["study", "create", "--candidates", path, "--storage", postgres_url,
                            "--direction", "maximize"])  # fmt: skip
    assert status == 0, err
    asked_rows, values = [], []
    for k in range(3):
        status, out, err = cli(["ask", "--storage", postgres_url])
        assert status == 0, err
        asked = json.loads(out)
        value = asked["params"]["temp"] - asked["params"]["time"]
        asked_rows.append(asked["row"])
        values.append(value)
        status, _, err = cli(["tell", "--storage", postgres_url, "--trial", k, "--value", value])
        assert status == 0, err
    status, out, err = cli(["study", "show", "--storage", postgres_url, "--json"])
    assert status == 0, err
    assert [t["state"] for t in json.loads(out)["trials"]] == ["complete"] * 3
    # the dashboard reads the same database (frontierbo dashboard --storage URL)
    snapshot = study_snapshot(postgres_url)
    assert snapshot["points"]["queried"][0]["index"] == asked_rows
    assert snapshot["series"][0]["y"] == np.maximum.accumulate(values).tolist()
