"""The warm process's client against hostile or broken sockets: another vouch, garbage,
silence, a process that dies or never answers, another user's socket, links where the
socket, its folder or its log would be. Whatever sits there, the command runs and
prints its own answer, and nothing is written through a link."""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import git
from warm_support import place, planted, small_kb, vouch

from vouch import forward
from vouch.store.kb import KB

pytestmark = pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="no unix sockets")


@pytest.fixture
def small(kb: KB) -> KB:
    return small_kb(kb)


def test_a_socket_of_another_vouch_is_not_trusted(small: KB) -> None:
    alone = vouch("search", "rollback", "--json", cwd=small.root, VOUCH_NO_WARM="1")
    for greeting in (
        json.dumps({"vouch": "0.0.1 /elsewhere/vouch /usr 3.9"}).encode() + b"\n",
        b"not json at all\n",
        b"",
    ):
        got: list[bytes] = []
        listener, _ = planted(small, greeting, got)
        try:
            here = vouch("search", "rollback", "--json", cwd=small.root)
        finally:
            listener.close()
            (place(small) / forward.SOCKET_NAME).unlink()
        assert (here.returncode, here.stdout) == (0, alone.stdout), greeting
        assert got == [] or got == [b""], greeting  # it was never sent the command


def test_a_process_that_dies_before_answering_is_no_loss(small: KB) -> None:
    """Greeted as this vouch, sent the command, then nothing: the command runs here."""
    alone = vouch("search", "rollback", "--json", cwd=small.root, VOUCH_NO_WARM="1")
    got: list[bytes] = []
    greeting = json.dumps({"vouch": forward.fingerprint()}).encode() + b"\n"
    listener, _ = planted(small, greeting, got, answers=False)
    try:
        here = vouch("search", "rollback", "--json", cwd=small.root)
    finally:
        listener.close()
        (place(small) / forward.SOCKET_NAME).unlink()
    assert (here.returncode, here.stdout, here.stderr) == (0, alone.stdout, alone.stderr)
    assert len(got) == 1 and json.loads(got[0])["argv"] == ["search", "rollback", "--json"]


def test_ctrl_c_while_waiting_is_a_plain_interruption(small: KB) -> None:
    """A process that greets and then takes its time: Ctrl-C ends the wait as it ends a
    command, exit 1 and `interrupted`, no traceback."""
    got: list[bytes] = []
    greeting = json.dumps({"vouch": forward.fingerprint()}).encode() + b"\n"
    listener, _ = planted(small, greeting, got, answers=False, linger=30)
    try:
        client = subprocess.Popen(
            [sys.executable, "-m", "vouch", "search", "rollback"],
            cwd=small.root,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 30
        while not got and time.monotonic() < deadline:
            time.sleep(0.02)  # it has sent its command and waits for the answer
        client.send_signal(signal.SIGINT)
        out, err = client.communicate(timeout=30)
    finally:
        listener.close()
        (place(small) / forward.SOCKET_NAME).unlink()
    assert got, "the command never reached the planted process"
    assert (client.returncode, out, err) == (1, "", "interrupted\n")


def test_a_process_that_does_not_answer_is_named_not_ignored(small: KB) -> None:
    """`vouch warm status|start|stop` when something holds the socket but says nothing:
    an error that says so (start does not start a second one), not "no process"."""
    place(small).mkdir(parents=True, exist_ok=True)
    with forward.inside(place(small)):
        dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        dead.bind(forward.SOCKET_NAME)
        dead.listen(8)
        dead.close()  # the socket file stays, nothing listens: a killed process's
        found = vouch("warm", "status", "--json", cwd=small.root)
        assert json.loads(found.stdout)["running"] is False
        os.unlink(forward.SOCKET_NAME)
        silent = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        silent.bind(forward.SOCKET_NAME)
    silent.listen(8)  # takes connections (the kernel's backlog), never answers
    try:
        for args in (("status",), ("stop",), ("start", "--idle-seconds", "30")):
            found = vouch("warm", *args, cwd=small.root)
            assert found.returncode == 1 and "did not answer" in found.stderr, args
            assert "E105" in found.stderr
    finally:
        silent.close()
        (place(small) / forward.SOCKET_NAME).unlink()


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to make another user's socket")
def test_a_socket_of_another_user_is_not_used(small: KB) -> None:
    got: list[bytes] = []
    greeting = json.dumps({"vouch": forward.fingerprint()}).encode() + b"\n"
    listener, _ = planted(small, greeting, got)
    sock = place(small) / forward.SOCKET_NAME
    os.chown(sock, 65534, 65534)
    try:
        here = vouch("search", "rollback", "--json", cwd=small.root)
    finally:
        listener.close()
        sock.unlink()
    assert here.returncode == 0 and "planted" not in here.stdout
    assert got == []


def test_the_socket_is_private_and_never_through_a_link(small: KB, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    folder = place(small)
    state = folder.parent
    assert state == small.repo.common_dir / "vouch"  # inside the git directory
    # the warm folder, or the state folder that holds it, a link: refused, nothing written
    state.mkdir(exist_ok=True)
    for link in (folder, state):
        aside = link.with_name(link.name + ".aside")
        link.rename(aside) if link.exists() else None
        link.symlink_to(outside)
        refused = vouch("warm", "start", "--idle-seconds", "30", cwd=small.root)
        assert refused.returncode == 1
        assert "E105" in refused.stderr and "link" in refused.stderr
        assert list(outside.iterdir()) == []  # nothing written through the link
        link.unlink()
        aside.rename(link) if aside.exists() else None

    # a log that is a link (a co-tenant's trap) is not followed
    folder.mkdir(parents=True)
    target = outside / "profile"
    target.write_text("mine\n")
    (folder / forward.LOG_NAME).symlink_to(target)
    refused = vouch("warm", "start", "--idle-seconds", "30", cwd=small.root)
    assert refused.returncode == 1 and "E105" in refused.stderr, refused.stderr
    assert target.read_text() == "mine\n"
    assert not (folder / forward.SOCKET_NAME).exists()
    (folder / forward.LOG_NAME).unlink()

    started = vouch("warm", "start", "--json", "--idle-seconds", "60", cwd=small.root)
    assert started.returncode == 0, started.stderr
    try:
        mode = os.lstat(folder / forward.SOCKET_NAME).st_mode
        assert stat.S_ISSOCK(mode) and stat.S_IMODE(mode) == 0o600
        assert stat.S_IMODE(os.lstat(folder).st_mode) == 0o700
        assert (folder / forward.LOG_NAME).is_file() and (folder / forward.LOCK_NAME).exists()
        assert not (small.dir / "locks" / forward.SOCKET_NAME).exists()  # nothing in the tree
    finally:
        vouch("warm", "stop", cwd=small.root)


def test_a_socket_a_branch_puts_in_the_work_tree_is_never_used(small: KB) -> None:
    """Issue 34, deliverable 1: the warm process's socket, lock and log lived in
    `.vouch/locks/`, where a checkout or merge can put a file. A socket that answers a
    planted result, where the warm process used to listen, and the folder a branch
    commits there (a log as a link, a lock), are never used: the command answers itself
    and the warm process keeps its own state inside the git directory."""
    alone = vouch("search", "rollback", "--json", cwd=small.root, VOUCH_NO_WARM="1")
    old = small.dir / "locks"
    got: list[bytes] = []
    greeting = json.dumps({"vouch": forward.fingerprint()}).encode() + b"\n"
    listener, _ = planted(small, greeting, got, directory=old)
    try:
        here = vouch("search", "rollback", "--json", cwd=small.root)
    finally:
        listener.close()
        (old / forward.SOCKET_NAME).unlink()
    assert (here.returncode, here.stdout) == (0, alone.stdout) and got == []

    # committed where the state used to be: a lock and a log that links out of the tree
    elsewhere = small.root.parent / "victim.txt"
    elsewhere.write_text("keep\n")
    (old / forward.LOCK_NAME).write_text("held by a branch\n")
    (old / forward.LOG_NAME).symlink_to(elsewhere)
    git(small.root, "add", "-f", ".vouch/locks")
    git(small.root, "commit", "-qm", "plant warm state")
    head = git(small.root, "rev-parse", "HEAD")
    alone = vouch("search", "rollback", "--json", cwd=small.root, VOUCH_NO_WARM="1")
    started = vouch("warm", "start", "--json", "--idle-seconds", "60", cwd=small.root)
    assert started.returncode == 0, started.stderr
    try:
        assert vouch("search", "rollback", "--json", cwd=small.root).stdout == alone.stdout
        assert (
            json.loads(vouch("warm", "status", "--json", cwd=small.root).stdout)["requests"] == 1
        )  # answered by the warm process, which the planted lock did not stop
    finally:
        vouch("warm", "stop", cwd=small.root)
    assert elsewhere.read_text() == "keep\n"  # the planted log link was never written
    assert (old / forward.LOCK_NAME).read_text() == "held by a branch\n"
    assert git(small.root, "rev-parse", "HEAD") == head
    assert git(small.root, "status", "--porcelain") == ""


def test_only_a_knowledge_base_at_the_top_of_a_work_tree(tmp_path: Path) -> None:
    from vouch.store.initkb import init_kb

    inner = tmp_path / "repo" / "sub"
    inner.mkdir(parents=True)
    git(tmp_path / "repo", "init", "-q")
    init_kb(inner)
    refused = vouch("warm", "start", "--kb", str(inner), "--idle-seconds", "30", cwd=tmp_path)
    assert refused.returncode == 1 and "top of a git work tree" in refused.stderr
    state = tmp_path / "repo" / ".git" / forward.STATE_NAME  # `init` made it (its lock)
    assert not list(state.glob("warm-*"))  # no warm folder made


def test_the_client_never_follows_a_link_to_a_socket(small: KB, tmp_path: Path) -> None:
    """A planted process answering a lie, reached through a link where the warm folder
    (or the state folder holding it) would be: the command answers itself."""
    alone = vouch("search", "rollback", "--json", cwd=small.root, VOUCH_NO_WARM="1")
    folder = place(small)
    folder.parent.mkdir(exist_ok=True)
    greeting = json.dumps({"vouch": forward.fingerprint()}).encode() + b"\n"
    for link in (folder, folder.parent):
        outside = tmp_path / f"outside-{link.name}"
        served = outside / folder.name if link == folder.parent else outside
        served.mkdir(parents=True)
        aside = link.with_name(link.name + ".aside")
        if link.exists():
            link.rename(aside)
        link.symlink_to(outside)
        got: list[bytes] = []
        listener, _ = planted(small, greeting, got, directory=served)
        try:
            here = vouch("search", "rollback", "--json", cwd=small.root)
        finally:
            listener.close()
            link.unlink()
            if aside.exists():
                aside.rename(link)
        assert (here.returncode, here.stdout) == (0, alone.stdout), link
        assert got == [], link  # never connected
