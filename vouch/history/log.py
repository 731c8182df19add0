"""`vouch log [ID]`: the commits that changed one object (or the knowledge base), each
with the audit events it recorded.

Every vouch commit names the audit chain's head it left (`Vouch-Audit-Head`); a commit's
events are that head and the events before it, back to the head an earlier commit left.
"""

from __future__ import annotations

from typing import Any

from vouch.core import ids
from vouch.history.commits import read_log
from vouch.kinds import KINDS, source
from vouch.store import audit, writer
from vouch.store.kb import KB

_MAX_EVENTS = 64  # a commit records a handful; a broken chain never walks the whole log


def object_paths(kb: KB, object_id: str) -> list[str]:
    """Every repository path an object with this id can have: git log needs no kind."""
    ids.check_id(object_id)
    if ids.is_source_id(object_id):
        return [kb.rel(source.directory_for(object_id))]
    names = ("claim", "page", "entity", "relation", "evidence", "session")
    return [kb.rel(KINDS[n].path_for(object_id)) for n in names]


def log(
    kb: KB, object_id: str | None = None, rev: str = "HEAD", limit: int | None = 50
) -> dict[str, Any]:
    from vouch.errors import NotFound, UsageError

    if kb.repo.resolve(rev) is None:
        raise UsageError(f"{rev!r} is not a commit here", hint="name a branch, tag or commit")
    paths = object_paths(kb, object_id) if object_id else [kb.rel(".")]
    commits = read_log(kb, rev, paths, limit=limit or None)
    if object_id and not commits:
        raise NotFound(
            f"no commit in {rev} changed {object_id}",
            hint="a pending object has no history yet: `vouch show ID`",
        )
    events = _events_by_commit(kb, rev)
    return {
        "id": object_id,
        "rev": rev,
        "commits": [
            {**c.to_json(), "events": events(c.trailer(writer.AUDIT_HEAD))} for c in commits
        ],
    }


def _events_by_commit(kb: KB, rev: str) -> Any:
    """A function: a commit's audit head -> its events, oldest first."""
    by_hash = {str(e.get("hash")): e for e in audit.query(kb.dir)}
    anchors = {
        row[0].strip()
        for row in kb.repo.log_records(rev, [f"%(trailers:key={writer.AUDIT_HEAD},valueonly)"])
        if row and row[0].strip()
    }

    def events(head: str) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        current = by_hash.get(head) if head else None
        while current is not None and len(found) < _MAX_EVENTS:
            found.append(_brief(current))
            prev = str(current.get("prev_hash") or "")
            if prev in anchors:
                break
            current = by_hash.get(prev)
        found.reverse()
        return found

    return events


def _brief(event: dict[str, Any]) -> dict[str, Any]:
    keep = ("event", "actor", "created_at", "object_ids", "data")
    return {k: event.get(k) for k in keep}
