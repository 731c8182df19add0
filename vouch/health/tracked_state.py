"""Lint rule: no commit carries vouch's local state.

vouch keeps its locks, journals and owner records inside the git directory
(`vouch.store.state`); older versions kept them in `.vouch/locks/`, which is
gitignored. A file tracked there is what an attacker commits to have the next vouch
write execute it: vouch ignores it, and `vouch lint`, `lint --staged`, `lint --since`
and `doctor` report it as an error, with the command that removes it.
"""

from __future__ import annotations

from vouch.health.issues import Issue, error
from vouch.store.kb import KB

LOCAL_DIRS = ("locks",)  # inside `.vouch/`: local to a clone, never committed


def tracked(kb: KB, rev: str | None = None) -> list[Issue]:
    """Files under `.vouch/locks/` in the index (`rev` None) or in commit `rev`."""
    out: list[Issue] = []
    for folder in (kb.rel(d) for d in LOCAL_DIRS):
        if rev is None:
            found = kb.repo.tracked(folder)
        else:
            found = sorted(kb.repo.tree_blobs(rev, [folder]))
        out += [
            error(
                "tracked-local-state",
                f"{path} is committed where vouch used to keep its local state (locks, "
                "journals); vouch never reads it (that state lives in .git/vouch/), but "
                f"no commit may carry it: remove it with `git rm -r --cached -- {folder}` "
                "and commit",
                path=path,
            )
            for path in found
        ]
    return out
