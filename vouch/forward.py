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
or dies before it answers, the command runs here as it always has: a read run twice
changes nothing but the search log, and no answer is ever half printed (it comes whole
or not at all).

The socket is `.vouch/locks/warm.sock`, a file of this user's with mode 0600, in the
gitignored local-state folder; the client connects only to a socket its own user owns,
and the process answers only its own user (SO_PEERCRED). This module imports only the
standard library: it runs before the CLI is imported.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import socket

FORWARDED = frozenset({"search", "context"})
SOCKET_NAME = "warm.sock"
LOCK_NAME = "warm.lock"
LOG_NAME = "warm.log"
GREETING_SECONDS = 0.5  # a process busy longer than this with another command: run here
ASK_SECONDS = 1.0  # `vouch warm status|stop` wait this long for an answer
OFF = "VOUCH_NO_WARM"  # set (non-empty) to never forward

# what vouch, git and the interpreter's output read from the environment
_PREFIXES = ("VOUCH_", "GIT_", "LC_", "PYTHON")
_NAMES = frozenset({"HOME", "XDG_CONFIG_HOME", "PATH", "LANG", "TZ", "NO_COLOR", "COLUMNS"})
_VALUED = frozenset({"--kb", "--as", "--format"})  # the group's options that take a value


def locks_dir(vouch_dir: Path) -> Path:
    return vouch_dir / "locks"


def environment() -> dict[str, str]:
    """The variables an answer may depend on; a process serves only an equal set."""
    return {
        k: v
        for k, v in os.environ.items()
        if (k in _NAMES or k.startswith(_PREFIXES)) and k not in (OFF, "OPENBLAS_NUM_THREADS")
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
    terminal."""
    return command in FORWARDED and not any(a in ("-", "-h", "--help") for a in argv)


def forwardable(command: str | None, argv: list[str]) -> bool:
    return runs_warm(command, argv) and not os.environ.get(OFF) and hasattr(os, "getuid")


def connect(vouch_dir: Path, timeout: float) -> socket.socket | None:
    """A connection to the knowledge base's warm process, or None (absent, stale, not
    ours)."""
    directory = locks_dir(vouch_dir)
    try:
        folder = os.lstat(directory)
        found = os.lstat(directory / SOCKET_NAME)
    except OSError:
        return None
    uid = os.getuid()
    if not stat.S_ISDIR(folder.st_mode) or folder.st_uid != uid:
        return None  # a link, or someone else's folder
    if not stat.S_ISSOCK(found.st_mode) or found.st_uid != uid:
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
    sock: socket.socket, message: dict[str, Any], *, same_vouch: bool = True
) -> tuple[dict[str, Any], bytes]:
    """Send one request line after the process's greeting; its answer's header and body.
    `same_vouch`: only to a process of this very vouch (`fingerprint`). Raises OSError
    or ValueError when the exchange breaks off."""
    stream = sock.makefile("rb")
    try:
        greeting = json.loads(stream.readline() or b"null")
        if not isinstance(greeting, dict) or "vouch" not in greeting:
            raise ValueError("no warm process answers there")
        if same_vouch and greeting["vouch"] != fingerprint():
            raise ValueError("another vouch answers there")
        sock.settimeout(None)  # greeted: the command runs as long as it would here
        sock.sendall(json.dumps(message).encode("utf-8") + b"\n")
        header = json.loads(stream.readline() or b"null")
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


def ask(vouch_dir: Path, op: str, timeout: float = ASK_SECONDS) -> dict[str, Any] | None:
    """The warm process's answer to `status` or `stop`, whichever vouch it runs; None
    when there is none (no socket, or a dead process's), `SILENT` when one took the
    connection but said nothing within `timeout` (busy with a long command, stopped)."""
    sock = connect(vouch_dir, timeout)
    if sock is None:
        return None
    try:
        header, _ = request(sock, {"op": op}, same_vouch=False)
    except (OSError, ValueError):
        return dict(SILENT)
    finally:
        sock.close()
    return header


def forward(argv: list[str], vouch_dir: Path) -> int | None:
    """Run `argv` in the warm process and print its output: the exit status, or None
    when this process must run the command itself."""
    sock = connect(vouch_dir, GREETING_SECONDS)
    if sock is None:
        return None
    try:
        out = sys.stdout
        header, body = request(
            sock,
            {
                "op": "run",
                "argv": argv,
                "cwd": os.getcwd(),
                "env": environment(),
                "encoding": getattr(out, "encoding", None) or "utf-8",
                "errors": getattr(out, "errors", None) or "strict",
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


def _write(stream: Any, data: bytes) -> None:
    if data:
        stream.flush()
        stream.buffer.write(data)
        stream.buffer.flush()
