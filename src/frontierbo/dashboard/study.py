"""The dashboard's snapshot of a study database (``frontierbo dashboard --storage study.db``).

Read fresh at every call, since other processes may be asking and telling: best value so far
(the study's direction) against told trials, every candidate row on a 2-D projection (computed
once per candidate set) with the rows asked so far, and the last trials as audit lines (ask or
tell, row, state and value). A study has no budgets or ledger.
"""

from __future__ import annotations

import time

from frontierbo.dashboard.projection import pca2

AUDIT_LINES = 50


class StudySnapshot:
    """``snapshot()`` of the study ``name`` in ``storage`` (the only one when ``name`` is None)."""

    def __init__(self, storage, name: str | None = None):
        self.storage, self.name = storage, name
        self._projection: tuple[str, list, list] | None = None

    def __call__(self) -> dict:
        from frontierbo.study import load_study

        study = load_study(storage=self.storage, name=self.name)
        try:
            trials = study.trials
            best = study.best_so_far().tolist()
            if self._projection is None or self._projection[0] != study.candidates_sha256:
                p = pca2(study.candidates)
                self._projection = (study.candidates_sha256, p[:, 0].tolist(), p[:, 1].tolist())
        finally:
            study.storage.close()
        _, px, py = self._projection
        audit = []
        for t in sorted(trials, key=lambda t: max(t.asked_at, t.told_at or 0))[-AUDIT_LINES:]:
            told = t.state == "complete"
            audit.append({
                "at": t.told_at if told else t.asked_at, "modeler": study.name,
                "endpoint": "tell" if told else "ask", "row": t.row,
                "outcome": f"value {t.value:g}" if told else "pending", "status": 200,
            })  # fmt: skip
        return {
            "title": f"study {study.name!r} ({study.algorithm}, {study.direction})",
            "updated_at": time.time(),
            "series": [{"name": study.name, "x": list(range(1, len(best) + 1)), "y": best}],
            "points": {"x": px, "y": py,
                       "queried": [{"name": study.name, "index": [t.row for t in trials]}]},
            "audit": audit[::-1],
        }  # fmt: skip


def study_snapshot(storage, name: str | None = None) -> dict:
    """One snapshot of the study (see :class:`StudySnapshot`)."""
    return StudySnapshot(storage, name)()
