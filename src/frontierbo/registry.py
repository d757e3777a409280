"""The registered systems, in the order the command line lists them.

A system is added by writing its package (with a ``cli.py`` that defines ``SYSTEM``, see
:mod:`frontierbo.experiments.system`) and appending its module here; nothing else in the shared
layers changes. The conformance test ``tests/test_systems.py`` runs over this list.
"""

from __future__ import annotations

import importlib

from frontierbo.experiments.system import System

#: Modules that define ``SYSTEM``.
SYSTEM_MODULES = (
    "frontierbo.po.cli",
    "frontierbo.ldp.cli",
    "frontierbo.quantum.cli",
    "frontierbo.macro.cli",
    "frontierbo.attack.cli",
)


def systems() -> list[System]:
    """Every registered :class:`System`, in registry order (names are unique)."""
    found = [importlib.import_module(module).SYSTEM for module in SYSTEM_MODULES]
    names = [system.name for system in found]
    if len(set(names)) != len(names):
        raise RuntimeError(f"two systems share a name: {names}")
    return found
