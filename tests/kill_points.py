"""Kill points chosen by what a write has done, not at random.

What a process killed with SIGKILL leaves behind is exactly what it did to the file
system before it died: the files it created, wrote, renamed, removed, the git commands
it ran. Python reports each such operation to an audit hook (`sys.addaudithook`), so a
forked child that runs the real command can name each one — its *effect*, shaped so that
ids, hashes, pids and random names do not count ("open .git/objects/XX/tmp_obj_vouch_N_N",
"os.rename .vouch/claims/XX/.approval-under-fire-N-H.yaml.H.tmp", "git update-ref").

A kill point is "right after the first time the command did EFFECT" (or `START`: at its
first traced line, before anything): the child runs untraced, at full speed, until its
target effect, then SIGKILLs itself at the first traced line after it. One kill after
each distinct effect of an undisturbed run reaches every state a kill at a random line
can leave, up to which of several like effects came last (a random line falls after
some effect; between two effects only a file just opened fills), the landing's late steps
included, which random lines over a run whose length grows with the repository rarely
reached. Loose objects written and not yet referenced change nothing anyone reads.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from types import FrameType
from typing import Any

from vouch.cli import main

START = "start"  # a kill at the first traced line, before any effect

# operations that change the file system, as the audit events name them
_FS_EVENTS = frozenset(
    (
        "os.rename",  # os.replace too
        "os.remove",  # os.unlink too
        "os.mkdir",
        "os.rmdir",
        "os.chmod",
        "os.truncate",
        "os.link",
        "os.symlink",
        "shutil.rmtree",
    )
)
_WRITING = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
# git commands that only read (their runs change nothing a kill could leave half done)
_READING_GIT = frozenset(
    (
        "cat-file",
        "check-attr",
        "check-ignore",
        "config",
        "diff",
        "diff-files",
        "diff-index",
        "diff-tree",
        "for-each-ref",
        "log",
        "ls-files",
        "ls-tree",
        "merge-base",
        "rev-list",
        "rev-parse",
        "show",
        "show-ref",
        "var",
        "version",
    )
)


def _shape(path: Any, root: str) -> str | None:
    """`path` inside the repository with its varying parts named: a two-hex-digit fan-out
    folder XX, a hex run of six or more H, any other number N. None outside it (such as
    the bytecode a first import compiles)."""
    text = os.fsdecode(path) if isinstance(path, (str, bytes, os.PathLike)) else str(path)
    if os.path.isabs(text):
        if not text.startswith(root + os.sep):
            return None
        text = text[len(root) + 1 :]
    parts = []
    for part in text.split("/"):
        if re.fullmatch(r"[0-9a-f]{2}", part):
            parts.append("XX")
        else:
            parts.append(re.sub(r"\d+", "N", re.sub(r"[0-9a-f]{6,}", "H", part)))
    return "/".join(parts)


def effect(event: str, args: tuple[Any, ...], root: str) -> str | None:
    """The effect an audit event stands for, or None when it changes nothing."""
    if event == "open":
        path, mode, flags = args
        if isinstance(path, int) or path == os.devnull:
            return None  # a descriptor already open, or the null device
        writes = any(c in mode for c in "wax+") if isinstance(mode, str) else False
        if not writes and not (isinstance(flags, int) and flags & _WRITING):
            return None
        shape = _shape(path, root)
        return None if shape is None else f"open {shape}"
    if event in _FS_EVENTS and args:
        shape = _shape(args[0], root)
        return None if shape is None else f"{event} {shape}"
    if event == "subprocess.Popen":
        argv = [os.fsdecode(a) for a in args[1]]
        if argv and Path(argv[0]).name == "git":
            words = [a for a in argv[1:] if not a.startswith("-") and "=" not in a]
            verb = words[0] if words else "?"
            return None if verb in _READING_GIT else f"git {verb}"
        return f"run {Path(argv[0]).name}" if argv else "run"
    return None


def run_killed_after(
    root: Path, args: Sequence[str], target: str | None, traced: tuple[str, ...]
) -> dict[str, Any]:
    """Run `vouch ARGS` in `root` in a forked child, with a line tracer over the files
    `traced` starts with; SIGKILLed at the first traced line after its first `target`
    effect (`START`: at its first traced line; None: never).

    Returns {"killed": target, "at": "file:line"} when it was killed there, else
    {"effects": the distinct effects it did, in the order of their first time}."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        os.close(read)
        seen: list[str] = []
        here = os.path.realpath(root)

        def tracer(frame: FrameType, event: str, arg: Any) -> Callable[..., Any] | None:
            if not frame.f_code.co_filename.startswith(traced):
                return None
            if event == "line":
                where = f"{Path(frame.f_code.co_filename).name}:{frame.f_lineno}"
                os.write(write, json.dumps({"killed": target, "at": where}).encode())
                os.kill(os.getpid(), signal.SIGKILL)
            return tracer

        def arm() -> None:
            """Trace lines from here on: the frames running now and every new one (the
            command runs untraced, at full speed, until its target effect)."""
            sys.settrace(tracer)
            frame: FrameType | None = sys._getframe()
            while frame is not None:
                if frame.f_code.co_filename.startswith(traced):
                    frame.f_trace = tracer
                frame = frame.f_back

        def hook(event: str, event_args: tuple[Any, ...]) -> None:
            found = effect(event, event_args, here)
            if found is not None and found not in seen:
                seen.append(found)
                if found == target:
                    arm()

        try:
            os.chdir(root)
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            sys.addaudithook(hook)
            if target == START:
                sys.settrace(tracer)
            main(list(args))
            sys.settrace(None)
            os.write(write, json.dumps({"effects": seen}).encode())
        finally:
            os._exit(0)
    os.close(write)
    _, status = os.waitpid(pid, 0)
    chunks = []
    while chunk := os.read(read, 1 << 16):
        chunks.append(chunk)
    os.close(read)
    report: dict[str, Any] = json.loads(b"".join(chunks) or b"{}")
    if os.WIFSIGNALED(status):
        assert os.WTERMSIG(status) == signal.SIGKILL
        assert "killed" in report, report
    else:
        assert "effects" in report, report
    return report


def kill_points(root: Path, args: Sequence[str], traced: tuple[str, ...]) -> list[str]:
    """An undisturbed run of `vouch ARGS` (it runs to the end): `START` and each distinct
    effect it did, in order — where the rounds of a kill test kill it. Measure on a run
    like the rounds': one after the first of its kind, which also makes the folders
    (.vouch/decided, ...) every later run finds made."""
    return [START, *run_killed_after(root, args, None, traced)["effects"]]
