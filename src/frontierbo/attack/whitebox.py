"""A white-box reference for the black-box tables: targeted PGD with the victim's gradients in
the same L_inf ball, range handling and success rule as the black-box attacks.

Not an attack of the thesis and not black-box: it reads the victim's gradients, which no
black-box attack may. It answers "how many instances can be reached at all?". A success is a
proof that the instance is feasible (the final input is checked by one query of the same
:class:`~frontierbo.attack.oracle.QueryOracle`); a failure is only evidence, since PGD is a
local method. The reproduction reports its ASR beside the black-box attacks, so a gap to the
thesis's ASR can be told apart from a weak attack (docs/bos2-attack.md, "Feasibility").

Projected sign-gradient ascent on y of (5.2) over the normalised full-resolution perturbation
``u in [-1, 1]^D`` (Madry et al. 2018), through the oracle's range mode: ``clip(x_0 +
delta_max u)`` or the reference code's ``(x_0 + delta_max u) / (1 + 2 delta_max)``. Starts:
``u = 0``, then uniform random ones; stops at the first ``u`` the victim classifies as the
target and submits it, else submits the best ``u`` seen. With ``side`` the ascent runs on a
``side x side x c`` latent field ``z`` and ``u = Up(z)``, the search space BOS² and BayesOpt use
(``benchmarks/attack_feasibility.py`` compares the sides).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from frontierbo._validation import check_int, check_real
from frontierbo.attack.oracle import TINY, QueryOracle
from frontierbo.attack.resize import interpolation_matrix, upsample


@dataclass(frozen=True)
class WhiteBoxPGD:
    """Targeted L_inf PGD on (5.2) with the gradients of ``victim`` (a
    :class:`~frontierbo.attack.victims.Victim`): ``steps`` sign steps of ``step_size`` (in units
    of ``u``) from each of ``starts`` starts. One oracle query per instance."""

    victim: object
    steps: int = 200
    step_size: float = 0.05
    starts: int = 2
    #: search a ``side x side x c`` latent field upsampled bilinearly (as BOS² does) instead of
    #: the full-resolution perturbation (None)
    side: int | None = None
    name: str = "pgd"

    def __post_init__(self):
        check_int(self.steps, "steps", low=1)
        check_real(self.step_size, "step_size", low=0.0)
        check_int(self.starts, "starts", low=1)
        if self.side is not None:
            check_int(self.side, "side", low=1)

    def attack(self, oracle: QueryOracle, rng: np.random.Generator, details: dict) -> None:
        import torch

        up = self._upsampler(oracle.x0.shape)
        shape = oracle.x0.shape if self.side is None else (self.side, self.side, oracle.x0.shape[2])
        z_best, y_best = np.zeros(shape), -np.inf
        for start in range(self.starts):
            z0 = np.zeros(shape) if start == 0 else rng.uniform(-1, 1, shape)
            with torch.enable_grad():
                z, y, hit = self._ascend(oracle, z0, up)
            if hit or y > y_best:
                z_best, y_best = z, y
            if hit:
                break
        details["white_box_objective"] = float(y_best)
        oracle(upsample(z_best, oracle.x0.shape) if self.side is not None else z_best)

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

    def _ascend(self, oracle: QueryOracle, z0: np.ndarray, up):
        import torch

        device = self.victim.device
        x0 = torch.tensor(np.array(oracle.x0), dtype=torch.float32, device=device)[None]
        u = torch.as_tensor(z0, dtype=torch.float32, device=device)[None].requires_grad_(True)
        best_u, best_y = z0, -np.inf
        for _ in range(self.steps + 1):
            x = self._input(oracle, x0, up(u))
            p = torch.softmax(self.victim.module_logits(x).double(), dim=1)[0]
            p_target = p[oracle.target]
            y = torch.log(p_target + TINY) - torch.log(p.sum() - p_target + TINY)  # (5.2)
            value = float(y.detach())
            if value > best_y:
                best_u, best_y = u.detach()[0].cpu().numpy().astype(float), value
            if int(torch.argmax(p)) == oracle.target:
                return best_u, best_y, True
            (grad,) = torch.autograd.grad(y, u)
            with torch.no_grad():
                u += self.step_size * grad.sign()
                u.clamp_(-1.0, 1.0)
        return best_u, best_y, False

    @staticmethod
    def _input(oracle: QueryOracle, x0, u):
        """:meth:`QueryOracle.input_for` in torch (lines 1-2 of spec §3.0)."""
        x = x0 + oracle.delta_max * u
        if oracle.range_mode == "clip":
            return x.clamp(oracle.lower, oracle.upper)
        return x / (1.0 + 2.0 * oracle.delta_max)
