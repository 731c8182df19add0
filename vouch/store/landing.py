"""Landing a commit on a branch: journal, then work tree and index, then the refs.

Every vouch write — a proposal's decision, a source registration, a lifecycle edit —
ends here. The new commit object already exists (unreachable until the refs move). When
the branch is checked out, the steps are:

1. refuse (changing nothing) when the user has uncommitted work on a path the commit
   changes;
2. write the journal `locks/landing.json`: branch, old and new commit, the other ref
   updates, and each changed path's blob before and after;
3. write the new blobs into the work tree (each atomically) and the user's index;
4. move every ref in one git transaction (compare-and-swap): the commit point;
5. remove the journal.

A kill before 4 leaves the index ahead of HEAD, exactly like an interrupted `git merge`:
an ordinary `git commit` by the user records the landed content, so nothing is lost.
A kill after 4 leaves the refs moved and the files in step. The next vouch write (under
the clone's write lock) reads the journal and finishes the landing — the ref
transaction again, compare-and-swap — or, when the user committed the content
themselves, completes the other ref updates, or, when the user committed other work
instead (the branch moved without it), undoes it; anything the user edited since is
left alone. It also removes a `.git/index.lock` and temp files that a killed vouch process
left behind, and nothing that another process may still own.

Fault injection: `VOUCH_FAULT=<step>` makes the process exit on the spot at that step, as
if killed (tests walk every step; see `STEPS`). It costs one dict lookup when unset.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from vouch.core import fsio
from vouch.core.lock import write_lock
from vouch.core.progress import Progress, each
from vouch.errors import Conflict, GitFailure
from vouch.store.kb import KB

FAULT_ENV = "VOUCH_FAULT"
STEPS = ("merged", "committed", "journal", "worktree", "staged", "refs", "synced")
JOURNAL = "locks/landing.json"
INDEX_OWNER = "locks/index.owner"  # names the vouch process that may hold .git/index.lock
RefUpdate = tuple[str, str | None, str | None]  # (ref, new or None to delete, old or None)


def fault(step: str) -> None:
    """Die here when VOUCH_FAULT names this step (tests only; a kill -9 stand-in)."""
    if os.environ.get(FAULT_ENV) == step:
        os._exit(86)


@contextlib.contextmanager
def gate_lock(kb: KB) -> Iterator[None]:
    """The clone's write lock, then finish whatever a killed vouch process left."""
    with write_lock(kb.dir, kb.config.number("lock.timeout_seconds", 30)):
        recover(kb)
        yield


def checked_out_branch(kb: KB) -> str | None:
    """The checked-out branch, None when HEAD is detached (no work tree to keep in step)."""
    return kb.repo.current_branch()


# -- recovery --------------------------------------------------------------------------
def recover(kb: KB) -> None:
    """Finish an interrupted landing and clear what a dead vouch process left.

    The caller holds the write lock, so no other vouch process is landing now.
    """
    _clear_stale_index_lock(kb)
    path = kb.dir / JOURNAL
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        _sweep_temp(kb.dir / "locks")
        return
    except (OSError, ValueError):
        data = None
    if isinstance(data, dict):
        _finish(kb, data)
    path.unlink(missing_ok=True)
    _sweep_temp(kb.dir / "locks")


def _finish(kb: KB, data: dict[str, Any]) -> None:
    repo = kb.repo
    branch, old, new = str(data.get("branch", "")), data.get("old"), str(data.get("commit", ""))
    changes: dict[str, str | None] = dict(data.get("changes") or {})
    before: dict[str, str | None] = dict(data.get("before") or {})
    others = [tuple(x) for x in data.get("others") or [] if isinstance(x, list) and len(x) == 3]
    for rel in changes:
        _sweep_temp((kb.root / rel).parent, (kb.root / rel).name)
    tip = repo.resolve(branch) if branch.startswith("refs/heads/") else None
    if tip == old and new:
        # killed before the ref transaction: do it now (compare-and-swap: it fails
        # harmlessly when any ref moved since)
        _catch_up(kb, branch, changes, before)
        try:
            repo.update_refs(
                [(branch, new, old), *others], message="vouch: finish an interrupted landing"
            )
            return
        except GitFailure:
            _undo(kb, changes, before)
            return
    if tip == new:
        _catch_up(kb, branch, changes, before)
        return
    if not tip:
        return
    missing = {p: b for p, b in changes.items() if repo.blob_at(tip, p) != b}
    if not missing:
        # the user committed the landed content themselves: finish the other refs
        with contextlib.suppress(GitFailure):
            repo.update_refs(others, message="vouch: finish an interrupted landing")
    elif checked_out_branch(kb) == branch:
        # the branch moved without it (the user committed other work): the landing
        # cannot finish on its old tip, so what it wrote goes back to the branch's own
        # blobs — never left staged for a later `git commit -a` to record without a
        # decision; a file the user edited since stays as it is
        _undo(kb, missing, {p: repo.blob_at(tip, p) for p in missing})


def _catch_up(
    kb: KB, branch: str, changes: Mapping[str, str | None], before: Mapping[str, str | None]
) -> None:
    """Bring the work tree and index to `changes` for paths the user has not touched —
    when `branch` is the one checked out: another branch's work tree (the user checked
    it out since) is not the landing's to write."""
    if checked_out_branch(kb) != branch:
        return
    untouched = {p: b for p, b in changes.items() if _current_blob(kb, p) in (before.get(p), b)}
    sync_worktree(kb, untouched)
    edited = {p: b for p, b in changes.items() if p not in untouched}
    if edited:  # the index follows the commit; the edit stays as an unstaged change
        kb.repo.stage_entries(edited, worktree_matches=False)


def _undo(
    kb: KB,
    changes: Mapping[str, str | None],
    before: Mapping[str, str | None],
    *,
    stage: bool = True,
) -> None:
    """Put back the files (and, with `stage`, index entries) a landing that cannot
    finish had written."""
    restore = {p: before.get(p) for p, b in changes.items() if _current_blob(kb, p) == b}
    if stage:
        sync_worktree(kb, restore)
        return
    for path, blob in restore.items():
        target = kb.root / path
        if blob is None:
            target.unlink(missing_ok=True)
        else:
            fsio.write_atomic(target, kb.repo.read_blob(blob))


def _current_blob(kb: KB, path: str) -> str | None:
    try:
        return kb.repo.blob_id((kb.root / path).read_bytes())
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


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


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _clear_stale_index_lock(kb: KB) -> None:
    """Remove `.git/index.lock` when a vouch process that died took it.

    Before vouch writes the index itself it records its pid in `locks/index.owner`, and
    removes that record afterwards. A record naming a dead process, next to a lock file
    created after the record and within seconds of it, is that process's lock: nothing
    else can own it. Any other lock is left for git to report.
    """
    owner = kb.dir / INDEX_OWNER
    try:
        pid = int(owner.read_text(encoding="ascii").strip() or 0)
        marked = owner.stat().st_mtime
    except (FileNotFoundError, ValueError):
        return
    if pid and pid != os.getpid() and _alive(pid):
        return
    lock = kb.repo.store.index.with_name("index.lock")
    with contextlib.suppress(FileNotFoundError):
        made = lock.stat().st_mtime
        if marked - 1 <= made <= marked + 10:
            lock.unlink()
    owner.unlink(missing_ok=True)


@contextlib.contextmanager
def index_owner(kb: KB) -> Iterator[None]:
    """Mark this process as the one that may take `.git/index.lock` (see above)."""
    owner = kb.dir / INDEX_OWNER
    owner.write_text(str(os.getpid()), encoding="ascii")  # no fsync: a process record
    try:
        yield
    finally:
        owner.unlink(missing_ok=True)


# -- landing -------------------------------------------------------------------------------
def refuse_clobber(
    kb: KB, committed: Mapping[str, str | None], changes: Mapping[str, str | None]
) -> None:
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
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            current = None
        if new is not None and current is not None and kb.repo.blob_id(current) == new:
            continue  # already holds exactly what we are about to write
        clobbered.append(path)
    if clobbered:
        raise Conflict(
            "uncommitted changes to " + ", ".join(sorted(clobbered)) + " would be overwritten",
            hint="commit or stash them, then run the command again; nothing was changed",
        )
    linked = not_folders(kb.root, changes)
    if linked:
        raise Conflict(
            ", ".join(linked) + " is a link or a file where vouch keeps a folder: writing "
            "through it would put knowledge files outside the repository",
            hint="remove it (`git rm` it if it is committed), then run the command again; "
            "nothing was changed",
        )


def not_folders(root: Path, paths: Iterable[str]) -> list[str]:
    """The folders on the way to `paths` (inside `root`) that are symbolic links or
    files: the work tree must hold real directories there, or a write would follow the
    link out of the repository."""
    seen: set[str] = set()
    found: list[str] = []
    for path in paths:
        parts = path.split("/")[:-1]
        for n in range(1, len(parts) + 1):
            folder = "/".join(parts[:n])
            if folder in seen:
                continue
            seen.add(folder)
            try:
                mode = os.lstat(root / folder).st_mode
            except FileNotFoundError:
                break  # made as a real directory when written
            if not stat.S_ISDIR(mode):  # a link (to anything) or a file
                found.append(folder)
                break
    return sorted(found)


_READ_AT_ONCE = 256  # blobs read from git per pipelined round trip


def sync_worktree(
    kb: KB, changes: Mapping[str, str | None], progress: Progress | None = None
) -> None:
    """Make work tree and index hold these blobs at exactly these paths (None: absent).

    Files are replaced atomically (temp file + rename) but not fsynced: the commit is the
    durable record and the journal repeats this step after a crash, as `git checkout`
    would; an fsync per file would double the cost of an approval. Every path was built
    by vouch from validated ids, never taken from a branch.
    """
    for path, blob in changes.items():  # removals first, as git does: a removed file
        if blob is None:  # may be where a new directory goes
            (kb.root / path).unlink(missing_ok=True)
    root = str(kb.root)
    made: set[str] = set()  # directories known to exist (an import writes 13k files)
    wanted = [(path, blob) for path, blob in changes.items() if blob is not None]
    for start in range(0, len(wanted), _READ_AT_ONCE):
        part = wanted[start : start + _READ_AT_ONCE]
        for (path, _), data in zip(part, kb.repo.read_blobs([b for _, b in part]), strict=True):
            target = os.path.join(root, path)
            parent = os.path.dirname(target)
            if parent not in made:
                os.makedirs(parent, exist_ok=True)
                made.add(parent)
            fsio.replace_unsynced(target, data)
        if progress:
            progress("writing files", start + len(part), len(wanted))
    fault("worktree")
    with index_owner(kb):
        kb.repo.stage_entries(changes)


def land(
    kb: KB,
    branch: str,
    old: str | None,
    commit: str,
    changes: Mapping[str, str | None],
    other_refs: Iterable[RefUpdate] = (),
    message: str = "vouch",
    current: str | None = "",
    progress: Progress | None = None,
) -> None:
    """Move `branch` from `old` to `commit` (plus `other_refs`) in one ref transaction.

    `changes` are the repository paths the commit changed relative to `old`. When the
    branch is checked out they are first checked for uncommitted work, then written to
    the work tree and index before the refs move (see the module docstring).
    """
    others = list(other_refs)
    checked_out = (checked_out_branch(kb) if current == "" else current) == branch
    journal = kb.dir / JOURNAL
    if checked_out:
        paths = each(list(changes), progress, "checking the work tree", every=500)
        before = {path: kb.repo.blob_at(old, path) if old else None for path in paths}
        refuse_clobber(kb, before, changes)
        fsio.write_atomic(
            journal,
            json.dumps(
                {
                    "branch": branch,
                    "old": old,
                    "commit": commit,
                    "others": others,
                    "changes": dict(changes),
                    "before": before,
                }
            ),
        )
        fault("journal")
        try:
            sync_worktree(kb, changes, progress)
        except BaseException:
            # e.g. git holds index.lock: the index was not written, the files were
            _undo(kb, changes, before, stage=False)
            journal.unlink(missing_ok=True)
            raise
        fault("staged")
    try:
        kb.repo.update_refs([(branch, commit, old), *others], message=message)
    except BaseException:
        if checked_out:
            _undo(kb, changes, before)
            journal.unlink(missing_ok=True)
        raise
    fault("refs")
    if checked_out:
        fault("synced")
        journal.unlink(missing_ok=True)
