"""frontierbo: Bayesian optimisation where classic BO breaks.

``frontierbo.create_study`` / ``frontierbo.load_study``: persistent ask / tell studies over
candidate rows or a search space (``frontierbo.Space``; :mod:`frontierbo.study`); the research
systems live in their own packages.
"""

__version__ = "0.1.0"

_STUDY_NAMES = ("create_study", "load_study", "delete_study", "study_summaries", "Space")


def __getattr__(name: str):
    # imported on first use, so `import frontierbo` stays light for the command line
    if name in _STUDY_NAMES:
        from frontierbo import study

        return getattr(study, name)
    raise AttributeError(f"module 'frontierbo' has no attribute {name!r}")


def __dir__():
    return sorted([*globals(), *_STUDY_NAMES])
