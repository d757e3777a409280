"""The ε-Macro-BO phenomena (macro/data.py; thesis Sections 4.4.1–4.4.3)."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from frontierbo.data import KNOWN_SHA256
from frontierbo.macro import data as macro_data
from frontierbo.macro.data import (
    PLANKTON_HYPERPARAMETERS,
    TEMPERATURE_FILES,
    TRAFFIC_FILES,
    GPHyperparameters,
    MacroDataset,
    plankton,
    temperature,
    traffic,
    traffic_substitute,
)
from frontierbo.macro.domains import GridDomain

TRAFFIC = pytest.mark.data(*TRAFFIC_FILES)
TEMPERATURE = pytest.mark.data(*TEMPERATURE_FILES)


# -- plankton ---------------------------------------------------------------------------------
def test_plankton_is_a_50x50_grid_with_the_thesis_settings():
    ds = plankton(seed=0)
    assert ds.name == "plankton" and ds.source == "synthetic"
    assert isinstance(ds.domain, GridDomain) and ds.domain.shape == (50, 50)
    assert ds.domain.kappa == 4 and ds.values.shape == (2500,)
    assert ds.domain.row_col(ds.start) == (25, 25)
    np.testing.assert_allclose(ds.domain.inputs[ds.start], [2.0, 2.0])  # ref. code (1.0, 1.0) x 2
    np.testing.assert_allclose(ds.domain.inputs[ds.domain.cell(5, 5)], [0.0, 0.0], atol=1e-12)
    assert ds.hyperparameters == PLANKTON_HYPERPARAMETERS
    np.testing.assert_array_equal(ds.starts(3, seed=1), [ds.start] * 3)
    with pytest.raises(ValueError):
        ds.values[0] = 1.0


def test_plankton_is_reproducible_per_seed():
    a, b, c = plankton(seed=7), plankton(seed=7), plankton(seed=8)
    np.testing.assert_array_equal(a.values, b.values)
    assert not np.allclose(a.values, c.values)
    gen = plankton(seed=np.random.default_rng(7))
    np.testing.assert_array_equal(gen.values, a.values)


def test_plankton_covariance_matches_the_kernel_statistically():
    """Per realization, the spatial average of products at a lag estimates k(lag) (+ noise at
    lag 0); realizations are independent, so their spread gives an honest standard error."""
    runs, lags = 300, [0, 1, 3, 5, 10]  # cells of 0.1 km; l = 0.5 km
    estimates = np.empty((runs, len(lags)))
    means = np.empty(runs)
    for i in range(runs):
        field = plankton(seed=1000 + i).values.reshape(50, 50)
        means[i] = field.mean()
        for j, lag in enumerate(lags):
            along_rows = (field[lag:, :] * field[: 50 - lag, :]).mean()
            along_cols = (field[:, lag:] * field[:, : 50 - lag]).mean()
            estimates[i, j] = 0.5 * (along_rows + along_cols)
    hyp = PLANKTON_HYPERPARAMETERS
    dist = 0.1 * np.array(lags)
    expected = hyp.signal_variance * np.exp(-0.5 * dist**2 / 0.5**2)
    expected[0] += hyp.noise_variance
    se = estimates.std(axis=0, ddof=1) / np.sqrt(runs)
    assert np.all(np.abs(estimates.mean(axis=0) - expected) < 4.0 * se)
    assert se.max() < 0.06  # the check has power: k(0.5 km) = 0.61 vs k(1 km) = 0.14
    assert abs(means.mean()) < 4.0 * means.std(ddof=1) / np.sqrt(runs)


# -- traffic (reference data, Section 4.4.2) -------------------------------------------------------
@pytest.fixture(scope="module")
def real_traffic():
    return traffic(seed=0, substitute=False)


@TRAFFIC
def test_traffic_graph_statistics_match_the_thesis(real_traffic):
    ds = real_traffic
    graph = ds.domain
    assert ds.source == "real" and graph.kappa == 5
    assert graph.n == 2506  # accessible regions
    assert ds.meta["listed_out_degree_max"] == 8  # as listed, self-loops included
    assert graph.out_degree.max() <= 8
    counts = graph.full_action_counts
    assert np.count_nonzero(counts) == 2499
    assert round(float(counts[counts > 0].mean()), 1) == 178.0
    assert counts.max() == 1193
    assert graph.action_counts.max() == 20
    np.testing.assert_array_equal(graph.action_counts, np.minimum(counts, 20))


@TRAFFIC
def test_traffic_values_and_hyperparameters(real_traffic):
    ds = real_traffic
    assert ds.empirical_mean == pytest.approx(0.7401932, abs=1e-7)  # the thesis's M1 normaliser
    assert ds.max_value == pytest.approx(4.043051)
    assert ds.values.min() == 0.0  # zero pickups read as log-count 0
    assert ds.hyperparameters == GPHyperparameters(1.5673, (0.5249, 0.5687), 0.7486, 0.0111)
    cells = ds.meta["grid_cells"]
    np.testing.assert_array_equal(ds.domain.inputs, cells)
    assert cells[:, 0].max() <= 49 and cells[:, 1].max() <= 99
    for rel in TRAFFIC_FILES:
        assert ds.meta["sha256"][rel] == KNOWN_SHA256[rel]


@TRAFFIC
def test_traffic_subsample_is_deterministic_per_seed_and_starts_have_actions(real_traffic):
    again = traffic(seed=0, substitute=False)
    other = traffic(seed=1, substitute=False)
    busy = int(np.argmax(real_traffic.domain.full_action_counts))
    np.testing.assert_array_equal(
        real_traffic.domain.macro_actions(busy), again.domain.macro_actions(busy)
    )
    assert not np.array_equal(
        real_traffic.domain.macro_actions(busy), other.domain.macro_actions(busy)
    )
    starts = real_traffic.starts(100, seed=3)
    assert np.all(real_traffic.domain.action_counts[starts] >= 1)


@TRAFFIC
def test_traffic_loader_rejects_a_modified_file_and_a_missing_folder(tmp_path):
    for rel in TRAFFIC_FILES:
        shutil.copy(macro_data.resolve_data_path(rel), tmp_path)
    dom = tmp_path / "tlog18.dom"
    dom.chmod(0o644)
    dom.write_text(dom.read_text().replace("-2.000000", "-3.000000", 1))
    with pytest.raises(ValueError, match="sha256 mismatch"):
        traffic(directory=tmp_path)
    with pytest.raises(FileNotFoundError, match="tlog18.dom"):
        traffic(directory=tmp_path / "absent")


def test_traffic_falls_back_to_the_substitute_when_the_files_are_absent(monkeypatch):
    monkeypatch.setattr(macro_data, "data_available", lambda rel: False)
    ds = traffic(seed=0)
    assert ds.source == "substitute" and ds.name == "traffic"


def test_traffic_substitute_resembles_the_real_graph_and_is_seeded():
    ds = traffic_substitute(seed=0)
    graph = ds.domain
    assert ds.source == "substitute" and graph.n == 2506 and graph.kappa == 5
    assert graph.out_degree.max() <= 8
    counts = graph.full_action_counts
    # real: 178.0 (docs/decisions.md#macro-bo-traffic-substitute-graph)
    assert 100 <= counts[counts > 0].mean() <= 300
    assert np.count_nonzero(counts) > 0.9 * graph.n
    assert graph.action_counts.max() == 20
    again = traffic_substitute(seed=0)
    np.testing.assert_array_equal(ds.values, again.values)
    np.testing.assert_array_equal(graph.edges, again.domain.edges)
    assert not np.allclose(ds.values, traffic_substitute(seed=1).values)
    # one GP draw: the value spread is of the order of sigma_y = 0.865 around the prior mean
    assert abs(ds.empirical_mean - 1.5673) < 0.5 and 0.5 < ds.values.std() < 1.3


# -- temperature ------------------------------------------------------------------------------
@TEMPERATURE
def test_temperature_corridor_graph_matches_the_thesis():
    ds = temperature(seed=0)
    graph = ds.domain
    assert ds.source == "substitute" and graph.n == 145 and not graph.directed
    assert graph.edges.shape[0] == 2 * 182  # 91 mote edges, each split by its midpoint
    assert graph.out_degree.max() == 6
    counts = graph.full_action_counts
    assert round(float(counts.mean()), 2) == 27.06 and counts.max() == 114
    # moves alternate between motes (nodes 0..53) and midpoints (54..144)
    is_mote = np.arange(145) < 54
    assert np.all(is_mote[graph.edges[:, 0]] != is_mote[graph.edges[:, 1]])
    # a midpoint sits halfway between the two motes it joins
    for mid in range(54, 145):
        a, b = graph.neighbours(mid)
        np.testing.assert_allclose(graph.inputs[mid], 0.5 * (graph.inputs[a] + graph.inputs[b]))


@TEMPERATURE
def test_temperature_values_are_a_seeded_gp_draw():
    a, b, c = temperature(seed=4), temperature(seed=4), temperature(seed=5)
    np.testing.assert_array_equal(a.values, b.values)
    assert not np.allclose(a.values, c.values)
    assert abs(a.empirical_mean - 17.851283) < 3 * a.hyperparameters.sigma_y
    assert "unavailable" in a.meta["values"]
    assert a.start is None and a.start_min_actions == 0


# -- the dataset value ------------------------------------------------------------------------
def test_dataset_checks_its_fields():
    grid = GridDomain((2, 2), kappa=1)
    with pytest.raises(ValueError, match="source must be one of"):
        MacroDataset("x", grid, np.zeros(4), PLANKTON_HYPERPARAMETERS, "invented")
    with pytest.raises(ValueError, match=r"values must have shape \(4,\)"):
        MacroDataset("x", grid, np.zeros(3), PLANKTON_HYPERPARAMETERS, "synthetic")
    kernel = PLANKTON_HYPERPARAMETERS.kernel()
    assert kernel.ard and kernel.variance == 1.0
