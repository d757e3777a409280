"""Persistent ask / tell studies over a finite candidate set (:mod:`frontierbo.study.study`)."""

from frontierbo.study.create import create_study, load_study
from frontierbo.study.samplers import GPUCBSampler, RandomSampler
from frontierbo.study.storage import StorageError
from frontierbo.study.study import Study, Trial

__all__ = [
    "GPUCBSampler",
    "RandomSampler",
    "StorageError",
    "Study",
    "Trial",
    "create_study",
    "load_study",
]
