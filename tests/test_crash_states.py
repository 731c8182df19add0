"""Crash states are found and mended (issue 34, finding 7).

- An approval killed at any step, then an ordinary commit by the user (`git commit`,
  `git commit -am`, `git add -A && git commit`): the audit lines and the objects they
  record are committed together or not at all, and the next write ends with the
  approval exactly once.
- A commit that takes part of an unfinished landing is refused by the pre-commit hook,
  and a branch that records an approval without its object is reported by doctor.
- A vouch process killed (`kill -9`) while its `git update-ref` holds `HEAD.lock`,
  `refs/heads/<branch>.lock` and `packed-refs.lock`: doctor names each with the command
  that removes it, and the next vouch write removes them itself — but never while the
  git process that took them is alive.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import git
from gate_support import BOB, branches, head, propose_claim, vouch_forked

from vouch.gate import records
from vouch.kinds import claim
from vouch.store import audit, gitlocks, landing
from vouch.store.kb import KB

COMMITS = {
    "git commit": [["commit", "-qm", "my own work"]],
    "git commit -am": [["commit", "-qam", "my own work"]],
    "git add -A": [["add", "-A"], ["commit", "-qm", "my own work"]],
}


def _user(root: Path, how: str) -> None:
    for args in COMMITS[how]:
        subprocess.run(["git", *args], cwd=root, capture_output=True)


def _on_branch(kb: KB, pid: str, text: str, rev: str = "HEAD") -> dict[str, bool]:
    """What `rev` holds of the approval: the object, its decision record, its event."""
    files = set(git(kb.root, "ls-tree", "-r", "--name-only", rev, "--", ".vouch").split())
    cid = claim.KIND.make_id({"text": text})
    log = git(kb.root, "show", f"{rev}:.vouch/{audit.LOG_NAME}")
    events = [json.loads(line) for line in log.splitlines() if line.strip()]
    return {
        "object": f".vouch/{claim.path_for(cid)}" in files,
        "record": f".vouch/{records.decided_path(pid)}" in files,
        "event": any(e["event"] == "proposal.approve" and pid in e["object_ids"] for e in events),
    }


@pytest.mark.parametrize("how", list(COMMITS))
@pytest.mark.parametrize("step", [s for s in landing.STEPS if s not in ("merged",)])
def test_a_killed_approval_then_an_ordinary_commit_takes_all_or_nothing(
    kb_with_sources: KB, run_cli, step: str, how: str
) -> None:
    kb = kb_with_sources
    text = f"Killed at {step}, then {how}"
    base = head(kb.root)
    pid = propose_claim(kb, text)
    killed = vouch_forked(kb.root, "approve", pid, "--as", BOB, env={landing.FAULT_ENV: step})
    assert killed.returncode == 86, killed.stderr
    _user(kb.root, how)
    held = _on_branch(kb, pid, text)
    if step in ("objects", "index") and how != "git commit":
        # the new object is in the work tree, its records not yet (they appear together
        # within microseconds, after the index): a commit of the work tree may take the
        # object without its records — never records without their object — and the
        # next write lands the rest on top
        assert held["object"] or not (held["record"] or held["event"]), held
    else:
        assert len(set(held.values())) == 1, held  # all or nothing
    # doctor never sees a recorded approval whose object the branch lacks
    report = run_cli("doctor", "--json", cwd=kb.root).json()
    assert not [i for i in report["issues"] if i["kind"] == "approval-without-object"]
    # and the next write ends with the approval exactly once
    again = run_cli("approve", pid, "--as", BOB, cwd=kb.root)
    assert again.code == 0 or "already approved" in again.err, again.err
    assert _on_branch(kb, pid, text) == {"object": True, "record": True, "event": True}
    approvals = [e for e in audit.query(kb.dir, event="proposal.approve") if pid in e["object_ids"]]
    assert len(approvals) == 1
    assert f"refs/heads/vouch/proposal/{pid}" not in branches(kb.root)
    assert git(kb.root, "status", "--porcelain", "--untracked-files=all") == ""
    # and the history proves it: the approval is vouch's decision commit, the user's
    # commit keeps only its own work (the third outsider: a commit that took the whole
    # landing failed audit --verify, doctor and lint --since for good)
    for args in (("audit", "--verify", "--json"), ("lint", "--since", base, "--json")):
        res = run_cli(*args, cwd=kb.root)
        assert res.code == 0, (args, res.out, res.err)


def test_the_hook_refuses_a_commit_of_half_a_landing(kb_with_sources: KB, run_cli) -> None:
    """Killed with the landing written but the refs not moved; the user commits only the
    audit log (`git commit -- .vouch/audit.log.jsonl`): the pre-commit hook refuses it.
    Without the hook (`--no-verify`) the same commit lands, and doctor reports the
    approval without its object, naming the proposal and the commands that mend it."""
    kb = kb_with_sources
    text = "Half committed"
    pid = propose_claim(kb, text)
    assert run_cli("hooks", "install", cwd=kb.root).code == 0
    killed = vouch_forked(kb.root, "approve", pid, "--as", BOB, env={landing.FAULT_ENV: "staged"})
    assert killed.returncode == 86, killed.stderr
    before = head(kb.root)
    log = f".vouch/{audit.LOG_NAME}"
    refused = subprocess.run(
        ["git", "commit", "-m", "just the log", "--", log],
        cwd=kb.root,
        capture_output=True,
        text=True,
    )
    assert refused.returncode != 0 and "half-landing" in refused.stdout + refused.stderr
    assert head(kb.root) == before
    git(kb.root, "commit", "-qm", "just the log", "--no-verify", "--", log)
    assert _on_branch(kb, pid, text) == {"object": False, "record": False, "event": True}
    report = run_cli("doctor", "--json", cwd=kb.root).json()
    [found] = [i for i in report["issues"] if i["kind"] == "approval-without-object"]
    assert found["id"] == pid and f"vouch approve {pid}" in found["message"]
    assert "git revert" in found["message"] and report["ok"] is False


def test_doctor_reports_a_decision_record_without_its_object(kb_with_sources: KB, run_cli) -> None:
    """An approved decision record committed without the object (no audit event names
    it): reported too."""
    kb = kb_with_sources
    text = "Recorded, not there"
    pid = propose_claim(kb, text)
    assert run_cli("approve", pid, "--as", BOB, cwd=kb.root).code == 0
    assert not [
        i
        for i in run_cli("doctor", "--json", cwd=kb.root).json()["issues"]
        if i["kind"] == "approval-without-object"
    ]
    cid = claim.KIND.make_id({"text": text})
    git(kb.root, "rm", "-q", f".vouch/{claim.path_for(cid)}")
    git(kb.root, "commit", "-qm", "drop a claim by hand")
    report = run_cli("doctor", "--json", cwd=kb.root).json()
    [found] = [i for i in report["issues"] if i["kind"] == "approval-without-object"]
    assert found["id"] == pid
    # a decision record no audit event names (written by hand): judged on its own
    git(kb.root, "revert", "--no-edit", "HEAD")
    record = kb.dir / records.decided_path(pid)
    other = "20260101-000000-0badf00d"
    forged = kb.dir / records.decided_path(other)
    forged.parent.mkdir(parents=True, exist_ok=True)
    forged.write_text(
        record.read_text().replace(pid, other).replace(cid, claim.KIND.make_id({"text": "x"}))
    )
    git(kb.root, "add", str(forged))
    git(kb.root, "commit", "-qm", "a decision record by hand")
    report = run_cli("doctor", "--json", cwd=kb.root).json()
    found = [i["id"] for i in report["issues"] if i["kind"] == "approval-without-object"]
    assert found == [other]


# -- git's lock files left by a killed vouch ---------------------------------------------------
STOPPING_HOOK = """#!/bin/sh
# stops git update-ref once it holds its locks (the "prepared" state), for the test
if [ "$1" = prepared ] && [ -n "$VOUCH_TEST_STOP" ]; then
    echo $$ > "$VOUCH_TEST_STOP"
    kill -STOP $$
fi
exit 0
"""


def _stopped_in_update_ref(kb: KB, pid: str, tmp_path: Path) -> tuple[subprocess.Popen, int]:
    """`vouch approve` started in its own session and stopped inside `git update-ref`,
    which holds its lock files; returns the process and the hook's pid."""
    hook = kb.root / ".git" / "hooks" / "reference-transaction"
    hook.write_text(STOPPING_HOOK)
    hook.chmod(0o755)
    marker = tmp_path / "stopped.pid"
    proc = subprocess.Popen(
        [sys.executable, "-m", "vouch", "approve", pid, "--as", BOB],
        cwd=kb.root,
        env={**os.environ, "VOUCH_TEST_STOP": str(marker)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while not (marker.exists() and marker.read_text().strip()):
        assert proc.poll() is None and time.monotonic() < deadline, "never reached update-ref"
        time.sleep(0.02)
    hook.unlink()
    return proc, int(marker.read_text())


def _gone(pid: int) -> bool:
    """Dead: no such process, or a zombie nobody reaped (in a container without init)."""
    try:
        return Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0] == b"Z"
    except FileNotFoundError:
        return True


def _locks(kb: KB) -> list[str]:
    git_dir = kb.root / ".git"
    return sorted(str(p.relative_to(git_dir)) for p in gitlocks.present(kb))


def test_locks_of_a_vouch_killed_inside_update_ref_are_reported_and_removed(
    kb_with_sources: KB, run_cli, tmp_path: Path
) -> None:
    kb = kb_with_sources
    text = "Approved across a kill -9"
    pid = propose_claim(kb, text)
    git(kb.root, "pack-refs", "--all")  # the proposal's deletion then takes packed-refs.lock
    main = git(kb.root, "symbolic-ref", "--short", "HEAD").strip()
    proc, _ = _stopped_in_update_ref(kb, pid, tmp_path)
    os.killpg(proc.pid, signal.SIGKILL)  # vouch, its git and the hook, as a kill -9 of the job
    proc.wait(timeout=30)
    time.sleep(0.2)
    left = ["HEAD.lock", "packed-refs.lock", f"refs/heads/{main}.lock"]
    left.append(f"refs/heads/vouch/proposal/{pid}.lock")
    left.append(f"refs/vouch/reviewed/{pid}.lock")  # the pin the approval drops
    # git 2.39 also leaves the packed refs it was writing (`packed-refs.new`)
    assert set(left) <= set(_locks(kb)) <= {*left, "packed-refs.new"}
    left = _locks(kb)
    # every git write fails meanwhile (what the user saw: E202 from every vouch write)
    probe = ["git", "commit", "-q", "--allow-empty", "-m", "probe"]
    assert subprocess.run(probe, cwd=kb.root, capture_output=True).returncode
    report = run_cli("doctor", "--json", cwd=kb.root)
    stale = [i for i in report.json()["issues"] if i["kind"] == "stale-git-lock"]
    assert report.code == 1 and len(stale) == len(left)
    assert all("rm '" in i["message"] and "vouch init" in i["message"] for i in stale)
    assert {m for i in stale for m in left if m in i["message"]} == set(left)
    # the next vouch write removes them and finishes the approval
    again = run_cli("approve", pid, "--as", BOB, cwd=kb.root)
    assert again.code == 0 or "already approved" in again.err, again.err
    assert _locks(kb) == []
    assert _on_branch(kb, pid, text) == {"object": True, "record": True, "event": True}
    assert git(kb.root, "status", "--porcelain", "--untracked-files=all") == ""
    assert not [
        i
        for i in run_cli("doctor", "--json", cwd=kb.root).json()["issues"]
        if i["kind"] in ("stale-git-lock", "git-lock", "interrupted-landing")
    ]


def test_locks_a_live_git_holds_are_never_removed(
    kb_with_sources: KB, run_cli, tmp_path: Path
) -> None:
    """Only vouch is killed; its `git update-ref` lives on (stopped), holding its locks.
    The next write must not take them from it: it fails (git cannot lock) and leaves
    every lock; once that git is gone, the next write removes them."""
    kb = kb_with_sources
    text = "Its git outlives it"
    pid = propose_claim(kb, text)
    proc, hook_pid = _stopped_in_update_ref(kb, pid, tmp_path)
    os.kill(proc.pid, signal.SIGKILL)  # vouch only
    proc.wait(timeout=30)
    held = _locks(kb)
    assert "HEAD.lock" in held
    res = run_cli("approve", pid, "--as", BOB, cwd=kb.root)
    assert res.code == 2 and "E202" in res.err and "Traceback" not in res.err, res.err
    assert _locks(kb) == held
    report = run_cli("doctor", "--json", cwd=kb.root).json()
    assert not [i for i in report["issues"] if i["kind"] == "stale-git-lock"]
    os.killpg(proc.pid, signal.SIGKILL)  # now its git and the hook too
    time.sleep(0.3)
    assert _gone(hook_pid)
    again = run_cli("approve", pid, "--as", BOB, cwd=kb.root)
    assert again.code == 0 or "already approved" in again.err, again.err
    assert _locks(kb) == []
    assert _on_branch(kb, pid, text) == {"object": True, "record": True, "event": True}


def test_a_lock_no_vouch_took_is_reported_not_removed(kb_with_sources: KB, run_cli) -> None:
    """`HEAD.lock` made by someone else (no record of vouch's): the write fails with
    E202 and leaves it; doctor warns about it once it is a minute old, with `rm`."""
    kb = kb_with_sources
    lock = kb.root / ".git" / "HEAD.lock"
    lock.write_text("")
    pid = propose_claim(kb, "Waits for someone else's lock")
    res = run_cli("approve", pid, "--as", BOB, cwd=kb.root)
    assert res.code == 2 and "E202" in res.err and lock.exists()
    report = run_cli("doctor", "--json", cwd=kb.root).json()
    assert not [i for i in report["issues"] if i["kind"] in ("git-lock", "stale-git-lock")]
    old = time.time() - 600
    os.utime(lock, (old, old))
    report = run_cli("doctor", "--json", cwd=kb.root).json()
    [found] = [i for i in report["issues"] if i["kind"] == "git-lock"]
    assert f"rm '{lock}'" in found["message"] and found["severity"] == "warn"
    assert lock.exists()


@pytest.mark.parametrize("made", ["before the record", "long after the record"])
def test_a_lock_outside_the_records_window_is_left(kb_with_sources: KB, run_cli, made: str) -> None:
    """A record of a dead vouch names `HEAD.lock`, but the lock there was made before
    that vouch started (someone else's) or long after it died: not vouch's, left alone."""
    kb = kb_with_sources
    dead = subprocess.Popen(["true"])
    dead.wait()
    lock = kb.root / ".git" / "HEAD.lock"
    lock.write_text("")
    at = time.time()
    when = at - 600 if made == "before the record" else at + 600
    os.utime(lock, (when, when))
    record = {"pid": dead.pid, "children": [], "locks": [str(lock)], "at": at}
    (kb.state_dir / gitlocks.OWNER.format(pid=dead.pid)).write_text(json.dumps(record))
    pid = propose_claim(kb, "Not past someone else's lock")
    res = run_cli("approve", pid, "--as", BOB, cwd=kb.root)
    assert res.code == 2 and "E202" in res.err and lock.exists(), res.err


KILLING_HOOK = """#!/bin/sh
# `git update-ref` holds its locks while it runs this hook: kill it alone (kill -9),
# as the third outsider did with strace, and leave vouch alive
if [ "$1" = "prepared" ]; then
    kill -9 $PPID
fi
exit 0
"""


def test_a_git_killed_alone_inside_update_ref_leaves_no_lock(kb_with_sources: KB, run_cli) -> None:
    """Before, its HEAD.lock, main.lock and packed-refs.lock stayed: vouch lived on and
    removed its record, doctor said ok, and every git write failed (E202) for good."""
    kb = kb_with_sources
    text = "Approved after its git was killed"
    pid = propose_claim(kb, text)
    hook = kb.root / ".git" / "hooks" / "reference-transaction"
    hook.write_text(KILLING_HOOK)
    hook.chmod(0o755)
    killed = run_cli("approve", pid, "--as", BOB, cwd=kb.root)
    hook.unlink()
    assert killed.code == 2 and "Traceback" not in killed.err, killed.err
    assert _locks(kb) == []
    probe = ["git", "commit", "-q", "--allow-empty", "-m", "probe"]
    assert subprocess.run(probe, cwd=kb.root, capture_output=True).returncode == 0
    again = run_cli("approve", pid, "--as", BOB, cwd=kb.root)
    assert again.code == 0 or "already approved" in again.err, again.err
    assert _on_branch(kb, pid, text) == {"object": True, "record": True, "event": True}


def test_a_branch_checked_out_in_another_work_tree_is_not_landed_on(
    kb_with_sources: KB, run_cli, tmp_path: Path
) -> None:
    """The fourth outsider: with main checked out in a linked work tree, an approval run
    from another branch moved main and left that work tree behind; its next ordinary
    commit deleted the approved claim, its record and its audit lines. Git refuses to
    move such a branch; so does vouch, and from that work tree the approval lands."""
    kb = kb_with_sources
    main = git(kb.root, "symbolic-ref", "--short", "HEAD").strip()
    text = "Approved from the right work tree"
    pid = propose_claim(kb, text)
    git(kb.root, "checkout", "-qb", "feature")
    linked = tmp_path / "linked"
    git(kb.root, "worktree", "add", "-q", str(linked), main)
    before = git(kb.root, "rev-parse", main)
    res = run_cli("approve", pid, "--as", BOB, cwd=kb.root)
    assert res.code == 1 and "E105" in res.err and str(linked) in res.err, res.err
    assert git(kb.root, "rev-parse", main) == before
    res = run_cli("approve", pid, "--as", BOB, cwd=linked)
    assert res.code == 0, res.err
    assert git(linked, "status", "--porcelain", "--untracked-files=all") == ""
    assert _on_branch(kb, pid, text, main) == {"object": True, "record": True, "event": True}
