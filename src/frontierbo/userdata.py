"""Deprecated: ``frontierbo.userdata`` moved to ``frontierbo.po.userdata`` (CSV reading helpers
to ``frontierbo.io``)."""

import warnings

from frontierbo.po.userdata import *  # noqa: F403
from frontierbo.po.userdata import format_result, load_csv_problem, run_on_csv  # noqa: F401

warnings.warn(
    "frontierbo.userdata is deprecated; import from frontierbo.po.userdata",
    DeprecationWarning,
    stacklevel=2,
)
