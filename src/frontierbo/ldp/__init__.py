"""Local differential privacy and heavy-tailed Bayesian optimisation on a finite arm set.

See docs/ldp-architecture.md for the module contract.
"""
