"""Candidate tables from real CSV files (``frontierbo.study.tables``): the classification rule,
the user's overrides, typed rows, one-hot categories, carried ID/text columns, and the errors
of today's numeric reader kept word for word."""

from __future__ import annotations

import json

import numpy as np
import pytest

from frontierbo.io import MAX_ABS_VALUE, column, read_table, select_feature_columns
from frontierbo.study.tables import (
    CARRIED,
    MAX_CHOICES,
    CandidateTable,
    id_named,
    load_table,
    read_candidates,
)


def write(tmp_path, text: str, name: str = "rows.csv"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def old_reader(path):
    """``study create``'s reader before the tables module (every column a float feature)."""
    header, rows, lines = read_table(path, "--candidates")
    if not rows:
        raise ValueError(f"--candidates {str(path)!r} has no rows")
    where = f"--candidates {str(path)!r}"
    names = select_feature_columns(header, rows, None, [], "no column", where)
    return np.column_stack([column(rows, lines, header.index(n), n, "feature") for n in names])


MIXED = """sample_id,temp,n,solvent,note,ok
S-1,80.5,3,water,first,True
S-2,70,2,ethanol,,False
S-3,60.25,3, water ,third,True
S-4,50,1,toluene,fourth,False
"""


def kinds(table: CandidateTable) -> dict:
    return {c.name: c.kind for c in table.columns}


# -- a real file: ID, category, ints, bools, text ----------------------------------------------
def test_a_csv_with_an_id_column_and_a_text_category_loads(tmp_path):
    table = read_candidates(write(tmp_path, MIXED))
    assert kinds(table) == {"sample_id": CARRIED, "temp": "float", "n": "int",
                            "solvent": "categorical", "note": CARRIED, "ok": "bool"}  # fmt: skip
    # one-hot in sorted order (scikit-learn's OneHotEncoder), text stripped like today's reader
    assert table.names == ["temp", "n", "solvent=ethanol", "solvent=toluene", "solvent=water", "ok"]
    np.testing.assert_array_equal(
        table.X,
        [[80.5, 3, 0, 0, 1, 1], [70, 2, 1, 0, 0, 0], [60.25, 3, 0, 0, 1, 1], [50, 1, 0, 1, 0, 0]],
    )
    assert table.X.dtype == np.float64 and table.X.flags.c_contiguous
    assert table.carried == {"sample_id": ["S-1", "S-2", "S-3", "S-4"],
                             "note": ["first", None, "third", "fourth"]}  # fmt: skip
    assert table.carried_values(1) == {"sample_id": "S-2", "note": None}
    assert len(table) == 4 and table.target is None


def test_rows_come_back_typed_ints_as_ints(tmp_path):
    table = read_candidates(write(tmp_path, MIXED))
    params = [table.params(i) for i in range(len(table))]
    assert params[0] == {"temp": 80.5, "n": 3, "solvent": "water", "ok": True}
    assert params[3] == {"temp": 50.0, "n": 1, "solvent": "toluene", "ok": False}
    for p in params:
        assert type(p["n"]) is int and type(p["temp"]) is float and type(p["ok"]) is bool
    # JSON, as ask prints it: 3 not 3.0, true not 1.0, the category's text
    assert json.dumps(params[0]) == '{"temp": 80.5, "n": 3, "solvent": "water", "ok": true}'
    # integer codes made categorical keep their own values (ints, not strings)
    coded = read_candidates(write(tmp_path, "batch,x\n2,0.1\n7,0.2\n2,0.3\n"), categorical="batch")
    assert coded.features[0].choices == (2, 7) and coded.params(1) == {"batch": 7, "x": 0.2}
    assert type(coded.params(1)["batch"]) is int


def test_describe_says_what_each_column_became_and_why(tmp_path):
    lines = read_candidates(write(tmp_path, MIXED)).describe()
    assert lines == [
        "sample_id: carried (not a feature) (text, every value distinct)",
        "temp: float feature (numbers)",
        "n: int feature (whole numbers)",
        "solvent: categorical feature, 3 categories one-hot (text with repeated values)",
        "note: carried (not a feature) (text, every value distinct)",
        "ok: bool feature (True / False)",
    ]


# -- the rule ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "cells", "kind", "why"),
    [
        ("solvent", ["a", "b", "a", "c"], "categorical", "text with repeated values"),
        ("code", ["a1", "b2", "c3", "d4"], CARRIED, "text, every value distinct"),
        ("name", ["a", "b", "a", "b"], CARRIED, "text named like an ID"),
        ("Sample ID", ["a", "b", "a", "b"], CARRIED, "text named like an ID"),
        ("sampleId", ["a", "b", "a", "b"], CARRIED, "text named like an ID"),
        ("solvent_name", ["a", "b", "a", "b"], "categorical", "text with repeated values"),
        ("acid", ["a", "b", "a", "b"], "categorical", "text with repeated values"),
        ("note", ["x", "x", "x", "x"], CARRIED, "text, the same value 'x' in every row"),
        ("idx", [0, 1, 2, 3], CARRIED, "row numbers 0..3: an index"),
        ("step", [1, 2, 3, 4], CARRIED, "row numbers 1..4: an index"),
        ("batch_id", [17, 3, 9, 4], CARRIED, "named like an ID, distinct whole numbers"),
        ("batch_id", [17, 3, 17, 4], "int", "whole numbers"),
        ("layers", [17, 3, 9, 4], "int", "whole numbers"),
        ("layers", [3, 2, 1, 0], "int", "whole numbers"),  # not in file order: a feature
        ("lr", [0.1, 1, 2, 3], "float", "numbers"),
        ("flag", ["True", "False", "True", "True"], "bool", "True / False"),
    ],
)
def test_the_classification_rule(tmp_path, name, cells, kind, why):
    rows = "".join(f"{cell},{i % 2}.5\n" for i, cell in enumerate(cells))
    table = read_candidates(write(tmp_path, f"{name},other\n{rows}"))
    assert (table.columns[0].kind, table.columns[0].why) == (kind, why)
    assert table.columns[1].kind == "float"


def test_row_numbers_are_an_index_only_in_the_first_column(tmp_path):
    table = read_candidates(write(tmp_path, "x,layers\n0.5,1\n0.25,2\n0.75,3\n"))
    assert kinds(table) == {"x": "float", "layers": "int"}


def test_id_names():
    for name in ("id", "ID", "Id", "ids", "sample_id", "Sample ID", "sampleID", "sampleId",
                 "run-id", "uuid", "GUID", "name", "Name", "key", "label", "index", "idx"):  # fmt: skip
        assert id_named(name), name
    for name in ("acid", "valid", "idle", "width", "solvent_name", "names", "keys", "ideal"):
        assert not id_named(name), name


def test_a_dataframe_written_with_its_index_loads(tmp_path):
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"x": [0.5, 0.25, 0.75], "cat": ["a", "b", "a"]}, index=[10, 11, 12])
    frame.to_csv(tmp_path / "f.csv")  # first column: the index, no name
    table = read_candidates(tmp_path / "f.csv")
    assert kinds(table) == {"Unnamed: 0": CARRIED, "x": "float", "cat": "categorical"}
    assert table.carried == {"Unnamed: 0": [10, 11, 12]} and table.params(1)["cat"] == "b"


def test_an_index_is_a_feature_when_nothing_else_is(tmp_path):
    table = read_candidates(write(tmp_path, "k,label\n0,a\n1,b\n2,c\n"))
    assert kinds(table) == {"k": "int", "label": CARRIED}
    assert table.columns[0].why == "row numbers 0..2, but no other feature"


def test_a_typo_in_a_numeric_column_is_refused_not_made_a_category(tmp_path):
    path = write(tmp_path, "x,y\n0.5,1\n0.7,n/a\n0.2,3\n0.1,4\n")
    with pytest.raises(ValueError, match=r"feature column 'y' is not numeric \(row 1: 'n/a'\)"):
        read_candidates(path)
    assert read_candidates(path, categorical="y").features[1].choices == ("1", "3", "4", "n/a")
    assert read_candidates(path, ids="y").carried["y"] == ["1", "n/a", "3", "4"]


def test_too_many_categories_is_one_error(tmp_path):
    rows = "".join(f"c{i % (MAX_CHOICES + 1)},{i}.5\n" for i in range(2 * MAX_CHOICES + 2))
    with pytest.raises(ValueError, match=rf"column 'c' has {MAX_CHOICES + 1} distinct values"):
        read_candidates(write(tmp_path, f"c,x\n{rows}"))
    assert read_candidates(write(tmp_path, f"c,x\n{rows}"), ids="c").names == ["x"]


# -- overrides --------------------------------------------------------------------------------
def test_features_names_them_exactly_and_the_rest_is_carried(tmp_path):
    table = read_candidates(write(tmp_path, MIXED), features=["solvent", "temp"])
    assert [c.name for c in table.features] == ["solvent", "temp"]  # the order given
    assert table.names == ["solvent=ethanol", "solvent=toluene", "solvent=water", "temp"]
    assert list(table.carried) == ["sample_id", "n", "note", "ok"]
    assert table.carried["n"] == [3, 2, 3, 1] and table.carried["ok"] == [True, False, True, False]
    assert {c.name: c.why for c in table.columns}["n"] == "not in --features"
    # a column the rule would carry becomes a feature when named
    assert kinds(read_candidates(write(tmp_path, MIXED), features="sample_id"))["sample_id"] == (
        "categorical"
    )


def test_ids_and_categorical_override_the_rule(tmp_path):
    table = read_candidates(write(tmp_path, MIXED), ids=["solvent"], categorical=["n"])
    assert kinds(table)["solvent"] == CARRIED and kinds(table)["n"] == "categorical"
    assert table.names == ["temp", "n=1", "n=2", "n=3", "ok"]
    assert table.carried["solvent"] == ["water", "ethanol", "water", "toluene"]
    assert {c.name: c.why for c in table.columns}["solvent"] == "--ids"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"features": ["temp", "nope"]}, r"--features column\(s\) \['nope'\] not found"),
        ({"ids": "nope"}, r"--ids column\(s\) \['nope'\] not found"),
        ({"categorical": ["x", "x"]}, r"--categorical lists column\(s\) more than once"),
        ({"ids": "temp", "features": ["temp"]}, r"\['temp'\] are in --ids and in --features"),
        (
            {"features": ["temp"], "categorical": ["n"]},
            r"--categorical column\(s\) \['n'\] are not",
        ),
        ({"target": "temp", "features": ["temp", "n"]}, "--features must not contain the target"),
        ({"target": "nope"}, "target column 'nope' not found"),
        ({"ids": ["sample_id", "temp", "n", "solvent", "note", "ok"]}, "has no feature column"),
        ({"features": []}, "--features must name at least one column"),
        ({"ids": [3]}, "--ids must be column names"),
    ],
)
def test_bad_overrides_are_one_error_naming_the_flag(tmp_path, kwargs, message):
    with pytest.raises((ValueError, TypeError), match=message):
        read_candidates(write(tmp_path, MIXED), **kwargs)


def test_target_is_neither_a_feature_nor_carried(tmp_path):
    table = read_candidates(write(tmp_path, MIXED), target="temp")
    np.testing.assert_array_equal(table.target, [80.5, 70, 60.25, 50])
    assert "temp" not in kinds(table) and "temp" not in table.names


# -- errors: today's, word for word, on numeric files -----------------------------------------
NUMERIC_BAD = [
    "a,b\n1,\n3,4\n",  # empty cell
    "a,b\n1,nan\n3,4\n",
    "a,b\n1,-inf\n3,4\n",
    "a,b\n1,1e400\n3,4\n",
    "a,b\n1\n3,4\n",  # too few fields
    "a,b\n1,2,3\n3,4\n",  # too many fields, first line
    "a,b\n1,2\n3,4,5\n",
    "a,a\n1,2\n",  # duplicate name
    "",  # empty file
    "a,b\n",  # no rows
    "a,b\n1,2\n,\n",  # a line of empty cells
    "a,\n1,2\n3,4\n",  # unnamed column
]


@pytest.mark.parametrize("text", NUMERIC_BAD)
def test_numeric_files_get_todays_errors(tmp_path, text):
    path = write(tmp_path, text)
    with pytest.raises(ValueError) as old:
        old_reader(path)
    with pytest.raises(ValueError) as new:
        read_candidates(path)
    assert str(new.value) == str(old.value)


def test_bad_encoding_gets_todays_error(tmp_path):
    path = tmp_path / "latin.csv"
    path.write_bytes(b"a,b\n1,\xff\n")
    with pytest.raises(ValueError, match="is not UTF-8 text") as new:
        read_candidates(path)
    with pytest.raises(ValueError) as old:
        old_reader(path)
    assert str(new.value) == str(old.value)


def test_bad_cells_are_named_by_column_row_and_file_line(tmp_path):
    path = write(tmp_path, "x,c\n0.5,a\n\n0.7,\n0.2,a\n")
    message = f"--candidates {str(path)!r}: feature column 'c', row 1 (file line 4) is empty"
    with pytest.raises(ValueError, match="categorical feature must be a category") as err:
        read_candidates(path, categorical="c")
    assert str(err.value).startswith(message)
    with pytest.raises(ValueError, match=r"feature column 'x', row 2 \(file line 5\) is 'inf'"):
        read_candidates(write(tmp_path, "x,c\n0.5,a\n\n0.7,b\ninf,a\n"))
    big = write(tmp_path, f"x,y\n1,2\n3,{10 * MAX_ABS_VALUE:g}\n")
    with pytest.raises(ValueError, match=r"'y', row 1 \(file line 3\): 1e\+151 is too large"):
        read_candidates(big)
    huge = write(tmp_path, f"n,y\n{2**53 + 1},2\n3,4\n")
    with pytest.raises(ValueError, match=r"'n', row 0 \(file line 2\): 9007199254740993 is beyond"):
        read_candidates(huge)


def test_numeric_files_read_as_before(tmp_path):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 4)) * 10.0 ** rng.integers(-5, 5, size=(300, 4))
    lines = [",".join(f"{v:.17g}" for v in row) for row in X]
    lines[5] = f' {X[5, 0]:.17g} ,"{X[5, 1]:.17g}",{X[5, 2]:.17g},{X[5, 3]:.17g}'
    lines.insert(7, "")  # a blank line
    path = write(tmp_path, "a,b,c,d\r\n" + "\r\n".join(lines) + "\r\n")
    table = read_candidates(path)
    np.testing.assert_array_equal(table.X, old_reader(path))
    np.testing.assert_array_equal(table.X, X)
    assert table.names == ["a", "b", "c", "d"] and table.carried == {}


def test_a_large_file_loads(tmp_path):
    """200 000 rows x 10 (benchmarks/csv_read.py times it against the old reader)."""
    rng = np.random.default_rng(0)
    X = np.round(rng.uniform(-100, 100, size=(200_000, 9)), 3)
    ids = np.char.add("row-", np.arange(200_000).astype(str))
    path = tmp_path / "large.csv"
    body = np.column_stack([ids, X.astype(str)])
    path.write_text("id," + ",".join(f"x{j}" for j in range(9)) + "\n"
                    + "\n".join(",".join(r) for r in body.tolist()) + "\n")  # fmt: skip
    table = read_candidates(path)
    assert table.X.shape == (200_000, 9) and table.names == [f"x{j}" for j in range(9)]
    np.testing.assert_array_equal(table.X, X)
    assert table.carried["id"][123_456] == "row-123456"


# -- a study's table --------------------------------------------------------------------------
def test_a_study_keeps_its_table_and_its_trials_are_typed(tmp_path):
    from frontierbo.study.create import create_study, load_study

    table = read_candidates(write(tmp_path, MIXED))
    db = tmp_path / "s.db"
    plain = create_study(table.X, storage=db, name="plain", algorithm="random")
    assert plain.table is None  # a study of a plain matrix: its columns' floats
    trial = plain.ask()
    assert trial.params == dict(zip(plain.columns, map(float, trial.x), strict=True))
    create_study(table, storage=db, algorithm="random", seed=3)
    study = load_study(storage=db, name="default")
    stored = study.table
    assert stored.names == table.names and stored.describe() == table.describe()
    for i in range(len(table)):
        assert stored.params(i) == table.params(i)
        assert stored.carried_values(i) == table.carried_values(i)
    study.optimize(lambda t: float(t.params["temp"]), n_trials=4)
    for t in load_study(
        storage=db, name="default"
    ).trials:  # Python gets what `ask` prints: typed values
        assert t.params == table.params(t.row) and t.carried == table.carried_values(t.row)
        assert type(t.params["n"]) is int and type(t.params["ok"]) is bool
        assert t.to_dict()["carried"] == t.carried
    with study.storage.transaction(write=False) as ex:
        assert load_table(ex, plain.study_id, plain.candidates, plain.columns) is None


def test_a_schema_3_database_gets_the_tables_table(tmp_path):
    """Schema 3 created ``frontierbo_tables`` with the first CSV study; 4 has it always."""
    import sqlite3

    from frontierbo.study.create import create_study, load_study
    from frontierbo.study.storage import SCHEMA_VERSION

    db = tmp_path / "s.db"
    create_study(np.eye(3), storage=db, algorithm="random").storage.close()
    with sqlite3.connect(db) as conn:  # as schema 3 left a database of plain matrices
        conn.executescript(
            """DROP TABLE frontierbo_tables;
            UPDATE frontierbo_meta SET value = '3' WHERE key = 'schema_version';"""
        )
    assert load_study(storage=db).table is None
    with sqlite3.connect(db) as conn:
        version = conn.execute("SELECT value FROM frontierbo_meta WHERE key = 'schema_version'")
        assert version.fetchone()[0] == str(SCHEMA_VERSION) == "4"
    table = read_candidates(write(tmp_path, MIXED))
    create_study(table, storage=db, name="csv", algorithm="random")
    assert load_study(storage=db, name="csv").table.carried == table.carried


# -- the shell ----------------------------------------------------------------------------------
def test_the_shell_reads_a_real_csv(cli, tmp_path):
    path = write(tmp_path, MIXED)
    db = tmp_path / "s.db"
    status, out, err = cli(["study", "create", "--candidates", path, "--storage", db,
                            "--algorithm", "random", "--direction", "maximize"])  # fmt: skip
    assert status == 0, err
    assert "4 candidates, 4 features (temp, n, solvent, ok)" in out
    assert "sample_id: carried (not a feature) (text, every value distinct)" in out
    asked = []
    for k in range(2):
        status, out, err = cli(["ask", "--storage", db])
        assert status == 0, err
        trial = json.loads(out)
        table = read_candidates(path)
        assert trial["params"] == table.params(trial["row"])
        assert trial["carried"] == table.carried_values(trial["row"])
        assert isinstance(trial["params"]["n"], int) and isinstance(trial["params"]["ok"], bool)
        asked.append(trial)
        assert cli(["tell", "--storage", db, "--trial", k, "--value", 2.5 * k])[0] == 0
    status, out, err = cli(["study", "show", "--storage", db])
    assert status == 0, err
    assert "| trial | row | sample_id | note | temp | n | solvent | ok | state | value |" in out
    best = asked[1]
    assert f"best: trial 1, row {best['row']}, sample_id {best['carried']['sample_id']}" in out
    line = next(x for x in out.splitlines() if x.startswith("| 1 |"))
    assert (
        f"| {best['carried']['sample_id']} |" in line and f"| {best['params']['solvent']} |" in line
    )
    status, out, _ = cli(["study", "show", "--storage", db, "--json"])
    shown = json.loads(out)["trials"]
    assert [t["carried"] for t in shown] == [t["carried"] for t in asked]
    assert [t["params"] for t in shown] == [t["params"] for t in asked]


def test_the_shell_overrides_the_rule(cli, tmp_path):
    path = write(tmp_path, MIXED)
    db = tmp_path / "s.db"
    status, out, err = cli(["study", "create", "--candidates", path, "--storage", db,
                            "--ids", "solvent", "--categorical", "n"])  # fmt: skip
    assert status == 0, err
    assert "3 features (temp, n, ok)" in out and "solvent: carried (not a feature) (--ids)" in out
    trial = json.loads(cli(["ask", "--storage", db])[1])
    assert set(trial["carried"]) == {"sample_id", "solvent", "note"}
    status, _, err = cli(["study", "create", "--candidates", path, "--storage", tmp_path / "t.db",
                          "--ids", "nope"])  # fmt: skip
    assert status == 2 and "--ids column(s) ['nope'] not found" in err


def test_a_numeric_study_asks_as_before(cli, tmp_path):
    """A plain numeric CSV: params by column name (whole numbers as ints), no "carried" key."""
    path = write(tmp_path, "a,b\n0.5,1\n0.25,2\n0.75,3\n")
    db = tmp_path / "s.db"
    assert cli(["study", "create", "--candidates", path, "--storage", db])[0] == 0
    trial = json.loads(cli(["ask", "--storage", db])[1])
    assert set(trial["params"]) == {"a", "b"} and isinstance(trial["params"]["b"], int)
    assert "carried" not in trial
