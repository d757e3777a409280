"""TGP-UCB / LDP-TGP-UCB, the `reproduce ldp-bo` pipeline and `run ldp-bo` (docs/ldp-bo.md)."""

import json
import math
import re
from dataclasses import replace

import numpy as np
import pytest

from frontierbo.cli import main
from frontierbo.core.gp import FiniteDomainGP
from frontierbo.core.kernels import PrecomputedKernel, SquaredExponential
from frontierbo.experiments import ResultStore
from frontierbo.ldp import experiment as ldp_bo
from frontierbo.ldp import report
from frontierbo.ldp.datasets import get_ldp_problem
from frontierbo.ldp.parameters import ldp_tgp_beta, ldp_tgp_truncation, tgp_truncation
from frontierbo.ldp.report import reproduce
from frontierbo.ldp.tgp_ucb import TGPUCB
from frontierbo.ldp.userdata import load_reward_table, run_ldp_on_csv


def se_gram(n=15, lengthscale=0.2):
    x = np.linspace(0.0, 1.0, n)[:, None]
    return SquaredExponential(lengthscale, 1.0)(x)


# -- TGP-UCB ----------------------------------------------------------------------------------
@pytest.mark.parametrize("private", [False, True])
def test_tgp_without_truncation_is_the_gp_posterior(private):
    K = se_gram()
    lam = 0.7
    kw = {"B": 1.0, "R": 1.0, "eps_priv": 1.0} if private else {"B": 1.0, "v": 2.0}
    algo = TGPUCB(K, 50, lam=lam, seed=0, truncation=math.inf, **kw)
    ref = FiniteDomainGP(PrecomputedKernel.arms(15), PrecomputedKernel(K), noise_variance=lam)
    rng = np.random.default_rng(1)
    arms, ys = [], []
    for _ in range(30):
        arm = algo.ask()
        y = float(rng.standard_t(2) * 20.0)  # heavy tails: would be truncated otherwise
        algo.tell(arm, y)
        ref.add(arm, y)
        arms.append(arm)
        ys.append(y)
    assert algo.n_truncated == 0
    np.testing.assert_allclose(algo.mean, ref.mean, rtol=0, atol=1e-10)
    np.testing.assert_allclose(algo.std, ref.std, rtol=0, atol=1e-10)
    # and the batch formulas (2)-(3): mu = k_t^T (K_t + lam I)^-1 y, sigma^2 = k - k_t^T (.)^-1 k_t
    A = K[np.ix_(arms, arms)] + lam * np.eye(len(arms))
    Kx = K[:, arms]
    mu = Kx @ np.linalg.solve(A, ys)
    var = np.diag(K) - np.einsum("ij,ji->i", Kx, np.linalg.solve(A, Kx.T))
    np.testing.assert_allclose(algo.mean, mu, atol=1e-8)
    np.testing.assert_allclose(algo.std**2, np.maximum(var, 0), atol=1e-8)
    # gamma surrogate = 0.5 ln det(I + K_t / lam) over the played points
    gain = 0.5 * np.linalg.slogdet(np.eye(len(arms)) + K[np.ix_(arms, arms)] / lam)[1]
    assert algo.gamma == pytest.approx(gain, rel=1e-10)


def test_ldp_truncation_replaces_large_rewards_by_zero():
    algo = TGPUCB(se_gram(), 10, B=1.0, R=1.0, eps_priv=1.0, seed=0)
    b1, b2 = ldp_tgp_truncation(1, 1, 1, 1.0), ldp_tgp_truncation(2, 1, 1, 1.0)
    assert algo.truncation_level(1) == b1 == 2.0 and b2 == pytest.approx(2 + 4 * math.log(2))
    algo.tell(3, 5.0)  # round 1: |5| > b_1 = 2 -> 0, not clipped to 2
    algo.tell(3, -4.5)  # round 2: |-4.5| <= b_2 = 4.77 -> kept
    algo.tell(4, b2 + 10.0)  # round 3: above b_3 = 6.39 -> 0
    algo.tell(4, -ldp_tgp_truncation(4, 1, 1, 1.0))  # round 4: exactly b_4 -> kept
    np.testing.assert_array_equal(
        algo.gp.observed_values, [0.0, -4.5, 0.0, -ldp_tgp_truncation(4, 1, 1, 1.0)]
    )
    assert algo.n_truncated == 2 and algo.t == 4


def test_non_private_truncation_and_beta_come_from_parameters():
    algo = TGPUCB(se_gram(), 100, B=1.0, v=4.0, seed=0, beta_scale=0.3)
    assert algo.truncation_level(16) == pytest.approx(tgp_truncation(16, 4.0)) == 4.0
    algo.tell(0, 2.5)  # b_1 = 2 -> truncated
    assert algo.gp.observed_values[0] == 0.0
    priv = TGPUCB(se_gram(), 100, B=1.0, R=1.0, eps_priv=2.0, seed=0, beta_scale=0.3)
    priv.tell(priv.ask(), 0.1)
    priv.ask()
    assert priv.last_beta == pytest.approx(ldp_tgp_beta(2, 1.0, 1.0, 2.0, beta_scale=0.3))
    theory = TGPUCB(se_gram(), 100, B=1.0, R=1.0, eps_priv=2.0, seed=0, profile="theory")
    for _ in range(5):
        theory.tell(theory.ask(), 0.2)
    theory.ask()
    expected = ldp_tgp_beta(6, 1.0, 1.0, 2.0, gamma_prev=theory.gamma, profile="theory")
    assert theory.last_beta == pytest.approx(expected)


def test_tgp_validation_and_first_arm():
    K = se_gram()
    with pytest.raises(ValueError, match="R .* required"):
        TGPUCB(K, 10, B=1.0, eps_priv=1.0)
    with pytest.raises(ValueError, match="v must be None"):
        TGPUCB(K, 10, B=1.0, R=1.0, eps_priv=1.0, v=3.0)
    with pytest.raises(ValueError, match="v .* required"):
        TGPUCB(K, 10, B=1.0)
    with pytest.raises(ValueError, match="profile"):
        TGPUCB(K, 10, B=1.0, v=2.0, profile="magic")
    with pytest.raises(ValueError, match="arm"):
        TGPUCB(K, 10, B=1.0, v=2.0).tell(15, 0.0)
    first = {TGPUCB(K, 10, B=1.0, v=2.0, seed=s).ask() for s in range(30)}
    assert len(first) > 5  # t = 1: a uniformly random arm
    assert TGPUCB(K, 10, B=1.0, v=2.0).name == "TGP-UCB"
    assert TGPUCB(K, 10, B=1.0, R=1.0, eps_priv=1.0).name == "LDP-TGP-UCB"


def test_tgp_beats_uniform_play():
    ratios = []
    for seed in range(3):
        problem = get_ldp_problem("synthetic-se-t", seed, n_arms=30)
        res = ldp_bo.run_trial(
            problem,
            "tgp",
            None,
            300,
            noise_seed=seed,
            privacy_seed=0,
            algorithm_seed=seed,
            beta_scale=0.05,
        )
        ratios.append(res["average_regret"] / res["uniform_regret"])
    assert np.mean(ratios) < 0.5, ratios


def test_run_trial_is_deterministic():
    problem = get_ldp_problem("synthetic-matern", 4, n_arms=20)
    kw = {"noise_seed": 1, "privacy_seed": 2, "algorithm_seed": 3, "keep_arms": True}
    a = ldp_bo.run_trial(problem, "tgp", 1.0, 80, **kw)
    b = ldp_bo.run_trial(problem, "tgp", 1.0, 80, **kw)
    np.testing.assert_array_equal(a["arms"], b["arms"])
    np.testing.assert_array_equal(a["cum_regret"], b["cum_regret"])
    c = ldp_bo.run_trial(problem, "tgp", 1.0, 80, **{**kw, "privacy_seed": 5})
    assert not np.array_equal(a["arms"], c["arms"])
    assert np.all(np.diff(a["cum_regret"]) >= 0) and a["checkpoints"][-1] == 80


# -- the reproduction -------------------------------------------------------------------------
TINY = {
    "datasets": ("synthetic-se", "stock"),
    "T": 100,
    "runs": 1,
    "epsilons": (1.0, 2.0),
    "progress": False,
    "synthetic_kwargs": {"n_arms": 20},
}
N_TINY_RUNS = 3 * (4 + 3)  # synthetic: 2 eps + heavy + bounded; stock: 2 eps + heavy


def _stored(path):
    recs = ResultStore(path / "runs.jsonl").load()
    return {r["run_id"]: (r["cum_regret"], r["cum_regret_raw"], r["config"]) for r in recs}


def test_reproduce_tiny_writes_results_report_and_plots(tmp_path):
    result = reproduce(tmp_path, **TINY)
    for name in ("results.json", "summary.csv", "report.md", "runs.jsonl"):
        assert (tmp_path / name).stat().st_size > 0
    pngs = sorted(p.name for p in tmp_path.glob("*.png"))
    assert "fig_private_synthetic-se_eps-1.png" in pngs and "fig_heavy_stock_eps-none.png" in pngs
    assert "fig_privacy_cost_stock.png" in pngs and len(pngs) == 7 + 2
    records = ResultStore(tmp_path / "runs.jsonl").load()
    assert len(records) == N_TINY_RUNS
    for rec in records:
        cum = np.asarray(rec["cum_regret"])
        assert len(cum) == 50 and np.all(np.isfinite(cum)) and np.all(np.diff(cum) >= -1e-12)
        assert rec["config"]["beta_scale"] == ldp_bo.BETA_SCALE
    report = (tmp_path / "report.md").read_text()
    assert "beta_scale = 0.1" in report and "LDP-MoMA-GP-UCB" in report
    assert "Orderings found vs the paper's claims" in report and "TGP-UCB" in report
    s = result["settings"]["private|synthetic-se|eps=1"]["algorithms"]["tgp"]
    assert s["n_trials"] == 1 and 0 <= s["avg_regret_mean"] <= 2
    csv_rows = (tmp_path / "summary.csv").read_text().strip().splitlines()
    assert len(csv_rows) == 1 + N_TINY_RUNS
    assert json.loads((tmp_path / "results.json").read_text())["T"] == 100


def test_reproduce_resumes_after_interruption_without_duplicates(tmp_path, monkeypatch):
    calls = []
    real = report.REPRODUCTION

    def dying(spec):
        if len(calls) == 8:
            raise KeyboardInterrupt("killed")
        calls.append(spec.run_id)
        return ldp_bo.run_worker(spec)

    def counting(spec):
        calls.append(spec.run_id)
        return ldp_bo.run_worker(spec)

    monkeypatch.setattr(report, "REPRODUCTION", replace(real, worker=dying))
    with pytest.raises(KeyboardInterrupt):
        reproduce(tmp_path / "a", **TINY)
    assert len(ResultStore(tmp_path / "a" / "runs.jsonl").load()) == 8
    calls.clear()
    monkeypatch.setattr(report, "REPRODUCTION", replace(real, worker=counting))
    reproduce(tmp_path / "a", **TINY)
    assert len(calls) == N_TINY_RUNS - 8  # the 8 stored runs are not recomputed
    lines = (tmp_path / "a" / "runs.jsonl").read_text().strip().splitlines()
    assert len(lines) == N_TINY_RUNS
    monkeypatch.setattr(report, "REPRODUCTION", real)
    reproduce(tmp_path / "b", **TINY)  # uninterrupted, same seed: identical runs
    assert _stored(tmp_path / "a") == _stored(tmp_path / "b")
    with pytest.raises(ValueError, match="different config"):
        reproduce(tmp_path / "b", **{**TINY, "synthetic_kwargs": {"n_arms": 25}})


def test_reproduce_seed_changes_runs(tmp_path):
    tiny = {**TINY, "datasets": ("synthetic-se",)}
    reproduce(tmp_path / "a", **tiny)
    reproduce(tmp_path / "b", **tiny, seed=1)
    a, b = _stored(tmp_path / "a"), _stored(tmp_path / "b")
    assert a.keys() == b.keys() and any(a[k][0] != b[k][0] for k in a)


def test_cli_reproduce_ldp_bo_dispatch(tmp_path, monkeypatch):
    """The CLI forwards its flags; the reproduction resolves --quick and the defaults."""
    seen = {}

    def fake(out, *, n_jobs, scheduler, **kw):
        seen.update(n_jobs=n_jobs, options=report.REPRODUCTION.options(out, **kw))
        out.mkdir(parents=True, exist_ok=True)
        (out / "report.md").write_text("# stub\n")
        return {"seconds": 0.0}

    monkeypatch.setattr(report, "reproduce", fake)
    assert main(["reproduce", "ldp-bo", "--quick", "--out", str(tmp_path / "q")]) == 0
    options = seen["options"]
    assert options["T"] == 1000 and options.runs == 2 and options["beta_scale"] == 0.1
    assert options.datasets == ldp_bo.DATASETS
    assert main(["reproduce", "ldp-bo", "--runs", "3", "--datasets", "light", "--jobs", "2",
                 "--beta-scale", "0.05", "--out", str(tmp_path / "f")]) == 0  # fmt: skip
    options = seen["options"]
    assert options["T"] == 10_000 and options.runs == 3 and options.datasets == ("light",)
    assert seen["n_jobs"] == 2 and options["beta_scale"] == 0.05
    assert main(["reproduce", "ldp-bo", "--datasets", "mnist"]) == 2
    assert main(["reproduce", "po-gp-ucb", "--beta-scale", "0.1"]) == 2


def test_reproduce_rejects_bad_options_before_writing(tmp_path):
    out = tmp_path / "x"
    with pytest.raises(ValueError, match=r"--datasets must be among \['synthetic-matern'"):
        reproduce(out, datasets=["mnist"])
    with pytest.raises(ValueError, match=r"beta_scale \(--beta-scale\)"):
        reproduce(out, beta_scale=-1.0)
    with pytest.raises(ValueError, match="T must be"):
        reproduce(out, T=1)
    with pytest.raises(ValueError, match="algorithms must be among"):
        reproduce(out, algorithms=("ucb",))
    with pytest.raises(TypeError, match="noisy"):
        reproduce(out, noisy=True)
    assert not out.exists()


# -- run ldp-bo on a CSV ----------------------------------------------------------------------
def write_rewards(path, n_rows=60, means=(1.0, 3.0, 2.0, 0.5), seed=0):
    rng = np.random.default_rng(seed)
    lines = ["Date," + ",".join(f"arm{i}" for i in range(len(means)))]
    for r in range(n_rows):
        vals = [m + rng.standard_t(3) for m in means]
        lines.append(f"2020-01-{r % 28 + 1:02d}," + ",".join(f"{v:.4f}" for v in vals))
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("extra", [[], ["--epsilon", "2"]])
def test_cli_run_ldp_bo_happy_path(tmp_path, capsys, extra):
    data = write_rewards(tmp_path / "rewards.csv")
    out = tmp_path / "out"
    args = ["run", "ldp-bo", "--algorithm", "tgp", "--data", str(data), "--exclude", "Date"]
    rc = main([*args, "--iterations", "200", "--seed", "3", "--out", str(out), *extra])
    text = capsys.readouterr().out
    assert rc == 0 and "best arm found" in text and "cumulative regret" in text
    stored = json.loads((out / "result.json").read_text())
    assert stored["best_arm"]["name"] == "arm1" and stored["n_arms"] == 4
    assert len(stored["arms"]) == 200 and stored["regret"]["t"][-1] == 200
    assert stored["name"] == ("LDP-TGP-UCB" if extra else "TGP-UCB")
    assert ("privacy" in stored) == bool(extra)
    again = run_ldp_on_csv(data, "tgp", 200, 3, epsilon=2.0 if extra else None, exclude="Date")
    assert again["arms"] == stored["arms"]  # same seed, same run


@pytest.mark.parametrize("alg", ["ata", "moma"])
def test_run_ldp_on_csv_other_algorithms(tmp_path, alg):
    data = write_rewards(tmp_path / "rewards.csv")
    res = run_ldp_on_csv(data, alg, 150, 0, epsilon=1.0, exclude=["Date"])
    assert res["name"].startswith("LDP-") and sum(res["plays"].values()) == 150


def test_load_reward_table_reads_arms(tmp_path):
    data = write_rewards(tmp_path / "rewards.csv", n_rows=5)
    names, table = load_reward_table(data, exclude="Date")
    assert names == ["arm0", "arm1", "arm2", "arm3"] and table.shape == (5, 4)


@pytest.mark.parametrize(
    ("content", "extra", "message"),
    [
        (None, [], r"--data '.*none\.csv' does not exist"),
        ("a,b\n1,2\n3,x\n", [], r"arm column 'b', row 1 \(file line 3\): 'x' is not a number"),
        ("a,b\n1,2\n3,nan\n", [], r"arm column 'b', row 1 .*every value must be a finite"),
        ("a,b\n1,2\n3,\n", [], r"arm column 'b', row 1 .*is empty"),
        ("a\n1\n2\n", [], r"at least 2 arm columns"),
        ("a,b\n1,2\n", [], r"at least 2 data rows"),
        ("a,b\n1,2\n1,3\n", [], r"arm column\(s\) \['a'\] have the same value"),
        ("a,b\n1,2\n3,4\n", ["--epsilon", "0"], r"epsilon \(--epsilon\) must be in \(0, inf\)"),
        ("a,b\n1,2\n3,4\n", ["--epsilon", "-1"], r"epsilon \(--epsilon\)"),
        ("a,b\n1,2\n3,4\n", ["--iterations", "0"], r"iterations \(--iterations\) must be"),
        ("a,b\n1,2\n3,4\n", ["--exclude", "c"], r"--exclude column\(s\) \['c'\] not found"),
        ("a,b\n1,2\n3,4\n", ["--target", "a"], r"unrecognized arguments: --target a"),
        ("a,b\n1,2\n3,4\n", ["--beta-scale", "-1"], r"beta_scale \(--beta-scale\)"),
        (
            "a,b\n1e308,2\n-1e308,4\n",
            [],
            r"arm column 'a', row 0 \(file line 2\): 1e\+308 is too large in magnitude",
        ),
        ("a,b\n1,3\n3,1\n", [], r"every arm column has the same mean 2: every arm is optimal"),
        ("a,b\n1,2\n3,4\n", ["--out", "/proc/x"], r"--out '/proc/x' cannot be created or"),
    ],
)
def test_cli_run_ldp_bo_bad_inputs_are_named(tmp_path, capsys, content, extra, message):
    path = tmp_path / "none.csv"
    if content is not None:
        path = tmp_path / "data.csv"
        path.write_text(content)
    argv = ["run", "ldp-bo", "--algorithm", "tgp", "--data", str(path), "--iterations", "5"]
    assert main([*argv, *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith("frontierbo: error: ")
    assert len(err.strip().splitlines()) == 1
    assert re.search(message, err), err


def test_cli_run_ldp_bo_needs_algorithm_and_gp_ucb_needs_target(tmp_path, capsys):
    data = write_rewards(tmp_path / "rewards.csv", n_rows=5)
    assert main(["run", "ldp-bo", "--data", str(data), "-T", "5"]) == 2
    assert "the following arguments are required: --algorithm" in capsys.readouterr().err
    assert main(["run", "gp-ucb", "--data", str(data), "-T", "5"]) == 2
    assert "the following arguments are required: --target" in capsys.readouterr().err
    argv = ["run", "gp-ucb", "--data", str(data), "--target", "arm0", "-T", "2"]
    assert main([*argv, "--algorithm", "tgp"]) == 2
    assert "unrecognized arguments: --algorithm tgp" in capsys.readouterr().err


def test_identical_runs_write_byte_identical_result_json(tmp_path, capsys):
    """Wall-clock time is printed, not stored: a seed fixes result.json's bytes."""
    data = write_rewards(tmp_path / "rewards.csv")
    args = ["run", "ldp-bo", "--algorithm", "ata", "--data", str(data), "--exclude", "Date"]
    for name in ("a", "b"):
        assert main([*args, "-T", "100", "--epsilon", "1", "--out", str(tmp_path / name)]) == 0
        assert "wall time:" in capsys.readouterr().out
    first = (tmp_path / "a" / "result.json").read_bytes()
    assert first == (tmp_path / "b" / "result.json").read_bytes()
    assert b"seconds" not in first
