"""Studies on a MariaDB server the tests start (issue 59, item 7): the schema of
``frontierbo.study.schema`` rendered for MySQL / MariaDB (its reserved ``key``, ``LONGTEXT``
for large candidate sets), the same trials as on SQLite, several processes sharing a study."""

from __future__ import annotations

import subprocess
import sys

import numpy as np

from frontierbo.study import Categorical, Float, Int, create_study, load_study

SPACE = [Float("lr", 1e-4, 1e-1, log=True), Int("layers", 1, 4), Categorical("act", ["a", "b"])]


def _objective(trial) -> float:
    return float(np.sum(np.asarray(trial.x) ** 2))


def test_a_study_on_mariadb_asks_what_it_asks_on_sqlite(mariadb_url, tmp_path):
    rows = np.random.default_rng(0).random((300, 3))
    studies = [create_study(rows, storage=s, seed=5, direction="maximize")
               for s in (mariadb_url, tmp_path / "s.db")]  # fmt: skip
    for study in studies:
        study.optimize(_objective, n_trials=12)
    on_server, local = (load_study(storage=s.storage.url).trials for s in studies)
    assert [t.row for t in on_server] == [t.row for t in local]
    assert [t.value for t in on_server] == [t.value for t in local]
    spaced = create_study(space=SPACE, storage=mariadb_url, name="space", seed=2)
    spaced.optimize(lambda t: t.params["lr"] * t.params["layers"], n_trials=6)
    assert len(load_study(storage=mariadb_url, name="space").trials) == 6


def test_a_large_candidate_set_and_names_that_differ_in_case(mariadb_url):
    rows = np.random.default_rng(1).random((20_000, 6))  # 1.3 MB of base64: more than TEXT
    study = create_study(rows, storage=mariadb_url, name="Big", algorithm="random")
    assert np.array_equal(load_study(storage=mariadb_url, name="Big").candidates, rows)
    create_study(np.eye(3), storage=mariadb_url, name="big")  # a name is compared exactly
    assert {s for s in ("Big", "big")} == {
        s["name"] for s in __import__("frontierbo").study_summaries(storage=mariadb_url)
    }
    study.add_trial(row=3, value=1.0)
    assert load_study(storage=mariadb_url, name="Big").trials[0].row == 3


def test_processes_share_a_study_on_mariadb(mariadb_url):
    create_study(np.random.default_rng(2).random((200, 2)), storage=mariadb_url,
                 algorithm="random", seed=1).storage.close()  # fmt: skip
    code = (
        "import sys, frontierbo\n"
        "study = frontierbo.load_study(storage=sys.argv[1])\n"
        "for _ in range(6):\n"
        "    t = study.ask(); study.tell(t, float(t.x.sum()))\n"
    )
    workers = [subprocess.Popen([sys.executable, "-c", code, mariadb_url]) for _ in range(3)]
    assert [w.wait(timeout=120) for w in workers] == [0, 0, 0]
    trials = load_study(storage=mariadb_url).trials
    assert sorted(t.number for t in trials) == list(range(18))
    assert len({t.row for t in trials}) == 18 and {t.state for t in trials} == {"complete"}


def test_the_shell_on_mariadb(cli, mariadb_url, tmp_path):
    path = tmp_path / "rows.csv"
    path.write_text("id,temp,solvent\nA,1.5,water\nB,2.5,ethanol\nC,3.5,water\n")
    status, out, err = cli(["study", "create", "--candidates", path, "--storage", mariadb_url])
    assert status == 0, err
    status, out, err = cli(["ask", "--storage", mariadb_url])
    assert status == 0 and '"carried": {"id":' in out, err
    status, out, err = cli(["tell", "--storage", mariadb_url, "--trial", 0, "--value", 2])
    assert status == 0, err
    status, out, err = cli(["study", "export", "--storage", mariadb_url])
    assert status == 0 and len(out.strip().splitlines()) == 2, err  # the header and one trial
