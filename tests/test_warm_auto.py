"""A cold `vouch search` starts the knowledge base's warm process for the searches after
it (`vouch.autostart`), and nowhere it should not: not when told not to, not in CI, not
under git's hooks or the pre-commit framework, not where the warm folder cannot be
written, not again within the backoff after a start that failed, not after `vouch warm
stop`. Real processes (`python -m vouch`, the console script's way in), real sockets,
real git repositories and hooks; each "not" also proves nothing was left: no process, no
socket, no stamp. (The test suite itself sets VOUCH_NO_AUTO_WARM in conftest.py; these
tests take it, and any CI variable, out of their commands' environment.)"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import git
from test_errors_os import _unprivileged
from warm_support import place, small_kb

from vouch import autostart, forward
from vouch.store.kb import KB

pytestmark = pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="no unix sockets")

QUERY = ("search", "rollback", "--json")
# what rules a start out, taken from the commands' environment unless a test sets it
RULED_OUT = (forward.OFF, autostart.OFF, *autostart.CI_VARIABLES, *autostart.HOOK_VARIABLES)


def auto_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in RULED_OUT}
    return {**env, **extra}


def vouch(
    kb: KB,
    *args: str,
    env: dict[str, str] | None = None,
    preexec: Callable[[], None] | None = None,
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-P", "-m", "vouch", *args],  # -P: as a console script runs
        cwd=kb.root,
        capture_output=True,
        text=True,
        env=auto_env() if env is None else env,
        preexec_fn=preexec,
        timeout=120,
        check=False,
    )


def cold(kb: KB, *args: str) -> subprocess.CompletedProcess[str]:
    return vouch(kb, *args, env=auto_env(VOUCH_NO_WARM="1"))


def serving(kb: KB) -> list[int]:
    """The pids of every `vouch warm serve` for this knowledge base (from /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                argv = fh.read().split(b"\0")
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if b"serve" in argv and os.fsencode(kb.dir) in argv and state != "Z":
            found.append(int(entry))
    return found


def status(kb: KB) -> dict[str, Any]:
    shown = vouch(kb, "warm", "status", "--json")
    assert shown.returncode == 0, shown.stderr
    data: dict[str, Any] = json.loads(shown.stdout)
    return data


def wait_for(check: Callable[[], Any], what: str, seconds: float = 60) -> Any:
    deadline = time.monotonic() + seconds
    while True:
        found = check()
        if found:
            return found
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def log_text(kb: KB) -> str:
    try:
        return (place(kb) / forward.LOG_NAME).read_text()
    except FileNotFoundError:
        return ""


def nothing_started(kb: KB) -> None:
    """No process, no socket, no stamp: a start was not even tried."""
    time.sleep(0.3)  # a process started in the background would be there by now
    assert serving(kb) == []
    assert not (place(kb) / forward.SOCKET_NAME).exists()
    assert not (place(kb) / autostart.STAMP_NAME).exists()


@pytest.fixture
def small(kb: KB) -> Iterator[KB]:
    """A small committed knowledge base; any warm process of it ended afterwards."""
    found = small_kb(kb)
    try:
        yield found
    finally:
        vouch(found, "warm", "stop")
        for pid in serving(found):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        wait_for(lambda: serving(found) == [], "a warm process outlived its test", 10)


def test_the_second_search_is_answered_by_the_process_the_first_started(small: KB) -> None:
    alone = cold(small, *QUERY)
    assert serving(small) == []
    first = vouch(small, *QUERY)
    assert (first.returncode, first.stdout, first.stderr) == (0, alone.stdout, alone.stderr)

    shown = wait_for(lambda: status(small)["running"] and status(small), "no process started")
    assert shown["auto_started"] is True and shown["requests"] == 0
    assert shown["idle_seconds"] == autostart.IDLE_SECONDS
    pid = shown["pid"]
    assert serving(small) == [pid]
    # detached: a session of its own, stdin from /dev/null, its output to its log, no
    # pipe of the command that started it (whose reader would wait for it otherwise)
    assert os.getsid(pid) == pid
    fds = {int(fd): os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")}
    assert fds[0] == os.devnull
    assert fds[1] == fds[2] == str(place(small) / forward.LOG_NAME)
    assert not [target for target in fds.values() if target.startswith("pipe:")]

    second = vouch(small, *QUERY)
    assert (second.returncode, second.stdout, second.stderr) == (0, alone.stdout, alone.stderr)
    again = status(small)
    assert (again["pid"], again["requests"]) == (pid, 1)  # the second went through it
    assert "started by a search" in log_text(small)
    human = vouch(small, "warm", "status", "--format", "human").stdout
    assert f"Warm process {pid}" in human and "started by a search" in human
    assert serving(small) == [pid]  # and started no other


def test_a_context_pack_starts_one_too_but_a_failed_search_does_not(small: KB) -> None:
    failed = vouch(small, "search", "rollback", "--top", "0")  # a usage error: exit 1
    assert failed.returncode == 1
    nothing_started(small)
    vouch(small, "context", "how do I roll back a release", "--json")
    wait_for(lambda: status(small)["running"], "no process started by `vouch context`")


EACH_RULED_OUT = (
    {"VOUCH_NO_WARM": "1"},
    {"VOUCH_NO_AUTO_WARM": "1"},
    {"CI": "1"},
    {"GITHUB_ACTIONS": "true"},
    {"JENKINS_URL": "https://ci.example.invalid/"},
    {"PYTEST_CURRENT_TEST": "tests/test_x.py::test_y (call)"},
    {"PRE_COMMIT": "1"},
)


def test_the_environment_rules_it_out(small: KB) -> None:
    """Each variable alone: the cold answer, nothing started, and status says why."""
    alone = cold(small, *QUERY)
    for extra in EACH_RULED_OUT:
        name = next(iter(extra))
        here = vouch(small, *QUERY, env=auto_env(**extra))
        assert (here.returncode, here.stdout, here.stderr) == (0, alone.stdout, alone.stderr)
        nothing_started(small)
        assert status(small)["running"] is False, name
        said = vouch(small, "warm", "status", "--json", env=auto_env(**extra)).stdout
        assert json.loads(said)["auto_start"] == "off", name
        assert name in json.loads(said)["auto_start_why"], name


def test_no_start_from_inside_a_git_hook(small: KB) -> None:
    """A pre-commit hook that searches: git runs it with GIT_INDEX_FILE and
    GIT_EXEC_PATH set; its search answers, cold, and starts nothing."""
    answer = small.root / "hook-answer.json"
    hook = small.root / ".git" / "hooks" / "pre-commit"
    hook.write_text(f"#!/bin/sh\nexec '{sys.executable}' -m vouch {' '.join(QUERY)} > '{answer}'\n")
    hook.chmod(0o755)
    (small.root / "notes.txt").write_text("a note\n")
    git(small.root, "add", "notes.txt")
    head = git(small.root, "rev-parse", "HEAD")
    done = subprocess.run(
        ["git", "commit", "-q", "-m", "a note"],
        cwd=small.root,
        env=auto_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert git(small.root, "rev-parse", "HEAD^") == head  # the hook ran, the commit went in
    assert json.loads(answer.read_text())["results"]  # its search answered
    nothing_started(small)


@pytest.mark.skipif(shutil.which("pre-commit") is None, reason="the pre-commit framework")
def test_no_start_from_the_pre_commit_framework(small: KB) -> None:
    """`pre-commit run` (here outside git: no hook variable of git's) marks its hooks
    with PRE_COMMIT=1."""
    answer = small.root / "hook-answer.json"
    (small.root / ".pre-commit-config.yaml").write_text(
        "repos:\n- repo: local\n  hooks:\n  - id: search\n    name: search\n"
        f"    entry: sh -c \"'{sys.executable}' -m vouch {' '.join(QUERY)} > '{answer}'\"\n"
        "    language: system\n    pass_filenames: false\n    always_run: true\n"
    )
    git(small.root, "add", ".pre-commit-config.yaml")
    env = auto_env(PRE_COMMIT_HOME=str(small.root.parent / "pre-commit-home"))
    done = subprocess.run(
        ["pre-commit", "run", "--all-files"],
        cwd=small.root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(answer.read_text())["results"]
    nothing_started(small)


def test_a_read_only_state_folder_means_no_attempt(small: KB) -> None:
    """A sandbox that may not write the git directory: the command's own answer, no
    error text, nothing made, nothing started."""
    preexec = _unprivileged()
    state = place(small).parent
    state.mkdir(mode=0o700, exist_ok=True)
    shutil.rmtree(place(small), ignore_errors=True)
    state.chmod(0o555)
    try:
        alone = vouch(small, *QUERY, env=auto_env(VOUCH_NO_WARM="1"), preexec=preexec)
        for _ in range(2):
            here = vouch(small, *QUERY, preexec=preexec)
            assert (here.returncode, here.stdout, here.stderr) == (0, alone.stdout, alone.stderr)
        assert not place(small).exists()
        nothing_started(small)
    finally:
        state.chmod(0o700)


def _failing_start(kb: KB) -> None:
    """Where the socket goes, a folder: the process cannot bind it (as where a sandbox
    forbids it) and ends at once, saying so in its log."""
    (place(kb) / forward.SOCKET_NAME).mkdir(parents=True)


def _failures(kb: KB) -> int:
    return log_text(kb).count("error[E105]: cannot bind the warm process's socket")


def test_a_failed_start_is_not_tried_again_within_the_backoff(small: KB) -> None:
    _failing_start(small)
    alone = cold(small, *QUERY)
    first = vouch(small, *QUERY)
    assert (first.returncode, first.stdout, first.stderr) == (0, alone.stdout, alone.stderr)
    stamp = place(small) / autostart.STAMP_NAME
    assert stamp.is_file()  # written before the attempt
    wait_for(lambda: _failures(small) == 1, "the failed start left no word in its log")
    wait_for(lambda: serving(small) == [], "the process that could not bind lives on")
    tried = os.stat(stamp).st_mtime_ns

    for _ in range(3):
        here = vouch(small, *QUERY)
        assert (here.returncode, here.stdout, here.stderr) == (0, alone.stdout, alone.stderr)
    time.sleep(0.5)
    assert serving(small) == [] and _failures(small) == 1  # not tried again
    assert os.stat(stamp).st_mtime_ns == tried
    shown = status(small)
    assert shown["auto_start"] == "held_off" and "did not end cleanly" in shown["auto_start_why"]

    past = time.time() - autostart.BACKOFF_SECONDS - 1  # the backoff is over
    os.utime(stamp, (past, past))
    vouch(small, *QUERY)
    wait_for(lambda: _failures(small) == 2, "no second attempt after the backoff")


def test_it_exits_after_its_idle_time_and_the_next_search_starts_one(small: KB) -> None:
    env = auto_env(**{autostart.IDLE: "1"})
    vouch(small, *QUERY, env=env)
    pid = wait_for(lambda: serving(small), "no process started")[0]
    wait_for(lambda: serving(small) == [], "it outlived its idle second", 30)
    assert "no request for 1 s: exiting" in log_text(small)
    assert not (place(small) / forward.SOCKET_NAME).exists()
    assert not (place(small) / autostart.STAMP_NAME).exists()  # ended cleanly
    assert status(small)["auto_start"] == "on"

    vouch(small, *QUERY)  # the default idle time this time
    shown = wait_for(lambda: status(small)["running"] and status(small), "not started again")
    assert shown["pid"] != pid and shown["idle_seconds"] == autostart.IDLE_SECONDS


def test_a_stop_holds_automatic_starts_off(small: KB) -> None:
    vouch(small, *QUERY)
    pid = wait_for(lambda: status(small)["running"] and status(small), "not started")["pid"]
    stopped = json.loads(vouch(small, "warm", "stop", "--json").stdout)
    assert (stopped["stopped"], stopped["pid"]) == (True, pid)
    assert "auto_start_until" in stopped
    wait_for(lambda: serving(small) == [], "it did not stop")
    vouch(small, *QUERY)
    time.sleep(0.3)
    assert serving(small) == []
    shown = status(small)
    assert shown["auto_start"] == "held_off" and "vouch warm stop" in shown["auto_start_why"]
    # by hand, it still starts
    started = vouch(small, "warm", "start", "--json", "--idle-seconds", "60")
    assert started.returncode == 0 and json.loads(started.stdout)["auto_started"] is False


def test_two_searches_at_once_start_one_process(small: KB) -> None:
    env = auto_env()
    children = [
        subprocess.Popen(
            [sys.executable, "-m", "vouch", *QUERY],
            cwd=small.root,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for _ in range(3)
    ]
    assert [c.wait(timeout=120) for c in children] == [0, 0, 0]
    wait_for(lambda: status(small)["running"], "none started")
    time.sleep(0.5)
    assert len(serving(small)) == 1
    assert "already serves" not in log_text(small)


def test_the_stamp_and_folder_are_never_followed_through_a_link(small: KB, tmp_path: Path) -> None:
    """A warm folder that is a link (made by anyone) is not used: nothing is written
    through it, nothing started."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    place(small).parent.mkdir(mode=0o700, exist_ok=True)
    shutil.rmtree(place(small), ignore_errors=True)
    place(small).symlink_to(elsewhere)
    here = vouch(small, *QUERY)
    assert here.returncode == 0 and here.stderr == ""
    time.sleep(0.3)
    assert serving(small) == [] and list(elsewhere.iterdir()) == []
    assert stat.S_ISLNK(os.lstat(place(small)).st_mode)


def test_a_process_serving_another_environment_is_not_doubled(small: KB) -> None:
    """A warm process started with other values (here VOUCH_AGENT) refuses this search,
    which runs cold; it holds the lock, so no second process is started beside it."""
    other = auto_env(VOUCH_AGENT="someone-else")
    started = vouch(small, "warm", "start", "--json", "--idle-seconds", "60", env=other)
    assert started.returncode == 0, started.stderr
    pid = json.loads(started.stdout)["pid"]
    alone = cold(small, *QUERY)
    here = vouch(small, *QUERY)
    assert (here.returncode, here.stdout, here.stderr) == (0, alone.stdout, alone.stderr)
    time.sleep(0.5)
    assert serving(small) == [pid]
    assert not (place(small) / autostart.STAMP_NAME).exists()


def test_the_test_suites_own_commands_start_none(small: KB) -> None:
    """Hermetic: a search run the way every other test runs one (this process's
    environment: conftest's VOUCH_NO_AUTO_WARM, pytest's PYTEST_CURRENT_TEST) leaves no
    warm process behind; so does one whose environment lost VOUCH_* on the way."""
    assert os.environ.get(autostart.OFF) and os.environ.get("PYTEST_CURRENT_TEST")
    here = vouch(small, *QUERY, env=dict(os.environ))
    assert here.returncode == 0, here.stderr
    stripped = {k: v for k, v in os.environ.items() if not k.startswith("VOUCH_")}
    assert vouch(small, *QUERY, env=stripped).returncode == 0
    nothing_started(small)


@pytest.mark.parametrize(("raw", "idle"), [("5", 5), ("0", 600), ("x", 600), ("86401", 600)])
def test_the_idle_time_of_one_a_search_starts(
    monkeypatch: pytest.MonkeyPatch, raw: str, idle: int
) -> None:
    monkeypatch.setenv(autostart.IDLE, raw)  # 0 would be "never": not for these
    assert autostart.idle_seconds() == idle


def test_a_long_log_is_begun_again_at_a_start(small: KB) -> None:
    place(small).mkdir(parents=True)
    log = place(small) / forward.LOG_NAME
    log.write_bytes(b"old line\n" * (autostart.LOG_BYTES // 9 + 1))
    vouch(small, *QUERY)
    wait_for(lambda: status(small)["running"], "no process started")
    assert log.stat().st_size < 4096 and "started by a search" in log.read_text()


def test_a_repositorys_own_modules_never_run_in_the_warm_process(small: KB) -> None:
    """A repository that commits a `vouch/` package and a `click.py`: the process a
    search starts in its work tree imports neither (`-P`: the folder is not on the
    module path). The client runs with -P, as a console script does (`vouch`)."""
    root = small.root
    marker = root.parent / "ran"
    (root / "vouch").mkdir()
    (root / "vouch" / "__init__.py").write_text(f"open({str(marker)!r}, 'a').write('pkg')\n")
    (root / "vouch" / "__main__.py").write_text(f"open({str(marker)!r}, 'a').write('main')\n")
    (root / "click.py").write_text(f"open({str(marker)!r}, 'a').write('click')\n")
    git(root, "add", "vouch", "click.py")
    git(root, "commit", "-qm", "a hostile repository's files")
    done = vouch(small, *QUERY)
    assert done.returncode == 0, done.stderr
    wait_for(lambda: status(small)["running"], "no process started")
    assert not marker.exists()


def test_a_deleted_knowledge_base_ends_its_process(small: KB) -> None:
    """A scratch repository removed after a search: its process goes with it, not
    after its idle time."""
    vouch(small, *QUERY, env=auto_env())
    wait_for(lambda: status(small)["running"], "no process started")
    assert serving(small)
    shutil.rmtree(small.root)
    wait_for(lambda: serving(small) == [], "it outlived its knowledge base", 15)
    small.root.mkdir()  # where the fixture's clean-up runs `vouch warm stop`


def test_asking_its_status_does_not_keep_it_alive(small: KB) -> None:
    """`vouch warm status` polled more often than the idle time: the process still
    exits when no command ran for that long (sixth outsider sitting)."""
    env = auto_env(**{autostart.IDLE: "1"})
    vouch(small, *QUERY, env=env)
    wait_for(lambda: serving(small), "no process started")
    deadline = time.monotonic() + 20
    while serving(small) and time.monotonic() < deadline:
        vouch(small, "warm", "status", "--json")
        time.sleep(0.2)
    assert serving(small) == []
    assert "no request for 1 s: exiting" in log_text(small)
