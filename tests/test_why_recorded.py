"""`vouch why` shows what was approved (fourth outsider, row 37): an approved claim
edited in the work tree, or committed by hand with `--no-verify`, was shown with its
new text, status and confidence under "approved by", with no mark. Now the version vouch
recorded is shown and what differs is said; a lifecycle edit vouch made is no hand
edit."""

from __future__ import annotations

from pathlib import Path

from conftest import git
from gate_support import BOB, call, retry_claim, show

from vouch.kinds import KINDS
from vouch.store.kb import KB

TEXT = "Retry budget is five attempts."


def _approved(kb: KB) -> tuple[str, Path]:
    made = retry_claim(kb, TEXT)
    show(kb, made["proposal_id"])
    call(kb, "kb.approve", {"proposal_id": made["proposal_id"]}, actor=BOB)
    cid = str(made["claim_id"])
    return cid, kb.dir / KINDS["claim"].path_for(cid)


def _tamper(path: Path) -> str:
    text = path.read_text()
    assert f"text: {TEXT}" in text and "status: working" in text
    edited = text.replace(f"text: {TEXT}", "text: Retry budget is FIFTY attempts.").replace(
        "status: working", "status: stable"
    )
    path.write_text(edited)
    return edited


def _state(kb: KB) -> tuple[str, str]:
    return git(kb.root, "for-each-ref", "--format=%(refname) %(objectname)"), git(
        kb.root, "status", "--porcelain"
    )


def test_an_uncommitted_edit_is_not_shown_as_approved(kb: KB, run_cli) -> None:
    cid, path = _approved(kb)
    edited = _tamper(path)
    before = _state(kb)
    report = run_cli("why", cid, "--json", cwd=kb.root).json()
    assert report["title"] == TEXT and report["status"] == "working"
    assert report["uncommitted"] is True and "edited_after_approval" not in report
    human = run_cli("why", cid, cwd=kb.root).out
    assert "FIFTY" not in human and "[stable]" not in human
    assert "uncommitted edits, not reviewed" in human and "approved by" in human
    assert _state(kb) == before and path.read_text() == edited  # why writes nothing


def test_a_hand_commit_after_the_decision_is_named_not_shown_as_approved(kb: KB, run_cli) -> None:
    cid, path = _approved(kb)
    _tamper(path)
    git(kb.root, "commit", "-q", "--no-verify", "-am", "tweak")
    hand = git(kb.root, "rev-parse", "HEAD").strip()
    before = _state(kb)
    report = run_cli("why", cid, "--json", cwd=kb.root).json()
    assert report["title"] == TEXT and report["status"] == "working"
    assert report["uncommitted"] is False
    assert [c["commit"] for c in report["edited_after_approval"]] == [hand]
    assert report["committed_title"] == "Retry budget is FIFTY attempts."
    human = run_cli("why", cid, cwd=kb.root).out
    assert f"edited after its decision outside vouch, not reviewed: {hand[:12]}" in human
    assert "the committed file now says: Retry budget is FIFTY attempts." in human
    assert human.index("! edited after") < human.index("approved by")
    assert _state(kb) == before


def test_a_lifecycle_edit_vouch_made_is_shown_as_committed(kb: KB, run_cli) -> None:
    cid, _ = _approved(kb)
    res = run_cli("archive", cid, "--reason", "obsolete", cwd=kb.root)
    assert res.code == 0, res.err
    report = run_cli("why", cid, "--json", cwd=kb.root).json()
    assert report["status"] == "archived" and report["title"] == TEXT
    assert report["uncommitted"] is False and "edited_after_approval" not in report
    assert "!" not in run_cli("why", cid, cwd=kb.root).out.split("proposed by")[0]
