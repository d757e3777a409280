"""The modeler's side over HTTP: :class:`HTTPCurator` is a transport with the in-process
:class:`~frontierbo.po.po_gp_ucb.Curator`'s interface (``query(index) -> y``), and
:func:`run_modeler` is PO-GP-UCB's modeler (Algorithm 2, the study sampler ``po-gp-ucb``)
against it, resumable.

Resuming: the modeler's state is a study in ``out/modeler.db`` (the released ``Z`` and every
query it told), and each query carries ``request_id = <session>-<trial>``. A modeler killed
after sending a query and before recording its answer finds the trial pending when it restarts
and sends the same request again; the curator answers it from its own records without charging
the budget again. So a crash loses nothing and spends nothing twice.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path

import numpy as np


class BudgetExhaustedError(RuntimeError):
    """The curator refuses further queries from this modeler (its budget is spent)."""


class CuratorError(RuntimeError):
    """The curator cannot be reached, or refuses this modeler's token: one line saying which."""


#: Seconds a modeler with no session yet retries an unreachable curator (a mistyped URL or a
#: curator not started says so quickly); a session's later calls retry for ``retry_for``.
FIRST_CONTACT_RETRY = 5.0


class HTTPCurator:
    """The curator at ``url`` with ``token``; connection failures are retried for
    ``retry_for`` seconds (a curator restarting), answers are never re-charged."""

    def __init__(self, url: str, token: str, *, timeout: float = 30.0, retry_for: float = 60.0,
                 on_retry=None):  # fmt: skip
        import httpx

        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise ValueError(f"url (--url) must start with http:// or https://, got {url!r}")
        if not token or not isinstance(token, str):
            raise ValueError(
                "token must be a non-empty string (the curator's add-modeler prints it)"
            )
        self.url = url.rstrip("/")
        self.retry_for = float(retry_for)
        #: ``on_retry(message)`` when a call starts retrying (e.g. a line on standard error)
        self.on_retry = on_retry
        self._http = httpx.Client(
            base_url=self.url, timeout=timeout, headers={"Authorization": f"Bearer {token}"}
        )
        self._errors = (httpx.TransportError,)

    def close(self) -> None:
        self._http.close()

    def _call(self, method: str, path: str, **kwargs) -> dict:
        deadline = time.monotonic() + self.retry_for
        pause = 0.05
        while True:
            try:
                response = self._http.request(method, path, **kwargs)
                break
            except self._errors as exc:
                if time.monotonic() > deadline:
                    raise CuratorError(
                        f"the curator at {self.url} is unreachable ({_reason(exc)}; retried for "
                        f"{self.retry_for:g} s): is `frontierbo curator serve` running there?"
                    ) from None
                if pause == 0.05 and self.on_retry is not None:
                    self.on_retry(
                        f"the curator at {self.url} does not answer ({_reason(exc)}); retrying "
                        f"for up to {self.retry_for:g} s"
                    )
                time.sleep(pause)
                pause = min(2 * pause, 2.0)
        try:
            body = response.json()
        except ValueError:
            raise CuratorError(
                f"{self.url} answered {response.status_code} without JSON: is it a curator?"
            ) from None
        if response.status_code == 200:
            return body
        detail = body.get("detail")
        if response.status_code == 401:
            raise CuratorError(
                f"the curator at {self.url} refused the token ({detail}): use the token that "
                "`frontierbo curator add-modeler` printed for you"
            )
        if response.status_code == 403 and "remaining" in body:
            raise BudgetExhaustedError(f"the curator refused the query: {detail}")
        if response.status_code == 403:  # a viewer's token: not a modeler's
            raise CuratorError(f"the curator at {self.url} refused the token: {detail}")
        raise ValueError(f"the curator answered {response.status_code}: {detail}")

    def release(self) -> dict:
        """The release: ``Z`` as an array and the public parameters."""
        body = self._call("GET", "/release")
        body["Z"] = np.asarray(body["Z"], dtype=float)
        return body

    def query(self, index: int, request_id: str | None = None) -> float:
        """The output for row ``index`` (the in-process Curator's interface)."""
        body = {"row": int(index)}
        if request_id is not None:
            body["request_id"] = request_id
        return float(self._call("POST", "/query", json=body)["value"])

    def ledger(self) -> dict:
        return self._call("GET", "/ledger")


def _reason(exc: Exception) -> str:
    text = str(exc).strip() or type(exc).__name__
    return "connection refused" if "refused" in text.lower() else text


def modeler_settings(release: dict) -> dict:
    """The ``po-gp-ucb`` sampler's settings for a release: the curator's public
    hyperparameters when it serves them (made noise-aware for the Gaussian release, and with the
    answers' Laplace variance added to the noise in the end-to-end mode); else none (the
    modeler learns them from its answers)."""
    hyper = release.get("hyperparameters")
    if not hyper:
        return {}
    settings = dict(hyper)
    noise = release.get("answer_noise")
    if noise:
        settings["noise_variance"] += 2.0 * noise["laplace_scale"] ** 2
    if release.get("noise_std"):
        settings["release_noise_std"] = release["noise_std"]
    return settings


def run_modeler(url: str, token: str, iterations: int, out, seed: int = 0, on_retry=None) -> dict:
    """Query ``iterations`` rows in all (``--queries``; the initial design included), choosing
    them with the ``po-gp-ucb`` study sampler on the release; resumes from ``out``; writes
    ``out/result.json``. The session in ``out`` is saved only once the curator has answered
    (a wrong URL or token leaves nothing behind); ``on_retry(message)`` hears of retries."""
    from frontierbo._validation import check_int
    from frontierbo.io import write_json_atomic
    from frontierbo.study import create_study

    iterations = check_int(iterations, "iterations (--queries)", low=1)
    out = Path(out)
    session_file = out / "session.json"
    if session_file.exists():
        session = json.loads(session_file.read_text())
        if session["url"] != url:
            raise ValueError(
                f"--out {str(out)!r} holds a session with {session['url']}, not {url}: use "
                "another --out for another curator"
            )
    else:
        session = None
    retry = 60.0 if session is not None else FIRST_CONTACT_RETRY
    curator = HTTPCurator(url, token, retry_for=retry, on_retry=on_retry)
    try:
        release = curator.release()
        curator.retry_for = 60.0  # contact made: a curator restarting is waited for
        if session is None:  # saved only now: a failed first contact leaves no session
            out.mkdir(parents=True, exist_ok=True)
            session = {"session": uuid.uuid4().hex, "url": url}
            tmp = session_file.with_suffix(".tmp")
            tmp.write_text(json.dumps(session))
            os.replace(tmp, session_file)
        study = create_study(
            release["Z"], storage=out / "modeler.db", algorithm="po-gp-ucb", name="modeler",
            settings=modeler_settings(release), seed=seed, direction="maximize",
            load_if_exists=True,
        )  # fmt: skip
        stopped = None
        for trial in [t for t in study.trials if t.state == "pending"]:  # a crash's leftovers
            study.tell(trial, curator.query(trial.row, f"{session['session']}-{trial.number}"))
        while sum(t.state == "complete" for t in study.trials) < iterations:
            trial = study.ask()
            try:
                value = curator.query(trial.row, f"{session['session']}-{trial.number}")
            except BudgetExhaustedError as exc:
                stopped = str(exc)
                break
            study.tell(trial, value)
    finally:
        curator.close()
    done = [t for t in study.trials if t.state == "complete"]
    best = max(done, key=lambda t: t.value) if done else None
    result = {
        "url": url,
        "session": session["session"],
        "queries": len(done),
        "rows": [t.row for t in done],
        "values": [t.value for t in done],
        "best": None if best is None else {"row": best.row, "value": best.value},
        "stopped": stopped,
        "release": {k: v for k, v in release.items() if k != "Z"},
    }
    write_json_atomic(out / "result.json", result)
    return result
