"""`audit --verify`, `doctor` and `lint --since` agree on a history.

Each is what someone trusts at a different moment (a reviewer's clone, a nightly job, CI
on a pull request): a history one of them fails and another passes tells whoever ran the
lenient one that all is well. The attacks the outsiders found checked by only one of the
three are built here in real repositories and shown failed by all of them. (`audit
--verify` judges the audit log and the commits that wrote it; knowledge committed with no
audit line at all is `doctor`'s and `lint --since`'s.)
"""

from __future__ import annotations

from typing import Any

import pytest
from conftest import git
from gate_support import a_source, proposed
from test_audit_proof import (
    _commit,
    _smuggled,
    all_fail,
    approve,
    checks,
    forge_append,
    head,
    propose,
)

from vouch.kinds import entity
from vouch.store.kb import KB


@pytest.fixture
def approved_once(kb_with_sources: KB, monkeypatch: pytest.MonkeyPatch) -> KB:
    monkeypatch.chdir(kb_with_sources.root)
    approve(kb_with_sources, "Deploys need a green CI run")
    return kb_with_sources


def _registration(kb: KB) -> str:
    """Commit what is in the work tree typed as a source registration: a correctly
    chained `source.register` event and every trailer vouch would write."""
    event = forge_append(kb.root, "source.register", "Test Person", [a_source(kb)])
    git(kb.root, "add", "-A")
    trailers = (
        f"Vouch-Event: source.register\nVouch-Actor: Test Person\nVouch-Audit-Head: {event}\n"
    )
    return _commit(kb.root, "vouch: register source", trailers)


def test_a_claim_in_a_disguised_registration_fails_every_check(
    approved_once: KB, run_cli: Any
) -> None:
    """The second outsider: lint --since (CI) passed it, only doctor saw it."""
    kb = approved_once
    base = head(kb.root)
    _smuggled(kb, "Smuggled without a record", "Test Person")
    forged = _registration(kb)
    all_fail(kb, run_cli, base, forged[:12])


def test_an_entity_in_a_disguised_registration_fails_every_check(
    approved_once: KB, run_cli: Any
) -> None:
    kb = approved_once
    base = head(kb.root)
    made = proposed(kb, "kb.propose_entity", {"name": "requests", "type": "project"})
    rel = f".vouch/{entity.path_for(made['entity_id'])}"
    ref = f"refs/heads/vouch/proposal/{made['proposal_id']}"
    (kb.root / rel).parent.mkdir(parents=True, exist_ok=True)
    (kb.root / rel).write_text(git(kb.root, "show", f"{ref}:{rel}"))
    forged = _registration(kb)
    all_fail(kb, run_cli, base, forged[:12])


def test_a_claim_edited_in_a_disguised_lifecycle_write_fails_every_check(
    approved_once: KB, run_cli: Any
) -> None:
    """A lifecycle edit changes knowledge that exists; one typed by hand that adds a
    claim besides is refused."""
    kb = approved_once
    base = head(kb.root)
    _smuggled(kb, "Added beside a confirmation", "Test Person")
    event = forge_append(kb.root, "claim.confirm", "Test Person", [])
    git(kb.root, "add", "-A")
    forged = _commit(
        kb.root,
        "vouch: confirm claim",
        f"Vouch-Event: claim.confirm\nVouch-Actor: Test Person\nVouch-Audit-Head: {event}\n",
    )
    all_fail(kb, run_cli, base, forged[:12])


def test_a_plain_commit_adding_a_claim_fails_doctor_and_lint(
    approved_once: KB, run_cli: Any
) -> None:
    kb = approved_once
    base = head(kb.root)
    _smuggled(kb, "Committed by hand", "Test Person")
    git(kb.root, "add", "-A")
    _commit(kb.root, "add a claim", "")
    found = checks(kb, run_cli, base)
    assert found["doctor"][0] == 1 and found["lint"][0] == 1, found


def test_a_decision_by_someone_not_listed_fails_every_check(
    approved_once: KB, run_cli: Any
) -> None:
    """Only lint --since compared decisions with review.approvers; doctor and audit
    --verify now judge each by the list committed before it."""
    kb = approved_once
    config = kb.dir / "config.yaml"
    config.write_text(
        config.read_text().replace("approvers: []", "approvers: [rita@example.invalid]")
    )
    git(kb.root, "commit", "-qam", "only rita approves")
    base = head(kb.root)
    approve(kb, "Approved by the test person, who is not listed")
    # lint --since first (as CI runs it): what it leaves in the clone's cache of proven
    # commits must not let doctor skip the decision (the fourth outsider)
    assert run_cli("lint", "--since", base, "--json", cwd=kb.root).code == 1
    all_fail(kb, run_cli, base, head(kb.root)[:12], "review.approvers")


def test_a_merge_that_keeps_one_side_loses_nothing_unseen(approved_once: KB, run_cli: Any) -> None:
    """The third outsider: a pull request from an old main merges main with `-s ours`,
    dropping every approval made since; lint --since main passed it."""
    kb = approved_once
    old = head(kb.root)
    approve(kb, "Approved and then lost")
    main = head(kb.root)
    git(kb.root, "checkout", "-qb", "pr", old)
    (kb.root / "doc.md").write_text("docs\n")
    git(kb.root, "add", "doc.md")
    git(kb.root, "commit", "-qm", "add docs")
    git(kb.root, "merge", "-q", "-s", "ours", "main", "-m", "Merge branch 'main' into pr")
    all_fail(kb, run_cli, main)
    lint = checks(kb, run_cli, main)["lint"][1]
    assert "knowledge-lost" in lint and "audit-shrunk" in lint, lint


def test_a_merge_resolved_by_deleting_the_other_approval_fails_lint(
    approved_once: KB, run_cli: Any
) -> None:
    """Two clones approve at once; the second resolves its pull by deleting the first's
    claim (its record and audit lines kept)."""
    kb = approved_once
    fork = head(kb.root)
    approve(kb, "Approved on main")
    main = head(kb.root)
    claim_path = git(kb.root, "diff", "--name-only", fork, main, "--", ".vouch/claims").split()[0]
    git(kb.root, "checkout", "-qb", "mine", fork)
    approve(kb, "Approved in my clone")
    git(kb.root, "merge", "-q", "--no-commit", "main")
    git(kb.root, "rm", "-q", "-f", claim_path)
    git(kb.root, "commit", "-qm", "merge main")
    lint = checks(kb, run_cli, main)["lint"]
    assert lint[0] == 1 and "knowledge-lost" in lint[1] and claim_path in lint[1], lint


@pytest.mark.parametrize(
    ("line", "written"),
    [
        ("approvers: []", "approvers: rita@example.invalid"),
        ("require_signed_decisions: false", "require_signed_decisions: 'true'"),
        ("approver_role: human", "approver_role: Human"),
    ],
)
def test_review_settings_nobody_can_read_fail_closed(
    approved_once: KB, run_cli: Any, line: str, written: str
) -> None:
    """The third outsider: approvers as one string, or a quoted 'true', read as the
    default — anyone approved, unsigned, and lint --since and audit passed."""
    kb = approved_once
    config = kb.dir / "config.yaml"
    config.write_text(config.read_text().replace(line, written))
    git(kb.root, "commit", "-qam", "review settings, mistyped")
    base = head(kb.root)
    from gate_support import propose_claim, show

    pid = propose_claim(kb, "Approved under settings nobody can read", shown=False)
    show(kb, pid)
    before = git(kb.root, "for-each-ref"), git(kb.root, "status", "--porcelain")
    res = run_cli("approve", pid, cwd=kb.root)
    assert res.code == 1 and "E111" in res.err and "review" in res.err, res.err
    assert (git(kb.root, "for-each-ref"), git(kb.root, "status", "--porcelain")) == before
    for args in (("lint", "--since", f"{base}~1", "--json"), ("doctor", "--json")):
        found = run_cli(*args, cwd=kb.root)
        assert found.code == 1 and "review" in found.out + found.err, (args, found.out)


@pytest.mark.parametrize("event", ["proposal.withdraw", "proposal.approve", "claim.invented"])
def test_a_decision_event_typed_as_a_direct_write_fails_every_check(
    approved_once: KB, run_cli: Any, event: str
) -> None:
    """The fifth outsider: a plain commit typed as a direct write appended one chained
    `proposal.withdraw` (or `proposal.approve`) event by someone else for an open
    proposal, with no decision record; every check passed it and `vouch audit` said that
    person had withdrawn. Only a decision writes those events."""
    kb = approved_once
    base = head(kb.root)
    pid = propose(kb, "Someone else's open proposal")
    made = forge_append(kb.root, event, "Bob Reviewer", [pid])
    git(kb.root, "add", "-A")
    trailers = (
        f"Vouch-Event: {event}\nVouch-Actor: Bob Reviewer\nVouch-Object: {pid}\n"
        f"Vouch-Audit-Head: {made}\n"
    )
    forged = _commit(kb.root, "vouch: withdraw", trailers)
    all_fail(kb, run_cli, base, forged[:12], "never writes without a decision")
