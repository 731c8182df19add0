"""What an agent needs to cite a hit without another read: a source hit's line span and
ready citation are shaped with the hit (`hits.result`); here every claim, page and
relation hit gets the ids it stands on (`evidence`: a claim's or relation's citations, a
page's sources and claims) and its `confidence`, read from the
object's file (pending hits: from the proposal's commit). Entity and source hits carry
`evidence: []` and `confidence: null`, so every hit has the same fields. A claim hit
whose cited lines its file no longer holds as registered carries `drifted`."""

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
    claims: list[tuple[dict[str, Any], dict[str, Any]]] = []  # (hit, claim) approved
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
        if kind == "claim" and obj is not None and not result.get("pending"):
            claims.append((result, obj))
        result["evidence"] = _evidence(kind, obj)
        result["confidence"] = (obj or {}).get("confidence") if kind != "page" else None
        if kind == "page":
            result["claims"] = list((obj or {}).get("claims") or [])
    mark_drift(kb, claims)


def mark_drift(kb: KB, claims: list[tuple[dict[str, Any], dict[str, Any]]]) -> None:
    """`drifted` on each claim hit whose cited lines the work tree no longer holds as
    registered (`vouch.health.drift`): `{path, locator, state, now}` per citation."""
    if not claims:
        return
    from vouch.health.drift import of_claims

    by_claim: dict[str, list[dict[str, Any]]] = {}
    for d in of_claims(kb, [obj for _, obj in claims]):
        by_claim.setdefault(d.claim_id, []).append(
            {"path": d.path, "locator": d.locator, "state": d.state, "now": d.now}
        )
    for result, obj in claims:
        found = by_claim.get(str(obj.get("id")))
        if found:
            result["drifted"] = found


def _evidence(kind: str, obj: dict[str, Any] | None) -> list[str]:
    if obj is None:
        return []
    fields = ("sources", "claims") if kind == "page" else ("evidence",)
    return [str(i) for field in fields for i in obj.get(field) or []]
