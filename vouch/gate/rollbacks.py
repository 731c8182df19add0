"""A schema migration rolled back with `git revert`: the two commits cancel out.

`vouch migrate apply` lands one commit (`Vouch-Event: kb.migrate`); rolling it back is a
plain `git revert` of it. Made right after, the revert takes the migration's audit event
out of the log with everything else; made later, git's union merge of the log keeps the
event and the revert leaves the log alone. Either way the revert is a commit vouch did
not make that changes vouch's files, and a migration whose event may be gone: the audit
checks (`auditproof`, `provenance`) leave out a migration and the revert that undoes it
exactly — its message names the migration, as `git revert` writes it, and its changes
are the migration's undone, blob for blob, on every path but the audit log, which it
leaves alone or puts back exactly as the migration found it. A partial revert, one with
more changes, or a "revert" of any other commit is judged like every commit.
"""

from __future__ import annotations

import re

from vouch.gate.direct_writes import MIGRATE
from vouch.gate.records import parse_message
from vouch.git import trail
from vouch.store import audit
from vouch.store.kb import KB

_SAYS = re.compile(r"This reverts commit ([0-9a-f]{40}|[0-9a-f]{64})\.")
_MARK = "This reverts commit "


def undone(kb: KB, rev: str) -> dict[str, str]:
    """migration commit -> the commit in `rev`'s history that reverts it exactly."""
    repo = kb.repo
    out: dict[str, str] = {}
    for row in repo.log_records(rev, ["%H", "%P", "%B"], grep=_MARK):
        if len(row) < 3:
            continue
        sha, parents, body = row[0].strip(), row[1].split(), row[2]
        said = _SAYS.search(body)
        if len(parents) == 1 and said and exact(kb, said.group(1), sha, parents[0]):
            out[said.group(1)] = sha
    return out


def cancelled(kb: KB, rev: str) -> set[str]:
    """The migrations in `rev`'s history reverted exactly, and their reverts."""
    pairs = undone(kb, rev)
    return set(pairs) | set(pairs.values())


def erased(kb: KB, rev: str) -> dict[str, str]:
    """migration -> revert, for the reverts that took the migration's audit event out
    of the log (made right after it); a later revert leaves the event, still the
    migration's, in the log."""
    repo = kb.repo
    log_file, log_dir = _audit(kb)
    out = {}
    for migration, revert in undone(kb, rev).items():
        parent = repo.commit_parents(revert)[0]
        made = repo.tree_changes(_tree(kb, parent), _tree(kb, revert) or "")
        if any(p == log_file or p.startswith(log_dir + "/") for p in made):
            out[migration] = revert
    return out


def exact(kb: KB, migration: str, revert: str, parent: str) -> bool:
    """Does `revert` (on `parent`) undo the migration commit `migration` exactly?"""
    repo = kb.repo
    text = trail.messages(repo, [migration]).get(migration)
    if text is None or (parse_message(text)[2].get("Vouch-Event") or [""])[0].strip() != MIGRATE:
        return False
    before = repo.commit_parents(migration)
    if len(before) != 1 or not repo.is_ancestor(migration, parent):
        return False
    log_file, log_dir = _audit(kb)

    def in_log(path: str) -> bool:
        return path == log_file or path.startswith(log_dir + "/")

    trees = [_tree(kb, c) for c in (migration, before[0], parent, revert)]
    if trees[1] is None or trees[3] is None:
        return False
    back = repo.tree_changes(trees[0], trees[1])
    made = repo.tree_changes(trees[2], trees[3])
    if {p: b for p, b in back.items() if not in_log(p)} != {
        p: b for p, b in made.items() if not in_log(p)
    }:
        return False
    if any(back.get(p, "") != b for p, b in made.items() if in_log(p)):
        return False  # the log: left alone, or put back as the migration found it
    # every path the revert changes starts where the migration left it
    return all(repo.blob_at(parent, p) == repo.blob_at(migration, p) for p in made)


def _tree(kb: KB, commit: str) -> str | None:
    return kb.repo.store.peel_tree(commit)


def _audit(kb: KB) -> tuple[str, str]:
    return kb.rel(audit.LOG_NAME), kb.rel(audit.SEGMENT_DIR)
