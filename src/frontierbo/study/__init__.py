"""Persistent ask / tell studies over a finite candidate set or a search space
(:mod:`frontierbo.study.study`, :mod:`frontierbo.study.space`).

The names below are imported on first use, so that ``frontierbo.study.storage`` (which the
command line imports at every start) does not pull in the samplers' numerics.
"""

import importlib

_WHERE = {
    "create_study": "create", "delete_study": "create", "load_study": "create",
    "study_summaries": "create", "GPUCBSampler": "samplers", "RandomSampler": "samplers",
    "Categorical": "space", "Float": "space", "Int": "space", "Space": "space",
    "StorageError": "storage", "Study": "study", "Trial": "study",
}  # fmt: skip

__all__ = sorted(_WHERE)


def __getattr__(name: str):
    if name in _WHERE:
        return getattr(importlib.import_module(f"frontierbo.study.{_WHERE[name]}"), name)
    raise AttributeError(f"module 'frontierbo.study' has no attribute {name!r}")


def __dir__():
    return sorted([*globals(), *_WHERE])
