"""Wall-clock of one planning call of anytime ε-Macro-BO (A3) on the real traffic graph.

Problem (E2, Section 4.4.2 of the thesis): ``frontierbo.macro.data.traffic()`` (A = 20 macro-actions
per location, kappa = 5), its fitted hyperparameters, ``d_0`` = one seeded start cell and its value.
For each H in ``--horizons`` and both profiles, N = ``--samples`` (300) and ``--iterations``
ConstructTree calls (1500), it prints the median seconds of ``--repeats`` planning calls (each
includes building the input tree), the node counter and the chosen row. Profiles: ``thesis`` (the
defaults: most-likely initial bounds, lambda from line 43 of thesis Algorithm 4) and ``ref-code``
(lambda = 5, infinite initial bounds, argmax Q_hi*, exact last stage, no (4.12) fallback).

Every repeat runs in a fresh process: the ref-code profile at H = 4 holds about 12 GB of samples
and bounds, and a second call in the same process reuses the first one's pages, which makes it
look several times faster than a cold call.

BLAS threads: one by default (``--blas-threads 1``, via threadpoolctl, as ``ldp_speed.py``); the
products here are small, and on a busy 2-core machine OpenBLAS threads cost milliseconds a call.
``--blas-threads 0`` leaves the library default. To get the "before" figure of a change, run the
same command with ``PYTHONPATH`` pointing at the old sources.

Run:  ``python benchmarks/macro_anytime_speed.py [--horizons 2,3,4] [--repeats 3]
[--samples 300] [--iterations 1500] [--blas-threads 1]``
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

PROFILES = {
    "thesis": {},
    "ref-code": dict(
        lam=5.0, init="infinite", action_rule="upper", last_stage="exact", fallback=False
    ),
}


def one_call(H: int, profile: str, samples: int, iterations: int, blas_threads: int) -> dict:
    """One planning call in this process: seconds, node counter, chosen row, root bounds."""
    if blas_threads > 0:
        try:
            from threadpoolctl import threadpool_limits
        except ImportError:
            print(
                "threadpoolctl is not installed: BLAS threads left at the default", file=sys.stderr
            )
        else:
            threadpool_limits(limits=blas_threads, user_api="blas")
    from frontierbo.core.gp import FiniteDomainGP
    from frontierbo.macro import data
    from frontierbo.macro.anytime import AnytimeEpsilonMacroBO

    ds = data.traffic()
    hyp = ds.hyperparameters
    gp = FiniteDomainGP(ds.domain.inputs, hyp.kernel(), hyp.noise_variance, hyp.prior_mean)
    start = int(ds.starts(1, seed=0)[0])
    gp.add(start, ds.values[start])
    planner = AnytimeEpsilonMacroBO(
        gp, ds.domain, H, n_samples=samples, iterations=iterations, seed=0, **PROFILES[profile]
    )
    t = time.perf_counter()
    plan = planner.plan(start)
    return dict(
        seconds=time.perf_counter() - t,
        nodes=plan.nodes,
        action=plan.action,
        v_lower=plan.v_lower,
        v_upper=plan.v_upper,
    )


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--horizons", default="2,3,4", help="comma-separated H values")
    ap.add_argument("--profiles", default="thesis,ref-code", help=f"of {sorted(PROFILES)}")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--samples", type=int, default=300, help="N")
    ap.add_argument("--iterations", type=int, default=1500)
    ap.add_argument("--blas-threads", type=int, default=1, help="0: the library default")
    ap.add_argument("--one", nargs=2, metavar=("H", "PROFILE"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one:  # a child process: one call, one JSON line
        H, profile = int(args.one[0]), args.one[1]
        print(json.dumps(one_call(H, profile, args.samples, args.iterations, args.blas_threads)))
        return
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
    for H in (int(h) for h in args.horizons.split(",")):
        for profile in args.profiles.split(","):
            if profile not in PROFILES:
                raise ValueError(f"profiles must be among {sorted(PROFILES)}, got {profile!r}")
            runs = []
            for _ in range(args.repeats):
                cmd = [sys.executable, __file__, "--one", str(H), profile]
                cmd += ["--samples", str(args.samples), "--iterations", str(args.iterations)]
                cmd += ["--blas-threads", str(args.blas_threads)]
                out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
                runs.append(json.loads(out.strip().splitlines()[-1]))
            seconds = statistics.median(r["seconds"] for r in runs)
            r = runs[0]
            print(
                f"H={H} {profile:8s} {seconds:8.2f} s  nodes {r['nodes']:>10d}  row {r['action']:>2d}"
                f"  V_lo* {r['v_lower']:.6g}  V_hi* {r['v_upper']:.6g}",
                flush=True,
            )


if __name__ == "__main__":
    main()
