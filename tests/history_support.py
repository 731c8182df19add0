"""A knowledge base with a known history, for the provenance tests: what happened is
recorded beside it, so every answer is checked against the story, not against itself."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conftest import git
from gate_support import ALICE, BOB, call, show

from vouch.store.kb import KB

RUNBOOK = """# Runbook

Intro line.

## Deploy

Deploys need a green CI run.
Never deploy on Fridays, whatever
the release manager says.
Rollback with the script.

## Other

nothing else
"""
PAGE_BODY = "# Intro\n\nWhy we deploy this way.\n\n## Steps\n\none\ntwo\n"


@dataclass
class Story:
    root: Path
    kb: KB
    source: str
    ids: dict[str, str] = field(default_factory=dict)  # name -> object id
    proposals: dict[str, str] = field(default_factory=dict)  # name -> proposal id
    commits: dict[str, str] = field(default_factory=dict)  # name -> commit sha
    session: str = ""


def head(root: Path, rev: str = "HEAD") -> str:
    return git(root, "rev-parse", rev).strip()


def proposed(kb: KB, method: str, params: dict[str, Any], actor: str = ALICE) -> tuple[str, str]:
    result = call(kb, method, params, actor=actor)
    assert result["valid"], result
    kind = method.removeprefix("kb.propose_")
    return str(result["proposal_id"]), str(result[f"{kind}_id"])


def approve(kb: KB, pid: str, actor: str = BOB) -> str:
    show(kb, pid)  # the reviewer reads it first: `vouch show` pins the commit
    call(kb, "kb.approve", {"proposal_id": pid}, actor=actor)
    return head(kb.root)


def build(root: Path) -> Story:
    """main: a source, claims c1 (a span, a rationale, a session), c2 (a quote), c4, a
    page; branch `feature`: c3 approved there, c1 superseded by c3, c4 archived, a
    section of the page edited by hand; then `git merge --no-ff feature` into main."""
    from built_once import started

    kb = started(root)
    (root / "runbook.md").write_text(RUNBOOK)
    sid = call(kb, "kb.register_source_from_path", {"path": "runbook.md"})["id"]
    story = Story(root, kb, sid)
    story.session = call(kb, "kb.session_start", {"task": "read the runbook"})["session_id"]

    pid, cid = proposed(
        kb,
        "kb.propose_claim",
        {
            "text": "Deploys need a green CI run",
            "evidence": [f"{sid}:L7-L8"],
            "rationale": "the runbook says so\nin its deploy section",
            "session_id": story.session,
        },
    )
    story.proposals["c1"], story.ids["c1"] = pid, cid
    story.commits["c1-proposal"] = head(root, f"vouch/proposal/{pid}")
    story.commits["c1-approve"] = approve(kb, pid)

    ev = call(
        kb,
        "kb.register_evidence",
        {"source_id": sid, "locator": "#deploy", "quote": "Never deploy on Fridays, whatever the"},
    )["id"]
    story.ids["e2"] = ev
    pid, cid = proposed(
        kb, "kb.propose_claim", {"text": "Never deploy on Fridays", "evidence": [ev]}
    )
    story.proposals["c2"], story.ids["c2"] = pid, cid
    story.commits["c2-approve"] = approve(kb, pid)

    pid, cid = proposed(
        kb, "kb.propose_claim", {"text": "Rollbacks use the script", "evidence": [sid]}
    )
    story.proposals["c4"], story.ids["c4"] = pid, cid
    approve(kb, pid)
    pid, pg = proposed(kb, "kb.propose_page", {"title": "Deploy guide", "body": PAGE_BODY})
    story.proposals["page"], story.ids["page"] = pid, pg
    story.commits["page-approve"] = approve(kb, pid)
    story.commits["main-before"] = head(root)

    git(root, "checkout", "-qb", "feature")
    pid, cid = proposed(
        kb, "kb.propose_claim", {"text": "Deploys require a passing CI run", "evidence": [sid]}
    )
    story.proposals["c3"], story.ids["c3"] = pid, cid
    story.commits["c3-approve"] = approve(kb, pid)
    call(kb, "kb.supersede", {"old_id": story.ids["c1"], "new_id": cid, "reason": "reworded"})
    story.commits["supersede"] = head(root)
    call(kb, "kb.archive", {"id": story.ids["c4"], "reason": "obsolete"})
    page_file = next((kb.dir / "pages").rglob(f"{pg}.md"))
    page_file.write_text(page_file.read_text().replace("two\n", "two\nthree\n"))
    git(root, "commit", "-qam", "hand edit: a third step")
    story.commits["hand-edit"] = head(root)
    story.commits["feature"] = head(root)

    git(root, "checkout", "-q", "main")
    git(root, "merge", "-q", "--no-ff", "-m", "merge feature", "feature")
    story.commits["merge"] = head(root)
    return story
