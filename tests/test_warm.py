"""The warm process (`vouch warm`): a cold `vouch search` or `vouch context` answered by a
process per knowledge base that has loaded everything, with the answer the command would
have printed itself — and, whenever anything could make that answer differ, no
forwarding at all. Real processes, a real socket, real inotify, real git."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import git
from index_support import claim, commit, release_knowledge

from vouch import forward
from vouch.servers.watch import Always, Watch
from vouch.store.kb import KB, path_for

pytestmark = pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="no unix sockets")


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


@pytest.fixture
def small(kb: KB) -> KB:
    release_knowledge(kb, "Rollbacks are announced in the #releases channel")
    return kb


@pytest.fixture
def warm(small: KB) -> Iterator[KB]:
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


def path_for_claim(claim_id: str) -> str:
    from vouch.kinds import KINDS

    return path_for(KINDS["claim"], claim_id)


def test_a_killed_process_leaves_nothing_in_the_way(warm: KB) -> None:
    pid = status(warm)["pid"]
    os.kill(pid, signal.SIGKILL)
    _wait_gone(pid)
    sock = forward.locks_dir(warm.dir) / forward.SOCKET_NAME
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


def _wait_gone(pid: int) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.02)
    raise AssertionError(f"process {pid} still runs")


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
    base = {"cwd": str(warm.root), "env": forward.environment(), "encoding": "utf-8"}
    for argv in (["approve", "p-1"], ["source", "add", "-"], ["search", "-"], ["status"]):
        sock = forward.connect(warm.dir, 5)
        assert sock is not None
        with sock:
            header, body = forward.request(sock, {"op": "run", "argv": argv, **base})
        assert (header["status"], body) == ("refused", b""), argv
    assert answered(warm) == 0


def test_garbage_and_silence_do_not_stop_it(warm: KB) -> None:
    """A client that sends nonsense, too much, or nothing is dropped; the next one is
    answered."""
    for payload in (b"not json\n", b"[1, 2]\n", b"x" * (3 << 20), b"{}\n", b""):
        sock = forward.connect(warm.dir, 5)
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


def _planted(
    kb: KB, greeting: bytes, got: list[bytes], answers: bool = True, linger: float = 0
) -> tuple[socket.socket, threading.Thread]:
    """Something else listening where the warm process would: greets, records what it
    is sent, answers anything with a success (or, `answers=False`, dies without one,
    after `linger` seconds)."""
    directory = forward.locks_dir(kb.dir)
    directory.mkdir(exist_ok=True)
    here = os.getcwd()
    os.chdir(directory)
    try:
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(forward.SOCKET_NAME)
    finally:
        os.chdir(here)
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


def test_a_socket_of_another_vouch_is_not_trusted(small: KB) -> None:
    alone = vouch("search", "rollback", "--json", cwd=small.root, VOUCH_NO_WARM="1")
    for greeting in (
        json.dumps({"vouch": "0.0.1 /elsewhere/vouch /usr 3.9"}).encode() + b"\n",
        b"not json at all\n",
        b"",
    ):
        got: list[bytes] = []
        listener, _ = _planted(small, greeting, got)
        try:
            here = vouch("search", "rollback", "--json", cwd=small.root)
        finally:
            listener.close()
            (forward.locks_dir(small.dir) / forward.SOCKET_NAME).unlink()
        assert (here.returncode, here.stdout) == (0, alone.stdout), greeting
        assert got == [] or got == [b""], greeting  # it was never sent the command


def test_a_process_that_dies_before_answering_is_no_loss(small: KB) -> None:
    """Greeted as this vouch, sent the command, then nothing: the command runs here."""
    alone = vouch("search", "rollback", "--json", cwd=small.root, VOUCH_NO_WARM="1")
    got: list[bytes] = []
    greeting = json.dumps({"vouch": forward.fingerprint()}).encode() + b"\n"
    listener, _ = _planted(small, greeting, got, answers=False)
    try:
        here = vouch("search", "rollback", "--json", cwd=small.root)
    finally:
        listener.close()
        (forward.locks_dir(small.dir) / forward.SOCKET_NAME).unlink()
    assert (here.returncode, here.stdout, here.stderr) == (0, alone.stdout, alone.stderr)
    assert len(got) == 1 and json.loads(got[0])["argv"] == ["search", "rollback", "--json"]


def test_ctrl_c_while_waiting_is_a_plain_interruption(small: KB) -> None:
    """A process that greets and then takes its time: Ctrl-C ends the wait as it ends a
    command, exit 1 and `interrupted`, no traceback."""
    got: list[bytes] = []
    greeting = json.dumps({"vouch": forward.fingerprint()}).encode() + b"\n"
    listener, _ = _planted(small, greeting, got, answers=False, linger=30)
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
        (forward.locks_dir(small.dir) / forward.SOCKET_NAME).unlink()
    assert got, "the command never reached the planted process"
    assert (client.returncode, out, err) == (1, "", "interrupted\n")


def test_a_process_that_does_not_answer_is_named_not_ignored(small: KB) -> None:
    """`vouch warm status|start|stop` when something holds the socket but says nothing:
    an error that says so (start does not start a second one), not "no process"."""
    forward.locks_dir(small.dir).mkdir(exist_ok=True)
    here = os.getcwd()
    os.chdir(forward.locks_dir(small.dir))
    try:
        dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        dead.bind(forward.SOCKET_NAME)
        dead.listen(8)
        dead.close()  # the socket file stays, nothing listens: a killed process's
        found = vouch("warm", "status", "--json", cwd=small.root)
        assert json.loads(found.stdout)["running"] is False
        os.unlink(forward.SOCKET_NAME)
        silent = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        silent.bind(forward.SOCKET_NAME)
    finally:
        os.chdir(here)
    silent.listen(8)  # takes connections (the kernel's backlog), never answers
    try:
        for args in (("status",), ("stop",), ("start", "--idle-seconds", "30")):
            found = vouch("warm", *args, cwd=small.root)
            assert found.returncode == 1 and "did not answer" in found.stderr, args
            assert "E105" in found.stderr
    finally:
        silent.close()
        (forward.locks_dir(small.dir) / forward.SOCKET_NAME).unlink()


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to make another user's socket")
def test_a_socket_of_another_user_is_not_used(small: KB) -> None:
    got: list[bytes] = []
    greeting = json.dumps({"vouch": forward.fingerprint()}).encode() + b"\n"
    listener, _ = _planted(small, greeting, got)
    sock = forward.locks_dir(small.dir) / forward.SOCKET_NAME
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
    locks = forward.locks_dir(small.dir)
    if locks.exists():
        for p in locks.iterdir():
            p.unlink()
        locks.rmdir()
    locks.symlink_to(outside)
    refused = vouch("warm", "start", "--idle-seconds", "30", cwd=small.root)
    assert refused.returncode == 1
    assert "E105" in refused.stderr and "link" in refused.stderr
    assert list(outside.iterdir()) == []  # nothing written through the link
    locks.unlink()

    # a log committed as a link (locks/ is gitignored, not unreachable) is not followed
    locks.mkdir()
    target = outside / "profile"
    target.write_text("mine\n")
    (locks / forward.LOG_NAME).symlink_to(target)
    refused = vouch("warm", "start", "--idle-seconds", "30", cwd=small.root)
    assert refused.returncode == 1 and "E105" in refused.stderr, refused.stderr
    assert target.read_text() == "mine\n"
    assert not (locks / forward.SOCKET_NAME).exists()
    (locks / forward.LOG_NAME).unlink()

    started = vouch("warm", "start", "--json", "--idle-seconds", "60", cwd=small.root)
    assert started.returncode == 0, started.stderr
    try:
        mode = os.lstat(locks / forward.SOCKET_NAME).st_mode
        assert stat.S_ISSOCK(mode) and stat.S_IMODE(mode) == 0o600
    finally:
        vouch("warm", "stop", cwd=small.root)


def test_start_stop_status_and_idle(small: KB) -> None:
    assert status(small) == {"running": False, "kb": str(small.dir)}
    none = vouch("warm", "stop", cwd=small.root)
    assert (none.returncode, none.stdout.strip()) == (0, f"No warm process for {small.dir}")

    first = vouch("warm", "start", "--json", "--idle-seconds", "2", cwd=small.root)
    assert first.returncode == 0, first.stderr
    again = json.loads(vouch("warm", "start", "--json", cwd=small.root).stdout)
    assert again["started"] is False and again["pid"] == json.loads(first.stdout)["pid"]
    shown = status(small)
    assert shown["running"] is True and shown["watch"].startswith("inotify (")
    assert shown["vouch"] == forward.fingerprint()

    _wait_gone(shown["pid"])  # two idle seconds later it is gone, and so is its socket
    assert not (forward.locks_dir(small.dir) / forward.SOCKET_NAME).exists()
    assert status(small)["running"] is False

    vouch("warm", "start", "--idle-seconds", "60", cwd=small.root)
    pid = status(small)["pid"]
    stopped = vouch("warm", "stop", "--json", cwd=small.root)
    assert json.loads(stopped.stdout) == {"stopped": True, "kb": str(small.dir), "pid": pid}
    _wait_gone(pid)


def test_only_a_knowledge_base_at_the_top_of_a_work_tree(tmp_path: Path) -> None:
    from vouch.store.initkb import init_kb

    inner = tmp_path / "repo" / "sub"
    inner.mkdir(parents=True)
    git(tmp_path / "repo", "init", "-q")
    init_kb(inner)
    refused = vouch("warm", "start", "--kb", str(inner), "--idle-seconds", "30", cwd=tmp_path)
    assert refused.returncode == 1 and "top of a git work tree" in refused.stderr
    assert not (forward.locks_dir(inner / ".vouch") / forward.SOCKET_NAME).exists()


# the file watch on its own


def test_the_watch_names_knowledge_files_and_nothing_else(tmp_path: Path) -> None:
    top = tmp_path / ".vouch"
    (top / "claims" / "ab").mkdir(parents=True)
    (top / "index").mkdir()
    (top / "locks").mkdir()
    watch = Watch.open(str(top))
    assert isinstance(watch, Watch)
    nothing = (False, frozenset())
    try:
        assert watch.changes() == nothing
        (top / "claims" / "ab" / "one.yaml").write_text("x")
        assert watch.changes() == (True, {"claims/ab/one.yaml"})
        assert watch.changes() == nothing  # taken
        # derived, local and logged state is not knowledge
        (top / "index" / "search.db").write_text("x")
        (top / "locks" / "write.lock").write_text("x")
        (top / "searches.log.jsonl").write_text("{}\n")
        assert watch.changes() == nothing
        # a new folder: its files are not named one by one, but it is watched from now on
        (top / "claims" / "cd").mkdir()
        assert watch.changes() == (True, None)
        (top / "claims" / "cd" / "two.yaml").write_text("y")
        assert watch.changes() == (True, {"claims/cd/two.yaml"})
        os.chmod(top / "claims" / "cd" / "two.yaml", 0o755)
        assert watch.changes() == (True, {"claims/cd/two.yaml"})
        os.rename(top / "claims" / "cd" / "two.yaml", top / "claims" / "ab" / "two.yaml")
        assert watch.changes() == (True, {"claims/cd/two.yaml", "claims/ab/two.yaml"})
        (top / "claims" / "ab" / "two.yaml").unlink()
        (top / "config.yaml").write_text("a: 1\n")
        assert watch.changes() == (True, {"claims/ab/two.yaml", "config.yaml"})
        # absorbed between requests, still reported to the next check
        (top / "claims" / "ab" / "one.yaml").write_text("z")
        assert watch.absorb() is True
        assert watch.absorb() is False
        assert watch.changes() == (True, {"claims/ab/one.yaml"})
        (top / "claims" / "cd").rmdir()
        assert watch.changes() == (True, None)
        # the folder itself moved away: from now on every check is a full one
        top.rename(tmp_path / "moved")
        assert watch.changes() == (True, None)
        assert watch.changes() == (True, None)
    finally:
        watch.close()


def test_without_inotify_every_request_is_checked(tmp_path: Path) -> None:
    missing = Watch.open(str(tmp_path / "missing"))  # nothing to watch: incomplete
    assert isinstance(missing, Watch) and not missing.complete
    assert missing.changes() == (True, None)
    assert missing.kind.startswith("inotify, incomplete")
    assert Always().changes() == (True, None)


def test_an_agent_server_sees_an_edit_at_once(small: KB) -> None:
    """The JSONL and MCP servers keep the same watch: no two-second trust window."""
    from vouch.methods import registry as ops
    from vouch.servers import server_context

    ctx = server_context("jsonl", kb_path=str(small.root))

    def found(query: str) -> list[str]:
        return [r["id"] for r in ops.invoke(ctx, "kb.search", {"query": query})]

    assert found("zebra crossing") == []
    written = claim(small, "Every zebra crossing near the office has a beacon")
    assert found("zebra crossing") == [written["id"]]
    path = small.dir / path_for_claim(written["id"])
    path.write_text(path.read_text().replace("beacon", "lighthouse"))
    assert found("lighthouse") == [written["id"]] and found("beacon") == []


OPERATIONS = ("edit", "edit", "new", "delete", "chmod", "rename", "same")
OPERATIONS += ("stage", "unstage", "reset", "forget")


def test_a_check_of_the_named_files_finds_what_a_full_check_finds(small: KB) -> None:
    """Random edits, stages, commits, renames, deletions and new files under `.vouch/`:
    after each, git asked only about the files the watch named (and those dirty before)
    gives the state git asked about every file gives."""
    import random

    from vouch.index import freshness

    rng = random.Random(7)
    index_file = small.root / ".git" / "index"

    def settle() -> None:  # git's index, as if written minutes ago: its stamp is trusted
        old = time.time() - 60
        os.utime(index_file, (old, old))

    def knowledge() -> list[Path]:
        return sorted(
            p
            for p in small.dir.rglob("*")
            if p.is_file() and p.suffix in (".yaml", ".md") and "index" not in p.parts
        )

    def commit_all(message: str) -> None:
        git(small.root, "add", "-A", ".vouch")
        git(small.root, "commit", "-qm", message, "--allow-empty")

    def step(n: int) -> None:
        files = knowledge()
        kind = rng.choice(OPERATIONS)
        target = rng.choice(files)
        if kind == "edit":
            target.write_text(target.read_text() + f"\n# edit {n}\n")
        elif kind == "new":
            claim(small, f"Claim number {n} about rollbacks and beacons")
        elif kind == "delete":
            target.unlink()
        elif kind == "chmod":
            os.chmod(target, 0o755 if not os.access(target, os.X_OK) else 0o644)
        elif kind == "rename":
            target.rename(target.with_name(f"moved-{n}-{target.name}"))
        elif kind == "same":
            target.write_text(target.read_text())  # same bytes, new mtime
        elif kind == "stage":
            git(small.root, "add", "-A", ".vouch")
            settle()
        elif kind == "unstage":
            git(small.root, "reset", "-q")
            settle()
        elif kind == "reset":  # git's index (and HEAD) back a few commits, files untouched
            commits = git(small.root, "rev-list", "HEAD").split()
            git(small.root, "reset", "-q", rng.choice(commits[1:] or commits))
            settle()
        elif kind == "forget":
            git(small.root, "rm", "-q", "--cached", "--ignore-unmatch", str(target))
            settle()
        if rng.random() < 0.1:
            commit_all(f"step {n}")
            settle()

    settle()
    watch = Watch.open(str(small.dir))
    assert isinstance(watch, Watch)
    previous = freshness.current(small)
    scoped = 0
    try:
        for n in range(100):
            step(n)
            _, paths = watch.changes()  # (a stage or a commit alone changes no file)
            probe = freshness.start(small, previous, paths)
            narrowed = probe._scope(paths) is not None
            scoped += narrowed
            fast = probe.result()
            full = freshness.current(small, previous)
            assert (fast.tree, dict(fast.dirty), fast.staged) == (
                full.tree,
                dict(full.dirty),
                full.staged,
            ), n
            assert fast.source_hash == full.source_hash
            previous = full
    finally:
        watch.close()
    assert scoped >= 40  # most checks looked only at the named files
