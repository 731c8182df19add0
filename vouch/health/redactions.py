"""`vouch doctor`: what an approved redaction emptied stays empty. A plain `git commit` can
put a redacted claim's words or a redacted source's bytes back; the audit log names what
each approved redaction touched (`vouch.gate.changes.redacted_by_decisions`), and each
must still be a redaction in the work tree: a claim with status `redacted`, a source
whose meta.yaml is a tombstone (`redacted_at`) with no content file. (A source's content
file beside its tombstone is lint's `redacted-content`; an object since deleted is
nothing to restore.)"""

from __future__ import annotations

from vouch.core import ids
from vouch.errors import CorruptFile
from vouch.gate.changes import redacted_by_decisions
from vouch.health.issues import Issue, error, warn
from vouch.kinds import claim as claim_kind
from vouch.kinds import source as source_kind
from vouch.kinds.base import REDACTED
from vouch.store.kb import KB


def issues(kb: KB) -> list[Issue]:
    out: list[Issue] = []
    for oid in sorted(redacted_by_decisions(kb)):
        if ids.is_source_id(oid):
            rel, kind = source_kind.path_for(oid), source_kind.KIND
        elif ids.is_object_id(oid):
            rel, kind = claim_kind.path_for(oid), claim_kind.KIND
        else:
            continue
        if kind is source_kind.KIND:
            out += _still_in_work_tree(kb, oid)
        try:
            text = (kb.dir / rel).read_text("utf-8")
        except (OSError, UnicodeDecodeError):
            continue  # gone (deleted since, or evidence: not a claim) — nothing back
        try:
            obj = kind.load(text, where=kb.rel(rel))
        except CorruptFile:
            continue  # lint names an unreadable file
        held = (
            source_kind.is_redacted(obj)
            if kind is source_kind.KIND
            else (obj.get("status") == REDACTED)
        )
        if not held:
            out.append(
                error(
                    "unredacted",
                    f"an approved redaction emptied this {kind.name}, and its words are "
                    "back (a commit outside vouch restored them): check it out from the "
                    "redaction's commit (`vouch log` names it) and commit",
                    id=oid,
                    path=kb.rel(rel),
                )
            )
    return out


def _still_in_work_tree(kb: KB, source_id: str) -> list[Issue]:
    """A warning when the file a redacted source was read from still holds its bytes:
    vouch keeps none of them, the repository's own file does (and `source add` of it is
    refused)."""
    from vouch.health.file_versions import work_tree_digest
    from vouch.store.supplied import named_path

    meta = kb.read(source_kind.KIND, source_id)
    locator = str((meta or {}).get("locator") or "")
    named = named_path(kb, locator) if locator else None
    if named is None or work_tree_digest(kb, named[1]) != source_id:
        return []
    return [
        warn(
            "redacted-in-work-tree",
            f"{named[1]} still holds the bytes of source {source_id[:12]}…, which an "
            "approved decision redacted: vouch keeps none of them, this file does — "
            "remove the words from it and commit (git history keeps them until "
            f"`vouch forget {source_id} --purge-history`)",
            id=source_id,
            path=named[1],
        )
    ]
