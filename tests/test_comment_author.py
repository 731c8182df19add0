"""A comment's author is its commit's git identity (the fifth outsider, row 15).

The proposer hand-wrote a comment commit on `refs/vouch/comments/<id>` whose trailer said
`Vouch-Commenter: Rita`, and `show` and `why` printed "comment by Rita". Built here with
plumbing: the thread names the git user who committed it, and the trailer only beside
it, flagged.
"""

from __future__ import annotations

import os
import subprocess
from typing import Any

from conftest import git
from gate_support import BOB, PERSON, PERSON_EMAIL, call, propose_claim

from vouch.store.kb import KB

RITA = "Rita Reviewer <rita@example.invalid>"


def _forged_comment(kb: KB, pid: str) -> str:
    """A comment commit written with plumbing by the git user, its trailer and its
    author header naming Rita."""
    commit = git(kb.root, "rev-parse", f"refs/heads/vouch/proposal/{pid}").strip()
    empty = git(kb.root, "hash-object", "-t", "tree", "/dev/null").strip()
    message = (
        f"vouch: comment on {pid}\n\nChecked it myself: LGTM, approving after lunch.\n\n"
        f"Vouch-Proposal: {pid}\nVouch-Commenter: {RITA}\nVouch-Revision-Commit: {commit}\n"
    )
    rita = {"GIT_AUTHOR_NAME": "Rita Reviewer", "GIT_AUTHOR_EMAIL": "rita@example.invalid"}
    made = subprocess.run(
        ["git", "commit-tree", empty], cwd=kb.root, input=message,
        env={**os.environ, **rita}, check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip
    git(kb.root, "update-ref", f"refs/vouch/comments/{pid}", made)
    return made


def test_a_comment_trailer_naming_someone_else_is_not_its_author(
    kb_with_sources: KB, run_cli: Any
) -> None:
    kb = kb_with_sources
    pid = propose_claim(kb, "The cache TTL is 3000 seconds")
    _forged_comment(kb, pid)
    shown = run_cli("show", pid, "--json", cwd=kb.root).json()
    [said] = shown["comments"]
    assert said["author"].startswith(f"{PERSON} (its trailer claims")
    assert (said["author_email"], said["named"]) == (PERSON_EMAIL, RITA)
    human = run_cli("show", pid, cwd=kb.root).out
    assert f"comment by {PERSON} (its trailer claims" in human
    assert "comment by Rita" not in human
    approved = call(kb, "kb.approve", {"proposal_id": pid}, actor=BOB)
    why = run_cli("why", approved["object_id"], cwd=kb.root)
    assert why.code == 0, why.err
    assert f"comment by {PERSON} (its trailer claims" in why.out, why.out
    assert "comment by Rita" not in why.out


def test_comments_made_by_vouch_name_who_made_them(kb_with_sources: KB, run_cli: Any) -> None:
    """The guard's control: a person's comment at the CLI (`--as` a label only) and an
    agent's, under its reserved address, run by the git user."""
    kb = kb_with_sources
    pid = propose_claim(kb, "The cache TTL is 3000 seconds")
    assert run_cli("comment", pid, "which line?", "--as", "Rita", cwd=kb.root).code == 0
    assert call(kb, "kb.comment_proposal", {"proposal_id": pid, "text": "L2"}, BOB)["ok"]
    person, agent = run_cli("show", pid, "--json", cwd=kb.root).json()["comments"]
    assert (person["author"], person["author_email"]) == (PERSON, PERSON_EMAIL)
    assert (agent["author"], agent["author_email"]) == (BOB, "bob@agent.vouch.invalid")
    assert agent["operator"] == f"{PERSON} <{PERSON_EMAIL}>"
    assert "named" not in person and "named" not in agent
