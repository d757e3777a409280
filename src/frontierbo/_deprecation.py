"""Renamed parameters and fields: the old name keeps working for a release, with a warning.

Used where issue 9 gave one name one meaning across the library (a quantum oracle's accuracy is
no longer called ``epsilon``, which is a privacy budget).
"""

from __future__ import annotations

import functools
import warnings

__all__ = ["both_names_error", "renamed_field", "renamed_keyword", "warn_renamed"]


def warn_renamed(owner: str, old: str, new: str, *, reason: str, stacklevel: int) -> None:
    """The one DeprecationWarning of a renamed keyword (``stacklevel`` as for ``warnings.warn``,
    counted from the caller of this function)."""
    warnings.warn(
        f"{owner}({old}=...) is deprecated, pass {new}=... (the same value): {reason}",
        DeprecationWarning,
        stacklevel=stacklevel + 1,
    )


def both_names_error(owner: str, old: str, new: str) -> TypeError:
    """The error for a call that passes a keyword and its deprecated alias together."""
    return TypeError(f"{owner}: pass {new} only ({old} is its deprecated alias), got both")


def renamed_keyword(old: str, new: str, *, reason: str):
    """Decorator: a call passing the keyword ``old`` gets a ``DeprecationWarning`` (saying
    ``reason``) and runs as if it had passed ``new`` (the same value); passing both is a
    ``TypeError``.

    The decorated function keeps its signature and positional calls pass through untouched.
    """

    def decorate(func):
        owner = func.__qualname__.removesuffix(".__init__")

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            if old in kwargs:
                if new in kwargs:
                    raise both_names_error(owner, old, new)
                warn_renamed(owner, old, new, reason=reason, stacklevel=2)
                kwargs[new] = kwargs.pop(old)
            return func(*args, **kwargs)

        return wrapper

    return decorate


def renamed_field(old: str, new: str, *, reason: str):
    """Class decorator for a dataclass whose field ``new`` was called ``old``: the constructor
    accepts ``old=`` (deprecated, :func:`renamed_keyword`) and ``old`` is a read-only attribute
    alias of ``new`` (no warning, so that reading records stays quiet)."""

    def decorate(cls):
        cls.__init__ = renamed_keyword(old, new, reason=reason)(cls.__init__)
        alias = property(
            lambda self: getattr(self, new), doc=f"Old name of :attr:`{new}` (read-only)."
        )
        setattr(cls, old, alias)
        return cls

    return decorate
