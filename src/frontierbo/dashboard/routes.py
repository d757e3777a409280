"""The dashboard's two routes, for any FastAPI app.

``GET {prefix}`` is the page: static HTML and script, no data, so it may be public. ``GET
{prefix}/data`` is ``snapshot()`` as JSON for a request whose ``Authorization: Bearer`` token
``authorise`` accepts, else 401. The page reads its token from the URL's fragment
(``#token=...``), which a browser never sends to a server, so it appears in no access log, and
polls the data every ``interval`` ms (``?interval=``, default 1000).

The snapshot (every key but ``title`` and ``updated_at`` optional)::

    {"title": str, "updated_at": float,
     "series": [{"name", "x": [...], "y": [...]}],   # best value so far vs evaluations
     "regret": [{"name", "x", "y"}],                 # simple regret, when known
     "points": {"x": [...], "y": [...],              # 2-D projection of every candidate row
                "queried": [{"name", "index": [int]}]},
     "budgets": [{"name", "budget", "used", "remaining"}],
     "ledger": [{"label", "epsilon", "delta", "covers"}],
     "audit": [{"at", "modeler", "endpoint", "row", "outcome", "status"}]}
"""

# no `from __future__ import annotations`: FastAPI reads the route's annotations at runtime,
# and `Request` is imported inside add_dashboard (FastAPI is optional).
from collections.abc import Callable
from importlib import resources

PAGE = "index.html"


def page_html(title: str) -> str:
    text = resources.files("frontierbo.dashboard").joinpath("static", PAGE).read_text("utf-8")
    from html import escape

    return text.replace("{{TITLE}}", escape(title))


def _bearer(header: str) -> str | None:
    scheme, _, token = header.partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


def add_dashboard(
    app,
    snapshot: Callable[[], dict],
    authorise: Callable[[str | None], bool],
    prefix: str = "/dashboard",
    title: str = "frontierbo",
) -> None:
    """Add ``GET {prefix}`` (the page) and ``GET {prefix}/data`` (the snapshot, for tokens
    ``authorise`` accepts) to the FastAPI ``app`` (module doc)."""
    from fastapi import Request
    from fastapi.responses import HTMLResponse, JSONResponse

    from frontierbo.io import finite_or_null

    html = page_html(title)

    @app.get(prefix, response_class=HTMLResponse, include_in_schema=False)
    def dashboard_page():
        return HTMLResponse(html, headers={"Cache-Control": "no-store"})

    @app.get(prefix + "/data", include_in_schema=False)
    def dashboard_data(request: Request):
        if not authorise(_bearer(request.headers.get("authorization", ""))):
            return JSONResponse(
                {"detail": "missing or refused token (open the page as .../dashboard#token=...)"},
                status_code=401,
                headers={"WWW-Authenticate": "Bearer"},
            )
        return JSONResponse(finite_or_null(snapshot()), headers={"Cache-Control": "no-store"})
