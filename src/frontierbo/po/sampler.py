"""PO-GP-UCB's modeler (Algorithm 2) as a study sampler: ``algorithm="po-gp-ucb"``.

The modeler of the outsourced protocol holds only the curator's release ``Z``; in a study the
candidates *are* ``Z`` (create the study from the released matrix) and every tell is the
curator's answer for the asked row index. What makes it Algorithm 2 rather than plain GP-UCB:

* one isotropic kernel on ``Z`` as released (no per-column scaling: the release's distances are
  what the curator's transform preserves; all of ``Z`` is divided by one constant, its largest
  column range, so that the MAP priors see unit-sized inputs), the paper's squared exponential
  by default;
* line 3's ``beta_t = 2 log(n t^2 pi^2 / (6 delta'))``, ``delta' = 0.025``
  (docs/decisions.md#po-gp-ucb-delta-prime-is-half-of-delta_ucb), with ``t`` counting the UCB
  rounds after the initial design (as ``POGPUCBModeler`` does);
* the curator's public hyperparameters when it hands them over (``lengthscale``,
  ``signal_variance``, ``noise_variance``, ``prior_mean``: in the units of ``Z`` and of the
  outputs), made noise-aware for the Gaussian release with ``release_noise_std``
  (:func:`~frontierbo.po.gaussian_release.noise_aware_hyperparameters`); without them the
  modeler learns one lengthscale from its own queries (MAP, as every study sampler does), so
  nothing beyond ``Z`` and the answers is used.

Parallel modelers (several workers on one study) get GP-BUCB's pending-row rule of the base
sampler.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from frontierbo._validation import check_positive, check_real
from frontierbo.po.gaussian_release import noise_aware_hyperparameters
from frontierbo.study.samplers import GPUCBSampler, History, SuggestContext, common_scale

#: delta' of Algorithm 2, line 3: delta_ucb / 2 as in Theorem 3 of the paper
#: (docs/decisions.md#po-gp-ucb-delta-prime-is-half-of-delta_ucb).
DELTA_PRIME = 0.025
_PUBLIC = ("lengthscale", "signal_variance", "noise_variance")


@dataclass(frozen=True)
class POGPUCBSampler(GPUCBSampler):
    """Algorithm 2 over the released ``Z`` (the study's candidates); see the module doc."""

    kernel: str = "se"
    ard: bool = False
    scaling: str = "common"
    beta: float | str = "srinivas"
    delta: float = DELTA_PRIME
    #: the curator's public GP hyperparameters (all three, or none: then learned by MAP)
    lengthscale: float | None = None
    signal_variance: float | None = None
    noise_variance: float | None = None
    prior_mean: float = 0.0
    #: std of the Gaussian release's noise on Z (its ``noise_std``): makes the public
    #: hyperparameters noise-aware; None for the random-projection release
    release_noise_std: float | None = None
    name: str = field(default="po-gp-ucb", init=False)

    def __post_init__(self):
        super().__post_init__()
        given = [k for k in _PUBLIC if getattr(self, k) is not None]
        if given and len(given) != len(_PUBLIC):
            missing = sorted(set(_PUBLIC) - set(given))
            raise ValueError(
                f"public hyperparameters: give all of {_PUBLIC} or none; missing {missing}"
            )
        for k in given:
            check_positive(getattr(self, k), k)
        check_real(self.prior_mean, "prior_mean")
        if self.release_noise_std is not None:
            check_positive(self.release_noise_std, "release_noise_std")
            if not given:
                raise ValueError("release_noise_std adjusts public hyperparameters: give them too")
        if self.ard:
            raise ValueError("ard must be false: Algorithm 2 has one lengthscale on Z")

    def round(self, h: History) -> int:
        """Line 2's t counts the UCB rounds only: the initial design is not part of T."""
        return h.rows.size + h.pending.size + 1 - self.initial_trials(h.candidates.shape[1])

    def hyperparameters(self, X, h: History, context: SuggestContext) -> dict:
        if self.lengthscale is None:
            return super().hyperparameters(X, h, context)
        hyper = {
            "lengthscale": self.lengthscale,
            "signal_variance": self.signal_variance,
            "noise_variance": self.noise_variance,
        }
        if self.release_noise_std is not None:
            hyper = noise_aware_hyperparameters(
                self.lengthscale, self.signal_variance, self.noise_variance,
                self.release_noise_std, X.shape[1],
            )  # fmt: skip
        # raw output units: the base sampler's standardisation is undone exactly; the
        # lengthscale in the units of the scaled inputs
        factor = common_scale(h.candidates) if self.scaling == "common" else 1.0
        return {
            "variance": hyper["signal_variance"],
            "lengthscale": [hyper["lengthscale"] / factor],
            "noise_variance": hyper["noise_variance"],
            "mean": 0.0,
            "y_mean": self.prior_mean,
            "y_std": 1.0,
            "observations": int(h.rows.size),
        }
