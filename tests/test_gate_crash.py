"""Kills at every point of a write, each followed by an ordinary `git commit`.

A forked child runs the real command with a line tracer over the write path (the gate's
decisions, the landing, the git layer) and SIGKILLs itself right after one of the
things it does to the file system (`kill_points`: one undisturbed run lists them — the
write lock, each temporary file, each rename, the landing journal, the index, the refs —
and each round kills after the next). The user then does what users do — `git commit` —
and runs the command again. Nothing may be lost: the approval (or the source) ends up
on the branch exactly once, with its decision record and audit events, the work tree
clean.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
from conftest import git
from gate_support import BOB, PERSON, branches, propose_claim, vouch_proc
from kill_points import kill_points, run_killed_after

import vouch
from vouch.cli import main
from vouch.gate import provenance, records
from vouch.kinds import claim, source
from vouch.store import audit
from vouch.store.kb import KB

PACKAGE = Path(vouch.__file__).parent
WRITE_PATH = tuple(
    str(PACKAGE / p)
    for p in (
        "store/landing.py",
        "store/recovery.py",
        "store/writer.py",
        "store/sources.py",
        "git",
        "gate/decide.py",
    )
)


def _run_killed_at(root: Path, args: list[str], line: int | None) -> int:
    """Run `vouch ARGS` in a forked child, SIGKILLed at the `line`th traced line (None:
    never); returns the number of traced lines the child executed (when not killed)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        os.close(read)
        count = 0

        def tracer(frame: FrameType, event: str, arg: Any) -> Callable[..., Any] | None:
            nonlocal count
            if not frame.f_code.co_filename.startswith(WRITE_PATH):
                return None
            if event == "line":
                count += 1
                if count == line:
                    os.kill(os.getpid(), signal.SIGKILL)
            return tracer

        try:
            os.chdir(root)
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            sys.settrace(tracer)
            main(args)
            sys.settrace(None)
            os.write(write, str(count).encode())
        finally:
            os._exit(0)
    os.close(write)
    _, status = os.waitpid(pid, 0)
    out = os.read(read, 64)
    os.close(read)
    if os.WIFSIGNALED(status):
        assert os.WTERMSIG(status) == signal.SIGKILL
        return 0
    return int(out or b"0")


def _user_commits(root: Path) -> None:
    """An ordinary `git commit` of whatever is staged (it may have nothing to commit)."""
    import subprocess

    subprocess.run(["git", "commit", "-qm", "my own work"], cwd=root, capture_output=True)


def _approval_intact(kb: KB, pid: str, text: str) -> list[str]:
    problems = []
    cid = claim.KIND.make_id({"text": text})
    tree = git(kb.root, "ls-tree", "-r", "--name-only", "HEAD", "--", ".vouch").split()
    if f".vouch/{claim.path_for(cid)}" not in tree:
        problems.append("claim not on the branch")
    elif (kb.read(claim.KIND, cid) or {}).get("approved_by") != PERSON:
        problems.append("claim without approved_by")
    if f".vouch/{records.decided_path(pid)}" not in tree:
        problems.append("no decision record")
    approvals = [e for e in audit.query(kb.dir, event="proposal.approve") if pid in e["object_ids"]]
    if len(approvals) != 1:
        problems.append(f"{len(approvals)} approve events")
    if f"refs/heads/vouch/proposal/{pid}" in branches(kb.root):
        problems.append("proposal branch left")
    if git(kb.root, "status", "--porcelain", "--untracked-files=all"):
        problems.append("work tree not clean: " + git(kb.root, "status", "--porcelain"))
    return problems


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_approve_killed_at_every_point_loses_nothing(kb_with_sources: KB, run_cli) -> None:
    kb = kb_with_sources
    # undisturbed runs: the first makes the folders approvals write in, the second lists
    # what an approval does to the file system
    # (named as the rounds' claims are: the file names it writes have the same shape)
    for text in ("Approval under fire 1000", "Approval under fire 1001"):
        pid = propose_claim(kb, text)
        points = kill_points(kb.root, ["approve", pid, "--as", BOB], WRITE_PATH)
        assert not _approval_intact(kb, pid, text)
    assert len(points) > 10
    assert "git update-ref" in points  # the refs move last: the whole landing is walked
    lost = []
    for n, point in enumerate(points):
        text = f"Approval under fire {n}"
        pid = propose_claim(kb, text)
        killed = run_killed_after(kb.root, ["approve", pid, "--as", BOB], point, WRITE_PATH)
        assert killed.get("killed") == point, (point, killed)
        _user_commits(kb.root)
        res = run_cli("approve", pid, "--as", BOB, cwd=kb.root)
        assert res.code in (0, 1) and "Traceback" not in res.err, res.err
        assert res.code == 0 or "already approved" in res.err, res.err
        problems = _approval_intact(kb, pid, text)
        if problems:
            lost.append((n, point, killed["at"], problems))
    assert lost == []
    assert provenance.verify(kb)["ok"], provenance.verify(kb)["issues"]


def _sources_measured(kb: KB) -> list[str]:
    """Two undisturbed `source add` runs (the first makes .vouch/sources), committed: the
    kill points of the second."""
    for name in ("first.txt", "measure.txt"):
        (kb.root / name).write_text(f"{name}\n")
        points = kill_points(kb.root, ["source", "add", name], WRITE_PATH)
    git(kb.root, "add", "first.txt", "measure.txt")
    git(kb.root, "commit", "-qm", "measure")
    return points


def _source_add_killed(kb: KB, run_cli, n: int, point: str) -> None:
    """A committed document; `source add` of it killed at `point`; the user's commit;
    `source add` again: the source is on the branch, the work tree clean."""
    name = f"doc{n}.txt"
    (kb.root / name).write_text(f"document {n}\n")
    git(kb.root, "add", name)
    git(kb.root, "commit", "-qm", f"add {name}")
    killed = run_killed_after(kb.root, ["source", "add", name], point, WRITE_PATH)
    assert killed.get("killed") == point, (point, killed)
    _user_commits(kb.root)
    res = run_cli("source", "add", name, "--json", cwd=kb.root)
    assert res.code == 0, res.err
    sid = res.json()["id"]
    tree = git(kb.root, "ls-tree", "-r", "--name-only", "HEAD", "--", ".vouch/sources")
    assert f"{sid}/meta.yaml" in tree and f"{sid}/content.txt" in tree, (n, point)
    assert kb.read(source.KIND, sid) is not None
    assert git(kb.root, "status", "--porcelain", "--untracked-files=all") == "", (n, point)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_source_add_killed_at_every_point_loses_nothing(kb: KB, run_cli) -> None:
    points = _sources_measured(kb)
    # among them the index write and the ref update: a person's `git commit` between
    # them takes the staged landing, which the next `source add` finds committed — it
    # finishes the landing first (found by these points; `recovery` before HEAD is read)
    assert len(points) > 5 and {"os.rename .git/index.lock", "git update-ref"} <= set(points)
    for n, point in enumerate(points):
        _source_add_killed(kb, run_cli, n, point)
    registered = [e for e in audit.query(kb.dir, event="source.register")]
    assert len({tuple(e["object_ids"]) for e in registered}) == n + 3  # with the measured
    assert provenance.verify(kb)["ok"], provenance.verify(kb)["issues"]
    # a source a killed `source add` staged and the person then committed is registered
    # (its audit event came in the same commit); one added by hand is not
    lint = run_cli("lint", "--json", cwd=kb.root).json()
    assert [i for i in lint["issues"] if i["kind"] == "not-registered"] == [], lint["issues"]


def test_a_killed_source_add_then_git_commit_is_registered(kb: KB, run_cli) -> None:
    """The source's files and its audit event arrive in the person's own commit: lint
    takes it as registered (one added by hand, with no event, is not: test_lint)."""
    import subprocess

    (kb.root / "doc.md").write_text("a document\n")
    killed = subprocess.run(
        [sys.executable, "-m", "vouch", "source", "add", "doc.md"],
        cwd=kb.root,
        env={**os.environ, "VOUCH_FAULT": "staged"},
        capture_output=True,
    )
    assert killed.returncode == 86  # died after staging its files, before its commit
    _user_commits(kb.root)
    assert "my own work" in git(kb.root, "log", "-1", "--format=%s")
    report = run_cli("lint", "--json", cwd=kb.root).json()
    assert report["issues"] == [] and report["checked"]["objects"] == 1, report


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
@pytest.mark.parametrize("verb", ["reject", "propose-claim"])
def test_reject_and_propose_killed_at_every_point(kb_with_sources: KB, run_cli, verb: str) -> None:
    kb = kb_with_sources
    sid = run_cli("list", "sources", "--json", cwd=kb.root).json()["items"][0]["id"]

    def args(n: int, pid: str) -> list[str]:
        if verb == "reject":
            return ["reject", pid, "--reason", "not now", "--as", BOB]
        return ["propose-claim", "--text", f"Proposed under fire {n}", "--source", sid]

    for n in (-2, -1):  # the first makes the folders, the second is measured
        points = kill_points(kb.root, args(n, propose_claim(kb, f"measure {n}")), WRITE_PATH)
    assert len(points) > 5
    for n, point in enumerate(points):
        pid = propose_claim(kb, f"Rejected under fire {n}") if verb == "reject" else ""
        killed = run_killed_after(kb.root, args(n, pid), point, WRITE_PATH)
        assert killed.get("killed") == point, (point, killed)
        _user_commits(kb.root)
        res = run_cli(*args(n, pid), "--json", cwd=kb.root)
        if verb == "reject":
            assert res.code == 0 or "already rejected" in res.err, res.err
            assert git(kb.root, "for-each-ref", f"refs/vouch/rejected/{pid}").strip()
            assert f"refs/heads/vouch/proposal/{pid}" not in branches(kb.root)
        else:
            assert res.code == 0, res.err
        assert git(kb.root, "status", "--porcelain", "--untracked-files=all") == "", n
    if verb == "propose-claim":  # each claim is pending exactly once
        pending = run_cli("pending", "--limit", "100", "--json", cwd=kb.root).json()
        titles = [p["title"] for p in pending if p["title"].startswith("Proposed under")]
        assert len(titles) == len(set(titles)) == len(points) + 2  # with the measuring runs
    assert provenance.verify(kb)["ok"], provenance.verify(kb)["issues"]


def test_a_killed_approval_is_undone_when_the_user_committed_other_work(
    kb_with_sources: KB,
) -> None:
    """Killed after the files and the index, before the refs; the user commits other
    work only. The next write undoes the landing (the branch moved without it), and the
    approval run again lands exactly once, the work tree clean."""
    kb = kb_with_sources
    pid = propose_claim(kb, "Approved twice over")
    killed = vouch_proc(kb.root, "approve", pid, "--as", BOB, env={"VOUCH_FAULT": "staged"})
    assert killed.returncode == 86, killed.stderr
    (kb.root / "notes.txt").write_text("mine\n")
    git(kb.root, "add", "notes.txt")
    git(kb.root, "commit", "-qm", "my own work", "--", "notes.txt")
    again = vouch_proc(kb.root, "approve", pid, "--as", BOB)
    assert again.returncode == 0, again.stderr
    assert _approval_intact(kb, pid, "Approved twice over") == []
    assert provenance.verify(kb)["ok"], provenance.verify(kb)["issues"]
