"""Rewrite BOS² run records made before the victims and profiles were named (one-off, idempotent).

Those records ran on the victims of that time (MNIST: the C&W CNN trained here on 10 000 images,
now ``mnist-10k``), named the BOS²/BayesOpt GP settings ``profile`` (now ``fitting``: paper ->
full), stored ``range_mode`` on every method (only BOS², its ablation, BayesOpt and PGD follow
it; GenAttack, ZOO and AutoZOOM always clipped) and ran GenAttack with its code's defaults. This
moves each record to the current config and run id (:func:`frontierbo.attack.experiment.run_id`);
outcomes, seeds and everything else are kept byte for byte.

    python tools/migrate_bos2_records.py records/bos2/*.jsonl
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from frontierbo.attack.experiment import FITTING_METHODS, RANGE_MODE_METHODS, run_id
from frontierbo.io import write_text_atomic

OLD_FITTING = {"paper": "full", "scalable": "scalable", "fast": "fast"}
OLD_VICTIM = {"mnist": "mnist-10k", "cifar10": "cifar10"}


def migrate(record: dict) -> dict:
    """The record under the current config; a record already migrated is returned as is."""
    c = dict(record["config"])
    if "victim" in c:
        return record
    method = c["method"]
    profile = c.pop("profile")
    mode = c.pop("range_mode", "clip")
    config = {"dataset": c.pop("dataset"), "victim": OLD_VICTIM[record["config"]["dataset"]]}
    config.update(c)
    settings = {}
    if method in RANGE_MODE_METHODS:
        settings["range_mode"] = mode
    if method in FITTING_METHODS:
        settings["fitting"] = OLD_FITTING[profile]
    if method == "genattack":
        settings["genattack"] = "code-defaults"
    config.update(settings)
    rid = run_id(config["victim"], config["image"], config["target"], method, settings)
    return {
        "run_id": rid,
        "config": config,
        **{k: v for k, v in record.items() if k not in ("run_id", "config")},
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+", type=Path)
    for path in ap.parse_args().files:
        lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
        if not lines or "config" not in lines[0]:
            print(f"{path}: not a run store, left alone")
            continue
        out = [json.dumps(migrate(r), separators=(",", ":"), ensure_ascii=False) for r in lines]
        write_text_atomic(path, "\n".join(out) + "\n")
        print(f"{path}: {len(out)} records")


if __name__ == "__main__":
    main()
