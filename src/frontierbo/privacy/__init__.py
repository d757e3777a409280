"""Deprecated: ``frontierbo.privacy`` moved to ``frontierbo.dp`` (samplers, accounting) and
``frontierbo.po`` (the PO-GP-UCB release, curator, modeler, theory, audits).

Both the old module paths (``frontierbo.privacy.gaussian_release``) and the public names at
package level (``from frontierbo.privacy import GaussianRowMechanism``) keep working for one
release, with a ``DeprecationWarning``; import from the new modules instead."""

import sys

from frontierbo._compat import alias_package

alias_package(
    sys.modules[__name__],
    {
        "samplers": "frontierbo.dp.samplers",
        "accounting": "frontierbo.dp.accounting",
        "audit": "frontierbo.po.audit",
        "random_projection": "frontierbo.po.random_projection",
        "gaussian_release": "frontierbo.po.gaussian_release",
        "po_gp_ucb": "frontierbo.po.po_gp_ucb",
        "theory": "frontierbo.po.theory",
    },
    "frontierbo.dp and frontierbo.po",
    export=True,
)
