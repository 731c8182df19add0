"""Registry handlers for the index (kb.index_rebuild, kb.index_status) and the index's
part of kb.status: CallContext in, JSON out."""

from __future__ import annotations

from typing import Any

from vouch.methods.context import CallContext


def index_rebuild(ctx: CallContext, force: bool = False) -> dict[str, Any]:
    """Rebuild the whole index aside and swap it in; `force` replaces another knowledge
    base's index at this path instead of refusing (E003)."""
    from vouch.index.api import rebuild_index

    report = rebuild_index(ctx.kb, force=force, progress=ctx.progress)
    # a server's warm index still points at the replaced files: drop it
    for key in [k for k in ctx.warm if isinstance(k, tuple) and "index" in str(k[0])]:
        ctx.warm.pop(key, None)
    return {"ok": True, "indexed": report.documents, **report.to_json()}


def index_status(ctx: CallContext) -> dict[str, Any]:
    from vouch.index.status import index_status as status

    return status(ctx.kb)
