"""End-to-end checks of ``frontierbo reproduce quantum-bo`` against the published numbers
(docs/decisions.md#quantum-bo-experiment-level-checks-and-their-bands).

The runs read the authors' function and RFF draws from the shared data root (validation use); the
checks of the configuration (settings, options, specs) need no data.
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from frontierbo.quantum.experiment import (
    NOISY_METHOD,
    PUBLISHED,
    PUBLISHED_REGRET,
    SETTINGS,
    SHAPE_SETTING,
    build_specs,
    run_one,
    setting_specs,
)
from frontierbo.quantum.report import REPRODUCTION

needs_data = pytest.mark.data("quantum/synth_function.json")


def _finals(setting, method, runs, T=None):
    specs = setting_specs([setting], [method], runs=runs, T=T)
    return np.array([run_one(s.config)["final_regret"] for s in specs])


@needs_data
def test_gp_ucb_replays_the_published_runs_exactly():
    """Legacy RandomState(run) streams + the authors' f and RFF -> 54.022 +- 2.750."""
    finals = _finals("synthetic-gauss0.3", "gp-ucb", 10)
    assert finals.mean() == pytest.approx(54.022, abs=1e-3)
    assert finals.std() / np.sqrt(10) == pytest.approx(2.750, abs=1e-3)


@needs_data
def test_reference_code_q_gp_ucb_plateaus_and_paper_weighting_does_not():
    """The 1/eps^3 mean (docs/decisions.md#quantum-bo-reference-mean-weighting) gives the
    published plateau (34.1 +- 1.1 Bernoulli); the paper's eq. (3) with beta = 1 + ln n keeps
    exploring (independent re-simulation: ~714)."""
    ref = _finals("synthetic-bernoulli", "q-gp-ucb-reference", 10)
    assert 25 <= np.median(ref) <= 40
    assert abs(ref.mean() - 34.14) < 3 * np.hypot(ref.std() / np.sqrt(10), 1.08)
    paper = _finals("synthetic-bernoulli", "q-gp-ucb", 5)
    assert paper.mean() > 300
    gp = _finals("synthetic-bernoulli", "gp-ucb", 3, T=2000)
    assert np.all(gp < 100)


@needs_data
def test_reproduce_quick_writes_artefacts_and_resumes(tmp_path):
    from frontierbo.quantum.report import reproduce

    methods = ("gp-ucb", "q-gp-ucb", "q-gp-ucb-reference", "linucb", "q-linucb")
    kw = {"datasets": ["synthetic-gauss0.3"], "methods": methods, "quick": True, "runs": 2}
    first = reproduce(tmp_path, progress=False, **kw)
    for name in ("report.md", "results.json", "summary.csv", "fig_synthetic-gauss0.3.png"):
        assert (tmp_path / name).stat().st_size > 0
    lines = (tmp_path / "runs.jsonl").read_text().splitlines()
    assert len(lines) == 2 * len(methods)
    report = (tmp_path / "report.md").read_text()
    assert "42.76 ± 2.28" in report  # the published GP-UCB R(2000) beside ours
    s = first["summary"]["synthetic-gauss0.3"]
    assert s["gp-ucb"]["T"] == 2000 and s["gp-ucb"]["runs"] == 2
    assert s["linucb"]["final"][0] > s["gp-ucb"]["final"][0]
    reproduce(tmp_path, progress=False, **kw)
    assert (tmp_path / "runs.jsonl").read_text().splitlines() == lines  # nothing re-run
    json.loads((tmp_path / "results.json").read_text())


@needs_data
@pytest.mark.data("pima/diabetes.csv")
def test_reproduce_cli_quick_and_bad_dataset(tmp_path, capsys):
    pytest.importorskip("sklearn")
    from frontierbo.cli import main

    out = tmp_path / "q"
    code = main(["reproduce", "quantum-bo", "--quick", "--runs", "1", "--datasets", "automl-sigma0.05", "--out", str(out)])  # fmt: skip
    assert code == 0
    assert "AutoML" in capsys.readouterr().out
    assert (out / "fig_automl-sigma0.05.png").exists()
    assert main(["reproduce", "quantum-bo", "--datasets", "mnist", "--out", str(out)]) == 2
    assert "--datasets" in capsys.readouterr().err
    assert main(["reproduce", "ldp-bo", "--source", "generated", "--out", str(out)]) == 2
    assert "--source" in capsys.readouterr().err


def test_settings_follow_the_paper_and_reference_code():
    s = SETTINGS["automl-sigma0.01"]
    assert (s.T, s.runs, s.classical_beta) == (5000, 5, 1.0)
    assert s.rff_quantum[1:] == (0.2, 200, 0.5) and s.rff_classical[1:] == (1.0, 200, 0.5)
    s = SETTINGS["synthetic-gauss0.4"]
    assert (s.T, s.runs, s.classical_beta) == (10_000, 10, np.sqrt(2))


def test_options_quick_and_full_specs(tmp_path):
    """--quick: T = 2000 / 1000, 3 runs, no shape test; full: each setting's T and runs plus the
    T = 3e4 shape test; --noisy adds at most 3 Aer runs per synthetic setting."""
    keys = ["synthetic-gauss0.3", "automl-sigma0.01"]
    # the specs need no data file: run as if Pima and scikit-learn were here
    repro = dataclasses.replace(REPRODUCTION, unavailable=lambda name: None)
    quick = repro.options(tmp_path, datasets=keys, quick=True, noisy=True)
    specs = build_specs(quick)
    assert {(s.config["setting"], s.config["T"]) for s in specs} == {
        ("synthetic-gauss0.3", 2000),
        ("automl-sigma0.01", 1000),
    }
    assert max(s.config["run"] for s in specs) == 2
    assert sum(s.config["method"] == NOISY_METHOD for s in specs) == 3  # synthetic only
    full = build_specs(repro.options(tmp_path, datasets=keys))
    by_key = {}
    for s in full:
        by_key.setdefault(s.config["setting"], set()).add((s.config["T"], s.config["run"]))
    assert max(by_key["synthetic-gauss0.3"]) == (10_000, 9)
    assert max(by_key["automl-sigma0.01"]) == (5_000, 4)
    assert max(by_key[SHAPE_SETTING]) == (30_000, 9)
    assert not any(s.config["method"] == NOISY_METHOD for s in full)
    with pytest.raises(ValueError, match=r"source \(--source\) must be one of"):
        REPRODUCTION.options(tmp_path, source="mine")
    with pytest.raises(ValueError, match=r"--datasets must be among \['synthetic-gauss0.3'"):
        REPRODUCTION.options(tmp_path, datasets=["synthetic-gauss0.3-long"])


def test_source_auto_falls_back_to_the_projects_draws_without_the_reference_file(
    tmp_path, monkeypatch
):
    from frontierbo import data
    from frontierbo.quantum import experiment

    monkeypatch.setattr(data, "searched_roots", lambda: [("empty", tmp_path / "none")])
    options = REPRODUCTION.options(tmp_path / "out", datasets=["synthetic-bernoulli"], quick=True)
    assert options["source"] == "generated"
    assert options["source_note"] == experiment.SOURCE_SUBSTITUTE
    assert {s.config["source"] for s in build_specs(options)} == {"generated"}
    with pytest.raises(FileNotFoundError, match="frontierbo data fetch quantum-reference"):
        REPRODUCTION.options(tmp_path / "out", source="reference")
    assert "frontierbo data fetch pima" in experiment.unavailable("automl-sigma0.01")
    assert experiment.unavailable("synthetic-gauss0.3") is None


@needs_data
def test_source_auto_uses_the_reference_file_when_present(tmp_path):
    options = REPRODUCTION.options(tmp_path, datasets=["synthetic-bernoulli"])
    assert options["source"] == "reference" and options["source_note"] is None


def test_published_numbers_are_package_data():
    assert PUBLISHED["paper"].endswith("NeurIPS 2023")
    assert PUBLISHED_REGRET["synthetic-gauss0.3"]["gp-ucb"][10_000] == (54.02, 2.75)
    assert set(PUBLISHED_REGRET) == set(REPRODUCTION.datasets)
