"""Where studies live: a SQL database, one transaction per ask and per tell.

``storage`` is a file path or ``sqlite:///path`` (Python's own ``sqlite3``, nothing to install),
or any other SQLAlchemy URL such as ``postgresql://user@host/db`` for workers on several
machines (``pip install 'frontierbo[sql]'`` and the database's driver, e.g. ``psycopg``). Both
run the same SQL.

Tables (portable types; ``candidates`` is a base64 ``.npy``, so no BLOB dialects):

* ``frontierbo_meta``: ``schema_version`` and the ``frontierbo`` version that created the file;
* ``frontierbo_studies``: one row per study: name (unique), algorithm and its settings (JSON),
  seed, the candidate set and its sha256, the column names, the pending timeout, created_at,
  the direction (maximize / minimize) and the frontierbo version that created it;
* ``frontierbo_trials``: one row per trial: number, row index, state ``pending`` /
  ``complete``, value, asked / told times, the number of times it was offered and the sampler's
  request (JSON or NULL). A row is asked at most once unless the sampler ``repeats`` rows
  (bandit algorithms); the ask transaction enforces it (schema 1 had a UNIQUE constraint, which
  forbade the bandit samplers: a schema-1 file is migrated in place when opened);
* ``frontierbo_fits``: hyperparameters fitted after ``t`` observations (a cache: a fit is a
  deterministic function of the data and the seed, so a resumed or parallel study finds the
  same values).

SQLite runs in WAL mode with a busy timeout, and every write takes the database's write lock
first (``BEGIN IMMEDIATE``): an ask reads the history, chooses and inserts its trial as one
step, so concurrent workers are serialised and never see a half-written trial. On other
databases the transaction locks the study's row (``SELECT ... FOR UPDATE``).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

SCHEMA_VERSION = 2
#: Seconds a writer waits for another's transaction before giving up.
BUSY_TIMEOUT = 60.0
#: Write transactions :meth:`Storage.write_retrying` runs before a key conflict is an error;
#: every round lets at least one of the competing writers commit.
CONFLICT_ATTEMPTS = 10

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS frontierbo_meta (
        key VARCHAR(64) PRIMARY KEY,
        value TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS frontierbo_studies (
        study_id INTEGER PRIMARY KEY,
        name VARCHAR(255) NOT NULL UNIQUE,
        algorithm VARCHAR(64) NOT NULL,
        settings TEXT NOT NULL,
        seed BIGINT NOT NULL,
        columns TEXT NOT NULL,
        n_candidates INTEGER NOT NULL,
        candidates TEXT NOT NULL,
        candidates_sha256 VARCHAR(64) NOT NULL,
        pending_timeout DOUBLE PRECISION,
        created_at DOUBLE PRECISION NOT NULL,
        direction VARCHAR(16) NOT NULL,
        frontierbo_version VARCHAR(32) NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS frontierbo_trials (
        study_id INTEGER NOT NULL REFERENCES frontierbo_studies (study_id),
        number INTEGER NOT NULL,
        row_index INTEGER NOT NULL,
        state VARCHAR(16) NOT NULL,
        value DOUBLE PRECISION,
        asked_at DOUBLE PRECISION NOT NULL,
        told_at DOUBLE PRECISION,
        offers INTEGER NOT NULL,
        request TEXT,
        PRIMARY KEY (study_id, number))""",
    """CREATE TABLE IF NOT EXISTS frontierbo_fits (
        study_id INTEGER NOT NULL REFERENCES frontierbo_studies (study_id),
        observations INTEGER NOT NULL,
        hyperparameters TEXT NOT NULL,
        PRIMARY KEY (study_id, observations))""",
)
TABLES = ("frontierbo_meta", "frontierbo_studies", "frontierbo_trials", "frontierbo_fits")
_TRIAL_COLUMNS = "study_id, number, row_index, state, value, asked_at, told_at, offers"
#: Schema 1 -> 2: the trials table without UNIQUE (study_id, row_index) and with ``request``
#: (portable SQL: copy into a new table, drop the old one, rename; one transaction).
_MIGRATE_1_TO_2 = (
    _SCHEMA[2].replace("IF NOT EXISTS frontierbo_trials", "frontierbo_trials_v2"),
    f"INSERT INTO frontierbo_trials_v2 ({_TRIAL_COLUMNS}, request) "
    f"SELECT {_TRIAL_COLUMNS}, NULL FROM frontierbo_trials",
    "DROP TABLE frontierbo_trials",
    "ALTER TABLE frontierbo_trials_v2 RENAME TO frontierbo_trials",
    "UPDATE frontierbo_meta SET value = '2' WHERE key = 'schema_version'",
)


class StorageError(ValueError):
    """The storage is not a study database, or was written by a newer frontierbo."""


def _sqlite_path(storage: str) -> str | None:
    """The file of a SQLite storage (a plain path or ``sqlite:///path``), else None."""
    if storage.startswith("sqlite:///"):
        return storage[len("sqlite:///") :]
    if "://" in storage:
        return None
    return storage


class Storage:
    """A connection to a study database (see the module doc).

    ``transaction(write=True)`` yields a cursor-like ``execute(sql, params) -> rows`` inside one
    transaction: committed when the block ends, rolled back on any exception, so a killed
    worker leaves either the whole ask / tell or nothing. One ``Storage`` may be shared by the
    threads of a process (a lock serialises them); processes each open their own.
    """

    def __init__(self, storage: str | os.PathLike):
        if not isinstance(storage, str | os.PathLike):
            raise TypeError(f"storage must be a path or a URL string, got {storage!r}")
        self.url = os.fspath(storage)
        path = _sqlite_path(self.url)
        self._lock = threading.RLock()
        if path is not None:
            self._backend = _SQLite(path)
        else:
            self._backend = _SQLAlchemy(self.url)

    def close(self) -> None:
        self._backend.close()

    @contextlib.contextmanager
    def transaction(self, *, write: bool, study_id: int | None = None) -> Iterator[_Executor]:
        with self._lock, self._backend.transaction(write=write, study_id=study_id) as ex:
            yield ex

    def write_retrying(self, step: Callable[[_Executor], T]) -> T:
        """``step(ex)`` in one write transaction, run again from the start in a new one when
        the database reports a key conflict (at most :data:`CONFLICT_ATTEMPTS` times).

        A writer that checks for a row and then inserts it cannot lock a row that does not
        exist yet: on PostgreSQL two such transactions may both find the key free, and the
        second insert fails once the first commits. Its re-run reads the committed row. (On
        SQLite ``BEGIN IMMEDIATE`` serialises writers, so there is nothing to re-run.)"""
        for _ in range(CONFLICT_ATTEMPTS - 1):
            try:
                with self.transaction(write=True) as ex:
                    return step(ex)
            except self._backend.conflict_errors:
                continue
        with self.transaction(write=True) as ex:  # the last attempt's conflict is an error
            return step(ex)

    # -- schema ----------------------------------------------------------------------------
    def initialise(self, version: str) -> None:
        """Create the tables (once) and check the schema version; refuse a database that
        already holds other tables but not ours."""
        with self.transaction(write=False) as ex:
            foreign = self._backend.table_names(ex)
        if foreign and "frontierbo_meta" not in foreign:
            raise StorageError(
                f"storage {self.url!r} is a database of something else (tables "
                f"{sorted(foreign)[:5]}), not a frontierbo study database"
            )
        self._backend.prepare()

        def create_or_check(ex) -> None:
            for statement in _SCHEMA:  # no-ops on tables that exist (an older schema's too)
                ex(statement)
            rows = ex("SELECT value FROM frontierbo_meta WHERE key = 'schema_version'")
            if not rows:
                ex(
                    "INSERT INTO frontierbo_meta (key, value) VALUES "
                    "('schema_version', :schema), ('created_by', :version)",
                    {"schema": str(SCHEMA_VERSION), "version": version},
                )
                return
            self.check_schema(int(rows[0][0]))
            self._migrate(ex, int(rows[0][0]))

        # two processes creating the tables of one new PostgreSQL database at once conflict
        self.write_retrying(create_or_check)

    def check_readable(self) -> None:
        """Raise :class:`StorageError` unless this is a study database this version can read;
        migrate it if it is older."""
        with self.transaction(write=False) as ex:
            try:
                rows = ex("SELECT value FROM frontierbo_meta WHERE key = 'schema_version'")
            except Exception as exc:  # not our tables: a foreign file or an empty database
                raise StorageError(
                    f"storage {self.url!r} is not a frontierbo study database (create one with "
                    "frontierbo study create / frontierbo.create_study)"
                ) from exc
        if not rows:
            raise StorageError(f"storage {self.url!r} has no schema version: not a study database")
        self.check_schema(int(rows[0][0]))
        if int(rows[0][0]) < SCHEMA_VERSION:
            self.migrate()

    def check_schema(self, found: int) -> None:
        if found > SCHEMA_VERSION:
            raise StorageError(
                f"storage {self.url!r} was written by a newer frontierbo (schema {found}; this "
                f"version reads up to {SCHEMA_VERSION}): upgrade frontierbo"
            )

    def migrate(self) -> None:
        """Bring an older study database to this schema (one write transaction; a no-op when
        it is current, e.g. migrated meanwhile by another process)."""
        with self.transaction(write=True) as ex:
            rows = ex("SELECT value FROM frontierbo_meta WHERE key = 'schema_version'")
            self._migrate(ex, int(rows[0][0]))

    @staticmethod
    def _migrate(ex, found: int) -> None:
        if found == 1:
            for statement in _MIGRATE_1_TO_2:
                ex(statement)


class _Executor:
    """``ex(sql, params=None) -> list of rows`` on one open transaction."""

    def __init__(self, run):
        self._run = run

    def __call__(self, sql: str, params: dict | None = None) -> list[tuple]:
        return self._run(sql, params or {})


def connect_sqlite(path, flag: str = "storage", error=None) -> sqlite3.Connection:
    """An autocommit connection to the SQLite file ``path`` (transactions are opened
    explicitly: ``BEGIN IMMEDIATE`` for writers), shareable between threads, with a busy
    timeout, ``synchronous = NORMAL`` (in WAL mode: durable at checkpoints, never torn) and
    foreign keys on. A directory, a missing folder or a file that is not SQLite is one clear
    error naming ``flag`` (``error``: the class for the last, default :class:`StorageError`)."""
    file = Path(path)
    if file.is_dir():
        raise ValueError(f"{flag} must be a database file, got the directory {str(path)!r}")
    if not file.parent.exists():
        raise FileNotFoundError(f"{flag}: the folder of {str(path)!r} does not exist")
    if file.exists() and file.stat().st_size > 0:
        with open(file, "rb") as fh:
            if fh.read(16) != b"SQLite format 3\x00":
                raise (error or StorageError)(f"{flag} {str(path)!r} is not a SQLite database")
    conn = sqlite3.connect(
        path, timeout=BUSY_TIMEOUT, isolation_level=None, check_same_thread=False
    )
    conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT * 1000)}")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA foreign_keys = ON")
    return conn


class _SQLite:
    conflict_errors = (sqlite3.IntegrityError,)

    def __init__(self, path: str):
        self.conn = connect_sqlite(path)

    def prepare(self) -> None:
        """WAL mode (a setting of the file, kept once set): readers never block the writer."""
        self.conn.execute("PRAGMA journal_mode = WAL")

    def close(self) -> None:
        self.conn.close()

    def table_names(self, ex) -> set[str]:
        return {r[0] for r in ex("SELECT name FROM sqlite_master WHERE type = 'table'")}

    @contextlib.contextmanager
    def transaction(self, *, write: bool, study_id: int | None):
        self.conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
        try:
            yield _Executor(lambda sql, params: self.conn.execute(sql, params).fetchall())
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")


class _SQLAlchemy:
    def __init__(self, url: str):
        try:
            import sqlalchemy
        except ImportError as exc:
            raise ImportError(
                f"storage {url!r} needs SQLAlchemy (only SQLite paths work without it): "
                "pip install 'frontierbo[sql]' and the database's driver"
            ) from exc
        try:
            self.engine = sqlalchemy.create_engine(url)
        except Exception as exc:  # an unknown dialect or a malformed URL
            raise ValueError(f"storage must be a path or a database URL, got {url!r}") from exc
        self.text = sqlalchemy.text
        self.conflict_errors = (sqlalchemy.exc.IntegrityError,)
        self.is_sqlite = self.engine.dialect.name == "sqlite"
        self._immediate = False
        if self.is_sqlite:  # SQLAlchemy's recipe: let us issue BEGIN ourselves
            from sqlalchemy import event

            @event.listens_for(self.engine, "connect")
            def _autocommit(dbapi_connection, _record):
                dbapi_connection.isolation_level = None

            @event.listens_for(self.engine, "begin")
            def _begin(conn):
                conn.exec_driver_sql("BEGIN IMMEDIATE" if self._immediate else "BEGIN")

    def prepare(self) -> None:
        if self.is_sqlite:  # outside any transaction, so on the driver's own connection
            raw = self.engine.raw_connection()
            try:
                raw.driver_connection.execute("PRAGMA journal_mode = WAL")
            finally:
                raw.close()

    def close(self) -> None:
        self.engine.dispose()

    def table_names(self, ex) -> set[str]:
        from sqlalchemy import inspect

        return set(inspect(ex.connection).get_table_names())

    @contextlib.contextmanager
    def transaction(self, *, write: bool, study_id: int | None):
        self._immediate = write
        with self.engine.begin() as conn:

            def run(sql, params):
                result = conn.execute(self.text(sql), params)
                return [tuple(r) for r in result] if result.returns_rows else []

            if write and study_id is not None and not self.is_sqlite:
                run("SELECT study_id FROM frontierbo_studies WHERE study_id = :s FOR UPDATE",
                    {"s": study_id})  # fmt: skip
            ex = _Executor(run)
            ex.connection = conn
            yield ex
