"""The curator's HTTP API (FastAPI): ``GET /health``, ``GET /release``, ``POST /query``,
``GET /ledger``; every one needs ``Authorization: Bearer <token>``.

The OpenAPI schema (``/openapi.json``, ``/docs``) is public: it describes the API and holds no
data. Errors are JSON ``{"detail": ...}``: 401 without a valid token (with
``WWW-Authenticate: Bearer``), 403 when the budget is spent (with ``remaining``), 409 for a
``request_id`` reused for another row, 422 for a body that is not JSON or a row that is not an
integer in range. Nothing here logs a header or a token; uvicorn's access log has the method,
path and status only.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, FastAPI, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, StrictInt
from starlette.concurrency import run_in_threadpool

from frontierbo.dashboard.routes import bearer_token
from frontierbo.po.service.curator import CuratorService

UNAUTHORISED = {"WWW-Authenticate": "Bearer"}


class QueryRequest(BaseModel):
    """``row``: the row index to answer; ``request_id``: optional idempotency key (a retry
    with the same key returns the first answer and is not charged again)."""

    model_config = ConfigDict(extra="forbid")
    row: StrictInt = Field(ge=0, description="0-based row index of the release")
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
    modeler: str
    remaining: int


class Problem(BaseModel):
    detail: str | list
    remaining: int | None = None


def bearer(request: Request) -> str | None:
    """The token of ``Authorization: Bearer <token>``, or None."""
    return bearer_token(request.headers.get("authorization", ""))


Token = Annotated[str | None, Depends(bearer)]
ERRORS = {401: {"model": Problem}, 403: {"model": Problem}, 409: {"model": Problem},
          422: {"model": Problem}}  # fmt: skip


def _reply(status: int, body: dict):
    if status == 200:
        return body
    return JSONResponse(body, status_code=status, headers=UNAUTHORISED if status == 401 else None)


#: Paths anyone may read: the API's description and the dashboard's page, no data (its data,
#: /dashboard/data, needs a viewer's token).
PUBLIC_PATHS = ("/openapi.json", "/docs", "/docs/oauth2-redirect", "/redoc", "/dashboard")


def create_app(service: CuratorService) -> FastAPI:
    app = FastAPI(
        title="frontierbo curator",
        summary="PO-GP-UCB's curator: a private dataset's release and its outputs by row index",
        version="1",
    )

    @app.middleware("http")
    async def authenticate(request: Request, call_next):
        # before routing and before the body is read: no token, no answer (not even a 422)
        if request.url.path not in PUBLIC_PATHS:
            ok = await run_in_threadpool(service.check_token, bearer(request), request.url.path)
            if not ok:
                return JSONResponse(
                    {"detail": "missing, unknown or revoked token"},
                    status_code=401,
                    headers=UNAUTHORISED,
                )
        return await call_next(request)

    @app.get("/health", response_model=Health, responses=ERRORS)
    def health(token: Token):
        return _reply(*service.health(token))

    @app.get("/release", response_model=Release, responses=ERRORS)
    def release(token: Token):
        """The released matrix Z (row i is the image of private row i) and the public release
        parameters; never the private inputs."""
        return _reply(*service.release(token))

    @app.post("/query", response_model=QueryAnswer, responses=ERRORS)
    def query(body: QueryRequest, token: Token):
        """The output for one row index (charged once per request_id)."""
        return _reply(*service.query(token, body.row, body.request_id))

    @app.get("/ledger", response_model=Ledger, responses=ERRORS)
    def ledger(token: Token):
        """The privacy guarantees spent and what each covers, and this modeler's budget."""
        return _reply(*service.ledger(token))

    from frontierbo.dashboard.routes import add_dashboard
    from frontierbo.po.service.dashboard import CuratorSnapshot

    add_dashboard(
        app,
        CuratorSnapshot(service.store, service.served),
        lambda token: service.store.role(token) == "viewer",  # modelers must not see each other
        title="frontierbo curator",
    )
    return app
