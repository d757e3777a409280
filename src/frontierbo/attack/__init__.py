"""BOS² (thesis Chapter 5): a black-box, score-based, targeted adversarial attack by BO over the
latent dimension, Add-GP-UCB over the perturbation and Bayesian optimal stopping.

Work in progress (issue 12; spec ``../shared/specs/bos2-attack.md``): the objective (5.2) and the
query oracle of spec §3.0 (``oracle``) have landed; the algorithms, baselines, victims and the
reproduction have not, and the system is not registered with the command line yet.
"""
