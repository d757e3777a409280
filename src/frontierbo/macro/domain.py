"""The contract between a macro-action domain and the planners.

A domain is a finite set of ``n`` cells (the GP's candidate rows, with coordinates ``inputs``)
and, from every location (a cell), the macro-actions an agent may take: paths of ``kappa`` cells,
the last of which is the agent's next location (thesis Section 4.1). Planners only call
:meth:`MacroDomain.macro_actions`; grids, graphs and test doubles implement it.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np


class MacroDomain(Protocol):
    """What a planner needs from a domain.

    Attributes:
        inputs: (n, d) coordinates of the cells; row ``i`` is cell ``i`` (the GP candidates).
        kappa: the length of every macro-action (cells visited per step).
    """

    inputs: np.ndarray
    kappa: int

    @property
    def n(self) -> int:
        """Number of cells."""
        ...

    def macro_actions(self, location: int) -> np.ndarray:
        """The macro-actions available at ``location``: an int array (m, kappa) of cell indices,
        row ``j`` being the cells visited in order by action ``j`` (its last cell is the next
        location). ``m`` may be 0 (a dead end). The same location always gives the same array
        (any random subsampling is fixed when the domain is built, from its seed)."""
        ...
