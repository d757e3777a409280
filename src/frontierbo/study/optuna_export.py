"""A frontierbo study handed to Optuna (``Study.to_optuna``): its trials in an Optuna study, for
Optuna's visualisations and optuna-dashboard. Optuna is imported only when it is called
(``pip install 'frontierbo[optuna]'``); the sampler the other way is
:mod:`frontierbo.integration.optuna`."""

from __future__ import annotations

import datetime

import numpy as np

from frontierbo.study.space import Float, Int


def _optuna():
    try:
        import optuna
    except ImportError:
        raise ImportError("to_optuna needs Optuna: pip install 'frontierbo[optuna]'") from None
    return optuna


def to_optuna(study, storage=None, study_name: str | None = None):
    """A new Optuna study (in ``storage``: None for memory, a URL or an Optuna storage; named
    ``study_name``, default the frontierbo study's name) with the frontierbo ``study``'s
    direction and every complete trial (value, params) and failed trial (params), in trial
    order, with their ask and tell times; pending, waiting and abandoned trials are skipped.

    Distributions: a search space's own (``Float`` -> ``FloatDistribution`` with its ``log``
    and ``step``, ``Int`` -> ``IntDistribution``, ``Categorical`` ->
    ``CategoricalDistribution``); for candidate rows, each feature column over the candidates'
    range (``FloatDistribution``; from a CSV an int column ``IntDistribution``, a bool or
    categorical column ``CategoricalDistribution`` of its values). Each Optuna trial's user
    attributes hold ``frontierbo_trial`` (the frontierbo trial number), and for rows ``row``
    and the CSV's carried columns (``carried_<name>``)."""
    optuna = _optuna()
    from optuna.trial import TrialState

    distributions = _study_distributions(study)
    out = optuna.create_study(
        storage=storage,
        study_name=study.name if study_name is None else study_name,
        direction=study.direction,
    )
    trials = []
    for t in study.trials:
        if t.state not in ("complete", "fail"):
            continue
        attrs = {"frontierbo_trial": t.number}
        if t.row is not None:
            attrs["row"] = int(t.row)
        attrs.update({f"carried_{k}": v for k, v in t.carried.items()})
        if t.request:
            attrs["request"] = t.request
        params = {name: _plain(t.params[name]) for name in distributions}
        if t.state == "complete":
            frozen = optuna.trial.create_trial(
                state=TrialState.COMPLETE, value=float(t.value), params=params,
                distributions=distributions, user_attrs=attrs,
            )  # fmt: skip
        else:
            frozen = optuna.trial.create_trial(
                state=TrialState.FAIL, params=params, distributions=distributions,
                user_attrs=attrs,
            )  # fmt: skip
        frozen.datetime_start = datetime.datetime.fromtimestamp(t.asked_at)
        if t.told_at is not None:
            frozen.datetime_complete = datetime.datetime.fromtimestamp(t.told_at)
        trials.append(frozen)
    out.add_trials(trials)
    return out


def _plain(value):
    return value.item() if isinstance(value, np.generic) else value


def _study_distributions(study) -> dict:
    """Each parameter's Optuna distribution (:func:`to_optuna`)."""
    from optuna.distributions import (
        CategoricalDistribution,
        FloatDistribution,
        IntDistribution,
    )

    if study.space is not None:
        out = {}
        for p in study.space.params:
            if isinstance(p, Float):
                out[p.name] = FloatDistribution(p.low, p.high, log=p.log, step=p.step)
            elif isinstance(p, Int):
                out[p.name] = IntDistribution(p.low, p.high, log=p.log)
            else:
                out[p.name] = CategoricalDistribution(list(p.choices))
        return out
    X = np.asarray(study.candidates, dtype=float)
    if study.table is None:
        return {
            name: FloatDistribution(float(X[:, j].min()), float(X[:, j].max()))
            for j, name in enumerate(study.columns)
        }
    out, j = {}, 0
    for c in study.table.features:
        if c.kind == "categorical":
            out[c.name] = CategoricalDistribution(list(c.choices))
            j += len(c.choices)
            continue
        low, high = float(X[:, j].min()), float(X[:, j].max())
        if c.kind == "int":
            out[c.name] = IntDistribution(int(low), int(high))
        elif c.kind == "bool":
            out[c.name] = CategoricalDistribution([False, True])
        else:
            out[c.name] = FloatDistribution(low, high)
        j += 1
    return out
