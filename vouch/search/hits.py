"""A search hit as the response carries it (search-output.md): its score and parts, the
chunk's text and snippet, where it comes from and how to cite it; a hit on a transcript
turn (issue 19) also carries the turn's number, speaker and time in `source`, a citation
of the turn (`SOURCE:T12`), and its neighbouring turns of the same session as `context`
— never across a session boundary."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from vouch.kinds.source import shown
from vouch.search.fusion import Fused
from vouch.search.snippet import make_snippet

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


def turn_fields(row: Any) -> dict[str, Any]:
    """`turn`, `speaker`, `time`, `session` of a turn chunk; nothing for other chunks."""
    if getattr(row, "turn", None) is None:
        return {}
    return {"turn": row.turn, "speaker": row.speaker, "time": row.time, "session": row.session}


def turn_cite(row: Any) -> str | None:
    """`<source>:T12` for a turn chunk, else None."""
    turn = getattr(row, "turn", None)
    return f"{row.id}:T{turn}" if turn is not None and row.kind == "source" else None


def neighbour(info: Any) -> dict[str, Any]:
    return {"turn": info.turn, "speaker": info.speaker, "time": info.time, "text": info.text}


def turns(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The hits on transcript turns of the knowledge base (not of an open proposal)."""
    return [
        h
        for h in results
        if h.get("kind") == "source"
        and h["source"].get("turn") is not None
        and not h.get("pending")
    ]


def attach_context(turns: list[dict[str, Any]], near: Mapping[int, Sequence[Any]]) -> None:
    """Give each turn hit its neighbouring turns (`context`: the one before and after
    it in the same session, in order; `near` by chunk id, `Index.neighbours`)."""
    for hit in turns:
        hit["context"] = [neighbour(n) for n in near.get(hit["chunk_id"], [])]
