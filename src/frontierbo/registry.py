"""The registered systems, in the order the command line lists them.

A system is added by writing its package with a ``system.py`` that declares ``SYSTEM`` (a
:class:`frontierbo.systems.declare.System`) and appending that module here; nothing else in the
shared layers changes. The conformance tests (``tests/test_systems.py``) run over this list.
"""

from __future__ import annotations

import importlib

from frontierbo.systems.declare import System

#: Modules that declare ``SYSTEM``.
SYSTEM_MODULES = (
    "frontierbo.po.system",
    "frontierbo.ldp.system",
    "frontierbo.quantum.system",
    "frontierbo.macro.system",
    "frontierbo.attack.system",
)


def systems() -> list[System]:
    """Every registered system, in registry order (names are unique)."""
    found = [importlib.import_module(module).SYSTEM for module in SYSTEM_MODULES]
    names = [system.name for system in found]
    if len(set(names)) != len(names):
        raise RuntimeError(f"two systems share a name: {names}")
    return found
