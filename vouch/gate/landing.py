"""Landing a gate commit: move refs atomically, then bring the work tree along.

The ref transaction is the commit point. Before it, the operation has only written
unreachable git objects, so a crash leaves the repository as it was. After it, the
checked-out branch is ahead of the work tree and index for the few `.vouch/` paths the
commit changed; a journal written just before the transaction names them, and the next
gate command (under the write lock) finishes the job. Either way a reader of the refs
sees before or after, never half.

Fault injection: `VOUCH_FAULT=<step>` makes the process exit on the spot at that step, as
if killed (tests walk every step; see `STEPS`). It costs one dict lookup when unset.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable, Iterator, Mapping

from vouch import fsio
from vouch.errors import Conflict
from vouch.git import object_sha
from vouch.kb import KB
from vouch.lock import write_lock

FAULT_ENV = "VOUCH_FAULT"
STEPS = ("merged", "committed", "journal", "refs", "synced")
JOURNAL = "locks/sync.json"


def fault(step: str) -> None:
    """Die here when VOUCH_FAULT names this step (tests only; a kill -9 stand-in)."""
    if os.environ.get(FAULT_ENV) == step:
        os._exit(86)


@contextlib.contextmanager
def gate_lock(kb: KB) -> Iterator[None]:
    """The clone's write lock, then finish any landing a crash interrupted."""
    with write_lock(kb.dir, kb.config.number("lock.timeout_seconds", 30)):
        recover(kb)
        yield


def checked_out_branch(kb: KB) -> str | None:
    """The checked-out branch, None when HEAD is detached (no work tree to keep in step)."""
    return kb.repo.current_branch()


def recover(kb: KB) -> None:
    path = kb.dir / JOURNAL
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return
    except (OSError, ValueError):
        path.unlink(missing_ok=True)
        return
    landed = kb.repo.resolve(data.get("branch", "")) == data.get("commit")
    if landed and checked_out_branch(kb) == data.get("branch"):
        changes = data.get("changes") or {}
        before = data.get("before") or {}
        # only paths still exactly as they were before the crash: an edit made since is
        # the user's work, left alone (it then shows as a change against the new commit)
        untouched = {p: b for p, b in changes.items()
                     if _current_blob(kb, p) in (before.get(p), b)}
        sync_worktree(kb, untouched)
        edited = {p: b for p, b in changes.items() if p not in untouched}
        if edited:  # the index follows the commit; the edit stays as an unstaged change
            kb.repo.stage_entries(edited, worktree_matches=False)
    path.unlink(missing_ok=True)


def _current_blob(kb: KB, path: str) -> str | None:
    try:
        return object_sha("blob", (kb.root / path).read_bytes())
    except (FileNotFoundError, IsADirectoryError):
        return None


def refuse_clobber(kb: KB, committed: Mapping[str, str | None],
                   changes: Mapping[str, str | None]) -> None:
    """Refuse (changing nothing) when the user has uncommitted work on these paths.

    `committed` holds each path's blob in the branch tip (None: absent there).
    """
    clobbered = []
    dirty = kb.repo.index_dirty(changes, committed)
    if dirty is None:
        dirty = kb.repo.worktree_changes(changes)
    for path in dirty:
        new = changes.get(path)
        try:
            current = (kb.root / path).read_bytes()
        except (FileNotFoundError, IsADirectoryError):
            current = None
        if new is not None and current is not None and object_sha("blob", current) == new:
            continue  # already holds exactly what we are about to write
        clobbered.append(path)
    if clobbered:
        raise Conflict(
            "uncommitted changes to " + ", ".join(sorted(clobbered)) + " would be overwritten",
            hint="commit or stash them, then run the command again; nothing was changed",
        )


def sync_worktree(kb: KB, changes: Mapping[str, str | None]) -> None:
    """Make work tree and index hold the committed blobs for exactly these paths.

    Files are replaced atomically (temp file + rename) but not fsynced: the commit is the
    durable record and the journal repeats this step after a crash, as `git checkout`
    would; an fsync per file would double the cost of an approval.
    """
    for path, blob in changes.items():
        target = kb.root / path
        if blob is None:
            target.unlink(missing_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        try:
            tmp.write_bytes(kb.repo.read_blob(blob))
            os.replace(tmp, target)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
    kb.repo.stage_entries(changes)


def land(kb: KB, branch: str, old: str, commit: str, changes: Mapping[str, str | None],
         other_refs: Iterable[tuple[str, str | None, str | None]] = (),
         message: str = "vouch", current: str | None = "") -> None:
    """Move `branch` from `old` to `commit` (plus `other_refs`) in one ref transaction.

    `changes` are the repository paths the commit changed relative to `old`. When the
    branch is checked out they are first checked for uncommitted work and afterwards
    written to the work tree and index; nothing else in either is touched.
    """
    checked_out = (checked_out_branch(kb) if current == "" else current) == branch
    journal = kb.dir / JOURNAL
    if checked_out:
        before = {path: kb.repo.blob_at(old, path) for path in changes}
        refuse_clobber(kb, before, changes)
        fsio.write_atomic(journal, json.dumps({"branch": branch, "commit": commit,
                                               "changes": dict(changes), "before": before}))
    fault("journal")
    try:
        kb.repo.update_refs([(branch, commit, old), *other_refs], message=message)
    except BaseException:
        journal.unlink(missing_ok=True)
        raise
    fault("refs")
    if checked_out:
        sync_worktree(kb, changes)
        fault("synced")
        journal.unlink(missing_ok=True)
