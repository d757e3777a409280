"""The dashboard: its projection, the study snapshot, the routes' authentication, and the page in
a real Chromium (Debian's, driven by Playwright) updating as a study is told new values."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time

import numpy as np
import pytest

from frontierbo.dashboard.projection import pca2
from frontierbo.dashboard.study import study_snapshot
from frontierbo.study import create_study

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]  # fmt: skip


def test_pca2_is_centred_orthogonal_ordered_and_deterministic():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 4)) @ np.diag([5.0, 2.0, 1.0, 0.1])
    P = pca2(X)
    np.testing.assert_allclose(P.mean(axis=0), 0.0, atol=1e-10)
    assert abs(P[:, 0] @ P[:, 1]) < 1e-8 * np.linalg.norm(P) ** 2
    assert P[:, 0].var() >= P[:, 1].var()
    perm = rng.permutation(200)
    np.testing.assert_allclose(pca2(X[perm]), P[perm], atol=1e-9)  # same picture, any row order
    one = pca2(np.arange(5.0)[:, None])
    assert np.all(one[:, 1] == 0) and np.allclose(np.abs(one[:, 0]), [2, 1, 0, 1, 2])
    with pytest.raises(ValueError, match="non-empty 2-D"):
        pca2(np.zeros(3))


def _study(path, told=4, pending=1):
    X = np.random.default_rng(1).uniform(size=(40, 3))
    study = create_study(X, storage=str(path), algorithm="random", seed=0)
    for _ in range(told):
        trial = study.ask()
        study.tell(trial, float(np.sin(trial.x).sum()))
    for _ in range(pending):
        study.ask()
    return study


def test_the_study_snapshot_is_what_the_study_holds(tmp_path):
    study = _study(tmp_path / "s.db")
    snap = study_snapshot(tmp_path / "s.db")
    assert snap["series"][0]["y"] == study.best_so_far().tolist()
    assert snap["series"][0]["x"] == [1, 2, 3, 4]
    assert snap["points"]["queried"][0]["index"] == [t.row for t in study.trials]
    assert len(snap["points"]["x"]) == 40
    assert [a["endpoint"] for a in snap["audit"]][0] == "ask"  # the pending one is the newest
    assert sum(a["endpoint"] == "tell" for a in snap["audit"]) == 4


@pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")
def test_the_data_needs_the_token_and_the_page_holds_no_data(tmp_path):
    pytest.importorskip("fastapi")
    from fastapi import FastAPI
    from fastapi.testclient import TestClient

    from frontierbo.dashboard.routes import add_dashboard

    app = FastAPI()
    add_dashboard(app, lambda: {"title": "t", "updated_at": 1.0, "secret": 12345.678},
                  lambda token: token == "right")  # fmt: skip
    client = TestClient(app)
    page = client.get("/dashboard")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "12345.678" not in page.text
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "right"}):
        r = client.get("/dashboard/data", headers=headers)
        assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"
    r = client.get("/dashboard/data", headers={"Authorization": "Bearer right"})
    assert r.status_code == 200 and r.json()["secret"] == 12345.678


def browser():
    """Playwright's Chromium launcher on Debian's chromium, or a skip."""
    if shutil.which("chromium") is None and not shutil.which(CHROMIUM):
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api")
    return sync_api.sync_playwright


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_count(page, selector: str, count: int, timeout: float = 15.0) -> None:
    page.wait_for_function(
        "([s, n]) => Number(document.querySelector(s).dataset.count) === n",
        arg=[selector, count],
        timeout=timeout * 1000,
    )


def test_the_study_dashboard_renders_and_follows_the_study_in_chromium(tmp_path):
    sync_playwright = browser()
    study = _study(tmp_path / "s.db", told=4, pending=0)
    cmd = [sys.executable, "-m", "frontierbo.cli", "dashboard", "--storage", str(tmp_path / "s.db"),
           "--port", str(free_port()), "--interval", "200"]  # fmt: skip
    server = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        line = server.stdout.readline()
        assert line.startswith("dashboard: http://"), line
        url = line.split(" ", 1)[1].strip()
        with sync_playwright() as p:
            chrome = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
            page = chrome.new_page()
            for _ in range(100):  # the server may still be starting
                try:
                    page.goto(url)
                    break
                except Exception:
                    time.sleep(0.1)
            page.wait_for_selector("#best-so-far path.series", state="attached")
            wait_for_count(page, "#points", 4)
            wait_for_count(page, "#best-so-far", 4)
            for _ in range(3):  # another process tells: the page follows
                trial = study.ask()
                study.tell(trial, float(np.sin(trial.x).sum()))
            wait_for_count(page, "#points", 7)
            wait_for_count(page, "#best-so-far", 7)
            assert "updated" in page.text_content("#status")
            page.screenshot(path=str(tmp_path / "dashboard.png"), full_page=True)
            assert (tmp_path / "dashboard.png").stat().st_size > 10_000
            wrong = chrome.new_page()
            wrong.goto(url.split("#")[0] + "#token=wrong")
            wrong.wait_for_function("document.getElementById('status').textContent.includes('401')")
            chrome.close()
    finally:
        server.terminate()
        server.wait(timeout=10)
