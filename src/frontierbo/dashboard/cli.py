"""``frontierbo dashboard --storage study.db``: the live page of a study, on a local port.

A random token is made at every start and printed once, in the address's fragment
(``http://127.0.0.1:8050/dashboard#token=...``), which the browser keeps to itself: the page
sends it as a Bearer header, so no access log holds it. FastAPI and uvicorn are imported only
when the command runs (they are the optional ``[service]`` extra; ``frontierbo.cli`` imports
this module at every start).
"""

from __future__ import annotations

import argparse

from frontierbo.study.storage import default_storage

EXTRA = "pip install 'frontierbo[service]'"


def add_commands(top: argparse._SubParsersAction) -> None:
    dashboard = top.add_parser(
        "dashboard",
        help="a live page of a study: best so far, queried rows, trials",
        description="Serve a live dashboard of a study database on a local port. A random token "
        "is made at start; open the printed address (the token is in its #fragment, which the "
        "browser never sends to a server). The page refreshes every --interval ms.",
    )
    dashboard.add_argument(
        "--storage",
        default=default_storage(),
        help="the study database: a SQLite file or a URL (default $FRONTIERBO_STORAGE, else "
        "study.db)",
    )
    dashboard.add_argument("--name", default=None, help="the study (needed if there are several)")
    dashboard.add_argument("--host", default="127.0.0.1", help="address to listen on (127.0.0.1)")
    dashboard.add_argument("--port", type=int, default=8050, help="port (8050; 0: any free one)")
    dashboard.add_argument(
        "--interval", type=int, default=1000, metavar="MS", help="refresh period, ms (1000)"
    )
    dashboard.set_defaults(handler=_serve)


def _serve(args) -> str:
    import hmac
    import secrets

    from frontierbo._validation import check_int
    from frontierbo.dashboard.study import study_snapshot

    check_int(args.port, "--port", low=0, high=65535)
    interval = check_int(args.interval, "--interval (ms)", low=100)
    study_snapshot(args.storage, args.name)  # a missing or foreign database fails here, clearly
    try:
        import uvicorn
        from fastapi import FastAPI
    except ImportError as exc:
        raise ImportError(f"the dashboard needs FastAPI and uvicorn: {EXTRA} ({exc})") from None
    from frontierbo.dashboard.routes import add_dashboard

    sock = _listen(args.host, args.port)  # bound before the address is printed: it works
    token = secrets.token_urlsafe(24)
    app = FastAPI(title="frontierbo dashboard", docs_url=None, redoc_url=None, openapi_url=None)
    add_dashboard(
        app,
        lambda: study_snapshot(args.storage, args.name),
        lambda t: t is not None and hmac.compare_digest(t, token),
        title="frontierbo study",
    )
    host = f"[{args.host}]" if ":" in args.host else args.host
    query = "" if interval == 1000 else f"?interval={interval}"
    port = sock.getsockname()[1]
    print(f"dashboard: http://{host}:{port}/dashboard{query}#token={token}", flush=True)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    server.run(sockets=[sock])
    return ""


def _listen(host: str, port: int):
    """A socket bound to ``host:port``, or a ValueError naming the flag at fault."""
    import socket

    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except OSError as exc:
        raise ValueError(f"--host {host!r} is not an address of this machine ({exc})") from None
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # restart at once after a stop
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        raise ValueError(f"cannot listen on --host {host} --port {port}: {exc.strerror}") from None
    return sock
