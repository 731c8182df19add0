"""Where a clone keeps vouch's local state: inside the git directory, never the work tree.

Whatever a commit can carry is input, never state (DESIGN §4.1). A branch can commit
any file under `.vouch/`, and `git checkout` or `git merge` puts it in the work tree; so
the write lock, the landing journal, the owner records of git's lock files and the temp
files beside them live in the git directory, where no commit can write:

- `shared(kb)`: `<git common dir>/vouch/` (`kb.state_dir`), one per clone — the write
  lock, which serialises every vouch writer of the clone and of all its worktrees (they
  share the refs), the owner record of git's lock files, and the clone id;
- `local(kb)`: the folder for this work tree — the same folder for the main work tree,
  `<git dir>/vouch/` for a linked worktree (`git worktree add`): its landing journal
  (the journal writes that work tree and its index).

Both are made 0700 on demand and refused when they are a link, not a folder, or not
this user's. The clone id is a random value made once per clone: a journal records it,
so one copied from another clone is never executed here.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path

from vouch.core import fsio, lock
from vouch.errors import Conflict
from vouch.store import schema
from vouch.store.kb import KB

CLONE_ID = "clone-id"
_ID_CHARS = frozenset("0123456789abcdef")
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def ensure(folder: Path) -> Path:
    """`folder` as a real directory of this user's, made 0700 when missing."""
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:
        pass
    except FileNotFoundError:  # the parent (a worktree's git dir) is missing
        raise _refused(folder, "its parent folder is missing") from None
    try:
        info = os.lstat(folder)
    except OSError as exc:
        raise _refused(folder, exc.strerror or "it cannot be read") from exc
    if stat.S_ISLNK(info.st_mode):
        raise _refused(folder, "it is a symbolic link")
    if not stat.S_ISDIR(info.st_mode):
        raise _refused(folder, "it is not a folder")
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        raise _refused(folder, f"it belongs to user id {info.st_uid}, not to you")
    return folder


def _refused(folder: Path, why: str) -> Conflict:
    return Conflict(
        f"{folder} cannot hold vouch's local state: {why}",
        hint=f"vouch keeps its locks and journals there; remove it (rm -r '{folder}') if "
        "you did not make it, then run the command again; nothing was changed",
    )


def shared(kb: KB) -> Path:
    """The clone's state folder (`kb.state_dir`), made when missing."""
    return ensure(kb.state_dir)


def local_path(kb: KB) -> Path:
    """This work tree's state folder (not made): `kb.state_dir` for the main work tree,
    `<its git dir>/vouch` for a linked worktree."""
    git_dir = kb.repo.store.index.parent  # `index` is per work tree: its git dir
    if os.path.realpath(git_dir) == os.path.realpath(kb.repo.common_dir):
        return kb.state_dir
    return git_dir / "vouch"


def local(kb: KB) -> Path:
    """This work tree's state folder, made when missing."""
    shared(kb)
    return ensure(local_path(kb))


def clone_id(kb: KB) -> str:
    """This clone's random id, made on first use (32 hex digits)."""
    path = shared(kb) / CLONE_ID
    found = _read_id(path)
    if found:
        return found
    made = secrets.token_hex(16)
    try:  # O_EXCL: two first writers agree on the one that won
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600)
    except FileExistsError:
        found = _read_id(path)
        if found:
            return found
        path.unlink(missing_ok=True)  # an unusable one (empty, garbage): replace it
        fsio.write_atomic(path, made + "\n")
        return made
    with os.fdopen(fd, "w", encoding="ascii") as fh:
        fh.write(made + "\n")
    return made


def _read_id(path: Path) -> str | None:
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            path.unlink(missing_ok=True)
            return None
        raise
    with os.fdopen(fd, "rb") as fh:
        text = fh.read(64).decode("ascii", "replace").strip()
    return text if len(text) == 32 and set(text) <= _ID_CHARS else None


def sweep_temp(folder: Path) -> None:
    """Remove the temp files a killed writer left in a state folder (`.<name>.*.tmp`);
    the caller holds the write lock, so no live vouch process owns them."""
    with contextlib.suppress(FileNotFoundError, NotADirectoryError):
        for entry in os.scandir(folder):
            if entry.name.startswith(".") and entry.name.endswith(".tmp"):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(entry.path)


@contextlib.contextmanager
def write_lock(kb: KB, timeout: float | None = None) -> Iterator[None]:
    """The clone's write lock (`vouch.core.lock.write_lock` in `shared(kb)`). Every
    vouch writer takes it, so this is where a knowledge base of a newer schema version
    than this vouch knows refuses the write (`vouch.store.schema`), before anything —
    checked once the lock is held, so a migration landing meanwhile is seen."""
    if timeout is None:
        timeout = kb.config.number("lock.timeout_seconds", 30)
    with lock.write_lock(shared(kb), timeout):
        schema.refuse_newer(kb)
        yield
