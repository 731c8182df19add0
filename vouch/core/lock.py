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
def write_lock(vouch_dir: Path, timeout: float = 30.0) -> Iterator[None]:
    """Hold `.vouch/locks/write.lock` exclusively."""
    lock_dir = vouch_dir / "locks"
    for folder in (vouch_dir, lock_dir):  # real folders: a link would lead the writes out
        try:
            mode = os.lstat(folder).st_mode
        except FileNotFoundError:
            continue
        if not stat.S_ISDIR(mode):
            raise Conflict(
                f"{folder} is a link or a file where vouch keeps a folder: locking and "
                "recovery would write through it, outside the repository",
                hint="remove it (`git rm` it if it is committed), then run the command again",
            )
    lock_dir.mkdir(exist_ok=True)
    path = lock_dir / "write.lock"
    with file_lock(
        path,
        timeout,
        f"another vouch writer held {path} for {timeout:g}s",
        "wait for it to finish, or raise lock.timeout_seconds in config.yaml",
    ):
        yield
