"""The black-box baselines of the BOS² experiments (Section 5.3 of the thesis).

Each follows the :class:`~frontierbo.attack.base.Attack` contract and queries the model only
through the :class:`~frontierbo.attack.oracle.QueryOracle`:

* GenAttack (Alzantot et al. 2019): :class:`GenAttackReference` (the reference code, used for
  the tables) and :class:`GenAttackFoolbox` (``foolbox.attacks.GenAttack``); both stay inside
  the L_inf ball.
* ZOO-ADAM (Chen et al. 2017): :class:`ZooAdam` (own, after the reference code) and
  :class:`ArtZoo` (ART's ``ZooAttack``, a cross-check).
* AutoZOOM-BiLIN (Tu et al. 2019): :class:`AutoZoomBiLin`.

ZOO and AutoZOOM minimise an L2 loss and leave the ball; their success counts only inside it.
foolbox and ART are optional: they are imported when those two classes attack.
"""

from frontierbo.attack.baselines.autozoom import AutoZoomBiLin
from frontierbo.attack.baselines.genattack import (
    GenAttackFoolbox,
    GenAttackReference,
    make_genattack,
)
from frontierbo.attack.baselines.zoo import ArtZoo, ZooAdam

__all__ = [
    "ArtZoo",
    "AutoZoomBiLin",
    "GenAttackFoolbox",
    "GenAttackReference",
    "ZooAdam",
    "make_genattack",
]
