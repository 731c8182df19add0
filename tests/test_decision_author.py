"""A decision commit is authored by the person deciding (issue 36, the first hour: with
the README's `GIT_COMMITTER_NAME=Rita ... vouch approve`, `vouch why` said Rita but
`git log` said the configured user).

The decider is the identity vouch decides as (`git var GIT_COMMITTER_IDENT`); the
commit's author says the same, whatever GIT_AUTHOR_* or `author.*` name — a decision
commit whose author is someone else would contradict its own record — while
GIT_AUTHOR_DATE still dates it, as git would."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import git
from gate_support import PERSON, PERSON_EMAIL, a_source, propose_claim

from vouch.store.kb import KB

RITA = ("Rita Reviewer", "rita@example.com")
ME = f"{PERSON} <{PERSON_EMAIL}>"
HER = f"{RITA[0]} <{RITA[1]}>"


def as_rita(monkeypatch: pytest.MonkeyPatch) -> None:
    """The README's recipe for a second identity in one clone."""
    monkeypatch.setenv("GIT_COMMITTER_NAME", RITA[0])
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", RITA[1])


def people(root: Path, rev: str = "main") -> str:
    """`author|committer` of a commit, as `git log` shows them."""
    return git(root, "log", "-1", "--format=%an <%ae>|%cn <%ce>", rev).strip()


def mine(kb: KB, run_cli, text: str) -> str:
    """A proposal by the configured git user (Test Person), as a person makes one."""
    res = run_cli("propose-claim", "--text", text, "--source", a_source(kb), "--json", cwd=kb.root)
    assert res.code == 0, res.err
    return str(res.json()["proposal_id"])


def test_an_approval_is_authored_by_the_approver(
    kb_with_sources: KB, run_cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    kb = kb_with_sources
    pid = mine(kb, run_cli, "Rita approves this one")
    as_rita(monkeypatch)
    assert run_cli("show", pid, cwd=kb.root).code == 0
    assert run_cli("approve", pid, "--reason", "checked", cwd=kb.root).code == 0
    assert people(kb.root) == f"{HER}|{HER}"
    assert f"Vouch-Proposal: {pid}" in git(kb.root, "log", "-1", "--format=%B")
    # the proposal commit stays the proposer's
    assert people(kb.root, "main^2") == f"{ME}|{ME}"


def test_a_rejection_is_authored_by_the_reviewer(
    kb_with_sources: KB, run_cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    kb = kb_with_sources
    pid = mine(kb, run_cli, "Rita rejects this one")
    as_rita(monkeypatch)
    assert run_cli("show", pid, cwd=kb.root).code == 0
    assert run_cli("reject", pid, "--reason", "no source says so", cwd=kb.root).code == 0
    assert people(kb.root) == f"{HER}|{HER}"


def test_an_explicit_author_does_not_speak_for_the_decider(
    kb_with_sources: KB, run_cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GIT_AUTHOR_* set in the environment (a shell, a CI system) names someone else:
    the decision commit still names who decided; the author date is still git's."""
    kb = kb_with_sources
    pid = propose_claim(kb, "An agent proposed this one")
    as_rita(monkeypatch)
    monkeypatch.setenv("GIT_AUTHOR_NAME", "CI Bot")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "ci@example.com")
    monkeypatch.setenv("GIT_AUTHOR_DATE", "2020-02-03T04:05:06+00:00")
    assert run_cli("approve", pid, cwd=kb.root).code == 0
    assert people(kb.root) == f"{HER}|{HER}"
    assert git(kb.root, "log", "-1", "--format=%aI").strip() == "2020-02-03T04:05:06+00:00"


def test_a_withdrawal_is_authored_by_the_proposer(
    kb_with_sources: KB, run_cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    kb = kb_with_sources
    pid = mine(kb, run_cli, "I take this one back")
    monkeypatch.setenv("GIT_AUTHOR_NAME", "CI Bot")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "ci@example.com")
    assert run_cli("show", pid, cwd=kb.root).code == 0
    assert run_cli("reject", pid, "--reason", "wrong lines", cwd=kb.root).code == 0
    assert "Vouch-Withdrawn" in git(kb.root, "log", "-1", "--format=%B")
    assert people(kb.root) == f"{ME}|{ME}"


def test_a_decision_recorded_after_a_git_merge_is_the_approvers(
    kb_with_sources: KB, run_cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    kb = kb_with_sources
    pid = mine(kb, run_cli, "Merged by git, recorded by Rita")
    git(kb.root, "merge", "-q", "--no-ff", "-m", "merge by hand", f"vouch/proposal/{pid}")
    as_rita(monkeypatch)
    assert run_cli("show", pid, cwd=kb.root).code == 0
    res = run_cli("approve", pid, "--json", cwd=kb.root)
    assert res.code == 0 and res.json()["recorded_after_merge"], res.out + res.err
    assert people(kb.root) == f"{HER}|{HER}"
