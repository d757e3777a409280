"""``frontierbo curator serve | add-modeler | revoke-modeler | modelers | audit`` and
``frontierbo modeler``: the outsourced protocol as two parties over HTTP (docs/service.md)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from frontierbo.flags import add_renamed

DB_HELP = "the curator's SQLite database (created on first use; default curator.db)"
EXTRA = "pip install 'frontierbo[service]'"


def _need_service_extra() -> None:
    try:
        import fastapi  # noqa: F401
        import httpx  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        raise ImportError(
            f"the curator service needs the [service] extra: {EXTRA} ({exc})"
        ) from None


def add_commands(top: argparse._SubParsersAction) -> None:
    curator = top.add_parser(
        "curator", help="serve a private table to modelers over HTTP (PO-GP-UCB's curator)"
    ).add_subparsers(dest="curator_command", required=True, metavar="ACTION")

    serve = curator.add_parser(
        "serve",
        help="release the table once and answer modelers' queries",
        description="Serve the curator: the release of --data (made once and stored in --db; "
        "a restart serves the same release and spends no more privacy), and each registered "
        "modeler's queries within its budget, every request authenticated and audited.",
    )
    serve.add_argument("--data", required=True, help="the private CSV file (header row)")
    serve.add_argument("--target", required=True, help="the column to optimise")
    serve.add_argument("--features", nargs="+", default=None, help="input columns (all others)")
    serve.add_argument(
        "--minimize", action="store_true", help="minimise the target (serve -target: modelers "
        "maximise)"
    )  # fmt: skip
    serve.add_argument(
        "--mechanism", choices=("gaussian", "random-projection"), default="gaussian",
        help="the release: gaussian ((epsilon, delta)-DP, default) or random-projection (the "
        "paper's Algorithm 1, NOT differentially private)",
    )  # fmt: skip
    serve.add_argument("--epsilon", type=float, required=True, help="privacy budget of the release")
    serve.add_argument(
        "--delta", type=float, required=True, help="privacy parameter delta of the release"
    )
    serve.add_argument(
        "--r", type=int, default=None, help="projection dimension (random-projection)"
    )
    serve.add_argument(
        "--privacy", choices=("paper", "end-to-end"), default="paper",
        help="paper: only the release is DP (the scaling reads the data, answers are exact); "
        "end-to-end: public --bounds for the scaling and noisy answers (--answer-epsilon), "
        "one ledger for everything that leaves the curator (docs/service.md)",
    )  # fmt: skip
    serve.add_argument(
        "--bounds", default=None,
        help="end-to-end: CSV column,low,high with public bounds of every feature and the target",
    )  # fmt: skip
    serve.add_argument(
        "--answer-epsilon", type=float, default=None,
        help="end-to-end: the privacy budget of each answer (Laplace noise)",
    )  # fmt: skip
    serve.add_argument(
        "--delta-slack", type=float, default=None,
        help="end-to-end: let the ledger's totals use advanced composition where it is smaller, "
        "at this much more delta (default: basic composition only)",
    )  # fmt: skip
    serve.add_argument(
        "--hyperparameters", default=None,
        help="JSON file of public GP hyperparameters served with the release (lengthscale, "
        "signal_variance, noise_variance[, prior_mean]); without it modelers learn their own",
    )  # fmt: skip
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (127.0.0.1)")
    serve.add_argument("--port", type=int, default=8000, help="port (8000)")
    serve.set_defaults(handler=_serve)

    add = curator.add_parser(
        "add-modeler", help="register a modeler; prints its token once",
        description="Register a modeler with a query budget. Its token is printed once and only "
        "its sha256 is stored: give it to the modeler (e.g. in a file only they can read).",
    )  # fmt: skip
    add.add_argument("name", help="the modeler's name (unique)")
    add.add_argument("--queries", type=int, required=True, help="its query budget")
    add.set_defaults(handler=_add)

    viewer = curator.add_parser(
        "add-viewer", help="register a dashboard viewer; prints its token once",
        description="A viewer's token reads the live dashboard (GET /dashboard/data: every "
        "modeler's progress, budgets, ledger, audit log) and has no query budget. Open "
        "http://HOST:PORT/dashboard#token=TOKEN in a browser.",
    )  # fmt: skip
    viewer.add_argument("name", help="the viewer's name (unique among modelers and viewers)")
    viewer.set_defaults(handler=_add_viewer)

    revoke = curator.add_parser("revoke-modeler", help="revoke a modeler's or viewer's token")
    revoke.add_argument("name")
    revoke.set_defaults(handler=_revoke)

    listing = curator.add_parser("modelers", help="the modelers, their budgets and use")
    listing.set_defaults(handler=_modelers)

    audit = curator.add_parser("audit", help="print the audit log (append-only)")
    audit.add_argument("--tail", type=int, default=None, help="only the last N lines")
    audit.add_argument("--json", action="store_true", help="JSON lines instead of a table")
    audit.set_defaults(handler=_audit)
    for action in (serve, add, viewer, revoke, listing, audit):
        action.add_argument("--db", default="curator.db", help=DB_HELP)

    modeler = top.add_parser(
        "modeler",
        help="run PO-GP-UCB's modeler against a curator service",
        description="Query a curator service with PO-GP-UCB's modeler (Algorithm 2 on the "
        "release). Its state lives in --out, so a modeler stopped or killed resumes where it "
        "was, and a query sent again is not charged twice.",
    )
    modeler.add_argument(
        "--url", required=True, help="URL of the curator, e.g. http://127.0.0.1:8000"
    )
    modeler.add_argument("--token-file", required=True, type=Path, help="file holding the token")
    modeler.add_argument(
        "--queries", type=int, required=True,
        help="query budget: rows queried in all, the initial design included",
    )  # fmt: skip
    add_renamed(modeler, "--iterations", "--queries", "rows queried in all")
    modeler.add_argument(
        "--out", type=Path, default=Path("modeler"), help="directory for the state and result.json"
    )
    modeler.add_argument("--seed", type=int, default=0, help="seed of the modeler's choices (0)")
    modeler.set_defaults(handler=_modeler)


def _store(db, create: bool = False):
    from frontierbo.po.service.store import CuratorStore

    return CuratorStore(db, create=create)


def _serve(args) -> str:
    _need_service_extra()
    import logging

    import uvicorn

    from frontierbo._validation import check_int
    from frontierbo.po.service.app import AccessLogWithoutQuery, create_app
    from frontierbo.po.service.curator import CuratorService, prepare

    check_int(args.port, "port (--port)", low=0, high=65535)
    store = _store(args.db, create=True)
    served = prepare(
        store, args.data, args.target, features=args.features, minimize=args.minimize,
        mechanism=args.mechanism, epsilon=args.epsilon, delta=args.delta, r=args.r,
        privacy=args.privacy, bounds=args.bounds, answer_epsilon=args.answer_epsilon,
        hyperparameters=args.hyperparameters, delta_slack=args.delta_slack,
    )  # fmt: skip
    app = create_app(CuratorService(store, served))
    print(
        f"curator: {served.Z.shape[0]} rows released ({served.public['mechanism']}, privacy "
        f"{served.public.get('privacy', 'paper')}); "
        f"serving on http://{args.host}:{args.port} (database {args.db}); dashboard: "
        f"http://{args.host}:{args.port}/dashboard#token=<a viewer's token>",
        flush=True,
    )
    config = uvicorn.Config(app, host=args.host, port=args.port, log_level="info")
    # after Config, which configures uvicorn's loggers: the access log prints no query string
    logging.getLogger("uvicorn.access").addFilter(AccessLogWithoutQuery())
    uvicorn.Server(config).run()
    return ""


def _add(args) -> str:
    from frontierbo._validation import check_int

    budget = check_int(args.queries, "queries (--queries)", low=0)
    token = _store(args.db, create=True).add_modeler(args.name, budget)
    return (
        f"{token}\n"
        f"(modeler {args.name!r}, {budget} queries: the token above is shown once and not stored)"
    )


def _add_viewer(args) -> str:
    token = _store(args.db, create=True).add_modeler(args.name, 0, role="viewer")
    return (
        f"{token}\n(viewer {args.name!r}: open http://HOST:PORT/dashboard#token=<the token "
        "above>; it is shown once and not stored)"
    )


def _revoke(args) -> str:
    _store(args.db).revoke_modeler(args.name)
    return f"revoked the token of modeler {args.name!r}"


def _modelers(args) -> str:
    from frontierbo.io import markdown_table

    rows = _store(args.db).modelers()
    body = [[m["name"], m["role"], str(m["budget"]), str(m["used"]), str(m["remaining"]),
             "yes" if m["revoked"] else "no"] for m in rows]  # fmt: skip
    return markdown_table(
        ["name", "role", "budget", "used", "remaining", "revoked"], body, "llrrrl"
    )


def _audit(args) -> str:
    import datetime

    from frontierbo.io import markdown_table

    lines = _store(args.db).audit(limit=args.tail)
    if args.json:
        return "\n".join(json.dumps(line) for line in lines)
    body = [
        [datetime.datetime.fromtimestamp(a["at"], datetime.UTC).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3],
         a["modeler"] or "-", a["endpoint"], "" if a["row"] is None else str(a["row"]),
         a["outcome"], str(a["status"])]
        for a in lines
    ]  # fmt: skip
    return markdown_table(["time (UTC)", "modeler", "endpoint", "row", "outcome", "status"], body,
                          "llllll")  # fmt: skip


def _modeler(args) -> str:
    _need_service_extra()
    from frontierbo.po.service.client import run_modeler

    if not args.token_file.is_file():
        raise FileNotFoundError(f"--token-file {str(args.token_file)!r} does not exist")
    token = args.token_file.read_text().strip().splitlines()[0].strip()

    def say(message: str) -> None:
        print(f"frontierbo: {message}", file=sys.stderr, flush=True)

    result = run_modeler(args.url, token, args.queries, args.out, seed=args.seed, on_retry=say)
    best = result["best"]
    lines = [
        f"modeler: {result['queries']} queries answered by {args.url}"
        + (f" (stopped: {result['stopped']})" if result["stopped"] else ""),
        "best: none" if best is None else f"best: row {best['row']}, value {best['value']:g}",
        f"written {json.dumps(str(args.out / 'result.json'))}",
    ]
    return "\n".join(lines)
