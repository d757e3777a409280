"""BOS² (thesis Chapter 5): a black-box, score-based, targeted adversarial attack by BO over the
latent dimension (Algorithm 6), Add-GP-UCB over the perturbation (Algorithm 7) and Bayesian
optimal stopping (SolveBOS / Decide), with the thesis's baselines (BayesOpt, GenAttack, ZOO,
AutoZOOM) and victims. Docs: ``docs/bos2-attack.md``; our choices: ``docs/decisions.md``
(headings "BOS²: ...").

Every attack queries the model through one :class:`~frontierbo.attack.oracle.QueryOracle` (hard
budget, success by the argmax inside the L_inf ball, a per-query log) and follows the contract of
:mod:`frontierbo.attack.base`. The victims need torch (extra ``attack``); the algorithms do not.
"""
