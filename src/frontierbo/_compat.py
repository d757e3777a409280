"""Deprecated import paths of modules that moved when the library became one package per system
(issue 9). ``frontierbo.privacy``, ``frontierbo.problems`` and ``frontierbo.userdata`` keep
working for one release, with a ``DeprecationWarning`` naming the new place."""

from __future__ import annotations

import importlib
import inspect
import sys
import warnings
from types import ModuleType


def alias_package(
    package: ModuleType, moved: dict[str, str], new_home: str, *, export: bool = False
) -> None:
    """Make ``package.<old>`` import as the module ``moved[old]`` (also ``from package.old ...``).

    ``export``: also bind every public name of the moved modules (:func:`public_names`) on the
    package itself, so that ``from package import Name`` works as documented before the move;
    where two modules offer one name, the first module in ``moved`` wins.
    """
    warnings.warn(
        f"{package.__name__} is deprecated; import from {new_home}",
        DeprecationWarning,
        stacklevel=3,
    )
    exported: list[str] = []
    for old, new in moved.items():
        module = importlib.import_module(new)
        sys.modules[f"{package.__name__}.{old}"] = module
        setattr(package, old, module)
        if export:
            for name in public_names(module):
                if name not in exported and name not in moved:
                    setattr(package, name, getattr(module, name))
                    exported.append(name)
    if export:
        package.__all__ = sorted(exported)


def public_names(module: ModuleType) -> list[str]:
    """A module's public names: its ``__all__``, else the functions and classes it defines
    (not those it imports) and its UPPER_CASE constants."""
    names = getattr(module, "__all__", None)
    if names is not None:
        return list(names)
    out = []
    for name, value in vars(module).items():
        if name.startswith("_") or inspect.ismodule(value):
            continue
        defined_here = getattr(value, "__module__", None) == module.__name__
        if (defined_here and callable(value)) or (name.isupper() and not callable(value)):
            out.append(name)
    return out
