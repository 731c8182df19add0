"""Revisions and review comments (issue 18, point 4): the proposer (only) revises an
open proposal — a new commit on its branch, the id following the content — a reviewer
comments without closing it, show prints the thread in order, and an approval pins the
revision that was shown. Hand-built revision chains are refused with nothing written."""

from __future__ import annotations

import pytest
from conftest import git
from gate_support import ALICE, BOB, PERSON, a_source, call, propose_claim
from test_gate_hostile import author_of, edited_tree, git_in, refused, rewrite

from vouch.kinds import claim
from vouch.store.kb import KB, PROPOSAL_PREFIX


def _revise(kb: KB, pid: str, actor: str = ALICE, **changes: object) -> dict:
    return call(kb, "kb.revise_proposal", {"proposal_id": pid, **changes}, actor=actor)


def test_comment_revise_show_and_approve_the_revision_shown(
    kb_with_sources: KB, run_cli, monkeypatch
) -> None:
    kb = kb_with_sources
    sid = a_source(kb)
    made = call(kb, "kb.propose_claim", {"text": "Deploys need one green CI run.",
                                         "evidence": [f"{sid}:L1-L2"]})  # fmt: skip
    pid, first_id = made["proposal_id"], made["claim_id"]
    assert run_cli("show", pid, "--as", BOB, cwd=kb.root).code == 0  # pins revision 1
    said = run_cli("comment", pid, "one? the runbook says two", "--as", BOB, cwd=kb.root)
    assert said.code == 0, said.err
    # only the proposer revises; the reviewer is told to comment instead
    other = run_cli("revise", pid, "--text", "x", "--as", BOB, cwd=kb.root)
    assert other.code == 1 and "E104" in other.err and "only its proposer" in other.err
    monkeypatch.setenv("VOUCH_AGENT", ALICE)  # the agent that proposed it revises it
    res = run_cli(
        "revise", pid, "--text", "Deploys need two green CI runs.", "--rationale", "per review",
        "--json", cwd=kb.root,
    )  # fmt: skip
    monkeypatch.delenv("VOUCH_AGENT")
    assert res.code == 0, res.err
    revised = res.json()
    assert revised["revision"] == 2 and revised["claim_id"] != first_id
    assert call(kb, "kb.list_pending")[0]["object_id"] == revised["claim_id"]
    # revision 1 was shown (pinned) by the reviewer: approving now would land unseen text
    stale = run_cli("approve", pid, "--as", BOB, cwd=kb.root)
    assert stale.code == 1 and "changed after review" in stale.err
    shown = run_cli("show", pid, "--json", cwd=kb.root).json()
    assert [r["revision"] for r in shown["revisions"]] == [1, 2]
    assert [c["text"] for c in shown["comments"]] == ["one? the runbook says two"]
    assert shown["comments"][0]["author"] == PERSON  # the git user, `--as bob` a label
    assert "-text: Deploys need one" not in shown["diff"]  # the diff is against the base
    assert "two green CI runs" in shown["diff"] and shown["problems"] == []
    human = run_cli("show", pid, "--as", BOB, cwd=kb.root).out
    thread = human.split("Thread:")[1]
    assert (
        thread.index("revision 1")
        < thread.index(f"comment by {PERSON}")
        < thread.index("revision 2")
    )
    done = run_cli("approve", pid, "--as", BOB, "--json", cwd=kb.root)
    assert done.code == 0, done.err
    approved = kb.read(claim.KIND, revised["claim_id"])
    assert approved["text"] == "Deploys need two green CI runs." and approved["evidence"]
    assert kb.read(claim.KIND, first_id) is None
    merged = git(kb.root, "rev-parse", "HEAD^2").strip()
    assert merged == revised["commit"]
    assert "Deploys need one" in git(kb.root, "log", "-p", "HEAD^2~1", "-1")  # kept in history


def test_a_revision_that_changes_nothing_or_breaks_the_rules(kb_with_sources: KB) -> None:
    kb = kb_with_sources
    pid = propose_claim(kb, "Nothing changes here.")
    same = _revise(kb, pid, text="Nothing changes here.")
    assert same["valid"] and same["changed"] is False
    bad = _revise(kb, pid, evidence=["nope-12345678"])
    assert bad["valid"] is False and "evidence nope-12345678 does not exist" in bad["errors"]
    from vouch.errors import UsageError

    with pytest.raises(UsageError):
        _revise(kb, pid, title="pages only")
    assert call(kb, "kb.read_proposal", {"id": pid})["revisions"][-1]["revision"] == 1


def _revised(kb: KB, text: str = "Revised proposals are checked whole.") -> tuple[str, str]:
    pid = propose_claim(kb, text)
    result = _revise(kb, pid, text=text + " Again.")
    return pid, result["commit"]


def test_a_stray_file_in_an_earlier_revision_is_refused(kb_with_sources: KB, run_cli) -> None:
    kb = kb_with_sources
    pid, tip = _revised(kb)
    first = git_in(kb.root, "rev-parse", f"{tip}^")
    # revision 1 rebuilt with an extra file; revision 2 replayed on top of it, unchanged
    git_in(kb.root, "update-ref", PROPOSAL_PREFIX + pid, first)
    stray = rewrite(kb, pid, edited_tree(kb, pid, {"hooks/post-merge": b"evil\n"}))
    message = git_in(kb.root, "log", "-1", "--format=%B", tip)
    tree = git_in(kb.root, "rev-parse", f"{tip}^{{tree}}")
    top = git_in(
        kb.root, "commit-tree", tree, "-p", stray, "-m", message, env=author_of(kb.root, tip)
    )
    git_in(kb.root, "update-ref", PROPOSAL_PREFIX + pid, top)
    refused(kb, run_cli, pid, "revision 1", "hooks/post-merge")


@pytest.mark.parametrize("trailer", ["Vouch-Proposer: mallory", "Vouch-Revision: 3"])
def test_a_hand_built_revision_is_refused(kb_with_sources: KB, run_cli, trailer: str) -> None:
    kb = kb_with_sources
    pid, tip = _revised(kb)
    message = git_in(kb.root, "log", "-1", "--format=%B", tip)
    key = trailer.split(":")[0]
    forged = "\n".join(trailer if ln.startswith(key + ":") else ln for ln in message.split("\n"))
    if key not in message:
        forged = message.rstrip("\n") + "\n" + trailer
    tree = git_in(kb.root, "rev-parse", f"{tip}^{{tree}}")
    new = git_in(
        kb.root, "commit-tree", tree, "-p", f"{tip}^", "-m", forged, env=author_of(kb.root, tip)
    )
    git_in(kb.root, "update-ref", PROPOSAL_PREFIX + pid, new)
    refused(kb, run_cli, pid, "not a line of vouch revisions")


def test_a_revision_on_another_base_is_refused(kb_with_sources: KB, run_cli) -> None:
    kb = kb_with_sources
    pid, tip = _revised(kb)
    other = propose_claim(kb, "Some other proposal entirely.")
    message = git_in(kb.root, "log", "-1", "--format=%B", tip)
    tree = git_in(kb.root, "rev-parse", f"{tip}^{{tree}}")
    # revision 2 whose parent is another proposal's commit: the chain misses its base
    parent = f"{PROPOSAL_PREFIX}{other}"
    new = git_in(
        kb.root, "commit-tree", tree, "-p", parent, "-m", message, env=author_of(kb.root, tip)
    )
    git_in(kb.root, "update-ref", PROPOSAL_PREFIX + pid, new)
    refused(kb, run_cli, pid, "not a line of vouch revisions")
    # comments never count as revisions: they are on their own ref
    assert call(kb, "kb.comment_proposal", {"proposal_id": other, "text": "ok"}, actor=BOB)["ok"]
    assert call(kb, "kb.approve", {"proposal_id": other}, actor=BOB)["ok"]


def test_a_revision_that_changes_nothing_is_no_change_a_second_later(
    kb_with_sources: KB, monkeypatch: pytest.MonkeyPatch
) -> None:
    """updated_at is not a change: the same text revised in a later second is still no
    change, and a real change is stamped with the time of the revision."""
    from vouch.core import ids

    kb = kb_with_sources
    pid = propose_claim(kb, "Nothing changes here either.")
    monkeypatch.setattr(ids, "now_iso", lambda: "2099-01-01T00:00:00Z")
    same = _revise(kb, pid, text="Nothing changes here either.")
    assert same["valid"] and same["changed"] is False
    changed = _revise(kb, pid, text="Something changes here.")
    assert changed["changed"] is True
    assert (
        kb.repo.read_blob(
            kb.repo.blob_at(changed["commit"], kb.rel(claim.KIND.path_for(changed["claim_id"])))
        )
        .decode()
        .count("2099-01-01T00:00:00Z")
        == 1
    )  # updated_at, not created_at
