"""benchmarks/bos2_variants.py: the GP overrides reach the attack, and instances are chosen as
asked."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import bos2_variants  # noqa: E402


def test_parse_gp_reads_ints_floats_none_and_text():
    gp = bos2_variants.parse_gp(
        ["refit_restarts=5", "beta_sqrt=0.5", "fit_points=none", "rank_decompositions=fitted"]
    )
    assert gp == {"refit_restarts": 5, "beta_sqrt": 0.5, "fit_points": None,
                  "rank_decompositions": "fitted"}  # fmt: skip
    assert isinstance(gp["refit_restarts"], int)


@pytest.mark.parametrize("bad", ["refit_restarts", "no_such_field=1"])
def test_parse_gp_names_the_fields_on_a_bad_item(bad):
    with pytest.raises(SystemExit, match="--gp: expected FIELD=VALUE with FIELD among"):
        bos2_variants.parse_gp([bad])


def test_build_applies_the_overrides_on_the_fitting_and_the_variants_changes():
    attack = bos2_variants.build(
        "fixed-18-low-beta", "scalable", gp={"rank_decompositions": "fitted", "refit_restarts": 5}
    )
    p = attack.perturbation
    assert (p.rank_decompositions, p.refit_restarts, p.fit_points) == ("fitted", 5, 200)
    assert p.beta_sqrt == pytest.approx(3.0 / 12**0.5) and attack.sides == (18,)


def test_instances_by_keys_keep_the_order_given_and_refuse_unknown_ones():
    runs = {(1, 2): {"bos2": {}, "bayesopt": {}}, (3, 4): {"bos2": {}, "bayesopt": {}},
            (5, 6): {"bos2": {}}}  # fmt: skip
    assert bos2_variants.instances(runs, None, 18, ["3/4", "1/2"]) == [(3, 4), (1, 2)]
    with pytest.raises(SystemExit, match="--keys: no BOS² and BayesOpt records of 5/6, 9/9"):
        bos2_variants.instances(runs, None, 18, ["3/4", "5/6", "9/9"])
    assert bos2_variants.instances(runs, [3], 18) == [(3, 4)]


def test_result_names_carry_the_fitting_and_overrides_and_tables_need_none():
    gp = {"rank_decompositions": "fitted", "refit_restarts": 5}
    assert bos2_variants.result_name("as-stored", "scalable", gp) == (
        "as-stored@scalable+rank_decompositions=fitted+refit_restarts=5"
    )
    assert bos2_variants.result_name("fixed-18", None, {}) == "fixed-18"
    assert bos2_variants.result_name(None, None, {}) is None  # --table alone runs nothing
