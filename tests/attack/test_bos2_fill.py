"""tools/bos2_fill.py: the far-end order in which a borrowed machine fills a BOS² store."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
import bos2_fill  # noqa: E402
from frontierbo.experiments.runner import RunSpec  # noqa: E402
from frontierbo.experiments.store import ResultStore  # noqa: E402


def spec(image: int, target: int, method: str) -> RunSpec:
    config = {"dataset": "mnist", "image": image, "target": target, "method": method}
    return RunSpec(f"mnist/i{image}/t{target}/{method}", config, image * 10 + target)


def test_fill_order_reverses_images_keeps_targets_and_methods_and_skips():
    specs = [spec(i, t, m) for i in (7, 3, 9) for t in (1, 2) for m in ("bos2", "bayesopt")]
    order = bos2_fill.fill_order(specs, skip={(3, 1)})
    assert [s.run_id for s in order] == [
        "mnist/i9/t1/bos2", "mnist/i9/t1/bayesopt", "mnist/i9/t2/bos2", "mnist/i9/t2/bayesopt",
        "mnist/i3/t2/bos2", "mnist/i3/t2/bayesopt",
        "mnist/i7/t1/bos2", "mnist/i7/t1/bayesopt", "mnist/i7/t2/bos2", "mnist/i7/t2/bayesopt",
    ]  # fmt: skip
    assert {s.seed for s in order} <= {s.seed for s in specs}  # the CLI's seeds, untouched


def test_unreachable_reads_failed_pgd_of_the_dataset_only(tmp_path):
    rows = [("mnist", "pgd", 1, 4, False), ("mnist", "pgd", 1, 5, True),
            ("mnist", "zoo", 2, 4, False), ("cifar10", "pgd", 3, 4, False)]  # fmt: skip
    cheap = tmp_path / "cheap.jsonl"
    cheap.write_text("".join(
        json.dumps({"config": {"dataset": d, "method": m, "image": i, "target": t}, "success": s})
        + "\n" for d, m, i, t, s in rows
    ))  # fmt: skip
    assert bos2_fill.unreachable(cheap, "mnist") == {(1, 4)}
    assert bos2_fill.unreachable(cheap, "cifar10") == {(3, 4)}


def test_logged_worker_appends_each_start_before_running(tmp_path, monkeypatch):
    attempts = tmp_path / "attempts.jsonl"
    seen = []

    def fake_worker(s):
        seen.append([json.loads(line)["run_id"] for line in attempts.read_text().splitlines()])
        return {"success": True}

    monkeypatch.setattr(bos2_fill, "run_worker", fake_worker)
    for s in (spec(1, 2, "bos2"), spec(1, 2, "bayesopt")):
        assert bos2_fill.logged_worker(attempts, s) == {"success": True}
    # the start is on disk before the run begins, so a run a lease kills is still logged
    assert seen == [["mnist/i1/t2/bos2"], ["mnist/i1/t2/bos2", "mnist/i1/t2/bayesopt"]]


def test_unfinished_is_started_minus_stored(tmp_path):
    attempts, store = tmp_path / "attempts.jsonl", ResultStore(tmp_path / "runs.jsonl")
    assert bos2_fill.unfinished(attempts, store) == set()  # no log yet: nothing cut off
    attempts.write_text("".join(json.dumps({"run_id": r}) + "\n" for r in ("a", "b", "c")))
    store.append({"run_id": "b", "config": {}, "seed": 0})
    assert bos2_fill.unfinished(attempts, store) == {"a", "c"}
