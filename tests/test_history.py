"""Provenance from git (issue 15): why, log, diff and blame, each answer checked against
a history built in a real repository — branches, approvals, a supersession, an
archive, a hand edit and a merge."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import git, hermetic
from gate_support import ALICE, BOB, call
from history_support import Story, build


@pytest.fixture(scope="module")
def story(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Story]:
    with hermetic(tmp_path_factory) as root:
        yield build(root)


def _log_of(s: Story, path_glob: str) -> list[str]:
    """What git itself says changed a path, newest first."""
    return git(s.root, "log", "--format=%H", "--", path_glob).split()


# -- why -------------------------------------------------------------------------------------
def test_why_names_proposer_rationale_session_approver_and_the_merge(story: Story) -> None:
    s = story
    d = call(s.kb, "kb.why", {"id": s.ids["c1"]})
    assert d["kind"] == "claim" and d["status"] == "superseded"
    assert d["proposed"] == {
        "proposal_id": s.proposals["c1"],
        "proposer": ALICE,
        "proposer_email": "alice@agent.vouch.invalid",
        "proposed_by": "agent alice <alice@agent.vouch.invalid>, run by Test Person "
        "<test@example.invalid>",
        "commit": s.commits["c1-proposal"],
        "date": d["proposed"]["date"],
        "rationale": "the runbook says so\nin its deploy section",
        "session_id": s.session,
        "base": "refs/heads/main",
    }
    approved = d["approved"]
    assert approved["approver"] == BOB and approved["commit"] == s.commits["c1-approve"]
    parents = git(s.root, "rev-list", "--parents", "-n1", approved["commit"]).split()
    assert parents[2] == s.commits["c1-proposal"]  # the decision merged the proposal
    assert approved["date"] == git(s.root, "log", "-1", "--format=%aI", approved["commit"]).strip()
    # the supersession made on the feature branch, reached through the merge
    assert [c["commit"] for c in d["changes"]] == [s.commits["supersede"]]
    assert d["changes"][0]["event"] == "claim.supersede" and d["changes"][0]["reason"] == "reworded"
    assert d["superseded_by"] == [
        {
            "id": s.ids["c3"],
            "kind": "claim",
            "title": "Deploys require a passing CI run",
            "status": "working",
        }
    ]
    [ev] = d["evidence"]
    assert ev["kind"] == "evidence" and ev["title"] == "runbook.md" and ev["locator"] == "L7-L8"
    assert ev["source_id"] == s.source and ev["lines"] == {"start": 7, "end": 8}
    assert d["last_confirmed_at"] is None


def test_why_a_claim_approved_on_a_branch_shows_what_it_supersedes(story: Story) -> None:
    s = story
    d = call(s.kb, "kb.why", {"id": s.ids["c3"]})
    assert d["approved"]["commit"] == s.commits["c3-approve"]
    assert d["proposed"]["base"] == "refs/heads/feature"
    assert [x["id"] for x in d["supersedes"]] == [s.ids["c1"]]
    assert d["supersedes"][0]["status"] == "superseded"
    [ev] = d["evidence"]
    assert ev["kind"] == "source" and ev["title"] == "runbook.md" and "locator" not in ev


def test_why_shows_a_quote_and_the_lines_it_was_found_on(story: Story) -> None:
    d = call(story.kb, "kb.why", {"id": story.ids["c2"]})
    [ev] = d["evidence"]
    assert ev["quote"] == "Never deploy on Fridays, whatever the" and ev["locator"] == "#deploy"
    assert ev["lines"] == {"start": 8, "end": 9}  # the quote wraps onto line 9


def test_why_of_an_archived_claim_and_of_an_unknown_id(story: Story, run_cli: Any) -> None:
    d = call(story.kb, "kb.why", {"id": story.ids["c4"]})
    assert d["status"] == "archived" and [c["event"] for c in d["changes"]] == ["claim.archive"]
    res = run_cli("why", "no-such-claim-0badc0de", "--kb", str(story.root))
    assert res.code == 1 and "E" in res.err and "Traceback" not in res.err


def test_why_human_output(story: Story, run_cli: Any) -> None:
    res = run_cli("why", story.ids["c1"], "--kb", str(story.root))
    assert res.code == 0, res.err
    assert f"proposed by agent {ALICE} <{ALICE}@agent.vouch.invalid>, run by" in res.out
    assert f"approved by agent {BOB} <{BOB}@agent.vouch.invalid>" in res.out
    assert "why: the runbook says so" in res.out
    assert f"superseded by: {story.ids['c3']}" in res.out
    assert "runbook.md:L7-L8" in res.out and "last confirmed: never" in res.out


# -- log -------------------------------------------------------------------------------------
def test_log_of_a_claim_is_what_git_says_changed_it_with_its_audit_events(story: Story) -> None:
    s = story
    d = call(s.kb, "kb.log", {"id": s.ids["c1"]})
    shas = [c["commit"] for c in d["commits"]]
    assert shas == _log_of(s, f".vouch/claims/*/{s.ids['c1']}.yaml")
    assert shas == [s.commits["supersede"], s.commits["c1-approve"], s.commits["c1-proposal"]]
    roles = [c["role"] for c in d["commits"]]
    assert roles == ["event", "decision", "proposal"]
    events = [[e["event"] for e in c["events"]] for c in d["commits"]]
    assert events == [["claim.supersede"], ["proposal.create", "proposal.approve"], []]
    assert d["commits"][1]["actor"] == BOB and d["commits"][2]["actor"] == ALICE


def test_log_of_the_knowledge_base_each_commit_with_its_own_events(story: Story) -> None:
    s = story
    d = call(s.kb, "kb.log", {"limit": 0})
    shas = [c["commit"] for c in d["commits"]]
    assert shas == git(s.root, "log", "--format=%H", "--", ".vouch").split()
    by_sha = {c["commit"]: c for c in d["commits"]}
    assert [e["event"] for e in by_sha[s.commits["c2-approve"]]["events"]] == [
        "proposal.create",
        "proposal.approve",
    ]
    assert by_sha[s.commits["hand-edit"]]["role"] == "commit"
    assert by_sha[s.commits["hand-edit"]]["events"] == []
    # every event of the log appears once, with the commit that recorded it
    seen = [e for c in d["commits"] for e in c["events"]]
    from vouch.store import audit

    assert len(seen) == len(audit.query(s.kb.dir))
    assert len(call(s.kb, "kb.log", {"limit": 2})["commits"]) == 2


def test_log_on_another_branch_and_errors(story: Story, run_cli: Any) -> None:
    s = story
    res = run_cli("log", s.ids["c3"], "--rev", "main~1", "--kb", str(s.root), "--json")
    assert res.code == 1 and json.loads(res.out)["error"]["code"]  # not on main before the merge
    res = run_cli("log", "--rev", "no-such-branch", "--kb", str(s.root))
    assert res.code == 1 and "not a commit" in res.err
    res = run_cli("log", s.ids["c1"], "--kb", str(s.root))
    assert res.code == 0 and "claim.supersede" in res.out and s.proposals["c1"] in res.out


# -- diff ------------------------------------------------------------------------------------
def test_diff_of_a_branch_since_it_left_main(story: Story) -> None:
    s = story
    d = call(s.kb, "kb.diff", {"revisions": f"{s.commits['main-before']}...feature"})
    assert d["merge_base"] == s.commits["main-before"] and d["to"] == s.commits["feature"]
    c = d["claims"]
    assert [x["id"] for x in c["added"]] == [s.ids["c3"]]
    assert [x["id"] for x in c["superseded"]] == [s.ids["c1"]]
    assert c["superseded"][0]["superseded_by"] == s.ids["c3"]
    assert [x["id"] for x in c["archived"]] == [s.ids["c4"]]
    assert c["removed"] == [] and c["status_changed"] == []
    [page] = d["pages"]["edited"]
    assert page["id"] == s.ids["page"] and page["sections"] == {"edited": ["Steps"]}
    assert [x["proposal_id"] for x in d["decisions"]] == [s.proposals["c3"]]
    assert d["decisions"][0]["decided_by"] == BOB
    assert d["summary"]["claims_added"] == 1 and d["summary"]["claims_superseded"] == 1


def test_diff_the_other_way_removes_what_the_branch_added(story: Story) -> None:
    s = story
    d = call(s.kb, "kb.diff", {"revisions": f"feature..{s.commits['main-before']}"})
    assert [x["id"] for x in d["claims"]["removed"]] == [s.ids["c3"]]
    assert [x["id"] for x in d["claims"]["status_changed"]] == sorted([s.ids["c1"], s.ids["c4"]])
    assert d["decisions"] == []


def test_diff_of_the_whole_history_and_after_the_merge(story: Story) -> None:
    s = story
    first = git(s.root, "rev-list", "--max-parents=0", "HEAD").strip()
    d = call(s.kb, "kb.diff", {"revisions": first})  # A alone: A..HEAD
    added = {x["id"] for x in d["claims"]["added"]}
    assert added == {s.ids[k] for k in ("c1", "c2", "c3", "c4")}
    assert [x["id"] for x in d["pages"]["added"]] == [s.ids["page"]]
    assert [x["title"] for x in d["sources"]["added"]] == ["runbook.md"]
    assert d["evidence"]["added"] == 2  # c1's inline span and e2
    assert len(d["decisions"]) == 5
    # the merge brought the feature's knowledge exactly
    after = call(s.kb, "kb.diff", {"revisions": f"{s.commits['main-before']}..main"})
    branch = call(s.kb, "kb.diff", {"revisions": f"{s.commits['main-before']}..feature"})
    assert after["claims"] == branch["claims"] and after["pages"] == branch["pages"]
    same = call(s.kb, "kb.diff", {"revisions": "main..main"})
    assert same["summary"] == {}


def test_diff_formats(story: Story, run_cli: Any) -> None:
    s = story
    spec = f"{s.commits['main-before']}...feature"
    human = run_cli("diff", spec, "--kb", str(s.root))
    assert human.code == 0, human.err
    assert f"+ {s.ids['c3']}" in human.out and "status working → superseded" in human.out
    assert "sections edited: Steps" in human.out
    md = run_cli("diff", spec, "--format", "markdown", "--kb", str(s.root))
    assert md.code == 0 and md.out.startswith("### Knowledge changes")
    assert "#### Claims superseded (1)" in md.out and f"`{s.ids['c3']}`" in md.out
    assert "#### Decisions (1)" in md.out
    js = run_cli("diff", spec, "--json", "--kb", str(s.root))
    assert js.json()["claims"]["added"][0]["id"] == s.ids["c3"]
    bad = run_cli("diff", "main..nowhere", "--kb", str(s.root), "--json")
    assert bad.code == 1 and bad.json()["error"]["code"] == "E100"
    none = run_cli("diff", "main..main", "--kb", str(s.root))
    assert "(no knowledge changed)" in none.out


# -- blame -----------------------------------------------------------------------------------
def test_blame_credits_each_section_to_its_proposal_or_commit(story: Story) -> None:
    s = story
    d = call(s.kb, "kb.blame", {"id": s.ids["page"]})
    intro, steps = d["sections"]
    assert intro["heading"] == "Intro" and intro["proposal_id"] == s.proposals["page"]
    assert intro["role"] == "proposal" and intro["proposer"] == ALICE
    assert intro["approved_by"] == BOB
    assert steps["heading"] == "Steps" and steps["commit"] == s.commits["hand-edit"]
    assert "proposal_id" not in steps and steps["subject"] == "hand edit: a third step"
    # before the hand edit, the proposal wrote both sections
    before = call(s.kb, "kb.blame", {"id": s.ids["page"], "rev": s.commits["main-before"]})
    assert [x["proposal_id"] for x in before["sections"]] == [s.proposals["page"]] * 2


def test_blame_human_and_errors(story: Story, run_cli: Any) -> None:
    s = story
    res = run_cli("blame", s.ids["page"], "--kb", str(s.root))
    assert res.code == 0, res.err
    assert f"proposal {s.proposals['page']} by {ALICE}, approved by {BOB}" in res.out
    assert "hand edit: a third step" in res.out
    res = run_cli("blame", s.ids["c1"], "--kb", str(s.root))
    assert res.code == 1 and "no page" in res.err


# -- the CI template ----------------------------------------------------------------------------
def test_the_ci_template_posts_the_knowledge_diff_on_pull_requests() -> None:
    from pathlib import Path

    yaml = pytest.importorskip("yaml")
    workflow = yaml.safe_load(
        (Path(__file__).parent.parent / "templates" / "vouch-ci.yml").read_text()
    )
    job = workflow["jobs"]["knowledge-diff"]
    assert job["if"] == "github.event_name == 'pull_request'"
    assert job["permissions"]["pull-requests"] == "write"
    runs = "\n".join(str(step.get("run", "")) for step in job["steps"])
    assert 'vouch diff "origin/$PR_BASE...HEAD" --format markdown' in runs
    assert "gh pr comment" in runs
