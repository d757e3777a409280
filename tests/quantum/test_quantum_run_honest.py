"""Honest quantum reports: ``run quantum-bo`` says up front by how much and why the queries spent
exceed T; the quick reproduction says, beside its headline table, why the paper's Q-GP-UCB trails
GP-UCB."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from frontierbo.quantum.experiment import METHODS


@pytest.fixture
def arms(tmp_path):
    """15 Gaussian arms on a line, a peak at x = 0.6."""
    x = np.linspace(0.0, 1.0, 15)
    means = np.exp(-((x - 0.6) ** 2) / 0.02)
    lines = ["x,mean,sigma"] + [f"{a:.4f},{m:.4f},0.3" for a, m in zip(x, means, strict=True)]
    path = tmp_path / "arms.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("budget", [3, 2000])
def test_queries_beyond_the_budget_are_stated_up_front(cli, arms, tmp_path, budget):
    out = tmp_path / "out"
    argv = ["run", "quantum-bo", "--data", arms, "--queries", budget, "--out", out]
    status, text, err = cli(argv)
    assert status == 0, err
    result = json.loads((out / "result.json").read_text())
    stages = result["stages"]
    over = result["total_queries"] - budget
    assert over > 0  # IQAE's last stage overshoots here (stage 0 alone spends 6 queries)
    assert result["over_budget"] == over
    second = text.splitlines()[1]  # right under the header line
    k, last = len(stages) - 1, stages[-1]
    assert second.startswith(f"budget T = {budget} exceeded by {over} queries: "), text
    assert f"the last stage (stage {k}" in second
    assert f"started at query {last['started_at']} and needed {last['queries']}." in second
    assert last["started_at"] < budget <= last["started_at"] + last["queries"]
    assert "last stage runs whole" in second and f"first {budget} queries only" in second


def test_a_run_within_the_budget_says_nothing_of_it(cli, arms, tmp_path):
    out = tmp_path / "out"
    argv = ["run", "quantum-bo", "--data", arms, "--queries", 50, "--algorithm", "gp-ucb"]
    status, text, err = cli([*argv, "--out", out])
    assert status == 0, err
    result = json.loads((out / "result.json").read_text())
    assert result["total_queries"] == 50 and result["over_budget"] == 0
    assert "exceeded" not in text


def test_quick_report_says_why_the_paper_q_gp_ucb_trails_gp_ucb(cli, tmp_path):
    out = tmp_path / "quick"
    argv = ["reproduce", "quantum-bo", "--quick", "--runs", "1"]
    status, _, err = cli([*argv, "--datasets", "synthetic-bernoulli", "--out", out])
    assert status == 0, err
    summary = json.loads((out / "results.json").read_text())["summary"]["synthetic-bernoulli"]
    ratio = summary["q-gp-ucb"]["final"][0] / summary["gp-ucb"]["final"][0]
    assert ratio > 1  # the paper's weighting trails GP-UCB at the quick T
    report = (out / "report.md").read_text()
    # beside the headline table: after it, before the next section
    headline = report.split("## Cumulative regret at the horizon")[1].split("\n## ")[0]
    paper = METHODS["q-gp-ucb"].label
    match = re.search(
        rf"{re.escape(paper)}'s R\(T\) is ([0-9.]+) times GP-UCB's in synthetic-bernoulli "
        rf"because {re.escape(paper)} is the paper's Algorithm 1",
        headline,
    )
    assert match, headline
    assert float(match.group(1)) == pytest.approx(ratio, abs=0.05)
    assert "1/eps^2" in headline and "1/eps^3" in headline
    assert f"'{METHODS['q-gp-ucb-reference'].label}'" in headline


def test_no_sentence_where_the_paper_q_gp_ucb_does_not_trail():
    from frontierbo.quantum.report import _paper_weighting_note

    def entry(regret):
        return {"final": (regret, 0.0)}

    ahead = {"s": {"gp-ucb": entry(50.0), "q-gp-ucb": entry(40.0)}}
    assert _paper_weighting_note(ahead) == []
    assert _paper_weighting_note({"s": {"gp-ucb": entry(50.0)}}) == []
    behind = {"s": {"gp-ucb": entry(10.0), "q-gp-ucb": entry(70.0)}}
    assert "7.0 times GP-UCB's in s because" in _paper_weighting_note(behind)[0]
    mixed = behind | {"t": {"gp-ucb": entry(50.0), "q-gp-ucb": entry(40.0)}}
    assert " in t" not in _paper_weighting_note(mixed)[0]
