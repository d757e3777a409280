"""The study database's tables as SQLAlchemy Core definitions: one schema that SQLAlchemy
renders for each database (quoting its reserved words, such as MySQL's ``key``, and choosing
its types), and from which every statement of the studies is built.

Types: ``Text`` where a value is short (settings, requests), ``LongText`` where it may be large
(the candidate rows, spaces, points, fits, a CSV's description): ``TEXT`` on SQLite and
PostgreSQL, ``LONGTEXT`` on MySQL / MariaDB, whose ``TEXT`` holds 64 KiB. A study's name is
compared byte for byte everywhere (MySQL's default collation would make "A" equal "a").
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Column,
    Double,
    ForeignKey,
    Integer,
    MetaData,
    String,
    Table,
    Text,
)
from sqlalchemy.dialects import mysql

LongText = Text().with_variant(mysql.LONGTEXT(), "mysql", "mariadb")
Name = String(255).with_variant(mysql.VARCHAR(255, collation="utf8mb4_bin"), "mysql", "mariadb")

metadata = MetaData()
_MYSQL = {"mysql_engine": "InnoDB", "mysql_charset": "utf8mb4", "mariadb_engine": "InnoDB",
          "mariadb_charset": "utf8mb4"}  # fmt: skip


def _study_id(primary_key: bool = False) -> Column:
    return Column(
        "study_id", Integer, ForeignKey("frontierbo_studies.study_id"), nullable=False,
        primary_key=primary_key, autoincrement=False,
    )  # fmt: skip


meta = Table(
    "frontierbo_meta", metadata,
    Column("key", String(64), primary_key=True),
    Column("value", Text, nullable=False),
    **_MYSQL,
)  # fmt: skip

studies = Table(
    "frontierbo_studies", metadata,
    Column("study_id", Integer, primary_key=True, autoincrement=False),
    Column("name", Name, nullable=False, unique=True),
    Column("algorithm", String(64), nullable=False),
    Column("settings", Text, nullable=False),
    Column("seed", BigInteger, nullable=False),
    Column("columns", LongText, nullable=False),
    Column("n_candidates", Integer, nullable=False),
    Column("candidates", LongText, nullable=False),
    Column("candidates_sha256", String(64), nullable=False),
    Column("pending_timeout", Double),
    Column("created_at", Double, nullable=False),
    Column("direction", String(16), nullable=False),
    Column("frontierbo_version", String(32), nullable=False),
    Column("space", LongText),
    **_MYSQL,
)  # fmt: skip

trials = Table(
    "frontierbo_trials", metadata,
    _study_id(primary_key=True),
    Column("number", Integer, primary_key=True, autoincrement=False),
    Column("row_index", Integer, nullable=False),
    Column("state", String(16), nullable=False),
    Column("value", Double),
    Column("asked_at", Double, nullable=False),
    Column("told_at", Double),
    Column("offers", Integer, nullable=False),
    Column("request", Text),
    Column("params", LongText),
    Column("point", LongText),
    **_MYSQL,
)  # fmt: skip

fits = Table(
    "frontierbo_fits", metadata,
    _study_id(primary_key=True),
    Column("observations", Integer, primary_key=True, autoincrement=False),
    Column("hyperparameters", LongText, nullable=False),
    **_MYSQL,
)  # fmt: skip

tables = Table(
    "frontierbo_tables", metadata,
    _study_id(primary_key=True),
    Column("description", LongText, nullable=False),
    **_MYSQL,
)  # fmt: skip

#: The columns of a study row, in the order ``Study`` reads them.
STUDY_COLUMNS = (
    "study_id", "name", "algorithm", "settings", "seed", "columns", "n_candidates", "candidates",
    "candidates_sha256", "pending_timeout", "created_at", "direction", "frontierbo_version",
    "space",
)  # fmt: skip
#: The columns of a trial row, in the order ``Study`` reads them.
TRIAL_COLUMNS = (
    "number", "row_index", "state", "value", "asked_at", "told_at", "offers", "request",
    "params", "point",
)  # fmt: skip


def study_columns():
    return [studies.c[name] for name in STUDY_COLUMNS]


def trial_columns():
    return [trials.c[name] for name in TRIAL_COLUMNS]
