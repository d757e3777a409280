"""Several processes on one SQLite study: no trial lost or duplicated, and a worker killed with
SIGKILL (mid-ask or mid-tell) leaves a consistent database that resumes."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from frontierbo.study import create_study, load_study

WORKER = textwrap.dedent(
    """
    import sys, time
    import numpy as np
    from frontierbo.study import load_study
    study = load_study(storage=sys.argv[1])
    for _ in range(int(sys.argv[2])):
        trial = study.ask()
        time.sleep(float(sys.argv[3]))  # the expensive experiment
        study.tell(trial, float(np.sin(3 * trial.x).sum()))
    """
)


def _start(path, n, pause):
    return subprocess.Popen(
        [sys.executable, "-c", WORKER, str(path), str(n), str(pause)],
        stderr=subprocess.PIPE,
        text=True,
    )


def _rows(n=300, d=3, seed=0):
    return np.random.default_rng(seed).uniform(0, 1, size=(n, d))


def test_four_processes_share_one_study_without_loss_or_duplicates(tmp_path):
    path = tmp_path / "study.db"
    create_study(_rows(), storage=path, settings={"n_initial": 4})
    workers = [_start(path, 8, 0.01) for _ in range(4)]
    for w in workers:
        _, err = w.communicate(timeout=300)
        assert w.returncode == 0, err
    trials = load_study(storage=path).trials
    assert [t.number for t in trials] == list(range(32))
    assert len({t.row for t in trials}) == 32
    assert all(t.state == "complete" and t.offers == 1 for t in trials)
    assert sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0] == "wal"


@pytest.mark.skipif(os.name != "posix", reason="SIGKILL")
def test_a_killed_worker_leaves_a_consistent_study_that_resumes(tmp_path):
    path = tmp_path / "study.db"
    create_study(_rows(), storage=path, settings={"n_initial": 3}, pending_timeout=0.5)
    rng = np.random.default_rng(7)
    for _ in range(4):  # kill at random moments: inside asks (fits), tells, or in between
        worker = _start(path, 1000, 0.0)
        time.sleep(rng.uniform(0.3, 1.5))
        worker.send_signal(signal.SIGKILL)
        worker.wait(timeout=30)
        con = sqlite3.connect(path)
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        rows = con.execute("SELECT number, row_index, state, value, told_at FROM frontierbo_trials")
        rows = rows.fetchall()
        con.close()
        numbers = sorted(r[0] for r in rows)
        assert numbers == list(range(len(rows)))  # no gap: asks are whole or absent
        assert len({r[1] for r in rows}) == len(rows)
        for _, _, state, value, told_at in rows:
            assert (state, value is None, told_at is None) in {
                ("pending", True, True),
                ("complete", False, False),
            }
    study = load_study(storage=path)
    before = study.trials
    pending = [t for t in before if t.state == "pending"]
    assert len(pending) <= 4  # at most one orphan per killed worker
    time.sleep(0.6)
    study.optimize(lambda t: float(np.sin(3 * t.x).sum()), n_trials=len(pending) + 2)
    after = study.trials
    assert all(t.state == "complete" for t in after)  # the orphans were offered again
    assert len(after) == len(before) + 2
