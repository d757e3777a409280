"""The curator's live dashboard (``GET /dashboard``; data for viewer tokens only).

What the curator sees, and no modeler may: every modeler's best value so far (in the values it
was answered, noisy in the end-to-end mode), the rows each modeler has queried on a 2-D
projection of the released ``Z``, budgets, the ledger and the audit log; in the paper mode also
each modeler's simple regret against the table's true maximum (the curator's own view: it holds
the data, so it can score the queries exactly). In the end-to-end mode there is no regret:
nothing derived from the private values leaves the curator unless the ledger charges it, so a
viewer sees only what the modelers were told. The page (:mod:`frontierbo.dashboard`) holds no
data; its data endpoint needs the token of a *viewer* (``frontierbo curator add-viewer``), not a
modeler's: modelers must not see each other's queries.
"""

from __future__ import annotations

import time

import numpy as np

from frontierbo.dashboard.projection import pca2

AUDIT_LINES = 50


class CuratorSnapshot:
    """``snapshot()`` for :func:`frontierbo.dashboard.routes.add_dashboard`."""

    def __init__(self, store, served):
        self.store, self.served = store, served
        self.points = pca2(np.asarray(served.Z, dtype=float))  # once: the release never changes
        # the exact regret reads the private targets: shown in the paper mode only (module doc)
        paper = served.public.get("privacy", "paper") == "paper"
        self.best = float(np.max(served.values)) if paper else None

    def __call__(self) -> dict:
        modelers = [m for m in self.store.modelers() if m["role"] == "modeler"]
        series, regret, queried = [], [], []
        for m in modelers:
            answers = self.store.answers(m["name"])
            if not answers:
                continue
            rows = np.array([a["row"] for a in answers], dtype=int)
            told = np.maximum.accumulate([a["value"] for a in answers])
            x = list(range(1, len(answers) + 1))
            series.append({"name": m["name"], "x": x, "y": told.tolist()})
            queried.append({"name": m["name"], "index": rows.tolist()})
            if self.best is not None:
                true = np.maximum.accumulate(self.served.values[rows])
                regret.append({"name": m["name"], "x": x, "y": (self.best - true).tolist()})
        ledger = [
            {"label": e["label"], "epsilon": e["guarantee"]["epsilon"],
             "delta": e["guarantee"]["delta"], "covers": e["covers"]}
            for e in self.store.ledger()
        ]  # fmt: skip
        audit = self.store.audit(limit=AUDIT_LINES)[::-1]
        snapshot = {
            "title": "frontierbo curator",
            "updated_at": time.time(),
            "series": series,
            "points": {
                "x": self.points[:, 0].tolist(),
                "y": self.points[:, 1].tolist(),
                "queried": queried,
            },  # fmt: skip
            "budgets": [
                {k: m[k] for k in ("name", "budget", "used", "remaining")} for m in modelers
            ],  # fmt: skip
            "ledger": ledger,
            "audit": audit,
        }
        if self.best is not None:
            snapshot["regret"] = regret
        return snapshot
