"""Replace one method's records in a committed BOS² store by a fresh run's, in place.

The stores under records/bos2 are a reproduction's ``runs.jsonl``. When an attack changes (as
white-box PGD did when it began to project onto the image box), its records are run again with
the same command, ids, configs and seeds, and this swaps them in line by line: every record of
``--method`` in ``--store`` is replaced by the record with the same ``run_id`` in ``--runs``,
keeping the store's order and every other method's lines byte for byte. It refuses when a run
is missing from ``--runs`` or its config or seed differ, and writes nothing then.

Run: ``python tools/replace_method_records.py --store records/bos2/bos2-cheap-clip.jsonl
--runs DIR/runs.jsonl --method pgd``
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from frontierbo.io import write_text_atomic


def replaced(store: Path, runs: Path, method: str) -> tuple[str, int, int]:
    """The store's text with ``method``'s records swapped, the records replaced and how many
    changed outcome."""
    fresh = {}
    for line in runs.read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            fresh[record["run_id"]] = line
    out, count, changed = [], 0, 0
    for line in store.read_text(encoding="utf-8").splitlines():
        record = json.loads(line) if line.strip() else None
        if record is None or record["config"]["method"] != method:
            out.append(line)
            continue
        if record["run_id"] not in fresh:
            raise SystemExit(f"{record['run_id']} is not in {runs}")
        new = json.loads(fresh[record["run_id"]])
        if new["config"] != record["config"] or new["seed"] != record["seed"]:
            raise SystemExit(f"{record['run_id']}: config or seed differ")
        out.append(fresh[record["run_id"]])
        count += 1
        changed += new["success"] != record["success"]
    return "\n".join(out) + "\n", count, changed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--runs", type=Path, required=True)
    parser.add_argument("--method", required=True)
    args = parser.parse_args()
    text, count, changed = replaced(args.store, args.runs, args.method)
    write_text_atomic(args.store, text)
    print(f"{args.store}: replaced {count} {args.method} records, {changed} changed outcome")


if __name__ == "__main__":
    main()
