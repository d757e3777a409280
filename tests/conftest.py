"""Fixtures and markers shared by every test folder.

* ``@pytest.mark.data("relative/path", ...)``: skip the test when a data file is not under a
  data root (``$FRONTIERBO_DATA``, ``../shared/data`` or the user cache; ``frontierbo data
  where``), with one uniform reason naming how to get it.
* ``@pytest.mark.slow``: a long reproduction; excluded by the default ``pytest -q`` (see
  pyproject.toml) and run by CI's second call ``pytest -q -m slow``.
* ``cli``: runs ``frontierbo`` in-process and returns ``(exit status, stdout, stderr)``.
* ``write_csv``: writes a CSV file from a header and rows under ``tmp_path``.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from frontierbo.cli import main
from frontierbo.data import DATA_ENV, data_available, dataset_of


def pytest_configure(config):
    config.addinivalue_line("markers", "data(*paths): skip unless these data files are present")


def pytest_runtest_setup(item):
    for marker in item.iter_markers(name="data"):
        missing = [path for path in marker.args if not data_available(path)]
        if missing:
            pytest.skip(f"{', '.join(missing)} not found under a data root; {_how_to_get(missing)}")


def _how_to_get(missing: list[str]) -> str:
    datasets = {dataset_of(path) for path in missing} - {None}
    fetchable = sorted(d.name for d in datasets if d.fetchable)
    hints = [f"frontierbo data fetch {' '.join(fetchable)}"] if fetchable else []
    if len(fetchable) < len(datasets) or not datasets:
        hints.append(
            f"set ${DATA_ENV} to a root holding them (frontierbo data list says why some "
            "cannot be fetched)"
        )
    return " or ".join(hints)


@pytest.fixture
def cli(capsys):
    """``cli(argv) -> (status, stdout, stderr)`` of ``frontierbo argv`` run in this process."""

    def run(argv):
        status = main([str(arg) for arg in argv])
        captured = capsys.readouterr()
        return status, captured.out, captured.err

    return run


@pytest.fixture
def write_csv(tmp_path):
    """``write_csv(header, rows, name="data.csv") -> Path`` of a new CSV file in ``tmp_path``."""

    def write(header, rows, name: str = "data.csv") -> Path:
        path = tmp_path / name
        with open(path, "w", newline="") as fh:
            writer = csv.writer(fh)
            writer.writerow(header)
            writer.writerows(rows)
        return path

    return write
