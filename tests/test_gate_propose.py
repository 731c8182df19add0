"""Proposals: validation, one commit on a branch, the user's tree untouched, dedup."""

from __future__ import annotations

import pytest
from conftest import git
from gate_support import (
    ALICE,
    PERSON,
    a_source,
    branches,
    call,
    head,
    make_user_mess,
    propose_claim,
    proposed,
    user_state,
)

from vouch.gate import records
from vouch.kinds import claim, evidence
from vouch.store.kb import KB, PROPOSAL_PREFIX


def test_propose_claim_cli_prints_only_the_id_and_makes_one_branch(
    kb_with_sources: KB, run_cli
) -> None:
    kb = kb_with_sources
    sid = a_source(kb)
    make_user_mess(kb.root)
    before_head, before_user = head(kb.root), user_state(kb.root)
    before_index = git(kb.root, "ls-files", "-s")
    res = run_cli(
        "propose-claim",
        "--text",
        "Deploys need a green CI run",
        "--source",
        sid,
        "--type",
        "fact",
        "--tags",
        "ops,deploy",
        "--rationale",
        "runbook says so",
        "--as",
        ALICE,
        cwd=kb.root,
    )
    assert res.code == 0, res.err
    pid = res.out.strip()
    assert res.out == pid + "\n" and records.check_proposal_id(pid)
    # HEAD, the index, staged/unstaged/untracked work: all exactly as before
    assert head(kb.root) == before_head
    assert user_state(kb.root) == before_user
    assert git(kb.root, "ls-files", "-s") == before_index
    assert git(kb.root, "status", "--porcelain", ".vouch") == ""
    # one commit on vouch/proposal/<id> whose parent is the branch tip
    ref = PROPOSAL_PREFIX + pid
    assert branches(kb.root) == [ref]
    assert head(kb.root, f"{ref}^") == before_head
    message = git(kb.root, "log", "-1", "--format=%B", ref)
    for trailer in (
        f"Vouch-Proposal: {pid}",
        "Vouch-Kind: claim",
        f"Vouch-Proposer: {PERSON}",  # the git user proposes; `--as alice` is a label
        f"Vouch-As: {ALICE}",
        "Vouch-Base: refs/heads/main",
        f"Vouch-Base-Commit: {before_head}",
    ):
        assert trailer in message
    assert "runbook says so" in message
    changed = git(kb.root, "diff", "--name-only", before_head, ref).split()
    # the proposal adds its object file and nothing else: audit events are written by
    # the decision, never carried by a branch
    assert len(changed) == 1 and changed[0].startswith(".vouch/claims/")
    assert "proposal.create" not in (kb.dir / "audit.log.jsonl").read_text()


def test_claim_file_holds_the_proposal(kb_with_sources: KB) -> None:
    kb = kb_with_sources
    sid = call(kb, "kb.session_start", {"task": "rollbacks"})["session_id"]
    pid = propose_claim(
        kb,
        "Rollbacks do not need a review",
        type="fact",
        confidence=0.9,
        tags=["ops"],
        session_id=sid,
    )
    path = claim.path_for(claim.KIND.make_id({"text": "Rollbacks do not need a review"}))
    obj = claim.load(git(kb.root, "show", f"{PROPOSAL_PREFIX}{pid}:.vouch/{path}"))
    assert obj["type"] == "fact" and obj["confidence"] == 0.9 and obj["tags"] == ["ops"]
    assert obj["proposed_by"] == ALICE and obj["session_id"] == sid
    assert "approved_by" not in obj


def test_dry_run_validates_and_writes_nothing(kb_with_sources: KB, run_cli) -> None:
    kb = kb_with_sources
    log_before = (kb.dir / "audit.log.jsonl").read_bytes()
    refs_before = git(kb.root, "for-each-ref")
    res = call(
        kb,
        "kb.propose_claim",
        {"text": "A fine claim", "evidence": [a_source(kb)], "dry_run": True},
    )
    assert res["valid"] and res["proposal_id"] is None and res["claim_id"].startswith("a-fine")
    bad = call(kb, "kb.propose_claim", {"text": "", "evidence": [], "dry_run": True})
    assert not bad["valid"] and bad["errors"]
    cli = run_cli(
        "propose-claim", "--text", "x y", "--source", a_source(kb), "--dry-run", cwd=kb.root
    )
    assert cli.code == 0 and cli.out == "" and "dry run" in cli.err
    assert (kb.dir / "audit.log.jsonl").read_bytes() == log_before
    assert git(kb.root, "for-each-ref") == refs_before


def test_invalid_claim_lists_every_problem(kb_with_sources: KB, run_cli) -> None:
    kb = kb_with_sources
    res = call(
        kb,
        "kb.propose_claim",
        {
            "text": "  ",
            "evidence": ["f" * 64, "nope-12345678"],
            "type": "rumour",
            "confidence": 1.5,
            "entities": ["ghost-00000000"],
        },
    )
    assert res["valid"] is False and res["proposal_id"] is None
    text = " | ".join(res["errors"])
    for needle in (
        "text must not be empty",
        "rumour",
        "out of range",
        "not registered",
        "evidence nope-12345678 does not exist",
        "entity ghost-00000000",
    ):
        assert needle in text, text
    assert branches(kb.root) == []
    cli = run_cli(
        "propose-claim",
        "--text",
        "t",
        "--type",
        "rumour",
        "--confidence",
        "7",
        "--source",
        "f" * 64,
        "--json",
        cwd=kb.root,
    )
    assert cli.code == 1
    err = cli.json()["error"]
    assert err["code"] == "E102" and len(err["errors"]) == 3  # type, range, unregistered
    # evidence is a required parameter on every transport: without it, a usage error
    cli = run_cli("propose-claim", "--text", "t", "--json", cwd=kb.root)
    assert cli.code == 1 and cli.json()["error"]["code"] == "E100"
    assert "--evidence" in cli.json()["error"]["message"]
    assert "Traceback" not in cli.err


def test_citations_can_be_relaxed_by_config(kb_with_sources: KB) -> None:
    kb = kb_with_sources
    assert not call(kb, "kb.propose_claim", {"text": "Uncited", "evidence": []})["valid"]
    cfg = kb.dir / "config.yaml"
    cfg.write_text(cfg.read_text().replace("require_citations: true", "require_citations: false"))
    kb2 = KB.open(kb.root)
    assert call(kb2, "kb.propose_claim", {"text": "Uncited", "evidence": []})["valid"]


def test_duplicates_are_reported_not_repeated(kb_with_sources: KB, run_cli) -> None:
    kb = kb_with_sources
    pid = propose_claim(kb, "Deploys need one review")
    again = call(
        kb,
        "kb.propose_claim",
        {"text": "Deploys  need one review", "evidence": [a_source(kb)]},
        actor="carol",
    )
    assert again["proposal_id"] == pid and again["duplicate"] == "pending"
    assert len(branches(kb.root)) == 1
    res = run_cli(
        "propose-claim", "--text", "Deploys need one review", "--source", a_source(kb), cwd=kb.root
    )
    assert res.code == 0 and res.out.strip() == pid and "already pending" in res.err
    call(kb, "kb.approve", {"proposal_id": pid}, actor="bob")
    durable = call(
        kb, "kb.propose_claim", {"text": "Deploys need one review", "evidence": [a_source(kb)]}
    )
    assert durable["duplicate"] == "durable" and durable["proposal_id"] is None
    assert branches(kb.root) == []


def test_entity_relation_and_page(kb_with_sources: KB, run_cli, tmp_path) -> None:
    kb = kb_with_sources
    res = run_cli(
        "propose-entity",
        "--name",
        "Billing service",
        "--type",
        "system",
        "--alias",
        "billing",
        "--as",
        ALICE,
        cwd=kb.root,
    )
    assert res.code == 0, res.err
    ent_pid = res.out.strip()
    bad = run_cli("propose-entity", "--name", "X", "--type", "planet", cwd=kb.root)
    assert bad.code == 1 and "planet" in bad.err
    # relations need endpoints that exist on the base branch
    ent_id = call(kb, "kb.read_proposal", {"id": ent_pid})["object_id"]
    res = run_cli(
        "propose-relation",
        "--from",
        ent_id,
        "--rel",
        "uses",
        "--to",
        "postgres-00000000",
        cwd=kb.root,
    )
    assert res.code == 1 and "does not exist" in res.err
    # the git user proposed it at the CLI: someone else's process decides (an agent the
    # proposer runs approving it would be the proposer's own approval)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GIT_COMMITTER_NAME", "Rita Reviewer")
        mp.setenv("GIT_COMMITTER_EMAIL", "rita@example.invalid")
        call(kb, "kb.approve", {"proposal_id": ent_pid}, actor="bob")
    other = proposed(kb, "kb.propose_entity", {"name": "PostgreSQL", "type": "tool"})
    call(kb, "kb.approve", {"proposal_id": other["proposal_id"]}, actor="bob")
    res = run_cli(
        "propose-relation",
        "--from",
        ent_id,
        "--rel",
        "uses",
        "--to",
        other["entity_id"],
        "--json",
        cwd=kb.root,
    )
    assert res.code == 0, res.err
    assert res.json()["relation_id"].startswith("uses-")
    self_rel = call(
        kb, "kb.propose_relation", {"source": ent_id, "relation": "uses", "target": ent_id}
    )
    assert "itself" in " ".join(self_rel["errors"])
    body = tmp_path / "body.md"
    body.write_text("# Billing\n\nThe billing service.\n")
    res = run_cli(
        "propose-page",
        "--title",
        "Billing overview",
        "--type",
        "entity",
        "--body",
        str(body),
        "--entity",
        ent_id,
        "--source",
        a_source(kb),
        cwd=kb.root,
    )
    assert res.code == 0, res.err
    shown = call(kb, "kb.read_proposal", {"id": res.out.strip()})
    assert shown["object"]["body"].startswith("# Billing")
    res = run_cli("propose-page", "--title", "Bad", "--claim", "missing-00000000", cwd=kb.root)
    assert res.code == 1 and "claim missing-00000000 does not exist" in res.err


def test_inline_evidence_pointer_and_registered_evidence(kb_with_sources: KB, run_cli) -> None:
    kb = kb_with_sources
    sid = a_source(kb)
    res = call(
        kb, "kb.propose_claim", {"text": "Deploys come from main only", "evidence": [f"{sid}:L3"]}
    )
    assert res["valid"], res
    shown = call(kb, "kb.read_proposal", {"id": res["proposal_id"]})
    eid = shown["object"]["evidence"][0]
    assert eid.startswith("evidence-")
    ev = evidence.load(git(kb.root, "show", f"{shown['ref']}:.vouch/{evidence.path_for(eid)}"))
    assert ev["source_id"] == sid and ev["locator"] == "L3" and ev["hash"].startswith("sha256:")
    out_of_range = call(kb, "kb.propose_claim", {"text": "Beyond", "evidence": [f"{sid}:L900"]})
    assert "lies outside" in " ".join(out_of_range["errors"])
    # registered evidence with a quote that really is there
    ok = run_cli(
        "evidence", "add", sid, "L3-L4", "--quote", "deployed with the `ship` tool", cwd=kb.root
    )
    assert ok.code == 0, ok.err
    eid2 = ok.out.strip()
    assert kb.read(evidence.KIND, eid2)["quote"] == "deployed with the `ship` tool"
    wrong = run_cli(
        "evidence", "add", sid, "L3", "--quote", "deployed by carrier pigeon", cwd=kb.root
    )
    assert wrong.code == 1 and "does not appear" in wrong.err
    cited = call(kb, "kb.propose_claim", {"text": "Ship deploys billing", "evidence": [eid2]})
    assert cited["valid"], cited


def test_detached_head_and_bad_filters_are_clear_errors(kb_with_sources: KB, run_cli) -> None:
    kb = kb_with_sources
    git(kb.root, "checkout", "-q", "--detach")
    res = run_cli("propose-claim", "--text", "Detached", "--source", a_source(kb), cwd=kb.root)
    assert res.code == 1 and "detached" in res.err
    res = run_cli("call", "kb.audit", '{"filter": {"colour": "red"}}', cwd=kb.root)
    assert res.code == 1 and "unknown filter" in res.err


def test_a_session_id_is_validated_like_every_id(kb_with_sources: KB, run_cli) -> None:
    kb = kb_with_sources
    refs = git(kb.root, "for-each-ref")
    for bad, extra in (("../../x", []), ("../../x", ["--dry-run"]), ("a/b", []), ("two words", [])):
        res = run_cli(
            "propose-claim",
            "--text",
            "t",
            "--source",
            a_source(kb),
            "--session",
            bad,
            *extra,
            cwd=kb.root,
        )
        assert res.code == 1 and "E103" in res.err, res.err
    assert git(kb.root, "for-each-ref") == refs


def test_proposing_rejected_content_again_warns_unless_again(kb, run_cli) -> None:
    """The same content a reviewer rejected is not proposed silently a second time: the
    result names who rejected it and why, and only --again proposes it."""
    from vouch.methods import registry as ops
    from vouch.methods.context import CallContext

    agent = CallContext(kb_path=str(kb.root), agent="agent")
    reviewer = CallContext(kb_path=str(kb.root), agent="Reviewer")
    source = ops.invoke(agent, "kb.register_source", {"content": "Alpha.\n", "locator": "a"})
    claim = {"text": "Alpha is the first letter.", "evidence": [source["id"]]}
    first = ops.invoke(agent, "kb.propose_claim", claim)
    ops.invoke(reviewer, "kb.read_proposal", {"id": first["proposal_id"]})  # shown: pinned
    ops.invoke(reviewer, "kb.reject", {"proposal_id": first["proposal_id"], "reason": "vague"})
    head = kb.repo.resolve("HEAD")
    again = ops.invoke(agent, "kb.propose_claim", claim)
    assert again["proposal_id"] is None and again["duplicate"] == "rejected"
    assert again["rejected"]["proposal_id"] == first["proposal_id"]
    assert again["rejected"]["rejected_by"] == "Reviewer"
    assert again["rejected"]["reason"] == "vague"
    assert kb.repo.resolve("HEAD") == head and ops.invoke(agent, "kb.list_pending") == []
    human = run_cli(
        "propose-claim",
        "--text",
        claim["text"],
        "--source",
        source["id"],
        "--as",
        "agent",
        cwd=kb.root,
    )
    assert human.code == 0 and human.out == "" and "rejected" in human.err
    assert "vague" in human.err and "--again" in human.err
    forced = ops.invoke(agent, "kb.propose_claim", {**claim, "again": True})
    assert forced["proposal_id"] and forced["valid"]
