"""One writer at a time: advisory file locks with a timeout.

`file_lock` is the primitive; `write_lock` (one writer of the knowledge files per clone)
and `vouch.index.state.index_lock` (one writer of the derived index) are built on it.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from vouch.errors import LockTimeout


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
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
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
    lock_dir.mkdir(exist_ok=True)
    path = lock_dir / "write.lock"
    with file_lock(
        path,
        timeout,
        f"another vouch writer held {path} for {timeout:g}s",
        "wait for it to finish, or raise lock.timeout_seconds in config.yaml",
    ):
        yield
