"""ε-Macro-BO (thesis Chapter 4): nonmyopic BO over macro-actions on a grid or a graph.

Work in progress (issue 11; see docs/macro-bo.md): domains (``domains``), data (``data``), the
input tree, A1 exhaustive ε-Macro-BO (``epsilon_macro_bo``), A2 (``most_likely``), A3 anytime
(``anytime``), the baselines (``baselines``, ``baselines_batch``, ``q_ei``, ``rollout``), the
receding-horizon runner (``runner``) and metrics (``metrics``) have landed; the system is not
yet registered with the command line.
"""
