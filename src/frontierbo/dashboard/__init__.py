"""A live page over a snapshot: best-so-far and regret curves, queried rows on a 2-D projection,
budgets, ledger and audit log (docs/dashboard.md). Plain HTML and a small script drawing SVG: no
build step, no network. :func:`~frontierbo.dashboard.routes.add_dashboard` puts it in any
FastAPI app; ``frontierbo dashboard --storage study.db`` serves it for a study."""
