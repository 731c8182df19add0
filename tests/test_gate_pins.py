"""Pins are whole: a decision is about the commit a reviewer saw, named in full.

`approve --expect` (and the JSONL/MCP `expect`) takes a full commit id only; a decision
with no pin — no `vouch show` of the proposal's current commit in this clone, no
`--expect` — is refused, naming the full commit to pass (ISSUE-34 finding 4).
"""

from __future__ import annotations

import pytest
from conftest import git
from gate_support import BOB, branches, call, head, propose_claim, recommit, show

from vouch.core import yamlio
from vouch.errors import UsageError
from vouch.gate import records
from vouch.store.kb import KB


def _refs(root) -> str:
    return git(root, "for-each-ref", "--format=%(refname) %(objectname)")


def _state(kb: KB) -> tuple[str, str, str]:
    return _refs(kb.root), git(kb.root, "status", "--porcelain"), head(kb.root)


def _replace_with_another_commit(kb: KB, pid: str) -> tuple[str, str]:
    """What a proposer with push rights does after review: the branch now holds another
    well-formed proposal commit (same tree and base, another message). (old, new)"""
    ref = f"refs/heads/vouch/proposal/{pid}"
    old = head(kb.root, ref)
    message = git(kb.root, "log", "-1", "--format=%B", old).replace(
        "\n\nVouch-Proposal:", "\n\nnot what you reviewed\n\nVouch-Proposal:", 1
    )
    name, email = git(kb.root, "log", "-1", "--format=%an%n%ae", old).split("\n")[:2]
    return recommit(kb.root, ref, message, (name, email))


def test_expect_takes_only_a_full_commit_id(kb_with_sources: KB, run_cli) -> None:
    kb = kb_with_sources
    pid = propose_claim(kb, "Pinned by its whole id", shown=False)
    commit = head(kb.root, f"refs/heads/vouch/proposal/{pid}")
    before = _state(kb)
    # 7 hex digits can be matched by a second commit built to share them (78 s on two
    # cores); 12 or 39 are prefixes too: each is refused before anything is read
    for short in (commit[:7], commit[:12], commit[:39], commit.upper()[:7], "HEAD", ""):
        res = run_cli("approve", pid, "--expect", short, cwd=kb.root)
        assert res.code == 1 and "E100" in res.err and "not a full commit id" in res.err, res.err
        assert commit in res.err  # the hint names the full id to check and pass
        assert _state(kb) == before
        res = run_cli("reject", pid, "--reason", "r", "--expect", short, cwd=kb.root)
        assert res.code == 1 and "not a full commit id" in res.err
        assert _state(kb) == before
    # the same over the method (what JSONL and MCP call)
    with pytest.raises(UsageError, match="not a full commit id"):
        call(kb, "kb.approve", {"proposal_id": pid, "expect": commit[:7]}, actor=BOB)
    assert _state(kb) == before
    # the whole id lands exactly that commit, and the record keeps it
    res = run_cli("approve", pid, "--expect", commit, cwd=kb.root)
    assert res.code == 0, res.err
    decision = yamlio.load_yaml((kb.dir / records.decided_path(pid)).read_text())
    assert decision["proposal_commit"] == commit


def test_a_decision_without_a_pin_is_refused_naming_the_commit(
    kb_with_sources: KB, run_cli
) -> None:
    kb = kb_with_sources
    pid = propose_claim(kb, "Nobody looked at this one", shown=False)
    commit = head(kb.root, f"refs/heads/vouch/proposal/{pid}")
    before = _state(kb)
    for args in (("approve", pid), ("reject", pid, "--reason", "unseen")):
        res = run_cli(*args, cwd=kb.root)
        assert res.code == 1 and "E104" in res.err and "nobody reviewed" in res.err, res.err
        assert f"vouch approve {pid} --expect {commit}" in res.err
        assert f"vouch show {pid}" in res.err
        assert _state(kb) == before
    with pytest.raises(Exception, match="nobody reviewed"):
        call(kb, "kb.approve", {"proposal_id": pid}, actor=BOB)
    assert _state(kb) == before
    # `vouch show` pins what it displayed; approve then lands it
    shown = run_cli("show", pid, cwd=kb.root)
    assert f"--expect {commit}" in shown.out  # the screen names the whole id too
    res = run_cli("approve", pid, cwd=kb.root)
    assert res.code == 0, res.err
    decision = yamlio.load_yaml((kb.dir / records.decided_path(pid)).read_text())
    assert decision["proposal_commit"] == commit
    assert git(kb.root, "for-each-ref", records.REVIEWED_PREFIX) == ""  # the pin is spent


def test_a_branch_replaced_after_review_is_refused(kb_with_sources: KB, run_cli) -> None:
    kb = kb_with_sources
    pid = propose_claim(kb, "Reviewed, then replaced")  # shown: pinned
    old, new = _replace_with_another_commit(kb, pid)
    assert head(kb.root, records.REVIEWED_PREFIX + pid) == old
    before = _state(kb)
    for args in (
        ("approve", pid),
        ("approve", pid, "--expect", old),
        ("reject", pid, "--reason", "r"),
    ):
        res = run_cli(*args, cwd=kb.root)
        assert res.code == 1 and "changed after review" in res.err, res.err
        assert new in res.err and old in res.err  # both named in full
        assert _state(kb) == before
    # a short pin of the reviewed commit is no way around it, whatever it matches
    res = run_cli("approve", pid, "--expect", old[:7], cwd=kb.root)
    assert res.code == 1 and "not a full commit id" in res.err
    assert _state(kb) == before
    assert len(branches(kb.root)) == 1


def test_linked_approvals_need_each_proposal_pinned(kb_with_sources: KB, run_cli) -> None:
    kb = kb_with_sources
    seen = propose_claim(kb, "Linked and shown")
    unseen = propose_claim(kb, "Linked and never shown", shown=False)
    before = _state(kb)
    res = run_cli("approve", seen, unseen, cwd=kb.root)
    assert res.code == 1 and f"nobody reviewed proposal {unseen}" in res.err, res.err
    assert _state(kb) == before
    show(kb, unseen)
    res = run_cli("approve", seen, unseen, cwd=kb.root)
    assert res.code == 0, res.err
    assert branches(kb.root) == []
