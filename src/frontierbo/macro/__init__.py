"""ε-Macro-BO (thesis Chapter 4): nonmyopic BO over macro-actions on a grid or a graph.

Work in progress (issue 11): not yet registered with the command line.
"""
