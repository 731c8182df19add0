"""The review screen: a proposal, the text each citation points at, and what it may
repeat or contradict among approved knowledge.

`kb.read_proposal` answers with it on every transport, so an agent asked to review
sees what a person sees at `vouch show PROPOSAL`.
"""

from __future__ import annotations

from typing import Any

from vouch.gate import pending
from vouch.history.citations import cite
from vouch.history.snapshot import Snapshot
from vouch.store.kb import KB


def cited_ids(kind: str, obj: dict[str, Any]) -> list[str]:
    field = "sources" if kind == "page" else "evidence"
    return [str(i) for i in obj.get(field) or []]


def review(
    kb: KB,
    proposal_id: str,
    *,
    record: bool = False,
    related: bool = True,
    warm: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """`pending.show` plus `citations` (read in the proposal's own commit: evidence it
    makes exists only there) and `related` (approved look-alikes)."""
    data = pending.show(kb, proposal_id, record=record)
    obj, kind, commit = data.get("object"), data.get("kind"), data.get("commit")
    if not obj or not kind or not commit:
        return data
    snap = Snapshot(kb, str(commit))
    data["citations"] = [cite(snap, item) for item in cited_ids(str(kind), obj)]
    if related and data.get("state") == "pending":
        from vouch.review.related import near

        data["related"], problem = near(kb, str(kind), obj, warm=warm)
        if problem:
            data["related_unavailable"] = problem
    return data
