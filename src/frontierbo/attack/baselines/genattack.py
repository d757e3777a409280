"""GenAttack (Alzantot et al. 2019, "GenAttack: practical black-box attacks with gradient-free
optimization"), a baseline of the thesis (Section 5.3), in two profiles:

* ``"reference"`` (:class:`GenAttackReference`): the ``GenAttack2`` class of
  ``nesl/adversarial_genattack`` (``genattack_tf2.py``), which the thesis ran with its defaults
  (adaptive, no dimension reduction on MNIST/CIFAR-10);
* ``"foolbox"`` (:class:`GenAttackFoolbox`): ``foolbox.attacks.GenAttack`` 3.3.4 on a NumPy model
  that queries the oracle.

Reference GenAttack, one generation (``idx`` = 0, 1, ...; noise in absolute units, eps = delta_max):

    0  init: noise_n <- U(-eps, eps) on each coordinate w.p. rho, else 0      (n = 1..N)
    1  x_n <- clip(x_0 + noise_n, max(x_0 - eps, -.5), min(x_0 + eps, .5)); p_n <- F(x_n)
       (the elite carried over is not re-queried: queries = steps (N - 1) + 1)
    2  fitness_n <- y(x_n) of (5.2); success if any argmax p_n = target (the oracle stops it)
    3  win <- max_n (p_n[t] - max_c p_n[c]); plateau count resets when win beats the best, else
       +1; beyond 100 (if win > -0.4) or 300 it is reset and num_plateaus += 1
    4  step <- max(alpha, 0.4 * 0.9^np);  p_mut <- 1 for idx < 10, else max(rho, 0.5 * 0.9^np)
    5  elite <- argmax fitness;  probs <- softmax(fitness / tau)
    6  2(N - 1) parents ~ probs; child k takes each coordinate from parent1 w.p. pp1/(pp1+pp2)
    7  child += U(-eps * step, eps * step) on each coordinate w.p. p_mut
    8  population <- children + [elite]

foolbox 3.3.4's GenAttack (``foolbox/attacks/gen_attack.py``) differs from it as follows:

* init: *dense* ``U(-eps, eps)`` noise on every coordinate (reference: sparse, w.p. rho);
* schedule: generation 0 mutates with ``(rho, alpha)``; from generation 1 on
  ``max(rho, 0.5 * 0.9^np)`` and ``max(alpha, 0.4 * 0.9^np)``: no ``p_mut = 1`` phase for the
  first 10 generations;
* plateaus: counted when the carried-over elite stays the best member, with a fixed threshold
  of 100 (reference: best win margin, threshold 100 or 300 by the current margin);
* it re-evaluates the elite each generation (N queries per generation). Our model wrapper
  returns the elite's cached scores instead (``reuse_elite=True``), so the oracle counts
  ``steps (N - 1) + 1`` queries as the reference does;
* it projects the noise onto ``[-eps, eps]`` after mutation (the reference clips only ``x``, so
  its stored noise can drift beyond eps) and clips images to ``[0, 1]`` whatever the model's
  bounds: the wrapper maps ``[lower, upper]`` affinely onto ``[0, 1]``;
* fitness from logits, ``l_t - log(sum_c e^{l_c} - e^{l_t})``: the wrapper returns
  ``log(p + 1e-30)``, which gives y of (5.2) up to the 1e-30 terms;
* randomness from the global ``np.random`` (seeded from the attack's Generator, then restored);
  ``__call__`` queries the result once more, so ``run`` is called instead.

Both keep every query inside the L_inf ball and the valid range (tested). Crossover,
parent sampling, the temperature and the mutation law agree.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from frontierbo._validation import check_int, check_probability, check_real
from frontierbo.attack.baselines.zoo import seeded_global_numpy
from frontierbo.attack.oracle import TINY, QueryOracle, margin_objective

PROFILES = ("reference", "foolbox")


def _check_settings(population, mutation_rate, alpha, temperature):
    check_int(population, "population", low=2)
    check_probability(mutation_rate, "mutation_rate")
    check_real(alpha, "alpha", low=0.0)
    check_real(temperature, "temperature", low=0.0)


def _in_ball(oracle: QueryOracle, noise: np.ndarray) -> np.ndarray:
    """Line 1: ``clip(x_0 + noise)`` to the ball and the range (no query)."""
    return oracle.input_for(np.clip(noise / oracle.delta_max, -1.0, 1.0))


@dataclass(frozen=True)
class GenAttackReference:
    """The reference GenAttack (module doc). Defaults of the reference code
    (docs/decisions.md#bos-genattack-defaults-from-its-reference-code): ``population = 6``,
    ``mutation_rate = 0.005``, ``alpha = 0.20``, ``temperature = 0.1``, ``adaptive = True``.
    It runs ``max_steps + 1`` generations (the reference's loop condition ``i <= max_steps``)
    unless the oracle stops it first."""

    name: str = "genattack"
    population: int = 6
    mutation_rate: float = 0.005
    alpha: float = 0.20
    temperature: float = 0.1
    adaptive: bool = True
    max_steps: int = 10000

    def __post_init__(self):
        _check_settings(self.population, self.mutation_rate, self.alpha, self.temperature)
        check_int(self.max_steps, "max_steps", low=0)

    def schedule(self, idx: int, num_plateaus: int) -> tuple[float, float]:
        """Line 4: ``(step, p_mut)`` of generation ``idx``."""
        if not self.adaptive:
            return self.alpha, self.mutation_rate
        step = max(self.alpha, 0.4 * 0.9**num_plateaus)
        p_mut = 1.0 if idx < 10 else max(self.mutation_rate, 0.5 * 0.9**num_plateaus)
        return step, p_mut

    def attack(self, oracle: QueryOracle, rng: np.random.Generator, details: dict) -> None:
        n, eps, t = self.population, oracle.delta_max, oracle.target
        noise = _mutate(np.zeros((n, *oracle.x0.shape)), eps, self.mutation_rate, rng)  # line 0
        scores: list[np.ndarray | None] = [None] * n
        best_win, plateau, num_plateaus = -1.0, 0, 0
        details.update(generations=0, num_plateaus=0)
        for idx in range(self.max_steps + 1):
            p = np.array(  # line 1: only the members whose scores are unknown cost a query
                [
                    s if s is not None else oracle.scores(_in_ball(oracle, m))
                    for s, m in zip(scores, noise, strict=True)
                ]
            )
            fitness = margin_objective(p, t)  # line 2
            win = float(np.max(p[:, t] - p.max(axis=1)))  # line 3
            best_win, plateau = (win, 0) if win > best_win else (best_win, plateau + 1)
            if plateau > (100 if win > -0.4 else 300):
                num_plateaus, plateau = num_plateaus + 1, 0
            step, p_mut = self.schedule(idx, num_plateaus)  # line 4
            elite = int(np.argmax(fitness))  # line 5
            probs = _softmax(fitness / self.temperature)
            parents = rng.choice(n, 2 * n - 2, p=probs)  # line 6
            p1, p2 = parents[: n - 1], parents[n - 1 :]
            keep1 = probs[p1] / (probs[p1] + probs[p2])
            take1 = rng.random(noise[p1].shape) < keep1.reshape(-1, *[1] * oracle.x0.ndim)
            children = np.where(take1, noise[p1], noise[p2])
            children = _mutate(children, eps * step, p_mut, rng)  # line 7
            noise = np.concatenate([children, noise[elite][None]])  # line 8
            scores = [None] * (n - 1) + [p[elite]]
            details.update(
                generations=idx + 1, num_plateaus=num_plateaus, best_win_margin=best_win,
                best_fitness=float(fitness[elite]), queries=oracle.queries,
                elite_linf=float(np.abs(_in_ball(oracle, noise[-1]) - oracle.x0).max()),
            )  # fmt: skip


def _mutate(pop: np.ndarray, step: float, p: float, rng: np.random.Generator) -> np.ndarray:
    """Lines 0 and 7: add ``U(-step, step)`` to each coordinate with probability ``p``."""
    noise = rng.uniform(-step, step, size=pop.shape)
    return pop + noise * (rng.random(pop.shape) < p)


def _softmax(a: np.ndarray) -> np.ndarray:
    e = np.exp(a - a.max())
    return e / e.sum()


class _FoolboxModelFunction:
    """The function a ``foolbox.models.NumPyModel`` calls: each row of a batch in ``[0, 1]``
    is one oracle query in ``[lower, upper]``; returns ``log(p + 1e-30)`` as logits.

    foolbox evaluates the members of a generation in order, the carried-over elite first from
    generation 1 on; with ``reuse_elite`` that member's scores come from the previous
    generation's cache instead of a query (the reference's query count)."""

    def __init__(self, oracle: QueryOracle, population: int, reuse_elite: bool):
        self.oracle, self.population, self.reuse_elite = oracle, population, reuse_elite
        self.calls, self.previous, self.current = 0, {}, {}

    def __call__(self, batch: np.ndarray) -> np.ndarray:
        return np.stack([np.log(self._scores(row) + TINY) for row in batch])

    def _scores(self, row: np.ndarray) -> np.ndarray:
        o = self.oracle
        generation, member = divmod(self.calls, self.population)
        self.calls += 1
        if member == 0:
            self.previous, self.current = self.current, {}
        x = _in_ball(o, o.lower + (o.upper - o.lower) * row - o.x0)
        key = x.tobytes()
        if self.reuse_elite and generation > 0 and member == 0 and key in self.previous:
            p = self.previous[key]
        else:
            p = o.scores(x)
        self.current[key] = p
        return p

    @property
    def generations(self) -> int:
        return -(-self.calls // self.population)


@dataclass(frozen=True)
class GenAttackFoolbox:
    """GenAttack through ``foolbox.attacks.GenAttack`` (3.3.4). The reference defaults map to
    ``population``, ``mutation_probability = mutation_rate``, ``mutation_range = alpha``,
    ``sampling_temperature = temperature``; ``steps=None`` runs until the budget is spent."""

    name: str = "genattack-foolbox"
    population: int = 6
    mutation_rate: float = 0.005
    alpha: float = 0.20
    temperature: float = 0.1
    steps: int | None = None
    reuse_elite: bool = True

    def __post_init__(self):
        _check_settings(self.population, self.mutation_rate, self.alpha, self.temperature)
        if self.steps is not None:
            check_int(self.steps, "steps", low=1)

    def attack(self, oracle: QueryOracle, rng: np.random.Generator, details: dict) -> None:
        import foolbox

        width = oracle.upper - oracle.lower
        fn = _FoolboxModelFunction(oracle, self.population, self.reuse_elite)
        model = foolbox.models.NumPyModel(fn, bounds=(0.0, 1.0))
        genattack = foolbox.attacks.GenAttack(
            steps=self.steps or oracle.remaining,  # >= 1 query per generation
            population=self.population,
            mutation_probability=self.mutation_rate,
            mutation_range=self.alpha,
            sampling_temperature=self.temperature,
        )
        x = (oracle.x0[None] - oracle.lower) / width
        criterion = foolbox.criteria.TargetedMisclassification(np.array([oracle.target]))
        try:
            with seeded_global_numpy(rng):
                genattack.run(model, x, criterion, epsilon=oracle.delta_max / width)
        finally:
            details.update(generations=fn.generations, queries=oracle.queries)


def make_genattack(profile: str = "reference", **settings):
    """The GenAttack of ``profile`` (``"reference"`` or ``"foolbox"``) with ``settings``."""
    if profile not in PROFILES:
        raise ValueError(f"profile must be one of {PROFILES}, got {profile!r}")
    cls = GenAttackReference if profile == "reference" else GenAttackFoolbox
    return cls(**settings)
