"""The curator's HTTP API (FastAPI): ``GET /health``, ``GET /release``, ``POST /query``,
``GET /ledger`` and the dashboard's ``GET /dashboard/data``; every one needs
``Authorization: Bearer <token>``.

Roles (:data:`~frontierbo.po.service.curator.ACCESS`): a *modeler* calls ``/release``,
``/query`` and ``/ledger`` (its own release, answers and ledger); a *viewer* calls
``/dashboard/data`` (every modeler's progress) and nothing else; both call ``/health``, which
shows the caller's own name, role and remaining budget (a viewer's is 0). The OpenAPI schema
(``/openapi.json``, ``/docs``) and the dashboard's page (``/dashboard``) are public: they hold
no data.

:class:`Gate` runs before routing and before any byte of a body is read, in this order; errors
are JSON ``{"detail": ...}``:

- **400**: a token in the URL (``?token=``, ``?access_token=`` or anything like ``fbo_...``),
  on every path: a URL is written to access logs, proxies and histories; send the header.
- **401** (with ``WWW-Authenticate: Bearer``): no token, an unknown or a revoked one, on every
  path but the public ones, whatever the body.
- **403**: a token whose role may not call the endpoint; from ``/query`` also a spent budget
  (with ``"remaining": 0``).
- **413**: a body over :data:`MAX_BODY_BYTES`, by its ``Content-Length`` before it is read, or
  counted while it is read (chunked).

Then **409** for a ``request_id`` reused for another row, and **422** for a body that is not a
JSON object of the schema (``row`` a JSON integer in ``[0, n − 1]``, at most 2**31 − 1 whatever
``n``; ``NaN`` and ``Infinity`` are refused). A 422 names the field and the rule, never the
value sent. Every refusal of a known token is audited by name; refusals without a valid token
are counted (:class:`~frontierbo.po.service.store.RefusalCounter`). Nothing here logs a header
or a token, and ``frontierbo curator serve`` strips the query string from uvicorn's access log
(:class:`AccessLogWithoutQuery`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from typing import Annotated
from urllib.parse import parse_qsl, unquote_plus

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, StrictInt
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException as StarletteHTTPException

from frontierbo.dashboard.routes import bearer_token
from frontierbo.po.service.curator import ACCESS, OTHER_PATH, CuratorService
from frontierbo.po.service.store import TOKEN_PREFIX

UNAUTHORISED = {"WWW-Authenticate": "Bearer"}
#: The largest row index the schema accepts (an SQLite integer, whatever the release's n).
MAX_ROW = 2**31 - 1


class QueryRequest(BaseModel):
    """``row``: the row index to answer; ``request_id``: optional idempotency key (a retry
    with the same key returns the first answer and is not charged again)."""

    model_config = ConfigDict(extra="forbid")
    row: StrictInt = Field(ge=0, le=MAX_ROW, description="0-based row index of the release")
    request_id: str | None = Field(default=None, min_length=1, max_length=200)


class QueryAnswer(BaseModel):
    row: int
    value: float
    request_id: str
    remaining: int
    replayed: bool


class Release(BaseModel):
    Z: list[list[float]]
    mechanism: str
    n: int
    features: int
    sense: str
    epsilon: float | None = None
    delta: float | None = None
    r: int | None = None
    noise_std: float | None = None
    privacy: str = Field(default="paper", description='"paper" or "end-to-end"')
    hyperparameters: dict | None = Field(default=None, description="public GP hyperparameters")
    bounds: dict | None = Field(default=None, description="public bounds (end-to-end mode)")
    answer_noise: dict | None = Field(default=None, description="the answers' Laplace noise")
    delta_slack: float | None = Field(default=None, description="advanced composition's slack")


class LedgerEntry(BaseModel):
    label: str
    guarantee: dict
    covers: str
    created_at: float


class Total(BaseModel):
    epsilon: float | None
    delta: float
    differentially_private: bool
    rule: str = Field(description='"basic", "advanced" or "non-private"')


class Ledger(BaseModel):
    entries: list[LedgerEntry]
    modeler: str
    budget: int
    used: int
    privacy: str
    session_total: Total = Field(description="this modeler's whole session (budget spent)")
    spent_so_far: Total
    curator_total: Total = Field(description="every modeler's budget with the release once")
    composition: str


class Health(BaseModel):
    status: str
    modeler: str = Field(description="the caller's name (a modeler's or a viewer's)")
    role: str = Field(description='"modeler" or "viewer"')
    remaining: int = Field(description="the caller's own remaining budget (a viewer's is 0)")


class Problem(BaseModel):
    detail: str | list
    remaining: int | None = None


def bearer(request: Request) -> str | None:
    """The token of ``Authorization: Bearer <token>``, or None."""
    return bearer_token(request.headers.get("authorization", ""))


Token = Annotated[str | None, Depends(bearer)]
ERRORS = {400: {"model": Problem}, 401: {"model": Problem}, 403: {"model": Problem},
          409: {"model": Problem}, 413: {"model": Problem}, 422: {"model": Problem}}  # fmt: skip


def _reply(status: int, body: dict):
    if status == 200:
        return body
    return JSONResponse(body, status_code=status, headers=UNAUTHORISED if status == 401 else None)


#: Paths anyone may read: the API's description and the dashboard's page, no data (its data,
#: /dashboard/data, needs a viewer's token).
PUBLIC_PATHS = ("/openapi.json", "/docs", "/docs/oauth2-redirect", "/redoc", "/dashboard")
#: The largest body accepted: a query is a few dozen bytes. A 9.5 MB body once held the event
#: loop for 34 s (JSON parsed in it) and came back echoed in a 10 MB 422.
MAX_BODY_BYTES = 64 * 1024
TOO_LARGE = f"the body is larger than {MAX_BODY_BYTES} bytes"
TOKEN_PARAMETERS = ("token", "access_token")
#: Where the gate leaves the caller's (name, role) for the error handlers' audit lines.
WHO = "frontierbo.curator.who"
#: Audit outcomes of the router's and the body reader's errors.
OUTCOMES = {400: "unreadable body", 404: "no such path", 405: "method not allowed",
            413: "body too large"}  # fmt: skip


def _audited_path(path: str, who) -> str:
    """The audit log's endpoint: a known caller's path, or for a request without a valid token
    a known path or OTHER_PATH (their counts are kept per endpoint, which must stay few)."""
    if who is not None:
        return path[:100]
    return path if path in ACCESS or path in PUBLIC_PATHS else OTHER_PATH


def token_in_url(scope) -> bool:
    """Whether the path or the query string carries something like a token."""
    query = unquote_plus(scope.get("query_string", b"").decode("latin-1"))
    names = {name.lower() for name, _ in parse_qsl(query, keep_blank_values=True)}
    return (
        TOKEN_PREFIX in query
        or TOKEN_PREFIX in scope["path"]
        or bool(names & set(TOKEN_PARAMETERS))
    )


class Gate:
    """Pure ASGI middleware: the checks of the module doc that need no body (400, 401, 403,
    413 by ``Content-Length``), then the app with a ``receive`` that counts the body's bytes
    (413 past :data:`MAX_BODY_BYTES`, for a chunked body without ``Content-Length``)."""

    def __init__(self, app, service: CuratorService):
        self.app, self.service = app, service

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        path = scope["path"]
        if token_in_url(scope):  # before anything else: not even the token is looked at
            await run_in_threadpool(
                self.service.record, None, _audited_path(path, None), "token in the URL", 400
            )
            detail = ("never put a token in a URL (it is written to logs): send it as the "
                      "header Authorization: Bearer <token>")  # fmt: skip
            return await JSONResponse({"detail": detail}, 400)(scope, receive, send)
        who = None
        if path not in PUBLIC_PATHS:
            token = bearer_token(Headers(scope=scope).get("authorization", ""))
            status, body, who = await run_in_threadpool(self.service.admit, token, path)
            if status != 200:
                headers = UNAUTHORISED if status == 401 else None
                return await JSONResponse(body, status, headers)(scope, receive, send)
            scope[WHO] = who
        length = Headers(scope=scope).get("content-length", "")
        if length.isdigit() and int(length) > MAX_BODY_BYTES:
            name = None if who is None else who[0]
            await run_in_threadpool(
                self.service.record, name, _audited_path(path, who), "body too large", 413
            )
            return await JSONResponse({"detail": TOO_LARGE}, 413)(scope, receive, send)
        seen = 0

        async def counted():
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > MAX_BODY_BYTES:  # FastAPI re-raises an HTTPException from the body read
                raise HTTPException(413, TOO_LARGE)
            return message

        await self.app(scope, counted, send)


def _safe_errors(errors) -> list[dict]:
    """pydantic's errors without the value sent: "input" (a 10 MB string, or a NaN that JSON
    cannot hold: a 500) and "ctx" and "url" go; the field (names cut to 64 characters) and the
    rule stay."""
    return [
        {"loc": [p[:64] if isinstance(p, str) else p for p in e.get("loc", ())],
         "msg": str(e.get("msg", "")), "type": str(e.get("type", ""))}
        for e in errors
    ]  # fmt: skip


def create_app(service: CuratorService) -> FastAPI:
    @contextlib.asynccontextmanager
    async def lifespan(_app):
        async def flush_every_window():
            while True:
                await asyncio.sleep(service.refusals.window)
                await run_in_threadpool(service.flush_refusals)

        flusher = asyncio.create_task(flush_every_window())
        try:
            yield
        finally:
            flusher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await flusher
            service.flush_refusals()

    app = FastAPI(
        title="frontierbo curator",
        summary="PO-GP-UCB's curator: a private dataset's release and its outputs by row index",
        version="1",
        lifespan=lifespan,
    )
    app.add_middleware(Gate, service=service)

    def audit(request: Request, outcome: str, status: int) -> None:
        who = request.scope.get(WHO)
        path = _audited_path(request.url.path, who)
        service.record(None if who is None else who[0], path, outcome, status)

    @app.exception_handler(RequestValidationError)
    def invalid_body(request: Request, exc: RequestValidationError):
        audit(request, "invalid body", 422)
        return JSONResponse({"detail": _safe_errors(exc.errors())}, status_code=422)

    @app.exception_handler(StarletteHTTPException)  # the router's 404 and 405 too
    def http_error(request: Request, exc: StarletteHTTPException):
        audit(request, OUTCOMES.get(exc.status_code, f"HTTP {exc.status_code}"), exc.status_code)
        headers = getattr(exc, "headers", None)
        return JSONResponse({"detail": exc.detail}, status_code=exc.status_code, headers=headers)

    @app.get("/health", response_model=Health, responses=ERRORS)
    def health(token: Token):
        """For a modeler or a viewer: the caller's own name, role and remaining budget."""
        return _reply(*service.health(token))

    @app.get("/release", response_model=Release, responses=ERRORS)
    def release(token: Token):
        """The released matrix Z (row i is the image of private row i) and the public release
        parameters; never the private inputs. Modelers only."""
        return _reply(*service.release(token))

    @app.post("/query", response_model=QueryAnswer, responses=ERRORS)
    def query(body: QueryRequest, token: Token):
        """The output for one row index (charged once per request_id). Modelers only."""
        return _reply(*service.query(token, body.row, body.request_id))

    @app.get("/ledger", response_model=Ledger, responses=ERRORS)
    def ledger(token: Token):
        """The privacy guarantees spent and what each covers, and this modeler's budget.
        Modelers only."""
        return _reply(*service.ledger(token))

    from frontierbo.dashboard.routes import add_dashboard
    from frontierbo.po.service.dashboard import CuratorSnapshot

    add_dashboard(
        app,
        CuratorSnapshot(service.store, service.served),
        lambda token: service.store.role(token) == "viewer",  # the gate has checked it already
        title="frontierbo curator",
    )
    return app


class AccessLogWithoutQuery(logging.Filter):
    """For the ``uvicorn.access`` logger: its lines print the path with the query string, so a
    token put in a URL by mistake would be written to the log (the gate refuses such a request,
    after uvicorn has logged it). Keep the path only, and mask anything like a token in it."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple) and len(record.args) == 5:  # uvicorn's access line
            args = list(record.args)
            args[2] = str(args[2]).partition("?")[0]
            record.args = tuple(
                re.sub(TOKEN_PREFIX + r"\S*", TOKEN_PREFIX + "...", a) if isinstance(a, str) else a
                for a in args
            )
        return True
