"""``frontierbo run macro-bo`` on a user's own field (frontierbo.macro.userdata, .field, .plots,
.system)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from frontierbo.core.fit import negative_log_likelihood
from frontierbo.core.kernels import SquaredExponential
from frontierbo.macro.data import GPHyperparameters
from frontierbo.macro.domains import GraphDomain, GridDomain, grid_layout
from frontierbo.macro.field import MapRefit, load_field
from frontierbo.macro.plots import plot_trajectory
from frontierbo.macro.system import METHODS
from frontierbo.macro.userdata import format_macro_result, run_macro_on_csv

HYP = GPHyperparameters(
    prior_mean=0.0, lengthscale=(1.0, 1.0), signal_variance=1.0, noise_variance=1e-4
)
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def write(path, header, rows):
    path.write_text(header + "\n" + "\n".join(",".join(str(v) for v in r) for r in rows) + "\n")
    return path


# -- a 6 x 6 field with its peak at (x, y) = (4, 1), written row by row of y (x fastest) ------
def peak_value(x, y):
    return round(3.0 * math.exp(-((x - 4) ** 2 + (y - 1) ** 2) / 4.0), 6)


GRID_ROWS = [(x, y, peak_value(x, y)) for y in range(6) for x in range(6)]
PEAK_ROW = 1 * 6 + 4  # y = 1, x = 4


@pytest.fixture
def grid_csv(tmp_path):
    return write(tmp_path / "field.csv", "x,y,value", GRID_ROWS)


# -- a graph of 7 scattered locations: a ring 0-1-...-6-0 and a chord 0-3 -------------------
GRAPH_XY = [(0.0, 0.0), (1.3, 0.2), (2.1, 1.7), (1.2, 3.1), (-0.4, 2.9), (-1.5, 1.6), (-1.1, 0.4)]
GRAPH_VALUES = [0.1, 0.5, 1.4, 2.0, 0.7, -0.3, -0.8]
GRAPH_EDGES = [(i, (i + 1) % 7) for i in range(7)] + [(0, 3)]


@pytest.fixture
def graph_csvs(tmp_path):
    data = write(
        tmp_path / "sites.csv",
        "east,north,temp",
        [(x, y, v) for (x, y), v in zip(GRAPH_XY, GRAPH_VALUES, strict=True)],
    )
    return data, write(tmp_path / "edges.csv", "from,to", GRAPH_EDGES)


def neighbours_undirected(i):
    return sorted({b for a, b in GRAPH_EDGES if a == i} | {a for a, b in GRAPH_EDGES if b == i})


# -- loading --------------------------------------------------------------------------------
def test_grid_detection_and_row_mapping_by_hand(tmp_path):
    # x in {0, 1, 2} (grid rows), y in {0, 10} (grid columns): cell = 2 * r + c
    rows = [(0, 10, 5.0), (2, 0, 1.0), (1, 10, 4.0), (0, 0, 0.0), (2, 10, 6.0), (1, 0, 2.0)]
    ds = load_field(write(tmp_path / "f.csv", "x,y,value", rows), kappa=1, hyperparameters=HYP)
    assert isinstance(ds.domain, GridDomain)
    assert ds.domain.shape == (3, 2) and ds.domain.spacing == (1.0, 10.0)
    assert ds.meta["cell_of_row"].tolist() == [1, 4, 3, 0, 5, 2]
    assert ds.meta["row_of_cell"].tolist() == [3, 0, 5, 2, 1, 4]
    assert ds.values.tolist() == [0.0, 5.0, 2.0, 4.0, 1.0, 6.0]
    np.testing.assert_allclose(ds.domain.inputs[ds.meta["cell_of_row"]], [r[:2] for r in rows])
    # from cell 0 = (x 0, y 0): "down" (+1 x) is cell 2 = row 5, "right" (+1 y) cell 1 = row 0
    assert ds.domain.macro_actions(0).tolist() == [[2], [1]]
    assert ds.source == "real" and ds.start is None and ds.start_min_actions == 1
    assert ds.meta["domain"] == "grid" and ds.meta["hyperparameters_source"] == "given"


def test_grid_layout_reasons():
    assert not isinstance(grid_layout([0, 1, 0, 1], [0, 0, 2, 2]), str)
    assert "not equally spaced" in grid_layout([0, 1, 3, 0, 1, 3], [0, 0, 0, 1, 1, 1])
    assert "make 4 grid locations, but there are 3" in grid_layout([0, 1, 0], [0, 0, 1])


def test_graph_loading_keeps_the_csv_rows_as_cells(graph_csvs):
    data, edges = graph_csvs
    kw = dict(x="east", y="north", value="temp", edges=edges, hyperparameters=HYP)
    ds = load_field(data, kappa=1, **kw)
    assert isinstance(ds.domain, GraphDomain) and not ds.domain.directed
    assert ds.meta["cell_of_row"].tolist() == list(range(7))
    assert ds.values.tolist() == GRAPH_VALUES
    for i in range(7):
        assert sorted(ds.domain.macro_actions(i)[:, 0].tolist()) == neighbours_undirected(i)
    directed = load_field(data, kappa=1, directed=True, **kw)
    assert sorted(directed.domain.macro_actions(0)[:, 0].tolist()) == [1, 3]
    assert directed.domain.macro_actions(1)[:, 0].tolist() == [2]
    # kappa = 2 from node 0: simple paths 0-1-2, 0-3-2, 0-3-4, 0-6-5 (undirected)
    two = load_field(data, kappa=2, **kw)
    assert sorted(map(tuple, two.domain.macro_actions(0).tolist())) == [
        (1, 2),
        (3, 2),
        (3, 4),
        (6, 5),
    ]


def test_fitted_hyperparameters_use_the_sample_mean_and_beat_a_default_guess(grid_csv):
    ds = load_field(grid_csv, kappa=2)
    hyp, fit = ds.hyperparameters, ds.meta["fit"]
    values = np.array([r[2] for r in GRID_ROWS])
    assert ds.meta["hyperparameters_source"] == "fitted" and fit["n_points"] == 36
    assert hyp.prior_mean == pytest.approx(values.mean())
    assert len(hyp.lengthscale) == 2 and min(hyp.lengthscale) > 0
    X = np.array([r[:2] for r in GRID_ROWS], dtype=float)
    template = SquaredExponential(np.ones(2), 1.0)

    def nll(ls, var, noise, mean):
        theta = np.concatenate([np.log([var, *ls, noise]), [mean]])
        return negative_log_likelihood(theta, X, values, template)[0]

    fitted = nll(hyp.lengthscale, hyp.signal_variance, hyp.noise_variance, fit["fitted_mean"])
    assert fitted == pytest.approx(fit["nll"], rel=1e-6)
    assert fitted < nll((1.0, 1.0), 1.0, 0.1, values.mean())


@pytest.mark.parametrize(
    "case, match",
    [
        ("missing", "no column 'value' \\(--target\\)"),
        ("nan", "value column 'value', row 1 .* finite"),
        ("duplicate", "rows 0 and 2 .* same location"),
        ("one_row", "at least 2 data rows"),
        ("not_grid", "not a full regular grid .*--edges"),
        ("constant", "same value 1 in every row"),
        ("no_actions", "kappa \\(--kappa\\) = 3: no location .* smaller --kappa"),
        ("same_columns", "--x, --y and --target must name three different columns"),
    ],
)
def test_field_errors_name_the_parameter(tmp_path, case, match):
    good = [(0, 0, 1.0), (1, 0, 2.0), (0, 1, 3.0), (1, 1, 4.0)]
    rows, header, kw = good, "x,y,value", {"kappa": 1}
    if case == "missing":
        header = "x,y,v"
    elif case == "nan":
        rows = [good[0], (1, 0, "nan"), *good[2:]]
    elif case == "duplicate":
        rows = [good[0], good[1], (0, 0, 5.0), good[3]]
    elif case == "one_row":
        rows = good[:1]
    elif case == "not_grid":
        rows = good[:3]
    elif case == "constant":
        rows = [(x, y, 1.0) for x, y, _ in good]
    elif case == "no_actions":
        kw = {"kappa": 3}  # a 2 x 2 grid has no straight line of 3 cells
    elif case == "same_columns":
        kw = {"kappa": 1, "y": "x"}
    path = write(tmp_path / "f.csv", header, rows)
    with pytest.raises(ValueError, match=match):
        load_field(path, hyperparameters=HYP, **kw)


@pytest.mark.parametrize(
    "edges, match",
    [
        (
            [(0, 7)],
            "edge column 'to', row 0 .* 7 is not a data-row index of --data \\(integers 0 to 6\\)",
        ),
        ([(0, 1.5)], "1.5 is not a data-row index"),
        ([(-1, 2)], "-1 is not a data-row index"),
    ],
)
def test_edge_errors_name_edges(graph_csvs, tmp_path, edges, match):
    data, _ = graph_csvs
    bad = write(tmp_path / "bad.csv", "from,to", edges)
    with pytest.raises(ValueError, match=f"--edges .*{match}"):
        load_field(data, x="east", y="north", value="temp", edges=bad, hyperparameters=HYP)


def test_edge_file_shape_errors(graph_csvs, tmp_path):
    data, _ = graph_csvs
    kw = dict(x="east", y="north", value="temp", hyperparameters=HYP)
    three = write(tmp_path / "three.csv", "a,b,c", [(0, 1, 2)])
    with pytest.raises(ValueError, match="--edges .* exactly 2 columns"):
        load_field(data, edges=three, **kw)
    with pytest.raises(FileNotFoundError, match="--edges .* does not exist"):
        load_field(data, edges=tmp_path / "nope.csv", **kw)
    ragged = tmp_path / "ragged.csv"
    ragged.write_text("from,to\n0,1,2\n")
    with pytest.raises(ValueError, match="^--edges .* line 2 has 3 field"):
        load_field(data, edges=ragged, **kw)


def test_run_errors_name_the_flag(grid_csv, tmp_path):
    for bad, match in (
        ({"kappa": 0}, "kappa \\(--kappa\\) must be an integer in \\[1, inf\\]"),
        ({"iterations": 0}, "iterations \\(--iterations\\) must be an integer in \\[1, inf\\]"),
        ({"method": "greedy"}, "method \\(--method\\) must be one of"),
        ({"directed": True}, "--directed applies to --edges only"),
        ({"method": "db-gp-ucb", "horizon": 2}, "--horizon applies to .* not db-gp-ucb"),
        ({"method": "nonmyopic-gp-ucb", "n_samples": 2}, "--samples applies to eps-macro-bo and "
         "anytime only, not nonmyopic-gp-ucb"),
    ):  # fmt: skip
        with pytest.raises(ValueError, match=match):
            run_macro_on_csv(grid_csv, hyperparameters=HYP, **bad)
    with pytest.raises(ValueError, match="start \\(--start\\) must be an integer in \\[0, 35\\]"):
        run_macro_on_csv(grid_csv, kappa=2, iterations=1, start=36, hyperparameters=HYP)
    # row 14 = (x 2, y 2): no straight line of 4 cells fits inside a 6 x 6 grid from there
    with pytest.raises(ValueError, match="start \\(--start\\) = 14: .* no macro-action"):
        run_macro_on_csv(grid_csv, kappa=4, iterations=1, start=14, hyperparameters=HYP)
    with pytest.raises(ValueError, match="beta \\(--beta\\)"):
        run_macro_on_csv(grid_csv, beta=-1.0, hyperparameters=HYP)
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(ValueError, match="--out"):
        run_macro_on_csv(grid_csv, out=blocker, hyperparameters=HYP)


# -- runs -----------------------------------------------------------------------------------
def check_trajectory(result, domain, cell_of_row, xy_values, iterations, kappa):
    """Starts at the start row, 1 + iterations * kappa steps, each macro-action a row of the
    domain's macro_actions at the agent's location, and the CSV's coordinates and values."""
    steps, budget = result["trajectory"], iterations * kappa
    assert len(steps) == 1 + budget and [s["n"] for s in steps] == list(range(1 + budget))
    assert steps[0]["row"] == result["start"]["row"]
    for s in steps:
        assert (s["x"], s["y"], s["value"]) == pytest.approx(xy_values[s["row"]])
    cells = [int(cell_of_row[s["row"]]) for s in steps]
    for t in range(iterations):
        here = cells[t * kappa]
        path = cells[t * kappa + 1 : (t + 1) * kappa + 1]
        assert path in domain.macro_actions(here).tolist()
        assert result["iterations"][t]["rows"] == [s["row"] for s in steps[t * kappa + 1 :][:kappa]]


@pytest.mark.parametrize("method", list(METHODS))
def test_grid_run_end_to_end(grid_csv, method):
    kw = dict(kappa=2, iterations=3, hyperparameters=HYP)
    kw |= {} if method == "db-gp-ucb" else {"horizon": 2}
    kw |= {"n_samples": 3} if method in ("eps-macro-bo", "anytime") else {}
    result = run_macro_on_csv(grid_csv, method=method, start=0, **kw)
    ds = load_field(grid_csv, kappa=2, hyperparameters=HYP)
    check_trajectory(result, ds.domain, ds.meta["cell_of_row"], GRID_ROWS, 3, 2)
    assert result["start"]["row"] == 0 and result["start"]["drawn"] is False
    assert result["horizon"] == (1 if method == "db-gp-ucb" else 2)
    met = result["metrics"]
    assert met["n"] == [0, 2, 4, 6]
    values = np.array([s["value"] for s in result["trajectory"]])
    peak = peak_value(4, 1)
    assert result["table_best"] == {"row": PEAK_ROW, "x": 4.0, "y": 1.0, "value": peak}
    assert met["simple_regret"][0] == pytest.approx(peak - GRID_ROWS[0][2])
    assert met["simple_regret"][-1] == pytest.approx(peak - values.max())
    mean = np.mean([r[2] for r in GRID_ROWS])
    assert met["average_normalized_output"][-1] == pytest.approx(values.mean() - mean)
    assert result["best"]["value"] == values.max()
    assert result["best"]["n"] == int(np.argmax(values))


def test_graph_run_end_to_end_and_the_drawn_start_is_seeded(graph_csvs):
    data, edges = graph_csvs
    kw = dict(x="east", y="north", value="temp", edges=edges, kappa=2, iterations=2)
    kw |= dict(horizon=2, n_samples=3, hyperparameters=HYP)
    xy_values = [(*xy, v) for xy, v in zip(GRAPH_XY, GRAPH_VALUES, strict=True)]
    ds = load_field(
        data, x="east", y="north", value="temp", edges=edges, kappa=2, hyperparameters=HYP
    )
    results = [run_macro_on_csv(data, seed=s, **kw) for s in (0, 0, 1, 2, 3)]
    for result in results:
        check_trajectory(result, ds.domain, np.arange(7), xy_values, 2, 2)
        assert result["start"]["drawn"] is True and result["domain"]["kind"] == "graph"
    assert results[0]["trajectory"] == results[1]["trajectory"]  # determinism per seed
    assert len({r["start"]["row"] for r in results}) > 1  # the seed draws the start


def test_same_seed_same_result_file_and_wall_time_only_printed(grid_csv, tmp_path):
    kw = dict(kappa=2, iterations=2, horizon=2, n_samples=4, seed=5)
    a, b = (run_macro_on_csv(grid_csv, method="anytime", out=tmp_path / d, **kw) for d in "ab")
    assert (tmp_path / "a" / "result.json").read_bytes() == (
        tmp_path / "b" / "result.json"
    ).read_bytes()
    assert isinstance(a["seconds"], float) and a["seconds"] > 0
    stored = json.loads((tmp_path / "a" / "result.json").read_text())
    assert stored == {k: v for k, v in json.loads(json.dumps(a)).items() if k != "seconds"}
    assert "seconds" not in json.dumps(stored)  # no wall time anywhere in the file
    assert a["hyperparameters"]["source"] == "learned" and a["hyperparameters"]["fits"] == 2
    c = run_macro_on_csv(grid_csv, method="anytime", prefit_on_table=True, **kw)
    assert c["hyperparameters"]["source"] == "fitted" and c["hyperparameters"]["fits"] is None


def test_learned_hyperparameters_never_see_an_unvisited_value(grid_csv, tmp_path):
    """Without --prefit-on-table the run is a function of the visited values only: changing
    every value the agent never measured changes nothing; the table fit sees them all."""
    kw = dict(kappa=2, iterations=4, horizon=2, n_samples=4, seed=3)
    honest = run_macro_on_csv(grid_csv, **kw)
    visited = {step["row"] for step in honest["trajectory"]}
    changed = [(x, y, v if i in visited else -v) for i, (x, y, v) in enumerate(GRID_ROWS)]
    other = write(tmp_path / "other.csv", "x,y,value", changed)
    again = run_macro_on_csv(other, **kw)
    assert again["trajectory"] == honest["trajectory"]
    assert again["hyperparameters"] == honest["hyperparameters"]
    prefit = [run_macro_on_csv(f, prefit_on_table=True, **kw) for f in (grid_csv, other)]
    assert prefit[0]["hyperparameters"] != prefit[1]["hyperparameters"]


def test_map_refit_is_equivariant_to_units():
    """Coordinates in other units scale the lengthscales; values in other units scale the
    variances and map the mean: the learned GP does not depend on the units."""
    from frontierbo.core.gp import FiniteDomainGP

    rng = np.random.default_rng(0)
    X = np.array([(x, y) for x in range(6) for y in range(6)], dtype=float)
    cells = rng.choice(36, size=9, replace=False)
    values = np.sin(X[cells, 0]) + 0.3 * X[cells, 1]
    base = MapRefit(X, seed=1).hyperparameters(cells, values)
    other = MapRefit(3.0 * X + 7.0, seed=1).hyperparameters(cells, 10.0 * values - 5.0)
    np.testing.assert_allclose(other.lengthscale, 3.0 * np.array(base.lengthscale), rtol=1e-6)
    assert other.signal_variance == pytest.approx(100.0 * base.signal_variance, rel=1e-6)
    assert other.noise_variance == pytest.approx(100.0 * base.noise_variance, rel=1e-6)
    assert other.prior_mean == pytest.approx(10.0 * base.prior_mean - 5.0, rel=1e-6)
    gp = FiniteDomainGP(X, HYP.kernel(), HYP.noise_variance, HYP.prior_mean)
    for c, v in zip(cells.tolist(), values.tolist(), strict=True):
        gp.add(c, v)
    refit = MapRefit(X, seed=1)
    fresh = refit(gp)
    assert fresh.observed_indices.tolist() == cells.tolist()
    assert refit.fits == [base] and fresh.noise_variance == base.noise_variance


def test_out_writes_result_json_and_a_png(grid_csv, tmp_path):
    out = tmp_path / "out"
    result = run_macro_on_csv(
        grid_csv, kappa=2, iterations=2, horizon=2, n_samples=2, out=out, hyperparameters=HYP
    )
    result.pop("seconds")
    assert json.loads((out / "result.json").read_text()) == json.loads(json.dumps(result))
    assert (out / "trajectory.png").read_bytes()[:8] == PNG_MAGIC
    assert sorted(p.name for p in out.iterdir()) == ["result.json", "trajectory.png"]


def test_format_lists_every_step_and_the_best_value(grid_csv):
    result = run_macro_on_csv(
        grid_csv, kappa=2, iterations=2, horizon=2, n_samples=2, start=PEAK_ROW, hyperparameters=HYP
    )
    text = format_macro_result(result)
    assert text.startswith("ε-Macro-BO (A1) on ")
    assert "kappa = 2, budget = 4 observations (2 iterations), H = 2, N = 2" in text
    table = text.split("trajectory (n: observation; row: 0-based data row):\n")[1].splitlines()
    assert table[0].split() == ["n", "row", "x", "y", "value"]
    assert [int(line.split()[0]) for line in table[1:6]] == [0, 1, 2, 3, 4]
    assert len({len(line) for line in table[:6]}) == 1  # aligned
    assert f"best value found: {peak_value(4, 1):g} at row {PEAK_ROW} (x = 4, y = 1), n = 0" in text


# -- the plot -------------------------------------------------------------------------------
def test_plot_trajectory_on_a_scatter_with_edges_and_two_paths(tmp_path):
    path = plot_trajectory(
        GRAPH_XY,
        GRAPH_VALUES,
        {"myopic": [0, 1, 2], "nonmyopic": [0, 3, 4, 5]},
        tmp_path / "sub" / "fig.png",
        title="two",
        edges=np.array(GRAPH_EDGES),
    )
    assert path.read_bytes()[:8] == PNG_MAGIC
    with pytest.raises(ValueError, match="trajectories\\['a'\\] must hold location indices"):
        plot_trajectory(GRAPH_XY, GRAPH_VALUES, {"a": [0, 7]}, tmp_path / "x.png")
    with pytest.raises(ValueError, match="trajectories must contain"):
        plot_trajectory(GRAPH_XY, GRAPH_VALUES, {}, tmp_path / "x.png")
    assert not (tmp_path / "x.png").exists()


# -- the command ----------------------------------------------------------------------------
def test_cli_runs_and_names_the_written_files(grid_csv, tmp_path, cli):
    out = tmp_path / "cli"
    status, text, err = cli([
        "run", "macro-bo", "--data", grid_csv, "--kappa", 2, "--iterations", 2, "--horizon", 2,
        "--samples", 2, "--start", 3, "--seed", 1, "--out", out,
    ])  # fmt: skip
    assert status == 0, err
    assert "start: row 3 (x = 3, y = 0)" in text
    assert "budget = 4 observations (2 iterations), H = 2, N = 2" in text
    assert text.splitlines()[-2:] == [
        f"written {json.dumps(str(out / 'result.json'))}",
        f"written {json.dumps(str(out / 'trajectory.png'))}",
    ]
    stored = json.loads((out / "result.json").read_text())
    assert stored["n_samples"] == 2 and stored["horizon"] == 2 and stored["seed"] == 1


def test_cli_graph_and_flag_checks(graph_csvs, tmp_path, cli):
    data, edges = graph_csvs
    common = ["run", "macro-bo", "--data", data, "--x", "east", "--y", "north", "--target",
              "temp", "--kappa", 2]  # fmt: skip
    status, text, err = cli(
        [*common, "--edges", edges, "--iterations", 1, "--method", "nonmyopic-gp-ucb"]
    )
    assert status == 0 and "nonmyopic GP-UCB (A2)" in text, err
    for extra, match in (
        (["--directed"], "--directed applies to --edges only"),
        (["--edges", edges, "--method", "db-gp-ucb", "--horizon", 2], "--horizon applies to"),
        (["--edges", edges, "--method", "db-gp-ucb", "--samples", 2], "--samples applies to"),
        (["--value", "temp"], "--value was renamed --target"),
        (["--budget", 8], "--budget was renamed --iterations"),
    ):
        status, _, err = cli([*common, *extra, "--out", tmp_path / "bad"])
        assert status == 2 and match in err and len(err.strip().splitlines()) == 1, err
        assert not (tmp_path / "bad").exists()


def test_cli_help_describes_every_flag():
    from frontierbo.cli import build_parser
    from frontierbo.flags import Renamed

    def sub(parser, name):
        action = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
        return action.choices[name]

    command = sub(sub(build_parser(), "run"), "macro-bo")
    text = command.format_help()
    for action in command._actions:
        if action.option_strings and action.dest != "help":
            if isinstance(action, Renamed):  # an old name, refused naming the new one
                continue
            assert action.help, action.option_strings
            assert action.option_strings[0] in text
