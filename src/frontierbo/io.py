"""Input and output shared by every system: CSV tables, JSON-safe values, atomic writes, numbers.

Every file written here is either complete or absent: :func:`atomic_output` writes to a temp file
in the target's directory and ``os.replace`` s it, so a reader (or a resumed run) never sees half
a file. CSV readers raise one ``ValueError`` naming the parameter (``--data``, ``--features``),
the column and the row for the first bad cell.
"""

from __future__ import annotations

import base64
import contextlib
import csv
import dataclasses
import io
import json
import math
import os
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

#: Name of the result file that ``frontierbo run`` writes into ``--out``.
RESULT_FILENAME = "result.json"


# -- numbers ------------------------------------------------------------------------------------
def fmt_number(x, digits: int = 6) -> str:
    """``x`` with ``digits`` significant digits; ``"n/a"`` for None (nan and inf print as such)."""
    return "n/a" if x is None else f"{x:.{digits}g}"


def mean_stderr(values, axis: int = 0, ddof: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard error ``std(ddof) / sqrt(n)`` along ``axis`` (zeros when n == 1).

    ``ddof=1`` (default) is the usual sample estimate; ``ddof=0`` matches code that divides the
    spread by n (e.g. published numbers computed that way).
    """
    values = np.asarray(values, dtype=float)
    n = values.shape[axis]
    mean = values.mean(axis=axis)
    if n < 2:
        return mean, np.zeros_like(mean)
    return mean, values.std(axis=axis, ddof=ddof) / np.sqrt(n)


# -- JSON ---------------------------------------------------------------------------------------
def to_jsonable(obj: Any) -> Any:
    """Recursively convert ``obj`` to plain JSON types.

    numpy arrays become (nested) lists, numpy scalars become Python ``int``/``float``/``bool``,
    tuples become lists, paths become strings and dataclass instances become dicts. Non-finite
    floats are kept; they serialise as ``NaN``/``Infinity``, which Python's ``json`` reads back.
    Raises ``TypeError`` for anything else so a bad record fails before it is written.
    """
    if obj is None or isinstance(obj, bool | int | float | str):
        return obj
    if isinstance(obj, np.ndarray):
        return obj.tolist()  # tolist() already yields Python scalars
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, Mapping):
        return {_json_key(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, os.PathLike):
        return os.fspath(obj)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return to_jsonable(dataclasses.asdict(obj))
    raise TypeError(f"cannot convert object of type {type(obj).__name__} to JSON: {obj!r}")


def _json_key(key: Any) -> str:
    """JSON object keys must be strings; accept str and integers (numpy or Python)."""
    if isinstance(key, str):
        return key
    if isinstance(key, int | np.integer) and not isinstance(key, bool):
        return str(int(key))
    raise TypeError(f"dict keys must be str or int to be stored as JSON, got {key!r}")


def array_to_text(a: np.ndarray) -> str:
    """A float array as base64 ``.npy`` text (little-endian float64; portable in any SQL TEXT
    column, read back exactly by :func:`array_from_text`)."""
    buffer = io.BytesIO()
    np.save(buffer, np.ascontiguousarray(a, dtype="<f8"), allow_pickle=False)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def array_from_text(text: str) -> np.ndarray:
    return np.load(io.BytesIO(base64.b64decode(text)), allow_pickle=False)


def fsync_dir(directory: Path) -> None:
    """Make a rename/creation in ``directory`` durable (no-op where directories can't be opened)."""
    if not hasattr(os, "O_DIRECTORY"):
        return
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_output(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temp path next to ``path``; on success fsync it and ``os.replace`` it onto ``path``.

    The temp file lives in the same directory so the rename never crosses file systems (which
    would make it a non-atomic copy). On an exception the temp file is removed and ``path`` is
    left untouched. Parent directories are created.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        yield tmp
        # mkstemp makes the file 0600; give the result the usual permissions of a new file.
        mode = target.stat().st_mode & 0o777 if target.exists() else 0o644
        os.chmod(tmp, mode)
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, target)
        fsync_dir(target.parent)
    finally:
        tmp.unlink(missing_ok=True)


def write_text_atomic(path: str | os.PathLike, text: str) -> Path:
    """Atomically write ``text`` (UTF-8) to ``path``; returns the path."""
    with atomic_output(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return Path(path)


def write_json_atomic(path: str | os.PathLike, obj: Any, strict: bool = False) -> Path:
    """Atomically write ``to_jsonable(obj)`` as indented JSON to ``path``; returns the path.

    ``strict=True`` writes standard JSON: non-finite floats become ``null`` (see
    :func:`finite_or_null`); otherwise they are written as ``NaN`` / ``Infinity``, which Python's
    ``json`` reads back.
    """
    obj = to_jsonable(obj)
    if strict:
        obj = finite_or_null(obj)
    text = json.dumps(obj, indent=2, allow_nan=not strict) + "\n"
    return write_text_atomic(path, text)


def finite_or_null(obj):
    """Replace non-finite floats by None (strict JSON) and numpy scalars by Python ones."""
    if isinstance(obj, dict):
        return {key: finite_or_null(value) for key, value in obj.items()}
    if isinstance(obj, list | tuple):
        return [finite_or_null(value) for value in obj]
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


# -- CSV tables ---------------------------------------------------------------------------------
def parse_cell(text: str) -> float | None:
    """The float in ``text``, or None when it is not a number (empty cells give NaN)."""
    text = text.strip()
    if not text:
        return math.nan
    try:
        return float(text)
    except ValueError:
        return None


def data_path(path, flag: str = "--data") -> Path:
    """``flag`` (``--data``) as an existing file (TypeError / FileNotFoundError naming it)."""
    if not isinstance(path, str | os.PathLike):
        raise TypeError(f"{flag} must be a path, got {path!r}")
    path = Path(path)
    if not path.is_file():
        what = "is a directory, not a CSV file" if path.is_dir() else "does not exist"
        raise FileNotFoundError(f"{flag} {str(path)!r} {what}")
    return path


def column_names(value, flag: str) -> list[str]:
    """``flag``'s column names (one string or several; None: none) as a list of distinct,
    stripped names."""
    if value is None:
        return []
    names = [value] if isinstance(value, str) else list(value)
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"{flag} must be column names (strings), got {name!r}")
    names = [name.strip() for name in names]
    dupes = sorted({name for name in names if names.count(name) > 1})
    if dupes:
        raise ValueError(f"{flag} lists column(s) more than once: {dupes}")
    return names


def feature_names(features) -> list[str]:
    """``--features`` as a non-empty list of distinct, stripped column names."""
    names = column_names(features, "--features")
    if not names:
        raise ValueError("--features must name at least one column (or be omitted)")
    return names


def read_table(path: Path, flag: str = "--data") -> tuple[list[str], list[list[str]], list[int]]:
    """Header, data rows (blank lines skipped) and the file line on which each row ends
    (messages name the file as ``flag``)."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as fh:
            reader = csv.reader(fh)
            header = next(reader, None)
            if header is None:
                raise ValueError(f"{flag} {str(path)!r} is empty: expected a header row")
            header = [name.strip() for name in header]
            rows, lines = [], []
            for row in reader:
                if not row or (len(row) == 1 and len(header) > 1 and not row[0].strip()):
                    continue  # blank line
                if len(row) != len(header):
                    raise ValueError(
                        f"{flag} {str(path)!r}: line {reader.line_num} has {len(row)} field(s) "
                        f"but the header has {len(header)}"
                    )
                rows.append(row)
                lines.append(reader.line_num)
    except UnicodeDecodeError as exc:
        raise ValueError(f"{flag} {str(path)!r} is not UTF-8 text ({exc.reason})") from None
    except csv.Error as exc:
        raise ValueError(f"{flag} {str(path)!r} is not a valid CSV file: {exc}") from None
    seen: set[str] = set()
    for name in header:
        if name in seen:
            raise ValueError(f"{flag} {str(path)!r}: duplicate column name {name!r} in the header")
        seen.add(name)
    return header, rows, lines


def column(rows: list[list[str]], lines: list[int], j: int, name: str, role: str) -> np.ndarray:
    """Column ``j`` as floats; one ValueError naming the column and row for a bad cell."""
    out = np.empty(len(rows))
    for i, row in enumerate(rows):
        value = parse_cell(row[j])
        where = f"{role} column {name!r}, row {i} (file line {lines[i]})"
        if value is None:
            raise ValueError(f"{where}: {row[j].strip()!r} is not a number")
        if not math.isfinite(value):
            what = "is empty" if not row[j].strip() else f"is {row[j].strip()!r}"
            raise ValueError(
                f"{where} {what}: every value must be a finite number (remove or fill that row)"
            )
        out[i] = value
    return out


def _is_numericcolumn(rows: list[list[str]], j: int) -> bool:
    """True when every non-empty cell of column ``j`` parses as a float."""
    return all(parse_cell(row[j]) is not None for row in rows)


def select_feature_columns(
    header: list[str],
    rows: list[list[str]],
    features,
    reserved: list[str],
    reserved_text: str,
    where: str,
) -> list[str]:
    """The input columns: ``features`` if given (checked to exist and to avoid the ``reserved``
    columns), else every named, numeric column that is not reserved.

    ``reserved_text`` names the reserved columns in messages (e.g. "the --target column 'f'");
    ``where`` names the file (e.g. "--data 'x.csv'").
    """
    if features is not None:
        names = feature_names(features)
        clash = [name for name in names if name in reserved]
        if clash:
            raise ValueError(
                f"--features must not contain {reserved_text} ({clash}): it is not an input"
            )
        missing = [name for name in names if name not in header]
        if missing:
            available = ", ".join(repr(name) for name in header)
            raise ValueError(
                f"--features column(s) {missing} not found in {where}; available columns: {available}"
            )
        return names
    names = [name for name in header if name not in reserved]
    if not names:
        raise ValueError(f"{where} has only {reserved_text}: at least one feature column is needed")
    for j, name in enumerate(header):
        if name in reserved:
            continue
        if not name:
            raise ValueError(
                f"{where}: column {j + 1} has no name in the header; name it or choose the "
                "input columns with --features"
            )
        if not _is_numericcolumn(rows, j):
            bad = next(i for i, row in enumerate(rows) if parse_cell(row[j]) is None)
            raise ValueError(
                f"feature column {name!r} is not numeric (row {bad}: {rows[bad][j].strip()!r}); "
                f"features default to every column except {reserved_text}, so choose the input "
                "columns with --features"
            )
    return names


def check_out_dir(out, flag: str = "--out") -> Path | None:
    """Validate ``--out`` (a directory, existing or not) before any work; None passes.

    Beyond its type and kind, this checks that the directory can be created and written, by
    creating (and removing) a probe entry in it, or, when it does not exist yet, in its nearest
    existing ancestor: an unwritable ``--out`` then fails in a second, not after the whole
    computation. Permission bits alone would not do (root ignores them, and ``/proc`` refuses
    new entries whatever the bits say). Nothing is left behind. Every failure is one ValueError
    naming ``flag`` and the reason; ``flag`` names the option in messages.
    """
    if out is None:
        return None
    if not isinstance(out, str | os.PathLike):
        raise TypeError(f"{flag} must be a directory path, got {out!r}")
    out = Path(out)
    where = f"{flag} {str(out)!r}"
    try:
        if out.exists() and not out.is_dir():
            raise ValueError(f"{where} exists and is not a directory")
        if (out / RESULT_FILENAME).is_dir():
            raise ValueError(f"{where}: {RESULT_FILENAME} is a directory")
        if out.is_dir():
            fd, probe = tempfile.mkstemp(dir=out, prefix=".frontierbo-probe-")
            os.close(fd)
            os.unlink(probe)
            return out
        ancestor = out.parent
        while not ancestor.exists() and ancestor != ancestor.parent:
            ancestor = ancestor.parent
        if not ancestor.is_dir():
            raise ValueError(
                f"{where} cannot be created: {str(ancestor)!r} is a file, not a directory"
            )
        os.rmdir(tempfile.mkdtemp(dir=ancestor, prefix=".frontierbo-probe-"))
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise ValueError(
            f"{where} cannot be created or written ({reason}); choose a writable directory"
        ) from None
    return out


#: Largest magnitude accepted in a modelled CSV column (features, targets, rewards): fits and
#: kernels square differences of values, and (1e150)^2 is still far from double overflow (1.8e308).
MAX_ABS_VALUE = 1e150


def check_magnitude(values, lines: list[int], name: str, role: str, where: str) -> None:
    """One ValueError naming the file, the column and the first row whose ``|value|`` exceeds
    :data:`MAX_ABS_VALUE` (a value near the float limit would overflow inside the model)."""
    values = np.asarray(values, dtype=float)
    bad = np.flatnonzero(np.abs(values) > MAX_ABS_VALUE)
    if bad.size:
        i = int(bad[0])
        raise ValueError(
            f"{where}: {role} column {name!r}, row {i} (file line {lines[i]}): {values[i]:g} is "
            f"too large in magnitude; every value must satisfy |value| <= {MAX_ABS_VALUE:g} so "
            "that squared differences stay finite in double precision (rescale the column)"
        )


# -- Markdown ----------------------------------------------------------------------------------
_ALIGN = {None: "---", "l": ":---", "r": "---:", "c": ":---:"}


def markdown_table(header: Sequence, rows: Iterable[Sequence], align: str | None = None) -> str:
    """A GitHub-flavoured Markdown table (no trailing newline).

    Cells are ``str(cell)`` with ``|`` escaped and line breaks turned into spaces, so a cell
    cannot break the table. ``align``: one of ``l``, ``r``, ``c`` per column (default: none).
    Every row must have as many cells as the header.
    """
    header = [_cell(h) for h in header]
    if align is not None and (len(align) != len(header) or set(align) - set("lrc")):
        raise ValueError(
            f"align must have one of 'l', 'r', 'c' per column ({len(header)}), got {align!r}"
        )
    seps = [_ALIGN[None if align is None else a] for a in (align or [None] * len(header))]
    lines = [_row(header), "|" + "|".join(seps) + "|"]
    for i, row in enumerate(rows):
        cells = [_cell(c) for c in row]
        if len(cells) != len(header):
            raise ValueError(f"row {i} has {len(cells)} cells, the header {len(header)}")
        lines.append(_row(cells))
    return "\n".join(lines)


def _cell(value) -> str:
    return " ".join(str(value).replace("|", "\\|").splitlines())


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"
