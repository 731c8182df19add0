"""A cold `vouch search` or `vouch context` handed to the knowledge base's warm process.

A new process pays for its interpreter, click, the CLI, numpy and the model before it
searches (~0.25-0.4 s here; the search itself is ~10 ms). `vouch warm start` leaves a
process per knowledge base that has paid once (`vouch.servers.warm`); the console
script, before it imports anything heavy, asks it to run the command line instead and
prints what it answers, byte for byte what the command would have printed itself.

Only reads are forwarded, and only when nothing could make the answer differ from the
one this process would give: the same vouch (version, install, interpreter) and the
same environment in every variable vouch or git reads (`environment`); no stdin
(`-`) and no `--help` (which reads the terminal's width). Otherwise, and whenever the
process is absent, stale (killed: its socket refuses), busy past `GREETING_SECONDS`,
silent for `SILENCE_SECONDS` after it took the command (stopped, hung: while a command
runs it sends a heartbeat every `HEARTBEAT_SECONDS`), or dies before it answers, the
command runs here as it always has: a read run twice changes nothing but the search
log, and no answer is ever half printed (it comes whole or not at all).

The socket, the process's lock and its log are in `warm-<key>/` (`place_of`) in the
clone's local-state folder inside the git directory (`KB.state_dir`,
`<common git dir>/vouch/`), where no commit, merge or checkout can put a file (DESIGN
§4.1); the key names the knowledge base, so a repository may hold several. Both
folders are real folders of this user's (never followed through a link), the socket a
socket of this user's with mode 0600; the process answers only its own user
(SO_PEERCRED) and only for its own knowledge base. This module imports only the
standard library and runs no git: it runs before the CLI is imported.
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import socket

FORWARDED = frozenset({"search", "context"})
STATE_NAME = "vouch"  # `KB.state_dir`: this folder in the common git directory
SOCKET_NAME = "warm.sock"
LOCK_NAME = "warm.lock"
LOG_NAME = "warm.log"
PID_NAME = "warm.pid"  # the process holding the lock (`vouch warm stop` proves it)
GREETING_SECONDS = 0.5  # a process busy longer than this with another command: run here
ASK_SECONDS = 1.0  # `vouch warm status|stop` wait this long for an answer
HEARTBEAT_SECONDS = 0.5  # while a command runs, the process sends a blank line this often
SILENCE_SECONDS = 3.0  # a client that hears nothing this long runs the command itself
OFF = "VOUCH_NO_WARM"  # set (non-empty) to never forward
AUTO_OFF = "VOUCH_NO_AUTO_WARM"  # set: a cold search never starts one (`vouch.autostart`)
AUTO_IDLE = "VOUCH_WARM_IDLE_SECONDS"  # the idle time of one a search started
# whether and how long a process runs, never what it answers: not compared
_NOT_COMPARED = frozenset({OFF, AUTO_OFF, AUTO_IDLE, "OPENBLAS_NUM_THREADS"})

# what vouch, git and the interpreter's output read from the environment
_PREFIXES = ("VOUCH_", "GIT_", "LC_", "PYTHON")
_NAMES = frozenset({"HOME", "XDG_CONFIG_HOME", "PATH", "LANG", "TZ", "NO_COLOR", "COLUMNS"})
_VALUED = frozenset({"--kb", "--as", "--format"})  # the group's options that take a value
_ACROSS = re.compile(r"--(all|kbs)(=|$)")  # a search across knowledge bases


def own_command(*args: str) -> list[str]:
    """This vouch run again as a new process: this interpreter with `-P -m vouch`. `-P`
    (Python 3.11+) keeps the working directory off the module path: a process started
    in a work tree must never import a `vouch/`, `click.py` or `numpy.py` a repository
    commits there (THREAT-MODEL, the warm process)."""
    return [sys.executable, "-P", "-m", "vouch", *args]


def warm_dir(state_dir: Path, vouch_dir: Path) -> Path:
    """The warm process's folder for the knowledge base `vouch_dir` (a resolved path)
    in the clone's local-state folder `state_dir`."""
    import zlib

    key = zlib.crc32(os.fsencode(vouch_dir))
    return state_dir / f"warm-{key:08x}"


def place_of(vouch_dir: Path) -> Path | None:
    """`warm_dir` for a knowledge base at the top of a work tree, found without running
    git: `.git` beside it is the git directory, or a file naming it (`gitdir: PATH`, a
    linked work tree or a submodule), whose `commondir` names the common one. None
    when git would be pointed elsewhere (GIT_DIR, GIT_COMMON_DIR) or `.git` cannot be
    read: the command then runs here."""
    if os.environ.get("GIT_DIR") or os.environ.get("GIT_COMMON_DIR"):
        return None
    dot_git = vouch_dir.parent / ".git"
    try:
        if stat.S_ISDIR(os.stat(dot_git).st_mode):
            git_dir = dot_git
        else:
            with open(dot_git, "rb") as fh:
                text = fh.read(4096).decode("utf-8").strip()
            if not text.startswith("gitdir:"):
                return None
            git_dir = dot_git.parent / text[len("gitdir:") :].strip()
        try:
            with open(git_dir / "commondir", "rb") as fh:
                common = git_dir / fh.read(4096).decode("utf-8").strip()
        except FileNotFoundError:
            common = git_dir
    except (OSError, UnicodeDecodeError):
        return None
    return warm_dir(common / STATE_NAME, vouch_dir)


def _own_folder(path: Path) -> bool:
    """A real folder (not a link) of this user's."""
    try:
        found = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(found.st_mode) and found.st_uid == os.getuid()


def environment() -> dict[str, str]:
    """The variables an answer may depend on; a process serves only an equal set."""
    return {
        k: v
        for k, v in os.environ.items()
        if (k in _NAMES or k.startswith(_PREFIXES)) and k not in _NOT_COMPARED
    }


def fingerprint() -> str:
    """This vouch: its version, where it is installed, and the Python (environment and
    interpreter) running it."""
    from vouch import __version__

    here = Path(__file__).resolve().parent
    return f"{__version__} {here} {sys.prefix} {sys.version}"


def command_of(argv: list[str]) -> str | None:
    """The command `argv` names: its first word that is not a group option."""
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg in _VALUED:
            skip = True
        elif not arg.startswith("-"):
            return arg
    return None


def runs_warm(command: str | None, argv: list[str]) -> bool:
    """What a warm process runs: a search or a context pack, reading no stdin and no
    terminal, of its own knowledge base (one across the registered ones, `--all` or
    `--kbs`, runs in its own process and starts none: `vouch.search.bases`)."""
    return (
        command in FORWARDED
        and not across(argv)
        and not any(a in ("-", "-h", "--help") for a in argv)
    )


def across(argv: list[str]) -> bool:
    """Whether `argv` searches the registered knowledge bases (`--all`, `--kbs`)."""
    return any(_ACROSS.match(a) for a in argv)


def forwardable(command: str | None, argv: list[str]) -> bool:
    return runs_warm(command, argv) and not os.environ.get(OFF) and hasattr(os, "getuid")


def connect(directory: Path, timeout: float) -> socket.socket | None:
    """A connection to the warm process whose folder is `directory` (`warm_dir`), or
    None (absent, stale, not ours)."""
    if not (_own_folder(directory.parent) and _own_folder(directory)):
        return None  # missing, a link, or someone else's folder
    try:
        found = os.lstat(directory / SOCKET_NAME)
    except OSError:
        return None
    if not stat.S_ISSOCK(found.st_mode) or found.st_uid != os.getuid():
        return None
    import socket  # only now: ~4 ms a cold command without a warm process would pay

    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        with inside(directory):
            sock.connect(SOCKET_NAME)
    except OSError:  # refused (a dead process's socket), or the working directory is gone
        sock.close()
        return None
    return sock


@contextmanager
def inside(directory: Path) -> Iterator[None]:
    """In `directory` for a moment, then back where this process was: a socket is named
    relative to its folder (a socket's path may not exceed ~100 bytes, a work tree's
    can)."""
    here = os.open(".", os.O_RDONLY)
    try:
        os.chdir(directory)
        yield
    finally:
        os.fchdir(here)
        os.close(here)


def request(
    sock: socket.socket,
    message: dict[str, Any],
    *,
    same_vouch: bool = True,
    silence: float = SILENCE_SECONDS,
) -> tuple[dict[str, Any], bytes]:
    """Send one request line after the process's greeting; its answer's header and body.
    `same_vouch`: only to a process of this very vouch (`fingerprint`). Raises OSError
    (TimeoutError: nothing heard for `silence` seconds, heartbeats included) or
    ValueError when the exchange breaks off."""
    stream = sock.makefile("rb")
    try:
        greeting = json.loads(stream.readline() or b"null")
        if not isinstance(greeting, dict) or "vouch" not in greeting:
            raise ValueError("no warm process answers there")
        if same_vouch and greeting["vouch"] != fingerprint():
            raise ValueError("another vouch answers there")
        # greeted: the command runs as long as it would here, while the process's
        # heartbeats say it is at work; silence this long is a process stopped or hung
        sock.settimeout(silence)
        sock.sendall(json.dumps(message).encode("utf-8") + b"\n")
        line = stream.readline()
        while line == b"\n":  # a heartbeat: the command is still running
            line = stream.readline()
        header = json.loads(line or b"null")
        if not isinstance(header, dict):
            raise ValueError("no answer")
        size = int(header.get("size", 0))
        body = stream.read(size) if size else b""
        if len(body) != size:
            raise ValueError("the answer broke off")
        return header, body
    finally:
        stream.close()


SILENT = {"status": "silent"}  # `ask`: a process holds the socket but did not answer


def ask(directory: Path, op: str, timeout: float = ASK_SECONDS) -> dict[str, Any] | None:
    """The answer to `status` or `stop` of the warm process whose folder is `directory`,
    whichever vouch it runs; None when there is none (no socket, or a dead process's),
    `SILENT` when one took the connection but said nothing within `timeout` (busy with a
    long command, stopped)."""
    sock = connect(directory, timeout)
    if sock is None:
        return None
    try:
        header, _ = request(sock, {"op": op}, same_vouch=False, silence=timeout)
    except (OSError, ValueError):
        return dict(SILENT)
    finally:
        sock.close()
    return header


def forward(argv: list[str], vouch_dir: Path) -> int | None:
    """Run `argv` in the knowledge base's warm process and print its output: the exit
    status, or None when this process must run the command itself."""
    directory = place_of(vouch_dir)
    sock = None if directory is None else connect(directory, GREETING_SECONDS)
    if sock is None:
        return None
    try:
        out = sys.stdout
        header, body = request(
            sock,
            {
                "op": "run",
                "kb": str(vouch_dir),
                "argv": argv,
                "cwd": os.getcwd(),
                "env": environment(),
                "encoding": getattr(out, "encoding", None) or "utf-8",
                "errors": getattr(out, "errors", None) or "strict",
                # the command prints for a person or as JSON by the client's stdout
                "terminal": {"stdout": _on_terminal(out), "stderr": _on_terminal(sys.stderr)},
            },
        )
    except (OSError, ValueError):
        return None
    except KeyboardInterrupt:  # as the command itself answers Ctrl-C (the process
        sys.stderr.write("interrupted\n")  # finishes its read; nothing is written)
        return 1
    finally:
        sock.close()
    if header.get("status") != "ok":
        return None  # refused: another environment, its code changed; nothing ran
    split = int(header["stdout"])
    try:
        _write(sys.stdout, body[:split])
        _write(sys.stderr, body[split:])
    except BrokenPipeError:  # a closed pipe (`| head`): as the command itself does
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    return int(header["code"])


def _on_terminal(stream: Any) -> bool:
    try:
        return stream is not None and bool(stream.isatty())
    except (ValueError, OSError):
        return False


def _write(stream: Any, data: bytes) -> None:
    if data:
        stream.flush()
        stream.buffer.write(data)
        stream.buffer.flush()
