"""Writers in one clone: the lock, parallel proposers, racing approvers, crashes."""

from __future__ import annotations

import subprocess

import pytest
from conftest import git
from gate_support import (
    BOB,
    PERSON,
    a_source,
    branches,
    call,
    head,
    make_user_mess,
    propose_claim,
    user_state,
    vouch_forked,
    vouch_proc,
)

from vouch.gate import records
from vouch.kinds import claim
from vouch.store import audit, landing, state
from vouch.store.kb import KB


def test_eight_processes_proposing_at_once_all_succeed(kb_with_sources: KB) -> None:
    kb = kb_with_sources
    sid = a_source(kb)
    procs = [
        vouch_proc(
            kb.root,
            "propose-claim",
            "--text",
            f"Parallel claim {n}",
            "--source",
            sid,
            "--as",
            f"agent-{n}",
            wait=False,
        )
        for n in range(8)
    ]
    results = [
        (p.wait(timeout=120), p.stdout.read(), p.stderr.read())  # type: ignore[union-attr]
        for p in procs
        if isinstance(p, subprocess.Popen)
    ]
    assert all(code == 0 for code, _, _ in results), results
    ids = {out.strip() for _, out, _ in results}
    assert len(ids) == 8 and len(branches(kb.root)) == 8
    assert git(kb.root, "status", "--porcelain") == ""


def test_two_racing_approvers_exactly_one_wins(kb_with_sources: KB) -> None:
    kb = kb_with_sources
    pid = propose_claim(kb, "Raced claim")
    procs = [
        vouch_proc(kb.root, "approve", pid, "--as", who, wait=False) for who in ("bob", "carol")
    ]
    codes = []
    errors = ""
    for p in procs:
        assert isinstance(p, subprocess.Popen)
        codes.append(p.wait(timeout=120))
        errors += p.stderr.read() if p.stderr else ""
    assert sorted(codes) == [0, 1], errors
    assert "already approved" in errors
    merges = git(kb.root, "log", "--merges", "--format=%H").split()
    assert len(merges) == 1 and audit.verify(kb.dir)["ok"]


def test_a_held_lock_times_out_with_a_clear_error(kb_with_sources: KB, run_cli) -> None:
    kb = kb_with_sources
    cfg = kb.dir / "config.yaml"
    cfg.write_text(cfg.read_text().replace("timeout_seconds: 30", "timeout_seconds: 0.2"))
    with state.write_lock(kb):
        res = run_cli("propose-claim", "--text", "Blocked", "--source", a_source(kb), cwd=kb.root)
    assert res.code == 1 and "E106" in res.err and "write.lock" in res.err
    assert branches(kb.root) == []


def _state(kb: KB, pid: str) -> str:
    """'before' or 'after' the approval, judged by the refs; anything else fails."""
    branch_there = f"refs/heads/vouch/proposal/{pid}" in branches(kb.root)
    decided = git(
        kb.root, "ls-tree", "-r", "--name-only", "HEAD", "--", f".vouch/{records.decided_path(pid)}"
    ).strip()
    if branch_there and not decided:
        return "before"
    if decided and not branch_there:
        return "after"
    return f"half: branch={branch_there} decided={bool(decided)}"


@pytest.mark.parametrize("step", [s for s in landing.STEPS])
def test_approve_killed_at_each_step_is_before_or_after(
    kb_with_sources: KB, step: str, run_cli
) -> None:
    kb = kb_with_sources
    pid = propose_claim(kb, f"Crash test claim {step}")
    make_user_mess(kb.root)
    user_before, head_before = user_state(kb.root), head(kb.root)
    proc = vouch_forked(kb.root, "approve", pid, "--as", BOB, env={landing.FAULT_ENV: step})
    assert isinstance(proc, subprocess.CompletedProcess)
    assert proc.returncode == 86, proc.stderr  # died on the spot
    state = _state(kb, pid)
    expected = "before" if landing.STEPS.index(step) < landing.STEPS.index("refs") else "after"
    assert state == expected
    journaled = landing.STEPS.index(step) >= landing.STEPS.index("journal")
    if state == "before":
        assert head(kb.root) == head_before
        if not journaled:  # nothing but unreachable objects was written
            assert git(kb.root, "status", "--porcelain", ".vouch") == ""
    # the next gate command finishes the landing (or the user repeats the approval);
    # the result is one approval
    res = run_cli("approve", pid, "--as", BOB, cwd=kb.root)
    assert res.code == (1 if journaled else 0), res.err
    assert _state(kb, pid) == "after"
    assert git(kb.root, "status", "--porcelain", ".vouch") == ""
    assert user_state(kb.root) == user_before
    cid = claim.KIND.make_id({"text": f"Crash test claim {step}"})
    assert kb.read(claim.KIND, cid)["approved_by"] == PERSON
    assert len(git(kb.root, "log", "--merges", "--format=%H").split()) == 1
    assert audit.verify(kb.dir)["ok"]
    assert [e["event"] for e in audit.query(kb.dir, event="proposal")] == [
        "proposal.create",
        "proposal.approve",
    ]


@pytest.mark.parametrize("step", [s for s in landing.STEPS if s != "merged"])
def test_reject_killed_midway_is_before_or_after(kb_with_sources: KB, step: str) -> None:
    kb = kb_with_sources
    pid = propose_claim(kb, f"Rejected crash {step}")
    proc = vouch_forked(
        kb.root, "reject", pid, "--reason", "no", "--as", BOB, env={landing.FAULT_ENV: step}
    )
    assert isinstance(proc, subprocess.CompletedProcess) and proc.returncode == 86
    rejected_ref = git(kb.root, "for-each-ref", f"refs/vouch/rejected/{pid}").strip()
    branch_there = bool(branches(kb.root))
    assert (branch_there and not rejected_ref) or (rejected_ref and not branch_there)
    call(kb, "kb.list_pending")  # a read does not need the lock
    if step in ("journal", "index", "objects", "worktree", "staged"):  # the next write ends it
        call(kb, "kb.propose_claim", {"text": "a later write", "evidence": [a_source(kb)]})
        assert not branches(kb.root) or all("rejected" not in b for b in branches(kb.root))
        assert git(kb.root, "for-each-ref", f"refs/vouch/rejected/{pid}").strip()
    elif branch_there:
        call(kb, "kb.reject", {"proposal_id": pid, "reason": "no"}, actor=BOB)
    else:
        call(kb, "kb.propose_claim", {"text": "any later write", "evidence": [a_source(kb)]})
    assert git(kb.root, "status", "--porcelain") == ""
    assert audit.verify(kb.dir)["ok"]


def test_recovery_leaves_edits_made_after_the_crash(kb_with_sources: KB, run_cli) -> None:
    kb = kb_with_sources
    pid = propose_claim(kb, "Recovered claim")
    proc = vouch_forked(kb.root, "approve", pid, "--as", BOB, env={landing.FAULT_ENV: "refs"})
    assert isinstance(proc, subprocess.CompletedProcess) and proc.returncode == 86
    log = kb.dir / "audit.log.jsonl"
    log.write_text(log.read_text() + "my own line\n")  # edited before any recovery
    res = run_cli("approve", pid, "--as", BOB, cwd=kb.root)
    assert res.code == 1 and "already approved" in res.err
    assert log.read_text().endswith("my own line\n")  # not overwritten
    cid = claim.KIND.make_id({"text": "Recovered claim"})
    assert kb.read(claim.KIND, cid)["approved_by"] == PERSON  # the rest was brought along
    assert git(kb.root, "status", "--porcelain", ".vouch") == " M .vouch/audit.log.jsonl\n"
