"""Landing a commit on a branch: journal, then index and work tree, then the refs.

Every vouch write — a proposal's decision, a source registration, a lifecycle edit —
ends here. The new commit object already exists (unreachable until the refs move). When
the branch is checked out, the steps are:

1. refuse (changing nothing) when the user has uncommitted work on a path the commit
   changes;
2. write the journal (`vouch.store.journal`, inside the git directory): branch, old and
   new commit, the other ref updates, and each changed path's blob before and after;
3. write the new files (knowledge objects, then `decided/` records: untracked), put the
   bytes of every tracked file the commit changes (edited objects, the audit log) in
   temp files in the state folder, stage everything in the user's index (one atomic
   write), rename those files into place within microseconds (the audit log last), then
   record the files' stat data in the index (`sync_worktree`);
4. move every ref in one git transaction (compare-and-swap): the commit point;
5. remove the journal.

The order is what makes a kill safe for an ordinary commit afterwards: the audit lines
never reach a commit without the objects they record. Before the index is written, a
plain `git commit` and `git commit -a` take none of the landing (the new objects are
untracked, the tracked files untouched); from then on a plain `git commit` takes all of
it. Only a commit of the work tree (`-a`, `git add -A`) made between the index write and
the renames can take the new files without the edits of tracked ones and the audit
lines (a slow or descheduled process widens that window: a loaded machine hit it) — or,
for `git add -A`, while the new files are written, objects without their records — never
records without their objects, nor audit lines without either; the next write then lands
the rest on top (`vouch.store.recovery`), and the pre-commit hook (`vouch lint --staged`)
refuses a commit that would take part of an unfinished landing.

A kill leaves the journal behind; the next vouch write finishes or undoes the landing
from it (`vouch.store.recovery`). A landing that fails on the way (git holds
`index.lock`, the disk is full) puts back what it wrote (`undo`) before it raises.

Fault injection: `VOUCH_FAULT=<step>` makes the process exit on the spot at that step, as
if killed (tests walk every step; see `STEPS`). It costs one dict lookup when unset.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path

from vouch.core import fsio
from vouch.core.progress import Progress, each
from vouch.errors import Conflict
from vouch.store import audit, gitlocks, journal, state
from vouch.store.journal import RefUpdate
from vouch.store.kb import DECIDED_DIR, KB

FAULT_ENV = "VOUCH_FAULT"
STEPS = (
    "merged",
    "committed",
    "journal",
    "objects",
    "index",
    "worktree",
    "staged",
    "refs",
    "synced",
)
__all__ = ["RefUpdate", "fault", "land", "undo"]


def fault(step: str) -> None:
    """Die here when VOUCH_FAULT names this step (tests only; a kill -9 stand-in)."""
    if os.environ.get(FAULT_ENV) == step:
        os._exit(86)


def _not_checked_out_elsewhere(kb: KB, branch: str) -> None:
    """Refuse to move a branch another work tree has checked out (as git refuses): its
    index and files would stay behind, and that work tree's next `git commit` would
    undo the landing — the approval's files removed as if by hand (the fourth outsider)."""
    where = kb.repo.checked_out_elsewhere().get(branch)
    if where is not None:
        name = branch.removeprefix("refs/heads/")
        raise Conflict(
            f"{name} is checked out in the work tree at {where}: landing on it from here "
            "would leave that work tree behind, and its next commit would undo the landing",
            hint=f"run the command in {where} (cd {where}), or check out another branch there",
        )


def checked_out_branch(kb: KB) -> str | None:
    """The checked-out branch, None when HEAD is detached (no work tree to keep in step)."""
    return kb.repo.current_branch()


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


def _rank(kb: KB, path: str) -> int:
    """0 for a knowledge object, 1 for a decision record, 2 for the audit log: the
    order in which a landing's files appear (`sync_worktree`)."""
    vouch = kb.rel(".")
    if path == f"{vouch}/{audit.LOG_NAME}" or path.startswith(f"{vouch}/{audit.SEGMENT_DIR}/"):
        return 2
    return 1 if path.startswith(f"{vouch}/{DECIDED_DIR}/") else 0


def sync_worktree(
    kb: KB,
    changes: Mapping[str, str | None],
    progress: Progress | None = None,
    *,
    write: set[str] | None = None,
) -> None:
    """Make index and work tree hold these blobs at exactly these paths (None: absent);
    `write`: only these paths' files (the index takes every path).

    In the order that keeps a commit made after a kill whole (see the module docstring):

    1. new files — knowledge objects, then decision records — not in the work tree
       yet, untracked, so neither `git commit` nor `git commit -a` takes them;
    2. the bytes of every other file (objects git tracks, decision records, the audit
       log) put in temp files in the state folder, out of any commit's reach;
    3. the index, in one atomic write, without stat data: from here a plain commit
       takes the whole landing;
    4. those files renamed into place in a tight loop, objects first, the audit log
       last (removals too);
    5. the index again, with the files' stat data, so git sees them clean.

    Files are not fsynced: the commit is the durable record and the journal repeats
    this step after a crash, as `git checkout` would; an fsync per file would double the
    cost of an approval. Every path was built by vouch from validated ids, never taken
    from a branch.
    """
    files = changes if write is None else {p: b for p, b in changes.items() if p in write}
    ranked = sorted(files.items(), key=lambda item: _rank(kb, item[0]))
    root = kb.root
    fresh: list[tuple[str, str | None]] = [
        (p, b)
        for p, b in ranked
        if b is not None and _rank(kb, p) < 2 and not os.path.lexists(root / p)
    ]
    _write(kb, fresh, progress)
    fault("objects")
    taken = {p for p, _ in fresh}
    prepared = _prepare(kb, [(p, b) for p, b in ranked if p not in taken])
    try:
        with gitlocks.owned(kb, index=True):
            kb.repo.stage_entries(changes, worktree_matches=False)
        fault("index")
        _place(prepared)
    finally:
        _discard(prepared)
    fault("worktree")
    with gitlocks.owned(kb, index=True):
        kb.repo.stage_entries(files)


Prepared = list[tuple[str, str | None, bytes]]  # (target, temp file or None: remove, bytes)


def _prepare(kb: KB, changes: list[tuple[str, str | None]]) -> Prepared:
    """Each file's bytes in a temp file in the state folder, where `git add -A` cannot
    take them, ready to be renamed into place (`_place`)."""
    folder = str(state.local(kb)) if changes else ""
    prepared: Prepared = []
    try:
        for path, blob in changes:
            target = os.path.join(kb.root, path)
            if blob is None:
                prepared.append((target, None, b""))
                continue
            os.makedirs(os.path.dirname(target), exist_ok=True)
            data = kb.repo.read_blob(blob)
            prepared.append((target, fsio.write_temp(target, data, folder), data))
    except BaseException:
        _discard(prepared)
        raise
    return prepared


def _place(prepared: Prepared) -> None:
    for target, temp, data in prepared:  # within microseconds of each other
        if temp is None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(target)
            continue
        try:
            os.replace(temp, target)
        except OSError as exc:  # the git directory on another file system
            if exc.errno != errno.EXDEV:
                raise
            fsio.replace_unsynced(target, data)


def _discard(prepared: Prepared) -> None:
    for _, temp, _ in prepared:
        if temp is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp)


def _write(kb: KB, changes: list[tuple[str, str | None]], progress: Progress | None) -> None:
    for path, blob in changes:  # removals first, as git does: a removed file
        if blob is None:  # may be where a new directory goes
            (kb.root / path).unlink(missing_ok=True)
    root = str(kb.root)
    made: set[str] = set()  # directories known to exist (an import writes 13k files)
    wanted = [(path, blob) for path, blob in changes if blob is not None]
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
    the index and work tree before the refs move (see the module docstring).
    """
    others = list(other_refs)
    checked_out = (checked_out_branch(kb) if current == "" else current) == branch
    if not checked_out:
        _not_checked_out_elsewhere(kb, branch)
    before: dict[str, str | None] = {}
    if checked_out:
        paths = each(list(changes), progress, "checking the work tree", every=500)
        before = {path: kb.repo.blob_at(old, path) if old else None for path in paths}
        refuse_clobber(kb, before, changes)
        journal.write(kb, branch, old, commit, others, dict(changes), before)
        fault("journal")
        try:
            sync_worktree(kb, changes, progress)
        except BaseException:
            # e.g. git holds index.lock (nothing was written), or the disk is full
            # half-way: put back what was written; the journal stays if that fails
            undo(kb, changes, before)
            journal.remove(kb)
            raise
        fault("staged")
    try:
        update_refs(kb, [(branch, commit, old), *others], message)
    except BaseException:
        if checked_out:
            undo(kb, changes, before)
            journal.remove(kb)
        raise
    fault("refs")
    if checked_out:
        fault("synced")
        journal.remove(kb)


def update_refs(kb: KB, updates: list[RefUpdate], message: str) -> None:
    """One ref transaction, its git's lock files recorded as ours (`gitlocks`)."""
    if not updates:
        return
    with gitlocks.owned(kb, [ref for ref, _, _ in updates]) as started:
        kb.repo.update_refs(updates, message=message, started=started)


def undo(
    kb: KB,
    changes: Mapping[str, str | None],
    before: Mapping[str, str | None],
) -> None:
    """Put back the files and index entries a landing that cannot finish had written
    (those still holding the landing's blobs): records first, objects next, the index
    last — the reverse of `sync_worktree`, so a kill on the way leaves no record
    without its object for a commit to take."""
    files = {p: before.get(p) for p, b in changes.items() if current_blob(kb, p) == b}
    _write_back(kb, files)
    staged = kb.repo.index_blobs(changes)
    index = {p: before.get(p) for p, b in changes.items() if staged.get(p) == b}
    if index:
        with gitlocks.owned(kb, index=True):
            kb.repo.stage_entries(index, worktree_matches=False)


def _write_back(kb: KB, changes: Mapping[str, str | None]) -> None:
    """An undo's files: the records first, then the objects (the reverse of
    `sync_worktree`, so no record is left without its object)."""
    ranked = sorted(changes.items(), key=lambda item: _rank(kb, item[0]), reverse=True)
    _write(kb, ranked, None)


def current_blob(kb: KB, path: str) -> str | None:
    """The blob id of the work tree's file at `path`, None when there is no file."""
    try:
        return kb.repo.blob_id((kb.root / path).read_bytes())
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None
