"""What an agent needs to cite a hit without another read: a source hit's line span and
ready citation are shaped with the hit (`hits.result`); here every claim, page and
relation hit gets the ids it stands on (`evidence`: a claim's or relation's citations, a
page's sources and claims) and its `confidence`, read from the
object's file (pending hits: from the proposal's commit). Entity and source hits carry
`evidence: []` and `confidence: null`, so every hit has the same fields."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vouch.errors import CorruptFile, InvalidId

if TYPE_CHECKING:
    from vouch.search.pending import Pending
    from vouch.store.kb import KB

CITING_KINDS = ("claim", "page", "relation")


def attach_citations(kb: KB, results: list[dict[str, Any]], pending: Pending | None) -> None:
    """Add `evidence` and `confidence` to each hit, in place."""
    from vouch.kinds import KINDS

    read: dict[tuple[str, str], dict[str, Any] | None] = {}
    for result in results:
        kind, object_id = result["kind"], result["id"]
        obj: dict[str, Any] | None = None
        if kind in CITING_KINDS:
            if result.get("pending") and pending is not None:
                obj = pending.object_of(result["chunk_id"])
            elif (kind, object_id) in read:
                obj = read[(kind, object_id)]
            else:
                try:
                    obj = kb.read(KINDS[kind], object_id)
                except (CorruptFile, InvalidId):  # the index said more than the file does
                    obj = None
                read[(kind, object_id)] = obj
        result["evidence"] = _evidence(kind, obj)
        result["confidence"] = (obj or {}).get("confidence") if kind != "page" else None
        if kind == "page":
            result["claims"] = list((obj or {}).get("claims") or [])


def _evidence(kind: str, obj: dict[str, Any] | None) -> list[str]:
    if obj is None:
        return []
    fields = ("sources", "claims") if kind == "page" else ("evidence",)
    return [str(i) for field in fields for i in obj.get(field) or []]
