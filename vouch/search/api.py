"""The `kb.search` handler: registry parameters → SearchRequest → hits or envelope.

Without `envelope` the result is the hit array of spec/kb-methods.md (each hit carries
`kind, id, snippet, score, backend` and the response fields of search-output.md); with
`envelope: true` it is the whole response (cursor, truncation, trace). Both come from
the one `engine.search`.
"""

from __future__ import annotations

from typing import Any

from vouch.methods.context import CallContext
from vouch.search.engine import SearchRequest, search

_MODE_ALIASES = {
    "hybrid": "hybrid",
    "fts": "fts",
    "lexical": "fts",
    "vector": "vector",
    "vec": "vector",
}


def request_from_params(
    query: str,
    *,
    limit: int | None = None,
    kinds: list[str] | None = None,
    mode: str = "hybrid",
    tags: list[str] | None = None,
    types: list[str] | None = None,
    statuses: list[str] | None = None,
    speakers: list[str] | None = None,
    since: str | None = None,
    until: str | None = None,
    threshold: float | None = None,
    rrf_k: float | None = None,
    cursor: str | None = None,
    max_tokens: int | None = None,
    trace: bool = False,
    include_pending: bool = False,
    transport: str = "cli",
) -> SearchRequest:
    from vouch.kinds import kind_named

    return SearchRequest(
        query=query,
        mode=_MODE_ALIASES.get(mode, mode),
        top=limit,
        kinds=tuple(kind_named(k).name for k in kinds or ()),
        tags=tuple(tags or ()),
        types=tuple(types or ()),
        statuses=tuple(statuses or ()),
        speakers=tuple(speakers or ()),
        since=since,
        until=until,
        threshold=threshold,
        rrf_k=rrf_k,
        cursor=cursor,
        max_tokens=max_tokens,
        trace=trace,
        include_pending=include_pending,
        transport=transport,
    )


def kb_search(
    ctx: CallContext,
    query: str,
    envelope: bool = False,
    kbs: list[str] | None = None,
    **params: Any,
) -> Any:
    request = request_from_params(query, transport=ctx.transport, **params)
    if request.rrf_k is not None:
        # an explicit k asks for textbook RRF: equal channel weights (the spec's worked
        # example), on every transport alike
        request = request._replace(weights={})
    if kbs:
        # registered names only (`store.kb_registry`): no transport reaches a path
        from vouch.search.across import search_bases

        response = search_bases(kbs, request, warm=ctx.warm)
        return response if envelope else response["results"]
    response = search(ctx.kb, request, warm=ctx.warm, progress=ctx.progress)
    return response if envelope else response["results"]
