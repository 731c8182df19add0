"""Handlers for the provenance methods: thin adapters from CallContext to `vouch.history`."""

from __future__ import annotations

from typing import Any

from vouch.methods.context import CallContext


def why(ctx: CallContext, id: str) -> dict[str, Any]:
    from vouch.history.why import why as explain

    return explain(ctx.kb, id)


def log(ctx: CallContext, id: str | None = None, rev: str = "HEAD", limit: int = 50) -> Any:
    from vouch.history.log import log as history_log

    return history_log(ctx.kb, id, rev, limit or None)


def diff(ctx: CallContext, revisions: str, graph: bool = False) -> dict[str, Any]:
    from vouch.history.diff import diff as knowledge_diff

    return knowledge_diff(ctx.kb, revisions, graph=graph)


def blame(ctx: CallContext, id: str, rev: str = "HEAD") -> dict[str, Any]:
    from vouch.history.blame import blame as page_blame

    return page_blame(ctx.kb, id, rev)


def impact(ctx: CallContext, id: str) -> dict[str, Any]:
    from vouch.history.impact import impact as rests_on

    return rests_on(ctx.kb, id)


def graph(
    ctx: CallContext,
    id: str | None = None,
    depth: int = 2,
    pending: bool = False,
    max_nodes: int = 200,
    max_edges: int = 400,
) -> dict[str, Any]:
    from vouch.history import graph as knowledge_graph

    if id is None:
        return knowledge_graph.whole(
            ctx.kb, max_nodes=max_nodes, max_edges=max_edges, pending=pending
        )
    return knowledge_graph.around(
        ctx.kb, id, depth=depth, max_nodes=max_nodes, max_edges=max_edges, pending=pending
    )
