"""What a run was computed on, stored with each record.

A seed fixes a run's random numbers, not its floating-point rounding. BLAS libraries and numpy
pick their kernels by CPU (AVX-512 or AVX2, say), and kernels that sum in a different order round
differently. An optimiser that takes an argmax over a posterior amplifies a last-bit difference
into a different query, so a long BO run re-run on another kind of CPU follows another trajectory:
the same seed gives the same numbers on one machine, and numbers from the same distribution
across machines. Each record says where it was made, so that a store resumed on another machine
(or compared with an old one) tells which records are bit-comparable.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.metadata
import platform

__all__ = ["describe_machine"]

#: numpy's CPU features worth naming: they decide which SIMD kernels run.
_SIMD = ("AVX512F", "AVX2", "FMA3", "ASIMD", "SVE")


@functools.cache
def describe_machine() -> str:
    """One line: the CPU, its SIMD level, and the numeric libraries with their BLAS kernels,
    e.g. ``"AMD EPYC (x86_64, AVX2+FMA3); numpy 2.4.6, scipy 1.17.1, openblas 0.3.30 Haswell,
    openblas 0.3.31.188.0 Haswell, torch 2.13.0+cpu"``.

    torch (the attack victims run on it) is named when installed, read from its metadata: the
    line must not depend on what a process happened to import."""
    import numpy as np
    import scipy
    import scipy.linalg  # noqa: F401  # loads scipy's own BLAS, so both are always listed

    parts = [f"numpy {np.__version__}", f"scipy {scipy.__version__}", *_blas()]
    with contextlib.suppress(importlib.metadata.PackageNotFoundError):
        parts.append(f"torch {importlib.metadata.version('torch')}")
    return f"{_cpu_model()} ({platform.machine()}, {_simd()}); " + ", ".join(parts)


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def _simd() -> str:
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as features
    except ImportError:  # numpy < 2 or a build without runtime dispatch
        return "SIMD unknown"
    return "+".join(name for name in _SIMD if features.get(name)) or "no SIMD"


def _blas() -> list[str]:
    """numpy's and scipy's BLAS, with the kernel each chose (threadpoolctl, when installed).

    Only theirs: other packages load BLAS builds of their own (qiskit-aer brings an OpenBLAS
    0.3.15), and the line must not depend on what a process happened to import. A system BLAS
    shared by both (conda, distro builds) lies outside their folders: then every BLAS is named."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return []
    blas = [i for i in threadpool_info() if i.get("user_api") == "blas"]
    own = [i for i in blas if any(name in i["filepath"] for name in ("numpy", "scipy"))]
    return sorted(
        " ".join(str(x) for x in (i["internal_api"], i.get("version"), i.get("architecture")) if x)
        for i in own or blas
    )
