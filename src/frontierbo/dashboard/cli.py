"""``frontierbo dashboard --storage study.db``: the live page for a study, on a local port."""

from __future__ import annotations

import argparse


def add_commands(top: argparse._SubParsersAction) -> None:
    dashboard = top.add_parser(
        "dashboard",
        help="a live page of a study: best so far, queried rows, trials",
        description="Serve a live dashboard of a study database on a local port. A random token "
        "is made at start; open the printed address (the token is in its #fragment, which the "
        "browser never sends to a server). The page refreshes every --interval ms.",
    )
    dashboard.add_argument("--storage", default="study.db", help="the study database (study.db)")
    dashboard.add_argument("--name", default=None, help="the study (needed if there are several)")
    dashboard.add_argument("--host", default="127.0.0.1", help="address to listen on (127.0.0.1)")
    dashboard.add_argument("--port", type=int, default=8050, help="port (8050)")
    dashboard.add_argument("--interval", type=int, default=1000, help="refresh, ms (1000)")
    dashboard.set_defaults(handler=_serve)


def _serve(args) -> str:
    import hmac
    import secrets

    from frontierbo._validation import check_int

    try:
        import uvicorn
        from fastapi import FastAPI
    except ImportError as exc:
        raise ImportError(
            f"the dashboard needs FastAPI and uvicorn: pip install 'frontierbo[service]' ({exc})"
        ) from None
    from frontierbo.dashboard.routes import add_dashboard
    from frontierbo.dashboard.study import StudySnapshot
    from frontierbo.study import load_study

    check_int(args.port, "port (--port)", low=0, high=65535)
    interval = check_int(args.interval, "interval (--interval)", low=100)
    load_study(storage=args.storage, name=args.name).storage.close()  # a clear error now
    token = secrets.token_urlsafe(24)
    app = FastAPI(title="frontierbo dashboard", docs_url=None, redoc_url=None, openapi_url=None)
    add_dashboard(
        app,
        StudySnapshot(args.storage, args.name),
        lambda t: t is not None and hmac.compare_digest(t, token),
        title="frontierbo study",
    )
    query = "" if interval == 1000 else f"?interval={interval}"
    print(f"dashboard: http://{args.host}:{args.port}/dashboard{query}#token={token}", flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return ""
