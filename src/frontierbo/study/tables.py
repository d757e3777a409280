"""Candidate tables from real CSV files: numbers, integers, categories, and ID/text columns.

:func:`read_candidates` reads a CSV with pandas (its C parser and dtype inference: tens of times
faster than a Python loop over cells) and classifies every column:

* **float** feature: a numeric column (returned as floats);
* **int** feature: a column of whole numbers written without a decimal point (returned as ints);
* **bool** feature: ``True`` / ``False`` cells (one 0/1 column; returned as bools);
* **categorical** feature: text with repeated values, e.g. a solvent; one-hot encoded;
* **carried**: an ID or text column that is not a feature. Its values are kept per row and
  returned with the row (by ``ask`` and ``study show``), never shown to the model.

The rule, for a column the user did not classify (first match wins):

1. text (not every cell a number): carried if every value is distinct (a label: a category
   seen once says nothing about other rows), if it is *named like an ID* (below), or if it has
   one value in every row (a constant says nothing at all); else categorical, with at most
   :data:`MAX_CHOICES` categories. Text that mixes numbers and words (``1.5``, ``n/a``) is
   refused, naming the first word (it is usually a typo in a numeric column), unless it is
   named like an ID;
2. whole numbers: carried if the first column holds the row numbers ``0..n-1`` or ``1..n`` in
   file order (an index column, as ``DataFrame.to_csv`` or a spreadsheet writes it) and another
   feature remains, or if every value is distinct and the column is named like an ID (or is
   the first column and has no name); else an int feature;
3. other numbers: a float feature; ``True`` / ``False``: a bool feature.

*Named like an ID*: one of its words is ``id``, ``ids``, ``uuid`` or ``guid`` (``id``,
``sample_id``, ``Sample ID``, ``sampleId``; not ``acid`` or ``valid``), or the whole name is
``name``, ``key``, ``label``, ``index`` or ``idx`` (but ``solvent_name`` is a category).

The user overrides any of it: ``features=`` (``--features``) names the features exactly (every
other column is carried), ``ids=`` (``--ids``) carries columns, ``categorical=``
(``--categorical``) makes columns categorical features (numeric codes too: a batch number).
:meth:`CandidateTable.describe` says, per column, what it became and why.

Categories are one-hot encoded (a 0/1 column per category, in sorted order, as scikit-learn's
``OneHotEncoder``): every two categories are then equally far apart, so no order is invented
(codes 0, 1, 2 would put ``ethanol`` between ``acetone`` and ``water``), and the studies' GP, a
stationary ARD kernel on columns scaled to the unit cube, needs no new kernel: two rows' one-hot
blocks are as far apart as their categories differ (a Hamming distance, as in BoTorch's
categorical kernel), with a lengthscale per category (one more input per category). Search
spaces (:mod:`frontierbo.study.space`) encode their categorical parameters the same way.

Errors are today's: a numeric file gets the messages of :mod:`frontierbo.io` (each names the
column, the row and its file line; the slow reader runs only to word an error), every feature
cell must be finite and at most :data:`~frontierbo.io.MAX_ABS_VALUE` in magnitude, and a
categorical feature may not have an empty cell.
"""

from __future__ import annotations

import csv
import json
import math
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from sqlalchemy import insert, select

from frontierbo.io import (
    MAX_ABS_VALUE,
    check_magnitude,
    column,
    column_names,
    data_path,
    feature_names,
    parse_cell,
    read_table,
)
from frontierbo.study import schema

#: Most categories a categorical feature may have (each is one column of the GP's inputs).
MAX_CHOICES = 100
#: The kind of a column that is not a feature (the features: float, int, bool, categorical).
CARRIED = "carried"
#: Integers beyond this are not exact as float64 inputs of the model.
_MAX_EXACT_INT = 2**53
_ID_WORDS = frozenset({"id", "ids", "uuid", "guid"})
_ID_NAMES = frozenset({"name", "key", "label", "index", "idx"})
_ROW_NUMBERS = "row numbers"


@dataclass(frozen=True)
class Column:
    """One column of the file: its ``name``, its ``kind`` (``float``, ``int``, ``bool``,
    ``categorical`` or ``carried``), ``why`` it was so classified, and a categorical
    feature's ``choices`` (sorted; one one-hot input column each)."""

    name: str
    kind: str
    why: str
    choices: tuple = ()

    @property
    def is_feature(self) -> bool:
        return self.kind != CARRIED

    def encoded_names(self) -> list[str]:
        """This feature's columns of the model's inputs (``solvent=water`` per category)."""
        if self.kind == "categorical":
            return [f"{self.name}={choice}" for choice in self.choices]
        return [self.name]


@dataclass(frozen=True)
class CandidateTable:
    """A candidate table read by :func:`read_candidates`.

    ``X`` (n, d): what the model sees, one column per entry of ``names`` (numeric features as
    they are, bools as 0/1, one 0/1 column per category); ``columns``: every column of the file
    but the target, in file order, each with its kind and why; ``features``: the feature
    columns in the order of ``X``; ``carried``: each carried column's values, one per row
    (``None`` for an empty cell); ``target``: the ``target=`` column as floats, or None.
    ``params(i)`` / ``carried_values(i)``: row ``i`` as typed values by column name.
    """

    X: np.ndarray
    names: list[str]
    columns: tuple[Column, ...]
    features: tuple[Column, ...]
    carried: dict[str, list] = field(repr=False)
    target: np.ndarray | None = None

    def __len__(self) -> int:
        return self.X.shape[0]

    def params(self, i: int) -> dict:
        """Row ``i``'s features: floats, ints as ints, bools as bools, categories as given."""
        return decode_row(self.features, self.X[i])

    def encode(self, params) -> np.ndarray:
        """The encoded row (d,) of typed features by name (the inverse of :meth:`params`)."""
        names = [c.name for c in self.features]
        if not isinstance(params, dict) or set(params) != set(names):
            raise ValueError(f"params must name exactly the features {names}, got {params!r}")
        parts = []
        for c in self.features:
            value = params[c.name]
            if c.kind == "categorical":
                if value not in c.choices:
                    raise ValueError(
                        f"params: {c.name} must be one of {list(c.choices)}, got {value!r}"
                    )
                parts.append(np.array([float(value == choice) for choice in c.choices]))
                continue
            if isinstance(value, str) or not isinstance(value, int | float | np.number):
                raise ValueError(f"params: {c.name} must be a number, got {value!r}")
            parts.append(np.array([float(value)]))
        return np.concatenate(parts)

    def row_of(self, params) -> int:
        """The first row whose features are ``params`` (typed, by name)."""
        hits = np.flatnonzero(np.all(self.encode(params) == self.X, axis=1))
        if hits.size == 0:
            raise ValueError(f"params {params!r} are no candidate row (features must be equal)")
        return int(hits[0])

    def carried_values(self, i: int) -> dict:
        """Row ``i``'s carried columns (IDs, text) by name."""
        return {name: values[i] for name, values in self.carried.items()}

    def to_json(self) -> str:
        """The columns (kinds, reasons, categories) and the carried values as JSON: what a
        study stores beside ``X`` to give its rows back typed (:func:`load_table`)."""
        return json.dumps(
            {
                "columns": [
                    {"name": c.name, "kind": c.kind, "why": c.why}
                    | ({"choices": list(c.choices)} if c.choices else {})
                    for c in self.columns
                ],
                "features": [c.name for c in self.features],
                "carried": self.carried,
            }
        )

    @classmethod
    def from_json(cls, text: str, X: np.ndarray, names: list[str]) -> CandidateTable:
        """The table of :meth:`to_json` around the stored matrix ``X`` and its ``names``."""
        data = json.loads(text)
        columns = tuple(
            Column(c["name"], c["kind"], c["why"], tuple(c.get("choices", ())))
            for c in data["columns"]
        )
        by_name = {c.name: c for c in columns}
        features = tuple(by_name[name] for name in data["features"])
        return cls(X, list(names), columns, features, data["carried"])

    def describe(self) -> list[str]:
        """One line per column: what it became and why."""
        lines = []
        for c in self.columns:
            what = f"{c.kind} feature" if c.is_feature else "carried (not a feature)"
            if c.kind == "categorical":
                what += f", {len(c.choices)} categories one-hot"
            lines.append(f"{c.name}: {what} ({c.why})")
        return lines


def decode_row(features, x) -> dict:
    """The typed features of one encoded row ``x`` (the inverse of the encoding)."""
    out, j = {}, 0
    for c in features:
        if c.kind == "categorical":
            block = x[j : j + len(c.choices)]
            out[c.name] = c.choices[int(np.argmax(block))]
            j += len(c.choices)
            continue
        value = float(x[j])
        out[c.name] = int(value) if c.kind == "int" else bool(value) if c.kind == "bool" else value
        j += 1
    return out


def read_candidates(
    path,
    *,
    features=None,
    ids=None,
    categorical=None,
    target: str | None = None,
    flag: str = "--candidates",
    max_choices: int = MAX_CHOICES,
) -> CandidateTable:
    """Read and classify the candidate rows of the CSV file ``path`` (module docstring: the
    rule). ``features``, ``ids``, ``categorical``: column names that override the rule;
    ``target``: a column of values (floats, neither a feature nor carried); ``flag`` names the
    file in messages; ``max_choices``: most categories of a categorical feature."""
    path = data_path(path, flag)
    where = f"{flag} {str(path)!r}"
    header = _header(path, flag)
    frame = _frame(path, flag, header)
    if len(frame) == 0:
        raise ValueError(f"{where} has no rows")
    features = None if features is None else feature_names(features)
    ids = column_names(ids, "--ids")
    categorical = column_names(categorical, "--categorical")
    _check_overrides(header, features, ids, categorical, target, where)
    slow = _SlowReader(path, flag)
    if frame.isna().to_numpy().any():  # a short line reads as empty cells: today's error first
        slow.table  # noqa: B018 - reading it raises for a line with too few fields

    y = None
    if target is not None:
        y = _numbers(frame, header.index(target), target, "target", slow, where)
    chosen = set(features or ())
    classified: dict[str, Column] = {}
    for j, name in enumerate(header):
        if name == target:
            continue
        if name in ids:
            classified[name] = Column(name, CARRIED, "--ids")
        elif name in categorical:
            classified[name] = Column(name, "categorical", "--categorical")
        elif features is not None:
            kind = _kind(frame.iloc[:, j]) if name in chosen else CARRIED
            why = "--features" if name in chosen else "not in --features"
            classified[name] = Column(name, kind, why)
        else:
            classified[name] = _classify(frame.iloc[:, j], name, j, slow, where)
    if not any(c.is_feature for c in classified.values()):
        for name, c in classified.items():  # an index column is a feature when all else is not
            if c.why.startswith(_ROW_NUMBERS):
                classified[name] = Column(
                    name, "int", c.why.removesuffix(": an index") + ", but no other feature"
                )
    order = features if features is not None else [n for n in header if n in classified]
    chosen_features = [classified[n] for n in order if classified[n].is_feature]
    if not chosen_features:
        shown = "; ".join(f"{c.name}: {c.why}" for c in classified.values())
        raise ValueError(
            f"{where} has no feature column (every column is carried: {shown}); choose the "
            "features with --features"
        )

    blocks, final = [], []
    for c in chosen_features:
        j = header.index(c.name)
        if c.kind == "categorical":
            c, block = _one_hot(frame.iloc[:, j], c, j, slow, max_choices, where)
        elif c.kind == "bool":
            block = frame.iloc[:, j].to_numpy(dtype=float)
        else:
            block = _numbers(frame, j, c.name, "feature", slow, where)
            whole = frame.iloc[:, j].to_numpy() if c.kind == "int" else np.zeros(0, int)
            beyond = (whole > _MAX_EXACT_INT) | (whole < -_MAX_EXACT_INT)
            if beyond.any():
                i = int(np.argmax(beyond))
                raise ValueError(
                    f"{where}: feature column {c.name!r}, row {i} (file line "
                    f"{slow.lines[i]}): {frame.iloc[i, j]} is beyond 2**53, where integers are "
                    "no longer exact as model inputs; carry the column with --ids"
                )
        classified[c.name] = c
        final.append(c)
        blocks.append(block.reshape(len(frame), -1))
    names = [name for c in final for name in c.encoded_names()]
    if len(set(names)) != len(names):
        clash = sorted({n for n in names if names.count(n) > 1})
        raise ValueError(
            f"{where}: the model's input columns {clash} would be named twice (a category "
            "column 'a=b' and a column named 'a=b'); rename one of them"
        )
    X = np.ascontiguousarray(np.hstack(blocks), dtype=float)
    carried = {
        c.name: _carried_values(frame.iloc[:, header.index(c.name)])
        for c in classified.values()
        if not c.is_feature
    }
    columns = tuple(classified[n] for n in header if n in classified)
    return CandidateTable(X, names, columns, tuple(final), carried, y)


# -- a study's table ---------------------------------------------------------------------------
def save_table(ex, study_id: int, table: CandidateTable) -> None:
    """Store ``table``'s description for ``study_id`` (in the transaction that inserts it;
    ``frontierbo_tables``, :mod:`frontierbo.study.storage`)."""
    ex(insert(schema.tables).values(study_id=study_id, description=table.to_json()))


def load_table(ex, study_id: int, X: np.ndarray, names: list[str]) -> CandidateTable | None:
    """The table study ``study_id`` was created from (typed rows, carried values) around its
    stored matrix ``X`` and column ``names``, or None for a study of a plain matrix."""
    rows = ex(select(schema.tables.c.description).where(schema.tables.c.study_id == study_id))
    return CandidateTable.from_json(rows[0][0], X, names) if rows else None


# -- measurements made before the study ----------------------------------------------------------
def read_observed(path, target: str, names: list[str], flag: str = "--observed"):
    """``(params, values)`` of a CSV of points measured before a study: ``params`` one dict per
    line of the columns ``names`` (a space's parameters, or a table's features; other columns
    are ignored), ``values`` the ``target`` column as floats (each finite)."""
    path = data_path(path, flag)
    header = _header(path, flag)
    missing = [name for name in [*names, target] if name not in header]
    if missing:
        raise ValueError(f"{flag} {str(path)!r} has no column {missing[0]!r} (it has {header})")
    frame = _frame(path, flag, header)
    values = frame[target].to_numpy()
    params = []
    for i in range(frame.shape[0]):
        try:
            value = float(values[i])
        except (TypeError, ValueError):
            value = math.nan
        if not math.isfinite(value):
            raise ValueError(
                f"{flag} {str(path)!r} line {i + 2}: {target} must be a finite number, "
                f"got {values[i]!r}"
            )
        params.append({name: _plain(frame[name].iloc[i]) for name in names})
    return params, np.array([float(v) for v in values], dtype=float)


def _plain(value):
    """A pandas cell as a plain Python value (numpy scalars as Python's, stripped text)."""
    value = value.item() if isinstance(value, np.generic) else value
    return value.strip() if isinstance(value, str) else value


# -- reading ------------------------------------------------------------------------------------
def _header(path: Path, flag: str) -> list[str]:
    """The stripped header; today's errors (empty file, not UTF-8, duplicate names)."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as fh:
            header = next(csv.reader(fh), None)
    except (UnicodeDecodeError, csv.Error):
        header = None
    names = None if header is None else [name.strip() for name in header]
    if not names or len(set(names)) != len(names):
        read_table(path, flag)  # raises the reader's own error
        raise ValueError(f"{flag} {str(path)!r}: cannot read its header row")
    # an unnamed column (the index DataFrame.to_csv writes) is named as pandas names it
    return [name or (f"Unnamed: {j}" if f"Unnamed: {j}" not in names else name)
            for j, name in enumerate(names)]  # fmt: skip


def _frame(path: Path, flag: str, header: list[str]):
    """The file as a DataFrame (columns named as in ``header``); a malformed file gets
    today's error (field counts, encoding), worded by :func:`frontierbo.io.read_table`."""
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - a dependency of frontierbo
        raise ImportError(f"reading {flag} needs pandas: pip install 'pandas>=2.1'") from None
    from pandas.api.types import is_bool_dtype, is_numeric_dtype

    try:
        with warnings.catch_warnings():
            # a first data line with extra fields is dropped with a ParserWarning: an error here
            warnings.simplefilter("error", pd.errors.ParserWarning)
            frame = pd.read_csv(
                path,
                encoding="utf-8-sig",
                keep_default_na=False,  # "NA", "None", "null" are categories, not missing
                na_values=[""],
                index_col=False,
                low_memory=False,
                # each cell's float() bit for bit (the sha256 of a study's rows depends on it):
                # pandas 3 parses so by default, pandas 2 only with round_trip (4x slower)
                **(
                    {}
                    if int(pd.__version__.split(".")[0]) >= 3
                    else {"float_precision": "round_trip"}
                ),
            )
    except (ValueError, UnicodeDecodeError, pd.errors.ParserWarning) as exc:
        read_table(path, flag)  # today's wording of the problem, if it sees one
        raise ValueError(f"{flag} {str(path)!r} is not a valid CSV file: {exc}") from None
    if frame.shape[1] != len(header):  # e.g. blank lines before the header, which pandas skips
        read_table(path, flag)
        raise ValueError(
            f"{flag} {str(path)!r}: its header has {len(header)} names but pandas read "
            f"{frame.shape[1]} columns; is the first line the header?"
        )
    frame.columns = header
    for name in header:
        if not (is_numeric_dtype(frame[name]) or is_bool_dtype(frame[name])):
            frame[name] = _texts(frame[name])
    return frame


class _SlowReader:
    """Today's reader of the same file, run only to word an error (file lines, raw cells)."""

    def __init__(self, path: Path, flag: str):
        self.path, self.flag = path, flag
        self._table = None

    @property
    def table(self):
        if self._table is None:
            self._table = read_table(self.path, self.flag)
        return self._table

    @property
    def lines(self) -> list[int]:
        return self.table[2]

    def column(self, j: int, name: str, role: str) -> np.ndarray:
        """Column ``j`` by today's rules: raises today's error for its first bad cell."""
        _, rows, lines = self.table
        return column(rows, lines, j, name, role)


def _numbers(frame, j: int, name: str, role: str, slow: _SlowReader, where: str) -> np.ndarray:
    """Column ``j`` as finite floats of bounded magnitude; else today's error."""
    from pandas.api.types import is_bool_dtype, is_numeric_dtype

    series = frame.iloc[:, j]
    values = None
    if is_numeric_dtype(series) and not is_bool_dtype(series):
        values = series.to_numpy(dtype=float)
        if not np.isfinite(values).all():
            values = None
    if values is None:  # text, empty cells, nan, inf, 1e400: the reader's own message
        values = slow.column(j, name, role)
    if np.abs(values).max() > MAX_ABS_VALUE:
        check_magnitude(values, slow.lines, name, role, where)
    return values


def _carried_values(series) -> list:
    """Python values, ``None`` for an empty cell, text stripped."""
    from pandas.api.types import is_bool_dtype, is_numeric_dtype

    if not (is_numeric_dtype(series) or is_bool_dtype(series)):
        return series.tolist()  # stripped text, None for an empty cell (_frame)
    if not series.isna().any():
        return series.tolist()
    present = series.dropna().to_numpy(dtype=float)
    whole = bool(np.all(present == np.round(present)))  # integers with a gap read as floats
    return [None if v != v else int(v) if whole else v for v in series.tolist()]


# -- classifying --------------------------------------------------------------------------------
def _words(name: str) -> list[str]:
    return [w.lower() for w in re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+", name)]


def id_named(name: str) -> bool:
    """Whether ``name`` is named like an ID column (module docstring)."""
    whole = re.sub(r"[\s_\-.]", "", name).lower()
    return whole in _ID_NAMES or any(w in _ID_WORDS for w in _words(name))


def _unnamed(name: str) -> bool:
    return not name or re.fullmatch(r"Unnamed: \d+", name) is not None


def _kind(series) -> str:
    """The feature kind of a column the user made a feature."""
    from pandas.api.types import is_bool_dtype, is_integer_dtype, is_numeric_dtype

    if is_bool_dtype(series):
        return "bool"
    if is_integer_dtype(series):
        return "int"
    if is_numeric_dtype(series):
        return "float"
    if _parses(series.dropna().unique()).any():
        return "float"  # nan, inf or a typo among numbers: refused in today's words
    return "categorical"


def _texts(series):
    """A text column's cells stripped (as today's reader does), empty ones None; each
    distinct value is stripped once."""
    import pandas as pd

    codes, uniques = pd.factorize(series, use_na_sentinel=True)
    stripped = [str(value).strip() or None for value in np.asarray(uniques, dtype=object).tolist()]
    values = np.array([*stripped, None], dtype=object)  # code -1 (a missing cell): the last
    return pd.Series(values[codes], index=series.index, dtype=object, name=series.name)


def _parses(values) -> np.ndarray:
    return np.array([parse_cell(str(v)) is not None for v in values], dtype=bool)


def _classify(series, name: str, j: int, slow: _SlowReader, where: str) -> Column:
    from pandas.api.types import is_bool_dtype, is_integer_dtype, is_numeric_dtype

    n = len(series)
    if _unnamed(name):
        if j == 0 and is_integer_dtype(series) and series.is_unique:  # DataFrame.to_csv's index
            return Column(name, CARRIED, "no name, distinct whole numbers: an index")
        raise ValueError(
            f"{where}: column {j + 1} has no name in the header; name it or choose the "
            "input columns with --features"
        )
    if is_bool_dtype(series):
        return Column(name, "bool", "True / False")
    if is_integer_dtype(series):
        values = series.to_numpy()
        if (j == 0 and n > 1) and (
            np.array_equal(values, np.arange(n)) or np.array_equal(values, np.arange(1, n + 1))
        ):
            return Column(name, CARRIED, f"{_ROW_NUMBERS} {values[0]}..{values[-1]}: an index")
        if id_named(name) and series.is_unique:
            return Column(name, CARRIED, "named like an ID, distinct whole numbers")
        return Column(name, "int", "whole numbers")
    if is_numeric_dtype(series):
        return Column(name, "float", "numbers")
    present = series.dropna()
    distinct = present.unique()
    numeric = _parses(distinct)
    if numeric.all():  # numbers spelled nan / inf / 1e400 (or 1_000): today's reader decides
        slow.column(j, name, "feature")
        return Column(name, "float", "numbers")
    if numeric.any() and not id_named(name):  # usually a typo in a numeric column
        word = distinct[np.flatnonzero(~numeric)[0]]
        i = int(np.flatnonzero((series == word).to_numpy())[0])
        raise ValueError(
            f"feature column {name!r} is not numeric (row {i}: {word!r}): it mixes numbers and "
            "text; fix that cell, or classify the column with --categorical (a category "
            "feature), --ids (carried, not a feature) or --features"
        )
    if len(distinct) == len(present):
        return Column(name, CARRIED, "text, every value distinct")
    if id_named(name):
        return Column(name, CARRIED, "text named like an ID")
    if len(distinct) == 1 and len(present) == n:
        return Column(name, CARRIED, f"text, the same value {distinct[0]!r} in every row")
    return Column(name, "categorical", "text with repeated values")


def _one_hot(series, c: Column, j: int, slow: _SlowReader, max_choices: int, where: str):
    """The one-hot block of a categorical feature and the column with its choices."""
    import pandas as pd

    missing = series.isna().to_numpy()
    if missing.any():
        i = int(np.flatnonzero(missing)[0])
        raise ValueError(
            f"{where}: feature column {c.name!r}, row {i} (file line {slow.lines[i]}) is empty: "
            "every value of a categorical feature must be a category (remove or fill that row)"
        )
    codes, uniques = pd.factorize(series, sort=True)
    if len(uniques) > max_choices:
        raise ValueError(
            f"{where}: column {c.name!r} has {len(uniques)} distinct values, more than "
            f"{max_choices} (the most a categorical feature may have: one model input each); "
            "carry it with --ids, or describe it by numeric columns"
        )
    choices = tuple(v.item() if isinstance(v, np.generic) else v for v in uniques)
    block = np.zeros((len(series), len(choices)))
    block[np.arange(len(series)), codes] = 1.0
    return Column(c.name, c.kind, c.why, choices), block


# -- overrides ----------------------------------------------------------------------------------
def _check_overrides(header, features, ids, categorical, target, where) -> None:
    if target is not None and target not in header:
        raise ValueError(f"target column {target!r} not found in {where}; available columns: "
                         + ", ".join(repr(n) for n in header))  # fmt: skip
    for flag, names in (("--features", features), ("--ids", ids), ("--categorical", categorical)):
        names = names or []
        if target is not None and target in names:
            raise ValueError(
                f"{flag} must not contain the target column {target!r}: it is not an input"
            )
        missing = [name for name in names if name not in header]
        if missing:
            available = ", ".join(repr(name) for name in header)
            raise ValueError(
                f"{flag} column(s) {missing} not found in {where}; available columns: {available}"
            )
    both = sorted(set(ids) & (set(features or ()) | set(categorical)))
    if both:
        raise ValueError(
            f"column(s) {both} are in --ids and in --features / --categorical: a column is "
            "either carried or a feature"
        )
    if features is not None and set(categorical) - set(features):
        extra = sorted(set(categorical) - set(features))
        raise ValueError(
            f"--categorical column(s) {extra} are not in --features: with --features, list "
            "every feature there"
        )


__all__ = [
    "MAX_CHOICES",
    "CandidateTable",
    "Column",
    "decode_row",
    "id_named",
    "load_table",
    "read_candidates",
    "save_table",
]
