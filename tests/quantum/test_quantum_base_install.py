"""After the README's base install (no scikit-learn), the quick quantum reproduction runs the
synthetic settings and says in one line which part was skipped and how to enable it (issue 10)."""

import json
import sys

import pytest

from frontierbo.quantum.experiment import MAIN_SETTINGS, unavailable

AUTOML = tuple(s for s in MAIN_SETTINGS if s.startswith("automl"))
SYNTHETIC = tuple(s for s in MAIN_SETTINGS if s.startswith("synthetic"))


@pytest.fixture
def no_sklearn(monkeypatch):
    for name in [m for m in sys.modules if m == "sklearn" or m.startswith("sklearn.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "sklearn", None)  # import sklearn -> ImportError


def test_only_automl_needs_scikit_learn(no_sklearn):
    assert AUTOML and SYNTHETIC
    assert all("frontierbo[automl]" in unavailable(s) for s in AUTOML)
    assert all(unavailable(s) is None for s in SYNTHETIC)


@pytest.mark.data("quantum/synth_function.json")
def test_quick_reproduction_skips_automl_with_one_line(no_sklearn, cli, tmp_path):
    out = tmp_path / "q"
    status, text, err = cli(["reproduce", "quantum-bo", "--quick", "--runs", "1", "--out", out])
    assert status == 0, err
    skipped = [line for line in text.splitlines() if line.startswith("**Skipped**")]
    assert len(skipped) == 1
    assert all(f"`{s}`" in skipped[0] for s in AUTOML)
    assert "pip install 'frontierbo[automl]'" in skipped[0]
    results = json.loads((out / "results.json").read_text())
    assert sorted(results["skipped"]) == sorted(AUTOML)
    runs = [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()]
    assert runs and not any("automl" in r["run_id"] for r in runs)


def test_naming_an_automl_setting_without_scikit_learn_is_one_clear_error(
    no_sklearn, cli, tmp_path
):
    argv = ["reproduce", "quantum-bo", "--quick", "--datasets", AUTOML[0], "--out", tmp_path / "q"]
    status, _, err = cli(argv)
    assert status == 2 and len(err.strip().splitlines()) == 1
    assert f"--datasets {AUTOML[0]}: " in err and "frontierbo[automl]" in err
    assert not (tmp_path / "q").exists()
