"""Making and loading studies: create_study finds or inserts a study, load_study reads one back.

A study is one row of its storage's ``frontierbo_studies`` table: the candidate set and its
sha256, the algorithm and its settings, the seed, the column names, the pending timeout and the
direction. What defines a study cannot change once it is created: ``load_if_exists`` returns it
only when what is given agrees with what is stored (:class:`frontierbo.study.study.Study` asks
and tells).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import time
import warnings
from numbers import Integral, Real

import numpy as np

from frontierbo._validation import check_matrix
from frontierbo.io import array_to_text
from frontierbo.study.samplers import make_sampler
from frontierbo.study.storage import Storage
from frontierbo.study.study import Study

DIRECTIONS = ("maximize", "minimize")
DEFAULT_NAME = "default"
DEFAULT_ALGORITHM = "gp-ei"
#: Seconds a trial may stay pending before the next ask offers it again (its worker presumably
#: died): a day, longer than most evaluations (an assay, a simulation, a training run), short
#: enough that a killed worker's trial is not lost for good. Set ``pending_timeout`` to the
#: longest evaluation you expect (``math.inf``: never).
DEFAULT_PENDING_TIMEOUT = 24 * 3600.0


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("frontierbo")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0+unknown"


#: the columns of a study's row, in the order :class:`Study` takes them
_STUDY_COLUMNS = (
    "study_id, name, algorithm, settings, seed, columns, n_candidates, candidates, "
    "candidates_sha256, pending_timeout, created_at, direction, frontierbo_version"
)


def create_study(
    candidates,
    *,
    storage: str | os.PathLike = "study.db",
    algorithm: str | None = None,
    settings: dict | None = None,
    name: str = DEFAULT_NAME,
    columns=None,
    direction: str | None = None,
    seed: int | None = None,
    pending_timeout: float | None = None,
    load_if_exists: bool = False,
) -> Study:
    """A new study of ``candidates`` (n, d) in ``storage`` (a SQLite file by default).

    ``algorithm`` / ``settings``: the sampler (``"gp-ei"``, the default, ``"gp-ucb"``,
    ``"random"`` or a system's: :func:`~frontierbo.study.samplers.available_samplers`) and its
    keyword arguments; ``columns``: feature names (default ``x0, x1, ...``); ``direction``:
    ``"maximize"`` (default) or ``"minimize"``; ``seed`` (default 0); ``pending_timeout``:
    seconds after which a pending trial is offered again (default
    :data:`DEFAULT_PENDING_TIMEOUT`, a day; ``math.inf``: never). Rows with the same features
    are one candidate (a warning says which rows repeat which).

    With ``load_if_exists`` an existing study of that name is returned, provided its candidates
    are the same rows. What defines the study (``algorithm``, ``settings``, ``direction``,
    ``seed``, ``columns``) may be omitted, or must equal what it was created with (else one
    ValueError naming each setting with both values); a given ``pending_timeout`` is operational
    and replaces the stored one (for every worker: asks read it from the database).
    """
    X = check_matrix(candidates, "candidates")
    if columns is not None:
        columns = list(columns)
        if len(columns) != X.shape[1] or len(set(columns)) != len(columns):
            raise ValueError(f"columns must be {X.shape[1]} distinct names, got {columns!r}")
    if direction is not None and direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {DIRECTIONS}, got {direction!r}")
    if not isinstance(name, str) or not name or len(name) > 255:
        raise ValueError(f"name must be a non-empty string of at most 255 characters, got {name!r}")
    if seed is not None and (
        not isinstance(seed, Integral) or isinstance(seed, bool) or not 0 <= seed < 2**63
    ):
        raise ValueError(f"seed must be an integer in [0, 2**63), got {seed!r}")
    timeout = _UNSET if pending_timeout is None else _pending_timeout(pending_timeout)
    # the settings of a study being loaded are checked against its own algorithm, below
    deferred = load_if_exists and algorithm is None and settings is not None
    sampler = None if deferred else make_sampler(algorithm or DEFAULT_ALGORITHM, settings)
    sha = candidates_sha256(X)
    store = Storage(storage)
    store.initialise(_version())
    given = {"algorithm": algorithm, "direction": direction, "seed": seed, "columns": columns}

    def find_or_insert(ex) -> tuple[tuple, bool, dict]:
        found = ex(f"SELECT {_STUDY_COLUMNS} FROM frontierbo_studies WHERE name = :n", {"n": name})
        if found:
            row, updated = found[0], {}
            if not load_if_exists:
                return row, False, updated
            _check_same_study(store.url, row, sha, given, settings)
            if timeout is not _UNSET and timeout != row[9]:
                ex(
                    "UPDATE frontierbo_studies SET pending_timeout = :t WHERE study_id = :s",
                    {"t": timeout, "s": row[0]},
                )
                updated["pending_timeout"] = (row[9], timeout)
                row = (*row[:9], timeout, *row[10:])
            return row, False, updated
        chosen = sampler or make_sampler(DEFAULT_ALGORITHM, settings)
        study_id = ex("SELECT COALESCE(MAX(study_id), 0) + 1 FROM frontierbo_studies")[0][0]
        names = columns if columns is not None else [f"x{j}" for j in range(X.shape[1])]
        row = (study_id, name, chosen.name, json.dumps(chosen.settings()),
               int(0 if seed is None else seed), json.dumps(names), X.shape[0], array_to_text(X),
               sha, DEFAULT_PENDING_TIMEOUT if timeout is _UNSET else timeout, time.time(),
               direction or DIRECTIONS[0], _version())  # fmt: skip
        ex(
            f"INSERT INTO frontierbo_studies ({_STUDY_COLUMNS}) VALUES (:a0, :a1, :a2, "
            ":a3, :a4, :a5, :a6, :a7, :a8, :a9, :a10, :a11, :a12)",
            {f"a{i}": v for i, v in enumerate(row)},
        )
        return row, True, {}

    # another process may take the name or the next study_id between our read and our insert
    row, created, updated = store.write_retrying(find_or_insert)
    if not created and not load_if_exists:
        raise ValueError(
            f"storage {store.url!r} already has a study named {name!r}: load it with "
            "load_study / --load-if-exists, or choose another name"
        )
    study = Study(store, row)
    study.updated = updated
    _warn_duplicates(study._kept, study._distinct_of)  # the groups the Study found, not again
    return study


#: ``pending_timeout`` not given: the default for a new study, the stored one for a loaded study
_UNSET = object()


def _pending_timeout(value) -> float | None:
    """Seconds, or None for never (``math.inf``, as stored: NULL)."""
    if isinstance(value, Real) and not isinstance(value, bool) and value == math.inf:
        return None
    if isinstance(value, bool) or not isinstance(value, Real | np.floating | np.integer):
        raise ValueError(f"pending_timeout must be seconds in (0, inf], got {value!r}")
    if not float(value) > 0:  # also NaN
        raise ValueError(f"pending_timeout must be seconds in (0, inf] (inf: never), got {value!r}")
    return float(value)


def _check_same_study(url: str, row: tuple, sha: str, given: dict, settings) -> None:
    """Refuse to load a study whose rows, or whose defining settings, differ from those given
    (None: not given). One error listing each differing setting with both values."""
    (_, name, algorithm, stored_settings, seed, columns, *_rest) = row
    if row[8] != sha:
        raise ValueError(
            f"candidates differ from the rows study {name!r} was created with (sha256 "
            f"{row[8][:12]}..., now {sha[:12]}...): a study's rows cannot change"
        )
    stored = {"algorithm": algorithm, "direction": row[11], "seed": seed,
              "columns": json.loads(columns)}  # fmt: skip
    differ = [
        f"{key}: the study has {stored[key]!r}, given {value!r}"
        for key, value in given.items()
        if value is not None and value != stored[key]
    ]
    if settings is not None and (given["algorithm"] in (None, algorithm)):
        have = json.loads(stored_settings)
        want = json.loads(json.dumps(make_sampler(algorithm, settings).settings()))
        keys = sorted(k for k in set(have) | set(want) if have.get(k) != want.get(k))
        if keys:
            differ.append(
                f"settings: the study has { ({k: have.get(k) for k in keys})!r}, "
                f"given { ({k: want.get(k) for k in keys})!r}"
            )
    if differ:
        raise ValueError(
            f"study {name!r} in storage {url!r} was created with other settings ("
            + "; ".join(differ)
            + "): what defines a study cannot change on load; omit them, or create a new "
            "study (another name)"
        )


def _warn_duplicates(kept: np.ndarray, distinct_of: np.ndarray) -> None:
    repeats = distinct_of.size - kept.size
    if repeats == 0:
        return
    groups: dict[int, list[int]] = {}
    first_of = kept[distinct_of]
    for row in np.flatnonzero(first_of != np.arange(distinct_of.size)):  # the repeats only
        groups.setdefault(int(first_of[row]), []).append(int(row))
    shown = [
        f"{'rows' if len(rows) > 1 else 'row'} {', '.join(map(str, rows[:5]))}"
        f"{f' (and {len(rows) - 5} more)' if len(rows) > 5 else ''} "
        f"{'repeat' if len(rows) > 1 else 'repeats'} row {first}"
        for first, rows in list(groups.items())[:5]
    ]
    more = f"; and {len(groups) - 5} more groups" if len(groups) > 5 else ""
    warnings.warn(
        f"candidates: {repeats} duplicate rows (the same features as an earlier row) are left "
        f"out; the first of equal rows keeps its row number: {'; '.join(shown)}{more}",
        UserWarning,
        stacklevel=3,
    )


def load_study(*, storage: str | os.PathLike = "study.db", name: str | None = None) -> Study:
    """The study ``name`` of ``storage`` (``name`` may be omitted when there is only one)."""
    if isinstance(storage, str | os.PathLike) and _sqlite_missing(storage):
        raise FileNotFoundError(f"storage {os.fspath(storage)!r} does not exist")
    store = Storage(storage)
    store.check_readable()
    with store.transaction(write=False) as ex:
        rows = ex(f"SELECT {_STUDY_COLUMNS} FROM frontierbo_studies ORDER BY study_id")
    names = [r[1] for r in rows]
    if name is None:
        if len(rows) != 1:
            raise ValueError(f"storage {store.url!r} holds {len(rows)} studies {names}: give name=")
        return Study(store, rows[0])
    if name not in names:
        raise ValueError(f"storage {store.url!r} has no study named {name!r} (it has {names})")
    return Study(store, rows[names.index(name)])


def candidates_sha256(X: np.ndarray) -> str:
    """sha256 of the rows as little-endian float64, with their shape."""
    data = np.ascontiguousarray(X, dtype="<f8")
    return hashlib.sha256(repr(data.shape).encode() + data.tobytes()).hexdigest()


def _sqlite_missing(storage) -> bool:
    from frontierbo.study.storage import _sqlite_path

    path = _sqlite_path(os.fspath(storage))
    return path is not None and not os.path.exists(path)


__all__ = ["create_study", "load_study"]
