"""Which database errors re-run a write transaction (``Storage.write_retrying``): a key conflict,
MySQL's deadlock and lock timeout, and a table another process created meanwhile. Four processes
creating one new PostgreSQL study raced there: ``CREATE TABLE`` after its existence check raised
DuplicateTable (42P07) in the loser, which was not taken for a conflict."""

from __future__ import annotations

import pytest
from sqlalchemy.exc import IntegrityError, OperationalError, ProgrammingError

from frontierbo.study.storage import _Backend


class _Driver(Exception):
    """A driver error with PostgreSQL's ``sqlstate`` (psycopg) or MySQL's code in ``args``."""

    def __init__(self, *args, sqlstate=None):
        super().__init__(*args)
        self.sqlstate = sqlstate


@pytest.fixture
def backend(tmp_path):
    path = str(tmp_path / "x.db")
    backend = _Backend(path, path)
    yield backend
    backend.close()


@pytest.mark.parametrize(
    ("error", "rerun"),
    [
        (IntegrityError("insert", {}, _Driver("duplicate key")), True),
        (ProgrammingError("create", {}, _Driver("relation exists", sqlstate="42P07")), True),
        (ProgrammingError("create", {}, _Driver("type exists", sqlstate="42710")), True),
        (ProgrammingError("create", {}, _Driver(1050, "Table exists")), True),
        (OperationalError("update", {}, _Driver(1213, "Deadlock")), True),
        (OperationalError("update", {}, _Driver(1205, "Lock wait timeout")), True),
        (ProgrammingError("select", {}, _Driver("syntax", sqlstate="42601")), False),
        (OperationalError("connect", {}, _Driver(2003, "Can't connect")), False),
    ],
)
def test_only_conflicts_are_re_run(backend, error, rerun):
    assert backend.conflict(error) is rerun
