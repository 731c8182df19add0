"""Knowledge already approved that a proposal may repeat or contradict: a search on its
text, through the same engine as `kb.search`."""

from __future__ import annotations

from typing import Any

from vouch.errors import VouchError
from vouch.kinds import KINDS, Obj
from vouch.search.api import request_from_params
from vouch.search.engine import search
from vouch.store.kb import KB

LIMIT = 5


def query_for(kind: str, obj: Obj) -> str:
    """The text a proposed object is searched by."""
    if kind == "claim":
        return str(obj.get("text") or "")
    if kind == "entity":
        return " ".join(str(obj.get(k) or "") for k in ("name", "description")).strip()
    if kind == "page":
        return f"{obj.get('title') or ''}\n{str(obj.get('body') or '')[:500]}".strip()
    return KINDS[kind].title_of(obj)


def near(
    kb: KB, kind: str, obj: Obj, *, warm: dict[str, Any] | None = None
) -> tuple[list[dict[str, Any]], str | None]:
    """(approved objects of the same kind nearest to `obj`, why none could be searched)."""
    query = query_for(kind, obj)
    if not query.strip() or kind not in ("claim", "page", "entity"):
        return [], None
    try:
        request = request_from_params(query, limit=LIMIT + 1, kinds=[kind], mode="fts")
        request = request._replace(log=False)  # the screen's own search: not a user's query
        hits = search(kb, request, warm=warm if warm is not None else {})["results"]
    except VouchError as exc:  # an unusable index must not hide the proposal itself
        return [], exc.message
    out: list[dict[str, Any]] = []
    for hit in hits:
        if hit["id"] == obj.get("id") or any(o["id"] == hit["id"] for o in out):
            continue
        out.append(
            {
                "id": hit["id"],
                "kind": hit["kind"],
                "title": hit["source"].get("title"),
                "status": hit.get("status") or None,
                "score": hit["score"],
                "text": hit.get("text"),
            }
        )
    return out[:LIMIT], None
