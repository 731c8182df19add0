"""A context pack drawn from several registered knowledge bases (`vouch context --all`,
`kb.context` with `kbs`).

Each base packs its own items for the task as a local pack does (`context.build`, on
its index as it is: nothing refreshed, nothing logged there), within the whole budget;
the items are then scored again on one scale, the way a search across bases scores its
hits (`across.rescore`: BM25 on the bases' shared statistics, one embedding model, the
prior by kind and status), and packed best first into `max_chars`. Each item names its
base (`kb`); `bases` reports every base's state, as search does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from vouch.errors import EmptyQuery, UsageError, VouchError
from vouch.search.across import Pooled, rescore, revision_of

if TYPE_CHECKING:
    from vouch.search.access import SearchIndex
    from vouch.search.bases import Base


def build_across(
    names: Sequence[str],
    task: str,
    *,
    max_chars: int = 4000,
    min_items: int = 0,
    require_citations: bool = False,
    warm: dict[str, Any] | None = None,
    transport: str = "cli",
) -> dict[str, Any]:
    from vouch.search import bases as places
    from vouch.search.context import build

    warm = warm if warm is not None else {}
    found: list[Base] = []
    indexes: list[SearchIndex] = []
    packs: list[dict[str, Any]] = []
    for base, index in places.registered_opened(names, warm):
        if index is not None and base.kb is not None:
            try:
                pack = build(
                    base.kb,
                    task,
                    max_chars=max_chars,
                    min_items=min_items,
                    require_citations=require_citations,
                    warm=warm,
                    transport=transport,
                    refresh=False,
                )
            except (EmptyQuery, UsageError):
                raise
            except VouchError as exc:
                base = base._replace(state="unusable", detail=exc.message)
            else:
                indexes.append(index)
                packs.append(pack)
        found.append(base)
    searched = [b for b in found if b.searched]
    pool = [
        Pooled(
            n,
            item,
            (str(item.get("title") or ""), str(item.get("section") or ""), item["text"], ""),
        )
        for n, pack in enumerate(packs)
        for item in pack["items"]
    ]
    text = packs[0]["task"] if packs else task
    ranked = rescore(text, "hybrid", pool, indexes, warm)
    items: list[dict[str, Any]] = []
    used, truncated = 0, any(p["truncated"] for p in packs)
    for fused in ranked.fused():
        place = pool[int(str(fused.key))]
        size = len(place.hit["text"])
        if used + size > max_chars:
            truncated = True
            continue
        used += size
        items.append({**place.hit, "kb": searched[place.base].name, "score": round(fused.score, 6)})
    unreviewed = [] if items else _passages(packs, searched, max_chars)
    from vouch.search import passages

    return {
        "task": text,
        "items": items,
        "total_chars": used,
        "truncated": truncated,
        "max_chars": max_chars,
        "dropped_uncited": sum(p["dropped_uncited"] for p in packs),
        "corpus_revision": revision_of(searched, packs),
        "unreviewed": unreviewed,
        "next_step": None if items else passages.next_step(unreviewed),
        "kbs": [b.name for b in searched],
        "bases": [b.report() for b in found],
    }


def _passages(
    packs: Sequence[dict[str, Any]], searched: Sequence[Base], max_chars: int
) -> list[dict[str, Any]]:
    """With no item in any base: the bases' unreviewed passages, in turn, each naming
    its base, within the budget."""
    out: list[dict[str, Any]] = []
    used = 0
    columns = [
        [{**p, "kb": b.name} for p in pack["unreviewed"]]
        for b, pack in zip(searched, packs, strict=True)
    ]
    for row in range(max((len(c) for c in columns), default=0)):
        for column in columns:
            if row < len(column) and used + len(column[row].get("text") or "") <= max_chars:
                used += len(column[row].get("text") or "")
                out.append(column[row])
    return out
