"""Qiskit circuits for the quantum Monte Carlo oracle, and IQAE run on them (extra ``[quantum]``).

This module builds the state-preparation operator ``A`` of an arm's reward distribution as a
real Qiskit circuit and runs qiskit-algorithms' ``IterativeAmplitudeEstimation`` (IQAE) on it,
on Qiskit's ideal ``StatevectorSampler`` or on Qiskit Aer's ``SamplerV2`` (optionally with a noise
model).  :class:`QiskitIQAEOracle` has the interface of
:class:`frontierbo.quantum.oracles.IQAEOracle`, ``estimate(reward, accuracy, delta) -> (estimate,
queries)``, and the same settings (``accuracy_a``, ``alpha = delta``, shots, post-processing and
query count), so the two differ only in where the measurement counts come from.  Qiskit is
imported lazily: the module imports without the extra, and using it raises an ``ImportError``
asking to install ``frontierbo[quantum]``.

Circuits (:func:`state_preparation`):

* :class:`~frontierbo.quantum.rewards.BernoulliReward` (either encoding): 1 qubit,
  ``A = RY(2 arcsin sqrt(p))``, objective qubit 0, so ``a = p``.
* :class:`~frontierbo.quantum.rewards.GaussianReward`, ``encoding="exact"``: ``num_qubits``
  uncertainty qubits prepared with ``StatePreparation(sqrt(p_i))`` over the grid of
  ``reward.support()`` (Qiskit is little-endian: grid index ``i`` is the basis state ``|i>``,
  qubit 0 its least-significant bit), plus one objective qubit (the last one) rotated by the
  uniformly controlled ``RY(2 arcsin sqrt(g_i))``, ``g_i = (v_i - low) / (high - low)``
  (``UCRYGate``).  Then ``a = sum_i p_i g_i = (E[v] - low) / (high - low)``.  ``num_qubits + 1``
  qubits (7 for the default 64-point grid).
* :class:`~frontierbo.quantum.rewards.GaussianReward`, ``encoding="reference"`` (the Q-GP-UCB
  authors' circuit, docs/decisions.md#quantum-bo-gaussian-reference-encoding-measures-qubit-0):
  the same ``StatePreparation`` followed by
  ``LinearAmplitudeFunction(num_qubits, slope=1, offset=0, domain=(low, high), image=(low, high),
  rescaling_factor=1)`` on all its qubits, with objective qubit **0**, the least-significant
  uncertainty qubit (as in the reference code).  The grid is symmetric about the mean, so
  ``a = 1/2`` exactly; the amplitude function does not act on qubit 0 but is kept so that the
  circuit (7 qubits, like the paper's 7-qubit device) and its Grover operator are the authors'.

In both cases ``P(objective = 1)`` equals ``reward.encoding(encoding).amplitude``, and the
estimate is mapped back to the reward scale by that :class:`~frontierbo.quantum.rewards.\
AmplitudeEncoding`.

Query counts.  Qiskit's ``result.num_oracle_queries`` is ``sum over rounds of shots * k``, the
number of applications of the Grover operator ``Q`` (the state preparation ``A`` is not counted,
rounds with ``k = 0`` count zero).  ``query_count="reference"`` returns exactly that number, or the
reference code's fallback ``ceil((0.8 / eps_a) ln((2/alpha) log2(pi / (4 eps_a))))`` when it is 0;
``query_count="applications"`` returns ``sum shots * (2k + 1)`` (every ``A`` or ``A^dagger``),
computed from ``result.powers`` and the shots.  Both are computed by
:func:`frontierbo.quantum.oracles.count_queries`, as for the NumPy oracle.

Samplers.  ``StatevectorSampler`` needs no transpiler: it simulates any gate with a definition,
including qiskit-algorithms' composite Grover gate ``Q``.  Aer's ``SamplerV2`` does not transpile
(else "unknown instruction: Q"), so the oracle passes a preset pass manager for an
``AerSimulator`` to IQAE; the ideal simulator's target then omits Aer's ``multiplexer``, because
Qiskit's synthesis of ``StatePreparation(...).inverse()`` emits parameterless gates of that name
that crash Aer with a segmentation fault (qiskit-aer issue #2444).

Distributions.  On the ideal ``StatevectorSampler`` (and on noiseless Aer with the default
``seed_mode="per-call"``) the estimates and query counts have exactly the distribution of
:class:`~frontierbo.quantum.oracles.IQAEOracle` (tested).  With a noise model the measured
probabilities are no longer ``sin^2((2k+1) theta_a)``, so noisy runs are **not** equal in
distribution to the ideal simulator (biased estimates, different Grover powers and counts).
With ``seed_mode="fixed"`` (the authors' Aer ``seed_simulator=0`` on every job) every sampler job
reuses one seed, so rounds of one IQAE call that repeat the same power ``k`` repeat the same
counts; the run is a deterministic function of the circuit and ``accuracy`` and is not equal in
distribution to independent shots either.
"""

from __future__ import annotations

import math
import warnings
from numbers import Integral
from types import SimpleNamespace
from typing import Any

import numpy as np

from frontierbo._validation import SeedLike, as_generator, check_int
from frontierbo.quantum.iqae import default_shots
from frontierbo.quantum.oracles import QUERY_COUNTS, _check_choice, _check_targets, count_queries
from frontierbo.quantum.rewards import (
    ENCODINGS,
    BernoulliReward,
    GaussianReward,
    RewardDistribution,
)

__all__ = [
    "BACKENDS",
    "SEED_MODES",
    "QiskitIQAEOracle",
    "estimation_problem",
    "generic_noise_model",
    "state_preparation",
]

BACKENDS = ("statevector", "aer")
SEED_MODES = ("per-call", "fixed")
_CONFINT_METHODS = ("beta", "chernoff")
_INSTALL_HINT = "install frontierbo[quantum] (pip install 'frontierbo[quantum]')"


def _require(module: str):
    """Import an optional Qiskit module or raise an ``ImportError`` naming the extra."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f"frontierbo.quantum.circuits needs {module.split('.')[0]!r}: {_INSTALL_HINT}"
        ) from exc


def _check_reward(reward) -> RewardDistribution:
    if not isinstance(reward, BernoulliReward | GaussianReward):
        raise TypeError(
            f"reward must be a BernoulliReward or a GaussianReward, got {type(reward).__name__}"
        )
    return reward


def _linear_amplitude_function(num_state_qubits: int, low: float, high: float):
    """The reference code's ``LinearAmplitudeFunction`` (deprecated since Qiskit 2.2; the
    equivalent ``LinearAmplitudeFunctionGate`` is used where the class no longer exists)."""
    library = _require("qiskit.circuit.library")
    kwargs = {
        "slope": 1.0,
        "offset": 0.0,
        "domain": (low, high),
        "image": (low, high),
        "rescaling_factor": 1.0,
    }
    if hasattr(library, "LinearAmplitudeFunction"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            return library.LinearAmplitudeFunction(num_state_qubits, **kwargs)
    return library.LinearAmplitudeFunctionGate(num_state_qubits, **kwargs)  # pragma: no cover


def state_preparation(reward: RewardDistribution, encoding: str = "exact"):
    """The ``A`` operator of ``reward`` as a Qiskit circuit.

    Args:
        reward: a :class:`~frontierbo.quantum.rewards.BernoulliReward` or
            :class:`~frontierbo.quantum.rewards.GaussianReward`.
        encoding: ``"exact"`` or ``"reference"`` (module docstring).

    Returns:
        ``(circuit, objective_qubits)``: a ``QuantumCircuit`` and the list with the index of the
        qubit whose probability of reading 1 is ``reward.encoding(encoding).amplitude``.
        Qubits: 1 (Bernoulli), ``num_qubits + 1`` (Gaussian, both encodings, plus any ancillas
        of the amplitude function -- none in Qiskit 2.x).
    """
    _check_reward(reward)
    _check_choice(encoding, "encoding", ENCODINGS)
    qiskit = _require("qiskit")
    library = _require("qiskit.circuit.library")

    if isinstance(reward, BernoulliReward):
        circuit = qiskit.QuantumCircuit(1, name="A")
        circuit.ry(2.0 * math.asin(math.sqrt(reward.p)), 0)
        return circuit, [0]

    n = reward.num_qubits
    values, probs = reward.support()
    # little-endian: amplitude i of the vector goes to basis state |i>, qubit 0 = lowest bit
    uncertainty = library.StatePreparation(np.sqrt(probs), label="P(X)")
    if encoding == "exact":
        circuit = qiskit.QuantumCircuit(n + 1, name="A")
        circuit.append(uncertainty, range(n))
        g = np.clip((values - reward.low) / (reward.high - reward.low), 0.0, 1.0)
        angles = [float(x) for x in 2.0 * np.arcsin(np.sqrt(g))]
        # UCRYGate acts on [target] + controls; control state i (little-endian) applies angles[i]
        circuit.append(library.UCRYGate(angles), [n, *range(n)])
        return circuit, [n]

    amplitude_function = _linear_amplitude_function(n, reward.low, reward.high)
    circuit = qiskit.QuantumCircuit(amplitude_function.num_qubits, name="A")
    circuit.append(uncertainty, range(n))
    circuit.compose(amplitude_function, range(amplitude_function.num_qubits), inplace=True)
    # The reference code's objective qubit:
    # docs/decisions.md#quantum-bo-gaussian-reference-encoding-measures-qubit-0
    return circuit, [0]


def estimation_problem(reward: RewardDistribution, encoding: str = "exact"):
    """``qiskit_algorithms.EstimationProblem`` for :func:`state_preparation` ``(reward, encoding)``.

    The post-processing is left as the identity (the estimate is the amplitude); the oracle maps
    it to the reward scale with ``reward.encoding(encoding).to_reward``.
    """
    circuit, objective = state_preparation(reward, encoding)
    algorithms = _require("qiskit_algorithms")
    return algorithms.EstimationProblem(state_preparation=circuit, objective_qubits=objective)


def generic_noise_model(num_qubits: int = 7, seed: int = 0):
    """A ``qiskit_aer.noise.NoiseModel`` from Qiskit's ``GenericBackendV2(num_qubits, seed=seed)``.

    The paper's noise models came from the fake IBM backends ``FakeWashington`` (127 qubits, Fig. 3)
    and ``FakeLagos`` (7 qubits, proxy of the Fig. 4 device); they live in ``qiskit-ibm-runtime``,
    which is not a dependency here (and not installed), so this generic backend with randomly drawn
    but realistic error rates (basis ``cx, id, rz, sx, x``, full connectivity) stands in.  Any
    ``NoiseModel`` can be passed to :class:`QiskitIQAEOracle` instead, e.g.
    ``NoiseModel.from_backend(FakeLagosV2())`` where ``qiskit-ibm-runtime`` is installed.
    """
    num_qubits = check_int(num_qubits, "num_qubits", low=1, high=64)
    seed = check_int(seed, "seed", low=0)
    fake = _require("qiskit.providers.fake_provider")
    noise = _require("qiskit_aer.noise")
    return noise.NoiseModel.from_backend(fake.GenericBackendV2(num_qubits, seed=seed))


def _aer_pass_manager(backend_options: dict[str, Any], optimization_level: int):
    """``generate_preset_pass_manager(optimization_level, backend=AerSimulator(...))``, except that
    Aer's native ``multiplexer`` is left out of the target when the simulator offers it.

    Qiskit synthesises ``StatePreparation(...).inverse()`` (inside the Grover operator) with
    gates *named* ``multiplexer`` that keep their matrices in their definition, not in
    ``params``; a target containing Aer's ``multiplexer`` keeps them as they are and Aer then
    dereferences the empty parameter list and kills the process with a segmentation fault
    (qiskit-aer issue #2444, qiskit issue #14354; qiskit 2.6.2 + qiskit-aer 0.18.2).  Without
    that name in the target they are synthesised into ordinary gates.
    """
    aer = _require("qiskit_aer")
    transpiler = _require("qiskit.transpiler")
    simulator = aer.AerSimulator(**backend_options)
    kwargs: dict[str, Any] = {}
    names = list(simulator.operation_names)
    if "multiplexer" in names:
        kwargs["basis_gates"] = [name for name in names if name != "multiplexer"]
    with warnings.catch_warnings():
        # "basis_gates along with backend ... invalidate the backend's gate durations and error
        # rates": the ideal simulator has none (a noise model's basis has no multiplexer)
        warnings.simplefilter("ignore", UserWarning)
        return transpiler.generate_preset_pass_manager(
            optimization_level=optimization_level,
            backend=simulator,
            seed_transpiler=0,  # docs/decisions.md#quantum-bo-fixed-seed-mode-replays-seed-0
            **kwargs,
        )


class _SeededSampler:
    """Duck-typed ``BaseSamplerV2`` around the real sampler: sets the seed of every job, counts
    the jobs and stops qiskit's loop after ``max_jobs`` (its Chernoff loop can run for ever)."""

    def __init__(self, sampler, seeds, max_jobs: int):
        self.sampler = sampler
        self.seeds = seeds  # None: leave the sampler's own seed; else a callable -> int seed
        self.max_jobs = max_jobs
        self.jobs = 0
        self.exhausted = False

    def run(self, pubs, *, shots=None):
        self.jobs += 1
        if self.jobs > self.max_jobs:
            self.exhausted = True
            raise RuntimeError("too many IQAE rounds")
        if self.seeds is not None:  # Aer SamplerV2 reads run_options["seed_simulator"] per job
            self.sampler.options.run_options["seed_simulator"] = self.seeds()
        return self.sampler.run(pubs, shots=shots)


class QiskitIQAEOracle:
    """Quantum Monte Carlo mean estimation by qiskit-algorithms' IQAE on Qiskit circuits.

    Same interface and settings as :class:`frontierbo.quantum.oracles.IQAEOracle`:
    ``accuracy_a = reward.encoding(encoding).accuracy_a(accuracy)``, IQAE confidence
    ``alpha = delta``, shots per round :func:`~frontierbo.quantum.iqae.default_shots`
    ``(accuracy_a, alpha)`` unless ``shots`` is given, estimate ``encoding.to_reward(a_hat)``,
    queries :func:`~frontierbo.quantum.oracles.count_queries`.

    Args:
        backend: ``"statevector"`` (``qiskit.primitives.StatevectorSampler``, ideal, exact
            probabilities then sampled shots; no transpilation needed) or ``"aer"`` (``qiskit_aer.primitives.SamplerV2``;
            circuits are transpiled with ``generate_preset_pass_manager(optimization_level,
            backend=AerSimulator(...))`` since V2 samplers do not transpile).
        noise_model: a ``qiskit_aer.noise.NoiseModel`` (``backend="aer"`` only), e.g.
            :func:`generic_noise_model`; noisy runs are not equal in distribution to ideal ones.
        seed: int, ``numpy.random.Generator`` or None; the oracle's own Generator.
        seed_mode: ``"per-call"`` (default): every ``estimate`` call draws a fresh seed from the
            oracle's Generator and every sampler job (IQAE round) inside it gets its own seed
            derived from it, so the rounds are independent (as on a device), repeated calls
            differ and the whole sequence is reproducible from ``seed``.  ``"fixed"``: every job of
            every call uses the same seed ``seed`` (default 0; must be an int) -- the authors'
            ``seed_simulator=0`` (docs/decisions.md#quantum-bo-fixed-seed-mode-replays-seed-0);
            rounds repeating a power ``k`` then repeat their counts.
        encoding: ``"exact"`` or ``"reference"`` (:mod:`frontierbo.quantum.rewards`).
        query_count: ``"reference"`` or ``"applications"`` (:mod:`frontierbo.quantum.oracles`).
        confint_method: ``"beta"`` (Clopper-Pearson) or ``"chernoff"``.
        shots: shots per IQAE round; default ``default_shots(accuracy_a, delta)``.
        optimization_level: transpiler optimisation level, 0..3 (Aer only).
        backend_options: extra ``AerSimulator`` options (Aer only), e.g.
            ``{"method": "density_matrix", "coupling_map": ...}``, used both by the sampler and
            by the transpiler target.
        max_iterations: stop after this many IQAE rounds with a ``RuntimeError`` (qiskit's
            Chernoff loop can otherwise run for ever, see :func:`~frontierbo.quantum.iqae.\
iqae_simulate`).

    ``last_result`` keeps the last ``IterativeAmplitudeEstimationResult`` of qiskit.
    """

    def __init__(
        self,
        *,
        backend: str = "statevector",
        noise_model=None,
        seed: SeedLike = None,
        seed_mode: str = "per-call",
        encoding: str = "exact",
        query_count: str = "reference",
        confint_method: str = "beta",
        shots: int | None = None,
        optimization_level: int = 1,
        backend_options: dict[str, Any] | None = None,
        max_iterations: int = 10_000,
    ):
        self.backend = _check_choice(backend, "backend", BACKENDS)
        self.seed_mode = _check_choice(seed_mode, "seed_mode", SEED_MODES)
        self.encoding = _check_choice(encoding, "encoding", ENCODINGS)
        self.query_count = _check_choice(query_count, "query_count", QUERY_COUNTS)
        self.confint_method = _check_choice(confint_method, "confint_method", _CONFINT_METHODS)
        self.shots = None if shots is None else check_int(shots, "shots", low=1)
        self.optimization_level = check_int(optimization_level, "optimization_level", low=0, high=3)
        self.max_iterations = check_int(max_iterations, "max_iterations", low=1)
        if self.seed_mode == "fixed":
            if seed is None:
                seed = 0
            if isinstance(seed, bool) or not isinstance(seed, Integral):
                raise TypeError(f"seed must be an int with seed_mode='fixed', got {seed!r}")
            if seed < 0:
                raise ValueError(f"seed must be an integer in [0, inf), got {seed!r}")
            self.fixed_seed = int(seed)
            self.rng = None
        else:
            self.fixed_seed = None
            self.rng = as_generator(seed, "seed")
        if backend_options is not None and not isinstance(backend_options, dict):
            raise TypeError(f"backend_options must be a dict or None, got {backend_options!r}")
        if self.backend != "aer" and (noise_model is not None or backend_options):
            raise ValueError(
                f"noise_model and backend_options need backend='aer', got backend={self.backend!r}"
            )
        _require("qiskit_algorithms")
        if noise_model is not None:
            noise = _require("qiskit_aer.noise")
            if not isinstance(noise_model, noise.NoiseModel):
                raise TypeError(
                    "noise_model must be a qiskit_aer.noise.NoiseModel or None, got "
                    f"{type(noise_model).__name__}"
                )
        self.noise_model = noise_model
        self.backend_options = dict(backend_options or {})
        if noise_model is not None:
            self.backend_options["noise_model"] = noise_model
        self._transpiler = None
        if self.backend == "aer":
            self._transpiler = _aer_pass_manager(self.backend_options, self.optimization_level)
        self.last_result = None

    def _sampler(self, shots: int) -> _SeededSampler:
        if self.seed_mode == "fixed":
            call_seed, job_seeds = self.fixed_seed, None
        else:
            call_seed = int(self.rng.integers(2**63))
            job_rng = np.random.default_rng(call_seed)
            job_seeds = None
        if self.backend == "statevector":
            primitives = _require("qiskit.primitives")
            # a Generator is consumed across jobs (independent rounds); an int re-seeds each job
            seed = call_seed if self.seed_mode == "fixed" else job_rng
            inner = primitives.StatevectorSampler(default_shots=shots, seed=seed)
        else:
            aer_primitives = _require("qiskit_aer.primitives")
            options = {"backend_options": dict(self.backend_options)}
            if self.seed_mode == "fixed":
                inner = aer_primitives.SamplerV2(
                    default_shots=shots, seed=call_seed, options=options
                )
            else:
                inner = aer_primitives.SamplerV2(default_shots=shots, options=options)

                def job_seeds() -> int:
                    return int(job_rng.integers(2**31))

        return _SeededSampler(inner, job_seeds, self.max_iterations)

    def estimate(
        self, reward: RewardDistribution, accuracy: float, delta: float
    ) -> tuple[float, int]:
        """One IQAE run: ``(estimate of E[reward], queries charged)``."""
        _check_reward(reward)
        accuracy, delta = _check_targets(accuracy, delta)
        enc = reward.encoding(self.encoding)
        accuracy_a = enc.accuracy_a(accuracy)
        shots = default_shots(accuracy_a, delta) if self.shots is None else self.shots
        algorithms = _require("qiskit_algorithms")
        problem = estimation_problem(reward, self.encoding)
        sampler = self._sampler(shots)
        iae = algorithms.IterativeAmplitudeEstimation(
            accuracy_a,
            delta,
            confint_method=self.confint_method,
            sampler=sampler,
            transpiler=self._transpiler,
        )
        try:
            with warnings.catch_warnings():
                # qiskit-algorithms builds its Grover operator with Qiskit's deprecated class
                warnings.simplefilter("ignore", DeprecationWarning)
                result = iae.estimate(problem)
        except Exception as exc:
            if sampler.exhausted:
                raise RuntimeError(
                    f"IQAE did not reach accuracy_a={accuracy_a} within max_iterations="
                    f"{self.max_iterations} rounds (typical with confint_method='chernoff', see "
                    "qiskit-algorithms issue #55)"
                ) from exc
            raise
        self.last_result = result
        counted = SimpleNamespace(
            num_oracle_queries=int(result.num_oracle_queries),
            num_a_applications=sum(shots * (2 * int(k) + 1) for k in result.powers[1:]),
        )
        queries = count_queries(counted, accuracy_a, delta, self.query_count)
        return enc.to_reward(float(result.estimation)), queries
