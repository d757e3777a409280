"""AutoZOOM-BiLIN (Tu et al. 2019, "AutoZOOM: autoencoder-based zeroth order optimization method
for attacking black-box neural networks"), a baseline of the thesis (Section 5.3), read
from the paper and the ``AutoZOOM_BiLIN`` class of ``IBM/Autozoom-Attack`` (``blackbox_attack.py``).

The C&W loss ``L`` of ZOO (:class:`~frontierbo.attack.baselines.zoo.CarliniWagnerLoss`) is
minimised over a reduced modifier ``z`` of shape ``(s, s, c)``; the image modifier is its
bilinear upsampling ``w = Up(z)`` (``align_corners=True``, as the reference's
``tf.image.resize_images``). One iteration:

    1  beta <- 1 / d'                         (d' = s^2 c; the reference's smoothing parameter)
    2  u_j ~ N(0, I_d'), u_j <- u_j / ||u_j||,  j = 1..q            (q = 1: num_rand_vec)
    3  query L(Up(z)) and L(Up(z + beta u_j))                                   (q + 1 queries)
    4  g <- (1/q) sum_j q (L(Up(z + beta u_j)) - L(Up(z))) u_j / beta      (paper eq. (5) with
       the reference's scale b = q, not the paper's b = d': Adam is invariant to it)
    5  Adam on all of z (lr 1e-2)
    6  stage-1 Adam reset and the c switch as in ZOO; after the first target hit at the
       centre, q <- ``q_after_success`` (the reference's ``post_success_setting``; 1 by default)

Like ZOO, it leaves the L_inf ball: success counts only inside it
(docs/decisions.md#bos-zoo-and-autozoom-succeed-only-inside-the-ball). At T = 900 it runs
450 iterations, fewer than the c switch's 1000.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from frontierbo._validation import check_int
from frontierbo.attack.baselines.zoo import (
    Adam,
    CarliniWagnerLoss,
    CarliniWagnerSchedule,
    check_cw_settings,
    record_trace,
)
from frontierbo.attack.oracle import QueryOracle
from frontierbo.attack.resize import upsample


@dataclass(frozen=True)
class AutoZoomBiLin:
    """AutoZOOM-BiLIN, targeted (module doc). Defaults of the AutoZOOM code
    (docs/decisions.md#bos-zoo-and-autozoom-defaults-from-the-autozoom-code): ``q = 1``, Adam
    ``lr = 1e-2``, ``initial_const = 1``, ``confidence = 0``, ``max_iterations = 1000``;
    ``use_tanh`` False on MNIST, True on CIFAR-10.

    ``side`` is the reduced side ``s`` (docs/decisions.md#bos-autozoom-reduced-side): ``None`` takes
    ``ceil(H / 2)`` (a 4x smaller space: 14 x 14 x 1 on MNIST, 16 x 16 x 3 on CIFAR-10). The
    reference's ``main.py`` leaves ``img_resize`` at the image size, i.e. no reduction; pass
    ``side=H`` for that.
    """

    name: str = "autozoom"
    use_tanh: bool = False
    side: int | None = None
    q: int = 1
    q_after_success: int = 1
    lr: float = 1e-2
    initial_const: float = 1.0
    confidence: float = 0.0
    switch_iterations: int = 1000
    max_iterations: int = 1000

    def __post_init__(self):
        if self.side is not None:
            check_int(self.side, "side", low=1)
        check_int(self.q, "q", low=1)
        check_int(self.q_after_success, "q_after_success", low=1)
        check_cw_settings(
            self.lr, self.initial_const, self.confidence, self.switch_iterations,
            self.max_iterations,
        )  # fmt: skip

    def attack(self, oracle: QueryOracle, rng: np.random.Generator, details: dict) -> None:
        try:
            self._run(oracle, rng, details)
        finally:
            record_trace(oracle, details)

    def _run(self, oracle: QueryOracle, rng: np.random.Generator, details: dict) -> None:
        shape = oracle.x0.shape
        if len(shape) != 3:
            raise ValueError(f"x0 must be an image (height, width, channels), got {shape}")
        side = self.side or -(-shape[0] // 2)
        loss = CarliniWagnerLoss(oracle, self.use_tanh, self.confidence)
        z = np.zeros((side, side, shape[2]))
        z_flat = z.reshape(-1)
        adam = Adam(z.size, self.lr)
        schedule = CarliniWagnerSchedule(adam, self.initial_const, self.switch_iterations)
        beta, q = 1.0 / z.size, self.q  # line 1
        details.update(side=side, iterations=0, const=schedule.const)
        for iteration in range(self.max_iterations):
            u = rng.normal(size=(q, z.size))
            u /= np.linalg.norm(u, axis=1, keepdims=True)  # line 2
            c = schedule.const
            centre, f, hit = loss(upsample(z, shape), c)  # line 3
            probes = [loss(upsample(z + beta * uj.reshape(z.shape), shape), c)[0] for uj in u]
            grad = np.mean(
                [q * (lj - centre) * uj / beta for lj, uj in zip(probes, u, strict=True)], axis=0
            )
            adam.step(z_flat, slice(None), grad)  # lines 4-5
            if schedule.after(iteration, f, hit, details):  # line 6
                details["first_hit_iteration"] = iteration
                q = self.q_after_success
            details.update(iterations=iteration + 1, loss=centre, loss_term=f)
            details["centre_linf"] = float(np.abs(loss.image(upsample(z, shape)) - oracle.x0).max())
