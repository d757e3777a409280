"""frontierbo: Bayesian optimisation where classic BO breaks."""

__version__ = "0.1.0"
