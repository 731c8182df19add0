"""A warm process that stops answering never hangs its client (issue 34, finding 8: a
warm process stopped with SIGSTOP after its greeting kept its client waiting 63 s and
more). While a command runs the process sends a heartbeat; a client that hears nothing
for `forward.SILENCE_SECONDS` runs the command itself, with a cold run's output, and a
long command that keeps beating is never cut off.

The warm process here is a real one (`vouch warm serve`), started through a small
launcher that adds only a switch to its search: a file in a folder of the test's makes
it stop itself (SIGSTOP) right after its greeting or once it took the command, or run
slowly."""

from __future__ import annotations

import contextlib
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
from vouch.search.log import LOG_NAME
from vouch.store.kb import KB

pytestmark = pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="no unix sockets")

LAUNCHER = r"""
import os, signal, socket, sys, time
from pathlib import Path

switches = Path(sys.argv.pop(1))


def taken(name):
    try:
        text = (switches / name).read_text()
    except FileNotFoundError:
        return None
    (switches / name).unlink()
    return text


import vouch.cli  # noqa: E402  everything a forwarded search uses
import vouch.search.engine as engine  # noqa: E402

real = engine.search


def search(*args, **kwargs):
    if taken("stop-in-command") is not None:
        os.kill(os.getpid(), signal.SIGSTOP)
    slow = taken("slow")
    if slow is not None:
        time.sleep(float(slow))
    return real(*args, **kwargs)


for module in list(sys.modules.values()):
    if getattr(module, "search", None) is real:
        module.search = search

makefile = socket.socket.makefile


def greeted(self, *args, **kwargs):  # the process reads the request right after greeting
    if taken("stop-after-greeting") is not None:
        os.kill(os.getpid(), signal.SIGSTOP)
    return makefile(self, *args, **kwargs)


socket.socket.makefile = greeted
from vouch.launch import run  # noqa: E402

sys.argv[0] = "vouch"
sys.exit(run())
"""


@pytest.fixture
def small(kb: KB) -> KB:
    return small_kb(kb)


@contextlib.contextmanager
def warm_process(small: KB, switches: Path) -> Iterator[int]:
    """The knowledge base's warm process, with the launcher's switches; killed after."""
    child = subprocess.Popen(
        [sys.executable, "-c", LAUNCHER, str(switches), "warm", "serve", "--idle-seconds", "120"],
        cwd=small.root,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ},  # as `vouch()` runs the client: os.environ, not putenv's leftovers
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while (forward.ask(place(small), "status") or {}).get("status") != "ok":
            assert child.poll() is None and time.monotonic() < deadline, "it did not start"
            time.sleep(0.05)
        yield child.pid
    finally:
        child.send_signal(signal.SIGCONT)
        child.kill()
        child.wait()


def _state(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


def _searches(small: KB) -> int:
    try:
        return len((small.dir / LOG_NAME).read_text().splitlines())
    except FileNotFoundError:
        return 0


def _timed(small: KB) -> tuple[subprocess.CompletedProcess[str], float]:
    started = time.monotonic()
    ran = vouch("search", "rollback", "--json", cwd=small.root)
    return ran, time.monotonic() - started


@pytest.mark.parametrize("where", ["stop-after-greeting", "stop-in-command"])
def test_a_stopped_warm_process_does_not_hang_its_client(
    small: KB, tmp_path: Path, where: str
) -> None:
    alone = vouch("search", "rollback", "--json", cwd=small.root, VOUCH_NO_WARM="1")
    started = time.monotonic()
    vouch("search", "rollback", "--json", cwd=small.root, VOUCH_NO_WARM="1")
    cold = time.monotonic() - started
    switches = tmp_path / "switches"
    switches.mkdir()
    with warm_process(small, switches) as pid:
        before = _searches(small)
        (switches / where).write_text("")
        ran, took = _timed(small)
        assert not (switches / where).exists(), "the warm process never took it"
        assert _state(pid) == "T"  # stopped, where the switch says
        assert (ran.returncode, ran.stdout, ran.stderr) == (0, alone.stdout, alone.stderr)
        assert took < forward.SILENCE_SECONDS + 2 * cold + 5, (took, cold)
        assert _searches(small) == before + 1  # run once, here: the stopped one never did
        # `vouch warm status` says so, within its second, rather than waiting
        started = time.monotonic()
        asked = vouch("warm", "status", cwd=small.root)
        assert asked.returncode == 1 and "did not answer" in asked.stderr
        assert time.monotonic() - started < forward.ASK_SECONDS + 2 * cold + 5


def test_a_long_command_keeps_its_client_while_it_beats(small: KB, tmp_path: Path) -> None:
    """A command that takes longer than the silence a client allows is answered by the
    warm process (run once, not again by the client), because it keeps beating."""
    alone = vouch("search", "rollback", "--json", cwd=small.root, VOUCH_NO_WARM="1")
    switches = tmp_path / "switches"
    switches.mkdir()
    slow = 2 * forward.SILENCE_SECONDS + 1
    with warm_process(small, switches):
        before = _searches(small)
        (switches / "slow").write_text(str(slow))
        ran, took = _timed(small)
        assert not (switches / "slow").exists()
        assert (ran.returncode, ran.stdout, ran.stderr) == (0, alone.stdout, alone.stderr)
        assert took >= slow
        assert (forward.ask(place(small), "status") or {}).get("requests") == 1
        assert _searches(small) == before + 1  # the warm process's run alone
