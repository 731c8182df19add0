"""The warm process (`vouch warm`): a cold `vouch search` or `vouch context` answered by a
process per knowledge base that has loaded everything, with the answer the command would
have printed itself. Real processes, a real socket, real inotify, real git (hostile
sockets: test_warm_hostile.py; the file watch and scoped checks: test_watch.py)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import stat
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import git
from index_support import claim, commit
from warm_support import (
    answered,
    hits,
    path_for_claim,
    place,
    running,
    small_kb,
    status,
    vouch,
    wait_gone,
)

from vouch import forward
from vouch.store.kb import KB

pytestmark = pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="no unix sockets")


@pytest.fixture
def small(kb: KB) -> KB:
    return small_kb(kb)


@pytest.fixture
def warm(small: KB) -> Iterator[KB]:
    """`small` with its warm process running; stopped (or killed) afterwards."""
    with running(small) as found:
        yield found


COMMANDS = [
    ("search", "rollback", "--json"),
    ("search", "roll back a release"),
    ("--json", "search", "billing invoices", "--top", "1"),
    ("search", "zzzqqqxxx", "--json"),
    ("search", "rollback", "--top", "0"),  # a usage error: exit 1, the message on stderr
    ("search", "rollback", "--format", "yaml"),  # click's own usage error
    ("context", "how do I roll back a release", "--json"),
    ("context", "how do I roll back a release"),
]


def test_a_forwarded_command_prints_what_the_command_prints(warm: KB, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    cases = [(c, warm.root) for c in COMMANDS]
    # from a folder below the repository, and from outside it with --kb (relative)
    (warm.root / "docs").mkdir()
    cases.append((("search", "rollback", "--json"), warm.root / "docs"))
    relative = os.path.relpath(warm.root, elsewhere)
    cases.append((("search", "rollback", "--kb", relative, "--json"), elsewhere))
    before = answered(warm)
    for args, cwd in cases:
        alone = vouch(*args, cwd=cwd, VOUCH_NO_WARM="1")
        through = vouch(*args, cwd=cwd)
        assert (through.returncode, through.stdout, through.stderr) == (
            alone.returncode,
            alone.stdout,
            alone.stderr,
        ), args
    assert {c for c, _ in cases if c[-1] == "0"}  # the usage error is among them
    assert answered(warm) == before + len(cases)  # every one went through the process


def test_an_edit_is_seen_at_once(warm: KB) -> None:
    """No trust window: a file written a moment before the search is in its answer."""
    before = answered(warm)
    assert hits(warm, "zebra crossing") == []
    written = claim(warm, "Every zebra crossing near the office has a beacon")
    assert hits(warm, "zebra crossing") == [written["id"]]

    path = warm.dir / path_for_claim(written["id"])
    path.write_text(path.read_text().replace("beacon", "lighthouse"))
    assert hits(warm, "beacon") == []
    assert hits(warm, "lighthouse") == [written["id"]]

    commit(warm)  # HEAD moves
    git(warm.root, "rm", "-q", str(path.relative_to(warm.root)))  # git's index moves
    assert hits(warm, "lighthouse") == []
    git(warm.root, "checkout", "-q", "HEAD", "--", ".")
    assert hits(warm, "lighthouse") == [written["id"]]
    assert answered(warm) == before + 6


def test_changes_are_checked_between_requests(warm: KB) -> None:
    """Once files stop changing, the process checks (and refreshes) on its own, so the
    next search does not wait for git; what it answers is the same."""
    assert status(warm)["checks_between_requests"] == 0
    hits(warm, "rollback")  # its search log line is not a change
    time.sleep(0.6)
    assert status(warm)["checks_between_requests"] == 0
    written = claim(warm, "Every zebra crossing near the office has a beacon")
    deadline = time.monotonic() + 20
    while status(warm)["checks_between_requests"] == 0:
        assert time.monotonic() < deadline, "no check after the change"
        time.sleep(0.05)
    assert hits(warm, "zebra crossing") == [written["id"]]
    assert status(warm)["checks_between_requests"] >= 1


def test_a_check_that_failed_is_made_again(small: KB) -> None:
    """With index.auto_refresh off, a stale index is an error: the second search after an
    edit must say so again, not answer from the stale index because the watch's queue
    was emptied by the first."""
    config = small.dir / "config.yaml"
    config.write_text(config.read_text().replace("auto_refresh: true", "auto_refresh: false"))
    commit(small, "no auto refresh")
    vouch("index", "rebuild", cwd=small.root)
    started = vouch("warm", "start", "--json", "--idle-seconds", "120", cwd=small.root)
    assert started.returncode == 0, started.stderr
    try:
        assert hits(small, "rollback")
        claim(small, "Rollbacks need a second approver on Fridays")
        for _ in range(2):
            stale = vouch("search", "rollback", "--json", cwd=small.root)
            assert stale.returncode == 1 and "stale" in stale.stdout, stale.stdout
        assert answered(small) == 3
        # a process started over the stale index starts, and says so to each search
        vouch("warm", "stop", cwd=small.root)
        again = vouch("warm", "start", "--idle-seconds", "120", cwd=small.root)
        assert again.returncode == 0, again.stderr
        stale = vouch("search", "rollback", "--json", cwd=small.root)
        assert stale.returncode == 1 and "stale" in stale.stdout, stale.stdout
        assert answered(small) == 1
    finally:
        vouch("warm", "stop", cwd=small.root)


def test_a_changed_configuration_is_obeyed_at_once(warm: KB) -> None:
    """The index kept open was opened under the old config.yaml; with auto_refresh
    turned off, an edit makes the next search refuse (stale) instead of refreshing."""
    assert hits(warm, "rollback")
    config = warm.dir / "config.yaml"
    config.write_text(config.read_text().replace("auto_refresh: true", "auto_refresh: false"))
    assert hits(warm, "rollback")  # the configuration alone changes no knowledge
    claim(warm, "Rollbacks need a second approver on Fridays")
    stale = vouch("search", "rollback", "--json", cwd=warm.root)
    assert stale.returncode == 1 and "stale" in stale.stdout, stale.stdout
    assert answered(warm) == 3


def test_a_killed_process_leaves_nothing_in_the_way(warm: KB) -> None:
    pid = status(warm)["pid"]
    os.kill(pid, signal.SIGKILL)
    wait_gone(pid)
    sock = place(warm) / forward.SOCKET_NAME
    assert stat.S_ISSOCK(os.lstat(sock).st_mode)  # left behind; it refuses connections
    alone = vouch("search", "rollback", "--json", cwd=warm.root, VOUCH_NO_WARM="1")
    here = vouch("search", "rollback", "--json", cwd=warm.root)
    assert (here.returncode, here.stdout, here.stderr) == (0, alone.stdout, alone.stderr)
    assert status(warm)["running"] is False

    again = vouch("warm", "start", "--json", "--idle-seconds", "120", cwd=warm.root)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["pid"] != pid
    assert vouch("search", "rollback", "--json", cwd=warm.root).stdout == alone.stdout
    assert answered(warm) == 1


def test_another_environment_runs_the_command_itself(warm: KB) -> None:
    """VOUCH_AGENT, a git variable, HOME: anything vouch or git reads that differs
    from the process's environment means the command runs in its own process."""
    before = answered(warm)
    alone = vouch("search", "rollback", "--json", cwd=warm.root, VOUCH_NO_WARM="1")
    for extra in ({"VOUCH_AGENT": "someone"}, {"GIT_CONFIG_COUNT": "0"}, {"LC_ALL": "C"}):
        here = vouch("search", "rollback", "--json", cwd=warm.root, **extra)
        assert (here.returncode, here.stdout) == (0, alone.stdout), extra
    # stdin and --help are not forwarded either
    vouch("search", "--help", cwd=warm.root)
    assert answered(warm) == before


def test_a_hand_made_request_to_write_is_refused(warm: KB) -> None:
    """Only a search or a context pack runs in the warm process, whoever asks."""
    base = {
        "cwd": str(warm.root),
        "env": forward.environment(),
        "encoding": "utf-8",
        "errors": "strict",
        "kb": str(warm.dir),
    }
    for argv in (["approve", "p-1"], ["source", "add", "-"], ["search", "-"], ["status"]):
        sock = forward.connect(place(warm), 5)
        assert sock is not None
        with sock:
            header, body = forward.request(sock, {"op": "run", "argv": argv, **base})
        assert (header["status"], body) == ("refused", b""), argv
    # a search, but for another knowledge base (a key that collides): not run here
    sock = forward.connect(place(warm), 5)
    assert sock is not None
    with sock:
        other = {**base, "kb": str(warm.root / "other" / ".vouch")}
        header, _ = forward.request(sock, {"op": "run", "argv": ["search", "x"], **other})
    assert header == {"status": "refused", "why": "another knowledge base"}
    assert answered(warm) == 0


def test_garbage_and_silence_do_not_stop_it(warm: KB) -> None:
    """A client that sends nonsense, too much, or nothing is dropped; the next one is
    answered."""
    for payload in (b"not json\n", b"[1, 2]\n", b"x" * (3 << 20), b"{}\n", b""):
        sock = forward.connect(place(warm), 5)
        assert sock is not None
        with sock:
            sock.settimeout(20)
            greeting = sock.makefile("rb").readline()
            assert json.loads(greeting)["vouch"] == forward.fingerprint()
            with contextlib.suppress(OSError):
                sock.sendall(payload)
                sock.shutdown(socket.SHUT_WR)
                sock.recv(1 << 16)
    alone = vouch("search", "rollback", "--json", cwd=warm.root, VOUCH_NO_WARM="1")
    assert vouch("search", "rollback", "--json", cwd=warm.root).stdout == alone.stdout
    assert answered(warm) == 1


def test_start_stop_status_and_idle(small: KB) -> None:
    off = "a search starts none: VOUCH_NO_AUTO_WARM is set"  # the tests' environment
    assert status(small) == {
        "running": False,
        "kb": str(small.dir),
        "auto_start": "off",
        "auto_start_why": off,
    }
    none = vouch("warm", "stop", "--format", "human", cwd=small.root)
    assert none.returncode == 0
    assert none.stdout.startswith(f"No warm process for {small.dir}; a search starts none by")

    first = vouch("warm", "start", "--json", "--idle-seconds", "60", cwd=small.root)
    assert first.returncode == 0, first.stderr
    again = json.loads(vouch("warm", "start", "--json", cwd=small.root).stdout)
    assert again["started"] is False and again["pid"] == json.loads(first.stdout)["pid"]
    shown = status(small)
    assert shown["running"] is True and shown["watch"].startswith("inotify (")
    assert (shown["auto_started"], shown["idle_seconds"]) == (False, 60)
    assert shown["vouch"] == forward.fingerprint()
    stopped = json.loads(vouch("warm", "stop", "--json", cwd=small.root).stdout)
    held = stopped.pop("auto_start_until")  # and no search starts one for an hour
    assert stopped == {"stopped": True, "kb": str(small.dir), "pid": shown["pid"], "how": "asked"}
    assert held > time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 3590))
    wait_gone(shown["pid"])

    idle = vouch("warm", "start", "--json", "--idle-seconds", "1", cwd=small.root)
    wait_gone(json.loads(idle.stdout)["pid"])  # an idle second later it is gone
    assert not (place(small) / forward.SOCKET_NAME).exists()  # and its socket
    assert status(small)["running"] is False


def test_the_folder_is_found_without_git_in_a_linked_work_tree(small: KB, tmp_path: Path) -> None:
    """A cold command finds the warm folder by reading `.git` (a folder, or in a linked
    work tree a file naming one, whose `commondir` names the common git directory):
    where git's own answer (`KB.state_dir`) puts it, one folder per knowledge base."""
    assert forward.place_of(small.dir) == place(small)
    linked = tmp_path / "linked"
    git(small.root, "worktree", "add", "-q", str(linked))
    other = KB.open(None, str(linked / ".vouch"))
    found = forward.place_of(other.dir)
    assert found is not None and found.resolve() == place(other).resolve()
    assert found.name != place(small).name
    assert found.parent.resolve() == (small.root / ".git" / forward.STATE_NAME).resolve()
    assert (linked / ".git").is_file()
