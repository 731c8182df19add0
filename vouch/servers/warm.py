"""The warm process: one per knowledge base, running forwarded command lines.

`vouch warm start` leaves it running; a cold `vouch search` or `vouch context` hands it
its command line (`vouch.forward`) and prints the answer. It has imported the CLI,
numpy and the model, holds the index open, and keeps an inotify watch on `.vouch/`
(`vouch.servers.watch`), so a search costs what a warm one does plus the client's
start: git's stat of every tracked file is skipped while no file changed, HEAD and
git's index stayed put — the answer is the one a cold command would give, however soon
after an edit it comes.

It runs the same `vouch.cli.main` a cold command runs, in the client's working
directory, with stdout and stderr captured in the client's encoding; nothing it does
differs but where the time goes. One request at a time (the working directory is the
process's). It serves its own user only (the socket's mode 0600 and SO_PEERCRED), a
client only with the same vouch and the same environment (`forward.environment`), and
goes away after `idle_seconds` without a request, on `vouch warm stop` (which ends it
with signals when it cannot answer: `vouch.servers.warm_stop`), or when vouch's
code on disk changed under it (it answers that request "refused" first, so the client
runs the command itself). While a command runs it sends the client a heartbeat (a
blank line) every `forward.HEARTBEAT_SECONDS`: a client that hears nothing for
`forward.SILENCE_SECONDS` (a process stopped or hung) runs the command itself, and a
long command is never cut off. One process per knowledge base: it holds `warm.lock`
in its folder (`forward.warm_dir`, in the clone's local state inside the git
directory, where no commit can put a file) for its lifetime; a killed process leaves a
socket that refuses connections, which the next one replaces.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import select
import socket
import stat
import struct
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from vouch import autostart, forward
from vouch.core import fsio
from vouch.errors import Conflict, PermissionDenied, SystemFailure, UsageError, VouchError
from vouch.search.access import WATCH
from vouch.servers.watch import Watch
from vouch.store.kb import KB

log = logging.getLogger("vouch.warm")

REQUEST_BYTES = 1 << 20  # longest request line read
REQUEST_SECONDS = 5.0  # a client that connected must send its request within this
LOCK_SECONDS = 5.0
SETTLE_SECONDS = 0.3  # changes quiet this long: check before the next search asks
READY_SECONDS = 3600.0  # a first start builds the index of a fresh clone (~45 s at 100k)


def serve(kb: KB, idle_seconds: float, auto: bool = False) -> None:
    """Warm up, then answer requests until stopped, idle or out of date. `auto`: started
    by a cold search (`vouch.autostart`), as `status` says."""
    from vouch.core.lock import file_lock

    directory = check_place(kb)
    with file_lock(  # a process just stopped may hold it a moment longer
        directory / forward.LOCK_NAME,
        LOCK_SECONDS,
        f"a warm process already serves {kb.dir}",
        "`vouch warm status` shows it, `vouch warm stop` stops it",
    ):
        pid_file = directory / forward.PID_NAME
        fsio.write_atomic(pid_file, f"{os.getpid()}\n")  # under the lock: it is ours
        try:
            # bound before the warm-up (where no socket may be bound, that fails at
            # once, not after seconds of loading), listening after it: until then a
            # client's connection is refused, and it runs the command itself
            listener, identity = _bind(directory)
            try:
                started = time.monotonic()
                process = _Process(kb, idle_seconds, auto)
                took = time.monotonic() - started
                log.info("warmed up in %.2f s (file watch: %s)", took, process.watch.kind)
                if auto:
                    log.info("started by a search; exits after %g s without one", idle_seconds)
                listener.listen(64)
                process.loop(listener, idle_seconds)
                autostart.ended(directory)  # ended cleanly: a search may start one again
            finally:
                listener.close()
                _remove_socket(directory, identity)
        finally:
            pid_file.unlink(missing_ok=True)


class _Process:
    def __init__(self, kb: KB, idle_seconds: float = 0, auto: bool = False):
        from vouch.cli import main  # everything a forwarded command needs, loaded now
        from vouch.cli.options import share_warm

        self.kb = kb
        self.idle_seconds = idle_seconds
        self.auto = auto
        self.main = main
        self.env = forward.environment()
        self.fingerprint = forward.fingerprint()
        self.code = _code_stamp()
        self.watch = Watch.open(str(kb.dir))
        self.warm: dict[Any, Any] = {WATCH: self.watch}
        share_warm(self.warm)
        self.requests = 0
        self.checks = 0  # made between requests
        self.started = time.time()
        self._warm_up()

    def _warm_up(self) -> None:
        """Build the forwarded commands, open the index, load the model: one search
        that is not logged (so `vouch stats` counts only what people asked)."""
        from vouch.cli import load_command
        from vouch.search import context  # noqa: F401 - `vouch context`'s packing
        from vouch.search.api import request_from_params
        from vouch.search.engine import search

        for name in forward.FORWARDED:
            load_command(name)
        request = request_from_params("warm up", limit=1)._replace(log=False)
        try:
            search(self.kb, request, warm=self.warm)
        except VouchError as exc:  # e.g. a stale index with auto_refresh off: each
            log.warning("warming up: %s", exc)  # search reports it as a cold one would

    def loop(self, listener: socket.socket, idle_seconds: float) -> None:
        """Answer connections one at a time; between them, once `.vouch/` files stopped
        changing for `SETTLE_SECONDS`, run the freshness check (and any refresh) the next
        search would otherwise wait for."""
        listener.settimeout(REQUEST_SECONDS)  # select said a client waits; not forever
        watched: list[Watch] = [self.watch] if isinstance(self.watch, Watch) else []
        fds = [listener.fileno(), *(w.fileno() for w in watched)]
        last_request = time.monotonic()
        settled_at: float | None = None  # when to check, after changes
        while True:
            now = time.monotonic()
            waits = [] if settled_at is None else [settled_at - now]
            if idle_seconds:
                waits.append(last_request + idle_seconds - now)
            timeout = max(0.0, min(waits)) if waits else None
            readable, _, _ = select.select(fds, [], [], timeout)
            if fds[0] in readable:
                answered = self._accept(listener)
                if answered == "stop":
                    return
                if answered == "ran":  # only a command run keeps it: never `warm status`
                    last_request = time.monotonic()
            elif readable:
                if watched[0].absorb():
                    settled_at = time.monotonic() + SETTLE_SECONDS
            elif settled_at is not None and time.monotonic() >= settled_at:
                settled_at = None
                if not (self.kb.dir / "config.yaml").is_file():
                    log.info("the knowledge base is gone: exiting")
                    return
                self._check()
            elif idle_seconds and time.monotonic() >= last_request + idle_seconds:
                log.info("no request for %g s: exiting", idle_seconds)
                return

    def _accept(self, listener: socket.socket) -> str | None:
        try:
            conn, _ = listener.accept()
        except TimeoutError:
            return None
        with conn:
            if not _same_user(conn):
                log.warning("refused a connection from another user")
                return None
            try:
                return self._answer(conn)
            except (OSError, ValueError) as exc:  # a client gone or garbled: the next
                log.info("a request broke off: %s", exc)
            except Exception:  # a bug here must not end the process's service
                log.exception("a request failed")
        return None

    def _check(self) -> None:
        """The freshness check (and refresh) of the index, ahead of the next search; a
        failure is left for that search to report (it checks again)."""
        from vouch.search.access import open_index

        self.checks += 1
        try:
            open_index(KB.open(None, str(self.kb.dir)), self.warm)
        except Exception as exc:
            log.info("a check between requests failed: %s", exc)

    def _answer(self, conn: socket.socket) -> str | None:
        conn.settimeout(REQUEST_SECONDS)
        conn.sendall(_line({"vouch": self.fingerprint, "pid": os.getpid()}))
        with conn.makefile("rb") as stream:
            line = stream.readline(REQUEST_BYTES + 1)
        if not line:
            return None  # the client went away before asking (it was tired of waiting)
        if len(line) > REQUEST_BYTES or not line.endswith(b"\n"):
            raise ValueError("request line too long or cut short")
        message = json.loads(line)
        if not isinstance(message, dict):
            raise ValueError("request is not a JSON object")
        op = message.get("op")  # the connection keeps its timeout: no send waits forever
        if op == "status":
            conn.sendall(_line({"status": "ok", **self.status()}))
            return None
        if op == "stop":
            conn.sendall(_line({"status": "ok", "stopping": os.getpid()}))
            log.info("stopped by request")
            return "stop"
        if op != "run":
            conn.sendall(_line({"status": "refused", "why": f"unknown op {op!r}"}))
            return None
        if _code_stamp() != self.code:
            conn.sendall(_line({"status": "refused", "why": "vouch's code changed"}))
            log.info("vouch's code changed on disk: exiting")
            return "stop"
        if self._purged_since():  # what it holds in memory may hold the purged words
            conn.sendall(_line({"status": "refused", "why": "history was purged"}))
            log.info("history was purged (vouch forget): exiting")
            return "stop"
        why = self._refusal(message)
        if why is not None:
            conn.sendall(_line({"status": "refused", "why": why}))
            return None
        with _heartbeat(conn):
            ran = self._run(message)
        if ran is None:
            conn.sendall(_line({"status": "refused", "why": "no such working directory"}))
            return None
        code, out, err = ran
        conn.sendall(
            _line({"status": "ok", "code": code, "stdout": len(out), "size": len(out) + len(err)})
            + out
            + err
        )
        return "ran"

    def _purged_since(self) -> bool:
        """Did `vouch forget --purge-history` finish after this process started?"""
        from vouch.forget.plan import PURGED

        try:
            return os.stat(self.kb.state_dir / PURGED).st_mtime >= self.started
        except OSError:
            return False

    def _refusal(self, message: dict[str, Any]) -> str | None:
        argv = message.get("argv")
        if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
            return "argv is not a list of strings"
        if not forward.runs_warm(forward.command_of(argv), argv):
            return "only a search or a context pack is run here"  # never a write
        if message.get("kb") != str(self.kb.dir):
            return "another knowledge base"
        if message.get("env") != self.env:
            return "another environment"
        if not isinstance(message.get("cwd"), str):
            return "no working directory"
        for key in ("encoding", "errors"):
            if not isinstance(message.get(key), str):
                return f"no {key}"
        terminal = message.get("terminal")
        if not isinstance(terminal, dict) or not all(
            isinstance(terminal.get(k), bool) for k in ("stdout", "stderr")
        ):
            return "no terminal state (is stdout a terminal?)"
        try:
            "".encode(message["encoding"], message["errors"])
        except (LookupError, ValueError):
            return "an unknown encoding"
        return None

    def _run(self, message: dict[str, Any]) -> tuple[int, bytes, bytes] | None:
        """`main(argv)` in the client's directory, its output captured; None when that
        directory cannot be entered."""
        try:
            os.chdir(message["cwd"])
        except OSError:
            return None
        self.requests += 1
        out, err = io.BytesIO(), io.BytesIO()
        saved = sys.stdin, sys.stdout, sys.stderr
        sys.stdin = io.StringIO()
        sys.stdout = out_text = _text(out, message, "stdout")
        sys.stderr = err_text = _text(err, message, "stderr")
        try:
            code = self.main(list(message["argv"]))
        finally:
            sys.stdin, sys.stdout, sys.stderr = saved
            out_text.detach()  # flushed (write-through); the buffers stay open
            err_text.detach()
            os.chdir(self.kb.root)
        return code, out.getvalue(), err.getvalue()

    def status(self) -> dict[str, Any]:
        return {
            "pid": os.getpid(),
            "kb": str(self.kb.dir),
            "vouch": self.fingerprint,
            "uptime_seconds": round(time.time() - self.started, 1),
            "requests": self.requests,
            "checks_between_requests": self.checks,
            "watch": self.watch.kind,
            "auto_started": self.auto,
            "idle_seconds": self.idle_seconds,
        }


@contextlib.contextmanager
def _heartbeat(conn: socket.socket) -> Iterator[None]:
    """A blank line to the client every `forward.HEARTBEAT_SECONDS` while the block
    runs (the command), so that it can tell a long command from a process that stopped;
    nothing more is sent once the block is over (the answer follows)."""
    done = threading.Event()

    def beat() -> None:
        while not done.wait(forward.HEARTBEAT_SECONDS):
            try:
                conn.sendall(b"\n")
            except OSError:  # the client went away (it runs the command itself)
                return

    thread = threading.Thread(target=beat, name="vouch-warm-heartbeat", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()


def start(kb: KB, idle_seconds: int) -> dict[str, Any]:
    """`vouch warm serve` in the background, in a session of its own (not stopped with
    the terminal that started it), logging to `warm.log` in its folder; its status once
    it answers."""
    from vouch.autostart import spawn

    directory = check_place(kb)
    try:
        child = spawn(kb.dir, directory, idle_seconds, auto=False)
    except OSError as exc:  # the log (a link, a folder there) or no process to start
        raise Conflict(
            f"cannot start the warm process: {exc.strerror or exc} ({exc.filename or ''})",
            hint=f"remove {directory / forward.LOG_NAME} if it is not a file, then start again",
        ) from exc
    deadline = time.monotonic() + READY_SECONDS
    while time.monotonic() < deadline:
        found = forward.ask(directory, "status")
        if found is not None and found.get("status") == "ok":
            return found
        if child.poll() is not None:
            break
        time.sleep(0.05)
    if child.poll() is None:
        child.kill()
        child.wait()
    found = forward.ask(directory, "status")  # lost a race to another start: that one serves
    if found is not None and found.get("status") == "ok":
        return found
    try:
        lines = (directory / forward.LOG_NAME).read_text(errors="replace").splitlines()
    except OSError:
        lines = []
    last = lines[-1] if lines else f"exit status {child.returncode}"
    raise SystemFailure(
        f"the warm process did not start: {last}", hint=f"see {directory / forward.LOG_NAME}"
    )


def check_place(kb: KB) -> Path:
    """The warm process's folder (`forward.warm_dir`) in the clone's local-state folder
    (`kb.state_dir`), both made if missing and both real folders of this user's (never
    followed through a link), and where a cold command looks (`forward.place_of`)."""
    if not (kb.dir.parent / ".git").exists():  # where `vouch.launch` looks for one
        raise UsageError(
            f"{kb.dir} is not at the top of a git work tree: a cold command would not find "
            "a warm process there",
            hint="run `vouch warm start` in the repository that holds .vouch/",
        )
    directory = forward.warm_dir(kb.state_dir, kb.dir)
    for folder in (directory.parent, directory):
        with contextlib.suppress(FileExistsError):
            folder.mkdir(mode=0o700)
        found = os.lstat(folder)
        if not stat.S_ISDIR(found.st_mode) or found.st_uid != os.getuid():
            raise Conflict(
                f"{folder} is a link, a file or another user's folder: the warm process "
                "keeps its socket there",
                hint="remove it, then start again",
            )
    if stat.S_IMODE(found.st_mode) != 0o700:  # made before, by hand or another umask
        os.chmod(directory, 0o700)
    looked = forward.place_of(kb.dir)
    if looked is None or not os.path.samefile(looked.parent, directory.parent):
        raise UsageError(
            f"a cold command would not look for a warm process in {directory} "
            "(GIT_DIR or GIT_COMMON_DIR set, or an unusual .git)",
            hint="run `vouch warm start` without GIT_DIR/GIT_COMMON_DIR, in the "
            "repository that holds .vouch/",
        )
    return directory


def _bind(directory: Path) -> tuple[socket.socket, tuple[int, int]]:
    """Bind the socket (replacing a dead process's), mode 0600 from the start; not yet
    listening (a connection is refused)."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        with forward.inside(directory):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(forward.SOCKET_NAME)  # ours to replace: we hold the lock
            mask = os.umask(0o177)
            try:
                listener.bind(forward.SOCKET_NAME)
            finally:
                os.umask(mask)
            found = os.stat(forward.SOCKET_NAME)
    except BaseException as exc:
        listener.close()
        path = directory / forward.SOCKET_NAME
        if isinstance(exc, PermissionError):  # a sandbox that allows no unix socket
            raise PermissionDenied(
                f"may not bind the warm process's socket {path}: {exc.strerror}",
                hint=f"searches run in their own process here; {forward.AUTO_OFF}=1 "
                "keeps them from trying to start one",
            ) from exc
        if isinstance(exc, OSError):
            raise Conflict(
                f"cannot bind the warm process's socket {path}: {exc.strerror}",
                hint=f"remove {path} if it is not a socket, then `vouch warm start`",
            ) from exc
        raise
    return listener, (found.st_dev, found.st_ino)


def _remove_socket(directory: Path, identity: tuple[int, int]) -> None:
    path = directory / forward.SOCKET_NAME
    try:
        found = os.lstat(path)
        if (found.st_dev, found.st_ino) == identity:
            path.unlink()
    except FileNotFoundError:
        pass


def _same_user(conn: socket.socket) -> bool:
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:  # no peer credentials here: the socket's mode (0600) decides
        return True
    size = struct.calcsize("3i")
    _, uid, _ = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, option, size))
    return bool(uid == os.getuid())


class _ClientStream(io.TextIOWrapper):
    """The client's stdout or stderr, captured: it answers `isatty()` as the client's
    own stream did, so a forwarded command prints for a person on the client's terminal
    and JSON into the client's pipe (`vouch.cli.options.for_terminal_or_pipe`)."""

    def __init__(self, buffer: io.BytesIO, message: dict[str, Any], terminal: bool):
        super().__init__(
            buffer, encoding=message["encoding"], errors=message["errors"], write_through=True
        )
        self.terminal = terminal

    def isatty(self) -> bool:
        return self.terminal


def _text(buffer: io.BytesIO, message: dict[str, Any], stream: str) -> io.TextIOWrapper:
    return _ClientStream(buffer, message, message["terminal"][stream])


def _line(data: dict[str, Any]) -> bytes:
    return json.dumps(data).encode("utf-8") + b"\n"


def _code_stamp() -> list[tuple[str, int, int]]:
    """vouch's own files as they are on disk (a reinstall or an edit changes them)."""
    root = Path(forward.__file__).parent
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in files:
            if name.endswith(".py"):
                st = os.stat(os.path.join(folder, name))
                found.append((os.path.join(folder, name), st.st_mtime_ns, st.st_size))
    return sorted(found)
