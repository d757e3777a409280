"""The light sensor and stock problems of the paper (Fig. 2) from their real files.

Real data (docs/decisions.md#ldp-bo-real-data-preprocessing-from-the-reference-code):
``ldp/light_sensor/iw_data_all.mat`` and ``ldp/stocks/fin.csv`` below the data root (found by
:func:`frontierbo.data.resolve_data_path`). The files are not redistributable; when they are
missing, :func:`frontierbo.ldp.datasets.get_ldp_problem` builds the surrogates of
:mod:`frontierbo.ldp.surrogates` instead.
"""

from __future__ import annotations

import csv
import os

import numpy as np

from frontierbo.data import KNOWN_SHA256, resolve_data_path, verify_sha256
from frontierbo.ldp.problems import LDPProblem, kernel_from_samples, problem_from_table

LIGHT_FILE = "ldp/light_sensor/iw_data_all.mat"
STOCK_FILE = "ldp/stocks/fin.csv"
#: sha256 of the files read here, from the dataset registry (``frontierbo data list``).
LDP_SHA256: dict[str, str] = {path: KNOWN_SHA256[path] for path in (LIGHT_FILE, STOCK_FILE)}


def _verified_file(relative: str, path, verify: bool):
    file = resolve_data_path(relative, path)
    digest = None
    if verify and (path is None or file.name == os.path.basename(relative)):
        digest = verify_sha256(file, LDP_SHA256[relative])
    return file, digest


def _mat_field(obj, name: str, file):
    try:
        return getattr(obj, name)
    except AttributeError:
        raise ValueError(
            f"light sensor file {str(file)!r}: the struct has no field {name!r} (expected "
            "data.train.sensordata and data.test.sensordata)"
        ) from None


def light_sensor_problem(path: str | os.PathLike | None = None, verify: bool = True) -> LDPProblem:
    """The light sensor problem (Fig. 2 of the paper) from ``iw_data_all.mat``: 41 arms.

    ``f`` = column means of ``data.test.sensordata`` (192 x 41 uint16, cast to float64 before
    any arithmetic); ``K`` = :func:`kernel_from_samples` of ``data.train.sensordata``
    (601 x 41); a reward is a uniformly random test row's reading; ``alpha = 1``. Expected:
    ``B = 945.54`` (arm 3), ``R = 835.28``, ``v = 377421.27``, ``c = 82954.23``.

    Args:
        path: the .mat file; ``None`` searches ``ldp/light_sensor/iw_data_all.mat`` under the
            data roots (:func:`frontierbo.data.resolve_data_path`).
        verify: check the README sha256 (for the known file name).
    """
    from scipy.io import loadmat

    file, digest = _verified_file(LIGHT_FILE, path, verify)
    mat = loadmat(file, squeeze_me=True, struct_as_record=False)
    if "data" not in mat:
        raise ValueError(f"light sensor file {str(file)!r} has no struct named 'data'")
    data = mat["data"]
    train_raw = _mat_field(_mat_field(data, "train", file), "sensordata", file)
    test_raw = _mat_field(_mat_field(data, "test", file), "sensordata", file)
    train = np.asarray(train_raw).astype(np.float64)  # cast BEFORE arithmetic (uint16 wraps)
    test = np.asarray(test_raw).astype(np.float64)
    if train.ndim != 2 or test.ndim != 2 or train.shape[1] != test.shape[1]:
        raise ValueError(
            f"light sensor file {str(file)!r}: train/test sensordata must be 2-D with the same "
            f"number of sensors, got {train.shape} and {test.shape}"
        )
    coords = getattr(data, "coords", None)
    meta = {
        "file": str(file),
        "sha256": digest,
        "train_shape": list(train.shape),
        "test_shape": list(test.shape),
        "arm_names": [f"sensor {i}" for i in range(test.shape[1])],
        "coords": None if coords is None else np.asarray(coords, dtype=float).tolist(),
        "kernel": "empirical covariance of the z-scored train readings",
        "surrogate": False,
    }
    return problem_from_table(
        "light",
        test,
        kernel_from_samples(train),
        source=f"real data: {file} (CMU Intelligent Workplace light sensors, test means)",
        meta=meta,
    )


def read_stock_csv(path: str | os.PathLike) -> tuple[list[str], np.ndarray]:
    """Parse ``fin.csv``: a header ``Date,<ticker>,...`` then one row of prices per day.

    Returns the tickers and the (days, stocks) float64 price matrix.
    """
    with open(path, newline="") as fh:
        rows = [row for row in csv.reader(fh) if row and any(cell.strip() for cell in row)]
    if len(rows) < 3:
        raise ValueError(f"stock file {str(path)!r}: need a header and at least 2 rows of prices")
    header = [cell.strip() for cell in rows[0]]
    if len(header) < 3 or header[0].lower() != "date":
        raise ValueError(
            f"stock file {str(path)!r}: the header must be 'Date,<ticker>,<ticker>,...' with at "
            f"least 2 tickers, got {rows[0][:4]}"
        )
    prices = np.empty((len(rows) - 1, len(header) - 1))
    for i, row in enumerate(rows[1:]):
        if len(row) != len(header):
            raise ValueError(
                f"stock file {str(path)!r}: line {i + 2} has {len(row)} fields, expected "
                f"{len(header)}"
            )
        try:
            prices[i] = [float(cell) for cell in row[1:]]
        except ValueError:
            raise ValueError(
                f"stock file {str(path)!r}: line {i + 2} has a non-numeric price"
            ) from None
    if not np.all(np.isfinite(prices)):
        raise ValueError(f"stock file {str(path)!r}: prices must be finite")
    return header[1:], prices


def stock_problem(path: str | os.PathLike | None = None, verify: bool = True) -> LDPProblem:
    """The stock problem (Fig. 2 of the paper) from ``fin.csv``: 29 arms, 823 days.

    ``f`` = mean price per stock; ``K`` = :func:`kernel_from_samples` of the prices; a reward is
    a uniformly random day's price; ``alpha = 1``. Expected: ``B = 237.33`` (BA, arm 2),
    ``R = 203.29``, ``v = 14437.86``, ``c = 754.22``.

    Args:
        path: the CSV; ``None`` searches ``ldp/stocks/fin.csv`` under the data roots.
        verify: check the README sha256 (for the known file name).
    """
    file, digest = _verified_file(STOCK_FILE, path, verify)
    tickers, prices = read_stock_csv(file)
    meta = {
        "file": str(file),
        "sha256": digest,
        "shape": list(prices.shape),
        "arm_names": tickers,
        "kernel": "empirical covariance of the z-scored prices",
        "surrogate": False,
    }
    return problem_from_table(
        "stock",
        prices,
        kernel_from_samples(prices),
        source=f"real data: {file} (29 Dow-30 adjusted closes 2016-01-04..2019-04-10)",
        meta=meta,
    )
