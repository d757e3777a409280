"""Bridges to other optimisation libraries, each an optional extra imported only when used:
:mod:`frontierbo.integration.optuna` (``pip install 'frontierbo[optuna]'``) is an Optuna
sampler on frontierbo's study model and hands a study to Optuna's plots and dashboard.
``import frontierbo`` imports none of them."""
