"""The constructor arguments shared by TGP-UCB, ATA-GP-UCB and MoMA-GP-UCB, validated once.

The three LDP algorithms take the same keywords (``docs/ldp-architecture.md``): ``T``, ``B``,
``R``, ``eps_priv``, ``alpha``, ``v``, ``c``, ``lam``, ``delta``, ``profile``, ``beta_scale``.
:class:`LDPArguments` checks them with one rule each, so the same inputs are accepted or rejected
by all three alike:

* ``T`` integer >= 1.
* ``B`` in (0, inf): the known bound ``||f||_H <= B`` (the paper's assumption; Theorem 1 and
  every experiment have ``B > 0``, and ``B = 0`` would be the trivial ``f = 0``).
* ``R`` None or in [0, inf): the noise bound ``|eta| <= R``; required when ``eps_priv`` is given
  (it sets the CTL scale ``L = 2 (B + R) / eps_priv``), unused otherwise.
* ``eps_priv`` None (non-private algorithm) or in (0, inf) (its LDP version).
* ``alpha`` in (0, 1], and exactly 1 when ``eps_priv`` is given: the CTL-privatised reward has
  bounded *second* moments (Lemma 1; Algorithm 2 and Corollary 1 are written for alpha = 1), so
  an ``alpha < 1`` with a privacy level would be silently meaningless.
* ``v``, ``c`` None or in (0, inf): the reward moment ``E|y|^(1+alpha) <= v`` (ATA, TGP) and the
  noise moment ``E|eta|^(1+alpha) <= c`` (MoMA). Which one an algorithm needs, and its default,
  is :meth:`LDPArguments.moment`.
* ``lam`` in (0, inf), ``delta`` in (0, 1), ``profile`` in
  :data:`~frontierbo.ldp.parameters.PROFILES`, ``beta_scale`` in [0, inf) (the multiplier of
  every width beta_t).
"""

from __future__ import annotations

from dataclasses import dataclass

from frontierbo._validation import check_int, check_positive, check_real
from frontierbo.ldp.parameters import PROFILES, ctl_moments

__all__ = ["LDPArguments"]


@dataclass(frozen=True)
class LDPArguments:
    """Validated shared arguments of the LDP algorithms (module docstring for each rule)."""

    T: int
    B: float
    R: float | None = None
    eps_priv: float | None = None
    alpha: float = 1.0
    v: float | None = None
    c: float | None = None
    lam: float = 1.0
    delta: float = 0.1
    profile: str = "practical"
    beta_scale: float = 1.0

    def __post_init__(self):
        def put(name, value):
            object.__setattr__(self, name, value)

        put("T", check_int(self.T, "T", low=1))
        put("B", check_positive(self.B, "B"))
        if self.R is not None:
            put("R", check_real(self.R, "R", low=0.0, low_open=False))
        if self.eps_priv is not None:
            put("eps_priv", check_positive(self.eps_priv, "eps_priv"))
        put("alpha", check_real(self.alpha, "alpha", low=0.0, high=1.0, high_open=False))
        for name in ("v", "c"):
            if getattr(self, name) is not None:
                put(name, check_positive(getattr(self, name), name))
        put("lam", check_positive(self.lam, "lam"))
        put("delta", check_real(self.delta, "delta", low=0.0, high=1.0))
        if self.profile not in PROFILES:
            raise ValueError(f"profile must be one of {list(PROFILES)}, got {self.profile!r}")
        put("beta_scale", check_real(self.beta_scale, "beta_scale", low=0.0, low_open=False))
        if self.private:
            if self.R is None:
                raise ValueError(
                    "R (the noise bound, in [0, inf)) is required when eps_priv is given"
                )
            if self.alpha != 1.0:
                raise ValueError(
                    f"alpha must be 1 when eps_priv is given (the CTL moments are second "
                    f"moments), got {self.alpha!r}"
                )

    #: What every LDP optimiser also exposes as its own attributes (``opt.T``, ``opt.lam``...).
    EXPOSED = ("T", "B", "R", "alpha", "lam", "delta", "profile", "beta_scale", "private",
               "eps_priv")  # fmt: skip

    def expose(self, optimiser) -> None:
        """Set :attr:`EXPOSED` on ``optimiser`` (validated once, here, for every algorithm)."""
        for name in self.EXPOSED:
            setattr(optimiser, name, getattr(self, name))

    @property
    def private(self) -> bool:
        """True for the LDP version (``eps_priv`` given)."""
        return self.eps_priv is not None

    @property
    def ctl(self) -> dict[str, float] | None:
        """:func:`~frontierbo.ldp.parameters.ctl_moments` (``L``, ``v``, ``K``, ``c``) of the
        privatised reward, or None for the non-private version."""
        return ctl_moments(self.B, self.R, self.eps_priv) if self.private else None

    def moment(self, name: str, algorithm: str) -> float:
        """The moment bound ``name`` (``"v"`` or ``"c"``) that ``algorithm`` (its name, for the
        message) runs with: the given value; else, in the LDP version, the CTL formula; else an
        error (the non-private algorithm cannot guess it)."""
        given = getattr(self, name)
        if given is not None:
            return given
        if self.private:
            return self.ctl[name]
        raise ValueError(
            f"{name} (the moment bound, in (0, inf)) is required when eps_priv is None "
            f"(non-private {algorithm})"
        )
