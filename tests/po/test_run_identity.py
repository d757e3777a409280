"""The fit time of a problem's MLE is metadata, not identity (issue 56 item 8): two
preparations of the same problem whose fits took different wall-clock times plan the same runs,
so a reproduction killed in one process resumes in the next."""

from __future__ import annotations

import importlib

import pytest

from frontierbo.po import experiment as exp
from frontierbo.po.problems import property as property_module
from frontierbo.po.problems.base import read_problem

# the package exports a function named branin, which hides the module of that name
branin_module = importlib.import_module("frontierbo.po.problems.branin")


class _Clock:
    """Stands in for a module's ``time``: ``perf_counter`` advances ``step`` per call."""

    def __init__(self, step: float):
        self.now, self.step = 0.0, step

    def perf_counter(self) -> float:
        self.now += self.step
        return self.now


def _prepare(monkeypatch, tmp_path, module, fit, build, name, step):
    """Build the problem in a "new process" (empty fit cache) whose fit takes ``step`` s;
    return its MLE seconds, the saved file's meta and the identities of its runs."""
    fit.cache_clear()
    monkeypatch.setattr(module, "time", _Clock(step))
    try:
        problem = build()
    finally:
        fit.cache_clear()  # leave no fake-clocked fit to other tests
    path = exp.save_problem(problem, tmp_path / f"{name}-{step}.npz")
    specs = exp.dataset_specs(exp.SETUPS[name], problem, path, runs=1, base_seed=0)
    identities = [(s.run_id, s.config, s.seed) for s in specs]
    return problem.meta["mle_seconds"], read_problem(path).meta, identities


def _check_same_identity(monkeypatch, tmp_path, module, fit, build, name):
    first = _prepare(monkeypatch, tmp_path, module, fit, build, name, step=1.5)
    second = _prepare(monkeypatch, tmp_path, module, fit, build, name, step=600.0)
    assert (first[0], second[0]) == (1.5, 600.0)  # the fits "took" different times ...
    assert first[1]["mle_seconds"] == 1.5  # ... kept as the problem's metadata ...
    assert first[2] == second[2]  # ... and out of every run's identity


def test_branin_fit_time_is_not_part_of_run_identity(monkeypatch, tmp_path):
    _check_same_identity(
        monkeypatch,
        tmp_path,
        branin_module,
        branin_module._fit,
        lambda: branin_module.branin_problem(seed=0, n_restarts=1),
        "branin",
    )


@pytest.mark.data("ura/ura_private_projects.csv")
def test_property_fit_time_is_not_part_of_run_identity(monkeypatch, tmp_path):
    _check_same_identity(
        monkeypatch,
        tmp_path,
        property_module,
        property_module._fit_property,
        lambda: property_module.property_real(seed=0, n_restarts=1, fit_points=200),
        "property",
    )


@pytest.mark.data("ura/ura_private_projects.csv")
def test_property_identity_does_not_depend_on_where_the_file_lies(tmp_path):
    """Moving the data root (or setting FRONTIERBO_DATA) must not stop a sweep from resuming."""
    import shutil

    from frontierbo.data import resolve_data_path
    from frontierbo.po.problems.base import problem_checksum

    original = resolve_data_path(property_module.URA_FILE)
    checksums = []
    for folder in ("a", "b/c"):
        copy = tmp_path / folder / original.name
        copy.parent.mkdir(parents=True)
        shutil.copyfile(original, copy)
        problem = property_module.property_real(copy, seed=0, hyperparameters="thesis")
        checksums.append(problem_checksum(problem))
    assert checksums[0] == checksums[1]


def test_synthetic_problem_does_not_depend_on_the_blas_thread_count():
    """The same seed gives the same sample, whatever the process's BLAS threads: the sample is a
    run's identity (its checksum), and a test process or a resumed sweep may run with other
    thread limits than the first."""
    threadpoolctl = pytest.importorskip("threadpoolctl")
    from frontierbo.po.problems.base import problem_checksum
    from frontierbo.po.problems.synthetic import synthetic_gp_grid

    checksums = set()
    for threads in (1, 2):
        with threadpoolctl.threadpool_limits(threads, user_api="blas"):
            checksums.add(problem_checksum(synthetic_gp_grid(seed=0)))
    assert len(checksums) == 1
