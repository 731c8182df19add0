"""What an approved redaction emptied stays empty, and nothing is emptied without one.

- lint (`check_sources`): a source's tombstone (`redacted_at`) must be backed by an
  approved change decision naming it — the decision records, which travel with a bundle
  — and a source such a decision names must still be a tombstone (a plain commit can
  mark a source redacted without review, or restore its folder);
- doctor (`issues`): a claim, page or entity an approved redaction emptied (the audit
  log names it: `vouch.gate.changes.redacted_by_decisions`) whose words a plain commit
  put back, and a redacted source whose file in the work tree still holds its bytes.
(A content file beside a tombstone is lint's `redacted-content`.)"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from vouch.core import ids
from vouch.errors import CorruptFile
from vouch.gate.changes import CHANGE, redacted_by_decisions
from vouch.health.files import DECISION, catalog
from vouch.health.issues import Issue, error, warn
from vouch.kinds import KINDS
from vouch.kinds import source as source_kind
from vouch.kinds.base import Obj, redacted
from vouch.store.kb import DECIDED_DIR, KB

if TYPE_CHECKING:
    from vouch.health.rules import Knowledge

REDACTABLE = tuple(KINDS[name] for name in ("claim", "page", "entity"))


def issues(kb: KB) -> list[Issue]:
    """Doctor's word on the redactions the audit log records: a claim, page or entity
    whose redaction a plain commit undid, and a redacted source whose file in the work
    tree still holds its bytes (a source's tombstone itself is lint's: `check_sources`)."""
    out: list[Issue] = []
    for oid in sorted(redacted_by_decisions(kb)):
        if ids.is_source_id(oid):
            out += _still_in_work_tree(kb, oid)
        elif ids.is_object_id(oid):
            out += _restored(kb, oid)
    return out


def _restored(kb: KB, oid: str) -> list[Issue]:
    for kind in REDACTABLE:
        rel = kind.path_for(oid)
        try:
            text = (kb.dir / rel).read_text("utf-8")
        except (OSError, UnicodeDecodeError):
            continue  # not of this kind, or deleted since: nothing back
        try:
            obj = kind.load(text, where=kb.rel(rel))
        except CorruptFile:
            return []  # lint names an unreadable file
        if redacted(kind, obj):
            return []
        return [
            error(
                "unredacted",
                f"an approved redaction emptied this {kind.name}, and its words are "
                "back (a commit outside vouch restored them): check it out from the "
                "redaction's commit (`vouch log` names it) and commit",
                id=oid,
                path=kb.rel(rel),
            )
        ]
    return []


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


# -- lint: a tombstone only by a decision, and a decided one stays ---------------------------
def redacting(records: Iterable[Obj]) -> set[str]:
    """The sources approved change decisions name: a change of a source is its
    redaction (no other change takes a source), so these are the ones a person redacted.
    Decision records travel with a bundle, so an imported redaction is backed too."""
    return {
        str(r.get("object_id"))
        for r in records
        if r.get("decision") == "approved"
        and r.get("kind") == CHANGE
        and ids.is_source_id(str(r.get("object_id")))
    }


def check_sources(k: Knowledge, sids: Iterable[str], decided: set[str]) -> list[Issue]:
    """For each of `sids`: a tombstone that no approved decision made (a plain commit
    marking a source redacted: its bytes went unreviewed), or a source a decision
    redacted that is no tombstone any more (a plain commit restored it)."""
    out: list[Issue] = []
    for sid in sorted(set(sids)):
        meta = k.get("source", sid)
        if meta is None:
            continue
        rel = k.rels.get(("source", sid))
        path = k.path(rel) if rel else None
        if source_kind.is_redacted(meta) and sid not in decided:
            out.append(
                error(
                    "unapproved-redaction",
                    f"source {sid[:12]}… is marked redacted, but no approved decision "
                    "redacted it: its bytes went without review — restore the folder from "
                    "the commit before (`git log -- <path>`) and propose `vouch redact`",
                    id=sid,
                    path=path,
                )
            )
        elif sid in decided and not source_kind.is_redacted(meta):
            out.append(
                error(
                    "unredacted",
                    f"an approved decision redacted source {sid[:12]}…, and its meta.yaml "
                    "is no tombstone any more (a commit outside vouch restored it): check "
                    "the folder out from the redaction's commit and commit",
                    id=sid,
                    path=path,
                )
            )
    return out


def decided_in(k: Knowledge, kb: KB, sids: list[str], grep: dict[str, Any]) -> set[str]:
    """Those of `sids` an approved change decision names, found among the decision
    records (`grep`: where to look, as `grep_paths` takes it)."""
    from vouch.git.history import grep_paths

    if not sids:
        return set()
    start = k.view.prefix
    found = []
    for path in grep_paths(kb.repo, sids, [kb.rel(DECIDED_DIR)], **grep):
        entry = catalog(path[len(start) :]) if path.startswith(start) else None
        if entry is not None and entry.kind == DECISION:
            record = k.load(entry)
            if record is not None:
                found.append(record)
    return redacting(found) & set(sids)
