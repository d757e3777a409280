"""The curator's end-to-end private mode (``--privacy end-to-end``): everything that leaves the
curator is covered by one ledger.

In the paper's mode the release ``Z`` is (epsilon, delta)-DP but three things are not covered:
the column ranges and maximum row norm used to scale the rows (read off the data), GP
hyperparameters fitted on the raw data, and the answers (sent in the clear). Here:

* **Public scaling.** The curator takes public bounds for every feature and for the target
  (:func:`read_bounds`). A row is clipped to the feature bounds, mapped to ``[-1/2, 1/2]`` per
  column by the bounds' midpoints and widths, and multiplied by ``2 * 25 / sqrt(d)`` so that
  every row has norm at most 25, the paper's preprocessing bound. The map uses public constants
  only and acts on each row alone, so the Gaussian release of the scaled rows keeps its
  guarantee for the records themselves.
* **Hyperparameters.** Either public ones (``--hyperparameters``, served with the release) or
  none: the modelers then learn them from their own (noisy) answers, which are covered.
* **Noisy answers** (:class:`AnswerNoise`): each answer is the row's target clipped to its
  bounds plus discrete Laplace noise of scale ``(high - low) / answer_epsilon``, exactly
  ``answer_epsilon``-DP for a change of that row's target anywhere within the bounds. A retried
  request returns the stored answer (post-processing, no new cost); every *charged* answer is a
  new release.

**What one modeler's session costs** (:func:`session_ledger`), by basic sequential composition
(which holds for adaptively chosen queries): ``epsilon_release + budget * answer_epsilon`` and
``delta_release``, for neighbouring datasets that differ in one record, whose features move by at
most 1 in L2 norm after the public scaling (the paper's Definition 1) and whose target moves
anywhere within its bounds. The curator-wide total, for modelers who pool what they learn, sums
every modeler's answers once with the release once.
"""

from __future__ import annotations

import math
import os

import numpy as np

from frontierbo.dp.accounting import PrivacyGuarantee, advanced_composition, basic_composition

#: Row norm bound of the paper's preprocessing, kept by the public scaling.
MAX_NORM = 25.0
PRIVACIES = ("paper", "end-to-end")


def read_bounds(path, features: list[str], target: str) -> dict[str, tuple[float, float]]:
    """``column,low,high`` rows (header row first) for every feature and the target."""
    from frontierbo.io import read_table

    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"--bounds {path!r} does not exist")
    header, rows, lines = read_table(path, "--bounds")
    if [h.strip().lower() for h in header] != ["column", "low", "high"]:
        raise ValueError(f"--bounds {path!r} must have the header column,low,high, got {header}")
    bounds = {}
    for row, line in zip(rows, lines, strict=True):
        name = row[0].strip()
        try:
            low, high = float(row[1]), float(row[2])
        except ValueError:
            raise ValueError(
                f"--bounds {path!r} line {line}: low and high must be numbers"
            ) from None
        if not (math.isfinite(low) and math.isfinite(high) and low < high):
            raise ValueError(f"--bounds {path!r} line {line}: need finite low < high for {name!r}")
        bounds[name] = (low, high)
    missing = [c for c in [*features, target] if c not in bounds]
    if missing:
        raise ValueError(
            f"--bounds {path!r} has no bounds for {missing} (every feature and the target)"
        )
    return bounds


def public_scaling(X_raw: np.ndarray, lows: np.ndarray, highs: np.ndarray) -> np.ndarray:
    """Rows clipped to the bounds, centred and scaled by public constants to norm <= 25."""
    d = X_raw.shape[1]
    unit = (np.clip(X_raw, lows, highs) - (lows + highs) / 2) / (highs - lows)  # in [-1/2, 1/2]
    return unit * (2 * MAX_NORM / math.sqrt(d))


class AnswerNoise:
    """Clip a target value to ``[low, high]`` and add exact discrete Laplace noise: each answer
    is ``epsilon``-DP for its row's target (fresh OS entropy per answer)."""

    def __init__(self, epsilon: float, low: float, high: float):
        from frontierbo.dp.mechanisms import LaplaceMechanism

        self.low, self.high = float(low), float(high)
        self.mechanism = LaplaceMechanism(
            self.high - self.low,
            epsilon,
            neighbouring="one record's target changes anywhere within its public bounds "
            f"[{self.low:g}, {self.high:g}]",
        )
        self.epsilon = float(epsilon)
        #: None: fresh OS entropy per answer (deployment); tests may set a seeded Generator
        self.rng = None

    def answer(self, value: float) -> float:
        clipped = np.array([min(max(value, self.low), self.high)])
        return float(self.mechanism.randomise(clipped, self.rng)[0])

    def guarantee(self) -> PrivacyGuarantee:
        return self.mechanism.guarantee()


def session_ledger(release: list[dict], answer_epsilon: float | None, budget: int, used: int,
                   all_budgets: int, delta_slack: float | None = None) -> dict:  # fmt: skip
    """The totals of ``GET /ledger``: this modeler's whole session (its budget spent in full),
    what it has spent so far, and the curator-wide total over every modeler's budget.

    Basic composition by default; with ``delta_slack`` each total is the smaller of the basic
    and the advanced (Dwork-Rothblum-Vadhan) bound, the advanced one paying ``delta_slack``
    more delta (:func:`frontierbo.dp.accounting.advanced_composition`); ``rule`` says which."""
    release_g = [_guarantee(e["guarantee"]) for e in release]

    def total(answers: int) -> dict:
        eps = [g.epsilon for g in release_g] + [answer_epsilon or 0.0] * (
            answers if answer_epsilon else 0
        )
        dels = [g.delta for g in release_g] + [0.0] * (len(eps) - len(release_g))
        if any(not g.differentially_private for g in release_g):
            eps_total, delta_total, rule = math.inf, 1.0, "non-private"
        elif delta_slack is None or not eps:
            (eps_total, delta_total), rule = basic_composition(
                [PrivacyGuarantee(e, d, "part", "record") for e, d in zip(eps, dels, strict=True)]
            ), "basic"  # fmt: skip
        else:
            result = advanced_composition(eps, dels, delta_slack)
            (eps_total, delta_total), rule = result, result.rule
        finite = math.isfinite(eps_total)
        return {"epsilon": eps_total if finite else None, "delta": delta_total,
                "differentially_private": finite, "rule": rule}  # fmt: skip

    return {
        "session_total": total(budget),
        "spent_so_far": total(used),
        "curator_total": total(all_budgets),
        "composition": "basic (sequential, adaptive queries allowed)"
        if delta_slack is None
        else f"the smaller of basic and advanced composition (delta slack {delta_slack:g}); "
        "both allow adaptive queries",
    }


def _guarantee(d: dict) -> PrivacyGuarantee:
    eps = d["epsilon"]
    if eps is None or not math.isfinite(eps):
        return PrivacyGuarantee.none(d["mechanism"], "not differentially private")
    return PrivacyGuarantee(eps, d["delta"], d["mechanism"], d["neighbouring"])
