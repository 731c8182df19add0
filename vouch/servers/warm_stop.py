"""`vouch warm stop`: ask the warm process to go, and end it when it cannot answer.

A warm process that is stopped (SIGSTOP, Ctrl-Z in the terminal running `vouch warm
serve`) or hung still takes connections — the kernel queues them — and says nothing.
Asked to stop, it is then ended for real, in steps, each with a bounded wait:

1. SIGCONT, then the `stop` request again: a stopped process resumes, finishes what it
   was doing and goes away as asked (its socket and lock released by itself);
2. SIGTERM, when it still does not answer (hung, or a command running past the wait);
3. SIGKILL, when it outlives SIGTERM.

A signal goes only to the process proven to be this knowledge base's warm process: the
one listening on the socket (the kernel's peer credentials, SO_PEERCRED), of this user,
holding `warm.lock`, and named by the pid file it wrote under that lock (`warm.pid`) —
all in the clone's own 0700 folder inside the git directory. Anything else that holds
the socket is never signalled: it is reported (`Conflict`), with the command that ends it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import struct
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vouch import forward
from vouch.core import processes
from vouch.errors import Conflict

if TYPE_CHECKING:
    from vouch.store.kb import KB

WAIT_SECONDS = 2.0  # each step's wait: an answer after SIGCONT, an exit after a signal
GONE_SECONDS = 10.0  # a process that answered `stop`: its socket gone within this
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


@dataclass(frozen=True)
class Stopped:
    """How the warm process `pid` went: "asked" (it answered the request), "resumed"
    (it was stopped: SIGCONT, then it answered), "terminated" (SIGTERM) or "killed"
    (SIGKILL)."""

    pid: int
    how: str


def stop(directory: Path) -> Stopped | None:
    """Stop the warm process whose folder is `directory`; None when none runs. Conflict
    when something holds the socket, does not answer, and is not provably the warm
    process (nothing is signalled then)."""
    found = forward.ask(directory, "stop")
    if found is None:
        return None
    if found != forward.SILENT and _socket_gone(directory, GONE_SECONDS):
        return Stopped(int(found.get("stopping") or 0), "asked")
    return _end(directory)


def _end(directory: Path) -> Stopped:
    pid = warm_pid(directory)
    if pid is None:
        where = directory / forward.SOCKET_NAME
        raise Conflict(
            f"a process holds {where} but did not answer within {forward.ASK_SECONDS:g} s, "
            "and it is not provably this knowledge base's warm process, so it was not "
            "signalled",
            hint=f"`fuser -k '{where}'` ends whatever holds it; then `vouch warm start`",
        )
    was_stopped = processes.state(pid) in ("T", "t")
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGCONT)
    answered = forward.ask(directory, "stop", timeout=WAIT_SECONDS)
    went = answered not in (None, forward.SILENT) and _socket_gone(directory, GONE_SECONDS)
    if went and _exited(pid, WAIT_SECONDS):
        return Stopped(pid, "resumed" if was_stopped else "asked")
    for sig, how in ((signal.SIGTERM, "terminated"), (signal.SIGKILL, "killed")):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return Stopped(pid, how)
        if _exited(pid, WAIT_SECONDS):
            return Stopped(pid, how)
    raise Conflict(
        f"the warm process {pid} did not exit after SIGKILL within {WAIT_SECONDS:g} s",
        hint=f"look at it with `ps -o pid,stat,cmd -p {pid}` (state D: waiting on a disk)",
    )


def warm_pid(directory: Path) -> int | None:
    """The pid of the warm process listening in `directory`, when proven (see the
    module docstring); None otherwise."""
    listener = _listener(directory)
    if listener is None or listener != _pid_file(directory) or not _lock_held(directory):
        return None
    return listener


def _listener(directory: Path) -> int | None:
    """The pid of the process that listens on the socket, when it is this user's (the
    kernel's record of it; None where there is none, e.g. no SO_PEERCRED)."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return None
    sock = forward.connect(directory, forward.ASK_SECONDS)
    if sock is None:
        return None
    with sock:
        size = struct.calcsize("3i")
        pid, uid, _ = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, option, size))
    return pid if uid == os.getuid() and pid > 0 else None


def _pid_file(directory: Path) -> int | None:
    try:
        fd = os.open(directory / forward.PID_NAME, os.O_RDONLY | _NOFOLLOW)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        text = fh.read(32).decode("ascii", "replace").strip()
    return int(text) if text.isdigit() else None


def _lock_held(directory: Path) -> bool:
    """Whether a live process holds `warm.lock` (taken and released at once when not);
    False when it cannot be told."""
    from vouch.autostart import served

    try:
        return served(directory)
    except OSError:
        return False


def _exited(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while processes.alive(pid):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)
    return True


def _socket_gone(directory: Path, seconds: float) -> bool:
    """A process that answered `stop` removes its socket on the way out."""
    deadline = time.monotonic() + seconds
    while os.path.lexists(directory / forward.SOCKET_NAME):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)
    return True


def after_forgetting(kb: KB, results: list[dict[str, Any]]) -> Stopped | None:
    """Approvals that redacted or deleted (`results`, what kb.approve returned) end the
    knowledge base's warm process, if one runs: its memory held the words (it starts
    again, from the rebuilt index, on the next search). Never an error: a process that
    cannot be stopped rebuilds its index at its next search anyway."""
    from vouch.methods.gate import FORGETTING

    if not any(r.get("change") in FORGETTING for r in results):
        return None
    try:
        return stop(forward.warm_dir(kb.state_dir, kb.dir))
    except (Conflict, OSError):
        return None
