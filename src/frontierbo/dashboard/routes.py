"""The dashboard's two routes, for any FastAPI app.

``GET {prefix}`` is the page: static HTML and an inline script, no data, so it may be public.
``GET {prefix}/data`` is ``snapshot()`` as JSON for a request whose ``Authorization: Bearer``
token ``authorise`` accepts (``authorise(None)`` when there is none), else 401 ``{"detail":
...}`` with ``WWW-Authenticate: Bearer``. The page reads its token from the URL's fragment
(``#token=...``), which a browser never sends to a server, so it appears in no access log, and
polls the data every ``interval`` ms (``?interval=``, default 1000). The page's
Content-Security-Policy allows its own script and style only and no connection but to its
own origin: it can reach nothing else even if a value in the data were crafted.

The snapshot (every key but ``title`` and ``updated_at`` optional; docs/dashboard.md)::

    {"title": str, "updated_at": float,                      # Unix seconds
     "series": [{"name": str, "x": [num], "y": [num]}],      # best value so far vs evaluations
     "regret": [{"name": str, "x": [num], "y": [num]}],      # simple regret, when known
     "points": {"x": [num], "y": [num],                      # 2-D projection of every row
                "queried": [{"name": str, "index": [int]}]}, # rows queried, per name
     "budgets": [{"name": str, "budget": int, "used": int, "remaining": int}],
     "ledger": [{"label": str, "epsilon": float | None, "delta": float | None, "covers": str}],
     "audit": [{"at": float, "modeler": str | None, "endpoint": str, "row": int | None,
                "outcome": str, "status": int}]}             # newest first; 50 are shown

Non-finite numbers are sent as ``null``.
"""

# no `from __future__ import annotations`: FastAPI reads the route's annotations at runtime,
# and `Request` is imported inside add_dashboard (FastAPI is optional).
import base64
import hashlib
import re
from collections.abc import Callable
from html import escape
from importlib import resources

PAGE = "index.html"
UNAUTHORISED = {"WWW-Authenticate": "Bearer"}
NO_STORE = {"Cache-Control": "no-store"}


def page_html(title: str) -> str:
    """The page with ``title`` (escaped) in its heading."""
    text = resources.files("frontierbo.dashboard").joinpath("static", PAGE).read_text("utf-8")
    return text.replace("{{TITLE}}", escape(title))


def content_security_policy(html: str) -> str:
    """Only the page's own inline script and style (by sha256) run; fetches go to its origin."""

    def hashes(tag: str) -> str:
        bodies = re.findall(rf"<{tag}>(.*?)</{tag}>", html, flags=re.DOTALL)
        digests = (base64.b64encode(hashlib.sha256(b.encode()).digest()).decode() for b in bodies)
        return " ".join(f"'sha256-{d}'" for d in digests)

    return (
        f"default-src 'none'; script-src {hashes('script')}; style-src {hashes('style')}; "
        "connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; "
        "frame-ancestors 'none'"
    )


def bearer_token(header: str) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header value, or None."""
    scheme, _, token = header.partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


def _check_prefix(prefix) -> str:
    if not isinstance(prefix, str) or not re.fullmatch(r"(/[A-Za-z0-9._~-]+)+", prefix):
        raise ValueError(
            f"prefix must be a path like '/dashboard' (no trailing slash), got {prefix!r}"
        )
    return prefix


def add_dashboard(
    app,
    snapshot: Callable[[], dict],
    authorise: Callable[[str | None], bool],
    prefix: str = "/dashboard",
    title: str = "frontierbo",
) -> None:
    """Add to the FastAPI ``app``: ``GET {prefix}``, the HTML page (holds no data; may be
    public), and ``GET {prefix}/data``, the JSON of ``snapshot()`` when ``authorise(token)`` is
    True for the request's ``Authorization: Bearer <token>`` (token None when absent), else 401
    ``{"detail": ...}`` with ``WWW-Authenticate: Bearer``. The snapshot's schema is in the module
    doc; ``snapshot`` and ``authorise`` run in FastAPI's thread pool."""
    from fastapi import Request
    from fastapi.responses import HTMLResponse, JSONResponse

    from frontierbo.io import finite_or_null

    prefix = _check_prefix(prefix)
    if not callable(snapshot) or not callable(authorise):
        raise TypeError("snapshot and authorise must be callables")
    html = page_html(title)
    page_headers = {
        **NO_STORE,
        "Content-Security-Policy": content_security_policy(html),
        "Referrer-Policy": "no-referrer",
        "X-Content-Type-Options": "nosniff",
    }

    @app.get(prefix, response_class=HTMLResponse, include_in_schema=False)
    def dashboard_page():
        return HTMLResponse(html, headers=page_headers)

    @app.get(prefix + "/data", include_in_schema=False)
    def dashboard_data(request: Request):
        if not authorise(bearer_token(request.headers.get("authorization", ""))):
            return JSONResponse(
                {"detail": "missing or refused token (open the page as .../dashboard#token=...)"},
                status_code=401,
                headers=UNAUTHORISED,
            )
        return JSONResponse(finite_or_null(snapshot()), headers=NO_STORE)
