"""Making and loading studies: create_study finds or inserts a study, load_study reads one back.

A study is one row of its storage's ``frontierbo_studies`` table: the candidate set and its
sha256 (or, for a study over a search space, the space and its sha256), the algorithm and its
settings, the seed, the column names, the pending timeout and the direction. What defines a
study cannot change once it is created: ``load_if_exists`` returns it only when what is given
agrees with what is stored (:class:`frontierbo.study.study.Study` asks and tells).
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
from sqlalchemy import delete, func, insert, select, update

from frontierbo._validation import check_matrix
from frontierbo.io import array_to_text
from frontierbo.study import schema
from frontierbo.study.samplers import make_sampler, serves_spaces
from frontierbo.study.space import Space, as_space
from frontierbo.study.storage import Storage, default_storage
from frontierbo.study.study import Study
from frontierbo.study.tables import CandidateTable, save_table

DIRECTIONS = ("maximize", "minimize")
#: Optuna's default: a study told losses minimises them unless it is told otherwise.
DEFAULT_DIRECTION = "minimize"
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
S = schema.studies.c
#: the algorithms that serve a space study (the systems' samplers choose among rows)
SPACE_ALGORITHMS = ("gp-ei", "gp-ucb", "random")


def create_study(
    candidates=None,
    *,
    space: Space | dict | str | os.PathLike | None = None,
    storage: str | os.PathLike | None = None,
    algorithm: str | None = None,
    settings: dict | None = None,
    name: str = DEFAULT_NAME,
    columns=None,
    direction: str | None = None,
    seed: int | None = None,
    pending_timeout: float | None = None,
    load_if_exists: bool = False,
) -> Study:
    """A new study of ``candidates`` (n, d), or over a search ``space``, in ``storage`` (a
    SQLite file: ``$FRONTIERBO_STORAGE``, else ``study.db``).

    ``space``: a :class:`~frontierbo.study.space.Space`, a dict ``{"params": [...]}`` or the path
    of such a JSON file (float, log-scaled float, int, categorical parameters); then each
    ``trial.params`` holds typed values by parameter name and there are no rows (``columns``
    does not apply: the space names its parameters). Give ``candidates`` or ``space``.
    ``candidates`` may be a :class:`~frontierbo.study.tables.CandidateTable` (a CSV read by
    :func:`~frontierbo.study.tables.read_candidates`: ID, text, integer and category columns);
    its column kinds and carried values are stored with the study.

    ``algorithm`` / ``settings``: the sampler (``"gp-ei"``, the default, ``"gp-ucb"``,
    ``"random"`` or a system's: :func:`~frontierbo.study.samplers.available_samplers`) and its
    keyword arguments; ``columns``: feature names (default ``x0, x1, ...``); ``direction``:
    ``"minimize"`` (default, as Optuna's) or ``"maximize"``; ``seed`` (default 0); ``pending_timeout``:
    seconds after which a pending trial is offered again (default
    :data:`DEFAULT_PENDING_TIMEOUT`, a day; ``math.inf``: never). Rows with the same features
    are one candidate (a warning says which rows repeat which).

    With ``load_if_exists`` an existing study of that name is returned, provided its candidates
    are the same rows. What defines the study (``algorithm``, ``settings``, ``direction``,
    ``seed``, ``columns``) may be omitted, or must equal what it was created with (else one
    ValueError naming each setting with both values); a given ``pending_timeout`` is operational
    and replaces the stored one (for every worker: asks read it from the database).
    """
    storage = default_storage() if storage is None else storage
    table = candidates if isinstance(candidates, CandidateTable) else None
    if table is not None:  # the model's matrix and its column names; the rest is stored below
        candidates, columns = table.X, table.names if columns is None else columns
    if (candidates is None) == (space is None):
        raise ValueError(
            "create_study needs candidates= (a table of rows) or space= (a search space), "
            f"{'not both' if space is not None else 'got neither'}"
        )
    if space is not None:
        space = as_space(space)
        if columns is not None:
            raise ValueError(
                "columns name the features of candidate rows; a space names its own parameters"
            )
        X, sha = None, space.sha256
    else:
        X = check_matrix(candidates, "candidates")
        sha = candidates_sha256(X)
    if X is not None and columns is not None:
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
    if space is not None and sampler is not None:
        _check_space_sampler(sampler)
    store = Storage(storage)
    store.initialise(_version())
    given = {"algorithm": algorithm, "direction": direction, "seed": seed, "columns": columns}

    def find_or_insert(ex) -> tuple[tuple, bool, dict]:
        found = ex(select(*schema.study_columns()).where(S.name == name))
        if found:
            row, updated = found[0], {}
            if not load_if_exists:
                return row, False, updated
            _check_same_study(store.url, row, sha, given, settings, space is not None)
            if timeout is not _UNSET and timeout != row[9]:
                ex(
                    update(schema.studies)
                    .where(S.study_id == row[0])
                    .values(pending_timeout=timeout)
                )
                updated["pending_timeout"] = (row[9], timeout)
                row = (*row[:9], timeout, *row[10:])
            return row, False, updated
        chosen = sampler or make_sampler(DEFAULT_ALGORITHM, settings)
        if space is not None:
            _check_space_sampler(chosen)
        study_id = ex(select(func.coalesce(func.max(S.study_id), 0) + 1))[0][0]
        if space is not None:  # no rows: the space, stored as canonical JSON
            names, n, blob, space_text = space.names, 0, "", space.dumps()
        else:
            names = columns if columns is not None else [f"x{j}" for j in range(X.shape[1])]
            n, blob, space_text = X.shape[0], array_to_text(X), None
        row = (study_id, name, chosen.name, json.dumps(chosen.settings()),
               int(0 if seed is None else seed), json.dumps(names), n, blob,
               sha, DEFAULT_PENDING_TIMEOUT if timeout is _UNSET else timeout, time.time(),
               direction or DEFAULT_DIRECTION, _version(), space_text)  # fmt: skip
        ex(insert(schema.studies).values(dict(zip(schema.STUDY_COLUMNS, row, strict=True))))
        if table is not None:
            save_table(ex, study_id, table)
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
    if study.space is None:
        _warn_duplicates(study._kept, study._distinct_of)  # the groups the Study found, once
    return study


def _check_space_sampler(sampler) -> None:
    """A space study needs a sampler that asks for points, on the space's own encoding."""
    if not serves_spaces(sampler):
        raise ValueError(
            f"algorithm {sampler.name!r} chooses among candidate rows; a study over a space "
            f"takes one of {list(SPACE_ALGORITHMS)}"
        )
    if getattr(sampler, "scaling", "unit-cube") != "unit-cube":
        raise ValueError(
            f"settings of algorithm {sampler.name!r}: scaling applies to candidate rows; a "
            f"space is encoded to the unit cube (got scaling={sampler.scaling!r})"
        )


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


def _check_same_study(
    url: str, row: tuple, sha: str, given: dict, settings, is_space: bool = False
) -> None:
    """Refuse to load a study whose rows (or space), or whose defining settings, differ from
    those given (None: not given). One error listing each differing setting with both values."""
    (_, name, algorithm, stored_settings, seed, columns, *_rest) = row
    stored_space = row[13] is not None
    if stored_space != is_space:
        kinds = ("a study of candidate rows", "a study over a search space")
        raise ValueError(
            f"study {name!r} is {kinds[stored_space]}, given {'a space' if is_space else 'rows'}"
        )
    if is_space and row[8] != sha:
        raise ValueError(
            f"space differs from the one study {name!r} was created with (sha256 "
            f"{row[8][:12]}..., now {sha[:12]}...): a study's space cannot change"
        )
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


def load_study(*, storage: str | os.PathLike | None = None, name: str | None = None) -> Study:
    """The study ``name`` of ``storage`` (``name`` may be omitted when there is only one;
    ``storage`` defaults to ``$FRONTIERBO_STORAGE``, else ``study.db``)."""
    store = _existing(storage)
    with store.transaction(write=False) as ex:
        rows = ex(select(*schema.study_columns()).order_by(S.study_id))
    names = [r[1] for r in rows]
    if name is None:
        if len(rows) != 1:
            raise ValueError(f"storage {store.url!r} holds {len(rows)} studies {names}: give name=")
        return Study(store, rows[0])
    if name not in names:
        raise ValueError(f"storage {store.url!r} has no study named {name!r} (it has {names})")
    return Study(store, rows[names.index(name)])


def study_summaries(*, storage: str | os.PathLike | None = None) -> list[dict]:
    """One dict per study of ``storage``, in creation order: name, algorithm, direction,
    trials by state, the best told value and when it was created (Unix seconds)."""
    store = _existing(storage)
    with store.transaction(write=False) as ex:
        T = schema.trials.c
        studies = ex(
            select(S.study_id, S.name, S.algorithm, S.direction, S.created_at, S.space)
            .order_by(S.study_id)
        )  # fmt: skip
        counts = ex(select(T.study_id, T.state, func.count()).group_by(T.study_id, T.state))
        best = ex(
            select(T.study_id, func.max(T.value), func.min(T.value))
            .where(T.state == "complete").group_by(T.study_id)
        )  # fmt: skip
    store.close()
    by_state = {}
    for study_id, state, n in counts:
        by_state.setdefault(study_id, {})[state] = n
    extremes = {study_id: (high, low) for study_id, high, low in best}
    out = []
    for study_id, name, algorithm, direction, created_at, space in studies:
        high, low = extremes.get(study_id, (None, None))
        states = by_state.get(study_id, {})
        out.append({
            "name": name, "algorithm": algorithm, "direction": direction,
            "kind": "rows" if space is None else "space",
            "trials": sum(states.values()), "states": states,
            "best_value": high if direction == "maximize" else low, "created_at": created_at,
        })  # fmt: skip
    return out


def delete_study(*, name: str, storage: str | os.PathLike | None = None) -> int:
    """Delete study ``name`` and everything it holds (trials, fits, its CSV's description)
    from ``storage`` in one transaction; returns how many trials it had."""
    store = _existing(storage)

    def remove(ex) -> int:
        found = ex(select(S.study_id).where(S.name == name))
        if not found:
            names = [r[0] for r in ex(select(S.name).order_by(S.study_id))]
            raise ValueError(f"storage {store.url!r} has no study named {name!r} (it has {names})")
        study_id = found[0][0]
        T = schema.trials.c
        n = ex(select(func.count()).select_from(schema.trials).where(T.study_id == study_id))
        for table in (schema.trials, schema.fits, schema.tables, schema.studies):
            ex(delete(table).where(table.c.study_id == study_id))
        return int(n[0][0])

    try:
        return store.write_retrying(remove)
    finally:
        store.close()


def _existing(storage) -> Storage:
    """The storage of an existing study database (migrated if older)."""
    storage = default_storage() if storage is None else storage
    if isinstance(storage, str | os.PathLike) and _sqlite_missing(storage):
        raise FileNotFoundError(f"storage {os.fspath(storage)!r} does not exist")
    store = Storage(storage)
    store.check_readable()
    return store


def candidates_sha256(X: np.ndarray) -> str:
    """sha256 of the rows as little-endian float64, with their shape."""
    data = np.ascontiguousarray(X, dtype="<f8")
    return hashlib.sha256(repr(data.shape).encode() + data.tobytes()).hexdigest()


def _sqlite_missing(storage) -> bool:
    from frontierbo.study.storage import _sqlite_path

    path = _sqlite_path(os.fspath(storage))
    return path is not None and not os.path.exists(path)


__all__ = ["create_study", "load_study"]
