"""Deprecated: ``frontierbo.problems`` moved to ``frontierbo.po.problems`` (and
``frontierbo.problems.data`` to ``frontierbo.data``)."""

import sys

from frontierbo._compat import alias_package
from frontierbo.po.problems import *  # noqa: F403

alias_package(
    sys.modules[__name__],
    {
        "base": "frontierbo.po.problems.base",
        "branin": "frontierbo.po.problems.branin",
        "loan": "frontierbo.po.problems.loan",
        "property": "frontierbo.po.problems.property",
        "synthetic": "frontierbo.po.problems.synthetic",
        "data": "frontierbo.data",
    },
    "frontierbo.po.problems",
)
