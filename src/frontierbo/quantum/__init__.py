"""Quantum BO (issue 5): classical simulation of the Quantum Monte Carlo (IQAE) oracle.

See :mod:`frontierbo.quantum.iqae` for the exact-in-distribution NumPy simulation of
qiskit-algorithms' ``IterativeAmplitudeEstimation``.
"""
