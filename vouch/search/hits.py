"""A search hit and a search trace as the response carries them (search-output.md)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from vouch.kinds.source import shown
from vouch.search.fusion import Fused
from vouch.search.snippet import make_snippet
from vouch.search.turns import turn_cite, turn_fields

TIMED = ("lexical", "vector", "fusion", "total")  # the trace's timings, in milliseconds


SHOWN_DECIMALS = 6  # a score is shown rounded to this many decimals
SHOWN_HALF_STEP = 0.5 * 10**-SHOWN_DECIMALS  # what rounding hides either side


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, SHOWN_DECIMALS)


def _breakdown(parts: Mapping[str, float | None]) -> dict[str, float | None]:
    """The score's parts, always naming `fts`, `vector` and `prior`: null for a channel
    that did not run, and for the prior where none was applied (rank fusion)."""
    out: dict[str, float | None] = {"fts": None, "vector": None, "prior": None}
    out.update((name, _round(v)) for name, v in parts.items())
    return out


def result(
    fused: Fused, row: Any, snippets: Mapping[int, str], query: str, backend: str
) -> dict[str, Any]:
    snippet = snippets.get(row.chunk_id) or make_snippet(row.text, query)
    object_id = row.id
    lines = None
    if row.kind == "source" and row.start_line is not None and row.end_line is not None:
        lines = [row.start_line, row.end_line]
    cite = (
        turn_cite(row) or (f"{object_id}:L{lines[0]}-L{lines[1]}" if lines else object_id)
        if row.kind == "source"
        else None
    )
    return {
        "chunk_id": row.chunk_id,
        "score": round(fused.score, SHOWN_DECIMALS),
        "score_breakdown": _breakdown(fused.breakdown),
        "text": row.text,
        "snippet": snippet,
        "kind": row.kind,
        "id": object_id,
        "status": row.status,
        "backend": backend,
        "source": {
            "document_id": object_id,
            "title": row.title,
            "path": row.path,
            "type": row.type,
            "page": row.page,
            "section": row.section,
            "chunk_index": row.chunk_index,
            "total_chunks": row.total_chunks,
            "tags": list(row.tags),
            "locator": row.locator,
            "lines": lines,
            **turn_fields(row),
        },
        # what `propose-claim --source` takes as is: the chunk's line span of a source,
        # or its turn (`T12`) of a transcript
        "cite": cite,
        # the same by the source's path (`docs/a.rst:L5-L9`), taken back as well
        "cite_path": _by_path(row, cite),
    }


def _by_path(row: Any, cite: str | None) -> str | None:
    """`cite` with the source's locator for its id: None for other kinds, a superseded
    version (its path names the current one) and a source without a path (stdin)."""
    if cite is None or row.status == "superseded":
        return None
    return shown(row.locator, cite.partition(":")[2] or None)


def trace(
    lexical: Sequence[Any] | None,
    vector: Sequence[tuple[int, float]] | None,
    fused: Sequence[Fused],
    timing: Mapping[str, int],
) -> dict[str, Any]:
    return {
        "lexical": [
            {"chunk_id": h.chunk_id, "rank": n, "bm25": round(h.score, 6)}
            for n, h in enumerate(lexical or (), 1)
        ],
        "vector": [
            {"chunk_id": cid, "rank": n, "cosine": round(sim, 6)}
            for n, (cid, sim) in enumerate(vector or (), 1)
        ],
        "rrf_inputs": [
            {
                "chunk_id": f.key,
                "ranks": f.ranks,
                "score": round(f.score, 6),
                "score_breakdown": {k: _round(v) for k, v in f.breakdown.items()},
            }
            for f in fused
        ],
        "timing": {f"{name}_ms": timing.get(name, 0) for name in TIMED},
    }
