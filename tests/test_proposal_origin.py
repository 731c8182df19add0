"""Who proposed is the author of the proposal's first commit (the fifth outsider, row 45).

Ada put a hand-built "revision" under her own name on Bob's open proposal branch, then
rejected it: it was recorded as Ada withdrawing her own proposal, Bob gone from the
record, and every check passed. Built here with git plumbing in a real repository: the
proposal stays Bob's — `pending` says so, approve refuses the foreign revision with
nothing written, and Ada's rejection is a reviewer's rejection of Bob's proposal.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import git
from gate_support import PERSON, a_source
from servers_support import kb_state
from test_audit_proof import all_pass, head

from vouch.gate import records
from vouch.store.kb import KB

BOB = {
    "GIT_AUTHOR_NAME": "Bob",
    "GIT_AUTHOR_EMAIL": "bob@example.invalid",
    "GIT_COMMITTER_NAME": "Bob",
    "GIT_COMMITTER_EMAIL": "bob@example.invalid",
}


def _bobs_proposal(kb: KB, run_cli: Any, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    """A claim Bob proposes at his CLI: its proposal id and commit."""
    with monkeypatch.context() as bob:
        for key, value in BOB.items():
            bob.setenv(key, value)
        made = run_cli("propose-claim", "--text", "The cache TTL is 300 seconds.",
                       "--evidence", a_source(kb), "--json", cwd=kb.root)  # fmt: skip
    assert made.code == 0, made.err
    pid = str(made.json()["proposal_id"])
    return pid, head_of(kb.root, f"refs/heads/vouch/proposal/{pid}")


def head_of(root: Path, rev: str) -> str:
    return git(root, "rev-parse", rev).strip()


def _commit_tree(root: Path, tree: str, parents: list[str], message: str) -> str:
    """A commit written with plumbing by the git user (Ada: Test Person)."""
    args = [a for p in parents for a in ("-p", p)]
    return subprocess.run(
        ["git", "commit-tree", tree, *args],
        cwd=root, input=message, check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip


def _hijacked(kb: KB, pid: str, commit: str, parents: list[str] | None = None) -> str:
    """A "revision" with the same tree and message, authored by the git user, put on the
    proposal branch; the branch's new tip."""
    message = git(kb.root, "log", "-1", "--format=%B", commit)
    made = _commit_tree(kb.root, f"{commit}^{{tree}}", parents or [commit], message)
    git(kb.root, "update-ref", f"refs/heads/vouch/proposal/{pid}", made, commit)
    return made


def test_a_foreign_revision_does_not_make_its_author_the_proposer(
    kb_with_sources: KB, run_cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    kb = kb_with_sources
    monkeypatch.chdir(kb.root)
    base = head(kb.root)
    pid, commit = _bobs_proposal(kb, run_cli, monkeypatch)
    tip = _hijacked(kb, pid, commit)

    pending = run_cli("pending", "--json", cwd=kb.root).json()
    assert [(p["proposal_id"], p["proposer"]) for p in pending] == [(pid, "Bob")]

    # approve lands nothing: the tip is a revision Bob did not make
    before = kb_state(kb.root)
    approve = run_cli("approve", pid, "--expect", tip, cwd=kb.root)
    assert approve.code == 1 and "E104" in approve.err, approve.err
    assert kb_state(kb.root) == before

    # Ada's rejection is a reviewer's rejection of Bob's proposal, not her withdrawal
    res = run_cli("reject", pid, "--reason", "mine now", "--expect", tip, "--json", cwd=kb.root)
    assert res.code == 0 and res.json()["withdrawn"] is False, res.out + res.err
    record = records.decision_of(kb, pid, head(kb.root))
    assert record is not None and "withdrawn" not in record
    assert (record["proposer"], record["proposer_email"]) == ("Bob", "bob@example.invalid")
    assert record["decided_by"] == PERSON
    events = run_cli("audit", "--json", cwd=kb.root).json()[-2:]
    assert [(e["event"], e["actor"]) for e in events] == [
        ("proposal.create", "Bob"),
        ("proposal.reject", PERSON),
    ]
    all_pass(kb, run_cli, base)


def test_a_branch_that_is_no_line_from_its_base_is_never_withdrawn(
    kb_with_sources: KB, run_cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ada's merge whose first parent is a root of her own, Bob's proposal its second:
    nobody can tell who proposed it, so her rejection is no withdrawal."""
    kb = kb_with_sources
    pid, commit = _bobs_proposal(kb, run_cli, monkeypatch)
    root = _commit_tree(kb.root, f"{commit}^{{tree}}", [], "unrelated\n")
    tip = _hijacked(kb, pid, commit, parents=[root, commit])
    res = run_cli("reject", pid, "--reason", "mine", "--expect", tip, "--json", cwd=kb.root)
    assert res.code == 0 and res.json()["withdrawn"] is False, res.out + res.err


def test_the_proposer_still_withdraws_their_own(
    kb_with_sources: KB, run_cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The guard's control: Bob rejecting his own proposal withdraws it."""
    kb = kb_with_sources
    pid, commit = _bobs_proposal(kb, run_cli, monkeypatch)
    with monkeypatch.context() as bob:
        for key, value in BOB.items():
            bob.setenv(key, value)
        res = run_cli("reject", pid, "--reason", "wrong", "--expect", commit, "--json",
                      cwd=kb.root)  # fmt: skip
    assert res.code == 0 and res.json()["withdrawn"] is True, res.out + res.err
