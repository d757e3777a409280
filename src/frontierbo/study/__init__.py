"""Persistent ask / tell studies over a finite candidate set or a search space
(:mod:`frontierbo.study.study`, :mod:`frontierbo.study.space`)."""

from frontierbo.study.create import create_study, delete_study, load_study, study_summaries
from frontierbo.study.samplers import GPUCBSampler, RandomSampler
from frontierbo.study.space import Categorical, Float, Int, Space
from frontierbo.study.storage import StorageError
from frontierbo.study.study import Study, Trial

__all__ = [
    "Categorical",
    "Float",
    "GPUCBSampler",
    "Int",
    "RandomSampler",
    "Space",
    "StorageError",
    "Study",
    "Trial",
    "create_study",
    "delete_study",
    "load_study",
    "study_summaries",
]
