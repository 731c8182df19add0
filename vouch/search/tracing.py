"""What `--trace` shows a person: each channel's list, the first few of each named.

The trace (`trace`) lists chunk ids: the lexical channel's BM25 order, the vector
channel's cosine order and the fused order with each candidate's ranks. A chunk id means
nothing to a person, so the first NAMED entries of each list also carry the object they
belong to (`id`) and, for a source's lines, the citation a hit would give (`cite`:
`docs/a.rst:L5-L9`, or the id form for a source with no path). `lines` renders the
channels for `--format human`: SHOWN entries each, with rank and score.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from vouch.kinds.source import shown
from vouch.search.hits import SHOWN_DECIMALS

if TYPE_CHECKING:
    from vouch.search.fusion import Fused

NAMED = 10  # entries of each trace list that name their object
SHOWN = 5  # entries of each list the human format prints
LISTS = ("lexical", "vector", "rrf_inputs")
TIMED = ("lexical", "vector", "fusion", "total")  # the trace's timings, in milliseconds


def trace(
    lexical: Sequence[Any] | None,
    vector: Sequence[tuple[int, float]] | None,
    fused: Sequence[Fused],
    timing: Mapping[str, int],
) -> dict[str, Any]:
    """Each channel's list (BM25 or cosine order), the fused order with each candidate's
    ranks and parts, and the milliseconds of each stage timed (`TIMED`)."""
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


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, SHOWN_DECIMALS)


def wanted(trace: dict[str, Any]) -> set[int]:
    """The chunk ids `name` names: the first NAMED entries of each list."""
    return {int(e["chunk_id"]) for key in LISTS for e in (trace.get(key) or ())[:NAMED]}


def name(trace: dict[str, Any], found: Mapping[int, Any]) -> None:
    """Add `id` (and `cite` for a source's lines) to the first NAMED entries of each list;
    `found` holds the chunks' metadata by chunk id (`wanted`; ids it lacks stay
    unnamed)."""
    for key in LISTS:
        for entry in (trace.get(key) or ())[:NAMED]:
            row = found.get(int(entry["chunk_id"]))
            if row is not None:
                entry["id"] = row.id
                cite = _cite(row)
                if cite:
                    entry["cite"] = cite


def _cite(row: Any) -> str | None:
    if row.kind != "source" or row.start_line is None or row.end_line is None:
        return None
    span = f"L{row.start_line}-L{row.end_line}"
    by_path = None if row.status == "superseded" else shown(row.locator, span)
    return by_path or f"{str(row.id)[:12]}:{span}"


def lines(trace: dict[str, Any], mode: str = "hybrid") -> list[str]:
    """The channel lists of a search in `mode` (hybrid, fts, vector), SHOWN entries
    each, as `--format human` prints them; a fused entry names its rank in each channel
    and the part of its score the prior added (reviewed knowledge first)."""
    weights = trace.get("weights") or {}
    out = []
    for key, title, channel, score in (
        ("lexical", "lexical (BM25)", "fts", "bm25"),
        ("vector", "vector (cosine)", "vector", "cosine"),
        ("rrf_inputs", "fused", None, "score"),
    ):
        if mode != "hybrid" and channel and channel != mode:
            continue  # the channel did not run
        entries = trace.get(key) or []
        weight = weights.get(channel) if channel else None
        head = f"Trace {title}: {len(entries)} found"
        if weight is not None:
            head += f", weight {weight:.2f}"
        out.append(head + (":" if entries else ""))
        for rank, entry in enumerate(entries[:SHOWN], 1):  # each list is in rank order
            ranks = entry.get("ranks")
            parts = [f"{c} #{r}" for c, r in (ranks or {}).items()]
            added = (entry.get("score_breakdown") or {}).get("prior")
            if added:
                parts.append(f"prior +{added:.3f}")
            via = f" ({', '.join(parts)})" if parts else ""
            value = entry.get(score)
            number = f"{value:.3f}" if isinstance(value, int | float) else "-"
            out.append(f"  {rank:>2}. {_label(entry)} {score} {number}{via}")
    return out


def _label(entry: dict[str, Any]) -> str:
    return str(entry.get("cite") or entry.get("id") or f"chunk {entry['chunk_id']}")
