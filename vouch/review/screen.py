"""The review screen: a proposal, the text each citation points at, and what it may
repeat or contradict among approved knowledge.

`kb.read_proposal` answers with it on every transport, so an agent asked to review
sees what a person sees at `vouch show PROPOSAL`.
"""

from __future__ import annotations

from typing import Any

from vouch.core import ids
from vouch.errors import VouchError
from vouch.gate import change_view, changes, pending
from vouch.gate.changes import CHANGE
from vouch.history.citations import cite
from vouch.history.snapshot import Snapshot
from vouch.kinds import KINDS
from vouch.kinds import source as source_kind
from vouch.kinds.base import redacted
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
    makes exists only there) and `related` (approved look-alikes).

    A cold call opens the search index first and builds the screen while git checks the
    index's freshness (`open_index(meanwhile=...)`): the two cost the wall time of one.
    """
    warm = warm if warm is not None else {}
    built: list[dict[str, Any]] = []
    failed: list[BaseException] = []

    def build(_index: object = None) -> None:
        try:
            built.append(_screen(kb, proposal_id, record))
        except BaseException as exc:  # raised below, after the index is left alone
            failed.append(exc)

    unavailable = None
    if related:
        from vouch.errors import VouchError
        from vouch.search.access import open_index

        try:
            open_index(kb, warm, meanwhile=build)
        except VouchError as exc:  # an unusable index must not hide the proposal itself
            unavailable = exc.message
    if failed:
        raise failed[0]
    if not built:  # a warm index (no freshness check to overlap), or none at all
        build()
        if failed:
            raise failed[0]
    data = built[0]
    obj, kind = data.get("object"), data.get("kind")
    if related and obj and kind in KINDS and data.get("state") == "pending":
        from vouch.review.related import near

        data["related"], problem = near(kb, str(kind), obj, warm=warm)
        if problem or unavailable:
            data["related_unavailable"] = problem or unavailable
    return data


def _screen(kb: KB, proposal_id: str, record: bool) -> dict[str, Any]:
    data = _forgotten(kb, pending.show(kb, proposal_id, record=record))
    if data.get("kind") == CHANGE and data.get("ref"):
        data.update(change_view.shown(kb, proposal_id, data))
    obj, commit = data.get("object"), data.get("commit")
    kind = data.get("object_kind") or data.get("kind")  # a change: the changed object's
    if obj and kind in KINDS and commit:
        snap = Snapshot(kb, str(commit))
        data["citations"] = _unredacted(
            kb, [cite(snap, item) for item in cited_ids(str(kind), obj)]
        )
    return data


_SHOWN_OF_REDACTED = ("id", "kind", "source_id", "locator", "cite_path")


def _unredacted(kb: KB, citations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The citations as the checked-out branch allows them: one into a source a decision
    has since redacted (a proposal made before the redaction still reads it as it was)
    shows none of its words — no title, quote or lines."""
    head = Snapshot(kb)
    out = []
    for c in citations:
        sid = str(c.get("source_id") or "")
        if ids.is_source_id(sid) and source_kind.is_redacted(head.object("source", sid)):
            anchor = str(c.get("locator") or "").startswith("#")  # a heading's words
            kept = ("id", "kind", "source_id") if anchor else _SHOWN_OF_REDACTED
            c = {k: c[k] for k in kept if c.get(k) is not None}
            c.update(redacted=True, problem="its source was redacted by a decision")
        out.append(c)
    return out


_HIDDEN = "[redacted]"


def _forgotten(kb: KB, data: dict[str, Any]) -> dict[str, Any]:
    """A decided proposal whose object a later decision redacted or deleted: its words
    are not served again (title, rationale, object, diff). Git history keeps them until
    it is rewritten (`vouch forget`)."""
    record = data.get("decision") or {}
    kind = KINDS.get(str(data.get("kind") or record.get("kind")))
    oid = str(data.get("object_id") or record.get("object_id") or "")
    if kind is None or data.get("state") not in ("approved", "rejected") or not oid:
        return data
    try:
        now = kb.read(kind, oid)
    except (VouchError, ValueError):
        return data
    if now is not None and not redacted(kind, now):
        return data
    if now is None and oid not in changes.deleted_by_decisions(kb):
        return data
    hidden: dict[str, Any] = {"title": _HIDDEN, "rationale": "", "object": None, "diff": ""}
    if isinstance(record, dict) and record:
        hidden["decision"] = {k: v for k, v in record.items() if k != "blobs"}
    revisions = [{**r, "rationale": ""} for r in data.get("revisions") or []]
    return {**data, **hidden, "revisions": revisions, "redacted": True}
