"""ZOO-ADAM (Chen et al. 2017, "ZOO: zeroth order optimization based black-box attacks"), the
targeted baseline of the thesis (Section 5.3), two ways:

* :class:`ZooAdam`: our reading of the paper and of the ``ZOO`` class of the AutoZOOM code
  (``IBM/Autozoom-Attack``, ``blackbox_attack.py``), which the thesis ran with its defaults.
* :class:`ArtZoo`: ART 1.20.1's ``ZooAttack`` on a ``BlackBoxClassifier``, as a cross-check.

ZOO minimises the C&W loss over an unconstrained modifier ``w`` (paper eq. (4), (7)):

    x(w) = clip(x_0 + w, lower, upper)                   (use_tanh=False, MNIST)
    x(w) = mid + half tanh(w + arctanh((x_0 - mid) / half))      (use_tanh=True, CIFAR-10)
    L(w) = ||x(w) - x_0||_2^2 + c max{max_{i != t} log F_i(x) - log F_t(x), -kappa}

    1  w <- 0; Adam state (M, v, epoch) <- (0, 0, 1)
    2  repeat (one iteration):
    3     draw B = 128 coordinates i_1..i_B without replacement
    4     query L(w) and L(w +- h e_{i_b}) for b = 1..B          (2B + 1 = 257 queries)
    5     g_b <- (L(w + h e_{i_b}) - L(w - h e_{i_b})) / 2h        (paper eq. (6), h = 1e-4)
    6     Adam on the coordinates i_b only (paper Alg. 2)
    7     the first time the loss term of L(w) hits 0: reset Adam (avoid overshoot, reference)
    8     every ``switch_iterations``: binary search on c (success halves, failure x10)

ZOO minimises the L2 distortion, not L_inf: its queries leave the L_inf ball. Success therefore
counts only for a query inside the ball (``QueryOracle.query_input``/``scores``); a target hit
outside it is logged and the attack goes on
(docs/decisions.md#bos-zoo-and-autozoom-succeed-only-inside-the-ball). At T = 900 ZOO runs 3.5
iterations and the c search (every 1000 iterations) is never reached; it is kept for fidelity.

ART's ``ZooAttack`` differs from the paper/reference in these ways (read in ART 1.20.1 source):

* its loss uses the classifier's raw outputs; our ``predict`` returns ``log(p + 1e-30)`` so that
  ``max(z_other - z_target + kappa, 0)`` is the paper's log loss;
* per iteration it queries the 2B probes, updates, then queries the *updated* point (2B + 1 as
  well, but the centre is after the step);
* it adds the whole modifier to the previous iterate (``x_adv <- x_adv + noise`` in
  ``_optimizer``, with ``noise`` the accumulated modifier), so after the first iteration its
  probes and centre are not at ``x_0 + w`` and its steps grow: the first iterations agree with
  :class:`ZooAdam` exactly (tested), the later ones move faster than the paper's ZOO;
* ``use_resize`` (start in 32x32, zoom by cubic splines) and ``use_importance`` are on by default
  and ``abort_early`` stops on a plateau: all three are off here, as in the reference on
  MNIST/CIFAR-10; ``initial_const`` defaults to 1e-3 (set to 1 here);
* no tanh space; its projection clips the *noise* to the clip values, not ``x``, so probes can
  leave the valid range: our ``predict`` clips rows to ``[lower, upper]`` as the reference's
  non-tanh modifier clamp does;
* the Adam state and perturbation are float32; it draws coordinates from the global
  ``np.random`` (seeded here from the attack's Generator, then restored);
* a normal return calls ``predict`` twice more (``compute_success`` in a log line); ``max_iter``
  defaults here to more iterations than the budget allows, so it never returns normally.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import numpy as np

from frontierbo._validation import check_int, check_real
from frontierbo.attack.oracle import TINY, QueryOracle

#: arctanh(x0 * 1.999999) in the reference, i.e. a shrink of (x0 - mid) / half by this factor.
TANH_SHRINK = 0.9999995


# --- shared by the baselines ---------------------------------------------------------------


@contextlib.contextmanager
def seeded_global_numpy(rng: np.random.Generator):
    """Seed the global ``np.random`` from ``rng`` for a library that draws from it (foolbox,
    ART), and restore the caller's global state afterwards."""
    state = np.random.get_state()  # noqa: NPY002 (the libraries' own global stream)
    np.random.seed(int(rng.integers(2**32)))  # noqa: NPY002
    try:
        yield
    finally:
        np.random.set_state(state)  # noqa: NPY002


def record_trace(oracle: QueryOracle, details: dict) -> None:
    """Write the trace of the ball rule into ``details``: queries, the largest L_inf distance
    queried, and the first query that reached the target outside the ball (index, distance)."""
    log = oracle.log
    details["queries"] = len(log)
    details["max_linf"] = max((r.linf for r in log), default=0.0)
    bound = oracle.delta_max * (1.0 + 1e-9)
    outside = [r for r in log if r.predicted == oracle.target and r.linf > bound]
    details["first_hit_outside_ball"] = (
        {"query": outside[0].index, "linf": outside[0].linf} if outside else None
    )


# --- the C&W objective and Adam shared by ZOO and AutoZOOM ----------------------------------


class CarliniWagnerLoss:
    """``L(w)`` of the module doc for one oracle: maps a full-resolution modifier ``w`` to its
    input ``x(w)`` and queries ``F(x)`` (one query per evaluation)."""

    def __init__(self, oracle: QueryOracle, use_tanh: bool, confidence: float):
        self.oracle, self.use_tanh, self.confidence = oracle, bool(use_tanh), confidence
        self.mid = 0.5 * (oracle.lower + oracle.upper)
        self.half = 0.5 * (oracle.upper - oracle.lower)
        x0 = oracle.x0
        if self.use_tanh:  # tanh space: the box constraint disappears (C&W 2017, §5)
            self.w0 = np.arctanh((x0 - self.mid) / self.half * TANH_SHRINK)
            self.x_ref = self.mid + self.half * np.tanh(self.w0)  # ~ x_0; the L2 reference
        else:
            self.x_ref = x0

    def image(self, w: np.ndarray) -> np.ndarray:
        if self.use_tanh:
            return np.clip(
                self.mid + self.half * np.tanh(w + self.w0), self.oracle.lower, self.oracle.upper
            )
        # the reference clamps the image, not the stored modifier
        return np.clip(self.oracle.x0 + w, self.oracle.lower, self.oracle.upper)

    def __call__(self, w: np.ndarray, const: float) -> tuple[float, float, bool]:
        """One query: ``(L(w), loss term f(x), target is the argmax)``."""
        x = self.image(w)
        p = self.oracle.scores(x)
        t = self.oracle.target
        other = np.max(np.delete(p, t))
        f = max(np.log(other + TINY) - np.log(p[t] + TINY), -self.confidence)
        l2 = float(np.sum((x - self.x_ref) ** 2))
        return const * f + l2, float(f), bool(np.argmax(p) == t)


class Adam:
    """Adam with a per-coordinate step counter (ZOO Alg. 2: only the updated coordinates
    advance), beta1 0.9, beta2 0.999, eps 1e-8 as in the reference."""

    def __init__(self, size: int, lr: float, beta1: float = 0.9, beta2: float = 0.999):
        self.lr, self.beta1, self.beta2 = lr, beta1, beta2
        self.m, self.v = np.zeros(size), np.zeros(size)
        self.epoch = np.ones(size)

    def reset(self) -> None:
        self.m[:], self.v[:], self.epoch[:] = 0.0, 0.0, 1.0

    def step(self, w_flat: np.ndarray, index, grad: np.ndarray) -> None:
        """In place: ``w[index] -= lr * Adam(grad)``."""
        b1, b2 = self.beta1, self.beta2
        self.m[index] = b1 * self.m[index] + (1 - b1) * grad
        self.v[index] = b2 * self.v[index] + (1 - b2) * grad * grad
        e = self.epoch[index]
        corr = np.sqrt(1 - b2**e) / (1 - b1**e)
        w_flat[index] -= self.lr * corr * self.m[index] / (np.sqrt(self.v[index]) + 1e-8)
        self.epoch[index] = e + 1


class ConstantSearch:
    """The reference's schedule for ``c`` (C&W binary search, switched every
    ``switch_iterations``): halve towards a known success, x10 until the first one."""

    def __init__(self, const: float):
        self.const, self.lower, self.upper = const, 0.0, 1e10

    def update(self, succeeded: bool) -> float:
        if succeeded:
            self.upper = min(self.upper, self.const)
            if self.upper < 1e9:
                self.const = 0.5 * (self.lower + self.upper)
        else:
            self.lower = max(self.lower, self.const)
            if self.upper < 1e9:
                self.const = 0.5 * (self.lower + self.upper)
            elif self.const < 1e8:
                self.const *= 10.0
        return self.const


class CarliniWagnerSchedule:
    """The bookkeeping around each iteration that ZOO and AutoZOOM share (the AutoZOOM code's
    ``blackbox_attack.attack``): Adam reset at the first zero loss term ("stage 1"), the first
    iteration whose centre hits the target, and the c switch."""

    def __init__(self, adam: Adam, initial_const: float, switch_iterations: int):
        self.adam, self.search = adam, ConstantSearch(initial_const)
        self.switch_iterations = switch_iterations
        self.stage, self.last_f, self.hit_since_switch = 0, np.inf, False

    @property
    def const(self) -> float:
        return self.search.const

    def after(self, iteration: int, f: float, hit: bool, details: dict) -> bool:
        """Record one iteration's centre; returns True at its first target hit."""
        if f == 0.0 and self.last_f != 0.0 and self.stage == 0:
            self.adam.reset()  # reached the fine-tuning point: reset Adam to avoid overshoot
            self.stage = 1
        self.last_f, first = f, hit and "first_hit_iteration" not in details
        self.hit_since_switch |= hit
        if iteration % self.switch_iterations == 0 and iteration != 0:
            details["const"] = self.search.update(self.hit_since_switch)
            self.hit_since_switch = False
            if self.stage == 1:
                self.adam.reset()
        return first


def check_cw_settings(lr, initial_const, confidence, switch_iterations, max_iterations):
    check_real(lr, "lr", low=0.0)
    check_real(initial_const, "initial_const", low=0.0)
    check_real(confidence, "confidence", low=0.0, low_open=False)
    check_int(switch_iterations, "switch_iterations", low=1)
    check_int(max_iterations, "max_iterations", low=1)


# --- ZOO-ADAM, own implementation ------------------------------------------------------------


@dataclass(frozen=True)
class ZooAdam:
    """ZOO-ADAM, targeted (module doc). Defaults of the AutoZOOM code
    (docs/decisions.md#bos-zoo-and-autozoom-defaults-from-the-autozoom-code): ``h = 1e-4``,
    ``coordinates = 128`` per iteration, Adam ``lr = 0.01``, ``initial_const = 1``,
    ``confidence = 0``; ``use_tanh`` False on MNIST, True on CIFAR-10."""

    name: str = "zoo"
    use_tanh: bool = False
    h: float = 1e-4
    coordinates: int = 128
    lr: float = 1e-2
    initial_const: float = 1.0
    confidence: float = 0.0
    switch_iterations: int = 1000
    max_iterations: int = 1000

    def __post_init__(self):
        check_real(self.h, "h", low=0.0)
        check_int(self.coordinates, "coordinates", low=1)
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
        loss = CarliniWagnerLoss(oracle, self.use_tanh, self.confidence)
        w = np.zeros(oracle.x0.shape)  # line 1
        w_flat = w.reshape(-1)
        if self.coordinates > w.size:
            raise ValueError(
                f"coordinates must be <= the input size {w.size}, got {self.coordinates}"
            )
        adam = Adam(w.size, self.lr)
        schedule = CarliniWagnerSchedule(adam, self.initial_const, self.switch_iterations)
        details.update(iterations=0, const=schedule.const)
        for iteration in range(self.max_iterations):  # line 2
            index = rng.choice(w.size, self.coordinates, replace=False)  # line 3
            c = schedule.const
            centre, f, hit = loss(w, c)  # line 4: the centre first, then the B pairs
            grad = np.empty(self.coordinates)
            for b, i in enumerate(index):
                e = np.zeros(w.size)
                e[i] = self.h
                up = loss(w + e.reshape(w.shape), c)[0]
                down = loss(w - e.reshape(w.shape), c)[0]
                grad[b] = (up - down) / (2.0 * self.h)  # line 5
            adam.step(w_flat, index, grad)  # line 6
            if schedule.after(iteration, f, hit, details):  # lines 7-8
                details["first_hit_iteration"] = iteration
            details.update(iterations=iteration + 1, loss=centre, loss_term=f)
            details["centre_linf"] = float(np.abs(loss.image(w) - oracle.x0).max())


# --- ZOO through ART -------------------------------------------------------------------------


def art_classifier(oracle: QueryOracle, classes: int):
    """An ART ``BlackBoxClassifier`` whose predictions are one oracle query per row, returned
    as ``log(p + 1e-30)`` (ZooAttack's loss on them is then the paper's log loss)."""
    from art.estimators.classification import BlackBoxClassifier

    def predict(batch: np.ndarray) -> np.ndarray:
        rows = [oracle.scores(np.clip(x, oracle.lower, oracle.upper)) for x in batch]
        return np.log(np.asarray(rows) + TINY)

    return BlackBoxClassifier(
        predict, oracle.x0.shape, classes, clip_values=(oracle.lower, oracle.upper)
    )


@dataclass(frozen=True)
class ArtZoo:
    """ZOO through ART 1.20.1's ``ZooAttack`` (module doc lists how ART differs): targeted,
    ``nb_parallel = coordinates``, ``variable_h = h``, no resize / importance / early abort,
    one binary-search step. ``max_iterations=None`` runs until the budget is spent. ART needs
    the number of ``classes`` before the first query (10 for the C&W victims)."""

    name: str = "zoo-art"
    classes: int = 10
    h: float = 1e-4
    coordinates: int = 128
    lr: float = 1e-2
    initial_const: float = 1.0
    confidence: float = 0.0
    max_iterations: int | None = None

    def __post_init__(self):
        check_int(self.classes, "classes", low=2)
        check_real(self.h, "h", low=0.0)
        check_int(self.coordinates, "coordinates", low=1)
        check_real(self.lr, "lr", low=0.0)
        check_real(self.initial_const, "initial_const", low=0.0)
        check_real(self.confidence, "confidence", low=0.0, low_open=False)
        if self.max_iterations is not None:
            check_int(self.max_iterations, "max_iterations", low=1)

    def attack(self, oracle: QueryOracle, rng: np.random.Generator, details: dict) -> None:
        from art.attacks.evasion import ZooAttack

        per_iteration = 2 * self.coordinates + 1
        steps = self.max_iterations or oracle.remaining // per_iteration + 1
        zoo = ZooAttack(
            art_classifier(oracle, self.classes),
            confidence=self.confidence,
            targeted=True,
            learning_rate=self.lr,
            max_iter=steps,
            binary_search_steps=1,
            initial_const=self.initial_const,
            abort_early=False,
            use_resize=False,
            use_importance=False,
            nb_parallel=self.coordinates,
            batch_size=1,
            variable_h=self.h,
            verbose=False,
        )
        target = np.array([oracle.target])
        try:
            with seeded_global_numpy(rng):
                zoo.generate(oracle.x0[None], target)
        finally:
            record_trace(oracle, details)
            details["iterations"] = details["queries"] // per_iteration
