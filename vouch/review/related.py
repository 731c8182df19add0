"""Knowledge already approved that a proposal may repeat or contradict: a search on its
text, through the same engine as `kb.search`, kept only when it is genuinely alike
(`likeness`: a search ranks whatever matches best, however little)."""

from __future__ import annotations

from typing import Any

from vouch.errors import VouchError
from vouch.kinds import KINDS, Obj
from vouch.review.likeness import likeness
from vouch.search.api import request_from_params
from vouch.search.engine import search
from vouch.store.kb import KB

LIMIT = 5
CANDIDATES = 20  # what the search brings for `likeness` to judge


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
    """(approved objects of the same kind genuinely alike to `obj`, most alike first,
    each with its `similarity` and the `measure` it is in; why none could be searched).
    An object with several chunks (a page) counts by its most alike one."""
    query = query_for(kind, obj)
    if not query.strip() or kind not in ("claim", "page", "entity"):
        return [], None
    warm = warm if warm is not None else {}
    try:
        request = request_from_params(query, limit=CANDIDATES, kinds=[kind])
        request = request._replace(log=False)  # the screen's own search: not a user's query
        hits = [h for h in search(kb, request, warm=warm)["results"] if h["id"] != obj.get("id")]
        texts = [str(h.get("text") or "") for h in hits]
        figures, measure, bar = likeness(kb, query, texts, warm)
    except VouchError as exc:  # an unusable index must not hide the proposal itself
        return [], exc.message
    best: dict[str, tuple[float, dict[str, Any]]] = {}
    for figure, hit in zip(figures, hits, strict=True):
        if figure >= bar and figure > best.get(hit["id"], (-1.0, hit))[0]:
            best[hit["id"]] = (figure, hit)
    alike = sorted(best.values(), key=lambda pair: -pair[0])[:LIMIT]
    return [
        {
            "id": hit["id"],
            "kind": hit["kind"],
            "title": hit["source"].get("title"),
            "status": hit.get("status") or None,
            "similarity": figure,
            "measure": measure,
            "score": hit["score"],
            "text": hit.get("text"),
        }
        for figure, hit in alike
    ], None
