"""The curator as a real HTTP service (``frontierbo curator serve`` in a uvicorn process on a
free port) and the modeler as its client: authentication, budgets, bad input, no leak of X or of
tokens, exact accounting under 20 concurrent clients, SIGKILL and restart."""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

httpx = pytest.importorskip("httpx")
pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

from frontierbo.po.service.client import HTTPCurator  # noqa: E402
from frontierbo.po.service.curator import prepare  # noqa: E402
from frontierbo.po.service.store import CuratorStore, StoreError  # noqa: E402

N, D = 120, 3


def _table(path):
    rng = np.random.default_rng(0)
    X = np.round(rng.uniform(size=(N, D)), 6)
    y = np.round(np.sin(3 * X[:, 0]) + X[:, 1] ** 2 - X[:, 2], 6)
    lines = ["a,b,c,y"] + [",".join(f"{v:.6f}" for v in (*x, v)) for x, v in zip(X, y, strict=True)]
    path.write_text("\n".join(lines) + "\n")
    return X, y


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """``frontierbo curator serve`` as a subprocess; ``start()`` waits until it answers."""

    def __init__(self, folder, token):
        self.folder, self.token = folder, token
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = folder / f"server-{self.port}.log"
        self.proc = None

    def start(self):
        cmd = [sys.executable, "-m", "frontierbo.cli", "curator", "serve", "--data",
               str(self.folder / "private.csv"), "--target", "y", "--epsilon", "1", "--delta",
               "1e-5", "--db", str(self.folder / "curator.db"), "--port", str(self.port)]  # fmt: skip
        with open(self.log, "ab") as log:  # the child keeps its own copy of the descriptor
            self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                r = httpx.get(f"{self.url}/health", headers=self.auth(self.token), timeout=1)
                if r.status_code == 200:
                    return self
            except httpx.TransportError:
                time.sleep(0.1)
        raise RuntimeError(f"the curator did not start: {self.log.read_text()}")

    def auth(self, token):
        return {"Authorization": f"Bearer {token}"}

    def kill(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=10)


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    folder = tmp_path_factory.mktemp("curator")
    X, y = _table(folder / "private.csv")
    store = CuratorStore(folder / "curator.db")
    tokens = {name: store.add_modeler(name, budget)
              for name, budget in [("alice", 50), ("bob", 3), ("eve", 5)]}  # fmt: skip
    store.close()
    server = Server(folder, tokens["alice"]).start()
    yield server, tokens, X, y
    server.stop()


def test_every_endpoint_needs_a_valid_token(service):
    server, tokens, _, _ = service
    for method, path in [("GET", "/health"), ("GET", "/release"), ("GET", "/ledger"),
                         ("POST", "/query"), ("GET", "/nowhere")]:  # fmt: skip
        for headers in [{}, server.auth("fbo_wrong"), {"Authorization": tokens["alice"]}]:
            r = httpx.request(method, server.url + path, headers=headers, content=b"{not json")
            assert r.status_code == 401, (path, headers)
            assert r.headers["www-authenticate"] == "Bearer"
    assert httpx.get(server.url + "/openapi.json").status_code == 200  # the schema is public
    store = CuratorStore(server.folder / "curator.db")
    store.revoke_modeler("eve")
    r = httpx.get(server.url + "/health", headers=server.auth(tokens["eve"]))
    assert r.status_code == 401
    # unauthenticated refusals are counted, one audit line per endpoint and outcome at a time
    assert any(a["outcome"].startswith("bad or revoked token ×") for a in store.audit())


def test_bad_rows_get_422_and_cost_nothing(service):
    server, tokens, _, _ = service
    headers = server.auth(tokens["alice"])
    used = httpx.get(server.url + "/health", headers=headers).json()["remaining"]
    bad = [b'{"row": 120}', b'{"row": -1}', b'{"row": 1.5}', b'{"row": "3"}', b"not json",
           b'{"row": 2, "extra": 1}', b"{}"]  # fmt: skip
    for body in bad:
        r = httpx.post(server.url + "/query", headers=headers, content=body)
        assert r.status_code == 422, body
        assert r.json()["detail"]
    r = httpx.post(server.url + "/query", headers=headers, json={"row": N})
    assert r.json()["detail"] == f"row must be an integer in [0, {N - 1}], got {N}"
    assert httpx.get(server.url + "/health", headers=headers).json()["remaining"] == used


def test_budget_retries_and_conflicts(service):
    server, tokens, _, y = service
    headers = server.auth(tokens["bob"])
    answers = [httpx.post(server.url + "/query", headers=headers,
                          json={"row": k, "request_id": f"r{k}"}).json() for k in range(3)]  # fmt: skip
    assert [a["value"] for a in answers] == pytest.approx(y[:3].tolist())
    assert [a["remaining"] for a in answers] == [2, 1, 0]
    over = httpx.post(server.url + "/query", headers=headers, json={"row": 5})
    assert over.status_code == 403 and over.json()["remaining"] == 0
    again = httpx.post(server.url + "/query", headers=headers, json={"row": 1, "request_id": "r1"})
    assert again.status_code == 200 and again.json()["replayed"] is True  # a retry is free
    assert again.json()["value"] == answers[1]["value"]
    clash = httpx.post(server.url + "/query", headers=headers, json={"row": 7, "request_id": "r1"})
    assert clash.status_code == 409


def test_no_endpoint_returns_a_row_of_x_and_no_token_is_logged_or_stored(service):
    server, tokens, X, _ = service
    headers = server.auth(tokens["alice"])
    bodies = [httpx.get(server.url + p, headers=headers).json()
              for p in ("/release", "/ledger", "/health")]  # fmt: skip
    bodies.append(httpx.post(server.url + "/query", headers=headers, json={"row": 4}).json())
    vectors = []

    def collect(obj):
        if isinstance(obj, dict):
            for v in obj.values():
                collect(v)
        elif isinstance(obj, list):
            if obj and all(isinstance(v, int | float) for v in obj):
                vectors.append(np.asarray(obj, dtype=float))
            for v in obj:
                collect(v)

    collect(bodies)
    Z = np.asarray(bodies[0]["Z"])
    assert Z.shape[0] == N
    for v in vectors:  # neither a row of X nor any d consecutive numbers of one
        for i in range(max(v.size - D + 1, 0)):
            assert not np.any(np.all(np.isclose(X, v[i : i + D], atol=1e-9), axis=1))
    log = server.log.read_text()
    db = (server.folder / "curator.db").read_bytes()
    for token in tokens.values():
        assert token not in log
        assert token.encode() not in db


def _raw_request(server, head: str, chunks=()) -> tuple[bytes, int, float]:
    """Send ``head`` and then ``chunks`` until the server answers; (the answer's first bytes,
    body bytes sent, seconds until the answer)."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
        start = time.perf_counter()
        s.sendall(head.encode())
        sent = 0
        for chunk in chunks:
            if select.select([s], [], [], 0.001)[0]:
                break
            s.sendall(chunk)
            sent += len(chunk)
        answer = s.recv(4096)
        return answer, sent, time.perf_counter() - start


def test_a_large_body_gets_413_before_it_is_read(service):
    server, tokens, _, _ = service
    head = (f"POST /query HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {tokens['alice']}\r\n"
            "Content-Type: application/json\r\n")  # fmt: skip
    # a 10 MB Content-Length and no byte of the body sent: the answer cannot have read it
    answer, _, seconds = _raw_request(server, head + "Content-Length: 10000000\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 413"), answer[:100]
    assert seconds < 1.0
    # chunked, no Content-Length: refused once 64 KiB have arrived, long before 10 MB
    chunk = b"2000\r\n" + b"7" * 0x2000 + b"\r\n"
    answer, sent, seconds = _raw_request(
        server, head + "Transfer-Encoding: chunked\r\n\r\n", [chunk] * 1280
    )
    assert answer.startswith(b"HTTP/1.1 413"), answer[:100]
    assert sent < 5_000_000 and seconds < 5.0


def test_a_token_in_a_url_gets_400_and_never_reaches_the_log(service):
    server, tokens, _, _ = service
    token = tokens["alice"]
    for url in (f"/health?token={token}", f"/release?access_token={token}",
                f"/dashboard?x={token}", f"/nowhere?t={token}"):  # fmt: skip
        r = httpx.get(server.url + url, headers=server.auth(token))
        assert r.status_code == 400 and token not in r.text
    r = httpx.get(server.url + f"/health?token={token}")  # without a header: 400 as well
    assert r.status_code == 400
    deadline = time.monotonic() + 5
    while '"GET /nowhere HTTP/1.1" 400' not in server.log.read_text():  # logged, without query
        assert time.monotonic() < deadline, server.log.read_text()[-2000:]
        time.sleep(0.05)
    assert token not in server.log.read_text()


def test_twenty_concurrent_modelers_are_accounted_exactly(service):
    server, _, _, _ = service
    store = CuratorStore(server.folder / "curator.db")
    tokens = [store.add_modeler(f"m{k}", 10) for k in range(20)]
    results: dict[int, list[int]] = {}

    def client(k):
        with httpx.Client(base_url=server.url, headers=server.auth(tokens[k])) as http:
            results[k] = [http.post("/query", json={"row": (k + j) % N}).status_code
                          for j in range(14)]  # fmt: skip

    threads = [threading.Thread(target=client, args=(k,)) for k in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(sorted(codes) == [200] * 10 + [403] * 4 for codes in results.values())
    modelers = {m["name"]: m for m in store.modelers()}
    audit = store.audit()
    for k in range(20):
        name = f"m{k}"
        answered = [a for a in audit if a["modeler"] == name and a["outcome"] == "answered"]
        assert modelers[name]["used"] == 10 == len(answered) == len(store.answers(name))
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        store.conn.execute("DELETE FROM curator_audit")


def test_http_curator_is_the_in_process_curators_interface(service):
    """POGPUCBModeler's own loop runs against the service through the transport."""
    from frontierbo.po.po_gp_ucb import POGPUCBModeler

    server, tokens, _, y = service
    curator = HTTPCurator(server.url, tokens["alice"])
    release = curator.release()
    modeler = POGPUCBModeler(release["Z"], lengthscale=20.0, signal_variance=1.0,
                             noise_variance=0.01)  # fmt: skip
    result = modeler.optimize(curator, iterations=4, initial_indices=[0])
    assert len(result.indices) == 4
    assert [curator.query(int(i)) for i in result.indices] == pytest.approx(y[result.indices])
    curator.close()


def _counts(db, name):
    with sqlite3.connect(db) as conn:
        used = conn.execute("SELECT used FROM curator_modelers WHERE name = ?", (name,)).fetchone()
        answers = conn.execute(
            "SELECT COUNT(*) FROM curator_answers a JOIN curator_modelers m ON m.id = "
            "a.modeler_id WHERE m.name = ?", (name,)).fetchone()  # fmt: skip
        audited = conn.execute(
            "SELECT COUNT(*) FROM curator_audit WHERE modeler = ? AND outcome = 'answered'",
            (name,),
        ).fetchone()
    return used[0], answers[0], audited[0]


def test_sigkill_during_a_burst_loses_and_duplicates_nothing(tmp_path):
    _table(tmp_path / "private.csv")
    store = CuratorStore(tmp_path / "curator.db")
    tokens = [store.add_modeler(f"k{k}", 40) for k in range(4)]
    store.close()
    server = Server(tmp_path, tokens[0]).start()
    release = httpx.get(server.url + "/release", headers=server.auth(tokens[0])).json()
    ledger = httpx.get(server.url + "/ledger", headers=server.auth(tokens[0])).json()["entries"]
    got: dict[tuple[int, int], float] = {}

    def burst(k):
        with httpx.Client(base_url=server.url, headers=server.auth(tokens[k]), timeout=5) as http:
            for j in range(40):
                try:
                    r = http.post("/query", json={"row": j, "request_id": f"q{j}"})
                except httpx.TransportError:
                    return
                got[(k, j)] = r.json()["value"]

    threads = [threading.Thread(target=burst, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    while len(got) < 30:
        time.sleep(0.005)
    server.kill()
    for t in threads:
        t.join()
    for k in range(4):  # after the kill: every answered query is charged and audited once
        used, answers, audited = _counts(tmp_path / "curator.db", f"k{k}")
        assert used == answers == audited
        assert used >= sum(1 for key in got if key[0] == k)
    server.start()  # the same database: the same release, no second ledger entry
    headers = server.auth(tokens[0])
    assert httpx.get(server.url + "/release", headers=headers).json() == release
    assert httpx.get(server.url + "/ledger", headers=headers).json()["entries"] == ledger
    for k in range(4):  # the clients resume: every request again, each charged once in all
        with httpx.Client(base_url=server.url, headers=server.auth(tokens[k])) as http:
            for j in range(40):
                value = http.post("/query", json={"row": j, "request_id": f"q{j}"}).json()["value"]
                assert got.get((k, j), value) == value
        assert _counts(tmp_path / "curator.db", f"k{k}") == (40, 40, 40)
    server.stop()


def test_the_modeler_command_resumes_after_sigkill_without_paying_twice(tmp_path):
    _table(tmp_path / "private.csv")
    store = CuratorStore(tmp_path / "curator.db")
    token = store.add_modeler("carol", 100)
    store.close()
    (tmp_path / "carol.token").write_text(token + "\n")
    server = Server(tmp_path, token).start()
    cmd = [sys.executable, "-m", "frontierbo.cli", "modeler", "--url", server.url,
           "--token-file", str(tmp_path / "carol.token"), "--queries", "14", "--out",
           str(tmp_path / "carol")]  # fmt: skip
    first = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while _counts(tmp_path / "curator.db", "carol")[0] < 6 and time.monotonic() < deadline:
        time.sleep(0.01)
    first.send_signal(signal.SIGKILL)
    first.wait()
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    result = json.loads((tmp_path / "carol" / "result.json").read_text())
    assert result["queries"] == 14
    assert _counts(tmp_path / "curator.db", "carol") == (14, 14, 14)  # none charged twice
    server.stop()


def test_a_release_is_made_once_and_never_for_other_data(tmp_path):
    _table(tmp_path / "private.csv")
    store = CuratorStore(tmp_path / "curator.db")
    first = prepare(store, tmp_path / "private.csv", "y", epsilon=1.0, delta=1e-5)
    again = prepare(store, tmp_path / "private.csv", "y", epsilon=1.0, delta=1e-5)
    np.testing.assert_array_equal(first.Z, again.Z)  # stored, not redrawn
    assert len(store.ledger()) == 1
    with pytest.raises(StoreError, match="other settings"):
        prepare(store, tmp_path / "private.csv", "y", epsilon=2.0, delta=1e-5)
    (tmp_path / "private.csv").write_text((tmp_path / "private.csv").read_text() + "0,0,0,9\n")
    with pytest.raises(StoreError, match="not the file"):
        prepare(store, tmp_path / "private.csv", "y", epsilon=1.0, delta=1e-5)
    os.remove(tmp_path / "private.csv")


def test_the_curator_dashboard_updates_after_a_query_in_chromium(service):
    """The page renders the modelers' progress for a viewer and follows a new query; a
    modeler's token cannot read it (403: modelers must not see each other)."""
    import shutil

    if shutil.which("chromium") is None:
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api")
    server, tokens, _, _ = service
    store = CuratorStore(server.folder / "curator.db")
    viewer = store.add_modeler(f"screen-{time.monotonic_ns()}", 0, role="viewer")
    headers = server.auth(tokens["alice"])
    httpx.post(server.url + "/query", headers=headers, json={"row": 11})  # alice has answers

    def queried():
        return sum(
            len(store.answers(m["name"])) for m in store.modelers() if m["role"] == "modeler"
        )

    args = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync"]  # fmt: skip
    with sync_api.sync_playwright() as p:
        chrome = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=args)
        page = chrome.new_page()
        page.goto(f"{server.url}/dashboard?interval=200#token={viewer}")
        page.wait_for_selector("#best-so-far path.series", state="attached")
        count = "([n]) => Number(document.querySelector('#points').dataset.count) === n"
        page.wait_for_function(count, arg=[queried()])
        assert not page.is_hidden("#regret-box") and "alice" in page.text_content("#budgets")
        # every chart has its axis titles and a legend (below it) naming the modelers
        for chart in ("best-so-far", "regret"):
            assert "alice" in page.text_content(f"#{chart}-legend")
            titles = page.locator(f"#{chart} text.axis-title").all_text_contents()
            assert len(titles) == 2 and all(t.strip() for t in titles), titles
        assert "alice" in page.text_content("#legend")
        httpx.post(server.url + "/query", headers=headers, json={"row": 12})
        page.wait_for_function(count, arg=[queried()])  # one more circle, within a few polls
        assert page.text_content("#audit tbody tr td:nth-child(4)") == "12"  # newest first
        modeler = chrome.new_page()
        modeler.goto(f"{server.url}/dashboard#token={tokens['alice']}")
        # a function, not an expression: Playwright evals an expression, which the page's CSP
        # (no 'unsafe-eval') refuses
        modeler.wait_for_function(
            "() => document.getElementById('status').textContent.includes('403')"
        )
        chrome.close()


def test_the_modeler_says_in_one_line_when_the_curator_is_not_running(tmp_path, cli):
    """No curator at the URL: one line, a visible retry, nothing left in --out."""
    (tmp_path / "t.token").write_text("fb_some_token\n")
    url = f"http://127.0.0.1:{_free_port()}"
    start = time.monotonic()
    status, out, err = cli(["modeler", "--url", url, "--token-file", tmp_path / "t.token",
                            "--queries", 3, "--out", tmp_path / "out"])  # fmt: skip
    assert status == 2 and time.monotonic() - start < 30
    lines = err.strip().splitlines()
    assert lines[0] == (f"frontierbo: the curator at {url} does not answer (connection refused); "
                        "retrying for up to 5 s")  # fmt: skip
    assert lines[1] == (f"frontierbo: error: the curator at {url} is unreachable (connection "
                        "refused; retried for 5 s): is `frontierbo curator serve` running there?")  # fmt: skip
    assert len(lines) == 2 and not (tmp_path / "out").exists()


def test_a_wrong_token_is_one_line_and_leaves_no_session(service, tmp_path, cli):
    server, tokens, _, _ = service
    (tmp_path / "wrong.token").write_text("fb_not_a_token\n")
    (tmp_path / "alice.token").write_text(tokens["alice"] + "\n")
    argv = ["modeler", "--url", server.url, "--queries", 2, "--out", tmp_path / "out"]
    status, _, err = cli([*argv, "--token-file", tmp_path / "wrong.token"])
    assert status == 2 and len(err.strip().splitlines()) == 1, err
    assert err.startswith(f"frontierbo: error: the curator at {server.url} refused the token")
    assert not (tmp_path / "out").exists()
    status, out, err = cli([*argv, "--token-file", tmp_path / "alice.token"])  # the right one
    assert status == 0 and "modeler: 2 queries answered" in out, err
