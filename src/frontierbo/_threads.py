"""Thread limits for the numerical hot paths (layer 0: imports nothing of frontierbo)."""

from __future__ import annotations

import contextlib
import functools
import sys


def one_blas_thread():
    """A context limiting BLAS to one thread when ``threadpoolctl`` is installed (optional).

    The matrices of one run are small (LDP: m, n <= 100; attacks: n <= 930): a second BLAS
    thread only adds synchronisation, and on a busy 2-core machine it made ATA-GP-UCB 6-9x
    slower (benchmarks/ldp_speed.py) and the BOS² unit tests 16x slower. Without threadpoolctl
    nothing changes (set ``OPENBLAS_NUM_THREADS=1`` in the environment instead)."""
    controller = _controller(len(sys.modules))
    if controller is None:  # pragma: no cover - optional dependency
        return contextlib.nullcontext()
    return controller.limit(limits=1, user_api="blas")


@functools.lru_cache(maxsize=1)
def _controller(_modules: int):
    """A ``ThreadpoolController``, rebuilt only when modules were imported since (one may have
    loaded another BLAS, e.g. torch's): building one scans the loaded libraries
    (``/proc/self/maps``), which cost 1.7 ms per call, 10 % of a study's ask."""
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:  # pragma: no cover - optional dependency
        return None
    return ThreadpoolController()
