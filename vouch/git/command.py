"""Running git: the one place a `git` process starts, and its failures become ours.

Every failure becomes a `GitFailure` (exit 2) or a user error.
"""

import atexit
import os
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path

from vouch.errors import GitFailure

EMPTY_TREES = {  # the id of the empty tree, per object format
    "sha1": "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
    "sha256": "6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321",
}
EMPTY_TREE = EMPTY_TREES["sha1"]  # sha1 repositories only: ask `Repo.empty_tree`
_BASE_ENV = {"GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0"}


class GitCommandFailed(GitFailure):
    def __init__(self, args: list[str], returncode: int, stderr: str):
        self.args_ = args
        self.returncode = returncode
        self.stderr = stderr
        super().__init__(f"git {' '.join(args[:3])} failed ({returncode}): {stderr.strip()[:500]}")


def run(
    args: list[str],
    cwd: Path | str,
    *,
    input: bytes | str | None = None,
    env: Mapping[str, str] | None = None,
    check: bool = True,
) -> str:
    """Run `git args` in `cwd` and return stdout as text."""
    return run_bytes(args, cwd, input=input, env=env, check=check).decode("utf-8", "replace")


def run_bytes(
    args: list[str],
    cwd: Path | str,
    *,
    input: bytes | str | None = None,
    env: Mapping[str, str] | None = None,
    check: bool = True,
    started: Callable[[int], None] | None = None,
) -> bytes:
    full_env = {**os.environ, **_BASE_ENV, **(env or {})}
    data = input.encode() if isinstance(input, str) else input
    try:
        if started is None:
            proc = subprocess.run(
                ["git", *args], cwd=cwd, input=data, capture_output=True, env=full_env, check=False
            )
            out, err, code = proc.stdout, proc.stderr, proc.returncode
        else:  # the caller records the pid before git may take any lock
            child = subprocess.Popen(
                ["git", *args],
                cwd=cwd,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=full_env,
            )
            try:
                started(child.pid)
            finally:
                out, err = child.communicate(data)
            code = child.returncode
    except FileNotFoundError as exc:
        raise GitFailure("git is not installed or not on PATH") from exc
    if check and code != 0:
        raise GitCommandFailed(args, code, err.decode("utf-8", "replace"))
    return out


class Started:
    """A git process running in the background (`start`): the caller does other work —
    a cold search imports numpy and loads its model — while git uses another core, then
    reads the output with `output`."""

    def __init__(self, args: list[str], cwd: Path | str):
        self.args = args
        try:
            self._proc = subprocess.Popen(
                ["git", *args],
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env={**os.environ, **_BASE_ENV},
            )
        except FileNotFoundError as exc:
            raise GitFailure("git is not installed or not on PATH") from exc

    @property
    def returncode(self) -> int | None:
        return self._proc.returncode

    def output(self, *, check: bool = True) -> str:
        """Wait for git; its stdout as text (GitCommandFailed on failure with `check`)."""
        out, err = self._proc.communicate()
        if check and self._proc.returncode != 0:
            raise GitCommandFailed(self.args, self._proc.returncode, err.decode("utf-8", "replace"))
        return out.decode("utf-8", "replace")

    def close(self) -> None:
        """Stop it, when its answer is no longer wanted."""
        if self._proc.poll() is None:
            self._proc.kill()
        self._proc.communicate()


def start(args: list[str], cwd: Path | str) -> Started:
    """Start `git args` in `cwd` without waiting for it (read-only commands only); one
    `prestart` began with the same arguments in the same directory is taken over."""
    if _EARLY:
        early = _EARLY.pop((os.path.realpath(cwd), tuple(args)), None)
        if early is not None:
            return early
    return Started(args, cwd)


# git processes a cold command started before its imports (`vouch.cli.early`), waiting
# for the `start` that wants their answer; any left at exit are stopped
_EARLY: dict[tuple[str, tuple[str, ...]], Started] = {}


def prestart(args: list[str], cwd: Path | str) -> None:
    """Start `git args` now, for a later `start` with the same arguments and directory:
    a read-only command whose answer the caller will want once it has loaded itself.
    A failure to start is left for that `start` to meet and report."""
    key = (os.path.realpath(cwd), tuple(args))
    if key in _EARLY:
        return
    try:
        started = Started(args, cwd)
    except (GitFailure, OSError):
        return
    if not _EARLY:
        atexit.register(_abandon)
    _EARLY[key] = started


def _abandon() -> None:
    for started in _EARLY.values():
        started.close()
    _EARLY.clear()


def toplevel(path: Path) -> Path | None:
    """The work tree containing `path`, or None when it is not inside one."""
    probe = path if path.is_dir() else path.parent
    out = run(["rev-parse", "--show-toplevel"], probe, check=False).strip()
    return Path(out) if out else None


def inside_git_dir(path: Path) -> bool:
    """True inside a bare repository or a `.git` directory: no work tree to use there."""
    probe = path if path.is_dir() else path.parent
    return run(["rev-parse", "--is-inside-git-dir"], probe, check=False).strip() == "true"


def init_repo(path: Path, object_format: str | None = None) -> None:
    """`git init` in `path` (created when missing); `object_format`: sha1 or sha256."""
    path = path.resolve()  # relative, it would name a directory inside itself
    path.mkdir(parents=True, exist_ok=True)
    args = ["init", "-q"]
    if object_format:
        args.append(f"--object-format={object_format}")
    run([*args, str(path)], path)


def config_value(root: Path, key: str) -> str | None:
    out = run(["config", "--get", key], root, check=False).strip()
    return out or None


def outcome(args: list[str], cwd: Path | str) -> tuple[int, str]:
    """Run `git args` for its verdict: (exit status, stderr), never raising on failure
    (`git verify-tag` says what it found on stderr)."""
    full_env = {**os.environ, **_BASE_ENV}
    try:
        proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, env=full_env)
    except FileNotFoundError as exc:
        raise GitFailure("git is not installed or not on PATH") from exc
    return proc.returncode, proc.stderr.decode("utf-8", "replace")
