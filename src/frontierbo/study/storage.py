"""Where studies live: a SQL database, one transaction per ask and per tell.

``storage`` is a file path or ``sqlite:///path`` (Python's own ``sqlite3``, nothing to install),
or any other SQLAlchemy URL such as ``postgresql+psycopg://user@host/db`` or
``mysql+pymysql://user@host/db`` for workers on several machines (the driver:
``pip install 'frontierbo[sql]'``). Every statement is built with SQLAlchemy Core from the
tables of :mod:`frontierbo.study.schema`, which SQLAlchemy renders for each database (quoting,
types); a plain path's connections are made by :func:`connect_sqlite`.

Tables (``candidates`` is a base64 ``.npy``, so no BLOB dialects):

* ``frontierbo_meta``: ``schema_version`` and the ``frontierbo`` version that created the file;
* ``frontierbo_studies``: one row per study: name (unique), algorithm and its settings (JSON),
  seed, the candidate set and its sha256, the column names, the pending timeout, created_at,
  the direction (maximize / minimize), the frontierbo version that created it and, for a
  study over a search space, the space (JSON; then there are no candidate rows, ``candidates``
  is empty and its sha256 is the space's);
* ``frontierbo_trials``: one row per trial: number, row index, state ``pending`` /
  ``complete``, value, asked / told times, the number of times it was offered and the sampler's
  request (JSON or NULL), and in a space study the typed ``params`` (JSON) and the encoded
  ``point`` (a JSON list; the row index is -1). A row is asked at most once unless the sampler
  ``repeats`` rows (bandit algorithms); the ask transaction enforces it (schema 1 had a UNIQUE
  constraint, which forbade the bandit samplers);
* ``frontierbo_fits``: hyperparameters fitted after ``t`` observations (a cache: a fit is a
  deterministic function of the data and the seed, so a resumed or parallel study finds the
  same values).
* ``frontierbo_tables``: for a study made from a CSV (:mod:`frontierbo.study.tables`), its
  columns' kinds, categories and carried values (JSON), so that trials come back typed.

Older files are migrated in place, in one transaction, when opened: schema 1 -> 2 rebuilds the
trials table without the UNIQUE constraint and with ``request``; 2 -> 3 adds the space
columns (``space``, ``params``, ``point``, NULL for the studies of candidate rows); 3 -> 4
creates ``frontierbo_tables`` where no CSV study had created it yet.

SQLite runs in WAL mode with a busy timeout of :data:`BUSY_TIMEOUT` seconds (plain paths and
SQLAlchemy ``sqlite+...://`` URLs alike), and every write takes the database's write lock first
(``BEGIN IMMEDIATE``): an ask reads the history, chooses and inserts its trial as one step, so
concurrent workers are serialised and never see a half-written trial. On other databases the
transaction locks the study's row (``SELECT ... FOR UPDATE``).

A new SQLite file is created private to its owner (mode 0600; SQLite gives its ``-wal``,
``-shm`` and ``-journal`` files the main file's mode); an existing file keeps its mode. A file
SQLite cannot use (truncated, corrupt, not SQLite, unreadable, a directory) is one
:class:`StorageError` naming the file and what is wrong, never a traceback.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

from sqlalchemy import create_engine, event, insert, inspect, select, text, update
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError, IntegrityError, OperationalError, ProgrammingError
from sqlalchemy.pool import QueuePool

from frontierbo.study import schema

T = TypeVar("T")

SCHEMA_VERSION = 4
#: Seconds a writer waits for another's transaction before giving up.
BUSY_TIMEOUT = 60.0
#: Write transactions :meth:`Storage.write_retrying` runs before a key conflict is an error;
#: every round lets at least one of the competing writers commit.
CONFLICT_ATTEMPTS = 10

TABLES = tuple(schema.metadata.tables)
_TRIAL_COLUMNS = "study_id, number, row_index, state, value, asked_at, told_at, offers"
#: Schema 1 -> 2: the trials table without UNIQUE (study_id, row_index) and with ``request``
#: (portable SQL: copy into a new table, drop the old one, rename; one transaction). The
#: table is schema 2's (3 adds columns to it).
_MIGRATE_1_TO_2 = (
    """CREATE TABLE frontierbo_trials_v2 (
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
    f"INSERT INTO frontierbo_trials_v2 ({_TRIAL_COLUMNS}, request) "
    f"SELECT {_TRIAL_COLUMNS}, NULL FROM frontierbo_trials",
    "DROP TABLE frontierbo_trials",
    "ALTER TABLE frontierbo_trials_v2 RENAME TO frontierbo_trials",
    "UPDATE frontierbo_meta SET value = '2' WHERE key = 'schema_version'",
)
#: Schema 2 -> 3: the columns of studies over a search space (NULL in the existing rows).
_MIGRATE_2_TO_3 = (
    "ALTER TABLE frontierbo_studies ADD COLUMN space TEXT",
    "ALTER TABLE frontierbo_trials ADD COLUMN params TEXT",
    "ALTER TABLE frontierbo_trials ADD COLUMN point TEXT",
    "UPDATE frontierbo_meta SET value = '3' WHERE key = 'schema_version'",
)


def _migrate_3_to_4(ex) -> None:
    """Schema 3 -> 4: ``frontierbo_tables`` where no CSV study had created it yet."""
    schema.tables.create(ex.connection, checkfirst=True)
    _set_version(ex, 4)


def _set_version(ex, version: int) -> None:
    ex(update(schema.meta).where(schema.meta.c.key == "schema_version").values(value=str(version)))


def _statements(statements):
    def run(ex) -> None:
        for statement in statements:
            ex(statement)

    return run


#: Each older schema's step to the next, in one write transaction. Schemas 1 and 2 existed on
#: SQLite and PostgreSQL only, so their steps are the portable SQL they were written in.
_MIGRATIONS = {1: _statements(_MIGRATE_1_TO_2), 2: _statements(_MIGRATE_2_TO_3), 3: _migrate_3_to_4}


#: The environment variable naming the storage used when none is given (Python and the shell).
STORAGE_VARIABLE = "FRONTIERBO_STORAGE"


def default_storage() -> str:
    """``$FRONTIERBO_STORAGE`` when set, else ``study.db`` (a SQLite file in this folder)."""
    return os.environ.get(STORAGE_VARIABLE) or "study.db"


class StorageError(ValueError):
    """The storage is not a study database, or was written by a newer frontierbo."""


#: SQLite's primary result codes for a file that cannot be used, and what each means for it
_FILE_PROBLEMS = (
    ("SQLITE_CORRUPT", "is damaged"),
    ("SQLITE_NOTADB", "is not a SQLite database (or is truncated or corrupt)"),
    ("SQLITE_CANTOPEN", "cannot be opened"),
    ("SQLITE_READONLY", "cannot be written"),
    ("SQLITE_PERM", "cannot be written"),
    ("SQLITE_IOERR", "cannot be read or written"),
    ("SQLITE_FULL", "cannot be written (the disk is full)"),
    ("SQLITE_BUSY", f"is locked by another process (waited {BUSY_TIMEOUT:g} s)"),
    ("SQLITE_LOCKED", f"is locked by another process (waited {BUSY_TIMEOUT:g} s)"),
)


def sqlite_file_problem(exc: BaseException, path, flag: str = "storage") -> str | None:
    """One line naming the SQLite file ``path`` (the option ``flag``) and what is wrong with it,
    for an error of the file (damaged, not SQLite, unreadable, locked); None for any other
    error, e.g. of the SQL or a constraint (those are the caller's)."""
    code = getattr(exc, "sqlite_errorname", None) or ""
    where = f"{flag} {str(path)!r}"
    for prefix, problem in _FILE_PROBLEMS:
        if code == prefix or code.startswith(prefix + "_"):
            if prefix == "SQLITE_CORRUPT":
                truncated = _truncation(path)
                if truncated:
                    return f"{where} is truncated ({truncated}): {exc}"
                return f"{where} {problem}: {exc} (restore it from a backup)"
            return f"{where} {problem}: {exc}"
    return None


def _truncation(path) -> str | None:
    """How a SQLite file is shorter than its own header says, or None."""
    try:
        with open(path, "rb") as fh:
            header = fh.read(100)
        size = os.path.getsize(path)
    except OSError:
        return None
    if len(header) < 100:
        return f"{size} bytes, less than SQLite's 100-byte header"
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(header[28:32], "big")
    # the header's page count is valid when its "version valid for" equals the change counter
    if pages and header[92:96] == header[24:28] and size < page_size * pages:
        return f"{size} bytes; its header says {page_size * pages}"
    return None


def create_private(path, flag: str = "storage", error=None) -> bool:
    """Create the empty file ``path`` with mode 0600 (owner only) if it does not exist, so that
    SQLite opens a private file (its ``-wal`` / ``-shm`` / ``-journal`` files copy the main
    file's mode). An existing file is left as it is (True: created). A missing folder or a
    folder that cannot be written is one error naming ``flag`` and the file."""
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except FileExistsError:  # a file the user has (or another process just created)
        return False
    except FileNotFoundError as exc:
        raise FileNotFoundError(
            f"{flag} {str(path)!r} cannot be created: its folder "
            f"{str(Path(path).parent)!r} does not exist"
        ) from exc
    except NotADirectoryError as exc:
        raise FileNotFoundError(
            f"{flag} {str(path)!r} cannot be created: its folder {str(Path(path).parent)!r} "
            "is not a directory"
        ) from exc
    except OSError as exc:
        raise (error or StorageError)(
            f"{flag} {str(path)!r} cannot be created: {exc.strerror or exc}"
        ) from exc
    os.close(fd)
    return True


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
        self._backend = _Backend(self.url, path)

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
            except DBAPIError as exc:
                if not self._backend.conflict(exc):
                    raise
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
            # the tables that do not exist yet (an older schema's stay as they are)
            schema.metadata.create_all(ex.connection, checkfirst=True)
            rows = _schema_version(ex)
            if not rows:
                ex(insert(schema.meta), [{"key": "schema_version", "value": str(SCHEMA_VERSION)},
                                         {"key": "created_by", "value": version}])  # fmt: skip
                return
            self.check_schema(int(rows[0][0]))
            self._migrate(ex, int(rows[0][0]))

        # two processes creating the tables of one new PostgreSQL database at once conflict
        self.write_retrying(create_or_check)

    def check_readable(self) -> None:
        """Raise :class:`StorageError` unless this is a study database this version can read;
        migrate it if it is older."""
        with self.transaction(write=False) as ex:
            if "frontierbo_meta" not in self._backend.table_names(ex):
                # not our tables: a foreign file or an empty database (a damaged file is an
                # error of its own, raised by the read)
                raise StorageError(
                    f"storage {self.url!r} is not a frontierbo study database (create one with "
                    "frontierbo study create / frontierbo.create_study)"
                )
            rows = _schema_version(ex)
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
            self._migrate(ex, int(_schema_version(ex)[0][0]))

    @staticmethod
    def _migrate(ex, found: int) -> None:
        for version in range(found, SCHEMA_VERSION):
            _MIGRATIONS[version](ex)


def _schema_version(ex) -> list[tuple]:
    return ex(select(schema.meta.c.value).where(schema.meta.c.key == "schema_version"))


class _Executor:
    """``ex(statement, params=None) -> list of rows`` on one open transaction: a SQLAlchemy Core
    statement (:mod:`frontierbo.study.schema`), or SQL text (PRAGMAs, the old migrations);
    ``params`` a dict, or a list of dicts to run it once per dict."""

    def __init__(self, connection):
        self.connection = connection

    def __call__(self, statement, params=None) -> list[tuple]:
        if isinstance(statement, str):
            statement = text(statement)
        result = self.connection.execute(statement, params if params is not None else {})
        return [tuple(row) for row in result] if result.returns_rows else []


def connect_sqlite(path, flag: str = "storage", error=None) -> sqlite3.Connection:
    """An autocommit connection to the SQLite file ``path`` (transactions are opened
    explicitly: ``BEGIN IMMEDIATE`` for writers), shareable between threads, with a busy
    timeout, ``synchronous = NORMAL`` (in WAL mode: durable at checkpoints, never torn) and
    foreign keys on. A new file is created with mode 0600 (:func:`create_private`).

    A file SQLite cannot use is one error naming ``flag`` and the file (``error``: its class,
    default :class:`StorageError`): a directory, a missing folder (FileNotFoundError), a file
    that is not SQLite, a truncated or corrupt one, one that cannot be opened."""
    error = error or StorageError
    file = Path(path)
    where = f"{flag} {str(path)!r}"
    if str(path) in ("", ":memory:"):  # a private database in memory
        return _configured(sqlite3.connect(str(path), **_CONNECT))
    if file.is_dir():
        raise error(f"{where} is a directory, not a database file")
    create_private(file, flag, error)
    try:
        with open(file, "rb") as fh:
            head = fh.read(16)
    except OSError as exc:
        raise error(f"{where} cannot be opened: {exc.strerror or exc}") from exc
    if head and head != b"SQLite format 3\x00":
        raise error(f"{where} is not a SQLite database (it does not start with SQLite's header)")
    try:
        conn = _configured(sqlite3.connect(path, **_CONNECT))
        conn.execute("SELECT count(*) FROM sqlite_master").fetchall()  # reads the schema pages
    except sqlite3.Error as exc:
        raise error(sqlite_file_problem(exc, path, flag) or f"{where}: {exc}") from exc
    return conn


_CONNECT = {"timeout": BUSY_TIMEOUT, "isolation_level": None, "check_same_thread": False}


def _configured(conn):
    """The settings of every connection, plain path or SQLAlchemy URL."""
    conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT * 1000)}")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA foreign_keys = ON")
    return conn


class _Backend:
    """A SQLAlchemy engine on a SQLite path (each connection made by :func:`connect_sqlite`)
    or on a database URL."""

    def __init__(self, url: str, path: str | None):
        self.path = path
        if path is not None:  # a plain path: our connections, checked and configured
            connect_sqlite(path).close()  # a file SQLite cannot use: one error, now
            self.engine = create_engine(
                "sqlite://", creator=lambda: connect_sqlite(path), poolclass=QueuePool
            )
            self.is_sqlite = True
        else:
            try:
                parsed = make_url(url)
                self.is_sqlite = parsed.get_backend_name() == "sqlite"
                # the same wait for a busy database as plain paths (pysqlite's default is 5 s)
                connect_args = {"timeout": BUSY_TIMEOUT} if self.is_sqlite else {}
                self.engine = create_engine(url, connect_args=connect_args)
            except ImportError as exc:
                raise ImportError(
                    f"storage {url!r} needs its database's driver ({exc.name or exc}): e.g. "
                    "pip install 'psycopg[binary]' for PostgreSQL, pymysql for MySQL / MariaDB"
                ) from exc
            except Exception as exc:  # an unknown dialect or a malformed URL
                raise ValueError(f"storage must be a path or a database URL, got {url!r}") from exc
            self.path = parsed.database if self.is_sqlite else None
            if (
                self.is_sqlite
                and self.path
                and self.path != ":memory:"
                and not self.path.startswith("file:")
            ):
                if Path(self.path).is_dir():
                    raise StorageError(f"storage {url!r} is a directory, not a database file")
                create_private(self.path)
        self._immediate = False
        if self.is_sqlite:  # SQLAlchemy's recipe: let us issue BEGIN ourselves

            @event.listens_for(self.engine, "connect")
            def _autocommit(dbapi_connection, _record):
                dbapi_connection.isolation_level = None
                _configured(dbapi_connection)  # what connect_sqlite sets on plain paths

            @event.listens_for(self.engine, "begin")
            def _begin(conn):
                conn.exec_driver_sql("BEGIN IMMEDIATE" if self._immediate else "BEGIN")

    def conflict(self, exc: BaseException) -> bool:
        """A key conflict, MySQL's deadlock or lock timeout, or a table another process created
        meanwhile (PostgreSQL's ``CREATE TABLE`` checks first but is not atomic with it: 42P07,
        42710; MySQL 1050): the transaction may be re-run."""
        if isinstance(exc, IntegrityError):
            return True
        orig = getattr(exc, "orig", None)
        if isinstance(exc, ProgrammingError) and getattr(orig, "sqlstate", None) in (
            "42P07",
            "42710",
        ):
            return True
        code = getattr(orig, "args", (None,))[0]
        return isinstance(exc, OperationalError | ProgrammingError) and code in (1050, 1205, 1213)

    def prepare(self) -> None:
        if self.is_sqlite:  # outside any transaction, so on the driver's own connection
            raw = self.engine.raw_connection()
            try:
                raw.driver_connection.execute("PRAGMA journal_mode = WAL")
            except sqlite3.Error as exc:
                problem = sqlite_file_problem(exc, self.path)
                if problem is None:
                    raise
                raise StorageError(problem) from exc
            finally:
                raw.close()

    def close(self) -> None:
        self.engine.dispose()

    def table_names(self, ex) -> set[str]:
        return set(inspect(ex.connection).get_table_names())

    @contextlib.contextmanager
    def transaction(self, *, write: bool, study_id: int | None):
        try:
            with self._transaction(write, study_id) as ex:
                yield ex
        except DBAPIError as exc:
            problem = self.is_sqlite and self.path and sqlite_file_problem(exc.orig, self.path)
            if not problem:
                raise
            raise StorageError(problem) from exc

    @contextlib.contextmanager
    def _transaction(self, write: bool, study_id: int | None):
        self._immediate = write
        with self.engine.begin() as conn:
            ex = _Executor(conn)
            if write and study_id is not None:  # FOR UPDATE (SQLite: BEGIN IMMEDIATE)
                ex(select(schema.studies.c.study_id)
                   .where(schema.studies.c.study_id == study_id).with_for_update())  # fmt: skip
            yield ex
