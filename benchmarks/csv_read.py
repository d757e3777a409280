"""Reading a candidates CSV: the pandas reader (``study.tables.read_candidates``) against the
reader ``study create`` used before it (``io.read_table`` + ``io.column``: Python's ``csv`` and
one ``float()`` per cell).

Two files, written by the script with a seeded generator: a numeric one (``--rows`` x
``--columns`` floats, 6 significant digits) and a mixed one of the same size (an ID column, a
text category with 8 values, an integer column, the rest floats), which only the new reader
reads. Each reader is timed ``--repeats`` times (median), both on the same files; the script
checks that the two give the same matrix on the numeric file.

Run: ``python benchmarks/csv_read.py [--rows 200000] [--columns 10] [--repeats 3] [--seed 0]``
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np


def old_reader(path: Path) -> np.ndarray:
    """``study create``'s reader before the tables module (every column a float feature)."""
    from frontierbo.io import column, read_table, select_feature_columns

    header, rows, lines = read_table(path, "--candidates")
    names = select_feature_columns(header, rows, None, [], "no column", "--candidates")
    return np.column_stack(
        [column(rows, lines, header.index(name), name, "feature") for name in names]
    )


def new_reader(path: Path) -> np.ndarray:
    from frontierbo.study.tables import read_candidates

    return read_candidates(path).X


def write_files(directory: Path, rows: int, columns: int, seed: int) -> tuple[Path, Path]:
    rng = np.random.default_rng(seed)
    X = rng.uniform(-100, 100, size=(rows, columns))
    numeric = directory / "numeric.csv"
    np.savetxt(numeric, X, fmt="%.6g", delimiter=",", comments="",
               header=",".join(f"x{j}" for j in range(columns)))  # fmt: skip
    mixed = directory / "mixed.csv"
    solvents = np.array(["water", "ethanol", "toluene", "acetone", "hexane", "dmso", "thf", "dcm"])
    with open(mixed, "w") as fh:
        fh.write("sample_id,solvent,n," + ",".join(f"x{j}" for j in range(columns - 3)) + "\n")
        cats = solvents[rng.integers(0, solvents.size, rows)]
        ints = rng.integers(1, 9, rows)
        for i in range(rows):
            floats = ",".join(f"{v:.6g}" for v in X[i, : columns - 3])
            fh.write(f"S-{i:07d},{cats[i]},{ints[i]},{floats}\n")
    return numeric, mixed


def timed(read, path: Path, repeats: int) -> tuple[float, np.ndarray]:
    seconds, out = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        out = read(path)
        seconds.append(time.perf_counter() - start)
    return statistics.median(seconds), out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--columns", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.rows < 1 or args.columns < 4 or args.repeats < 1:
        parser.error("--rows and --repeats must be >= 1, --columns >= 4")
    start = time.perf_counter()
    import pandas  # noqa: F401 - once per process: the first read of a fresh process pays it

    import_s = time.perf_counter() - start
    with tempfile.TemporaryDirectory() as tmp:
        numeric, mixed = write_files(Path(tmp), args.rows, args.columns, args.seed)
        size = numeric.stat().st_size / 2**20
        old_s, old_X = timed(old_reader, numeric, args.repeats)
        new_s, new_X = timed(new_reader, numeric, args.repeats)
        mixed_s, mixed_X = timed(new_reader, mixed, args.repeats)
    same = np.array_equal(old_X, new_X)
    print(f"{args.rows} rows x {args.columns} columns ({size:.1f} MiB), median of {args.repeats}")
    print("| file    | reader                 | seconds | ratio old/new |")
    print("|---------|------------------------|--------:|--------------:|")
    print(f"| numeric | old (csv + float())    | {old_s:7.3f} |               |")
    print(f"| numeric | new (pandas)           | {new_s:7.3f} | {old_s / new_s:13.1f} |")
    print(f"| mixed   | new (id, category, int)| {mixed_s:7.3f} |               |")
    print(f"same matrix on the numeric file: {same}; mixed file: {mixed_X.shape[1]} model "
          "inputs (8 one-hot + 1 int + floats)")  # fmt: skip
    print(f"importing pandas (once per process, e.g. each `study create`): {import_s:.3f} s")
    if not same:
        raise SystemExit("the readers disagree on the numeric file")


if __name__ == "__main__":
    main()
