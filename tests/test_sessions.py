"""Sessions and crystallize (issue 12.3): kb.session_start, kb.session_end, kb.crystallize,
and `session_id` on proposals."""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import git
from gate_support import ALICE, BOB, a_source, branches, call, head, show
from servers_support import JsonlServer, kb_state

from vouch.kinds import claim, page, session
from vouch.servers import jsonl, server_context
from vouch.store.kb import KB, PROPOSAL_PREFIX


def start(kb: KB, actor: str = ALICE, **params: Any) -> str:
    return str(call(kb, "kb.session_start", params, actor=actor)["session_id"])


def propose(kb: KB, text: str, session_id: str | None, actor: str = ALICE) -> dict[str, Any]:
    params: dict[str, Any] = {"text": text, "evidence": [a_source(kb)]}
    if session_id is not None:
        params["session_id"] = session_id
    return call(kb, "kb.propose_claim", params, actor=actor)


def committed(kb: KB, rel: str, rev: str = "HEAD") -> str:
    return git(kb.root, "show", f"{rev}:.vouch/{rel}")


def audit_events(kb: KB) -> list[dict[str, Any]]:
    return call(kb, "kb.audit", {})


@pytest.fixture
def worked(kb_with_sources: KB) -> dict[str, Any]:
    """A session with three proposals: one approved, one rejected, one still pending."""
    kb = kb_with_sources
    sid = start(kb, task="triage the deploy runbook", note="first pass")
    made = [
        propose(kb, text, sid)
        for text in (
            "Every deploy needs a green CI run",
            "Rollbacks never need a review",
            "Fridays are deploy freeze days",
        )
    ]
    show(kb, made[0]["proposal_id"], made[1]["proposal_id"])  # the reviewer reads both
    call(kb, "kb.approve", {"proposal_id": made[0]["proposal_id"]}, actor=BOB)
    call(kb, "kb.reject", {"proposal_id": made[1]["proposal_id"], "reason": "no source"}, actor=BOB)
    outside = propose(kb, "The billing service uses Postgres", None)  # not in the session
    return {"kb": kb, "sid": sid, "made": made, "outside": outside}


def test_start_commits_an_open_session(kb_with_sources: KB, run_cli, monkeypatch) -> None:
    kb = kb_with_sources
    before = head(kb.root)
    monkeypatch.setenv("VOUCH_AGENT", "agent-7")  # an agent acts (`--as` would be a label)
    res = run_cli(
        "session",
        "start",
        "--task",
        "Triage the incident",
        "--note",
        "pager",
        cwd=kb.root,
    )
    assert res.code == 0, res.err
    sid = res.out.strip()
    assert sid.startswith("triage-the-incident-")
    assert git(kb.root, "rev-parse", "HEAD~1").strip() == before  # one direct commit
    obj = session.load(committed(kb, session.path_for(sid)))
    assert obj["status"] == "open" and obj["actor"] == "agent-7" and obj["note"] == "pager"
    assert obj["task"] == "Triage the incident" and "ended_at" not in obj
    event = audit_events(kb)[-1]
    assert event["event"] == "session.start" and event["actor"] == "agent-7"
    assert sid in event["object_ids"]
    assert git(kb.root, "status", "--porcelain") == ""
    # no task: still a session, named after itself
    untitled = start(kb)
    assert untitled.startswith("session-") and untitled != sid
    # the same actor and task twice in a row: two sessions
    assert start(kb, task="same") != start(kb, task="same")


def test_proposals_carry_the_session(worked: dict[str, Any]) -> None:
    kb, sid, made = worked["kb"], worked["sid"], worked["made"]
    pending = made[2]["proposal_id"]
    message = git(kb.root, "log", "-1", "--format=%B", PROPOSAL_PREFIX + pending)
    assert f"Vouch-Session: {sid}" in message
    obj = claim.load(committed(kb, claim.path_for(made[2]["claim_id"]), PROPOSAL_PREFIX + pending))
    assert obj["session_id"] == sid
    listed = call(kb, "kb.list_pending", {"filter": {"session_id": sid}})
    assert [p["proposal_id"] for p in listed] == [pending]


def test_end_counts_and_records_the_sessions_proposals(
    worked: dict[str, Any], run_cli, monkeypatch
) -> None:
    kb, sid, made = worked["kb"], worked["sid"], worked["made"]
    monkeypatch.setenv("VOUCH_AGENT", "agent-7")
    res = run_cli("session", "end", sid, "--json", cwd=kb.root)
    assert res.code == 0, res.err
    assert res.json() == {"ok": True, "session_id": sid, "proposals": 3}
    obj = session.load(committed(kb, session.path_for(sid)))
    assert obj["status"] == "ended" and obj["ended_at"]
    assert obj["proposals"] == sorted(m["proposal_id"] for m in made)
    assert obj["actor"] == ALICE  # who started it stays on record
    event = audit_events(kb)[-1]
    assert event["event"] == "session.end" and event["actor"] == "agent-7"
    assert event["data"]["proposals"] == 3
    assert git(kb.root, "status", "--porcelain") == ""
    human = run_cli("session", "end", sid, cwd=kb.root)
    assert human.code == 1 and "already ended" in human.err


def test_an_empty_session_ends_with_no_proposals(kb_with_sources: KB) -> None:
    kb = kb_with_sources
    sid = start(kb, task="nothing to see")
    propose(kb, "A claim made outside any session", None)
    assert call(kb, "kb.session_end", {"session_id": sid})["proposals"] == 0


@pytest.mark.parametrize("dry_run", [False, True])
def test_unknown_or_ended_sessions_are_refused_and_nothing_changes(
    worked: dict[str, Any], run_cli, dry_run: bool
) -> None:
    kb, sid = worked["kb"], worked["sid"]
    call(kb, "kb.session_end", {"session_id": sid})
    state = kb_state(kb.root)
    extra = ["--dry-run"] if dry_run else []
    cases = [
        ("nosuch-session-12345678", "E101", "no session nosuch-session-12345678"),
        (sid, "E100", "ended"),
        ("s-1", "E103", "not a vouch session id"),
        ("../../x", "E103", "not a vouch session id"),
    ]
    for bad, code, words in cases:
        res = run_cli(
            "propose-claim",
            "--text",
            "A new claim",
            "--source",
            a_source(kb),
            "--session",
            bad,
            "--json",
            *extra,
            cwd=kb.root,
        )
        assert res.code == 1, res.out
        error = json.loads(res.out)["error"]
        assert error["code"] == code and words in error["message"], error
        assert "session start" in error["hint"]
    assert kb_state(kb.root) == state
    for bad in ("nosuch-session-12345678", "x/y"):
        assert run_cli("session", "end", bad, cwd=kb.root).code == 1
        assert run_cli("crystallize", bad, cwd=kb.root).code == 1
    assert kb_state(kb.root) == state


def test_a_session_started_on_another_branch_is_unknown_here(kb_with_sources: KB) -> None:
    kb = kb_with_sources
    git(kb.root, "checkout", "-qb", "side")
    sid = start(kb, task="on the side")
    git(kb.root, "checkout", "-q", "main")
    with pytest.raises(Exception, match="no session"):
        propose(kb, "Main does not know that session", sid)


def test_crystallize_proposes_and_never_approves(worked: dict[str, Any], run_cli) -> None:
    kb, sid, made = worked["kb"], worked["sid"], worked["made"]
    call(kb, "kb.session_end", {"session_id": sid})
    before_head = head(kb.root)
    before_branches = set(branches(kb.root))
    res = run_cli("crystallize", sid, "--json", cwd=kb.root)
    assert res.code == 0, res.err
    result = res.json()
    assert result["claims_promoted"] == 1
    assert result["promotable"] == [made[0]["claim_id"]]
    assert {p["state"] for p in result["proposals"]} == {"approved", "rejected", "pending"}
    assert result["page_id"].startswith("session-triage-the-deploy-runbook-")
    # a proposal: HEAD did not move, a new branch holds the page and nothing else
    assert head(kb.root) == before_head
    new = set(branches(kb.root)) - before_branches
    assert new == {PROPOSAL_PREFIX + result["proposal_id"]}
    assert git(
        kb.root, "diff", "--name-only", before_head, PROPOSAL_PREFIX + result["proposal_id"]
    ).split() == [f".vouch/{page.path_for(result['page_id'])}"]
    assert not (kb.dir / page.path_for(result["page_id"])).exists()
    # the approved claim was not promoted by crystallize itself
    approved = claim.load(committed(kb, claim.path_for(made[0]["claim_id"])))
    assert approved["status"] == "working"
    summary = page.load(
        committed(kb, page.path_for(result["page_id"]), PROPOSAL_PREFIX + result["proposal_id"])
    )
    assert summary["type"] == "session" and summary["session_id"] == sid
    assert summary["claims"] == [made[0]["claim_id"]]
    assert summary["sources"] == [a_source(kb)]
    assert "approved_by" not in summary
    body = summary["body"]
    for m in made:
        assert m["proposal_id"] in body
    assert "## For review: promotable claims (1)" in body
    assert f"- [ ] Every deploy needs a green CI run (`{made[0]['claim_id']}`, working)" in body
    assert worked["outside"]["proposal_id"] not in body
    # proposing the same summary twice is one proposal
    again = call(kb, "kb.crystallize", {"session_id": sid})
    assert again["proposal_id"] == result["proposal_id"] and again["duplicate"] == "pending"
    # a reviewer reads and approves it like any proposal: the git user crystallized it,
    # so the decision is another person's process (not an agent the proposer runs)
    show(kb, result["proposal_id"])
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GIT_COMMITTER_NAME", "Rita Reviewer")
        mp.setenv("GIT_COMMITTER_EMAIL", "rita@example.invalid")
        call(kb, "kb.approve", {"proposal_id": result["proposal_id"]}, actor=BOB)
    assert page.load(committed(kb, page.path_for(result["page_id"])))["approved_by"] == BOB


def test_crystallize_without_a_page_writes_nothing(worked: dict[str, Any], run_cli) -> None:
    kb, sid = worked["kb"], worked["sid"]
    state = kb_state(kb.root)
    res = run_cli("crystallize", sid, "--no-page", cwd=kb.root)
    assert res.code == 0, res.err
    assert "no page proposed" in res.out and "claims flagged for review: 1" in res.out
    result = call(kb, "kb.crystallize", {"session_id": sid, "no_page": True})
    assert result["page_id"] is None and result["proposal_id"] is None
    assert result["claims_promoted"] == 1 and len(result["proposals"]) == 3
    assert kb_state(kb.root) == state


def test_crystallize_flags_only_live_claims_that_can_still_rise(worked: dict[str, Any]) -> None:
    kb, sid, made = worked["kb"], worked["sid"], worked["made"]
    path = kb.dir / claim.path_for(made[0]["claim_id"])
    path.write_text(path.read_text().replace("status: working", "status: actionable"))
    git(kb.root, "commit", "-qam", "actionable by hand")
    result = call(kb, "kb.crystallize", {"session_id": sid, "no_page": True})
    assert result["claims_promoted"] == 1  # a rung below stable: still promotable
    path.write_text(path.read_text().replace("status: actionable", "status: stable"))
    git(kb.root, "commit", "-qam", "stable by hand")
    result = call(kb, "kb.crystallize", {"session_id": sid, "no_page": True})
    assert result["claims_promoted"] == 0 and result["promotable"] == []
    path.write_text(path.read_text().replace("status: stable", "status: archived"))
    git(kb.root, "commit", "-qam", "archived by hand")
    page_result = call(kb, "kb.crystallize", {"session_id": sid})
    summary = page.load(
        committed(
            kb, page.path_for(page_result["page_id"]), PROPOSAL_PREFIX + page_result["proposal_id"]
        )
    )
    assert summary["claims"] == []  # an archived claim is not linked


def test_agents_need_a_declared_name_over_jsonl(
    kb_with_sources: KB, monkeypatch: pytest.MonkeyPatch
) -> None:
    kb = kb_with_sources
    state = kb_state(kb.root)
    ctx = server_context("jsonl", kb_path=str(kb.dir))
    refused = jsonl.handle_line(ctx, b'{"id": 1, "method": "kb.session_start", "params": {}}')
    assert refused["error"]["vouch_code"] == "E104"
    assert kb_state(kb.root) == state
    bad = jsonl.handle_line(ctx, b'{"id": 2, "method": "kb.session_end", "params": {}}')
    assert bad["error"]["code"] == "missing_param"
    caps = jsonl.handle_line(ctx, b'{"id": 3, "method": "kb.capabilities"}')["result"]
    scopes = {m["name"]: m["scope"] for m in caps["methods"]}
    assert scopes["kb.session_start"] == scopes["kb.session_end"] == "session"
    assert scopes["kb.crystallize"] == "session"


def test_an_agent_works_a_session_over_a_real_jsonl_server(kb_with_sources: KB) -> None:
    kb = kb_with_sources
    with JsonlServer(kb.root, env={"VOUCH_AGENT": "helper-bot"}) as server:
        sid = server.result("kb.session_start", {"task": "read the runbook"})["session_id"]
        made = server.result(
            "kb.propose_claim",
            {"text": "Deploys need a green CI run", "evidence": [a_source(kb)], "session_id": sid},
        )
        assert made["valid"] and made["proposal_id"]
        assert server.result("kb.session_end", {"session_id": sid}) == {
            "ok": True,
            "session_id": sid,
            "proposals": 1,
        }
        late = server.call(
            "kb.propose_claim", {"text": "Too late", "session_id": sid, "evidence": [a_source(kb)]}
        )
        assert not late["ok"] and late["error"]["vouch_code"] == "E100"
        summary = server.result("kb.crystallize", {"session_id": sid})
        assert summary["page_id"] and summary["claims_promoted"] == 0  # nothing approved
        refused = server.call("kb.approve", {"proposal_id": summary["proposal_id"]})
        assert refused["error"]["vouch_code"] == "E104"  # an agent never decides here
    event = audit_events(kb)[-1]
    assert event["event"] == "session.end" and event["actor"] == "helper-bot"
