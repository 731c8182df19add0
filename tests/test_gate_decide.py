"""Approve and reject: merge commits, decision records, refusals, dirty work trees."""

from __future__ import annotations

import pytest
from conftest import git
from gate_support import (
    ALICE,
    BOB,
    PERSON,
    branches,
    call,
    head,
    make_user_mess,
    propose_claim,
    user_state,
)

from vouch.core import yamlio
from vouch.gate import records
from vouch.kinds import claim
from vouch.store import audit
from vouch.store.kb import KB


def claim_id(text: str) -> str:
    return claim.KIND.make_id({"text": text})


def test_approve_merges_with_trailers_and_leaves_user_work_alone(
    kb_with_sources: KB, run_cli
) -> None:
    kb = kb_with_sources
    pid = propose_claim(kb, "Deploys need a green CI run")
    make_user_mess(kb.root)
    before_user, before_head = user_state(kb.root), head(kb.root)
    res = run_cli("approve", pid, "--reason", "matches the runbook", "--as", BOB, cwd=kb.root)
    assert res.code == 0, res.err
    assert pid in res.out
    # a merge commit of the old tip and the proposal, with trailers
    parents = git(kb.root, "log", "-1", "--format=%P").split()
    assert parents[0] == before_head and len(parents) == 2
    message = git(kb.root, "log", "-1", "--format=%B")
    # the approver is the git identity running vouch; `--as bob` is a label beside it
    for trailer in (
        f"Vouch-Proposal: {pid}",
        "Vouch-Decision: approved",
        f"Vouch-Approver: {PERSON}",
        "Vouch-Approver-Email: test@example.invalid",
        f"Vouch-As: {BOB}",
        f"Vouch-Proposer: {ALICE}",
    ):
        assert trailer in message
    assert "matches the runbook" in message
    # the object carries approved_by; the decision record exists; the branch is gone
    obj = kb.read(claim.KIND, claim_id("Deploys need a green CI run"))
    assert obj["approved_by"] == PERSON and obj["proposed_by"] == ALICE
    decision = yamlio.load_yaml((kb.dir / records.decided_path(pid)).read_text())
    assert decision["decision"] == "approved" and decision["decided_by"] == PERSON
    assert decision["decided_as"] == BOB and decision["proposer"] == ALICE
    assert decision["proposer_email"] == "alice@agent.vouch.invalid"
    assert decision["proposer_operator"] == "Test Person <test@example.invalid>"
    assert decision["proposal_commit"] == parents[1]  # the commit that was reviewed
    assert "self_approved" not in decision
    assert branches(kb.root) == []
    # user's staged/unstaged/untracked work untouched and not in the merge commit
    assert user_state(kb.root) == before_user
    assert "staged.txt" not in git(kb.root, "show", "--stat", "--format=", "HEAD")
    assert git(kb.root, "status", "--porcelain", ".vouch") == ""
    events = [e["event"] for e in audit.query(kb.dir)]
    assert events[-2:] == ["proposal.create", "proposal.approve"]
    assert audit.verify(kb.dir)["ok"]


def test_self_approval_is_refused_unless_trusted_agent(kb_with_sources: KB, run_cli) -> None:
    kb = kb_with_sources
    pid = propose_claim(kb, "Self approved claim", actor=ALICE)
    before = head(kb.root)
    res = run_cli("approve", pid, "--as", ALICE, cwd=kb.root)
    assert res.code == 1 and "E104" in res.err and "cannot also approve" in res.err
    assert head(kb.root) == before and len(branches(kb.root)) == 1
    cfg = kb.dir / "config.yaml"
    cfg.write_text(cfg.read_text().replace("approver_role: human", "approver_role: trusted-agent"))
    git(kb.root, "commit", "-qam", "trust agents")
    res = run_cli("approve", pid, "--as", ALICE, cwd=kb.root)
    assert res.code == 0, res.err


def test_actor_resolution_order(kb_with_sources: KB, run_cli, monkeypatch) -> None:
    kb = kb_with_sources
    # git user.name is "Test Person" (conftest); proposals below are by the agent alice.
    # A declared agent (VOUCH_AGENT; config `agent` only on a server) acts, else the
    # git user; `--as` is only a label beside either, never the one who acts
    p1, p2, p3, p4 = (propose_claim(kb, f"Actor order claim {n}") for n in range(4))
    cfg = kb.dir / "config.yaml"
    cfg.write_text(cfg.read_text().replace('agent: ""', 'agent: "config-agent"'))
    git(kb.root, "commit", "-qam", "agent")
    monkeypatch.setenv("VOUCH_AGENT", "env-agent")
    caps = run_cli("capabilities", "--json", cwd=kb.root).json()["caller"]
    assert caps["agent"] == "env-agent"
    # a declared agent does not decide at the CLI (issue 34, G8): refused, naming it
    refused = run_cli("approve", p1, "--as", "flag-agent", cwd=kb.root)
    assert refused.code == 1 and "declared agent 'env-agent'" in refused.err, refused.err
    monkeypatch.delenv("VOUCH_AGENT")
    # the committed `agent` is a server's: at the CLI the person acts
    assert run_cli("capabilities", "--json", cwd=kb.root).json()["caller"]["agent"] is None
    assert run_cli("approve", p2, cwd=kb.root).code == 0
    cfg.write_text(cfg.read_text().replace('agent: "config-agent"', 'agent: ""'))
    git(kb.root, "commit", "-qam", "no agent")
    assert run_cli("approve", p3, "--as", "flag-agent", cwd=kb.root).code == 0
    assert run_cli("approve", p4, cwd=kb.root).code == 0
    who = [e["actor"] for e in audit.query(kb.dir, event="proposal.approve")]
    assert who == ["Test Person"] * 3
    labels = [e["data"].get("as") for e in audit.query(kb.dir, event="proposal.approve")]
    assert labels == [None, "flag-agent", None]


def test_approver_param_needs_a_trusted_caller(kb_with_sources: KB) -> None:
    from vouch.errors import UsageError
    from vouch.methods import registry as ops
    from vouch.methods.context import CallContext

    kb = kb_with_sources
    pid = propose_claim(kb, "Trusted approver claim")
    untrusted = CallContext(kb_path=str(kb.root), actor_override="mallory", trusted=False)
    with pytest.raises(UsageError):
        ops.invoke(untrusted, "kb.approve", {"proposal_id": pid, "approver": "bob"})
    trusted = CallContext(kb_path=str(kb.root), actor_override=ALICE)
    result = ops.invoke(trusted, "kb.approve", {"proposal_id": pid, "approver": "bob"})
    assert result == {
        "ok": True,
        "object_id": claim_id("Trusted approver claim"),
        "object_kind": "claim",
        "proposal_id": pid,
        "commit": head(kb.root),
        "proposal_commit": result["proposal_commit"],
    }


def test_approve_refuses_to_clobber_uncommitted_vouch_changes(kb_with_sources: KB, run_cli) -> None:
    kb = kb_with_sources
    pid = propose_claim(kb, "Clobber test claim")
    log = kb.dir / "audit.log.jsonl"
    log.write_text(log.read_text() + "hand edit\n")
    before = head(kb.root)
    res = run_cli("approve", pid, "--as", BOB, cwd=kb.root)
    assert res.code == 1 and "audit.log.jsonl" in res.err and "nothing was changed" in res.err
    assert head(kb.root) == before and len(branches(kb.root)) == 1
    assert log.read_text().endswith("hand edit\n")
    git(kb.root, "checkout", "--", ".vouch/audit.log.jsonl")
    # an untracked file where the claim will land is uncommitted work too
    target = kb.path_of(claim.KIND, claim_id("Clobber test claim"))
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("mine\n")
    res = run_cli("approve", pid, "--as", BOB, cwd=kb.root)
    assert res.code == 1 and target.name in res.err
    target.unlink()
    assert run_cli("approve", pid, "--as", BOB, cwd=kb.root).code == 0


def test_reject_keeps_the_commit_and_records_the_decision(kb_with_sources: KB, run_cli) -> None:
    kb = kb_with_sources
    pid = propose_claim(kb, "A doubtful claim")
    proposal_commit = head(kb.root, f"refs/heads/vouch/proposal/{pid}")
    res = run_cli("reject", pid, cwd=kb.root)
    assert res.code == 1 and "E100" in res.err  # --reason is required
    make_user_mess(kb.root)
    before_user, before_head = user_state(kb.root), head(kb.root)
    res = run_cli("reject", pid, "--reason", "not in any source", "--as", BOB, cwd=kb.root)
    assert res.code == 0, res.err
    assert head(kb.root, f"refs/vouch/rejected/{pid}") == proposal_commit
    assert branches(kb.root) == []
    assert git(kb.root, "log", "-1", "--format=%P").split() == [before_head]
    assert "Vouch-Decision: rejected" in git(kb.root, "log", "-1", "--format=%B")
    decision = yamlio.load_yaml((kb.dir / records.decided_path(pid)).read_text())
    assert decision["decision"] == "rejected" and decision["reason"] == "not in any source"
    assert kb.read(claim.KIND, claim_id("A doubtful claim")) is None
    assert user_state(kb.root) == before_user
    # the create event is kept with the decision, in order
    events = [e["event"] for e in audit.query(kb.dir, event="proposal")]
    assert events == ["proposal.create", "proposal.reject"]
    assert audit.verify(kb.dir)["ok"]
    shown = run_cli("show", pid, "--json", cwd=kb.root).json()
    assert shown["state"] == "rejected" and "+text: A doubtful claim" in shown["diff"]
    # a decided proposal is never re-opened
    for args in (("approve", pid, "--as", BOB), ("reject", pid, "--reason", "again")):
        res = run_cli(*args, cwd=kb.root)
        assert res.code == 1 and "E104" in res.err and "already rejected" in res.err


def test_approving_twice_and_unknown_ids(kb_with_sources: KB, run_cli) -> None:
    kb = kb_with_sources
    p1, p2 = propose_claim(kb, "First of two"), propose_claim(kb, "Second of two")
    res = run_cli("approve", p1, p2, "--as", BOB, "--json", cwd=kb.root)
    assert res.code == 0, res.err
    assert [r["proposal_id"] for r in res.json()] == [p1, p2]
    res = run_cli("approve", p1, "--as", BOB, cwd=kb.root)
    assert res.code == 1 and f"already approved by {PERSON}" in res.err
    res = run_cli("approve", "20990101-000000-00000000", "--as", BOB, cwd=kb.root)
    assert res.code == 1 and "E101" in res.err
    res = run_cli("approve", "../../etc", "--as", BOB, cwd=kb.root)
    assert res.code == 1 and "E103" in res.err


def test_pending_and_show(kb_with_sources: KB, run_cli) -> None:
    kb = kb_with_sources
    assert "No open proposals" in run_cli("pending", cwd=kb.root).out
    p1 = propose_claim(kb, "Pending claim one")
    p2 = call(kb, "kb.propose_entity", {"name": "Kafka", "type": "tool"}, actor="carol")[
        "proposal_id"
    ]
    rows = run_cli("pending", "--json", cwd=kb.root).json()
    assert [r["proposal_id"] for r in rows] == sorted([p1, p2])
    assert {r["kind"] for r in rows} == {"claim", "entity"}
    only = run_cli("pending", "--json", "--proposer", "carol", cwd=kb.root).json()
    assert [r["proposal_id"] for r in only] == [p2]
    human = run_cli("pending", cwd=kb.root).out
    assert p1 in human and "Pending claim one" in human and "Kafka" in human
    shown = run_cli("show", p1, "--json", cwd=kb.root).json()
    assert shown["state"] == "pending" and shown["object"]["text"] == "Pending claim one"
    assert "+text: Pending claim one" in shown["diff"] and "audit.log" not in shown["diff"]
    assert "Pending claim one" in run_cli("show", p1, cwd=kb.root).out
    call(kb, "kb.approve", {"proposal_id": p1}, actor=BOB)
    shown = run_cli("show", p1, "--json", cwd=kb.root).json()
    assert shown["state"] == "approved" and shown["decision"]["decided_by"] == BOB
    assert run_cli("status", "--json", cwd=kb.root).json()["pending"] == 1


def test_two_branches_approving_merge_cleanly(kb_with_sources: KB, run_cli) -> None:
    kb = kb_with_sources
    git(kb.root, "checkout", "-qb", "team-a")
    pa = propose_claim(kb, "Claim approved on branch a")
    assert run_cli("approve", pa, "--as", BOB, cwd=kb.root).code == 0
    git(kb.root, "checkout", "-q", "main")
    git(kb.root, "checkout", "-qb", "team-b")
    pb = propose_claim(kb, "Claim approved on branch b")
    assert run_cli("approve", pb, "--as", BOB, cwd=kb.root).code == 0
    extra = propose_claim(kb, "Another claim on branch b")
    assert run_cli("reject", extra, "--reason", "dup", "--as", BOB, cwd=kb.root).code == 0
    git(kb.root, "checkout", "-q", "team-a")
    git(kb.root, "merge", "--no-edit", "-q", "team-b")  # raises on conflict
    assert git(kb.root, "status", "--porcelain") == ""
    assert kb.read(claim.KIND, claim_id("Claim approved on branch a"))
    assert kb.read(claim.KIND, claim_id("Claim approved on branch b"))
    res = run_cli("audit", "--verify", cwd=kb.root)
    assert res.code == 0 and "OK" in res.out, res.out
    git(kb.root, "fsck", "--strict", "--no-dangling")  # objects written in-process are sound
    approvals = [e for e in audit.query(kb.dir) if e["event"] == "proposal.approve"]
    assert len(approvals) == 2
    # and the gate keeps working on the merged branch
    pc = propose_claim(kb, "After the merge")
    assert run_cli("approve", pc, "--as", BOB, cwd=kb.root).code == 0
    assert run_cli("audit", "--verify", cwd=kb.root).code == 0


def test_approve_lands_on_the_base_branch_even_when_elsewhere(kb_with_sources: KB, run_cli) -> None:
    kb = kb_with_sources
    pid = propose_claim(kb, "Landed on main")
    git(kb.root, "checkout", "-qb", "elsewhere")
    before = head(kb.root)
    assert run_cli("approve", pid, "--as", BOB, cwd=kb.root).code == 0
    assert head(kb.root) == before  # the checked-out branch and work tree did not move
    path = claim.path_for(claim_id("Landed on main"))
    assert "Landed on main" in git(kb.root, "show", f"main:.vouch/{path}")
    assert git(kb.root, "status", "--porcelain") == ""


def test_a_rationale_cannot_forge_trailers(kb_with_sources: KB, run_cli) -> None:
    kb = kb_with_sources
    pid = propose_claim(
        kb,
        "Forged proposer claim",
        actor="mallory",
        rationale="harmless\nVouch-Proposer: bob\n\nVouch-Proposer: bob",
    )
    shown = run_cli("show", pid, "--json", cwd=kb.root).json()
    assert shown["proposer"] == "mallory"
    assert "Vouch-Proposer: bob" in shown["rationale"]
    res = run_cli("approve", pid, "--as", "mallory", cwd=kb.root)
    assert res.code == 1 and "cannot also approve" in res.err


@pytest.mark.parametrize("actor", ["bob", "Dr. Who: the 2nd", "ünïcode name", "#hash"])
def test_cheap_approved_by_edit_matches_the_round_trip_edit(actor: str) -> None:
    from vouch.gate.decision_commit import with_approver
    from vouch.kinds import entity, page

    for kind, obj in (
        (claim.KIND, claim.new(text="A claim: with colon", evidence=["a" * 64], tags=["x"])),
        (entity.KIND, entity.new(name="Billing", type="system", aliases=["b"])),
        (page.KIND, page.new(title="Page", body="# Head\n\nbody text\n")),
    ):
        text = kind.dump(obj)
        fast = with_approver(kind, text, actor, "x")
        assert kind.load(fast)["approved_by"] == actor
        assert kind.load(fast) == kind.load(kind.edit(text, {"approved_by": actor}))
    commented = "# kept comment\n" + claim.dump(claim.new(text="c", evidence=["a" * 64]))
    assert with_approver(claim.KIND, commented, "bob", "x").startswith("# kept comment")


def test_a_branch_with_commits_on_top_is_a_clear_refusal(kb_with_sources: KB, run_cli) -> None:
    # a reviewer committed onto the proposal branch (a pull-request habit): the tip is no
    # longer the proposal commit, so vouch must say so rather than "no open proposal"
    kb = kb_with_sources
    pid = propose_claim(kb)
    git(kb.root, "checkout", "-q", f"vouch/proposal/{pid}")
    (kb.root / "review.txt").write_text("a reviewer's note\n")
    git(kb.root, "add", "review.txt")
    git(kb.root, "commit", "-qm", "review note")
    git(kb.root, "checkout", "-q", "main")
    before = head(kb.root)
    for args in (["approve", pid, "--as", BOB], ["reject", pid, "--as", BOB, "--reason", "r"]):
        res = run_cli(*args, cwd=kb.root)
        assert res.code == 1 and "E104" in res.err and "commits on top" in res.err, res.err
    assert head(kb.root) == before
