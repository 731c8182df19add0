"""Finishing or undoing a landing a killed vouch process left (`vouch.store.landing`).

Every vouch write takes the clone's write lock and then calls `recover` (`gate_lock`
does both): no other vouch process is landing then, so whatever a landing journal
records was cut short. The journal is checked field by field first; one that fails is
set aside, never executed (`vouch.store.journal`). A checked journal is then

- finished: the ref transaction again (compare-and-swap), when the branch still holds
  the old tip — the kill came before the commit point;
- put under the user's commit: when the user committed the landed files (all or some)
  right on the old tip, the landing's commit goes under theirs, which is made again on
  it with its own changes only — the approval stays vouch's decision commit;
- caught up: the other ref updates and the work tree, when the branch holds the new
  commit, or when the user committed the landed content themselves elsewhere;
- completed on top: when the user's commit took some of the landed files (a commit of
  the work tree between two renames), the landing's commit is made again on that tip,
  so the approval is whole and recorded once;
- undone: when the user committed other work instead (the branch moved without it),
  what the landing wrote goes back to the branch's own blobs.

Anything the user edited since is left alone. `recover` also removes git lock files and
temp files that a killed vouch process left behind (`vouch.store.gitlocks`), and nothing
that another process may still own.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from vouch.errors import GitFailure
from vouch.store import gitlocks, journal, state
from vouch.store.journal import Journal
from vouch.store.kb import KB
from vouch.store.landing import (
    checked_out_branch,
    current_blob,
    land,
    sync_worktree,
    undo,
    update_refs,
)

FINISH_MESSAGE = "vouch: finish an interrupted landing"
FINISHED, UNDONE, DROPPED = "finished", "undone", "dropped"


@dataclass(frozen=True)
class Recovered:
    """What `recover` did with an interrupted landing: `outcome` is FINISHED (the write
    is on its branch now), UNDONE (the branch moved without it: what it wrote was put
    back) or DROPPED (the branch moved, or is gone, while another one is checked out:
    nothing to write). `subject` is the landing commit's subject line (`vouch: approve
    claim …`); `proposals` and `decision` come from its trailers, for a decision."""

    outcome: str
    branch: str
    subject: str
    proposals: tuple[str, ...] = ()
    decision: str | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "outcome": self.outcome,
            "branch": self.branch,
            "subject": self.subject,
            "proposals": list(self.proposals),
            "decision": self.decision,
        }


@contextlib.contextmanager
def gate_lock(kb: KB) -> Iterator[None]:
    """The clone's write lock, then finish whatever a killed vouch process left."""
    with state.write_lock(kb):
        recover(kb)
        yield


def recover(kb: KB) -> Recovered | None:
    """Finish an interrupted landing and clear what a dead vouch process left; what was
    done with the landing, None when there was none.

    The caller holds the write lock, so no other vouch process is landing now. A journal
    that fails its checks is set aside (`journal.load`), never executed.
    """
    gitlocks.clear_stale(kb)
    found = journal.load(kb)
    done = None
    if found is not None:
        done = _described(kb, found, _finish(kb, found))
        journal.remove(kb)
    for folder in dict.fromkeys((kb.state_dir, state.local_path(kb))):
        state.sweep_temp(folder)
    return done


def _finish(kb: KB, j: Journal) -> str:
    repo = kb.repo
    for rel in j.changes:
        _sweep_temp((kb.root / rel).parent, (kb.root / rel).name)
    tip = repo.peek(j.branch)
    if tip == j.old:
        # killed before the ref transaction: do it now (compare-and-swap: it fails
        # harmlessly when any ref moved since)
        _catch_up(kb, j.branch, j.changes, j.before)
        try:
            update_refs(kb, [(j.branch, j.commit, j.old), *j.others], FINISH_MESSAGE)
        except GitFailure:
            undo(kb, j.changes, j.before)
            return UNDONE
        return FINISHED
    if tip == j.commit:
        _catch_up(kb, j.branch, j.changes, j.before)
        return FINISHED
    if not tip:
        return DROPPED
    missing = {p: b for p, b in j.changes.items() if repo.blob_at(tip, p) != b}
    if _under(kb, j, tip):
        return FINISHED
    if not missing:
        # the user committed the landed content themselves: finish the other refs, and
        # the work tree (a commit of the staged landing leaves the files behind)
        with contextlib.suppress(GitFailure):
            update_refs(kb, j.others, FINISH_MESSAGE)
        _catch_up(kb, j.branch, j.changes, j.before)
        return FINISHED
    if checked_out_branch(kb) == j.branch and _took_part(kb, j, tip):
        # the user's commit took some of the landed files (a commit of the work tree
        # killed between two renames: objects without their records), the rest as they
        # were: land the rest on top, so the approval is whole and recorded once
        return FINISHED if _land_rest(kb, j, tip) else DROPPED
    if checked_out_branch(kb) == j.branch:
        # the branch moved without it (the user committed other work): the landing
        # cannot finish on its old tip, so what it wrote goes back to the branch's own
        # blobs — never left staged for a later `git commit -a` to record without a
        # decision; a file the user edited since stays as it is
        undo(kb, missing, {p: repo.blob_at(tip, p) for p in missing})
        return UNDONE
    return DROPPED


def _described(kb: KB, j: Journal, outcome: str) -> Recovered:
    """The landing's subject line and decision trailers, read from its commit."""
    found = kb.repo.store.read(j.commit)
    parts = found[1].split(b"\n\n", 1) if found else []
    lines = parts[1].decode("utf-8", "replace").splitlines() if len(parts) == 2 else []
    proposals: list[str] = []
    decision = None
    for line in lines[1:]:
        key, _, value = line.partition(": ")
        if key == "Vouch-Proposal" and value:
            proposals.append(value.strip())
        elif key == "Vouch-Decision" and value:
            decision = value.strip()
    subject = lines[0] if lines else ""
    return Recovered(outcome, j.branch, subject, tuple(dict.fromkeys(proposals)), decision)


def _under(kb: KB, j: Journal, tip: str) -> bool:
    """The user's own commit, made right on the landing's old tip, took the landed files
    (all of them, or some: a commit of the work tree killed between two renames), and
    nothing else at those paths. The landing's commit goes under it, whole, and the
    user's commit is made again on top with its own changes only (same author, dates
    and message): the approval is vouch's decision commit, not a plain commit's audit
    lines that every check would fail for good. True when done."""
    repo = kb.repo
    found = repo.store.read(tip)
    if found is None or found[0] != "commit" or repo.commit_parents(tip) != [j.old]:
        return False
    if b"\nVouch-" in b"\n" + found[1].partition(b"\n\n")[2]:
        return False  # a vouch commit on that tip: not the user's plain commit
    at_tip = {p: repo.blob_at(tip, p) for p in j.changes}
    if not all(at_tip[p] in (b, j.before.get(p)) for p, b in j.changes.items()):
        return False  # the user changed a landing path otherwise: theirs to keep
    if not any(at_tip[p] == b and j.before.get(p) != b for p, b in j.changes.items()):
        return False  # it took none of the landing: the branch moved without it
    landed = repo.store.peel_tree(j.commit)
    tree = repo.edit_tree(repo.store.peel_tree(tip), j.changes)
    new = j.commit if tree == landed else repo.reparent(tip, [j.commit], tree)
    try:
        update_refs(kb, [(j.branch, new, tip), *j.others], FINISH_MESSAGE)
    except GitFailure:
        return False
    _catch_up(kb, j.branch, j.changes, j.before)
    return True


def _took_part(kb: KB, j: Journal, tip: str) -> bool:
    """Whether `tip` holds some of the landing's files as it wrote them and, at every
    other path it changes, the file as it was before (nothing else in the way)."""
    at_tip = {p: kb.repo.blob_at(tip, p) for p in j.changes}
    took = [p for p, b in j.changes.items() if at_tip[p] == b and j.before.get(p) != b]
    return bool(took) and all(at_tip[p] in (b, j.before.get(p)) for p, b in j.changes.items())


def _land_rest(kb: KB, j: Journal, tip: str) -> bool:
    """The landing's commit made again on `tip` (same parents beyond the first, same
    message and trailers) and landed: the files `tip` lacks, then the refs. False when
    the landing's commit cannot be read."""
    repo = kb.repo
    found = repo.store.read(j.commit)
    if found is None:
        return False
    message = found[1].split(b"\n\n", 1)[1].decode("utf-8")
    parents = repo.commit_parents(j.commit)
    tree = repo.edit_tree(repo.store.peel_tree(tip), j.changes)
    commit = repo.write_commit(tree, [tip, *parents[1:]], message)
    rest = {p: b for p, b in j.changes.items() if repo.blob_at(tip, p) != b}
    land(kb, j.branch, tip, commit, rest, j.others, FINISH_MESSAGE)
    return True


def _catch_up(
    kb: KB, branch: str, changes: Mapping[str, str | None], before: Mapping[str, str | None]
) -> None:
    """Bring the index to `changes`, and the work tree for paths the user has not
    touched — when `branch` is the one checked out: another branch's work tree (the
    user checked it out since) is not the landing's to write. An edited file stays as
    an unstaged change."""
    if checked_out_branch(kb) != branch:
        return
    untouched = {p for p, b in changes.items() if current_blob(kb, p) in (before.get(p), b)}
    sync_worktree(kb, changes, write=untouched)


def _sweep_temp(directory: Path, name: str = "") -> None:
    """Remove temp files a killed writer left (`.<name>.*.tmp`); the write lock is ours."""
    try:
        found = [
            p
            for p in directory.iterdir()
            if p.name.startswith(f".{name}") and p.name.endswith(".tmp")
        ]
    except (FileNotFoundError, NotADirectoryError):
        return
    for p in found:
        p.unlink(missing_ok=True)
