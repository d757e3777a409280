"""Crash-safe result storage for experiment sweeps.

A sweep can be killed at any moment (Ctrl-C, OOM, wall-clock limit), so every file written here
is either complete or absent:

* :class:`ResultStore` keeps one finished run per line of a JSONL file. Each line is written with
  a single ``os.write`` on an ``O_APPEND`` descriptor and fsynced, and a torn last line left by a
  kill is dropped and cut off before the next append, so a resumed sweep never duplicates runs
  or builds on a corrupt file.
* :func:`write_text_atomic` / :func:`write_json_atomic` / :func:`atomic_output` write to a temp
  file in the target's directory and ``os.replace`` it, so readers never see half a file.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "ResultStore",
    "atomic_output",
    "to_jsonable",
    "write_json_atomic",
    "write_text_atomic",
]


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


def _fsync_dir(directory: Path) -> None:
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
        _fsync_dir(target.parent)
    finally:
        tmp.unlink(missing_ok=True)


def write_text_atomic(path: str | os.PathLike, text: str) -> Path:
    """Atomically write ``text`` (UTF-8) to ``path``; returns the path."""
    with atomic_output(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return Path(path)


def write_json_atomic(path: str | os.PathLike, obj: Any) -> Path:
    """Atomically write ``to_jsonable(obj)`` as indented JSON to ``path``; returns the path."""
    text = json.dumps(to_jsonable(obj), indent=2) + "\n"
    return write_text_atomic(path, text)


class ResultStore:
    """Append-only JSONL file holding one finished run per line, keyed by ``"run_id"``.

    One process at a time should use a store while a sweep writes to it (the runner appends
    from its parent process only): :meth:`load` repairs a torn tail by truncating the file, which
    must not race with another process's append.
    """

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)

    def __repr__(self) -> str:
        return f"ResultStore({str(self.path)!r})"

    def append(self, record: Mapping[str, Any]) -> None:
        """Durably append one run ``record`` (a mapping with a non-empty string ``"run_id"``).

        The whole line is serialised before touching the file, then written with one
        ``os.write`` on an ``O_APPEND`` descriptor and fsynced, so after a crash the line is
        either fully present or (at worst) a torn tail that :meth:`load` discards.
        """
        line = _encode_record(record)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        created = not self.path.exists()
        self._repair_tail()
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            written = os.write(fd, line)
            os.fsync(fd)
        finally:
            os.close(fd)
        if written != len(line):
            # A short write leaves a line without "\n"; the next load/append cuts it off.
            raise OSError(f"short write to {self.path}: {written} of {len(line)} bytes")
        if created:
            _fsync_dir(self.path.parent)

    def load(self) -> list[dict]:
        """All complete records in file order; the first occurrence of a duplicate run_id wins.

        A torn last line (no trailing newline, or not valid JSON) is ignored and truncated away.
        Invalid JSON anywhere else means outside corruption and raises ``ValueError``.
        """
        if not self.path.exists():
            return []
        data = self.path.read_bytes()
        records, good_end = _parse_lines(data, self.path)
        if good_end < len(data):
            _truncate(self.path, good_end)
        seen: set[str] = set()
        unique = []
        for rec in records:
            if rec["run_id"] not in seen:
                seen.add(rec["run_id"])
                unique.append(rec)
        return unique

    def done_ids(self) -> set[str]:
        """The run_ids of all complete records."""
        return {rec["run_id"] for rec in self.load()}

    def _repair_tail(self) -> None:
        """Cut off a torn last line (no trailing newline) so the next append starts a fresh line.

        Only reads the file's tail, so appends stay O(1) in the store size.
        """
        if not self.path.exists():
            return
        with open(self.path, "rb") as fh:
            size = fh.seek(0, os.SEEK_END)
            if size == 0:
                return
            fh.seek(size - 1)
            if fh.read(1) == b"\n":
                return
            end = _last_newline_end(fh, size)
        _truncate(self.path, end)


def _encode_record(record: Mapping[str, Any]) -> bytes:
    """One JSON line (UTF-8, ending in a single newline) for a validated record."""
    if not isinstance(record, Mapping):
        raise TypeError(f"record must be a dict, got {type(record).__name__}")
    run_id = record.get("run_id")
    if not isinstance(run_id, str) or not run_id:
        raise ValueError(f"record['run_id'] must be a non-empty string, got {run_id!r}")
    # json.dumps escapes newlines inside strings, so the only "\n" is the terminator.
    return (json.dumps(to_jsonable(record), separators=(",", ":")) + "\n").encode("utf-8")


def _parse_lines(data: bytes, path: Path) -> tuple[list[dict], int]:
    """Parse JSONL bytes; returns (records, byte offset just after the last good line)."""
    # Bytes after the last "\n" (``tail``) are a torn write, never a record; b"" if clean.
    *complete, tail = data.split(b"\n")
    records: list[dict] = []
    offset = 0
    for lineno, raw in enumerate(complete, start=1):
        rec = _parse_line(raw) if raw.strip() else {}
        if rec is None:
            if lineno == len(complete) and not tail:
                break  # an invalid final line is also a torn write (e.g. zero-filled blocks)
            raise ValueError(f"{path}: line {lineno} is not a valid record (file corrupted?)")
        if rec:  # blank lines are harmless; skip them
            records.append(rec)
        offset += len(raw) + 1
    return records, offset


def _parse_line(raw: bytes) -> dict | None:
    """The record on one line, or None if it is not a JSON object with a string run_id."""
    try:
        rec = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(rec, dict) or not isinstance(rec.get("run_id"), str):
        return None
    return rec


def _last_newline_end(fh, size: int, chunk: int = 1 << 16) -> int:
    """Offset just after the last b"\\n" in the open file (0 if there is none)."""
    pos = size
    while pos > 0:
        start = max(0, pos - chunk)
        fh.seek(start)
        idx = fh.read(pos - start).rfind(b"\n")
        if idx >= 0:
            return start + idx + 1
        pos = start
    return 0


def _truncate(path: Path, size: int) -> None:
    """Truncate ``path`` to ``size`` bytes and fsync, so the repair survives a crash too."""
    with open(path, "rb+") as fh:
        fh.truncate(size)
        fh.flush()
        os.fsync(fh.fileno())
