"""Search spaces: float (optionally log-scaled or stepped), int (optionally log-scaled) and
categorical parameters, their encoding to the unit cube the GP models, and the candidate sets
an ask scores.

    space = Space([
        Float("x", 0.0, 1.0),
        Float("lr", 1e-5, 0.1, log=True),
        Int("layers", 1, 8),
        Categorical("act", ["relu", "tanh"]),
    ])
    space = Space.from_dict({"params": [{"name": "x", "type": "float", "low": 0, "high": 1}]})
    space = Space.from_json("space.json")

Every parameter is checked when the space is made, and a bad one is one ``ValueError`` naming
it (``low >= high``, ``log`` with ``low <= 0``, empty or repeated choices, a repeated name, an
unknown key or type).

**Encoding** (what the GP sees; ``encode`` / ``decode`` convert a typed ``params`` dict):

* a float is one coordinate in [0, 1]: ``(v - low) / (high - low)``, or the same of ``log v``
  for ``log=True`` (log warping: a learning rate's decades get equal room);
* a stepped float (``step``) and an int are one coordinate too, each value at the centre of
  an equal cell (``(v - low + 1/2) / (high - low + 1)`` for an int; log ints warp the cell
  edges ``low - 1/2`` and ``high + 1/2``, as Optuna does); decoding rounds to the value, so
  ints come back as ``int``;
* a categorical with ``k`` choices is ``k`` one-hot coordinates, decoded by the largest.

One-hot, not a categorical kernel, because the core's GP, its MAP fit and its input gradients
are all for a stationary ARD kernel on coordinates (``core/``: never a second GP). With one
lengthscale per one-hot coordinate the squared distance between two choices ``a`` and ``b`` is
``1/l_a^2 + 1/l_b^2``: an exchangeable (Hamming-like) kernel over the choices whose
lengthscales are learnt per choice, which is what a categorical kernel (BoTorch's
``CategoricalKernel``, Optuna's Hamming distance) provides, with no new code in ``core``. Every
point the GP scores is a valid point (ints at their values, categoricals one-hot), so the
acquisition never rewards a fractional int or a mixture of choices.

**Candidate sets** (:func:`candidate_pool`): a scrambled Sobol set over the parameters, fresh
for every ask (seeded by the trial's Generator), plus perturbations of a few parameters of the
best points told so far; a space of at most :data:`GRID_LIMIT` points (ints and categoricals
and stepped floats only) is enumerated whole instead.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from numbers import Integral, Real
from pathlib import Path
from typing import ClassVar

import numpy as np

#: The parameter types of a space, as written in its JSON.
TYPES = ("float", "int", "categorical")
#: Fresh scrambled Sobol points per ask (a power of two keeps Sobol's balance).
N_SOBOL = 1024
#: Best told points whose neighbourhoods are searched, and neighbours drawn around each.
N_CENTERS, N_PER_CENTER = 5, 128
#: Spaces with at most this many points (no continuous float) are scored whole.
GRID_LIMIT = 4096
#: Perturbation of a numeric coordinate: a normal whose standard deviation (in the unit
#: coordinate) is drawn log-uniformly from this range for each neighbour.
LOCAL_SCALES = (1e-3, 0.3)


def _where(name) -> str:
    return f"param {name!r}"


def _real(value, name, key) -> float:
    if isinstance(value, bool) or not isinstance(value, Real | np.floating | np.integer):
        raise ValueError(f"{_where(name)}: {key} must be a number, got {value!r}")
    if not math.isfinite(float(value)):
        raise ValueError(f"{_where(name)}: {key} must be finite, got {value!r}")
    return float(value)


def _integer(value, name, key) -> int:
    if isinstance(value, Integral) and not isinstance(value, bool):
        return int(value)
    real = _real(value, name, key)
    if real != int(real):
        raise ValueError(f"{_where(name)}: {key} must be an integer, got {value!r}")
    return int(real)


def _check_name(name) -> str:
    if not isinstance(name, str) or not name:
        raise ValueError(f"a parameter's name must be a non-empty string, got {name!r}")
    return name


def _check_bool(value, name, key) -> bool:
    if not isinstance(value, bool | np.bool_):
        raise ValueError(f"{_where(name)}: {key} must be true or false, got {value!r}")
    return bool(value)


def _check_range(name, low, high, given) -> None:
    if not low < high:
        raise ValueError(
            f"{_where(name)}: low must be < high, got low={given.low!r}, high={given.high!r}"
        )


@dataclass(frozen=True)
class Float:
    """A real parameter in ``[low, high]``; ``log=True`` searches ``log v`` uniformly (needs
    ``low > 0``); ``step`` restricts it to ``low + k step`` (``high - low`` a whole number of
    steps; not with ``log``)."""

    name: str
    low: float
    high: float
    log: bool = False
    step: float | None = None
    type: ClassVar[str] = "float"

    def __post_init__(self):
        name = _check_name(self.name)
        low, high = _real(self.low, name, "low"), _real(self.high, name, "high")
        _check_range(name, low, high, self)
        log = _check_bool(self.log, name, "log")
        if log and low <= 0:
            raise ValueError(f"{_where(name)}: log=true needs low > 0, got low={self.low!r}")
        step = self.step
        if step is not None:
            step = _real(step, name, "step")
            if step <= 0:
                raise ValueError(f"{_where(name)}: step must be > 0, got {self.step!r}")
            if log:
                raise ValueError(f"{_where(name)}: step and log=true cannot be combined")
            k = (high - low) / step
            if abs(k - round(k)) > 1e-9 * max(1.0, k):
                raise ValueError(
                    f"{_where(name)}: high - low = {high - low:g} must be a whole number of "
                    f"steps (step {step:g})"
                )
        for key, value in (("low", low), ("high", high), ("log", log), ("step", step)):
            object.__setattr__(self, key, value)

    # -- geometry -------------------------------------------------------------------------------
    @property
    def width(self) -> int:
        return 1

    @property
    def continuous(self) -> bool:
        return self.step is None

    @property
    def count(self) -> int | None:
        return None if self.step is None else int(round((self.high - self.low) / self.step)) + 1

    def _warped(self) -> tuple[float, float]:
        return (math.log(self.low), math.log(self.high)) if self.log else (self.low, self.high)

    def _from_unit(self, u: np.ndarray) -> np.ndarray:
        if self.step is None:
            return np.clip(u, 0.0, 1.0)[:, None]
        n = self.count
        return ((np.clip(np.floor(u * n), 0, n - 1) + 0.5) / n)[:, None]

    def _to_unit(self, z: np.ndarray) -> np.ndarray:
        return z[:, 0]

    def _grid(self) -> np.ndarray:
        n = self.count
        return ((np.arange(n) + 0.5) / n)[:, None]

    def _decode(self, z: np.ndarray):
        u = float(z[0])
        if self.step is not None:
            n = self.count
            k = int(min(max(math.floor(u * n), 0), n - 1))
            # decimal arithmetic: low 0, step 0.1, k 3 is 0.3 (not 0.30000000000000004)
            value = float(Decimal(repr(self.low)) + k * Decimal(repr(self.step)))
            return min(max(value, self.low), self.high)
        lo, hi = self._warped()
        value = lo + min(max(u, 0.0), 1.0) * (hi - lo)
        value = math.exp(value) if self.log else value
        return min(max(value, self.low), self.high)

    def _encode(self, value) -> np.ndarray:
        v = _real(value, self.name, "value")
        if not self.low <= v <= self.high:
            raise ValueError(
                f"{_where(self.name)}: value must be in [{self.low:g}, {self.high:g}], got {value!r}"
            )
        if self.step is not None:
            k = (v - self.low) / self.step
            if abs(k - round(k)) > 1e-9 * max(1.0, k):
                raise ValueError(
                    f"{_where(self.name)}: value {value!r} is not low + k * step "
                    f"(low {self.low:g}, step {self.step:g})"
                )
            return np.array([(round(k) + 0.5) / self.count])
        lo, hi = self._warped()
        return np.array([((math.log(v) if self.log else v) - lo) / (hi - lo)])

    def to_dict(self) -> dict:
        out = {"name": self.name, "type": "float", "low": self.low, "high": self.high,
               "log": self.log}  # fmt: skip
        if self.step is not None:
            out["step"] = self.step
        return out


@dataclass(frozen=True)
class Int:
    """An integer parameter in ``[low, high]`` (both included); ``log=True`` searches it on a
    log scale (needs ``low >= 1``). Decoded values are Python ``int``."""

    name: str
    low: int
    high: int
    log: bool = False
    type: ClassVar[str] = "int"

    def __post_init__(self):
        name = _check_name(self.name)
        low, high = _integer(self.low, name, "low"), _integer(self.high, name, "high")
        _check_range(name, low, high, self)
        log = _check_bool(self.log, name, "log")
        if log and low <= 0:
            raise ValueError(f"{_where(name)}: log=true needs low > 0, got low={self.low!r}")
        for key, value in (("low", low), ("high", high), ("log", log)):
            object.__setattr__(self, key, value)

    @property
    def width(self) -> int:
        return 1

    @property
    def continuous(self) -> bool:
        return False

    @property
    def count(self) -> int:
        return self.high - self.low + 1

    def _edges(self) -> tuple[float, float]:
        a, b = self.low - 0.5, self.high + 0.5
        return (math.log(a), math.log(b)) if self.log else (a, b)

    def _values(self, u: np.ndarray) -> np.ndarray:
        """The integers at unit coordinates ``u``: the cell each falls in."""
        if not self.log:
            return self.low + np.clip(np.floor(u * self.count), 0, self.count - 1)
        a, b = self._edges()
        return np.clip(np.rint(np.exp(a + np.clip(u, 0.0, 1.0) * (b - a))), self.low, self.high)

    def _position(self, v: np.ndarray) -> np.ndarray:
        a, b = self._edges()
        return ((np.log(v) if self.log else v) - a) / (b - a)

    def _from_unit(self, u: np.ndarray) -> np.ndarray:
        return self._position(self._values(u))[:, None]

    def _to_unit(self, z: np.ndarray) -> np.ndarray:
        return z[:, 0]

    def _grid(self) -> np.ndarray:
        return self._position(np.arange(self.low, self.high + 1, dtype=float))[:, None]

    def _decode(self, z: np.ndarray) -> int:
        return int(self._values(np.asarray(z[:1], dtype=float))[0])

    def _encode(self, value) -> np.ndarray:
        if isinstance(value, bool) or not isinstance(value, Integral | np.integer | Real):
            raise ValueError(f"{_where(self.name)}: value must be an integer, got {value!r}")
        if isinstance(value, Real) and not isinstance(value, Integral) and value != int(value):
            raise ValueError(f"{_where(self.name)}: value must be an integer, got {value!r}")
        v = int(value)
        if not self.low <= v <= self.high:
            raise ValueError(
                f"{_where(self.name)}: value must be an integer in [{self.low}, {self.high}], "
                f"got {value!r}"
            )
        return self._position(np.array([float(v)]))

    def to_dict(self) -> dict:
        return {"name": self.name, "type": "int", "low": self.low, "high": self.high,
                "log": self.log}  # fmt: skip


def _choice_key(value) -> tuple:
    """Choices compare by kind and value: ``True`` and ``1`` are two choices, ``1`` and ``1.0``
    one."""
    return ("bool" if isinstance(value, bool) else "str" if isinstance(value, str) else "number",
            value)  # fmt: skip


def _check_choice(value, name):
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool | str | Integral):
        return value
    if isinstance(value, Real) and math.isfinite(value):
        return float(value)
    raise ValueError(
        f"{_where(name)}: choices must be strings, finite numbers or bools, got {value!r}"
    )


@dataclass(frozen=True)
class Categorical:
    """One of ``choices`` (strings, numbers or bools, distinct); decoded as the choice itself."""

    name: str
    choices: tuple
    type: ClassVar[str] = "categorical"

    def __post_init__(self):
        name = _check_name(self.name)
        if isinstance(self.choices, str | bytes) or not isinstance(self.choices, Sequence):
            raise ValueError(f"{_where(name)}: choices must be a list, got {self.choices!r}")
        choices = tuple(_check_choice(c, name) for c in self.choices)
        if not choices:
            raise ValueError(f"{_where(name)}: choices must not be empty")
        seen: dict = {}
        for i, c in enumerate(choices):
            key = _choice_key(c)
            if key in seen:
                raise ValueError(
                    f"{_where(name)}: choices must be distinct, {c!r} is choice {seen[key]} "
                    f"and choice {i}"
                )
            seen[key] = i
        object.__setattr__(self, "choices", choices)
        object.__setattr__(self, "_index", seen)

    @property
    def width(self) -> int:
        return len(self.choices)

    @property
    def continuous(self) -> bool:
        return False

    @property
    def count(self) -> int:
        return len(self.choices)

    def _from_unit(self, u: np.ndarray) -> np.ndarray:
        k = np.clip(np.floor(u * self.count), 0, self.count - 1).astype(int)
        return np.eye(self.count)[k]

    def _to_unit(self, z: np.ndarray) -> np.ndarray:
        return (np.argmax(z, axis=1) + 0.5) / self.count

    def _grid(self) -> np.ndarray:
        return np.eye(self.count)

    def _decode(self, z: np.ndarray):
        return self.choices[int(np.argmax(z))]

    def _encode(self, value) -> np.ndarray:
        index = self._index.get(_choice_key(value)) if _hashable(value) else None
        if index is None:
            raise ValueError(
                f"{_where(self.name)}: value must be one of {list(self.choices)}, got {value!r}"
            )
        out = np.zeros(self.count)
        out[index] = 1.0
        return out

    def to_dict(self) -> dict:
        return {"name": self.name, "type": "categorical", "choices": list(self.choices)}


def _hashable(value) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


_CLASSES = {"float": Float, "int": Int, "categorical": Categorical}
_KEYS = {
    "float": ("name", "type", "low", "high", "log", "step"),
    "int": ("name", "type", "low", "high", "log"),
    "categorical": ("name", "type", "choices"),
}
_REQUIRED = {"float": ("low", "high"), "int": ("low", "high"), "categorical": ("choices",)}


def param_from_dict(spec: Mapping, position: int | None = None):
    """A :class:`Float`, :class:`Int` or :class:`Categorical` from its JSON form
    (``{"name": ..., "type": "float" | "int" | "categorical", ...}``)."""
    where = f"params[{position}]" if position is not None else "a parameter"
    if not isinstance(spec, Mapping):
        raise ValueError(f"{where} must be an object with name and type, got {spec!r}")
    if "name" not in spec:
        raise ValueError(f"{where}: missing 'name'")
    name = _check_name(spec["name"])
    kind = spec.get("type")
    if kind not in TYPES:
        raise ValueError(
            f"{_where(name)}: type must be one of {', '.join(map(repr, TYPES))}, got {kind!r}"
        )
    unknown = [k for k in spec if k not in _KEYS[kind]]
    if unknown:
        raise ValueError(
            f"{_where(name)} ({kind}): unknown key {unknown[0]!r}; allowed: "
            f"{', '.join(_KEYS[kind])}"
        )
    missing = [k for k in _REQUIRED[kind] if k not in spec]
    if missing:
        raise ValueError(f"{_where(name)} ({kind}): missing {missing[0]!r}")
    return _CLASSES[kind](**{k: v for k, v in spec.items() if k != "type"})


class Space:
    """A search space: a sequence of :class:`Float`, :class:`Int` and :class:`Categorical`
    parameters (or their JSON dicts), with distinct names. See the module doc."""

    def __init__(self, params):
        if isinstance(params, Space):
            params = params.params
        elif isinstance(params, Mapping):
            params = _params_of(params)
        if isinstance(params, str | bytes) or not isinstance(params, Sequence) or not params:
            raise ValueError(
                f"space: params must be a non-empty list of parameters, got {params!r}"
            )
        out, first = [], {}
        for i, p in enumerate(params):
            if isinstance(p, Mapping):
                p = param_from_dict(p, i)
            elif not isinstance(p, Float | Int | Categorical):
                raise ValueError(
                    f"params[{i}] must be a Float, Int, Categorical or a dict, got {p!r}"
                )
            if p.name in first:
                raise ValueError(
                    f"parameter name {p.name!r} is used twice (params {first[p.name]} and {i}): "
                    "names must be distinct"
                )
            first[p.name] = i
            out.append(p)
        self.params = tuple(out)
        widths = [p.width for p in self.params]
        starts = np.concatenate([[0], np.cumsum(widths)]).astype(int)
        self._slices = tuple(slice(a, b) for a, b in zip(starts[:-1], starts[1:], strict=True))
        #: which encoded coordinates are continuous (floats without step): the polished ones
        self.continuous = np.concatenate(
            [np.full(w, p.continuous) for p, w in zip(self.params, widths, strict=True)]
        )
        self.continuous.flags.writeable = False

    # -- construction and JSON ----------------------------------------------------------------
    @classmethod
    def from_dict(cls, spec: Mapping) -> Space:
        """From ``{"params": [...]}``."""
        return cls(_params_of(spec))

    @classmethod
    def from_json(cls, path: str | os.PathLike, flag: str = "space file") -> Space:
        """From a JSON file holding ``{"params": [...]}``; errors name ``flag`` and the file."""
        where = f"{flag} {os.fspath(path)!r}"
        try:
            text = Path(path).read_text()
        except FileNotFoundError:
            raise FileNotFoundError(f"{where} does not exist") from None
        except (IsADirectoryError, UnicodeDecodeError, OSError) as exc:
            raise ValueError(f"{where} cannot be read: {exc}") from None
        try:
            return cls.loads(text)
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None

    @classmethod
    def loads(cls, text: str) -> Space:
        try:
            spec = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"not valid JSON: {exc}") from None
        return cls.from_dict(spec)

    def to_dict(self) -> dict:
        return {"params": [p.to_dict() for p in self.params]}

    def dumps(self) -> str:
        """Canonical JSON (what a study stores; :meth:`loads` reads it back equal)."""
        return json.dumps(self.to_dict(), separators=(",", ":"))

    def to_json(self, path: str | os.PathLike) -> Path:
        path = Path(path)
        path.write_text(json.dumps(self.to_dict(), indent=2) + "\n")
        return path

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.dumps().encode()).hexdigest()

    def __eq__(self, other) -> bool:
        return isinstance(other, Space) and self.dumps() == other.dumps()

    def __hash__(self) -> int:
        return hash(self.dumps())

    def __repr__(self) -> str:
        return f"Space({list(self.params)!r})"

    def __len__(self) -> int:
        return len(self.params)

    def __iter__(self):
        return iter(self.params)

    # -- shape ---------------------------------------------------------------------------------
    @property
    def names(self) -> list[str]:
        return [p.name for p in self.params]

    @property
    def n_params(self) -> int:
        return len(self.params)

    @property
    def dims(self) -> int:
        """Coordinates of the encoding (one per float / int, one per choice)."""
        return int(self.continuous.size)

    @property
    def cardinality(self) -> int | None:
        """The number of points of the space, or None when a float is continuous."""
        counts = [p.count for p in self.params]
        return None if None in counts else math.prod(counts)

    # -- encoding ------------------------------------------------------------------------------
    def encode(self, params: Mapping) -> np.ndarray:
        """The point (dims,) of a ``params`` dict holding every parameter by name."""
        if not isinstance(params, Mapping):
            raise ValueError(f"params must be a dict of parameter values, got {params!r}")
        missing = [n for n in self.names if n not in params]
        unknown = [n for n in params if n not in set(self.names)]
        if missing or unknown:
            what = f"missing {missing}" if missing else f"unknown {unknown}"
            raise ValueError(f"params: {what}; the space has {self.names}")
        return np.concatenate([p._encode(params[p.name]) for p in self.params])

    def decode(self, z) -> dict:
        """The typed ``params`` dict of a point (ints as ``int``, choices as given)."""
        z = np.asarray(z, dtype=float)
        if z.shape != (self.dims,):
            raise ValueError(f"z must be one point of {self.dims} coordinates, got shape {z.shape}")
        return {p.name: p._decode(z[s]) for p, s in zip(self.params, self._slices, strict=True)}

    def from_unit(self, U) -> np.ndarray:
        """Points (m, dims) from one unit coordinate per parameter (m, n_params): a float's
        coordinate as it is (a stepped one, and an int, at its cell's value), a categorical's
        ``[0, 1)`` cut into equal parts, one per choice."""
        U = np.atleast_2d(np.asarray(U, dtype=float))
        if U.shape[1] != self.n_params:
            raise ValueError(f"U must have {self.n_params} columns, got shape {U.shape}")
        return np.hstack([p._from_unit(U[:, j]) for j, p in enumerate(self.params)])

    def to_unit(self, Z) -> np.ndarray:
        """The unit coordinates (m, n_params) of points (m, dims) (inverse of :meth:`from_unit`
        on its image)."""
        Z = self._points(Z, "Z")
        return np.column_stack(
            [p._to_unit(Z[:, s]) for p, s in zip(self.params, self._slices, strict=True)]
        )

    def snap(self, Z) -> np.ndarray:
        """Points moved to the nearest valid points: continuous coordinates clipped to [0, 1],
        ints and stepped floats to their values, categoricals to one-hot."""
        return self.from_unit(self.to_unit(Z))

    def grid(self) -> np.ndarray:
        """Every point of a finite space (cardinality rows, dims), in lexicographic order."""
        if self.cardinality is None:
            raise ValueError("a space with a continuous float has no grid")
        blocks = [p._grid() for p in self.params]
        rows = [np.concatenate(combo) for combo in itertools.product(*blocks)]
        return np.array(rows, dtype=float).reshape(-1, self.dims)

    def _points(self, Z, name: str) -> np.ndarray:
        Z = np.atleast_2d(np.asarray(Z, dtype=float))
        if Z.ndim != 2 or Z.shape[1] != self.dims:
            raise ValueError(f"{name} must have {self.dims} coordinates, got shape {Z.shape}")
        return Z

    # -- candidate sets ------------------------------------------------------------------------
    def sobol(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """The first ``n`` points of a Sobol sequence scrambled by ``rng`` (Owen scrambling),
        mapped by :meth:`from_unit`."""
        return self.from_unit(_sobol(self.n_params, rng).random(n))

    def neighbours(self, centers, n_each: int, rng: np.random.Generator) -> np.ndarray:
        """``n_each`` perturbations of each of ``centers`` (c, dims), grouped by center: each
        parameter is perturbed with probability ``min(1, 2 / n_params)`` (at least one per
        point); a float or int by a normal step in its unit coordinate, its standard deviation
        log-uniform in :data:`LOCAL_SCALES`, clipped to [0, 1]; a categorical to another
        choice, uniformly."""
        centers = self._points(centers, "centers")
        U0 = np.repeat(self.to_unit(centers), n_each, axis=0)
        m, P = U0.shape
        mask = rng.random((m, P)) < min(1.0, 2.0 / P)
        none = ~mask.any(axis=1)
        mask[np.flatnonzero(none), rng.integers(P, size=int(none.sum()))] = True
        lo, hi = np.log(LOCAL_SCALES)
        sigma = np.exp(rng.uniform(lo, hi, size=(m, 1)))
        moved = np.clip(U0 + sigma * rng.standard_normal((m, P)), 0.0, 1.0)
        for j, p in enumerate(self.params):
            if isinstance(p, Categorical):
                k0 = np.floor(U0[:, j] * p.count)
                shift = rng.integers(1, p.count, size=m) if p.count > 1 else np.zeros(m)
                moved[:, j] = ((k0 + shift) % p.count + 0.5) / p.count
        return self.from_unit(np.where(mask, moved, U0))


def _params_of(spec) -> list:
    if not isinstance(spec, Mapping):
        raise ValueError(f'space must be an object {{"params": [...]}}, got {spec!r}')
    unknown = [k for k in spec if k != "params"]
    if unknown:
        raise ValueError(f"space: unknown key {unknown[0]!r}; allowed: params")
    if "params" not in spec:
        raise ValueError('space: missing "params" (a list of parameters)')
    params = spec["params"]
    if isinstance(params, str | bytes) or not isinstance(params, Sequence) or not params:
        raise ValueError(f"space: params must be a non-empty list of parameters, got {params!r}")
    return list(params)


def as_space(space) -> Space:
    """A :class:`Space` from a Space, a dict ``{"params": [...]}``, a list of parameters or the
    path of a JSON file."""
    if isinstance(space, Space):
        return space
    if isinstance(space, str | os.PathLike):
        return Space.from_json(space)
    if isinstance(space, Mapping):
        return Space.from_dict(space)
    if isinstance(space, Sequence):
        return Space(space)
    raise ValueError(
        f"space must be a Space, a dict {{'params': [...]}} or a JSON file path, got {space!r}"
    )


def _sobol(d: int, rng: np.random.Generator):
    from scipy.stats import qmc

    try:  # scipy >= 1.15 names it rng
        return qmc.Sobol(d=d, scramble=True, rng=rng)
    except TypeError:  # pragma: no cover - older scipy
        return qmc.Sobol(d=d, scramble=True, seed=rng)


def row_keys(Z: np.ndarray) -> list[bytes]:
    """Each row of ``Z`` as bytes (exact equality of points)."""
    Z = np.ascontiguousarray(Z, dtype=float) + 0.0  # -0.0 == 0.0
    return [row.tobytes() for row in Z]


def distinct_new(Z: np.ndarray, taken: np.ndarray) -> np.ndarray:
    """The rows of ``Z`` equal to no row of ``taken``, each once, in order."""
    rows = np.ascontiguousarray(np.vstack([taken, Z]), dtype=float) + 0.0  # -0.0 == 0.0
    keys = rows.view(np.dtype((np.void, rows.dtype.itemsize * rows.shape[1]))).reshape(-1)
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    mine = np.arange(taken.shape[0], rows.shape[0])
    return Z[first[np.asarray(inverse).reshape(-1)[mine]] == mine]  # first of its kind, not taken


def candidate_pool(
    space: Space, rng: np.random.Generator, centers: np.ndarray, asked: np.ndarray
) -> np.ndarray:
    """The points an ask scores, none of them ``asked``: every point of a space of at most
    :data:`GRID_LIMIT` points; otherwise :data:`N_SOBOL` fresh scrambled Sobol points (from
    ``rng``) and :data:`N_PER_CENTER` neighbours (:meth:`Space.neighbours`) of each of
    ``centers`` (the best points told, best first)."""
    asked = np.asarray(asked, dtype=float).reshape(-1, space.dims)
    size = space.cardinality
    if size is not None and size <= GRID_LIMIT:
        return distinct_new(space.grid(), asked)
    pool = [space.sobol(N_SOBOL, rng)]
    if len(centers):
        pool.append(space.neighbours(centers, N_PER_CENTER, rng))
    return distinct_new(np.vstack(pool), asked)


__all__ = ["Categorical", "Float", "Int", "Space", "as_space", "candidate_pool"]
