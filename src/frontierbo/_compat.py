"""Deprecated import paths of modules that moved when the library became one package per system
(issue 9). ``frontierbo.privacy``, ``frontierbo.problems`` and ``frontierbo.userdata`` keep
working for one release, with a ``DeprecationWarning`` naming the new place."""

from __future__ import annotations

import importlib
import sys
import warnings
from types import ModuleType


def alias_package(package: ModuleType, moved: dict[str, str], new_home: str) -> None:
    """Make ``package.<old>`` import as the module ``moved[old]`` (also ``from package.old ...``)."""
    warnings.warn(
        f"{package.__name__} is deprecated; import from {new_home}",
        DeprecationWarning,
        stacklevel=3,
    )
    for old, new in moved.items():
        module = importlib.import_module(new)
        sys.modules[f"{package.__name__}.{old}"] = module
        setattr(package, old, module)
