"""benchmarks/bos2_tables.py: the sync that carries a running reproduction into a committed
store (it must never lose or duplicate a record), and the progress line written from a store."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import bos2_tables  # noqa: E402

#: A run order of 50 images in which the tests' images 1, 2, 49 and 50 come in that order.
ORDER = list(range(1, 51))


def record(image: int, target: int, method: str, seconds: float, success=True, mode="rescale"):
    config = {"dataset": "mnist", "victim": "mnist-10k", "image": image, "target": target,
              "method": method, "label": 3, "budget": 900}  # fmt: skip
    if method not in ("genattack", "zoo", "autozoom"):  # these clip in both profiles
        config["range_mode"] = mode
    body = {"run_id": f"mnist/i{image}/t{target}/{method}", "config": config,
            "success": success, "queries": 50, "seconds": seconds}  # fmt: skip
    return json.dumps(body) + "\n"


def instance(image: int, target: int, seconds=(10.0, 20.0, 30.0)) -> str:
    return "".join(
        record(image, target, m, s) for m, s in zip(bos2_tables.GP, seconds, strict=True)
    )


def test_update_store_copies_complete_records_only(tmp_path):
    store, run = tmp_path / "store.jsonl", tmp_path / "runs.jsonl"
    store.write_text(instance(1, 4))
    run.write_text(instance(1, 4) + instance(1, 5) + '{"config": {"dataset": "mn')  # torn tail
    assert bos2_tables.update_store(str(store), str(run)) == 3
    assert store.read_text() == instance(1, 4) + instance(1, 5)
    assert bos2_tables.update_store(str(store), str(run)) == 0  # again: nothing new, no duplicate
    assert store.read_text() == instance(1, 4) + instance(1, 5)


def test_update_store_creates_a_new_store_from_its_first_run(tmp_path):
    store, run = tmp_path / "store.jsonl", tmp_path / "runs.jsonl"
    run.write_text(instance(1, 4) + '{"config"')
    assert bos2_tables.update_store(str(store), str(run)) == 3
    assert store.read_text() == instance(1, 4)


def test_progress_of_a_store_with_no_finished_instance(tmp_path):
    store = tmp_path / "store.jsonl"
    store.write_text(record(8272, 4, "bos2", 870.0, success=False))
    runs = bos2_tables.stored(str(store), "mnist")
    line = bos2_tables.progress(runs, "mnist", "MNIST, clip", "store.jsonl", ORDER)
    assert line == "- MNIST, clip (`store.jsonl`): 0 of 450 instances done; 450 to go."


def test_with_cheap_fills_only_the_missing_attacks_of_begun_instances_in_their_range_mode():
    gp = {(1, 4): {"bos2": json.loads(record(1, 4, "bos2", 9.0, mode="clip"))},
          (1, 5): {"bos2": json.loads(record(1, 5, "bos2", 9.0))}}  # fmt: skip
    cheap = {key: {m: json.loads(record(*key, m, 1.0, success=False, mode="clip"))
                   for m in ("bos2", "genattack", "pgd")}
             for key in ((1, 4), (1, 5), (1, 6))}  # fmt: skip
    runs = bos2_tables.with_cheap(gp, cheap)
    assert set(runs) == {(1, 4), (1, 5)}  # (1, 6) not begun by the GP store
    assert set(runs[(1, 4)]) == {"bos2", "genattack", "pgd"}
    assert runs[(1, 4)]["bos2"]["seconds"] == 9.0  # the store's own record is kept
    # a clip PGD record says nothing about a rescale instance; GenAttack clips in both
    assert set(runs[(1, 5)]) == {"bos2", "genattack"}


def test_update_store_refuses_a_run_that_does_not_continue_the_store(tmp_path):
    store, run = tmp_path / "store.jsonl", tmp_path / "runs.jsonl"
    store.write_text(instance(1, 4) + instance(1, 5))
    run.write_text(instance(1, 4))  # an older or another folder: would lose a record
    with pytest.raises(SystemExit, match="does not continue"):
        bos2_tables.update_store(str(store), str(run))
    assert store.read_text() == instance(1, 4) + instance(1, 5)
    with pytest.raises(SystemExit, match="no file"):
        bos2_tables.update_store(str(store), str(tmp_path / "missing.jsonl"))


def test_progress_counts_instances_and_prices_the_rest_at_the_mean_so_far(tmp_path):
    store = tmp_path / "store.jsonl"
    # two finished instances (60 s and 120 s for the three GP attacks), one with BOS² only
    store.write_text(instance(1, 4) + instance(1, 5, (40.0, 40.0, 40.0)) + record(1, 6, "bos2", 5))
    runs = bos2_tables.stored(str(store), "mnist")
    line = bos2_tables.progress(runs, "mnist", "MNIST, rescale", "store.jsonl", ORDER)
    # 448 left at (60 + 120) / 2 = 90 s each: 40 320 s = 11.2 core-hours
    assert "2 of 450 instances done (2 targets of 1 image); 448 to go" in line
    assert "about 11 core-hours at the mean of the 2 done in run order (90 s per instance" in line
    assert "one GP attack's mean: a success 30 s)" in line  # (10 + 20 + 30 + 3 * 40) / 6


def test_cost_left_prices_failures_and_successes_apart():
    finished = [{m: {"seconds": 900.0, "success": False} for m in bos2_tables.GP},
                {m: {"seconds": 60.0, "success": True} for m in bos2_tables.GP}]  # fmt: skip
    line = bos2_tables.cost_left(finished, 4)
    # (2 700 + 180) / 2 = 1 440 s per instance, 4 left: 1.6 core-hours, printed as 2
    assert line == (", about 2 core-hours at the mean of the 2 done in run order (1440 s per "
                    "instance for the three GP attacks; one GP attack's mean: a success 60 s; a failure (run to T) 900 s)")  # fmt: skip
    # 1 left: 0.4 core-hours, printed as 0; 3 left: 1.2, printed as 1 core-hour, singular
    assert bos2_tables.cost_left(finished, 1).startswith(", about 0 core-hours at the mean")
    assert bos2_tables.cost_left(finished, 3).startswith(", about 1 core-hour at the mean")


def test_progress_names_whole_and_partial_images_filled_from_both_ends(tmp_path):
    store = tmp_path / "store.jsonl"
    front = "".join(instance(1, t) for t in range(9)) + instance(2, 4)
    store.write_text(front + instance(50, 8) + instance(50, 9) + instance(49, 1))
    runs = bos2_tables.stored(str(store), "mnist")
    line = bos2_tables.progress(runs, "mnist", "MNIST, clip", "store.jsonl", ORDER)
    assert "13 of 450 instances done (1 whole image and 4 targets of 3 other images)" in line


def test_cost_left_says_when_its_mean_mixes_machines():
    finished = [{m: {"seconds": 60.0, "success": True, "machine": name} for m in bos2_tables.GP}
                for name in ("AMD EPYC", "Intel Xeon")]  # fmt: skip
    assert bos2_tables.cost_left(finished, 4).endswith(
        "a success 60 s; records of 2 machines, whose cores differ in speed)"
    )
    assert "machines" not in bos2_tables.cost_left(finished[:1], 4)


def test_cost_left_is_silent_without_data_or_work():
    assert bos2_tables.cost_left([], 10) == ""
    assert bos2_tables.cost_left([{m: {"seconds": 1.0} for m in bos2_tables.GP}], 0) == ""


def test_asr_interval_is_the_exact_clopper_pearson_interval():
    # all or none of n succeed: the open end is 0.025^(1/n), 0.6915 for n = 10
    assert bos2_tables.asr_interval(0, 10) == "0/10 (0 %, 95 % CI 0–31 %)"
    assert bos2_tables.asr_interval(10, 10) == "10/10 (100 %, 95 % CI 69–100 %)"
    assert bos2_tables.asr_interval(29, 34) == "29/34 (85 %, 95 % CI 69–95 %)"


def far_end_store(tmp_path):
    """Image 1 from the front (targets 4 and 5 done, 6 begun), then image 50, the last, from the
    far end, appended before the front reached target 6 (label 3: targets run 4, 5, 6, ...)."""
    store = tmp_path / "store.jsonl"
    far = instance(50, 4, (1.0, 1.0, 1.0)) + instance(50, 5, (1.0, 1.0, 1.0))
    store.write_text(instance(1, 4) + far + instance(1, 5) + record(1, 6, "bos2", 5))
    return bos2_tables.in_run_order(bos2_tables.stored(str(store), "mnist"), [1, 2, 50])


def test_tables_list_images_in_run_order_not_in_the_order_they_reached_the_store(tmp_path):
    store = tmp_path / "store.jsonl"
    store.write_text(instance(1, 4) + instance(50, 4) + instance(2, 4))
    runs = bos2_tables.in_run_order(bos2_tables.stored(str(store), "mnist"), [1, 2, 50])
    assert [image for image, _ in runs] == [1, 2, 50]
    rows = [line.split(" | ")[0] for line in bos2_tables.table(runs).splitlines()[2:-1]]
    assert rows == ["| 1 (3)"] * 9 + ["| 2 (3)"] * 9 + ["| 50 (3)"] * 9


def test_summary_and_cost_count_only_the_instances_done_in_run_order(tmp_path):
    runs = far_end_store(tmp_path)
    assert bos2_tables.run_order_prefix(runs, [1, 2, 50]) == [(1, 4), (1, 5)]
    summary = bos2_tables.summary(runs, "MNIST, clip", "mnist", [1, 2, 50])
    assert summary.startswith(
        "- **MNIST, clip**: 2 instances with all three GP attacks done in run order."
    )
    assert summary.endswith("Not counted above: 2 instances finished out of run order (filled "
                            "from the far end, those that ran fastest first: not a sample).")  # fmt: skip
    line = bos2_tables.progress(runs, "mnist", "MNIST, clip", "store.jsonl", ORDER)
    # 4 done (2 of them from the far end), priced at the front's mean: (60 + 60) / 2 s each
    assert "4 of 450 instances done (4 targets of 2 images); 446 to go" in line
    assert "at the mean of the 2 done in run order (60 s per instance" in line


def test_summary_of_a_store_with_only_far_end_instances(tmp_path):
    store = tmp_path / "store.jsonl"
    store.write_text(instance(50, 4) + record(1, 4, "bos2", 5.0))
    runs = bos2_tables.in_run_order(bos2_tables.stored(str(store), "mnist"), [1, 50])
    assert bos2_tables.summary(runs, "MNIST, clip", "mnist", [1, 50]) == (
        "- **MNIST, clip**: no instance in run order has all three GP attacks done yet.\n"
        "  - Not counted above: 1 instance finished out of run order (filled from the far end, "
        "those that ran fastest first: not a sample)."
    )


def test_run_order_stops_at_the_first_image_not_begun(tmp_path):
    # image 1 whole, image 2 not begun, image 3 begun from the far end: 3 is not in run order
    store = tmp_path / "store.jsonl"
    store.write_text("".join(instance(1, t) for t in range(10) if t != 3) + instance(3, 4))
    runs = bos2_tables.in_run_order(bos2_tables.stored(str(store), "mnist"), [1, 2, 3])
    assert bos2_tables.run_order_prefix(runs, [1, 2, 3]) == [
        (1, (3 + k) % 10) for k in range(1, 10)
    ]
    assert "Not counted above: 1 instance finished out of run order" in bos2_tables.summary(
        runs, "MNIST, clip", "mnist", [1, 2, 3]
    )


def test_paired_successes_counts_discordant_instances_and_their_exact_mcnemar_p():
    def pair(a: bool, b: bool) -> dict:
        return {"bos2": {"success": a}, "bayesopt": {"success": b}}

    # only BOS² on 5, only BayesOpt on 1, both on 3, neither on 2: the 3 and 2 carry no weight
    records = [pair(True, False)] * 5 + [pair(False, True)] + [pair(True, True)] * 3
    records += [pair(False, False)] * 2
    line = bos2_tables.paired_successes(records, pairs=(("bos2", "bayesopt"),))
    # two-sided exact binomial on 5 of 6: 2 * (1 + 6) / 64 = 0.21875
    assert line == "BOS² 5 against BayesOpt 1 (p = 0.22)"
    # a pair the records do not hold is left out, not counted as failures
    assert bos2_tables.paired_successes(records, pairs=(("bos2", "genattack"),)) == ""
    assert bos2_tables.paired_successes([pair(True, True)], pairs=(("bos2", "bayesopt"),)) == (
        "BOS² 0 against BayesOpt 0 (p = 1)"
    )
