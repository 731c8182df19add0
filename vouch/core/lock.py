"""One writer at a time: advisory file locks with a timeout.

`file_lock` is the primitive; `write_lock` (one writer of the knowledge files per clone)
and `vouch.index.state.index_lock` (one writer of the derived index) are built on it.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from vouch.errors import Conflict, LockTimeout

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


@contextmanager
def file_lock(
    path: Path,
    timeout: float,
    message: str,
    hint: str,
    *,
    delay: float = 0.005,
    max_delay: float = 0.1,
) -> Iterator[None]:
    """Hold `path` exclusively (created if missing; its folder must exist); the OS
    releases it if we die. Polls from `delay`, doubling up to `max_delay`, and raises
    LockTimeout(message, hint) once `timeout` seconds have passed (0: one try)."""
    try:  # never through a link: a committed one could point anywhere
        fd = os.open(path, os.O_RDWR | os.O_CREAT | _NOFOLLOW, 0o644)
    except OSError as exc:
        if exc.errno != errno.ELOOP:
            raise
        raise Conflict(
            f"{path} is a link where vouch keeps a lock file",
            hint="remove it (`git rm` it if it is committed), then run the command again",
        ) from exc
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise LockTimeout(message, hint=hint) from None
                time.sleep(delay)
                delay = min(delay * 2, max_delay)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


@contextmanager
def write_lock(state_dir: Path, timeout: float = 30.0) -> Iterator[None]:
    """Hold `write.lock` in the clone's state folder (`vouch.store.state.shared`: inside
    the git directory, never in the work tree, where a commit could plant a file or a
    link), so every vouch writer of the clone and its worktrees takes turns."""
    try:
        mode = os.lstat(state_dir).st_mode
    except FileNotFoundError:
        mode = 0
    if not stat.S_ISDIR(mode):  # made by the caller: a link would lead the lock elsewhere
        raise Conflict(
            f"{state_dir} is not a folder, so vouch cannot take its write lock there",
            hint="remove it if you did not make it, then run the command again",
        )
    path = state_dir / "write.lock"
    with file_lock(
        path,
        timeout,
        f"another vouch writer held {path} for {timeout:g}s",
        "wait for it to finish, or raise lock.timeout_seconds in config.yaml",
    ):
        yield
