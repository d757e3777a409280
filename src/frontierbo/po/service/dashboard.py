"""The curator's live dashboard (``GET /dashboard``; data for viewer tokens only).

What the curator sees, and no modeler may: every modeler's best value so far (in the values it
was answered, noisy in the end-to-end mode), its simple regret against the table's true maximum
(the curator holds the data, so it can score the queries exactly), the rows each modeler has
queried on a 2-D projection of the released ``Z``, budgets, the ledger and the audit log. The
page (:mod:`frontierbo.dashboard`) holds no data; its data endpoint needs the token of a
*viewer* (``frontierbo curator add-viewer``), not a modeler's: modelers must not see each
other's queries.
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
        self.best = float(np.max(served.values))

    def __call__(self) -> dict:
        modelers = [m for m in self.store.modelers() if m["role"] == "modeler"]
        series, regret, queried = [], [], []
        for m in modelers:
            answers = self.store.answers(m["name"])
            if not answers:
                continue
            rows = np.array([a["row"] for a in answers], dtype=int)
            told = np.maximum.accumulate([a["value"] for a in answers])
            true = np.maximum.accumulate(self.served.values[rows])
            x = list(range(1, len(answers) + 1))
            series.append({"name": m["name"], "x": x, "y": told.tolist()})
            regret.append({"name": m["name"], "x": x, "y": (self.best - true).tolist()})
            queried.append({"name": m["name"], "index": rows.tolist()})
        ledger = [
            {"label": e["label"], "epsilon": e["guarantee"]["epsilon"],
             "delta": e["guarantee"]["delta"], "covers": e["covers"]}
            for e in self.store.ledger()
        ]  # fmt: skip
        audit = self.store.audit(limit=AUDIT_LINES)[::-1]
        return {
            "title": "frontierbo curator",
            "updated_at": time.time(),
            "series": series,
            "regret": regret,
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
