"""Git history as the proof: audit anchors, merges made outside vouch, stale leftovers."""

from __future__ import annotations

import json
import subprocess
import time

from conftest import git
from gate_support import BOB, PERSON, call, propose_claim

from vouch.gate import provenance
from vouch.kinds import claim
from vouch.store import audit, gitlocks, state
from vouch.store.kb import KB


def _approve_some(kb: KB, n: int = 3) -> list[str]:
    pids = [propose_claim(kb, f"Anchored claim {i}") for i in range(n)]
    for pid in pids:
        call(kb, "kb.approve", {"proposal_id": pid}, actor=BOB)
    return pids


def _commit_log(kb: KB, lines: list[bytes]) -> None:
    """What a tamperer does: rewrite the active log and commit it like any file."""
    (kb.dir / audit.LOG_NAME).write_bytes(b"".join(lines))
    git(kb.root, "commit", "-qam", "tidy the log")


def _verify(run_cli, kb: KB) -> tuple[int, str]:
    res = run_cli("audit", "--verify", cwd=kb.root)
    return res.code, res.out + res.err


def test_an_untouched_log_verifies(kb_with_sources: KB, run_cli) -> None:
    _approve_some(kb_with_sources)
    code, out = _verify(run_cli, kb_with_sources)
    assert code == 0 and "audit log OK" in out


def test_dropping_the_newest_events_is_detected(kb_with_sources: KB, run_cli) -> None:
    kb = kb_with_sources
    _approve_some(kb)
    lines = (kb.dir / audit.LOG_NAME).read_bytes().splitlines(keepends=True)
    _commit_log(kb, lines[:-2])  # the last approval never happened, says the log
    code, out = _verify(run_cli, kb)
    assert code == 1 and "dropped or rewritten" in out


def test_rewriting_an_approver_and_rechaining_is_detected(kb_with_sources: KB, run_cli) -> None:
    kb = kb_with_sources
    _approve_some(kb)
    events = [json.loads(x) for x in (kb.dir / audit.LOG_NAME).read_bytes().splitlines()]
    prev = ""
    lines = []
    for event in events:  # a careful forger recomputes every hash after the change
        if event["event"] == "proposal.approve":
            event["actor"] = "mallory"
        event["prev_hash"] = prev if prev else event["prev_hash"]
        event["hash"] = audit.event_hash(event)
        prev = event["hash"]
        lines.append(audit.to_line(event).encode())
    _commit_log(kb, lines)
    assert audit.verify(kb.dir)["ok"]  # the chain alone cannot tell
    code, out = _verify(run_cli, kb)
    assert code == 1 and "dropped or rewritten" in out


def test_an_inserted_event_is_detected(kb_with_sources: KB, run_cli) -> None:
    kb = kb_with_sources
    _approve_some(kb, 1)
    lines = (kb.dir / audit.LOG_NAME).read_bytes().splitlines(keepends=True)
    fake = audit.to_line(audit.make_event("proposal.approve", "mallory", [], {}, "")).encode()
    _commit_log(kb, [*lines[:2], fake, *lines[2:]])
    code, out = _verify(run_cli, kb)
    assert code == 1 and "without prev_hash" in out and "not recorded by any vouch commit" in out
    # chained to a real event instead, it is still not anchored by any commit
    _commit_log(
        kb,
        [
            *lines,
            audit.to_line(
                audit.make_event(
                    "proposal.approve", "mallory", [], {}, json.loads(lines[-1])["hash"]
                )
            ).encode(),
        ],
    )
    code, out = _verify(run_cli, kb)
    assert code == 1 and "not recorded by any vouch commit" in out


def test_a_git_merge_of_a_proposal_is_recognised_and_can_be_recorded(
    kb_with_sources: KB, run_cli
) -> None:
    kb = kb_with_sources
    text = "Merged with plain git"
    pid = propose_claim(kb, text)
    other = propose_claim(kb, "Merged then rejected")
    git(kb.root, "merge", "-q", "--no-edit", f"vouch/proposal/{pid}")
    git(kb.root, "merge", "-q", "--no-edit", f"vouch/proposal/{other}")
    # the content is live, but no decision exists: not pending, not rejectable
    pending = run_cli("pending", "--json", cwd=kb.root).json()
    assert pid not in {p["proposal_id"] for p in pending}
    head = git(kb.root, "rev-parse", "HEAD")
    res = run_cli("reject", other, "--reason", "no", "--as", BOB, cwd=kb.root)
    assert res.code == 1 and "merged" in res.err and "vouch approve" in res.err
    assert git(kb.root, "rev-parse", "HEAD") == head
    report = run_cli("audit", "--verify", "--json", cwd=kb.root)
    assert report.code == 1
    merged = {m["proposal_id"] for m in report.json()["merged_without_decision"]}
    assert merged == {pid, other}
    shown = run_cli("show", pid, "--json", cwd=kb.root).json()
    assert shown["state"] == "merged-without-decision"
    # the documented way out: record the decision afterwards
    git(kb.root, "branch", "-D", f"vouch/proposal/{other}")  # a host deletes merged branches
    for p in (pid, other):
        res = run_cli("approve", p, "--as", BOB, "--json", cwd=kb.root)
        assert res.code == 0, res.err
        assert res.json()["recorded_after_merge"] is True
    cid = claim.KIND.make_id({"text": text})
    assert kb.read(claim.KIND, cid)["approved_by"] == PERSON
    assert run_cli("audit", "--verify", cwd=kb.root).code == 0
    assert git(kb.root, "status", "--porcelain") == ""
    res = run_cli("approve", pid, "--as", BOB, cwd=kb.root)
    assert res.code == 1 and "already approved" in res.err


def test_a_stale_index_lock_of_a_dead_vouch_process_is_cleared(
    kb_with_sources: KB, run_cli
) -> None:
    kb = kb_with_sources
    dead = subprocess.Popen(["true"])
    dead.wait()
    lock = kb.root / ".git" / "index.lock"
    owner = state.shared(kb) / gitlocks.OWNER.format(pid=dead.pid)
    record = {"pid": dead.pid, "children": [], "locks": [str(lock)], "at": time.time()}
    owner.write_text(json.dumps(record))
    lock.write_bytes(b"")  # what a kill inside the index write leaves
    stale_tmp = state.shared(kb) / ".landing.json.abc123.tmp"
    stale_tmp.write_text("{")
    pid = propose_claim(kb, "Written after a crash")
    res = run_cli("approve", pid, "--as", BOB, cwd=kb.root)
    assert res.code == 0, res.err
    assert not lock.exists() and not owner.exists() and not stale_tmp.exists()
    assert git(kb.root, "status", "--porcelain") == ""


def test_a_lock_that_vouch_did_not_take_is_left_alone(kb_with_sources: KB, run_cli) -> None:
    kb = kb_with_sources
    lock = kb.root / ".git" / "index.lock"
    lock.write_bytes(b"")  # a running `git add`, as far as anyone can tell
    pid = propose_claim(kb, "Waits for git")
    head = git(kb.root, "rev-parse", "HEAD")
    res = run_cli("approve", pid, "--as", BOB, cwd=kb.root)
    assert res.code == 2 and "index.lock" in res.err and "Traceback" not in res.err
    assert lock.exists() and git(kb.root, "rev-parse", "HEAD") == head
    lock.unlink()
    assert run_cli("approve", pid, "--as", BOB, cwd=kb.root).code == 0
    assert provenance.verify(kb)["ok"]
