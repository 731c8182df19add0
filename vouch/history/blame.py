"""`vouch blame PAGE`: each section of a page with the proposal that last changed it.

The page file's history is one `git log` of its path; the page is read at each of those
commits, and a section is credited to the oldest commit from which, walking back from
the newest, its text stayed as it is now. A decision's merge commit only stamps the
frontmatter, so a section is credited to the proposal commit that wrote it, and the
decision that approved that proposal is found among the same commits.
"""

from __future__ import annotations

from typing import Any

from vouch.core.ids import check_id
from vouch.errors import NotFound, UsageError
from vouch.history.commits import Commit, read_log
from vouch.history.snapshot import Snapshot
from vouch.kinds import page
from vouch.store.kb import KB


def blame(kb: KB, page_id: str, rev: str = "HEAD") -> dict[str, Any]:
    check_id(page_id)
    tip = kb.repo.resolve(rev)
    if tip is None:
        raise UsageError(f"{rev!r} is not a commit here", hint="name a branch, tag or commit")
    current = Snapshot(kb, tip).object("page", page_id)
    if current is None:
        raise NotFound(f"no page {page_id} in {rev}", hint="`vouch list pages` lists them")
    commits = read_log(kb, tip, [kb.rel(page.path_for(page_id))])
    versions = [(c, _sections(Snapshot(kb, c.sha).object("page", page_id))) for c in commits]
    decisions = {c.proposal_id: c for c in commits if c.role == "decision"}
    out = []
    for sec in page.sections(str(current.get("body") or "")):
        credited: Commit | None = None
        for commit, secs in versions:
            if secs.get(sec.heading) != sec.text:
                break
            credited = commit
        out.append(
            {
                "heading": sec.heading,
                "level": sec.level,
                "start_line": sec.start_line,
                "end_line": sec.end_line - 1,
                **_credit(credited, decisions),
            }
        )
    return {"id": page_id, "title": current.get("title"), "rev": rev, "sections": out}


def _sections(obj: Any) -> dict[str, str]:
    if obj is None:
        return {}
    return {s.heading: s.text for s in page.sections(str(obj.get("body") or ""))}


def _credit(commit: Commit | None, decisions: dict[str | None, Commit]) -> dict[str, Any]:
    if commit is None:
        return {"commit": None}
    out: dict[str, Any] = {
        "commit": commit.sha,
        "date": commit.date,
        "role": commit.role,
        "author": commit.actor,
        "subject": commit.subject,
    }
    pid = commit.proposal_id
    if pid:
        out["proposal_id"] = pid
        out["proposer"] = commit.trailer("Vouch-Proposer") or None
        decision = decisions.get(pid)
        if decision is not None:
            out["approved_by"] = decision.trailer("Vouch-Approver")
            out["approved_at"] = decision.date
    return out
