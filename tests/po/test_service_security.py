"""The curator's HTTP boundary in-process (FastAPI's TestClient): roles per endpoint, what a
viewer sees in the end-to-end mode, body size, bounded integers and NaN, tokens in URLs, and
unauthenticated floods (issue 56). The same boundary against a real uvicorn process is in
``test_service.py``."""

from __future__ import annotations

import re
import time

import numpy as np
import pytest

pytest.importorskip("httpx")
pytest.importorskip("fastapi")

from fastapi.testclient import TestClient  # noqa: E402

from frontierbo.po.service.app import create_app  # noqa: E402
from frontierbo.po.service.curator import CuratorService, prepare  # noqa: E402
from frontierbo.po.service.dashboard import CuratorSnapshot  # noqa: E402
from frontierbo.po.service.store import CuratorStore  # noqa: E402

N = 40
MAX_BODY_BYTES = 64 * 1024  # the service's limit (issue 56)


def _files(folder):
    rng = np.random.default_rng(3)
    X = rng.uniform(0, 10, size=(N, 2))
    y = np.round(X[:, 0] - X[:, 1], 6)
    rows = ["a,b,y"] + [f"{a:.6f},{b:.6f},{v:.6f}" for (a, b), v in zip(X, y, strict=True)]
    (folder / "private.csv").write_text("\n".join(rows) + "\n")
    (folder / "bounds.csv").write_text("column,low,high\na,0,10\nb,0,10\ny,-10,10\n")
    return y


@pytest.fixture(scope="module")
def curator(tmp_path_factory):
    """A paper-mode curator with a modeler, a viewer and a revoked modeler, over HTTP."""
    folder = tmp_path_factory.mktemp("security")
    _files(folder)
    store = CuratorStore(folder / "curator.db")
    service = CuratorService(store, prepare(store, folder / "private.csv", "y", epsilon=1.0,
                                            delta=1e-5))  # fmt: skip
    tokens = {
        "no token": None,
        "bad token": "fbo_" + "x" * 43,
        "revoked": store.add_modeler("gone", 5),
        "viewer": store.add_modeler("screen", 0, role="viewer"),
        "modeler": store.add_modeler("alice", 1000),
    }
    store.revoke_modeler("gone")
    with TestClient(create_app(service), raise_server_exceptions=False) as client:
        yield client, service, tokens


def _auth(token):
    return {} if token is None else {"Authorization": f"Bearer {token}"}


def _new_audit(service, before):
    return service.store.audit()[before:]


# -- 1. roles ----------------------------------------------------------------------------------
WHO = ("no token", "bad token", "revoked", "viewer", "modeler")
EXPECTED = {  # endpoint: the status for each of WHO
    ("GET", "/health"): (401, 401, 401, 200, 200),
    ("GET", "/release"): (401, 401, 401, 403, 200),
    ("POST", "/query"): (401, 401, 401, 403, 200),
    ("GET", "/ledger"): (401, 401, 401, 403, 200),
    ("GET", "/dashboard/data"): (401, 401, 401, 200, 403),
}
TABLE = [(m, p, who, codes[k]) for (m, p), codes in EXPECTED.items() for k, who in enumerate(WHO)]


@pytest.mark.parametrize(("method", "path", "who", "status"), TABLE)
def test_every_endpoint_and_role(curator, method, path, who, status):
    client, service, tokens = curator
    before = len(service.store.audit())
    r = client.request(method, path, headers=_auth(tokens[who]), json={"row": 1})
    assert r.status_code == status, r.text
    assert r.headers["content-type"] == "application/json"
    if status == 401:
        assert r.headers["www-authenticate"] == "Bearer" and r.json()["detail"]
    if status == 403:  # refused by role before the body is read, and audited by name
        assert "may not" in r.json()["detail"]
        last = _new_audit(service, before)[-1]
        name = {"viewer": "screen", "modeler": "alice"}[who]
        assert (last["modeler"], last["endpoint"], last["status"]) == (name, path, 403)
    if path == "/health" and status == 200 and who == "viewer":
        # a viewer's own budget (none), never a modeler's
        assert r.json() == {"status": "ok", "modeler": "screen", "role": "viewer", "remaining": 0}


# -- 2. the end-to-end mode shows viewers only what modelers were told -------------------------
def _numbers(obj, out):
    if isinstance(obj, dict):
        for v in obj.values():
            _numbers(v, out)
    elif isinstance(obj, list):
        for v in obj:
            _numbers(v, out)
    elif isinstance(obj, int | float) and not isinstance(obj, bool):
        out.append(float(obj))
    return out


def test_end_to_end_dashboard_has_no_number_derived_from_the_raw_values(tmp_path):
    y = _files(tmp_path)
    store = CuratorStore(tmp_path / "c.db")
    served = prepare(store, tmp_path / "private.csv", "y", epsilon=1.0, delta=1e-5,
                     privacy="end-to-end", bounds=tmp_path / "bounds.csv",
                     answer_epsilon=0.5)  # fmt: skip
    served.noise.rng = np.random.default_rng(11)
    service = CuratorService(store, served)
    token = store.add_modeler("alice", 50)
    rows = [3, 5, int(np.argmax(y)), 8, 13, 21]  # the true optimum among them
    told = [service.query(token, row, f"q{row}")[1]["value"] for row in rows]
    assert not set(told) & set(y.tolist())  # this seed draws no zero noise: the test is sharp
    snap = CuratorSnapshot(store, served)()
    assert "regret" not in snap
    assert snap["series"] == [
        {"name": "alice", "x": list(range(1, 7)), "y": np.maximum.accumulate(told).tolist()}
    ]
    numbers = _numbers(snap, [])
    true = {float(np.max(y))} | {float(v) for v in y[rows]}
    regret = {float(np.max(y) - v) for v in np.maximum.accumulate(y[rows])} - {0.0}
    assert regret and not (true | regret) & set(numbers)
    # the paper mode keeps the curator's exact regret (documented in docs/service.md)
    paper_store = CuratorStore(tmp_path / "p.db")
    paper = prepare(paper_store, tmp_path / "private.csv", "y", epsilon=1.0, delta=1e-5)
    paper_token = paper_store.add_modeler("bob", 5)
    CuratorService(paper_store, paper).query(paper_token, 3, None)
    assert CuratorSnapshot(paper_store, paper)()["regret"][0]["y"] == [float(np.max(y) - y[3])]


# -- 3. body size and 4. integers and NaN ------------------------------------------------------
def test_a_large_body_gets_413_without_an_echo(curator):
    client, service, tokens = curator
    headers = {**_auth(tokens["modeler"]), "Content-Type": "application/json"}
    big = b'{"row": "' + b"A" * 10_000_000 + b'"}'
    before = len(service.store.audit())
    start = time.perf_counter()
    r = client.post("/query", headers=headers, content=big)
    assert r.status_code == 413, r.status_code
    assert len(r.content) < 500 and b"AAAA" not in r.content
    assert time.perf_counter() - start < 2.0
    assert [(a["modeler"], a["outcome"], a["status"]) for a in _new_audit(service, before)] == [
        ("alice", "body too large", 413)
    ]
    # just under the limit: read, refused by validation, and the value is not echoed
    under = b'{"row": "' + b"B" * (MAX_BODY_BYTES - 20) + b'"}'
    r = client.post("/query", headers=headers, content=under)
    assert r.status_code == 422 and len(r.content) < 500 and b"BBBB" not in r.content
    assert r.json()["detail"][0]["loc"] == ["body", "row"]


def test_a_chunked_body_is_counted_and_refused_past_the_limit(curator):
    client, service, tokens = curator
    headers = {**_auth(tokens["modeler"]), "Content-Type": "application/json"}
    before = len(service.store.audit())
    chunks = (b"7" * 8192 for _ in range(1220))  # no Content-Length: Transfer-Encoding chunked
    r = client.post("/query", headers=headers, content=chunks)
    assert r.request.headers["transfer-encoding"] == "chunked"
    assert r.status_code == 413 and len(r.content) < 500
    assert [(a["modeler"], a["outcome"], a["status"]) for a in _new_audit(service, before)] == [
        ("alice", "body too large", 413)
    ]


@pytest.mark.parametrize(
    "body",
    [b'{"row": 9223372036854775808}', b'{"row": 2147483648}', b'{"row": NaN}',
     b'{"row": -Infinity}', b'{"row": 1, "request_id": NaN}', b'{"row": 1, "x": Infinity}',
     b'{"row": 1e400}', b"[NaN]"],
)  # fmt: skip
def test_huge_integers_and_nan_get_422_and_an_audit_line(curator, body):
    client, service, tokens = curator
    headers = {**_auth(tokens["modeler"]), "Content-Type": "application/json"}
    before = len(service.store.audit())
    r = client.post("/query", headers=headers, content=body)
    assert r.status_code == 422, r.text
    for error in r.json()["detail"]:
        assert set(error) == {"loc", "msg", "type"}  # no "input", "ctx" or "url"
    assert [(a["modeler"], a["endpoint"], a["row"], a["outcome"], a["status"])
            for a in _new_audit(service, before)] == [
        ("alice", "/query", None, "invalid body", 422)]  # fmt: skip


def test_the_client_tells_a_wrong_role_from_a_spent_budget(curator):
    from frontierbo.po.service.client import CuratorError, HTTPCurator

    client, _, tokens = curator
    viewer = HTTPCurator("http://testserver", tokens["viewer"])
    viewer._http = TestClient(client.app, headers=_auth(tokens["viewer"]))  # in-process
    with pytest.raises(CuratorError, match="may not call /release"):  # not "budget spent"
        viewer.release()


# -- 5. tokens in URLs -------------------------------------------------------------------------
@pytest.mark.parametrize(
    "url",
    ["/health?token={t}", "/release?access_token=abc", "/dashboard?x={t}", "/nowhere?t={t}",
     "/health?TOKEN=abc", "/health?q=fbo%5Fabc"],
)  # fmt: skip
def test_a_token_in_the_url_gets_400_before_anything_else(curator, url):
    client, _, tokens = curator
    r = client.get(url.format(t=tokens["modeler"]), headers=_auth(tokens["modeler"]))
    assert r.status_code == 400 and "Authorization" in r.json()["detail"]
    assert tokens["modeler"] not in r.text


def test_the_dashboard_page_keeps_its_interval_parameter(curator):
    client, _, _ = curator
    assert client.get("/dashboard?interval=200").status_code == 200


# -- 6. unauthenticated floods -----------------------------------------------------------------
def _counted(rows):
    return sum(int(re.search(r" ×(\d+)$", a["outcome"]).group(1)) for a in rows)


def _service(folder):
    _files(folder)
    store = CuratorStore(folder / "c.db")
    return CuratorService(store, prepare(store, folder / "private.csv", "y", epsilon=1.0,
                                         delta=1e-5))  # fmt: skip


def test_an_unauthenticated_flood_adds_a_bounded_number_of_audit_rows(tmp_path, monkeypatch):
    service = _service(tmp_path)
    store = service.store
    transactions = []
    real = store.transaction
    monkeypatch.setattr(store, "transaction", lambda: transactions.append(1) or real())
    with TestClient(create_app(service)) as client:
        for k in range(2000):
            headers = _auth("fbo_wrong") if k % 2 else {}
            client.request(*(("GET", "/health"), ("POST", "/query"))[k % 4 // 2], headers=headers)
        # the first refusal of each (endpoint, outcome) is written at once, the rest counted
        assert len(store.audit()) <= 8 and len(transactions) <= 8  # no write lock per request
        service.flush_refusals()  # also at shutdown and every few seconds
        added = store.audit()
        assert len(added) <= 16
        assert all(a["modeler"] is None and a["status"] == 401 for a in added)
        assert _counted(added) == 2000
        assert {a["outcome"].split(" ×")[0] for a in added} == {"no token", "bad or revoked token"}


def test_pending_refusals_are_written_at_shutdown(tmp_path):
    service = _service(tmp_path)
    store = service.store
    with TestClient(create_app(service)) as client:
        for _ in range(30):
            assert client.get("/release", headers=_auth("fbo_nothing")).status_code == 401
    rows = store.audit()
    assert _counted(rows) == 30 and {a["endpoint"] for a in rows} == {"/release"}
