"""Crash-safe result storage for experiment sweeps.

A sweep can be killed at any moment (Ctrl-C, OOM, wall-clock limit), so every file written here
is either complete or absent:

* :class:`ResultStore` keeps one finished run per line of a JSONL file. Each line is written with
  a single ``os.write`` on an ``O_APPEND`` descriptor and fsynced, and a torn last line left by a
  kill is dropped and cut off before the next append, so a resumed sweep never duplicates runs
  or builds on a corrupt file.
* :func:`write_text_atomic` / :func:`write_json_atomic` / :func:`atomic_output` write to a temp
  file in the target's directory and ``os.replace`` it, so readers never see half a file.
* :func:`lock_directory` holds an exclusive lock on an output directory for the whole of a
  sweep: a second sweep into the same directory refuses at once instead of running everything
  again beside the first (duplicate runs, and a torn-tail repair racing the other's append).
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from frontierbo.io import (
    atomic_output,
    fsync_dir,
    to_jsonable,
    write_json_atomic,
    write_text_atomic,
)

__all__ = [
    "LOCK_FILE",
    "DirectoryLockedError",
    "ResultStore",
    "lock_directory",
    "atomic_output",
    "to_jsonable",
    "write_json_atomic",
    "write_text_atomic",
]


#: The lock file :func:`lock_directory` keeps in an output directory (left in place: removing a
#: lock file another process is about to lock would let two processes hold "the" lock).
LOCK_FILE = ".frontierbo.lock"


class DirectoryLockedError(RuntimeError):
    """Another process holds the lock on an output directory."""


@contextlib.contextmanager
def lock_directory(directory: str | os.PathLike, flag: str = "--out") -> Iterator[Path]:
    """Hold an exclusive lock on ``directory`` (created if needed) for the ``with`` block.

    The lock is ``flock`` on :data:`LOCK_FILE` inside the directory (``msvcrt.locking`` on
    Windows), so the kernel releases it when the holder exits or is killed: there is no stale
    lock to clean up after a crash. A second holder does not wait: it gets
    :class:`DirectoryLockedError` at once, naming ``flag`` and the directory. The lock file holds
    the holder's process id, for a person wondering who it is.
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / LOCK_FILE
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            _try_lock(fd)
        except OSError:
            raise DirectoryLockedError(
                f"{flag} {str(directory)!r} is in use: another frontierbo process "
                f"(pid {_holder(fd)}) holds its lock ({LOCK_FILE}); wait for it to finish or "
                f"choose another {flag}"
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode("ascii"))
        yield path
    finally:
        os.close(fd)  # releases the lock


def _try_lock(fd: int) -> None:
    """Take an exclusive, non-blocking lock on the open file ``fd`` (OSError if held)."""
    try:
        import fcntl
    except ImportError:  # Windows
        import msvcrt

        msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        return
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)


def _holder(fd: int) -> str:
    """The process id the lock holder wrote, or "unknown" (not written yet, or unreadable)."""
    try:
        text = os.read(fd, 32).decode("ascii", "replace").strip()
    except OSError:
        return "unknown"
    return text if text.isdigit() else "unknown"


class ResultStore:
    """Append-only JSONL file holding one finished run per line, keyed by ``"run_id"``.

    One process at a time should use a store while a sweep writes to it (the runner appends
    from its parent process only): :meth:`load` repairs a torn tail by truncating the file, which
    must not race with another process's append. A reproduction holds :func:`lock_directory`
    on the store's directory for that reason.
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
            fsync_dir(self.path.parent)

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

    def complete_bytes(self) -> bytes:
        """The file's bytes up to the end of its last complete record (b"" without a file).

        Unlike :meth:`load` it never repairs the file, so it is safe while another process
        appends to the store (a copy of a running sweep's records)."""
        if not self.path.exists():
            return b""
        data = self.path.read_bytes()
        return data[: _parse_lines(data, self.path)[1]]

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
