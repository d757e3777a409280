"""BOS² (thesis Chapter 5): a black-box, score-based, targeted adversarial attack by BO over the
latent dimension, Add-GP-UCB over the perturbation and Bayesian optimal stopping.

Work in progress (issue 12; spec ``../shared/specs/bos2-attack.md``). Landed: the objective (5.2)
and the query oracle of spec §3.0 (``oracle``), and the latent space's bilinear resizing
(``resize``). Not yet: the algorithms, baselines, victims and the reproduction; the system is not
registered with the command line.
"""
