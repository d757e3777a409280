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


# -- MariaDB ----------------------------------------------------------------------------------------
def _mariadb_program(name: str) -> str | None:
    return shutil.which(name) or next(
        (p for p in (f"/usr/sbin/{name}", f"/usr/bin/{name}") if os.path.exists(p)), None
    )


@pytest.fixture(scope="session")
def mariadb_server():
    """The socket of a running MariaDB server (Debian's mariadb-server programs, a data folder
    of its own, no TCP port), stopped and removed at the end."""
    pytest.importorskip("pymysql", reason="PyMySQL (the MySQL / MariaDB driver) is not installed")
    install, server = _mariadb_program("mariadb-install-db"), _mariadb_program("mariadbd")
    if install is None or server is None:
        pytest.skip("MariaDB's mariadb-install-db / mariadbd not found (Debian: apt-get install "
                    "mariadb-server)")  # fmt: skip
    folder = tempfile.mkdtemp(prefix="frontierbo-mariadb-")
    data, socket = os.path.join(folder, "data"), os.path.join(folder, "mysqld.sock")
    user = ["--user=root"] if os.geteuid() == 0 else []
    run = {"capture_output": True, "text": True, "timeout": 180}
    made = subprocess.run([install, "--no-defaults", f"--datadir={data}", *user,
                           "--auth-root-authentication-method=normal", "--skip-test-db"], **run)  # fmt: skip
    if made.returncode != 0:
        shutil.rmtree(folder, ignore_errors=True)
        pytest.skip(f"mariadb-install-db failed: {(made.stderr or made.stdout).strip()[-300:]}")
    process = subprocess.Popen(
        [server, "--no-defaults", f"--datadir={data}", f"--socket={socket}", "--skip-networking",
         f"--pid-file={os.path.join(folder, 'mysqld.pid')}", "--innodb-flush-log-at-trx-commit=0",
         f"--log-error={os.path.join(folder, 'server.log')}", *user],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    import time

    for _ in range(300):
        if os.path.exists(socket) or process.poll() is not None:
            break
        time.sleep(0.1)
    if not os.path.exists(socket):
        process.kill()
        shutil.rmtree(folder, ignore_errors=True)
        pytest.skip("the MariaDB server did not start")
    try:
        yield socket
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def mariadb_url(mariadb_server):
    """A SQLAlchemy URL of a new, empty database on the session's MariaDB server."""
    import sqlalchemy

    name = f"study_{os.getpid()}_{next(_databases)}"
    admin = sqlalchemy.create_engine(
        f"mysql+pymysql://root@localhost/?unix_socket={mariadb_server}"
    )
    with admin.connect() as conn:
        conn.execute(sqlalchemy.text(f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4"))
    admin.dispose()
    return f"mysql+pymysql://root@localhost/{name}?unix_socket={mariadb_server}&charset=utf8mb4"
