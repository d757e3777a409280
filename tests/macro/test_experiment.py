"""The experiments of ``reproduce macro-bo`` as data (thesis Section 4.4) and its summary."""

from __future__ import annotations

import numpy as np
import pytest

from frontierbo.experiments.report import Options
from frontierbo.macro import experiment as ex
from frontierbo.macro.summary import published_key, summarise_experiment


def options(tmp_path, **params):
    values = {**ex.DEFAULTS, **params}
    runs = values.pop("runs")
    quick = values.pop("quick", False)
    return Options(tmp_path, ex.DATASETS, quick, runs, 0, ex.check_options(values))


def test_specs_share_runs_between_experiments_and_resume_keys_are_stable(tmp_path):
    specs = ex.build_specs(options(tmp_path, experiments=("e1", "e6")))
    ids = [s.run_id for s in specs]
    assert len(ids) == len(set(ids))
    e1 = ex.EXPERIMENT_SPECS["e1"]
    per_realization = len(e1.rows())  # 9 main rows + 16 beta rows, two of them shared
    assert per_realization == 9 + 16 - 2
    # E6 adds only its three sample sizes on E1's realizations 0..34
    assert len(specs) == 250 * per_realization + 35 * 3
    assert "plankton/k4/r007/db-gp-ucb" in ids
    again = ex.build_specs(options(tmp_path, experiments=("e6", "e1")))
    assert {s.run_id: s.seed for s in again} == {s.run_id: s.seed for s in specs}


def test_quick_and_runs_settings(tmp_path):
    quick = options(tmp_path, quick=True, experiments=("e2", "e5"), **ex.QUICK)
    specs = ex.build_specs(quick)
    assert {s.config["realization"] for s in specs if s.config["dataset"] == "traffic"} == {0, 1, 2}
    assert sum(s.config["dataset"] == "plankton" for s in specs) == 2  # E5: one realization
    capped = next(s for s in specs if s.config["method"] == "any-h4")
    assert capped.config["caps"] == {
        "a1_samples": 20,
        "anytime_samples": 50,
        "anytime_iterations": 100,
    }
    two = ex.build_specs(options(tmp_path, runs=2, experiments=("e4", "e5")))
    assert sorted({(s.config["kappa"], s.config["realization"]) for s in two}) == [
        (1, 0),
        (1, 1),
        (2, 0),
    ]


def test_options_are_checked(tmp_path):
    with pytest.raises(ValueError, match="--experiments must be among"):
        options(tmp_path, experiments=("e7",))
    with pytest.raises(ValueError, match="anytime_iterations must be an integer >= 1"):
        options(tmp_path, anytime_iterations=0)


def test_e3_is_skipped_with_the_fetch_command_when_the_lab_graph_is_absent(tmp_path, monkeypatch):
    from frontierbo import data
    from frontierbo.macro.report import REPRODUCTION

    monkeypatch.setattr(data, "searched_roots", lambda: [("empty", tmp_path / "none")])
    why = ex.unavailable("temperature")
    assert "frontierbo data fetch macro-temperature" in why
    assert ex.unavailable("plankton") is None and ex.unavailable("traffic") is None
    opts = REPRODUCTION.options(tmp_path / "out", quick=True)
    assert opts.datasets == ("plankton", "traffic") and opts.skipped == {"temperature": why}
    with pytest.raises(ValueError, match="temperature needs the Intel-lab corridor graph"):
        ex.build_specs(REPRODUCTION.options(tmp_path / "out", experiments=("e3",)))


def test_variants_and_run_ids():
    assert ex.Variant(5).key == "k5"
    assert ex.Variant(5, None).key == "k5-all"
    assert ex.Variant(2, buoy=(5, 5)).key == "k2-buoy"
    assert ex.run_id("traffic", ex.Variant(1, None), 3, "ei") == "traffic/k1-all/r003/ei"


def test_the_quick_cap_applies_to_the_main_sample_sizes_only():
    caps = {"a1_samples": 20, "anytime_samples": 50, "anytime_iterations": 100}
    assert ex.METHODS["eps-h4"].build(caps).name == "eps-macro-bo H=4"
    assert ex.METHODS["eps-h4"].samples == "a1"
    assert ex.METHODS["eps-h4-n50"].samples is None  # E6 studies N itself
    assert ex.METHODS["any-h2-ref-b0.2"].samples == "a3"
    assert dict(ex.METHODS["any-h4-ref"].options)["lam"] == 5.0


def test_worker_runs_one_realization_deterministically(tmp_path):
    spec = next(
        s
        for s in ex.build_specs(options(tmp_path, runs=1, experiments=("e1",)))
        if s.config["method"] == "db-gp-ucb"
    )
    out = ex.run_worker(spec)
    assert out["n"].tolist() == [0, 4, 8, 12, 16, 20]
    assert out["locations"].shape == (21,)
    assert out["locations"][0] == 25 * 50 + 25  # the centre
    assert out["nodes"] == 5 * 5  # Table 4.2, H = 1: (1 + A) per iteration
    again = ex.run_worker(spec)
    np.testing.assert_array_equal(again["avg_output"], out["avg_output"])


def _record(method, realization, m1, m2, kappa=4):
    return {
        "config": {
            "dataset": "plankton",
            "kappa": kappa,
            "max_actions": 20,
            "buoy": None,
            "realization": realization,
            "method": method,
        },
        "n": [0, 20],
        "avg_output": [0.0, m1],
        "simple_regret": [2.0, m2],
        "nodes": 10,
        "seconds_per_iteration": 0.5,
        "locations": [0],
        "source": "synthetic",
    }


def test_summary_pairs_differences_over_realizations_by_hand():
    records = [
        _record("eps-h4", 0, 0.9, 1.0),
        _record("eps-h4", 1, 0.5, 1.2),
        _record("db-gp-ucb", 0, 0.6, 1.5),
        _record("db-gp-ucb", 1, 0.4, 1.3),
        _record("db-gp-ucb", 2, 9.0, 9.0),  # beyond the runs asked for: ignored
    ]
    out = summarise_experiment(ex.EXPERIMENT_SPECS["e1"], records, runs=2)
    row = out["tables"]["main"]["rows"]["db-gp-ucb@k4"]
    assert row["runs"] == 2
    assert row["avg_output"] == pytest.approx([0.5, 0.1])  # s.e. = 0.1414 / sqrt(2)
    assert row["thesis"]["avg_output"] == [0.5379, 0.0462]
    diff = out["differences"][0]
    assert (diff["a"], diff["b"], diff["runs"]) == ("eps-h4@k4", "db-gp-ucb@k4", 2)
    # paired: (0.3, 0.1) -> mean 0.2, s.e. std(ddof=1)/sqrt(2) = 0.1414/1.414 = 0.1
    assert diff["avg_output"] == pytest.approx([0.2, 0.1])
    assert diff["simple_regret"] == pytest.approx([-0.3, 0.2])
    assert diff["avg_output_thesis"] == 0.093


def test_published_differences_follow_from_the_published_tables():
    """The sigma_y differences the text quotes follow from the tables."""
    pub = ex.PUBLISHED
    checked = 0
    for key, claims in pub["differences"].items():
        sigma = pub["sigma_y"][ex.EXPERIMENT_SPECS[key].dataset]
        rows = {}
        for table in pub["tables"].get(key, {}).values():
            rows.update(table["rows"])
        for claim in claims:
            if claim["a"] not in rows or claim["b"] not in rows:
                continue  # E4, E6: no table in the thesis
            for metric in ("avg_output", "simple_regret"):
                if metric in claim:
                    a, b = rows[claim["a"]][metric][0], rows[claim["b"]][metric][0]
                    assert (a - b) / sigma == pytest.approx(claim[metric], abs=1e-3), claim
                    checked += 1
    assert checked == 22
    assert published_key("any-h2-ref-b0.2@k5") == "any-h2-b0.2@k5"


def test_the_thesis_anytime_rows_are_compared_with_the_reference_profile():
    from frontierbo.macro.summary import _thesis_rows

    rec = [_record("x", 0, 0.0, 0.0)]
    by_row = {"any-h4@k5": rec, "any-h4-ref@k5": rec, "db-gp-ucb@k5": rec, "q-ei@k5": []}
    assert _thesis_rows(by_row) == {"any-h4@k5": "any-h4-ref@k5", "db-gp-ucb@k5": "db-gp-ucb@k5"}
