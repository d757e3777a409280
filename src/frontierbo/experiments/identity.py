"""What may make up a run's identity: declared inputs only, never values measured at run time.

A sweep resumes by comparing each planned run's config (and seed) with the stored one, so a
config must come out the same in every process that plans the same run. A value measured while
something runs (a wall-clock duration, a timestamp, the host, the machine, a process id) differs
from one process to the next: in a config, or hashed into one (a problem checksum), it makes a
killed sweep refuse to resume with "different config or seed". Such values belong in a run's
result or metadata, which are stored but never compared.

The rule is by key name, so it can be checked wherever a config or a hashed mapping is built:
a key is *measured* when it is one of :data:`MEASURED_KEYS` or ends in one of
:data:`MEASURED_SUFFIXES` (``seconds``, ``mle_seconds``, ``machine``, ``hostname``, ...).
:class:`~frontierbo.experiments.runner.RunSpec` refuses a config with such a key anywhere in it
(:func:`measured_keys`), and content checksums hash :func:`without_measured` of their metadata,
which keeps the measured values stored beside the content but out of its identity.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["MEASURED_KEYS", "MEASURED_SUFFIXES", "is_measured", "measured_keys", "without_measured"]

#: Keys that name a value measured at run time.
MEASURED_KEYS = frozenset(
    {"seconds", "elapsed", "timestamp", "machine", "hostname", "host", "pid", "started", "finished"}
)
#: Endings of keys that name a value measured at run time (``mle_seconds``, ``fit_elapsed``).
MEASURED_SUFFIXES = ("_seconds", "_elapsed", "_timestamp", "_hostname", "_machine")


def is_measured(key: Any) -> bool:
    """Whether a mapping key names a value measured at run time (see the module docstring)."""
    if not isinstance(key, str):
        return False
    key = key.lower()
    return key in MEASURED_KEYS or key.endswith(MEASURED_SUFFIXES)


def measured_keys(value: Any, path: str = "") -> list[str]:
    """The dotted paths of every measured key in ``value``, at any depth of its mappings and
    sequences (``[]`` when there is none), e.g. ``["meta.mle_seconds"]``."""
    found: list[str] = []
    if isinstance(value, Mapping):
        for key, item in value.items():
            where = f"{path}.{key}" if path else str(key)
            if is_measured(key):
                found.append(where)
            else:
                found += measured_keys(item, where)
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            found += measured_keys(item, f"{path}[{i}]")
    return found


def without_measured(value: Any) -> Any:
    """``value`` with every measured key removed from its mappings, at any depth (mappings
    become dicts, tuples stay tuples); the part of it that may be hashed into an identity."""
    if isinstance(value, Mapping):
        return {k: without_measured(v) for k, v in value.items() if not is_measured(k)}
    if isinstance(value, list | tuple):
        items = [without_measured(v) for v in value]
        return tuple(items) if isinstance(value, tuple) else items
    return value
