"""Helpers for the warm-process tests: `vouch` as a new process, its status, a small
knowledge base, and something else listening where the warm process would."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from index_support import release_knowledge

from vouch import forward
from vouch.kinds import KINDS
from vouch.store.kb import KB, path_for


def vouch(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """`vouch ARGS` as a new process, as a person types it (the console script's way in)."""
    return subprocess.run(
        [sys.executable, "-m", "vouch", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=120,
    )


def status(kb: KB) -> dict[str, Any]:
    found = vouch("warm", "status", "--json", cwd=kb.root)
    assert found.returncode == 0, found.stderr
    data: dict[str, Any] = json.loads(found.stdout)
    return data


def hits(kb: KB, query: str) -> list[str]:
    found = vouch("search", query, "--json", cwd=kb.root)
    assert found.returncode == 0, found.stderr
    return [r["id"] for r in json.loads(found.stdout)["results"]]


def answered(kb: KB) -> int:
    return int(status(kb).get("requests", -1))


def small_kb(kb: KB) -> KB:
    """Two claims, a page with a Rollback section and one claim more, committed."""
    return release_knowledge(kb, "Rollbacks are announced in the #releases channel")


@contextlib.contextmanager
def running(small: KB) -> Iterator[KB]:
    """`small` with its warm process running; stopped (or killed) afterwards."""
    started = vouch("warm", "start", "--json", "--idle-seconds", "120", cwd=small.root)
    assert started.returncode == 0, started.stderr
    pid = json.loads(started.stdout)["pid"]
    try:
        yield small
    finally:
        vouch("warm", "stop", cwd=small.root)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def place(kb: KB) -> Path:
    """The knowledge base's warm-process folder (socket, lock, log), inside `.git/`."""
    return forward.warm_dir(kb.state_dir, kb.dir)


def path_for_claim(claim_id: str) -> str:
    return path_for(KINDS["claim"], claim_id)


def planted(
    kb: KB,
    greeting: bytes,
    got: list[bytes],
    answers: bool = True,
    linger: float = 0,
    directory: Path | None = None,
) -> tuple[socket.socket, threading.Thread]:
    """Something else listening where the warm process would (or in `directory`):
    greets, records what it is sent, answers anything with a success (or,
    `answers=False`, dies without one, after `linger` seconds)."""
    directory = directory or place(kb)
    directory.mkdir(parents=True, exist_ok=True)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    with forward.inside(directory):
        listener.bind(forward.SOCKET_NAME)
    listener.listen(4)
    listener.settimeout(30)

    def answer() -> None:
        try:
            while True:
                conn, _ = listener.accept()
                with conn:
                    conn.sendall(greeting)
                    data = conn.makefile("rb").readline()
                    got.append(data)
                    if not answers:
                        time.sleep(linger)
                        continue
                    lie = b"the planted answer\n"
                    header = {"status": "ok", "code": 0, "stdout": len(lie), "size": len(lie)}
                    conn.sendall(json.dumps(header).encode() + b"\n" + lie)
        except OSError:
            return

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    return listener, thread


def wait_gone(pid: int, seconds: float = 10) -> None:
    """Until process `pid` has exited (AssertionError after `seconds`)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.02)
    raise AssertionError(f"process {pid} still runs")
