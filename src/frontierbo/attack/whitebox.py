"""A white-box reference for the black-box tables: targeted PGD with the victim's gradients in
the same L_inf ball, range handling and success rule as the black-box attacks.

Not an attack of the thesis and not black-box: it reads the victim's gradients, which no
black-box attack may. It answers "how many instances can be reached at all?". A success is a
proof that the instance is feasible (the final input is checked by one query of the same
:class:`~frontierbo.attack.oracle.QueryOracle`); a failure is only evidence, since PGD is a
local method. The reproduction reports its ASR beside the black-box attacks, so a gap to the
thesis's ASR can be told apart from a weak attack (docs/bos2-attack.md, "Feasibility").

Projected sign-gradient ascent (Madry et al. 2018) over the normalised full-resolution
perturbation ``u``, through the oracle's range mode: ``clip(x_0 + delta_max u)`` or the
reference code's ``(x_0 + delta_max u) / (1 + 2 delta_max)``. In clip mode ``u`` is projected
after every step (and at every random start) onto the box of perturbations that the clip leaves
alone, ``max(-1, (lower - x_0) / delta_max) <= u <= min(1, (upper - x_0) / delta_max)`` per
pixel, so the clip never zeroes a gradient: a pixel pushed past the image box would otherwise
get no gradient and stay there for good (most MNIST pixels sit at the box's edge). In rescale
mode nothing is clipped and ``u`` stays in ``[-1, 1]``.

Each start ascends one loss of ``losses``, in turn: ``"objective"``, y of (5.2);
``"ce"``, ``log p_target`` (the targeted cross-entropy); ``"margin"``, the logit margin
``z_target - max_{c != target} z_c`` (Carlini & Wagner 2017). The first ``len(losses)`` starts
begin at ``u = 0``, the rest at uniform random points of the box. The step size halves after
half and again after three quarters of the steps. The ascent stops at the first ``u`` the victim
classifies as the target and submits it, else submits the ``u`` of the highest y of (5.2) seen.

With ``side`` the ascent runs on a ``side x side x c`` latent field ``z in [-1, 1]`` and
``u = Up(z)``, the search space BOS² and BayesOpt use (``benchmarks/attack_feasibility.py``
compares the sides). ``Up`` mixes neighbouring pixels, so the clip's box is not a box in ``z``
and cannot be met by projecting ``z`` coordinate by coordinate: there ``z`` is kept in
``[-1, 1]`` and the gradient taken through the clip, so a coordinate whose pixels are all pushed
past the image box gets no gradient and stays. That is a limitation of the latent runs: a latent
failure is weaker evidence than a full-resolution one. (Passing the clip's gradient through as
the identity instead reached a subset of what this reaches, on the MNIST instances the earlier
PGD missed at side 18.)

``WhiteBoxPGD(victim, starts=2, losses=("objective",), project=False, decay=False)`` is the
earlier PGD, which kept ``u`` in ``[-1, 1]`` only and so froze every pixel pushed past the box.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from frontierbo._validation import check_int, check_real
from frontierbo.attack.oracle import TINY, QueryOracle
from frontierbo.attack.resize import interpolation_matrix, upsample

LOSSES = ("objective", "ce", "margin")


@dataclass(frozen=True)
class WhiteBoxPGD:
    """Targeted L_inf PGD with the gradients of ``victim`` (a
    :class:`~frontierbo.attack.victims.Victim`): ``starts`` starts of ``steps`` sign steps of
    ``step_size`` (in units of ``u``), each on one of ``losses`` in turn (module doc). One oracle
    query per instance."""

    victim: object
    steps: int = 200
    step_size: float = 0.05
    starts: int = 6
    losses: tuple[str, ...] = ("margin", "ce", "objective")
    #: clip mode: keep ``u`` in the box the clip leaves alone (module doc); False is the
    #: earlier PGD, which freezes pixels pushed past the image box
    project: bool = True
    #: halve the step after half and after three quarters of the steps
    decay: bool = True
    #: search a ``side x side x c`` latent field upsampled bilinearly (as BOS² does) instead of
    #: the full-resolution perturbation (None)
    side: int | None = None
    name: str = "pgd"

    def __post_init__(self):
        check_int(self.steps, "steps", low=1)
        check_real(self.step_size, "step_size", low=0.0)
        check_int(self.starts, "starts", low=1)
        losses = tuple(self.losses)
        if not losses or any(loss not in LOSSES for loss in losses):
            raise ValueError(f"losses must be a non-empty sequence of {LOSSES}, got {losses!r}")
        object.__setattr__(self, "losses", losses)
        if self.side is not None:
            check_int(self.side, "side", low=1)

    def attack(self, oracle: QueryOracle, rng: np.random.Generator, details: dict) -> None:
        import torch

        up = self._upsampler(oracle.x0.shape)
        low, high = self.bounds(oracle)
        z_best, y_best = np.zeros(low.shape), -np.inf
        for start in range(self.starts):
            z0 = np.zeros(low.shape) if start < len(self.losses) else rng.uniform(low, high)
            loss = self.losses[start % len(self.losses)]
            with torch.enable_grad():
                z, y, hit = self._ascend(oracle, z0, up, loss, low, high)
            if hit or y > y_best:
                z_best, y_best = z, y
            if hit:
                break
        details["white_box_objective"] = float(y_best)
        oracle(self._perturbation(z_best, oracle))

    def bounds(self, oracle: QueryOracle) -> tuple[np.ndarray, np.ndarray]:
        """The box PGD keeps its variable in: ``[-1, 1]`` for a latent field, in rescale mode
        and without ``project``; else, per pixel, the perturbations the clip leaves alone,
        ``[max(-1, (lower - x_0) / delta_max), min(1, (upper - x_0) / delta_max)]``."""
        if self.side is not None:
            shape = (self.side, self.side, oracle.x0.shape[2])
            return -np.ones(shape), np.ones(shape)
        if not self.project or oracle.range_mode != "clip":
            return -np.ones(oracle.x0.shape), np.ones(oracle.x0.shape)
        x0, delta = np.asarray(oracle.x0, dtype=float), oracle.delta_max
        low = np.maximum(-1.0, (oracle.lower - x0) / delta)
        high = np.minimum(1.0, (oracle.upper - x0) / delta)
        return np.minimum(low, 0.0), np.maximum(high, 0.0)

    def _perturbation(self, z: np.ndarray, oracle: QueryOracle) -> np.ndarray:
        """The oracle's ``u`` for the searched variable ``z``."""
        u = upsample(z, oracle.x0.shape) if self.side is not None else z
        return np.clip(u, -1.0, 1.0)

    def _upsampler(self, image_shape):
        """``z -> Up(z)`` in torch (identity at full resolution)."""
        import torch

        if self.side is None:
            return lambda z: z
        height, width, _ = image_shape
        kw = {"dtype": torch.float32, "device": self.victim.device}
        A_h = torch.tensor(interpolation_matrix(self.side, height), **kw)
        A_w = torch.tensor(interpolation_matrix(self.side, width), **kw)
        return lambda z: torch.einsum("hi,nijc,wj->nhwc", A_h, z, A_w)

    def _ascend(self, oracle: QueryOracle, z0: np.ndarray, up, loss: str, low, high):
        import torch

        device = self.victim.device
        kw = {"dtype": torch.float32, "device": device}
        x0 = torch.tensor(np.array(oracle.x0), **kw)[None]
        low_t, high_t = torch.tensor(low, **kw)[None], torch.tensor(high, **kw)[None]
        u = torch.as_tensor(z0, **kw)[None].requires_grad_(True)
        best_u, best_y = z0, -np.inf
        # projected onto the clip's box, x0 + delta u is clipped only by rounding, which must
        # not zero a gradient at the box's edge
        exact_box = self.project and self.side is None and oracle.range_mode == "clip"
        for step in range(self.steps + 1):
            x = self._input(oracle, x0, up(u), straight_through=exact_box)
            logits = self.victim.module_logits(x).double()[0]
            p = torch.softmax(logits, dim=0)
            p_target = p[oracle.target]
            y = torch.log(p_target + TINY) - torch.log(p.sum() - p_target + TINY)  # (5.2)
            value, current = float(y.detach()), u.detach()[0].cpu().numpy().astype(float)
            if int(torch.argmax(p)) == oracle.target and self._hits(oracle, current):
                return current, value, True
            if value > best_y:
                best_u, best_y = current, value
            if step == self.steps:
                break
            (grad,) = torch.autograd.grad(self._loss(loss, y, logits, oracle.target), u)
            with torch.no_grad():
                u += self._step(step) * grad.sign()
                torch.maximum(u, low_t, out=u)
                torch.minimum(u, high_t, out=u)
        return best_u, best_y, False

    def _hits(self, oracle: QueryOracle, z: np.ndarray) -> bool:
        """Whether the oracle's own input for ``z`` (float64, then the victim's float32) is
        classified as the target, so a success the float32 ascent saw is not lost to rounding
        at the decision boundary. Not a query: white-box."""
        x = oracle.input_for(self._perturbation(z, oracle))
        return int(np.argmax(self.victim.logits(x[None])[0])) == oracle.target

    def _step(self, step: int) -> float:
        """The step size of step ``step`` (0-based)."""
        if not self.decay or 2 * step < self.steps:
            return self.step_size
        return self.step_size * (0.25 if 4 * step >= 3 * self.steps else 0.5)

    @staticmethod
    def _loss(loss: str, objective, logits, target: int):
        """The ascended loss of one start (module doc)."""
        import torch

        if loss == "objective":
            return objective
        if loss == "ce":
            return torch.log_softmax(logits, dim=0)[target]
        others = torch.cat([logits[:target], logits[target + 1 :]])
        return logits[target] - others.max()

    @staticmethod
    def _input(oracle: QueryOracle, x0, u, straight_through: bool = False):
        """:meth:`QueryOracle.input_for` in torch (lines 1-2 of ``Q(u)`` in
        :mod:`~frontierbo.attack.oracle`). ``straight_through``:
        the clip's gradient is the identity (its value is unchanged)."""
        x = x0 + oracle.delta_max * u
        if oracle.range_mode == "clip":
            clipped = x.clamp(oracle.lower, oracle.upper)
            return x + (clipped - x).detach() if straight_through else clipped
        return x / (1.0 + 2.0 * oracle.delta_max)
