"""``frontierbo study create --help`` describes how the --candidates columns are classified, and
what it describes is what create does."""

from __future__ import annotations

import pytest

from frontierbo.study import tables


@pytest.fixture
def create_help(capsys) -> str:
    from frontierbo.cli import main

    with pytest.raises(SystemExit) as done:
        main(["study", "create", "--help"])
    assert done.value.code == 0
    return " ".join(capsys.readouterr().out.split())  # argparse wraps lines


def test_create_help_describes_the_classification(create_help):
    text = create_help
    assert "every numeric column is a feature" not in text
    for kind in ("numbers (float)", "whole numbers (int)", "True/False (bool)",
                 "text with repeated values (categorical, one-hot"):  # fmt: skip
        assert kind in text
    assert f"at most {tables.MAX_CHOICES} categories" in text
    # carried columns: an index, ID-named columns, distinct or constant text
    assert "row numbers 0..n-1 or 1..n" in text
    for word in sorted(tables._ID_WORDS | tables._ID_NAMES):
        assert f" {word}" in text.split("named like an ID")[1].split(")")[0], word
    assert "text whose values are all distinct or all the same" in text
    assert "A column mixing numbers and words is refused" in text
    assert "--features (exactly these; the rest carried), --ids and --categorical" in text


def test_the_help_is_what_create_does(cli, write_csv, tmp_path):
    header = ["row", "sample_id", "temp", "n", "solvent", "note", "flag", "const"]
    rows = [
        [0, 101, 1.5, 3, "water", "a", True, "x"],
        [1, 102, 2.5, 4, "ethanol", "b", False, "x"],
        [2, 103, 3.5, 3, "water", "c", True, "x"],
        [3, 104, 0.5, 5, "ethanol", "d", False, "x"],
    ]
    path = write_csv(header, rows)
    status, out, err = cli(["study", "create", "--candidates", path, "--storage",
                            tmp_path / "s.db"])  # fmt: skip
    assert status == 0, err
    kinds = {
        "row": "carried", "sample_id": "carried", "temp": "float feature",
        "n": "int feature", "solvent": "categorical feature", "note": "carried",
        "flag": "bool feature", "const": "carried",
    }  # fmt: skip
    columns = out.split("columns: ", 1)[1]
    for name, kind in kinds.items():
        assert f"{name}: {kind}" in columns, (name, columns)
    mixed = write_csv(["x", "batch"], [[1.0, "1"], [2.0, "2"], [3.0, "n/a"]], name="mixed.csv")
    status, _, err = cli(["study", "create", "--candidates", mixed, "--storage",
                          tmp_path / "t.db"])  # fmt: skip
    assert status == 2 and "mixes numbers and text" in err
