"""The dashboard's snapshot of a study database (``frontierbo dashboard --storage study.db``).

The study is loaded afresh at every call, since other processes may be asking and telling; its
trials are read once, so the curve, the circles and the log of one snapshot agree. It holds:

- ``series``: the best value so far (in the study's direction) against the number of told
  trials, as :meth:`~frontierbo.study.Study.best_so_far`;
- ``points``: every candidate row on :func:`~frontierbo.dashboard.projection.pca2`, with the rows
  of all trials, told or pending, as the study's ``queried``; a study over a search space has no
  rows: its trials' points, on the principal axes of a fixed seeded sample of the space;
- ``audit``: the last :data:`AUDIT_LINES` asks and tells, newest first (``modeler`` is the study's
  name, ``row`` the trial's row, ``outcome`` ``"trial N"`` (``", pending"`` while it is) for an
  ask and ``"value V"`` for a tell, ``status`` 200).

A study knows no optimum, budget or ledger, so there is no ``regret``, ``budgets`` or ``ledger``.
"""

from __future__ import annotations

import time

import numpy as np

from frontierbo.dashboard.projection import pca2

AUDIT_LINES = 50
#: Projections by candidates' sha256: the candidate set never changes, so one SVD per study.
_PROJECTIONS: dict[str, tuple[list, list]] = {}
_MAX_CACHED = 8
#: A search space's fixed axes by its sha256 (centre, (dims, 2) directions).
_SPACE_AXES: dict[str, tuple[np.ndarray, np.ndarray]] = {}


def study_snapshot(storage, name: str | None = None) -> dict:
    """The snapshot of the study ``name`` in ``storage`` (the only one when ``name`` is None)
    for :func:`~frontierbo.dashboard.routes.add_dashboard` (module doc)."""
    from frontierbo.study import load_study

    study = load_study(storage=storage, name=name)
    try:
        trials = study.trials
        if study.space is None:
            px, py = _projection(study.candidates, study.candidates_sha256)
            queried = [t.row for t in trials]
        else:  # no rows: the trials' own points, on axes fixed by the space
            px, py = _space_projection(study.space, np.array([t.x for t in trials]))
            queried = list(range(len(trials)))
    finally:
        study.storage.close()
    best = _best_so_far(trials, study.direction)
    return {
        "title": f"study {study.name!r} ({study.algorithm}, {study.direction})",
        "updated_at": time.time(),
        "series": [{"name": study.name, "x": list(range(1, len(best) + 1)), "y": best}],
        "points": {"x": px, "y": py, "queried": [{"name": study.name, "index": queried}]},
        "audit": _audit(trials, study.name),
    }


def _projection(candidates, sha: str) -> tuple[list, list]:
    if sha not in _PROJECTIONS:
        p = pca2(candidates)
        # five significant digits are far finer than a pixel and halve the JSON of every poll
        scale = np.abs(p).max()
        if scale > 0:
            p = np.round(p, int(4 - np.floor(np.log10(scale))))
        if len(_PROJECTIONS) >= _MAX_CACHED:
            _PROJECTIONS.pop(next(iter(_PROJECTIONS)))
        _PROJECTIONS[sha] = (p[:, 0].tolist(), p[:, 1].tolist())
    return _PROJECTIONS[sha]


def _space_projection(space, points: np.ndarray) -> tuple[list, list]:
    """The trials' encoded points on the two principal directions of a fixed sample of the
    space (its own seeded points, not the trials: the axes stay put as trials arrive)."""
    key = space.sha256
    if key not in _SPACE_AXES:
        rng = np.random.default_rng(0)
        sample = space.from_unit(rng.uniform(size=(512, space.n_params)))
        centre = sample.mean(axis=0)
        _, _, vt = np.linalg.svd(sample - centre, full_matrices=False)
        axes = np.zeros((space.dims, 2))
        for k in range(min(2, vt.shape[0])):
            lead = vt[k][np.argmax(np.abs(vt[k]))]
            axes[:, k] = vt[k] if lead >= 0 else -vt[k]
        _SPACE_AXES[key] = (centre, axes)
    if points.size == 0:
        return [], []
    centre, axes = _SPACE_AXES[key]
    p = np.round((points - centre) @ axes, 5)
    return p[:, 0].tolist(), p[:, 1].tolist()


def _best_so_far(trials, direction: str) -> list[float]:
    """``Study.best_so_far`` on the trials already read (told order; ties by number)."""
    done = sorted((t for t in trials if t.state == "complete"), key=lambda t: (t.told_at, t.number))
    values = np.array([t.value for t in done], dtype=float)
    best = np.maximum.accumulate if direction == "maximize" else np.minimum.accumulate
    return best(values).tolist() if values.size else []


def _audit(trials, name: str) -> list[dict]:
    events = [(t.asked_at, t, "ask") for t in trials]
    events += [(t.told_at, t, "tell") for t in trials if t.state == "complete"]
    events.sort(key=lambda e: (e[0], e[1].number, e[2] == "tell"))
    return [
        {"at": at, "modeler": name, "endpoint": endpoint, "row": t.row, "status": 200,
         "outcome": f"value {t.value:g}" if endpoint == "tell" else
                    f"trial {t.number}" + (", pending" if t.state == "pending" else "")}
        for at, t, endpoint in reversed(events[-AUDIT_LINES:])
    ]  # fmt: skip
