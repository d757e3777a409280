"""Wall-clock of one quantum Monte Carlo (IQAE) estimate: NumPy simulator vs Qiskit circuits.

Three implementations of the same estimator (qiskit-algorithms' ``IterativeAmplitudeEstimation``,
``alpha = 0.05``, Clopper-Pearson intervals, the reference code's shots per round) run the same
estimates:

(a) numpy:       ``frontierbo.quantum.oracles.IQAEOracle`` -- one binomial draw per IQAE round,
                 exactly qiskit's distribution on an ideal device;
(b) statevector: ``frontierbo.quantum.circuits.QiskitIQAEOracle(backend="statevector")`` -- the
                 real ``Q^k A`` circuits sampled by ``qiskit.primitives.StatevectorSampler``;
(c) aer:         ``QiskitIQAEOracle(backend="aer")`` -- the circuits transpiled for and run on
                 ``qiskit_aer.primitives.SamplerV2`` (noiseless).

Cases (``eps`` is the oracle's target ``accuracy``, ``eps_a`` its amplitude-scale ``accuracy_a``):
(a) Bernoulli reward, 1 qubit, ``p = 0.3``, ``eps = 0.01`` (the issue's case);
(b) Gaussian reward ``sigma = 0.3``, 64-point grid, the reference code's encoding (7 qubits,
``eps_a = eps / (3 sigma)``), ``eps = 0.05``; (c) the same Gaussian with the exact
(Montanaro) encoding (7 qubits, ``eps_a = eps / (6 sigma)``), ``eps = 0.05``.

Printed per case and implementation: mean seconds per estimate (after one untimed warm-up
call), the mean query count +- its standard error (the implementations are equal in
distribution, so these agree within noise: the times are at equal query counts), the time per
1000 queries, and the ratios aer / numpy and statevector / numpy.  Oracle construction (Aer's
pass manager) is timed separately and not included.

Run:  ``PYTHONPATH=src python benchmarks/qae_speed.py [--calls 20] [--numpy-calls 2000]
[--seed 0] [--cases bernoulli,gauss-ref,gauss-exact]``.  Needs the ``[quantum]`` extra.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time

import numpy as np
import scipy

from frontierbo.quantum.oracles import IQAEOracle
from frontierbo.quantum.rewards import BernoulliReward, GaussianReward

DELTA = 0.05
TARGET = 300  # issue: numpy IQAE should be >= 300x faster than Aer on the Bernoulli case

# name -> (label, reward, encoding, accuracy)
CASES = {
    "bernoulli": ("Bernoulli p=0.3, 1 qubit, eps 0.01", BernoulliReward(0.3), "exact", 0.01),
    "gauss-ref": (
        "Gaussian sigma 0.3, reference enc., 7 qubits, eps 0.05",
        GaussianReward(0.85, 0.3),
        "reference",
        0.05,
    ),
    "gauss-exact": (
        "Gaussian sigma 0.3, exact enc., 7 qubits, eps 0.05",
        GaussianReward(0.85, 0.3),
        "exact",
        0.05,
    ),
}
IMPLEMENTATIONS = ("numpy", "statevector", "aer")


def make_oracle(impl: str, encoding: str, seed: int):
    if impl == "numpy":
        return IQAEOracle(seed, encoding=encoding)
    from frontierbo.quantum.circuits import QiskitIQAEOracle

    return QiskitIQAEOracle(backend=impl, seed=seed, encoding=encoding)


def time_calls(oracle, reward, accuracy: float, calls: int) -> tuple[list[float], list[int]]:
    oracle.estimate(reward, accuracy, DELTA)  # warm-up: imports, caches, first thread
    times, queries = [], []
    for _ in range(calls):
        t0 = time.perf_counter()
        _, q = oracle.estimate(reward, accuracy, DELTA)
        times.append(time.perf_counter() - t0)
        queries.append(q)
    return times, queries


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--calls", type=int, default=20, help="timed estimates per Qiskit backend")
    p.add_argument("--numpy-calls", type=int, default=2000, help="timed estimates for numpy")
    p.add_argument("--seed", type=int, default=0, help="seed of every oracle")
    p.add_argument(
        "--cases", default=",".join(CASES), help=f"comma-separated subset of {', '.join(CASES)}"
    )
    args = p.parse_args(argv)
    cases = [c.strip() for c in args.cases.split(",") if c.strip()]
    unknown = [c for c in cases if c not in CASES]
    if unknown or not cases:
        p.error(f"--cases must be a comma-separated subset of {', '.join(CASES)}, got {unknown}")
    if args.calls < 1 or args.numpy_calls < 1:
        p.error("need --calls >= 1 and --numpy-calls >= 1")
    try:
        import qiskit
        import qiskit_aer
        import qiskit_algorithms
    except ImportError as exc:
        print(f"Qiskit not importable ({exc}): pip install 'frontierbo[quantum]'")
        return 1

    print("QMC / IQAE speed benchmark: numpy simulator vs Qiskit circuits")
    print(
        f"  alpha = {DELTA}, Clopper-Pearson, shots per round ceil(32 ln((2/alpha) log2(pi/(4 "
        f"eps_a)))); {args.numpy_calls} numpy calls, {args.calls} calls per Qiskit backend, "
        f"seed {args.seed}, one untimed warm-up call each"
    )
    print(
        f"  python {platform.python_version()}, numpy {np.__version__}, scipy {scipy.__version__},"
        f" qiskit {qiskit.__version__}, qiskit-aer {qiskit_aer.__version__}, qiskit-algorithms "
        f"{qiskit_algorithms.__version__}"
    )
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"  {os.cpu_count()} CPUs, load average {load} (other work on the machine skews timings)")

    summary = []
    for case in cases:
        label, reward, encoding, accuracy = CASES[case]
        eps_a = reward.encoding(encoding).accuracy_a(accuracy)
        print(f"\n({case}) {label}  [eps_a = {eps_a:.4g}]")
        print(
            f"  {'implementation':<13}{'build s':>9}{'calls':>7}{'s / call':>11}{'median s':>11}"
            f"{'mean queries':>20}{'ms / 1k queries':>17}{'x numpy':>10}"
        )
        rows = {}
        for impl in IMPLEMENTATIONS:
            t0 = time.perf_counter()
            oracle = make_oracle(impl, encoding, args.seed)
            build = time.perf_counter() - t0
            n = args.numpy_calls if impl == "numpy" else args.calls
            times, queries = time_calls(oracle, reward, accuracy, n)
            mean_t = statistics.fmean(times)
            q = np.asarray(queries, dtype=float)
            se = q.std(ddof=1) / np.sqrt(q.size) if q.size > 1 else float("nan")
            rows[impl] = (mean_t, q.mean())
            ratio = mean_t / rows["numpy"][0]
            print(
                f"  {impl:<13}{build:>9.3f}{n:>7}{mean_t:>11.5f}{statistics.median(times):>11.5f}"
                f"{f'{q.mean():.0f} +- {se:.0f}':>20}{1e6 * mean_t / q.mean():>17.4f}"
                f"{ratio:>10.0f}"
            )
        per_q = {k: t / m for k, (t, m) in rows.items()}
        print(
            f"  aer / numpy = {rows['aer'][0] / rows['numpy'][0]:.0f}x per call "
            f"({per_q['aer'] / per_q['numpy']:.0f}x per query);  statevector / numpy = "
            f"{rows['statevector'][0] / rows['numpy'][0]:.0f}x per call "
            f"({per_q['statevector'] / per_q['numpy']:.0f}x per query)"
        )
        summary.append((case, rows))

    for case, rows in summary:
        if case == "bernoulli":
            ratio = rows["aer"][0] / rows["numpy"][0]
            verdict = "PASS" if ratio >= TARGET else "FAIL"
            print(
                f"\nBernoulli eps 0.01: aer / numpy = {ratio:.0f}x (target >= {TARGET}x: {verdict})"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
