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

# inside `.vouch/`: local to a clone, never committed (the index is rebuilt from the
# files; one another clone built is never served)
LOCAL_DIRS = ("locks", "index", "searches.log.jsonl")


def tracked(kb: KB, rev: str | None = None) -> list[Issue]:
    """Files under `.vouch/locks/` and `.vouch/index/` in git's index (`rev` None) or
    in commit `rev`."""
    out: list[Issue] = []
    for folder in (kb.rel(d) for d in LOCAL_DIRS):
        if rev is None:
            found = kb.repo.tracked(folder)
        else:
            found = sorted(kb.repo.tree_blobs(rev, [folder]))
        out += [
            error(
                "tracked-local-state",
                f"{path} is committed where vouch keeps a clone's own state (the search "
                "index and log, formerly locks and journals); vouch never trusts it, but no "
                f"commit may carry it: remove it with `git rm -r --cached -- {folder}` "
                "and commit",
                path=path,
            )
            for path in found
        ]
    return out
