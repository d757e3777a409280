"""The curator's side of the outsourced protocol as a service, independent of HTTP.

:func:`prepare` reads the private table and makes the release exactly once per database (a
restart serves the stored release: the privacy budget is never spent twice).
:class:`CuratorService` answers the four requests of the protocol, each in one database
transaction that authenticates the token, checks the budget, answers and appends the audit
line together (see :mod:`frontierbo.po.service.store`). It returns ``(status, body)`` pairs; the
web layer (:mod:`frontierbo.po.service.app`) only maps them to HTTP.
"""

from __future__ import annotations

import hashlib
import math
import os
import secrets
import time
from dataclasses import dataclass

import numpy as np

from frontierbo.po.service.store import CuratorStore, StoreError, log, token_sha256

MECHANISMS = ("random-projection", "gaussian")
#: Release parameters a modeler may see (never the data-dependent ones such as singular values).
PUBLIC_INFO = ("epsilon", "delta", "r", "noise_std")
DENIED = "missing, unknown or revoked token"


@dataclass(frozen=True)
class Served:
    """What the service holds in memory: the release and the values it answers with."""

    Z: np.ndarray
    public: dict
    values: np.ndarray


def file_sha256(path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def prepare(store: CuratorStore, data, target: str, *, features=None, minimize: bool = False,
            mechanism: str = "gaussian", epsilon: float = 1.0, delta: float = 1e-5,
            r: int | None = None) -> Served:  # fmt: skip
    """Load the private table; make and store the release if this database has none, else
    check that the data and the settings are the ones it was made from."""
    from frontierbo.po.userdata import load_csv_problem

    if mechanism not in MECHANISMS:
        raise ValueError(f"mechanism (--mechanism) must be one of {MECHANISMS}, got {mechanism!r}")
    X_raw, y, names = load_csv_problem(data, target, features, minimize)
    config = {
        "data": os.path.basename(os.fspath(data)),
        "target": target,
        "features": list(names),
        "minimize": bool(minimize),
        "mechanism": mechanism,
        "epsilon": float(epsilon),
        "delta": float(delta),
        "r": None if r is None else int(r),
        "n": int(X_raw.shape[0]),
    }
    sha = file_sha256(data)
    stored = store.release()
    if stored is not None:
        if stored["data_sha256"] != sha:
            raise StoreError(
                f"--data {os.fspath(data)!r} is not the file this database's release was made "
                f"from (sha256 {stored['data_sha256'][:12]}..., now {sha[:12]}...): a release is "
                "made once; use a new --db for new data"
            )
        changed = {k for k in config if k != "data" and stored["config"].get(k) != config[k]}
        if changed:
            raise StoreError(
                f"the release in this database was made with other settings ({sorted(changed)}: "
                f"{ {k: stored['config'][k] for k in sorted(changed)} }); it is served as made, "
                "so start the curator with those settings or use a new --db"
            )
        return Served(stored["Z"], stored["public"], y)
    Z, public, ledger = _release(X_raw, mechanism, epsilon, delta, r)
    public = {**public, "features": len(names), "n": int(X_raw.shape[0]),
              "sense": "-" + target if minimize else target}  # fmt: skip
    store.save_release(sha, config, Z, public, ledger)
    return Served(Z, public, y)


def _release(X_raw, mechanism: str, epsilon: float, delta: float, r):
    """The paper's preprocessing and the release, with fresh OS entropy (a seed known to anyone
    would let them redraw the noise)."""
    from frontierbo.po.gaussian_release import GaussianRowMechanism
    from frontierbo.po.problems.base import DEFAULT_MAX_NORM, preprocess_inputs
    from frontierbo.po.random_projection import RandomProjectionMechanism

    span = np.ptp(X_raw, axis=0)
    inputs, _ = preprocess_inputs(X_raw, np.where(span > 0, span, 1.0), DEFAULT_MAX_NORM)
    if mechanism == "gaussian":
        mech = GaussianRowMechanism(epsilon, delta, r)
        mech.check_range(inputs.shape[1], DEFAULT_MAX_NORM)
    else:
        if r is None:
            raise ValueError("r (--r) is required for the random-projection release")
        mech = RandomProjectionMechanism(epsilon, delta, r)
    release = mech.release(inputs, np.random.default_rng())
    guarantee = mech.guarantee()
    public = {"mechanism": mechanism}
    public |= {k: _plain(release.info[k]) for k in PUBLIC_INFO if k in release.info}
    covers = (
        "the released matrix Z, once, for every modeler. NOT covered: the column ranges and the "
        "maximum row norm used to scale the rows before the release (computed from the data), "
        "and the answers to queries (sent in the clear, as in the paper)"
    )
    return release.Z, public, [(mech.name, guarantee.as_dict(), covers)]


def _plain(value):
    if isinstance(value, float | np.floating):
        return None if not math.isfinite(value) else float(value)
    if isinstance(value, np.integer):
        return int(value)
    return value


class CuratorService:
    """The protocol's four requests over a :class:`CuratorStore` (module doc)."""

    def __init__(self, store: CuratorStore, served: Served):
        self.store, self.served = store, served
        self.n = int(served.Z.shape[0])

    def _modeler(self, c, token: str | None):
        if not token:
            return None
        row = c.execute(
            "SELECT id, name, budget, used, revoked FROM curator_modelers WHERE token_sha256 = ?",
            (token_sha256(token),),
        ).fetchone()
        return None if row is None or row[4] else row

    def _authorised(self, c, token, endpoint: str, row=None):
        modeler = self._modeler(c, token)
        if modeler is None:
            outcome = "no token" if not token else "bad or revoked token"
            log(c, None, endpoint, row, outcome, 401)
        return modeler

    def check_token(self, token: str | None, endpoint: str) -> bool:
        """Whether ``token`` belongs to an active modeler; a failure is audited (the web layer
        calls this before it reads any body, so every unauthenticated request gets 401)."""
        known = token is not None and bool(
            self.store.read(
                "SELECT 1 FROM curator_modelers WHERE token_sha256 = ? AND revoked = 0",
                (token_sha256(token),),
            )
        )
        if not known:
            outcome = "no token" if not token else "bad or revoked token"
            with self.store.transaction() as c:
                log(c, None, endpoint[:100], None, outcome, 401)
        return known

    def _read(self, token, endpoint: str, outcome: str):
        """Authenticate and audit a request that reads: the modeler's row, or None (401)."""
        with self.store.transaction() as c:
            m = self._authorised(c, token, endpoint)
            if m is not None:
                log(c, m[1], endpoint, None, outcome, 200)
        return m

    def health(self, token: str | None) -> tuple[int, dict]:
        m = self._read(token, "/health", "ok")
        if m is None:
            return 401, {"detail": DENIED}
        return 200, {"status": "ok", "modeler": m[1], "remaining": m[2] - m[3]}

    def release(self, token: str | None) -> tuple[int, dict]:
        if self._read(token, "/release", "released") is None:
            return 401, {"detail": DENIED}
        return 200, {"Z": self.served.Z.tolist(), **self.served.public}

    def ledger(self, token: str | None) -> tuple[int, dict]:
        m = self._read(token, "/ledger", "ok")
        if m is None:
            return 401, {"detail": DENIED}
        return 200, {"entries": self.store.ledger(), "modeler": m[1], "budget": m[2], "used": m[3]}

    def query(self, token: str | None, row: int, request_id: str | None) -> tuple[int, dict]:
        """Answer row ``row``; a repeated ``request_id`` gets its first answer again, free."""
        with self.store.transaction() as c:
            m = self._authorised(c, token, "/query", row)
            if m is None:
                return 401, {"detail": DENIED}
            mid, name, budget, used = m[0], m[1], m[2], m[3]
            if request_id is not None:
                done = c.execute(
                    "SELECT row_index, value FROM curator_answers "
                    "WHERE modeler_id = ? AND request_id = ?",
                    (mid, request_id),
                ).fetchone()
                if done is not None:
                    if done[0] != row:
                        log(c, name, "/query", row, "request_id reused for another row", 409)
                        return 409, {"detail": f"request_id {request_id!r} was used for row "
                                     f"{done[0]}, not {row}"}  # fmt: skip
                    log(c, name, "/query", row, "replayed", 200)
                    return 200, {"row": row, "value": done[1], "request_id": request_id,
                                 "remaining": budget - used, "replayed": True}  # fmt: skip
            if not 0 <= row < self.n:
                log(c, name, "/query", row, "row out of range", 422)
                return 422, {"detail": f"row must be an integer in [0, {self.n - 1}], got {row}"}
            if used >= budget:
                log(c, name, "/query", row, "over budget", 403)
                return 403, {"detail": f"query budget of {budget} spent", "remaining": 0}
            value = float(self.served.values[row])
            key = request_id if request_id is not None else "auto-" + secrets.token_hex(8)
            c.execute(
                "INSERT INTO curator_answers VALUES (?, ?, ?, ?, ?)",
                (mid, key, row, value, time.time()),
            )
            c.execute("UPDATE curator_modelers SET used = used + 1 WHERE id = ?", (mid,))
            log(c, name, "/query", row, "answered", 200)
        return 200, {"row": row, "value": value, "request_id": key,
                     "remaining": budget - used - 1, "replayed": False}  # fmt: skip
