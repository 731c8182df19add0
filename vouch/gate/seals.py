"""Seals: the bytes of approved knowledge as vouch wrote them, recorded where a check
can read them back.

Every write that lands an approved object names the blob it landed, so that lint and
doctor can tell vouch's own writes from a hand edit without walking history:

- `vouch approve` writes `blobs: {path: blob}` into the decision record
  (`decided/<hh>/<proposal>.yaml`) for each object file it lands (`landed`);
- a lifecycle write (supersede, contradict, archive, confirm, cite, promote) records
  `blobs: {path: [before, after]}` in the data of its audit event (`edited`): the
  blob it changed and the one it left, so the writes of one file form a chain from its
  approval to its current bytes;
- a bundle import lands decision records with their seals, but not the exporting
  clone's audit log: for each object whose bytes are not its decision's seal (changed
  by lifecycle writes over there) its event records [that seal, the bytes it landed]
  (`imported`), which links the chain again.

Paths are `.vouch/`-relative, blob ids in the repository's own object format.
`vouch.health.sealed` reads them back.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from vouch.kinds import GATED, KINDS
from vouch.store.kb import KB

FIELD = "blobs"  # in a decision record and in a lifecycle event's data
DELETED = "deleted"  # the "after" of a file an approved deletion removed
GATED_DIRS = tuple(KINDS[name].directory for name in GATED)


def is_gated(rel: str) -> bool:
    """A `.vouch/`-relative path of approved knowledge (claims, entities, relations,
    pages): the files a seal covers."""
    return rel.split("/", 1)[0] in GATED_DIRS


def landed(kb: KB, changes: Mapping[str, str | None]) -> dict[str, str]:
    """The seal of a decision: `.vouch/`-relative path -> blob for each knowledge file
    among `changes` (repository paths -> blob, as a decision commit lands them)."""
    start = kb.rel(".") + "/"
    return {
        p[len(start) :]: b
        for p, b in sorted(changes.items())
        if b is not None and p.startswith(start) and is_gated(p[len(start) :])
    }


def edited(kb: KB, files: Iterable[tuple[str, bytes, bytes]]) -> dict[str, list[str]]:
    """The seal of a lifecycle write: `.vouch/`-relative path -> [blob before, blob
    after] for each knowledge file it edits, given (path, old bytes, new bytes)."""
    repo = kb.repo
    return {
        rel: [repo.blob_id(old), repo.blob_id(new)]
        for rel, old, new in sorted(files)
        if is_gated(rel) and old != new
    }


def removed(kb: KB, files: Iterable[tuple[str, bytes]]) -> dict[str, list[str]]:
    """The seal of an approved deletion: [blob before, DELETED] for each knowledge file
    it removes, given (path, old bytes)."""
    return {rel: [kb.repo.blob_id(old), DELETED] for rel, old in sorted(files) if is_gated(rel)}


def imported(
    kb: KB, landing: Mapping[str, bytes], parsed: Mapping[str, Mapping[str, Any]]
) -> dict[str, list[str]]:
    """The seal of a bundle import: [decision's seal, blob landed] for each knowledge
    file of `landing` whose bytes differ from the seal its decision record names
    (`parsed`: the bundle's objects by path, decision records among them)."""
    sealed: dict[str, str] = {}
    for rel, record in parsed.items():
        blobs = record.get(FIELD) if rel.startswith("decided/") else None
        if record.get("decision") == "approved" and isinstance(blobs, dict):
            sealed.update({p: b for p, b in blobs.items() if isinstance(b, str)})
    out: dict[str, list[str]] = {}
    for rel, data in sorted(landing.items()):
        if rel in sealed and is_gated(rel):
            blob = kb.repo.blob_id(data)
            if blob != sealed[rel]:
                out[rel] = [sealed[rel], blob]
    return out
