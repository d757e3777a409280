"""The BOS² reproduction's specs and summary, and `frontierbo attack` on a user's model."""

from __future__ import annotations

import json

import numpy as np
import pytest

from frontierbo.attack.experiment import (
    METHODS,
    build_attack,
    check_options,
    counted_queries,
    instance_targets,
    run_id,
)
from frontierbo.attack.summary import ORDERING_LABELS, difficulty, method_row, orderings
from frontierbo.experiments.report import Options


def mnist_images():
    """The MNIST test set, or without it the 20 test images that ship in foolbox (indices
    0-19, the same images): what the reproduction attacks."""
    from frontierbo.attack.data import load_mnist, load_mnist_samples
    from frontierbo.attack.experiment import mnist_test_available

    if mnist_test_available():
        return load_mnist("test")
    pytest.importorskip("foolbox", reason="no MNIST test set and no foolbox samples")
    return load_mnist_samples()


def test_instance_targets_are_the_other_nine_classes():
    assert instance_targets(3, 9) == [4, 5, 6, 7, 8, 9, 0, 1, 2]
    assert instance_targets(9, 2) == [0, 1]
    assert run_id("mnist", 12, 4, "zoo", {}) == "mnist/i12/t4/zoo"
    settings = {"range_mode": "rescale", "fitting": "full"}
    assert run_id("mnist-10k", 12, 4, "bos2", settings) == "mnist-10k/i12/t4/bos2/rescale-full"


def test_method_settings_store_only_what_changes_the_run_and_profiles_share_the_rest():
    from frontierbo.attack.experiment import method_settings, serves

    assert method_settings("zoo", "paper", "full") == {}
    assert method_settings("zoo", "reference", "scalable") == {}
    assert method_settings("pgd", "reference", "fast") == {"range_mode": "rescale"}
    assert method_settings("bos2", "paper", "scalable") == {
        "range_mode": "clip",
        "fitting": "scalable",
    }
    assert method_settings("genattack", "reference", "full") == {"genattack": "readme"}
    assert method_settings("genattack", "paper", "full") == {"genattack": "code-defaults"}
    zoo = {"method": "zoo"}
    assert serves(zoo, "paper") and serves(zoo, "reference")
    bos2 = {"method": "bos2", "range_mode": "rescale", "fitting": "full"}
    assert serves(bos2, "reference") and not serves(bos2, "paper")
    assert not serves({"method": "genattack", "genattack": "code-defaults"}, "reference")


def test_genattack_readme_settings_reach_the_attack():
    attack = build_attack("genattack", "mnist", "full", genattack="readme")
    assert (attack.population, attack.mutation_rate, attack.alpha) == (4, 0.30, 0.5)
    assert (attack.adaptive, attack.temperature) == (False, 0.1)
    attack = build_attack("genattack", "cifar10", "full", genattack="readme")
    assert (attack.population, attack.mutation_rate, attack.alpha) == (4, 0.05, 0.25)
    default = build_attack("genattack", "mnist", "full")
    assert (default.population, default.mutation_rate, default.adaptive) == (6, 0.005, True)


def test_method_row_counts_over_successful_instances_only():
    records = [
        {"success": True, "queries": 40, "seconds": 1.0},
        {"success": False, "queries": 900, "seconds": 3.0},
        {"success": True, "queries": 100, "seconds": 2.0},
        {"success": True, "queries": 61, "seconds": 2.0},
    ]
    row = method_row(records)
    assert row["asr"] == 75.0 and row["successes"] == 3 and row["instances"] == 4
    assert (row["max"], row["median"]) == (100, 61)
    assert row["mean"] == pytest.approx(67.0)
    assert row["queries_to_success"] == [40, 61, 100]


def test_loop_statistics_leave_out_each_runs_last_loop():
    def loop(dimension, length, stopped=False):
        return {"dimension": dimension, "length": length, "stopped_early": stopped}

    records = [  # a success in its third loop (cut at 7 queries), a failure cut by T at 12
        {"success": True, "queries": 88, "seconds": 1.0,
         "loops": [loop(36, 40), loop(196, 10, True), loop(196, 7)]},
        {"success": False, "queries": 900, "seconds": 1.0, "loops": [loop(36, 40), loop(36, 12)]},
        {"success": True, "queries": 31, "seconds": 1.0, "loops": [loop(324, 0)]},
    ]  # fmt: skip
    row = method_row(records)
    assert row["loops_ended"] == 3  # 40, 10 (stopped), 40
    assert row["loop_length_mean"] == 30.0 and row["loops_stopped_early"] == pytest.approx(1 / 3)
    assert row["dimensions"] == {"36": 3, "196": 2, "324": 1}  # every loop's dimension
    assert "loop_length_mean" not in method_row(records[2:])  # no loop ended by its own rule


def test_orderings_check_spec_items_2_5_6_7_within_a_dataset():
    def row(asr, mean, median, max_, loop_mean=None):
        out = {"asr": asr, "mean": mean, "median": median, "max": max_}
        return out if loop_mean is None else {**out, "loop_length_mean": loop_mean}

    rows = {
        "bos2": row(99, 108.75, 63, 897, loop_mean=26.5),
        "bos2-nostop": row(99, 133.34, 88, 895, loop_mean=40.0),
        "bayesopt": row(98, 116.99, 79, 817),
        "genattack": row(64, 428.66, 396, 881),
    }
    mnist = orderings({"mnist": rows}, budget=900)["mnist"]
    assert all(mnist[k] for k in ("stopping_cuts_mean", "loops_shorter_with_stopping",
                                  "bos2_mean_lt_bayesopt", "max_within_budget",
                                  "mean_above_median"))  # fmt: skip
    cifar = orderings({"cifar10": rows}, budget=896)["cifar10"]
    assert cifar["stopping_cuts_mean"] is None and cifar["bos2_mean_lt_bayesopt"] is None
    assert cifar["max_within_budget"] is False  # 897 > 896
    assert orderings({"mnist": rows})["mnist"]["max_within_budget"] is None  # no budget given
    short = {**rows, "bos2-nostop": {**rows["bos2-nostop"], "loop_length_mean": 39.5}}
    assert orderings({"mnist": short})["mnist"]["loops_shorter_with_stopping"] is False
    flat = {**rows, "genattack": row(64, 396, 396, 881)}
    assert orderings({"mnist": flat})["mnist"]["mean_above_median"] is False


def test_difficulty_is_per_method_and_needs_both_datasets():
    def row(asr, median):
        return {"asr": asr, "median": median}

    mnist = {"bos2": row(99, 63), "bayesopt": row(98, 79), "genattack": row(64, 396)}
    cifar = {"bos2": row(84, 164.5), "bayesopt": row(79, 176.5), "genattack": row(64, 386)}
    assert difficulty({"mnist": mnist}) == {}
    # the thesis's own rows: GenAttack has equal ASR and a lower CIFAR median
    assert difficulty({"mnist": mnist, "cifar10": cifar}) == {
        "bos2": True, "bayesopt": True, "genattack": False
    }  # fmt: skip
    assert difficulty({"mnist": mnist, "cifar10": {"bos2": row(0.0, None)}}) == {}


def test_orderings_are_none_for_methods_not_run_and_use_zero_asr():
    tables = {
        "cifar10": {
            "bos2": {"asr": 0.0, "median": None},
            "bayesopt": {"asr": 0.0, "median": None},
            "genattack": {"asr": 50.0},
        }
    }
    checks = orderings(tables)["cifar10"]
    assert checks["bo_attacks_beat_genattack_by_10"] is False  # 0 % is not "missing"
    assert checks["zoo_autozoom_le_25"] is None
    assert checks["bos2_asr_ge_bayesopt_minus_2"] is True
    assert set(checks) == set(ORDERING_LABELS)  # every check has the report's wording


def test_counted_queries_leave_out_the_free_initial_queries_and_never_go_negative():
    assert counted_queries(131, 30) == 101  # 30 initial queries not in the budget
    assert counted_queries(131, 0) == 131  # the default: they count
    assert counted_queries(12, 30) == 0  # a success at initial query 12 cost no budget


def test_check_options_names_the_bad_option():
    good = {
        "methods": ("bos2",), "profile": ("paper",), "budget": 900, "targets": 9,
        "fitting": "full", "mnist_victim": "mnist", "mnist_images": "random",
    }  # fmt: skip
    assert check_options({**good, "count_init_in_budget": 1})["count_init_in_budget"] is True
    with pytest.raises(ValueError, match="--methods"):
        check_options({**good, "methods": ("square",), "count_init_in_budget": True})
    with pytest.raises(ValueError, match="--queries"):
        check_options({**good, "budget": 20, "count_init_in_budget": True})
    with pytest.raises(ValueError, match="--targets"):
        check_options({**good, "targets": 10, "count_init_in_budget": True})
    with pytest.raises(ValueError, match="--profile scalable is now --fitting scalable"):
        check_options({**good, "profile": ("scalable",), "count_init_in_budget": True})
    with pytest.raises(ValueError, match=r"--profile must be among \['paper', 'reference'\]"):
        check_options({**good, "profile": ("thesis",), "count_init_in_budget": True})
    with pytest.raises(ValueError, match="--fitting"):
        check_options({**good, "fitting": "paper", "count_init_in_budget": True})
    with pytest.raises(ValueError, match="--mnist-victim"):
        check_options({**good, "mnist_victim": "cw", "count_init_in_budget": True})
    with pytest.raises(ValueError, match=r"--mnist-images must be one of \['random', 'first'\]"):
        check_options({**good, "mnist_images": "last", "count_init_in_budget": True})
    both = check_options({**good, "profile": "reference", "count_init_in_budget": True})
    assert both["profile"] == ("reference",)


@pytest.mark.parametrize("method", METHODS)
def test_every_method_builds_with_its_name(method):
    if method == "pgd":
        pytest.importorskip("torch")  # the white-box reference holds the victim itself
    attack = build_attack(method, "mnist", "fast")
    assert attack.name == method


def test_groups_sets_the_additive_groups_of_bos2_only():
    assert build_attack("bos2", "mnist", "fast").perturbation.n_groups == 12  # the thesis's M
    assert build_attack("bos2-nostop", "mnist", "fast", groups=1).perturbation.n_groups == 1
    with pytest.raises(ValueError, match=r"--groups\) applies to bos2 and bos2-nostop only"):
        build_attack("bayesopt", "mnist", "fast", groups=2)
    with pytest.raises(ValueError, match=r"groups \(--groups\) must be an integer in \[1, inf\]"):
        build_attack("bos2", "mnist", "fast", groups=0)


def test_attack_command_with_one_group(cli, tmp_path):
    pytest.importorskip("torch")
    from frontierbo.attack.victims import weights_dir

    images, labels = mnist_images()
    np.savez(tmp_path / "imgs.npz", images=images[:1] + 0.5, labels=labels[:1])
    base = [
        "attack", "--model", weights_dir() / "mnist_cw.pt", "--architecture", "cw-mnist",
        "--images", tmp_path / "imgs.npz", "--target-class", str((labels[0] + 1) % 10),
        "--queries", "40", "--fitting", "fast", "--groups", "1",
    ]  # fmt: skip
    status, _, err = cli([*base, "--out", tmp_path / "out"])
    assert status == 0, err
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["groups"] == 1 and summary["results"][0]["queries"] <= 40
    status, _, err = cli([*base, "--attack", "zoo"])
    assert status == 2 and "bos2 and bos2-nostop only" in err


def test_attack_command_on_a_user_state_dict(cli, tmp_path):
    pytest.importorskip("torch")
    from frontierbo.attack.victims import weights_dir

    images, labels = mnist_images()
    pixels = np.round((images[:1] + 0.5) * 255).astype(np.uint8)
    np.savez(tmp_path / "imgs.npz", images=pixels, labels=labels[:1])
    out = tmp_path / "out"
    args = [
        "attack", "--model", weights_dir() / "mnist_cw.pt", "--architecture", "cw-mnist",
        "--images", tmp_path / "imgs.npz", "--target-class", str((labels[0] + 1) % 10),
        "--attack", "genattack", "--queries", "60", "--out", out,
    ]  # fmt: skip
    status, text, err = cli(args)
    assert status == 0, err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["instances"] == 1 and summary["results"][0]["queries"] <= 60
    lines = (out / "queries.jsonl").read_text().splitlines()
    assert len(lines) == summary["results"][0]["queries"]
    assert all(json.loads(line)["linf"] <= 0.3 + 1e-9 for line in lines)
    with np.load(out / "adversarial.npz") as saved:
        assert saved["x_adv"].shape == (1, 28, 28, 1)
    status, _, err = cli(["attack", "--images", tmp_path / "imgs.npz"])
    assert status == 2 and "--model" in err and "--target-class" in err


def test_summary_rows_use_the_options_datasets_and_methods(tmp_path):
    from frontierbo.attack.summary import summarise

    def config(mode):
        return {"dataset": "mnist", "method": "bos2", "range_mode": mode, "fitting": "full"}

    records = [
        {"config": config("clip"), "success": True, "queries": 50, "seconds": 1.0},
        {"config": config("clip"), "success": False, "queries": 100, "seconds": 1.0},
        {"config": config("rescale"), "success": True, "queries": 70, "seconds": 1.0},
    ]  # fmt: skip
    options = Options(
        out=tmp_path, datasets=("mnist",), quick=False, runs=None, seed=0,
        params={"methods": ("bos2",), "budget": 900, "profile": ("paper", "reference"),
                "fitting": "full", "count_init_in_budget": True, "mnist_victim": "mnist",
                "mnist_images": "random"},
    )  # fmt: skip
    result = summarise(records, options)
    assert result["profiles"]["paper"]["tables"]["mnist"]["bos2"]["asr"] == 50.0
    assert result["profiles"]["reference"]["tables"]["mnist"]["bos2"]["asr"] == 100.0
    assert result["tables"] == result["profiles"]["paper"]["tables"]  # the figures' profile
    assert result["victims"] == {"mnist": "mnist"}


def test_figures_are_written_for_tables_and_examples(tmp_path):
    from frontierbo.attack.report import write_figures

    mnist_images()  # the examples figure draws each clean image: skips without an MNIST source
    # any 28 x 28 perturbed image in the attack space will do
    x0 = np.random.default_rng(7).uniform(-0.5, 0.5, (28, 28, 1)).astype(np.float32)
    row = method_row([{"success": True, "queries": 40, "seconds": 1.0}])
    result = {
        "budget": 900,
        "tables": {"mnist": {"bos2": row, "zoo": method_row([])}},
        "examples": {"mnist": [{"image": 7, "target": 3, "x_adv": np.clip(x0 + 0.2, -0.5, 0.5)}]},
    }
    paths = write_figures(result, tmp_path)
    assert [p.name for p in paths] == ["queries_cdf.png", "adversarial_examples.png"]
    assert all(p.stat().st_size > 1000 for p in paths)


@pytest.mark.parametrize(
    "method, expected", [("bos2", "rescale"), ("pgd", "rescale"), ("genattack", "clip")]
)
def test_range_mode_reaches_the_oracle_of_the_methods_that_follow_it(monkeypatch, method, expected):
    pytest.importorskip("torch")
    mnist_images()  # skips when neither the test set nor foolbox's samples are here
    from frontierbo.attack import base
    from frontierbo.attack.experiment import run_worker
    from frontierbo.experiments.runner import RunSpec

    seen = {}

    def spy(attack, oracle, seed=0):
        seen["mode"], seen["budget"] = oracle.range_mode, oracle.budget
        return base.AttackResult(False, 0, None, float("-inf"), "gave-up")

    monkeypatch.setattr(base, "execute", spy)
    from frontierbo.attack.experiment import method_settings

    config = {
        "dataset": "mnist", "victim": "mnist", "image": 0, "label": 7, "target": 1,
        "method": method, "budget": 50, "count_init_in_budget": True,
        **method_settings(method, "reference", "fast"),
    }  # fmt: skip
    record = run_worker(RunSpec("mnist/i0/t1/" + method, config, 0))
    assert seen == {"mode": expected, "budget": 50} and record["success"] is False


def test_mnist_instances_fall_back_to_foolboxs_test_images(monkeypatch, tmp_path):
    pytest.importorskip("foolbox")
    from frontierbo.attack import experiment
    from frontierbo.attack.report import report_markdown

    monkeypatch.setattr(experiment, "mnist_test_available", lambda: False)
    experiment._test_images.cache_clear()
    try:
        images, labels = experiment._test_images("mnist")
    finally:
        experiment._test_images.cache_clear()
    assert images.shape == (20, 28, 28, 1) and labels[:4].tolist() == [7, 2, 1, 0]
    assert experiment.image_source("mnist") == experiment.MNIST_SUBSTITUTE
    assert "substitute" in experiment.image_source("mnist")
    result = {
        "paper": "p", "budget": 100, "profile": ["reference"], "fitting": "fast",
        "count_init_in_budget": True, "victims": {"mnist": "mnist"},
        "images": {"mnist": experiment.MNIST_SUBSTITUTE},
        "profiles": {"reference": {"tables": {}, "checks": {}, "difficulty": {}}},
    }  # fmt: skip
    assert f"**mnist instances**: {experiment.MNIST_SUBSTITUTE}" in report_markdown(result, [])


def test_mnist_images_first_takes_the_first_correctly_classified_in_file_order(tmp_path):
    pytest.importorskip("torch")
    mnist_images()  # skips when neither the test set nor foolbox's samples are here
    from frontierbo.attack import experiment

    images, labels = experiment._test_images("mnist")
    correct = np.flatnonzero(experiment._victim("mnist").predict(images) == labels)
    first = experiment.chosen_images("mnist", 0, "first")
    drawn = experiment.chosen_images("mnist", 0, "random")
    n = experiment.IMAGES["mnist"]
    assert list(first) == correct[:n].tolist()  # the reference code's generate_attack_data_set
    assert sorted(drawn) != list(drawn) and set(drawn) <= set(correct.tolist())
    assert experiment.chosen_images("mnist", 0) == drawn  # random stays the default
    from frontierbo.attack.report import REPRODUCTION

    options = REPRODUCTION.options(tmp_path, datasets=("mnist",), runs=2, targets=1,
                                   mnist_images="first")  # fmt: skip
    specs = experiment.build_specs(options)
    assert [s.config["image"] for s in specs][:: len(options["methods"])] == list(first[:2])


def test_quick_reproduces_the_reference_profile_with_the_cw_victim(tmp_path):
    pytest.importorskip("torch")  # the reproduction's options need a runnable dataset
    from frontierbo.attack.experiment import method_settings
    from frontierbo.attack.report import REPRODUCTION

    options = REPRODUCTION.options(tmp_path, quick=True)
    assert options["profile"] == ("reference",) and options["mnist_victim"] == "mnist"
    assert options["fitting"] == "fast" and options["budget"] == 100
    assert (
        method_settings("bos2", options["profile"][0], options["fitting"])["range_mode"]
        == "rescale"
    )
