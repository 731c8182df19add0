"""The `retrieval` field of kb.capabilities: what search can do with this index."""

from __future__ import annotations

from typing import Any

from vouch.methods.context import CallContext


def describe(ctx: CallContext) -> dict[str, Any]:
    """Backends and model as configured; reads config only (no index is opened)."""
    from vouch.index import chunking, graph
    from vouch.index.settings import Settings

    settings = Settings.of(ctx.kb)
    model = settings.model
    modes = ["hybrid", "fts", "vector"] if model else ["fts"]
    return {
        "lexical": settings.lexical,
        "tokenizer": settings.tokenizer,
        # exact over the matrix; with the hnsw extra, a graph in warm processes too
        "vector": ("hnswlib+exact" if graph.available() else "exact") if model else None,
        "embedding": {"model": model.name, "id": model.model_id, "dims": model.dims}
        if model
        else None,
        "modes": modes,
        # default hybrid: min-max normalised BM25 and cosine, combined convexly; an
        # explicit --rrf-k asks for reciprocal rank fusion with that k
        "fusion": "convex",
        "rrf_k": ctx.kb.config.get("search.rrf_k", 60),
        "filters": ["kind", "type", "status", "tags"],
        "indexed_kinds": list(chunking.INDEXED_KINDS),
        "auto_refresh": settings.auto_refresh,
    }
