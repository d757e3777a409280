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
