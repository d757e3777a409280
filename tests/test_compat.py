"""The import paths that moved in issue 9 still work, warn, and give the very same objects."""

import importlib
import sys

import pytest

DEPRECATED = ("privacy", "problems", "userdata")


@pytest.mark.parametrize(
    ("old", "new", "name"),
    [
        ("frontierbo.privacy.random_projection", "frontierbo.po.random_projection", "Release"),
        ("frontierbo.privacy.samplers", "frontierbo.dp.samplers", "LaplaceMechanism"),
        ("frontierbo.privacy.audit", "frontierbo.po.audit", "reconstruction_attack"),
        ("frontierbo.problems.synthetic", "frontierbo.po.problems.synthetic", "synthetic_gp_grid"),
        ("frontierbo.problems.data", "frontierbo.data", "resolve_data_path"),
        ("frontierbo.userdata", "frontierbo.po.userdata", "run_on_csv"),
    ],
)
def test_old_path_warns_and_aliases_the_new_module(old, new, name):
    for module in [m for m in sys.modules if _is_alias(m)]:
        del sys.modules[module]  # so that the import runs (and warns) again
    with pytest.warns(DeprecationWarning, match="deprecated; import from"):
        old_module = importlib.import_module(old)
    assert getattr(old_module, name) is getattr(importlib.import_module(new), name)


def _is_alias(module: str) -> bool:
    parts = module.split(".")
    return parts[0] == "frontierbo" and len(parts) > 1 and parts[1] in DEPRECATED


def test_old_package_exports_the_moved_public_names():
    """The README once named `frontierbo.privacy` as the entry point: `from frontierbo.privacy
    import GaussianRowMechanism` must work (with the warning), giving the new objects."""
    for module in [m for m in sys.modules if _is_alias(m) or m == "frontierbo.privacy"]:
        del sys.modules[module]
    with pytest.warns(DeprecationWarning, match="frontierbo.privacy is deprecated"):
        from frontierbo.privacy import (  # noqa: PLC0415
            GaussianRowMechanism,
            LaplaceMechanism,
            PrivacyLedger,
            RandomProjectionMechanism,
        )
    from frontierbo.dp.accounting import PrivacyLedger as Ledger
    from frontierbo.dp.samplers import LaplaceMechanism as Laplace
    from frontierbo.po.gaussian_release import GaussianRowMechanism as Gaussian
    from frontierbo.po.random_projection import RandomProjectionMechanism as Projection

    assert (GaussianRowMechanism, LaplaceMechanism, PrivacyLedger, RandomProjectionMechanism) == (
        Gaussian,
        Laplace,
        Ledger,
        Projection,
    )
    privacy = importlib.import_module("frontierbo.privacy")
    assert "Curator" in privacy.__all__ and "theorem3_bound" in privacy.__all__
    assert "check_int" not in privacy.__all__  # imports of the moved modules are not exported
    for name in privacy.__all__:
        assert getattr(privacy, name) is not None
