"""``frontierbo run ldp-bo`` says so when the run did worse than uniform random play."""

from __future__ import annotations

import json

import numpy as np
import pytest

from frontierbo.ldp.userdata import format_ldp_result

NOTE = "note: worse than uniform random play"


@pytest.fixture
def rewards(tmp_path):
    """5 heavy-tailed arms x 30 rows, means 0, 0.3, ..., 1.2 plus sampling error."""
    rng = np.random.default_rng(7)
    table = rng.standard_t(3, size=(30, 5)) + np.arange(5) * 0.3
    path = tmp_path / "rewards.csv"
    lines = ["a,b,c,d,e"] + [",".join(f"{v:.4f}" for v in row) for row in table]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path, np.loadtxt(path, delimiter=",", skiprows=1)  # the values as written


def test_a_run_worse_than_uniform_play_is_noted_and_a_better_one_is_not(cli, rewards, tmp_path):
    path, table = rewards
    means = table.mean(axis=0)
    uniform = (means.max() - means.mean()) / means.max()  # exact: the mean gap over the arms
    worse = 0
    for i, extra in enumerate([["--epsilon", "0.5"], []]):
        out = tmp_path / str(i)
        argv = ["run", "ldp-bo", "--data", path, "--algorithm", "ata", "-T", "30", "--out", out]
        status, text, err = cli(argv + extra)
        assert status == 0, err
        result = json.loads((out / "result.json").read_text())
        average = result["regret"]["average"]
        assert result["regret"]["uniform_play_average"] == pytest.approx(uniform)
        assert np.mean(means.max() - means[result["arms"]]) / means.max() == pytest.approx(average)
        noted = [line for line in text.splitlines() if line.startswith(NOTE)]
        if average > uniform:
            worse += 1
            assert len(noted) == 1 and result["notes"], text
            assert f"{average:.4g} > {uniform:.4g}" in noted[0]
            if extra:  # the privatised rewards' noise, next to the spread of the arm means
                scale = result["parameters"]["ctl_scale"]
                ratio = scale / np.ptp(means)
                assert f"Laplace noise of scale {scale:.4g}, {ratio:.2g} times" in noted[0]
        else:
            assert noted == [] and result["notes"] == [], text
    assert worse == 1  # the private run does worse than chance here, the non-private one better


def test_the_note_is_printed_from_the_result():
    result = {
        "name": "ATA-GP-UCB", "data": "x.csv", "n_arms": 2, "n_rows": 3, "epsilon": None,
        "iterations": 4, "seed": 0, "regret_units": "f / max f",
        "parameters": {"B": 1, "R": 1, "v": 1, "c": 1, "profile": "practical", "beta_scale": 1},
        "best_arm_found": {"name": "a", "index": 0, "mean": 0.5, "share_of_plays": 1.0},
        "best_arm": {"name": "b", "index": 1, "mean": 1.0},
        "regret": {"t": [4], "cumulative": [2.0], "average": 0.5, "uniform_play_average": 0.25},
        "notes": ["worse than uniform random play: ..."],
    }  # fmt: skip
    assert format_ldp_result(result).count(NOTE) == 1
    assert NOTE not in format_ldp_result(result | {"notes": []})
