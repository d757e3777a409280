"""The dashboard: its projection, the study snapshot, the routes' authentication, the command's
errors, and the page in a real Chromium (Debian's, driven by Playwright) following a study as
another process tells it new values."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys

import numpy as np
import pytest

from frontierbo.cli import main
from frontierbo.dashboard import study as dashboard_study
from frontierbo.dashboard.projection import pca2
from frontierbo.dashboard.study import study_snapshot
from frontierbo.study import create_study

# starlette's TestClient on httpx (what the [service] extra installs) warns that it is deprecated
pytestmark = pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]  # fmt: skip


# -- projection -------------------------------------------------------------------------------
def test_pca2_is_centred_orthogonal_ordered_and_deterministic():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 4)) @ np.diag([5.0, 2.0, 1.0, 0.1]) + 3.0
    P = pca2(X)
    assert P.shape == (200, 2)
    np.testing.assert_allclose(P.mean(axis=0), 0.0, atol=1e-10)
    assert abs(P[:, 0] @ P[:, 1]) < 1e-8 * np.linalg.norm(P) ** 2
    assert P[:, 0].var() > P[:, 1].var() > 0
    # the directions behind P are unit vectors whose largest-magnitude loading is positive
    V = np.linalg.lstsq(X - X.mean(axis=0), P, rcond=None)[0]
    np.testing.assert_allclose(np.linalg.norm(V, axis=0), 1.0)
    assert all(V[np.argmax(np.abs(V[:, k])), k] > 0 for k in range(2))
    perm = rng.permutation(200)
    np.testing.assert_allclose(pca2(X[perm]), P[perm], atol=1e-9)  # same picture, any row order
    np.testing.assert_allclose(pca2(np.column_stack([X, np.full(200, 7.0)])), P, atol=1e-9)


def test_pca2_of_one_column_and_bad_input():
    one = pca2(np.arange(5.0)[:, None])
    assert np.all(one[:, 1] == 0)
    np.testing.assert_allclose(one[:, 0], [-2, -1, 0, 1, 2])  # the loading is +1
    np.testing.assert_array_equal(pca2(np.arange(5.0)), one)  # 1-D is one column
    np.testing.assert_array_equal(pca2(np.ones((3, 2))), np.zeros((3, 2)))
    with pytest.raises(ValueError, match="X must be a 2-D"):
        pca2(np.zeros((2, 2, 2)))
    with pytest.raises(ValueError, match="X must be finite"):
        pca2([[0.0, np.nan], [1.0, 2.0]])


# -- the study snapshot -----------------------------------------------------------------------
def _study(path, told=4, pending=1, direction="maximize"):
    X = np.random.default_rng(1).uniform(size=(40, 3))
    study = create_study(X, storage=str(path), algorithm="random", seed=0, direction=direction)
    for _ in range(told):
        trial = study.ask()
        study.tell(trial, float(np.sin(3 * trial.x).sum()))
    for _ in range(pending):
        study.ask()
    return study


@pytest.mark.parametrize("direction", ["maximize", "minimize"])
def test_the_study_snapshot_is_what_the_study_holds(tmp_path, direction):
    study = _study(tmp_path / "s.db", direction=direction)
    snap = study_snapshot(tmp_path / "s.db")
    assert snap["series"][0]["y"] == study.best_so_far().tolist()
    assert snap["series"][0]["x"] == [1, 2, 3, 4]
    assert snap["points"]["queried"][0]["index"] == [t.row for t in study.trials]
    assert len(snap["points"]["x"]) == len(snap["points"]["y"]) == 40
    np.testing.assert_allclose(
        np.column_stack([snap["points"]["x"], snap["points"]["y"]]),
        pca2(study.candidates),
        atol=1e-4,  # rounded to five significant digits
    )
    audit = snap["audit"]
    assert [(a["endpoint"], a["outcome"]) for a in audit[:1]] == [("ask", "trial 4, pending")]
    assert sorted(a["at"] for a in audit) == [a["at"] for a in audit][::-1]  # newest first
    assert [a["endpoint"] for a in audit].count("tell") == 4 and len(audit) == 9
    assert {"budgets", "ledger", "regret"}.isdisjoint(snap)


def test_the_projection_is_computed_once_per_candidate_set(tmp_path, monkeypatch):
    _study(tmp_path / "s.db")
    calls = []
    monkeypatch.setattr(dashboard_study, "_PROJECTIONS", {})
    monkeypatch.setattr(dashboard_study, "pca2", lambda X: calls.append(1) or pca2(X))
    first = study_snapshot(tmp_path / "s.db")
    _study(tmp_path / "t.db", told=1, pending=0)  # the same rows in another database
    second = study_snapshot(tmp_path / "t.db")
    assert second["points"]["x"] == first["points"]["x"] and len(second["series"][0]["y"]) == 1
    assert len(calls) == 1


def test_a_space_study_shows_its_trials_on_axes_that_do_not_move(tmp_path):
    from frontierbo.study import Categorical, Float, Int, Space

    space = Space([Float("x", 0.0, 1.0), Float("lr", 1e-4, 1e-1, log=True), Int("n", 1, 8),
                   Categorical("act", ["relu", "tanh"])])  # fmt: skip
    study = create_study(space=space, storage=tmp_path / "s.db", seed=3)
    snaps = []
    for _ in range(4):
        trial = study.ask()
        study.tell(trial, trial.params["x"] + trial.params["n"])
        snaps.append(study_snapshot(tmp_path / "s.db"))
    pending = study.ask()
    last = study_snapshot(tmp_path / "s.db")
    assert len(last["points"]["x"]) == 5 and last["points"]["queried"][0]["index"] == list(range(5))
    # the first trials keep their place as later ones arrive (axes fixed by the space)
    for k, snap in enumerate(snaps):
        assert snap["points"]["x"] == last["points"]["x"][: k + 1]
        assert snap["points"]["y"] == last["points"]["y"][: k + 1]
    best = last["series"][0]["y"]
    assert best == sorted(best, reverse=study.direction == "minimize")
    assert last["audit"][0]["outcome"] == f"trial {pending.number}, pending"


def test_the_audit_keeps_the_last_lines(tmp_path):
    _study(tmp_path / "s.db", told=30, pending=0)
    audit = study_snapshot(tmp_path / "s.db")["audit"]
    assert len(audit) == dashboard_study.AUDIT_LINES == 50
    assert audit[0]["endpoint"] == "tell" and audit[-1]["endpoint"] == "ask"


# -- routes -----------------------------------------------------------------------------------
@pytest.fixture
def client():
    pytest.importorskip("fastapi")
    pytest.importorskip("httpx")
    from fastapi import FastAPI
    from fastapi.testclient import TestClient

    from frontierbo.dashboard.routes import add_dashboard

    app = FastAPI()
    seen = []

    def authorise(token):
        seen.append(token)
        return token == "right"

    snapshot = {"title": "t", "updated_at": 1.0, "secret": 12345.678, "nan": float("nan")}
    add_dashboard(app, lambda: snapshot, authorise, title="<b>mine</b>")
    with TestClient(app) as c:
        c.seen = seen
        yield c


def test_the_page_is_public_and_holds_no_data(client):
    page = client.get("/dashboard")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "12345.678" not in page.text and "secret" not in page.text
    assert "&lt;b&gt;mine&lt;/b&gt;" in page.text and "<b>mine" not in page.text
    policy = page.headers["content-security-policy"]
    assert "default-src 'none'" in policy and "connect-src 'self'" in policy
    assert "script-src 'sha256-" in policy and "unsafe" not in policy


def test_the_data_needs_a_token_authorise_accepts(client):
    cases = [
        ({}, None),
        ({"Authorization": "Bearer wrong"}, "wrong"),
        ({"Authorization": "right"}, None),
        ({"Authorization": "Basic right"}, None),
    ]
    for headers, token in cases:
        r = client.get("/dashboard/data", headers=headers)
        assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer", headers
        assert "token" in r.json()["detail"]
        assert client.seen.pop() == token
    r = client.get("/dashboard/data", headers={"Authorization": "Bearer right"})
    assert r.status_code == 200 and r.headers["cache-control"] == "no-store"
    assert r.json() == {"title": "t", "updated_at": 1.0, "secret": 12345.678, "nan": None}


def test_add_dashboard_rejects_a_bad_prefix():
    pytest.importorskip("fastapi")
    from fastapi import FastAPI

    from frontierbo.dashboard.routes import add_dashboard

    for prefix in ("dashboard", "/dashboard/", "/", "/a b"):
        with pytest.raises(ValueError, match="prefix must be"):
            add_dashboard(FastAPI(), dict, lambda t: True, prefix=prefix)


# -- the command ------------------------------------------------------------------------------
def test_the_command_fails_in_one_line_before_serving(tmp_path, capsys):
    pytest.importorskip("fastapi")
    pytest.importorskip("uvicorn")
    _study(tmp_path / "s.db", told=1, pending=0)
    (tmp_path / "notes.db").write_text("not a database\n")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        taken = str(busy.getsockname()[1])
        cases = [
            (["--storage", str(tmp_path / "none.db")], "does not exist"),
            (["--storage", str(tmp_path / "notes.db")], "storage"),
            (["--storage", str(tmp_path / "s.db"), "--name", "other"], "no study named 'other'"),
            (["--storage", str(tmp_path / "s.db"), "--interval", "10"], "--interval"),
            (["--storage", str(tmp_path / "s.db"), "--port", "70000"], "--port"),
            (["--storage", str(tmp_path / "s.db"), "--port", taken], f"--port {taken}"),
        ]
        for flags, message in cases:
            assert main(["dashboard", *flags]) == 2, flags
            out, err = capsys.readouterr()
            assert out == "" and err.startswith("frontierbo: error: ") and message in err, err
            assert err.count("\n") == 1


def test_the_command_names_the_extra_when_fastapi_is_missing(tmp_path, capsys, monkeypatch):
    _study(tmp_path / "s.db", told=1, pending=0)
    monkeypatch.setitem(sys.modules, "uvicorn", None)  # `import uvicorn` raises ImportError
    assert main(["dashboard", "--storage", str(tmp_path / "s.db")]) == 2
    assert "pip install 'frontierbo[service]'" in capsys.readouterr().err


# -- the page in a browser --------------------------------------------------------------------
def chromium():
    """Playwright's launcher and Debian's chromium, or a skip."""
    path = shutil.which("chromium")
    if path is None:
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    pytest.importorskip("uvicorn")
    return sync_api.sync_playwright, path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_count(page, selector: str, count: int, timeout: float = 10.0) -> None:
    page.wait_for_function(
        "([s, n]) => Number(document.querySelector(s).dataset.count) === n",
        arg=[selector, count],
        timeout=timeout * 1000,
    )


def wait_for_status(page, text: str, timeout: float = 10.0) -> None:
    page.wait_for_function(
        "(t) => document.getElementById('status').textContent.includes(t)",
        arg=text,
        timeout=timeout * 1000,
    )


#: What makes a chart of the page unreadable, as a list of sentences (empty: none): a chart
#: without both axis titles, axis titles over tick labels, a legend without entries, or a
#: legend over the chart.
READABILITY = """(ids) => {
  const problems = [];
  const meets = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
  for (const [chart, legendId] of ids) {
    const svg = document.querySelector(`#${chart} svg`);
    if (!svg) { problems.push(`${chart}: no chart`); continue; }
    const titles = [...svg.querySelectorAll("text.axis-title")];
    for (const axis of ["x", "y"]) {
      const t = svg.querySelector(`text.axis-title.${axis}`);
      if (!t || !t.textContent.trim()) problems.push(`${chart}: no ${axis} axis title`);
    }
    for (const tick of svg.querySelectorAll("text.tick")) {
      for (const t of titles) {
        if (meets(t.getBoundingClientRect(), tick.getBoundingClientRect())) {
          problems.push(`${chart}: the title '${t.textContent}' covers the tick '${tick.textContent}'`);
        }
      }
    }
    const legend = document.getElementById(legendId);
    if (!legend || legend.children.length === 0) { problems.push(`${chart}: no legend`); continue; }
    if (meets(legend.getBoundingClientRect(), svg.getBoundingClientRect())) {
      problems.push(`${chart}: the legend covers the chart`);
    }
  }
  return problems;
}"""


def assert_readable(page, charts) -> None:
    """Every chart of ``charts`` ({chart id: legend id}) has axis titles and a legend off it."""
    problems = page.evaluate(READABILITY, [[c, legend] for c, legend in charts.items()])
    assert problems == []


def test_the_study_dashboard_renders_and_follows_the_study_in_chromium(tmp_path):
    sync_playwright, executable = chromium()
    study = _study(tmp_path / "s.db", told=4, pending=0)
    cmd = [sys.executable, "-m", "frontierbo.cli", "dashboard", "--storage", str(tmp_path / "s.db"),
           "--port", str(free_port()), "--interval", "200"]  # fmt: skip
    server = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        line = server.stdout.readline()
        assert line.startswith("dashboard: http://"), line + server.stdout.read()
        url = line.split(" ", 1)[1].strip()
        assert "?interval=200#token=" in url
        with sync_playwright() as p:
            chrome = p.chromium.launch(
                executable_path=executable, headless=True, args=CHROMIUM_ARGS
            )
            page = chrome.new_page()
            page.set_default_timeout(10_000)
            problems = []  # script errors, CSP refusals
            page.on("pageerror", lambda exc: problems.append(str(exc)))
            page.on("console", lambda m: m.type == "error" and problems.append(m.text))
            page.goto(url)
            page.wait_for_selector("#best-so-far path.series", state="attached")
            wait_for_count(page, "#points", 4)
            wait_for_count(page, "#best-so-far", 4)
            assert page.locator("#points circle.queried").count() == 4
            assert page.locator("#points circle.candidate").count() == 40
            assert page.locator("#best-so-far text.tick").count() >= 4
            assert page.is_hidden("#regret-box") and page.is_hidden("#budgets-box")
            assert "default (4)" in page.text_content("#legend")
            assert "candidate rows (40)" in page.text_content("#legend")
            assert page.text_content("#best-so-far-legend") == "default"
            assert_readable(page, {"best-so-far": "best-so-far-legend", "points": "legend"})
            titles = page.locator("#best-so-far text.axis-title").all_text_contents()
            assert titles == ["evaluations (in the order told)",
                              "best value so far (objective units)"]  # fmt: skip
            for _ in range(3):  # another process asks and tells: the page follows
                trial = study.ask()
                study.tell(trial, float(np.sin(3 * trial.x).sum()))
            wait_for_count(page, "#points", 7)
            wait_for_count(page, "#best-so-far", 7)
            assert page.locator("#best-so-far path.series").count() == 1
            newest = page.locator("#audit tbody tr").first.locator("td")
            assert newest.nth(2).text_content() == "tell"
            assert newest.nth(3).text_content() == str(trial.row)
            assert "updated" in page.text_content("#status")
            page.screenshot(path=str(tmp_path / "dashboard.png"), full_page=True)
            png = (tmp_path / "dashboard.png").read_bytes()
            assert png.startswith(b"\x89PNG") and len(png) > 10_000
            assert problems == []

            wrong = chrome.new_page()
            wrong.set_default_timeout(10_000)
            wrong.goto(url.split("#")[0] + "#token=wrong")
            wait_for_status(wrong, "401")
            assert wrong.get_attribute("#points", "data-count") == "0"

            server.terminate()
            server.wait(timeout=10)
            wait_for_status(page, "cannot reach the server")
            chrome.close()
    finally:
        server.terminate()
        server.wait(timeout=10)
