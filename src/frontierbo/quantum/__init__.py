"""Quantum BO (Dai et al., NeurIPS 2023): quantum Monte Carlo oracles, Q-GP-UCB, Q-LinUCB.

* :mod:`~frontierbo.quantum.rewards` -- reward distributions and their amplitude encodings;
* :mod:`~frontierbo.quantum.oracles` -- ``estimate(reward, accuracy, delta) -> (estimate, queries)``:
  IQAE simulated in NumPy (:mod:`~frontierbo.quantum.iqae`), classical Monte Carlo, Lemma-1 counts;
* :mod:`~frontierbo.quantum.circuits` -- the same IQAE on Qiskit circuits (extra ``[quantum]``);
* :mod:`~frontierbo.quantum.q_gp_ucb`, :mod:`~frontierbo.quantum.linear` -- the algorithms, on the
  shared :class:`~frontierbo.core.gp.FiniteDomainGP`;
* :mod:`~frontierbo.quantum.loop` -- the stage loop and per-query regret;
* :mod:`~frontierbo.quantum.problems` (:mod:`~frontierbo.quantum.synthetic`,
  :mod:`~frontierbo.quantum.automl`, :mod:`~frontierbo.quantum.features`) -- the paper's problems;
* :mod:`~frontierbo.quantum.system`, :mod:`~frontierbo.quantum.userdata` -- the declaration and
  ``frontierbo run quantum-bo``.

See docs/quantum-bo.md.
"""
