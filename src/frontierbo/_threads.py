"""Thread limits for the numerical hot paths (layer 0: imports nothing of frontierbo)."""

from __future__ import annotations

import contextlib


def one_blas_thread():
    """A context limiting BLAS to one thread when ``threadpoolctl`` is installed (optional).

    The matrices of one run are small (LDP: m, n <= 100; attacks: n <= 930): a second BLAS
    thread only adds synchronisation, and on a busy 2-core machine it made ATA-GP-UCB 6-9x
    slower (benchmarks/ldp_speed.py) and the BOS² unit tests 16x slower. Without threadpoolctl
    nothing changes (set ``OPENBLAS_NUM_THREADS=1`` in the environment instead)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - optional dependency
        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")
