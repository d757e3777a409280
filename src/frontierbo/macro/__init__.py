"""ε-Macro-BO (thesis Chapter 4): nonmyopic BO over macro-actions on a grid or a graph.

Domains (``domains``), data (``data``; ``field`` and ``userdata`` for a user's own field), the input
tree, A1 exhaustive ε-Macro-BO (``epsilon_macro_bo``), A2 the most-likely policy (``most_likely``),
A3 anytime ε-Macro-BO (``anytime``, its search tree ``anytime_search``), the baselines
(``baselines``, ``baselines_batch``, ``q_ei``, ``rollout``), the receding-horizon runner
(``runner``), metrics M1–M4 (``metrics``) and the reproduction of E1–E6 (``experiment``,
``summary``, ``report``; ``frontierbo reproduce macro-bo``). See docs/macro-bo.md.
"""
