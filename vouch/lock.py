"""One writer at a time per clone: an advisory file lock with a timeout."""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from vouch.errors import LockTimeout


@contextmanager
def write_lock(vouch_dir: Path, timeout: float = 30.0) -> Iterator[None]:
    """Hold `.vouch/locks/write.lock` exclusively; the OS releases it if we die."""
    lock_dir = vouch_dir / "locks"
    lock_dir.mkdir(exist_ok=True)
    fd = os.open(lock_dir / "write.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + timeout
        delay = 0.005
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise LockTimeout(
                        f"another vouch writer held {lock_dir / 'write.lock'} for {timeout:g}s",
                        hint="wait for it to finish, or raise lock.timeout_seconds in config.yaml",
                    ) from None
                time.sleep(delay)
                delay = min(delay * 2, 0.1)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
