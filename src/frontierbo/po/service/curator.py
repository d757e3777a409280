"""The curator's side of the outsourced protocol as a service, independent of HTTP.

:func:`prepare` reads the private table and makes the release exactly once per database (a
restart serves the stored release: the privacy budget is never spent twice).
:class:`CuratorService` answers the four requests of the protocol, each in one database
transaction that authenticates the token, checks its role (:data:`ACCESS`) and the budget,
answers and appends the audit line together (see :mod:`frontierbo.po.service.store`). It
returns ``(status, body)`` pairs; the web layer (:mod:`frontierbo.po.service.app`) only maps
them to HTTP.
"""

from __future__ import annotations

import json
import math
import os
import secrets
import time
from dataclasses import dataclass

import numpy as np

from frontierbo.data import file_sha256
from frontierbo.po.service.privacy import (
    PRIVACIES,
    AnswerNoise,
    public_scaling,
    read_bounds,
    session_ledger,
)
from frontierbo.po.service.store import (
    CuratorStore,
    RefusalCounter,
    StoreError,
    log,
    token_sha256,
)

MECHANISMS = ("random-projection", "gaussian")
#: Release parameters a modeler may see (never the data-dependent ones such as singular values).
PUBLIC_INFO = ("epsilon", "delta", "r", "noise_std")
DENIED = "missing, unknown or revoked token"
#: Who may call what. A modeler reads its own release, answers and ledger; a viewer reads the
#: dashboard's data (every modeler's progress) and nothing that is a modeler's; both may call
#: /health, which shows the caller's own budget only (a viewer has none).
ACCESS = {
    "/health": ("modeler", "viewer"),
    "/release": ("modeler",),
    "/query": ("modeler",),
    "/ledger": ("modeler",),
    "/dashboard/data": ("viewer",),
}
#: The audit log's endpoint for an unauthenticated request to any other path (the counted
#: refusals are kept per endpoint: arbitrary paths must not make the counter grow).
OTHER_PATH = "(other path)"
#: Release settings newer than the first service, with the value a database made before had.
ADDED_SETTINGS = {"privacy": "paper", "bounds": None, "answer_epsilon": None,
                  "hyperparameters": None, "delta_slack": None}  # fmt: skip


@dataclass(frozen=True)
class Served:
    """What the service holds in memory: the release, the values it answers with, and (in the
    end-to-end private mode) the noise each answer gets."""

    Z: np.ndarray
    public: dict
    values: np.ndarray
    noise: AnswerNoise | None = None

    def answer(self, row: int) -> float:
        value = float(self.values[row])
        return value if self.noise is None else self.noise.answer(value)


def forbidden(role: str, endpoint: str) -> str:
    why = ("the dashboard shows every modeler's queries: it needs a viewer's token"
           if role == "modeler" else "a viewer reads the dashboard's data only")  # fmt: skip
    return f"a {role}'s token may not call {endpoint} ({why})"


def prepare(store: CuratorStore, data, target: str, *, features=None, minimize: bool = False,
            mechanism: str = "gaussian", epsilon: float = 1.0, delta: float = 1e-5,
            r: int | None = None, privacy: str = "paper", bounds=None,
            answer_epsilon: float | None = None, hyperparameters=None,
            delta_slack: float | None = None) -> Served:  # fmt: skip
    """Load the private table; make and store the release if this database has none, else
    check that the data and the settings are the ones it was made from.

    ``privacy="end-to-end"`` (:mod:`frontierbo.po.service.privacy`) needs the Gaussian release,
    ``bounds`` (a ``column,low,high`` CSV for every feature and the target) and
    ``answer_epsilon``, and may take ``delta_slack`` (the ledger's totals then use advanced
    composition where it is smaller); ``hyperparameters`` (a JSON file of public GP
    hyperparameters) is served with the release in either mode."""
    from frontierbo.po.userdata import load_csv_problem

    if mechanism not in MECHANISMS:
        raise ValueError(f"mechanism (--mechanism) must be one of {MECHANISMS}, got {mechanism!r}")
    if privacy not in PRIVACIES:
        raise ValueError(f"privacy (--privacy) must be one of {PRIVACIES}, got {privacy!r}")
    X_raw, y, names = load_csv_problem(data, target, features, minimize)
    public_hyper = _read_hyperparameters(hyperparameters)
    scaling = noise = None
    if privacy == "end-to-end":
        scaling, noise = _end_to_end(X_raw, names, target, minimize, mechanism, bounds,
                                     answer_epsilon)  # fmt: skip
    elif bounds is not None or answer_epsilon is not None or delta_slack is not None:
        raise ValueError(
            "--bounds, --answer-epsilon and --delta-slack belong to --privacy end-to-end"
        )
    if delta_slack is not None:
        from frontierbo._validation import check_probability

        delta_slack = check_probability(delta_slack, "delta_slack (--delta-slack)")
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
        "privacy": privacy,
        "bounds": None if scaling is None else {k: list(v) for k, v in scaling.items()},
        "answer_epsilon": None if noise is None else noise.epsilon,
        "hyperparameters": public_hyper,
        "delta_slack": delta_slack,
    }
    sha = file_sha256(data)
    stored = store.release()
    if stored is not None:
        _check_same(stored, sha, config, data)
        return Served(stored["Z"], stored["public"], y, noise)
    Z, public, ledger = _release(X_raw, names, target, mechanism, epsilon, delta, r, scaling,
                                 noise)  # fmt: skip
    public = {**public, "features": len(names), "n": int(X_raw.shape[0]),
              "sense": "-" + target if minimize else target, "privacy": privacy,
              "hyperparameters": public_hyper, "delta_slack": delta_slack,
              "answer_noise": None if noise is None else {
                  "epsilon": noise.epsilon, "laplace_scale": noise.mechanism.scale}}  # fmt: skip
    store.save_release(sha, config, Z, public, ledger)
    return Served(Z, public, y, noise)


def _check_same(stored: dict, sha: str, config: dict, data) -> None:
    if stored["data_sha256"] != sha:
        raise StoreError(
            f"--data {os.fspath(data)!r} is not the file this database's release was made "
            f"from (sha256 {stored['data_sha256'][:12]}..., now {sha[:12]}...): a release is "
            "made once; use a new --db for new data"
        )
    # settings added after a database was made had their defaults then
    before = {**ADDED_SETTINGS, **stored["config"]}
    changed = {k for k in config if k != "data" and before.get(k) != config[k]}
    if changed:
        raise StoreError(
            f"the release in this database was made with other settings ({sorted(changed)}: "
            f"{ {k: before.get(k) for k in sorted(changed)} }); it is served as made, "
            "so start the curator with those settings or use a new --db"
        )


def _end_to_end(X_raw, names, target, minimize, mechanism, bounds, answer_epsilon):
    """The public bounds (the target's in the served sign) and the answers' noise."""
    if mechanism != "gaussian":
        raise ValueError("--privacy end-to-end needs --mechanism gaussian (the random "
                         "projection is not differentially private)")  # fmt: skip
    if bounds is None or answer_epsilon is None:
        raise ValueError("--privacy end-to-end needs --bounds and --answer-epsilon")
    from frontierbo._validation import check_positive

    answer_epsilon = check_positive(answer_epsilon, "answer_epsilon (--answer-epsilon)")
    limits = read_bounds(bounds, list(names), target)
    low, high = limits[target]
    if minimize:  # the served values are -target
        low, high = -high, -low
    scaling = {name: limits[name] for name in names}
    return scaling, AnswerNoise(answer_epsilon, low, high)


def _read_hyperparameters(path) -> dict | None:
    if path is None:
        return None
    if not os.path.isfile(path):
        raise FileNotFoundError(f"--hyperparameters {os.fspath(path)!r} does not exist")
    with open(path, encoding="utf-8") as fh:
        try:
            hyper = json.load(fh)
        except json.JSONDecodeError as exc:
            raise ValueError(f"--hyperparameters {os.fspath(path)!r} is not JSON: {exc}") from None
    keys = {"lengthscale", "signal_variance", "noise_variance"}
    if not isinstance(hyper, dict) or not keys <= set(hyper):
        raise ValueError(f"--hyperparameters must be a JSON object with {sorted(keys)} "
                         "(and optionally prior_mean)")  # fmt: skip
    for key in (*keys, "prior_mean"):
        if key in hyper and not (isinstance(hyper[key], int | float) and math.isfinite(hyper[key])):
            raise ValueError(f"--hyperparameters: {key} must be a finite number")
    return {k: float(hyper[k]) for k in (*sorted(keys), "prior_mean") if k in hyper}


def _release(X_raw, names, target, mechanism, epsilon, delta, r, scaling, noise):
    """The preprocessing (the paper's, or the public one) and the release, with fresh OS
    entropy (a seed known to anyone would let them redraw the noise)."""
    from frontierbo.po.gaussian_release import GaussianRowMechanism
    from frontierbo.po.problems.base import DEFAULT_MAX_NORM, preprocess_inputs
    from frontierbo.po.random_projection import RandomProjectionMechanism

    if scaling is None:
        span = np.ptp(X_raw, axis=0)
        inputs, _ = preprocess_inputs(X_raw, np.where(span > 0, span, 1.0), DEFAULT_MAX_NORM)
    else:
        lows, highs = (np.array([scaling[n][k] for n in names]) for k in (0, 1))
        inputs = public_scaling(X_raw, lows, highs)
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
    if scaling is None:
        covers = (
            "the released matrix Z, once, for every modeler. NOT covered: the column ranges and "
            "the maximum row norm used to scale the rows before the release (computed from the "
            "data), and the answers to queries (sent in the clear, as in the paper)"
        )
        return release.Z, public, [(mech.name, guarantee.as_dict(), covers)]
    public["bounds"] = {name: list(scaling[name]) for name in names}
    covers = (
        "the released matrix Z, once, for every modeler, including its preprocessing: rows "
        "clipped to the public --bounds and scaled by public constants to norm <= 25 (for "
        "neighbouring records whose scaled features differ by at most 1 in L2 norm)"
    )
    answers = (
        f"each charged answer: the row's {target} clipped to its public bounds plus discrete "
        f"Laplace noise of scale {noise.mechanism.scale:.6g} (epsilon {noise.epsilon:g} per "
        "answer; a retried request returns the stored answer at no cost)"
    )
    return (
        release.Z,
        public,
        [
            (mech.name, guarantee.as_dict(), covers),
            ("answers (per answer)", noise.guarantee().as_dict(), answers),
        ],
    )


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
        self.refusals = RefusalCounter(store)

    def _modeler(self, c, token: str | None):
        """(id, name, budget, used, role) of an active token, or None."""
        if not token:
            return None
        return c.execute(
            "SELECT id, name, budget, used, role FROM curator_modelers "
            "WHERE token_sha256 = ? AND revoked = 0",
            (token_sha256(token),),
        ).fetchone()

    def _check(self, c, token, endpoint: str, row=None):
        """``(modeler row, None)`` if ``token`` is active and its role may call ``endpoint``,
        else ``(None, (status, body))``, audited in the caller's transaction. (The web layer has
        refused such requests already; this is the same rule for callers of this class and for a
        token revoked in between.)"""
        m = self._modeler(c, token)
        if m is None:
            log(c, None, endpoint, row, "no token" if not token else "bad or revoked token", 401)
            return None, (401, {"detail": DENIED})
        if m[4] not in ACCESS[endpoint]:
            log(c, m[1], endpoint, row, f"refused to a {m[4]}", 403)
            return None, (403, {"detail": forbidden(m[4], endpoint)})
        return m, None

    def admit(self, token: str | None, endpoint: str) -> tuple[int, dict | None, tuple | None]:
        """Before a request is routed or its body read: ``(200, None, (name, role))``, or the
        refusal ``(401 or 403, body, None)``. ``endpoint`` is a path of :data:`ACCESS` or any
        other (then only authentication is checked; the router answers 404). An
        unauthenticated refusal is only counted (:class:`RefusalCounter`): a flood of bad tokens
        takes no write lock per request and adds a bounded number of audit lines."""
        caller = self.store.caller(token)
        if caller is None:
            outcome = "no token" if not token else "bad or revoked token"
            self.refusals.add(endpoint if endpoint in ACCESS else OTHER_PATH, outcome, 401)
            return 401, {"detail": DENIED}, None
        name, role = caller
        if endpoint in ACCESS and role not in ACCESS[endpoint]:
            self.record(name, endpoint, f"refused to a {role}", 403)
            return 403, {"detail": forbidden(role, endpoint)}, None
        return 200, None, (name, role)

    def record(self, name: str | None, endpoint: str, outcome: str, status: int) -> None:
        """Audit a refusal made outside the four requests (a body too large or invalid): one
        line for a known caller ``name``; counted like every unauthenticated refusal if None."""
        if name is None:
            self.refusals.add(endpoint, outcome, status)
            return
        with self.store.transaction() as c:
            log(c, name, endpoint[:100], None, outcome, status)

    def flush_refusals(self) -> None:
        """Write the unauthenticated refusals counted so far (the app calls this every few
        seconds and at shutdown)."""
        self.refusals.flush()

    def _read(self, token, endpoint: str, outcome: str):
        """Authenticate and audit a request that reads: ``(modeler row, None)`` or the
        refusal ``(None, (status, body))``."""
        with self.store.transaction() as c:
            m, refused = self._check(c, token, endpoint)
            if m is not None:
                log(c, m[1], endpoint, None, outcome, 200)
        return m, refused

    def health(self, token: str | None) -> tuple[int, dict]:
        """For a modeler or a viewer: its own name, role and remaining budget (a viewer has
        none), never another's."""
        m, refused = self._read(token, "/health", "ok")
        if refused:
            return refused
        return 200, {"status": "ok", "modeler": m[1], "role": m[4], "remaining": m[2] - m[3]}

    def release(self, token: str | None) -> tuple[int, dict]:
        m, refused = self._read(token, "/release", "released")
        if refused:
            return refused
        return 200, {"Z": self.served.Z.tolist(), **self.served.public}

    def ledger(self, token: str | None) -> tuple[int, dict]:
        m, refused = self._read(token, "/ledger", "ok")
        if refused:
            return refused
        entries = self.store.ledger()
        noise = self.served.noise
        release = [e for e in entries if not e["label"].startswith("answers")]
        all_budgets = sum(row["budget"] for row in self.store.modelers())
        totals = session_ledger(release, None if noise is None else noise.epsilon, m[2], m[3],
                                all_budgets, self.served.public.get("delta_slack"))  # fmt: skip
        return 200, {"entries": entries, "modeler": m[1], "budget": m[2], "used": m[3],
                     "privacy": self.served.public.get("privacy", "paper"), **totals}  # fmt: skip

    def query(self, token: str | None, row: int, request_id: str | None) -> tuple[int, dict]:
        """Answer row ``row``; a repeated ``request_id`` gets its first answer again, free."""
        with self.store.transaction() as c:
            m, refused = self._check(c, token, "/query", row)
            if refused:
                return refused
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
            value = self.served.answer(row)
            key = request_id if request_id is not None else "auto-" + secrets.token_hex(8)
            c.execute(
                "INSERT INTO curator_answers VALUES (?, ?, ?, ?, ?)",
                (mid, key, row, value, time.time()),
            )
            c.execute("UPDATE curator_modelers SET used = used + 1 WHERE id = ?", (mid,))
            log(c, name, "/query", row, "answered", 200)
        return 200, {"row": row, "value": value, "request_id": key,
                     "remaining": budget - used - 1, "replayed": False}  # fmt: skip
