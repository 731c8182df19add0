"""A withdrawal needs no approver (the fifth outsider, row 2).

With `review.approvers` committed, a proposer who is not an approver withdrew their own
proposal at the CLI — vouch accepted it — and then `audit --verify`, `doctor` and
`lint --since` failed that withdrawal forever. A proposer's own withdrawal now passes
all three; a rejection of someone else's proposal by a person not in the list still
fails them, and so does one passed off as a withdrawal by rewriting its trailers.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import git
from gate_support import PERSON_EMAIL, a_source, call, propose_claim
from test_audit_proof import (
    all_fail,
    all_pass,
    head,
    needs_ssh,
    require_signatures,
    ssh_signing,
)

from vouch.store.kb import KB


@pytest.fixture
def listed(kb_with_sources: KB, monkeypatch: pytest.MonkeyPatch) -> KB:
    """Rita the only approver (committed); the git user, Test Person, is not one."""
    kb = kb_with_sources
    monkeypatch.chdir(kb.root)
    config = kb.dir / "config.yaml"
    config.write_text(
        config.read_text().replace("approvers: []", "approvers: [rita@example.invalid]")
    )
    git(kb.root, "commit", "-qam", "review: rita approves")
    return kb


def _withdraw_own(kb: KB, run_cli: Any, text: str, reason: str) -> None:
    """The proposer proposes, reads and rejects their own claim: a withdrawal."""
    made = run_cli("propose-claim", "--text", text, "--evidence", a_source(kb), "--json",
                   cwd=kb.root)  # fmt: skip
    pid = str(made.json()["proposal_id"])
    assert run_cli("show", pid, cwd=kb.root).code == 0
    res = run_cli("reject", pid, "--reason", reason, "--json", cwd=kb.root)
    assert res.code == 0 and res.json()["withdrawn"] is True, res.out + res.err


def test_a_proposer_who_is_no_approver_withdraws_and_every_check_passes(
    listed: KB, run_cli: Any
) -> None:
    kb = listed
    base = head(kb.root)
    _withdraw_own(kb, run_cli, "Mine to take back.", "cited the wrong line")
    all_pass(kb, run_cli, base)


def test_a_rejection_of_someone_elses_by_a_non_approver_still_fails(
    listed: KB, run_cli: Any
) -> None:
    """The guard's control: the exemption is a proposer's own withdrawal only."""
    kb = listed
    base = head(kb.root)
    pid = propose_claim(kb, "The agent alice proposed this")
    result = call(kb, "kb.reject", {"proposal_id": pid, "reason": "no"}, actor="")
    assert result["withdrawn"] is False
    all_fail(kb, run_cli, base, "review.approvers")


def test_a_rejection_passed_off_as_a_withdrawal_still_fails(listed: KB, run_cli: Any) -> None:
    """Test Person (no approver) rejects alice's proposal, then rewrites the decision's
    trailers to say it was the proposer's own withdrawal: its record still says alice
    proposed it and nobody withdrew it."""
    kb = listed
    base = head(kb.root)
    pid = propose_claim(kb, "The agent alice proposed this")
    call(kb, "kb.reject", {"proposal_id": pid, "reason": "no"}, actor="")
    message = git(kb.root, "log", "-1", "--format=%B").replace(
        "Vouch-Proposer: alice", "Vouch-Proposer: Test Person"
    )
    message = message.rstrip("\n") + "\nVouch-Withdrawn: true\n"
    forged = subprocess.run(
        ["git", "commit-tree", "HEAD^{tree}", "-p", "HEAD~1"],
        cwd=kb.root, input=message, check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip
    git(kb.root, "update-ref", "HEAD", forged)
    all_fail(kb, run_cli, base, forged[:12])


@needs_ssh
def test_a_signed_withdrawal_by_a_proposer_who_is_no_approver_passes(
    kb_with_sources: KB, run_cli: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """With signed decisions required, the withdrawal is signed by its proposer: a good
    signature by who acted, though not by an approver."""
    kb = kb_with_sources
    monkeypatch.chdir(kb.root)
    require_signatures(kb, ["rita@example.invalid"])
    ssh_signing(kb.root, tmp_path, PERSON_EMAIL)
    base = head(kb.root)
    _withdraw_own(kb, run_cli, "Mine, signed.", "wrong")
    all_pass(kb, run_cli, base)
