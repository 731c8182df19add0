"""The warm process started by a cold search, for the searches after it.

A cold `vouch search` or `vouch context` pays ~0.3 s (numpy and the model alone ~0.15
s) where the knowledge base's warm process answers in ~60 ms (`vouch.forward`). So once
such a command has answered here (its output flushed, exit status 0), when no warm
process serves the knowledge base, it starts one in the background (`after`): `vouch
warm serve --auto-started` in a session of its own, stdin from /dev/null, its output to
`warm.log`, never waited for; the command exits at once. The next search in a row is
answered by it. It goes away after `IDLE_SECONDS` without a request (`IDLE`
overrides), like any warm process on `vouch warm stop` or when vouch's code changes.

Never started (the command runs as it always has, and nothing is written):
- `forward.OFF` (VOUCH_NO_WARM) or `OFF` (VOUCH_NO_AUTO_WARM) set: the person's choice.
  Only the environment decides: a committed `.vouch/config.yaml` is the repository's,
  and a repository may neither start a process on a user's machine that outlives the
  command, nor is its word needed to keep one away;
- in CI (`CI_VARIABLES`): a runner's next command is rarely a search, and a process
  left behind keeps a job's container or step from finishing; nor inside a pytest test
  (`PYTEST_CURRENT_TEST`): a test's process would outlive the test and its folder;
- under git (a hook, an alias: git sets `GIT_EXEC_PATH`, a commit's hooks
  `GIT_INDEX_FILE`) or the pre-commit framework (`PRE_COMMIT`), or with git pointed
  elsewhere (`GIT_DIR`, `GIT_COMMON_DIR`): a hook's environment is not the person's,
  so the process would serve no one after it;
- for a knowledge base not found the plain way (`vouch.launch`), where nothing is
  forwarded; after a command that failed;
- while a warm process holds the knowledge base's lock (running, or warming up);
- within `BACKOFF_SECONDS` of the last attempt that did not end cleanly (`STAMP_NAME`
  in the warm folder: written before each start, removed by a process that ends by
  itself or on request; one that could not start — no right to bind a socket, to
  fork — or was killed leaves it), or of a `vouch warm stop` (which writes it);
- when the warm folder cannot be made or written (a read-only clone or git directory):
  a failed mkdir costs microseconds, and no process is started.

A sandboxed agent therefore sees the cold command's output and nothing else: any
failure to start is silent here (the process's own error goes to `warm.log`) and is not
tried again for an hour. This module imports only the standard library.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import subprocess
from typing import Any

from vouch import forward

OFF = forward.AUTO_OFF  # VOUCH_NO_AUTO_WARM set (non-empty): never start one by itself
IDLE = forward.AUTO_IDLE  # VOUCH_WARM_IDLE_SECONDS: how long one started so stays idle
# Ten minutes: an agent's or a person's searches within one task come seconds to a few
# minutes apart, and the process holds the index and the model (~70 MB resident at 10k
# claims, ~400 MB at 100k) for no one after that. `vouch warm start` (30 minutes) keeps
# one longer.
IDLE_SECONDS = 600
MAX_IDLE_SECONDS = 86_400
BACKOFF_SECONDS = 3600  # an attempt that did not end cleanly: none again for this long
STAMP_NAME = "warm.autostart"
LOG_BYTES = 1 << 20  # `warm.log` longer than this is emptied before a start
# set by CI services (most set CI; these set only their own)
CI_VARIABLES = (
    "CI",
    "CONTINUOUS_INTEGRATION",
    "GITHUB_ACTIONS",
    "GITLAB_CI",
    "BUILDKITE",
    "CIRCLECI",
    "TRAVIS",
    "JENKINS_URL",
    "TF_BUILD",
    "CODEBUILD_BUILD_ID",
    "TEAMCITY_VERSION",
    "BITBUCKET_BUILD_NUMBER",
    "PYTEST_CURRENT_TEST",  # not CI, but as transient: a test run (pytest sets it)
)
# set by git for a hook or an alias it runs, or pointing git elsewhere; and the
# pre-commit framework's mark on the hooks it runs (inside git or by `pre-commit run`)
HOOK_VARIABLES = (
    "GIT_EXEC_PATH",
    "GIT_INDEX_FILE",
    "GIT_DIR",
    "GIT_COMMON_DIR",
    "GIT_WORK_TREE",
    "PRE_COMMIT",
)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def refusal(env: dict[str, str] | os._Environ[str] | None = None) -> str | None:
    """Why the environment rules out an automatic start (the variable that does), or
    None."""
    env = os.environ if env is None else env
    for name in (forward.OFF, OFF, *CI_VARIABLES, *HOOK_VARIABLES):
        if env.get(name):
            return f"{name} is set"
    if not hasattr(os, "getuid"):
        return "no unix sockets here"
    return None


def idle_seconds() -> int:
    """`IDLE` when it is a whole number of seconds from 1 to a day, else `IDLE_SECONDS`."""
    raw = os.environ.get(IDLE, "").strip()
    if raw.isdigit() and 1 <= int(raw) <= MAX_IDLE_SECONDS:
        return int(raw)
    return IDLE_SECONDS


def after(argv: list[str], vouch_dir: Path, code: int) -> bool:
    """Once the cold command `argv` answered with `code` here: start the knowledge
    base's warm process when nothing rules it out (module docstring). Whether one was
    started; never raises, never prints."""
    try:
        sys.stdout.flush()  # the answer is out before anything else is done
        sys.stderr.flush()
    except (OSError, ValueError):
        return False
    if code != 0 or not forward.runs_warm(forward.command_of(argv), argv) or refusal():
        return False
    directory = forward.place_of(vouch_dir)
    if directory is None:
        return False
    try:
        if served(directory) or not _own_place(directory) or not _stamp(directory, "start"):
            return False
        return _spawn(vouch_dir, directory)
    except (OSError, ValueError):
        return False


def served(directory: Path) -> bool:
    """Whether a process holds the warm lock in `directory` (serving, or warming up).
    OSError when the lock file exists but cannot be opened."""
    import fcntl  # not on Windows, where nothing is forwarded (`refusal`)

    try:
        fd = os.open(directory / forward.LOCK_NAME, os.O_RDWR | _NOFOLLOW)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def _own_place(directory: Path) -> bool:
    """The warm folder and its parent made when missing (mode 0700), and both real
    folders of this user's."""
    for folder in (directory.parent, directory):
        with contextlib.suppress(FileExistsError):
            os.mkdir(folder, 0o700)
        found = os.lstat(folder)
        if not stat.S_ISDIR(found.st_mode) or found.st_uid != os.getuid():
            return False
    return True


def pending(directory: Path) -> dict[str, Any] | None:
    """The stamp in `directory` while it holds automatic starts off: `why` ("start": an
    attempt that did not end cleanly, "stop": `vouch warm stop`) and `until` (epoch
    seconds); None when there is none, or it is older than `BACKOFF_SECONDS`."""
    path = directory / STAMP_NAME
    try:
        found = os.lstat(path)
    except OSError:
        return None
    if abs(time.time() - found.st_mtime) >= BACKOFF_SECONDS:
        return None
    why = "start"
    with contextlib.suppress(OSError, ValueError):
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as fh:
            data = json.loads(fh.read(256) or b"{}")
        if isinstance(data, dict) and data.get("why") in ("start", "stop"):
            why = data["why"]
    return {"why": why, "until": found.st_mtime + BACKOFF_SECONDS}


def _stamp(directory: Path, why: str) -> bool:
    """Write the stamp (`why`: "start" or "stop") unless a fresh one holds starts off;
    whether it was written. Of two commands at once, one writes it (O_EXCL)."""
    path = directory / STAMP_NAME
    if pending(directory) is not None:
        return False
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)  # an old one (or not a file: never followed, never kept)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600)
    except FileExistsError:
        return False
    with os.fdopen(fd, "wb") as fh:
        fh.write(json.dumps({"why": why, "pid": os.getpid()}).encode() + b"\n")
    return True


def hold_off(directory: Path) -> float | None:
    """After `vouch warm stop`: no automatic start for `BACKOFF_SECONDS`; until when
    (epoch seconds), or None when the folder cannot be written (nor can a search start
    one there)."""
    try:
        if not _own_place(directory):
            return None
        with contextlib.suppress(FileNotFoundError):
            os.unlink(directory / STAMP_NAME)
        _stamp(directory, "stop")
    except OSError:
        return None
    held = pending(directory)
    return None if held is None else float(held["until"])


def ended(directory: Path) -> None:
    """A warm process that ends by itself or on request: the next search may start one."""
    with contextlib.suppress(OSError):
        os.unlink(directory / STAMP_NAME)


def _spawn(vouch_dir: Path, directory: Path) -> bool:
    """`vouch warm serve --auto-started` in the background (`spawn`); not waited for (it
    outlives this process, whose exit hands it to init)."""
    import subprocess  # loaded already by the command's git calls

    try:
        child = spawn(vouch_dir, directory, idle_seconds(), auto=True)
    except subprocess.SubprocessError:
        return False  # no fork here: the stamp holds the next attempt off
    child.returncode = 0  # never waited for: no "still running" warning at exit
    return True


def spawn(vouch_dir: Path, directory: Path, idle: float, *, auto: bool) -> subprocess.Popen[bytes]:
    """`vouch warm serve` for the knowledge base `vouch_dir` in the background, in a
    session of its own (not stopped with the terminal that started it), writing to
    `warm.log` in `directory` (never through a link; begun again past `LOG_BYTES`), as
    `vouch warm start` and a search (`after`) start it. OSError when the log cannot be
    opened or no process started."""
    import subprocess

    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | _NOFOLLOW
    log = os.open(directory / forward.LOG_NAME, flags, 0o600)
    try:
        if os.fstat(log).st_size > LOG_BYTES:  # a few lines a start: begun again, rarely
            os.ftruncate(log, 0)
        serve = ["warm", "serve", "--kb", str(vouch_dir), "--idle-seconds", f"{idle:g}"]
        return subprocess.Popen(
            forward.own_command(*serve, *(["--auto-started"] if auto else [])),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            cwd=vouch_dir.parent,
            start_new_session=True,
        )
    finally:
        os.close(log)
