"""The audit log: queries, verification, union-merge interleavings, closed segments."""

from __future__ import annotations

import json

import pytest
from conftest import git
from gate_support import BOB, call, propose_claim

from vouch.store import audit
from vouch.store.kb import KB


def test_query_tail_event_actor(kb_with_sources: KB, run_cli) -> None:
    kb = kb_with_sources
    for n in range(3):
        call(kb, "kb.approve", {"proposal_id": propose_claim(kb, f"Claim number {n}")}, actor=BOB)
    every = run_cli("audit", "--json", cwd=kb.root).json()
    assert [e["event"] for e in every[:2]] == ["kb.init", "source.register"]
    for key in ("id", "event", "actor", "created_at", "object_ids", "data", "prev_hash", "hash"):
        assert key in every[-1]
    tail = run_cli("audit", "--tail", "2", "--json", cwd=kb.root).json()
    assert tail == every[-2:]
    approvals = run_cli("audit", "--event", "proposal.approve", "--json", cwd=kb.root).json()
    assert len(approvals) == 3 and {e["actor"] for e in approvals} == {BOB}
    family = call(kb, "kb.audit", {"filter": {"event": "proposal"}})
    assert len(family) == 6
    assert (
        call(kb, "kb.audit", {"tail": 1, "filter": {"actor": "alice"}})[0]["event"]
        == "proposal.create"
    )
    assert "proposal.approve" in run_cli("audit", "--tail", "1", cwd=kb.root).out


def test_verify_detects_tampering_and_deletion(kb_with_sources: KB, run_cli) -> None:
    kb = kb_with_sources
    call(kb, "kb.approve", {"proposal_id": propose_claim(kb)}, actor=BOB)
    assert run_cli("audit", "--verify", cwd=kb.root).code == 0
    log = kb.dir / "audit.log.jsonl"
    original = log.read_text()
    lines = original.splitlines()
    record = json.loads(lines[1])
    record["actor"] = "someone else"
    log.write_text("\n".join([lines[0], json.dumps(record), *lines[2:]]) + "\n")
    res = run_cli("audit", "--verify", "--json", cwd=kb.root)
    assert res.code == 1 and "hash mismatch" in res.out
    log.write_text("\n".join([lines[0], *lines[2:]]) + "\n")  # an event deleted
    res = run_cli("audit", "--verify", cwd=kb.root)
    assert res.code == 1 and "names no event" in res.out
    log.write_text(original)


def test_union_merge_interleaving_verifies(tmp_path) -> None:
    a = audit.make_event("kb.init", "x", [], {}, "")
    b1 = audit.make_event("proposal.approve", "ours", [], {}, a["hash"])
    c1 = audit.make_event("proposal.approve", "theirs", [], {}, a["hash"])
    b2 = audit.make_event("proposal.approve", "ours", [], {}, b1["hash"])
    (tmp_path / audit.LOG_NAME).write_text("".join(audit.to_line(r) for r in (a, b1, b2, c1)))
    assert audit.verify(tmp_path)["ok"]


def test_segments_keep_the_active_log_small(
    kb_with_sources: KB, run_cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    kb = kb_with_sources
    monkeypatch.setattr(audit, "SEGMENT_BYTES", 1500)
    for n in range(6):
        call(kb, "kb.approve", {"proposal_id": propose_claim(kb, f"Segment claim {n}")}, actor=BOB)
    segments = sorted((kb.dir / audit.SEGMENT_DIR).glob("*.jsonl"))
    assert len(segments) >= 2
    assert (kb.dir / audit.LOG_NAME).stat().st_size < 1500 + 4096
    assert git(kb.root, "status", "--porcelain") == ""
    assert run_cli("audit", "--verify", cwd=kb.root).code == 0
    events = call(kb, "kb.audit")
    assert len([e for e in events if e["event"] == "proposal.approve"]) == 6
    assert call(kb, "kb.audit", {"tail": 3}) == events[-3:]
    # a closed segment is immutable: editing it is caught
    assert "kb.init" in segments[0].read_text()  # closing order is the name order
    segments[0].write_text(segments[0].read_text() + "\n")
    assert not audit.verify(kb.dir)["ok"]


def test_branches_closing_segments_still_merge(
    kb_with_sources: KB, run_cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    kb = kb_with_sources
    monkeypatch.setattr(audit, "SEGMENT_BYTES", 1200)
    for branch in ("seg-a", "seg-b"):
        git(kb.root, "checkout", "-q", "main")
        git(kb.root, "checkout", "-qb", branch)
        for n in range(3):
            call(
                kb,
                "kb.approve",
                {"proposal_id": propose_claim(kb, f"{branch} claim {n}")},
                actor=BOB,
            )
    git(kb.root, "merge", "--no-edit", "-q", "seg-a")
    assert git(kb.root, "status", "--porcelain") == ""
    report = audit.verify(kb.dir)
    assert report["ok"], report["issues"]
    call(kb, "kb.approve", {"proposal_id": propose_claim(kb, "after merge")}, actor=BOB)
    assert audit.verify(kb.dir)["ok"]


def test_append_reads_only_a_bounded_tail() -> None:
    big = b"".join(
        audit.to_line(audit.make_event("e", "a", [], {}, "")).encode() for _ in range(5000)
    )
    assert len(big) > audit.SEGMENT_BYTES
    active, segments, made = audit.append_events(big, [("x.y", "a", [], {})])
    assert list(segments.values()) == [big]
    assert active == audit.to_line(made[0]).encode()
    assert made[0]["prev_hash"] == json.loads(big.splitlines()[-1])["hash"]


def test_direct_commits_close_segments_too(kb: KB, monkeypatch: pytest.MonkeyPatch) -> None:
    from vouch.store import supplied

    monkeypatch.setattr(audit, "SEGMENT_BYTES", 600)
    for n in range(8):
        supplied.register_source(kb, "a", f"source number {n}", f"s{n}")
    assert list((kb.dir / audit.SEGMENT_DIR).glob("*.jsonl"))
    assert (kb.dir / audit.LOG_NAME).stat().st_size < 600 + 400
    assert git(kb.root, "status", "--porcelain") == ""
    assert audit.verify(kb.dir)["ok"] and len(audit.query(kb.dir)) == 9  # kb.init + 8
