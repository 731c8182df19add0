"""What a commit itself changed under the knowledge folder.

Against its parent; for a merge, only what differs from every parent — a plain merge of
two branches changes nothing of its own, and a file it brings from one side was changed
by the commit on that side. Read in-process (trees from the object store), no git run.
"""

from __future__ import annotations

from vouch.errors import VouchError
from vouch.store.kb import KB


def own_changes(kb: KB, commit: str, parents: list[str]) -> dict[str, str | None]:
    """`.vouch/`-relative path -> its new blob (None: deleted) for what `commit` changed."""
    repo = kb.repo
    where = kb.rel(".")
    mine = repo.blob_at(commit, where)
    per_parent: list[dict[str, str | None]] = []
    for parent in parents or [""]:
        theirs = repo.blob_at(parent, where) if parent else None
        if mine is None:
            gone = repo.tree_changes(None, theirs) if theirs else {}
            per_parent.append(dict.fromkeys(gone))
        elif theirs == mine:
            return {}
        else:
            per_parent.append(repo.tree_changes(theirs, mine))
    own = per_parent[0]
    for other in per_parent[1:]:
        own = {p: b for p, b in own.items() if p in other}
    return own


def added(kb: KB, parents: list[str], own: dict[str, str | None]) -> set[str]:
    """Which of `own` no parent held: the files the commit added."""
    return {
        rel
        for rel, blob in own.items()
        if blob is not None and not any(_held(kb, parent, kb.rel(rel)) for parent in parents)
    }


def _held(kb: KB, commit: str, path: str) -> bool:
    try:
        return bool(commit) and kb.repo.blob_at(commit, path) is not None
    except VouchError:
        return True  # a folder on the way is a file there: not added by this commit
