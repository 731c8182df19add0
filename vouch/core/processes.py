"""Whether a process still runs: the one question the lock owners and `warm stop` ask."""

from __future__ import annotations

import os


def state(pid: int) -> str | None:
    """The process's state letter from /proc (R, S, T, Z, …), None when unreadable."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[0].decode()
    except (OSError, IndexError):
        return None


def alive(pid: int) -> bool:
    """Whether process `pid` exists and is not a zombie (which holds no lock and answers
    nothing: it exited, and only its exit status waits to be collected)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return state(pid) != "Z"
