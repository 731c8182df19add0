"""vouch: a git-native knowledge repository.

Knowledge lives as content-addressed files under `.vouch/` in a git repository;
proposals are branches, approval is a merge, and a disposable index answers search.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
