"""A throwaway PostgreSQL server for the study tests that need a real database server.

``postgres_url`` is a new, empty database on a server this session starts once (``initdb`` in
a temporary folder, listening on a Unix socket only, trust authentication). The tests that use
it skip, with the reason, where the server's programs, psycopg or SQLAlchemy are missing.
As root the server runs as the ``postgres`` user (PostgreSQL refuses to run as root).
"""

from __future__ import annotations

import glob
import itertools
import os
import pwd
import shutil
import subprocess
import tempfile

import pytest

PORT = 5432  # names the socket file only: the server listens on no TCP port


def _program(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return candidates[-1] if candidates else None


def _as_server_user() -> list[str]:
    if os.geteuid() != 0:
        return []
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        pytest.skip("running as root and there is no 'postgres' user to run PostgreSQL as")
    if shutil.which("runuser") is None:
        pytest.skip("running as root and runuser is missing")
    return ["runuser", "-u", "postgres", "--"]


@pytest.fixture(scope="session")
def postgres_server():
    """The socket folder of a running PostgreSQL server, stopped and removed at the end."""
    pytest.importorskip("psycopg", reason="psycopg (the PostgreSQL driver) is not installed")
    pytest.importorskip("sqlalchemy")
    initdb, pg_ctl = _program("initdb"), _program("pg_ctl")
    if initdb is None or pg_ctl is None:
        pytest.skip("PostgreSQL's initdb / pg_ctl not found (Debian: apt-get install postgresql)")
    prefix = _as_server_user()
    # not under pytest's tmp_path: its parents are private to root, the server user must enter
    folder = tempfile.mkdtemp(prefix="frontierbo-pg-")
    if prefix:
        shutil.chown(folder, "postgres")
    data, log = os.path.join(folder, "data"), os.path.join(folder, "server.log")
    run = {"capture_output": True, "text": True, "timeout": 120}
    made = subprocess.run([*prefix, initdb, "-D", data, "-A", "trust", "-U", "postgres"], **run)
    if made.returncode != 0:
        shutil.rmtree(folder, ignore_errors=True)
        pytest.skip(f"initdb failed: {made.stderr.strip()[-300:]}")
    options = f"-k {folder} -p {PORT} -c listen_addresses='' -c fsync=off"
    started = subprocess.run([*prefix, pg_ctl, "-D", data, "-o", options, "-l", log, "-w", "start"],
                             **run)  # fmt: skip
    if started.returncode != 0:
        shutil.rmtree(folder, ignore_errors=True)
        pytest.skip(f"the PostgreSQL server did not start: {started.stderr.strip()[-300:]}")
    try:
        yield folder
    finally:
        subprocess.run([*prefix, pg_ctl, "-D", data, "-m", "immediate", "stop"], **run)
        shutil.rmtree(folder, ignore_errors=True)


_databases = itertools.count()


@pytest.fixture
def postgres_url(postgres_server):
    """A SQLAlchemy URL of a new, empty database on the session's server."""
    import sqlalchemy

    name = f"study_{os.getpid()}_{next(_databases)}"
    admin = sqlalchemy.create_engine(
        f"postgresql+psycopg://postgres@/postgres?host={postgres_server}&port={PORT}",
        isolation_level="AUTOCOMMIT",
    )
    with admin.connect() as conn:
        conn.execute(sqlalchemy.text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    return f"postgresql+psycopg://postgres@/{name}?host={postgres_server}&port={PORT}"
