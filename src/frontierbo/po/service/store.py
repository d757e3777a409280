"""The curator's database: the release (made once), modelers and their budgets, the answers,
the privacy ledger and an append-only audit log, in one SQLite file.

Every request is one transaction (``BEGIN IMMEDIATE``, WAL mode): authentication, the budget
check, the answer and its audit line commit together or not at all, so a server killed at any
moment leaves each query either wholly answered (charged, stored, audited) or not at all, and
concurrent requests cannot overshoot a budget. ``synchronous = NORMAL``: a committed transaction
survives the server process being killed (it is in the WAL, in the operating system's cache);
a power cut may lose the last ones.

What is stored: the released matrix ``Z`` and the public release parameters; the sha256 of the
data file and of the target column's values (to refuse a restart on other data); modelers by
name with the sha256 of their token, never the token; every answer (row and value) per modeler
and request id, so a retried request gets the same answer without being charged twice; ledger
entries (the guarantee of each release of private information, with what it covers); and the
audit log (time, modeler, endpoint, row, outcome, HTTP status), which triggers make
append-only. Refusals of unauthenticated requests are counted in memory and appended as one
line per endpoint and outcome at most every few seconds (:class:`RefusalCounter`), so a flood
of bad tokens neither grows the file per request nor takes the write lock per request. The
private inputs ``X`` are never stored.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import secrets
import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from frontierbo.io import array_from_text, array_to_text, finite_or_null
from frontierbo.study.storage import connect_sqlite

SCHEMA_VERSION = 2
#: Who a token belongs to: a modeler (queries within a budget) or a viewer (reads the dashboard).
ROLES = ("modeler", "viewer")
TOKEN_PREFIX = "fbo_"

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS curator_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE IF NOT EXISTS curator_release (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        data_sha256 TEXT NOT NULL,
        config TEXT NOT NULL,
        z TEXT NOT NULL,
        public TEXT NOT NULL,
        created_at REAL NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS curator_ledger (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        label TEXT NOT NULL,
        guarantee TEXT NOT NULL,
        covers TEXT NOT NULL,
        created_at REAL NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS curator_modelers (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        name TEXT NOT NULL UNIQUE,
        token_sha256 TEXT NOT NULL UNIQUE,
        budget INTEGER NOT NULL CHECK (budget >= 0),
        used INTEGER NOT NULL DEFAULT 0 CHECK (used >= 0 AND used <= budget),
        revoked INTEGER NOT NULL DEFAULT 0,
        created_at REAL NOT NULL,
        role TEXT NOT NULL DEFAULT 'modeler')""",
    """CREATE TABLE IF NOT EXISTS curator_answers (
        modeler_id INTEGER NOT NULL REFERENCES curator_modelers (id),
        request_id TEXT NOT NULL,
        row_index INTEGER NOT NULL,
        value REAL NOT NULL,
        answered_at REAL NOT NULL,
        PRIMARY KEY (modeler_id, request_id))""",
    """CREATE TABLE IF NOT EXISTS curator_audit (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        at REAL NOT NULL,
        modeler TEXT,
        endpoint TEXT NOT NULL,
        row_index INTEGER,
        outcome TEXT NOT NULL,
        status INTEGER NOT NULL)""",
    """CREATE TRIGGER IF NOT EXISTS curator_audit_no_update BEFORE UPDATE ON curator_audit
        BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END""",
    """CREATE TRIGGER IF NOT EXISTS curator_audit_no_delete BEFORE DELETE ON curator_audit
        BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END""",
)


class StoreError(ValueError):
    """The database is not a curator database, or does not match this curator's data."""


def token_sha256(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class CuratorStore:
    """A connection to the curator database at ``path`` (created on first use)."""

    def __init__(self, path: str | os.PathLike, *, create: bool = True):
        self.path = Path(path)
        if not create and not self.path.exists():
            raise FileNotFoundError(f"--db {str(self.path)!r} does not exist")
        self.conn = connect_sqlite(self.path, "--db", StoreError)
        self.conn.execute("PRAGMA journal_mode = WAL")
        self._lock = threading.Lock()
        self._initialise()

    def close(self) -> None:
        self.conn.close()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction: committed when the block ends, rolled back on any error."""
        with self._lock:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield self.conn
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            self.conn.execute("COMMIT")

    def read(self, sql: str, params=()) -> list[tuple]:
        """One read (serialised with the writers of this process's connection)."""
        with self._lock:
            return self.conn.execute(sql, params).fetchall()

    def _initialise(self) -> None:
        tables = {
            r[0] for r in self.conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
        }
        if tables and "curator_meta" not in tables:
            raise StoreError(
                f"--db {str(self.path)!r} is a database of something else (tables "
                f"{sorted(tables)[:5]}), not a curator database"
            )
        with self.transaction() as c:
            for statement in _SCHEMA:
                c.execute(statement)
            row = c.execute(
                "SELECT value FROM curator_meta WHERE key = 'schema_version'"
            ).fetchone()
            if row is None:
                c.execute(
                    "INSERT INTO curator_meta (key, value) VALUES ('schema_version', ?)",
                    (str(SCHEMA_VERSION),),
                )
            elif int(row[0]) > SCHEMA_VERSION:
                raise StoreError(
                    f"--db {str(self.path)!r} was written by a newer frontierbo (schema {row[0]})"
                )
            elif int(row[0]) == 1:  # schema 2 added viewers (the dashboard's readers)
                c.execute(
                    "ALTER TABLE curator_modelers ADD COLUMN role TEXT NOT NULL DEFAULT 'modeler'"
                )
                c.execute("UPDATE curator_meta SET value = '2' WHERE key = 'schema_version'")

    # -- the release ----------------------------------------------------------------------------
    def release(self) -> dict | None:
        """The stored release (``data_sha256``, ``config``, ``Z``, ``public``), or None."""
        rows = self.read("SELECT data_sha256, config, z, public, created_at FROM curator_release")
        if not rows:
            return None
        row = rows[0]
        return {
            "data_sha256": row[0],
            "config": json.loads(row[1]),
            "Z": array_from_text(row[2]),
            "public": json.loads(row[3]),
            "created_at": row[4],
        }

    def save_release(self, data_sha256: str, config: dict, Z, public: dict, ledger) -> None:
        """Store the release and its ledger entries (label, guarantee dict, covers) at once."""
        now = time.time()
        with self.transaction() as c:
            if c.execute("SELECT 1 FROM curator_release").fetchone():
                raise StoreError("this database already holds a release; it is made only once")
            c.execute(
                "INSERT INTO curator_release VALUES (1, ?, ?, ?, ?, ?)",
                (data_sha256, json.dumps(config), array_to_text(Z), json.dumps(public), now),
            )
            for label, guarantee, covers in ledger:
                c.execute(
                    "INSERT INTO curator_ledger (label, guarantee, covers, created_at) "
                    "VALUES (?, ?, ?, ?)",
                    (label, json.dumps(guarantee), covers, now),
                )

    def ledger(self) -> list[dict]:
        rows = self.read(
            "SELECT label, guarantee, covers, created_at FROM curator_ledger ORDER BY id"
        )
        return [
            {"label": r[0], "guarantee": finite_or_null(json.loads(r[1])), "covers": r[2],
             "created_at": r[3]}
            for r in rows
        ]  # fmt: skip

    # -- modelers -------------------------------------------------------------------------------
    def add_modeler(self, name: str, budget: int, role: str = "modeler") -> str:
        """Register ``name`` with ``budget`` queries; returns its token (shown once; only its
        sha256 is stored). A ``"viewer"`` has no budget and may read the dashboard."""
        if role not in ROLES:
            raise ValueError(f"role must be one of {ROLES}, got {role!r}")
        if not isinstance(name, str) or not name.strip() or len(name) > 100:
            raise ValueError(
                f"name must be a non-empty string of at most 100 characters, got {name!r}"
            )
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        with self.transaction() as c:
            if c.execute("SELECT 1 FROM curator_modelers WHERE name = ?", (name,)).fetchone():
                raise ValueError(f"a modeler or viewer named {name!r} already exists")
            c.execute(
                "INSERT INTO curator_modelers (name, token_sha256, budget, created_at, role) "
                "VALUES (?, ?, ?, ?, ?)",
                (name, token_sha256(token), int(budget), time.time(), role),
            )
        return token

    def caller(self, token: str | None) -> tuple[str, str] | None:
        """``(name, role)`` of an active (not revoked) token, or None."""
        if not token:
            return None
        rows = self.read(
            "SELECT name, role FROM curator_modelers WHERE token_sha256 = ? AND revoked = 0",
            (token_sha256(token),),
        )
        return rows[0] if rows else None

    def role(self, token: str | None) -> str | None:
        """The role of an active (not revoked) token, or None."""
        caller = self.caller(token)
        return None if caller is None else caller[1]

    def revoke_modeler(self, name: str) -> None:
        with self.transaction() as c:
            cur = c.execute("UPDATE curator_modelers SET revoked = 1 WHERE name = ?", (name,))
            if cur.rowcount == 0:
                raise ValueError(f"no modeler named {name!r}")

    def modelers(self) -> list[dict]:
        rows = self.read(
            "SELECT name, budget, used, revoked, created_at, role FROM curator_modelers ORDER BY id"
        )
        return [
            {"name": r[0], "budget": r[1], "used": r[2], "remaining": r[1] - r[2],
             "revoked": bool(r[3]), "created_at": r[4], "role": r[5]}
            for r in rows
        ]  # fmt: skip

    # -- the audit log --------------------------------------------------------------------------
    def audit(self, limit: int | None = None) -> list[dict]:
        sql = "SELECT at, modeler, endpoint, row_index, outcome, status FROM curator_audit"
        sql += " ORDER BY id"
        rows = self.read(sql)
        if limit is not None:
            rows = rows[-limit:]
        keys = ("at", "modeler", "endpoint", "row", "outcome", "status")
        return [dict(zip(keys, r, strict=True)) for r in rows]

    def answers(self, modeler: str) -> list[dict]:
        rows = self.read(
            "SELECT a.request_id, a.row_index, a.value, a.answered_at FROM curator_answers a "
            "JOIN curator_modelers m ON m.id = a.modeler_id WHERE m.name = ? "
            "ORDER BY a.answered_at, a.request_id",
            (modeler,),
        )
        return [{"request_id": r[0], "row": r[1], "value": r[2], "at": r[3]} for r in rows]


def log(c: sqlite3.Connection, modeler, endpoint: str, row, outcome: str, status: int) -> None:
    """Append one audit line inside the caller's transaction."""
    c.execute(
        "INSERT INTO curator_audit (at, modeler, endpoint, row_index, outcome, status) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        (time.time(), modeler, endpoint, row, outcome, status),
    )


class RefusalCounter:
    """Refusals of requests without a valid token, counted in memory and appended to the audit
    log as one line per ``(endpoint, outcome, status)``: outcome ``"bad or revoked token ×812"``
    is 812 refusals since that key's previous line, ``at`` the time of writing, modeler and row
    NULL.

    One line per refused request would let anyone grow the database and hold the write lock
    (stalling every modeler) without a token; here a refusal costs a dictionary increment. A
    key's first refusal in ``window`` seconds is written at once (with whatever else is
    pending); the ones after it wait for :meth:`flush`, which the app calls every ``window``
    seconds and at shutdown (a SIGKILL loses at most one window's counts). So each key gets at
    most two lines per window, and the keys are few (the app maps unknown paths to one)."""

    def __init__(self, store: CuratorStore, window: float = 10.0):
        self.store, self.window = store, float(window)
        self._counts: Counter = Counter()
        self._written: dict[tuple, float] = {}  # key: when its last line was written
        self._lock = threading.Lock()  # not the store's: counting never waits for a writer

    def add(self, endpoint: str, outcome: str, status: int) -> None:
        key = (endpoint, outcome, status)
        with self._lock:
            self._counts[key] += 1
            due = time.monotonic() - self._written.get(key, -math.inf) >= self.window
        if due:
            self.flush()

    def flush(self) -> None:
        """Append the pending counts, one line per key."""
        with self._lock:
            counts, self._counts = self._counts, Counter()
            now = time.monotonic()
            self._written.update(dict.fromkeys(counts, now))
        if counts:
            with self.store.transaction() as c:
                for (endpoint, outcome, status), n in sorted(counts.items()):
                    log(c, None, endpoint, None, f"{outcome} ×{n}", status)
