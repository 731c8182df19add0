"""`vouch warm stop` ends a warm process that cannot answer, and signals nothing else.

A real warm process stopped with SIGSTOP is resumed and stops as asked; a process that
holds the warm process's lock, pid file and socket but never answers is terminated, or
killed when it ignores SIGTERM — each within a bounded wait, and `vouch warm stop`
says which. Whatever else holds the socket (not provably this knowledge base's warm
process: no lock held, or a pid file naming another process) is never signalled: the
command says it could not stop it.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from warm_support import place, small_kb, vouch

from vouch import forward
from vouch.store.kb import KB

pytestmark = pytest.mark.skipif(
    not hasattr(socket, "SO_PEERCRED") or not Path("/proc/self/stat").exists(),
    reason="needs SO_PEERCRED and /proc",
)

# Something in the warm process's place: optionally holding its lock, writing a pid file
# (its own pid, or the one given), listening on its socket and never accepting.
HOLDER = r"""
import fcntl, os, signal, socket, sys, time
directory, names, lock, ignore_term = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
os.chdir(directory)
if lock == "1":
    fd = os.open("warm.lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
if ignore_term == "1":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
with open("warm.pid", "w") as fh:
    fh.write((str(os.getpid()) if names == "self" else names) + "\n")
try:
    os.unlink("warm.sock")
except FileNotFoundError:
    pass
listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
listener.bind("warm.sock")
listener.listen(8)
print("ready", flush=True)
time.sleep(120)
"""


@pytest.fixture
def small(kb: KB) -> KB:
    return small_kb(kb)


def _place(small: KB) -> Path:
    directory = place(small)
    for folder in (directory.parent, directory):
        folder.mkdir(mode=0o700, exist_ok=True)
    return directory


def _holder(
    small: KB, names: str = "self", lock: bool = True, ignore_term: bool = False
) -> subprocess.Popen[str]:
    flags = [str(int(lock)), str(int(ignore_term))]
    child = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(_place(small)), names, *flags],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None and child.stdout.readline() == "ready\n"
    return child


def _state(pid: int) -> str | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return None


def _gone(pid: int) -> bool:
    return _state(pid) in (None, "Z")


def _stop(small: KB) -> tuple[subprocess.CompletedProcess[str], float]:
    started = time.monotonic()
    done = vouch("warm", "stop", "--json", cwd=small.root)
    return done, time.monotonic() - started


@contextlib.contextmanager
def _serving(small: KB) -> Iterator[subprocess.Popen[str]]:
    """The knowledge base's real warm process (`vouch warm serve`), a child of this test
    so that it is collected; killed afterwards whatever happened."""
    child = subprocess.Popen(
        [sys.executable, "-m", "vouch", "warm", "serve", "--idle-seconds", "120"],
        cwd=small.root,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while (forward.ask(place(small), "status") or {}).get("status") != "ok":
            assert child.poll() is None and time.monotonic() < deadline, "it did not start"
            time.sleep(0.05)
        yield child
    finally:
        child.send_signal(signal.SIGCONT)
        child.kill()
        child.wait()


def test_a_stopped_warm_process_is_resumed_and_stopped(small: KB) -> None:
    with _serving(small) as child:
        os.kill(child.pid, signal.SIGSTOP)
        deadline = time.monotonic() + 10
        while _state(child.pid) != "T":  # the signal is delivered in a moment
            assert time.monotonic() < deadline, _state(child.pid)
            time.sleep(0.01)
        done, took = _stop(small)
        assert done.returncode == 0, done.stderr
        assert {k: v for k, v in json.loads(done.stdout).items() if k != "auto_start_until"} == {
            "stopped": True,
            "kb": str(small.dir),
            "pid": child.pid,
            "how": "resumed",
        }
        assert took < 15, took
        assert child.wait(timeout=10) == 0  # it went by itself, as asked
        assert not (place(small) / forward.SOCKET_NAME).exists()
        assert not (place(small) / forward.PID_NAME).exists()
        status = vouch("warm", "status", "--json", cwd=small.root)
        assert json.loads(status.stdout)["running"] is False
        human = vouch("warm", "stop", "--format", "human", cwd=small.root)
        assert human.returncode == 0 and human.stdout.startswith("No warm process")


@pytest.mark.parametrize(("ignore_term", "how"), [(False, "terminated"), (True, "killed")])
def test_a_warm_process_that_never_answers_is_ended(small: KB, ignore_term: bool, how: str) -> None:
    holder = _holder(small, ignore_term=ignore_term)
    try:
        done, took = _stop(small)
        assert done.returncode == 0, done.stderr
        found = json.loads(done.stdout)
        assert (found["stopped"], found["pid"], found["how"]) == (True, holder.pid, how)
        assert _gone(holder.pid)
        assert holder.wait(timeout=5) == -(signal.SIGKILL if ignore_term else signal.SIGTERM)
        assert took < 15, took
    finally:
        holder.kill()
        holder.wait()


def test_the_human_line_says_how_it_was_ended(small: KB) -> None:
    holder = _holder(small)
    try:
        done = vouch("warm", "stop", "--format", "human", cwd=small.root)
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith(
            f"Stopped warm process {holder.pid} (it did not answer: ended with SIGTERM); "
            "a search starts none by itself until "
        )
    finally:
        holder.kill()
        holder.wait()


@pytest.mark.parametrize("case", ["no lock held", "pid file names another process"])
def test_what_is_not_provably_the_warm_process_is_never_signalled(small: KB, case: str) -> None:
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    if case == "no lock held":
        holder = _holder(small, lock=False)
    else:
        holder = _holder(small, names=str(bystander.pid))
    try:
        done, took = _stop(small)
        assert done.returncode == 1 and "E105" in done.stderr, done.stderr
        assert "not signalled" in done.stderr and "fuser -k" in done.stderr
        assert "Traceback" not in done.stderr
        time.sleep(0.2)
        for pid in (holder.pid, bystander.pid):
            assert _state(pid) in ("S", "R"), (pid, _state(pid))
        assert holder.poll() is None and bystander.poll() is None
        assert took < 10, took
    finally:
        for child in (holder, bystander):
            child.kill()
            child.wait()
