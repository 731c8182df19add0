"""The one search function, as a pipeline: hybrid retrieval over the derived index, as
a response dict.

`search(kb, request)` serves `vouch search`, `kb.search` on every transport (the hit
array is `response["results"]`) and `vouch eval`. `_search` states the stages in order;
each is a function below, in the same order, taking the previous stage's value and
returning its own (vouch/search/values.py: NamedTuples, each keeping the one before).
A stage reads what it needs from the index (`access.SearchIndex`) and hands the values
to the one module that holds its algorithm, which reads nothing itself:

1. `parse`        Asked → Query     the request checked, config defaults filled
                                    (`request`), the ranking's knobs read (`tuning`)
2. `filter_scope` Query → Scope     open the index (refreshed when stale), the filters,
                                    an open proposal, the page's place (`cursor`)
3. `channels`     Scope → Channels  lexical and/or vector candidates, filtered inside
                                    the index
4. `fuse`         Channels → Fusion weights that follow lexical coverage (`weighting`,
                                    `ranking`), convex fusion (`ranking`), or weighted
                                    RRF when weights or k are given (`fusion`)
5. `context`      Fusion → Fusion   transcript turns with their exchange (`ranking`)
6. `floor`        Fusion → Fusion   vector-only hits below the similarity floor out
                                    (`ranking`)
7. `prior`        Fusion → Fusion   reviewed knowledge first (`prior`)
8. `threshold`    Fusion → Fusion   `--threshold`, on the score as shown
9. `page`         Fusion → Page     the page's hits (`hits`, `citing`)
10. `budget`      Page → Kept       `--max-tokens` (`budget`), the next cursor (`cursor`)
11. `respond`     Kept → dict       the response, and the trace when asked (`tracing`)
12. `log_search`  Logged → None     every call is logged, a failed one too (`log`)

Between stages the candidates travel as `ranked.Ranked` (columns; `fusion.Listed` for
one lexical channel), whose methods every stage from `fuse` on uses.

Context comes before the floor, unlike the order issue 35 sketched (… floor → context
…), and stays there: the ranking was tuned in this order (bench/RESULTS.md, issue 19),
and the two do not commute. A transcript turn gains a share of its neighbours' fused
scores, a weak vector-only neighbour's too; with the floor first, those neighbours
would be gone before they lent their part, and `in_context` would bring a floored turn
back as a neighbour no channel found (the floor drops only what the vector channel
listed). Context and prior are the tuned default's; rank fusion (RRF, one channel)
passes through them unchanged.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from vouch.core.progress import Progress
from vouch.errors import VouchError
from vouch.search import cursor as cursors
from vouch.search import hits, ranking
from vouch.search import prior as priors
from vouch.search.budget import apply_budget
from vouch.search.fusion import Listed, rrf
from vouch.search.ranking import fusion_weights, scored_lexical, similarity_floor
from vouch.search.request import HIDDEN_STATUSES, SEARCH_KINDS, SearchRequest
from vouch.search.tuning import Tuning
from vouch.search.values import (
    Asked,
    Channels,
    Fusion,
    Kept,
    Logged,
    Page,
    Query,
    Scope,
    Timer,
)

if TYPE_CHECKING:
    from vouch.index.api import Index
    from vouch.index.lexical import LexicalHit
    from vouch.search.access import SearchIndex
    from vouch.search.ranked import Ranked
    from vouch.store.kb import KB

SCHEMA_VERSION = "search_response.v1"
# The ranking's knobs and their tuned defaults: vouch/search/tuning.py.
CANDIDATE_FACTOR = 3  # each channel retrieves 3 × top candidates (spec/hybrid-search.md),
CANDIDATES = 200  # and never fewer than this (the fusion was tuned at 200): the ranked
# list, its pages and total_matches do not depend on --top (a cursor walk equals one
# call) up to top 66


def search(
    kb: KB,
    request: SearchRequest,
    *,
    warm: dict[str, Any] | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Run one search and log it (also when it fails). `progress` hears of an index
    build (the first search of a fresh clone)."""
    started = time.perf_counter()
    try:
        response = _search(kb, request, warm if warm is not None else {}, started, progress)
    except Exception as exc:  # logged (also an unexpected failure), then re-raised
        log_search(Logged(kb, request, started, None, exc))
        raise
    log_search(Logged(kb, request, started, response, None))
    return response


def _search(
    kb: KB,
    request: SearchRequest,
    warm: dict[str, Any],
    started: float,
    progress: Progress | None,
) -> dict[str, Any]:
    """The stages in order; each takes the one before's value and returns its own (the
    last, `log_search`, runs in `search`, for a failed call too)."""
    query = parse(Asked(kb, request, warm, progress, started))
    scope = filter_scope(query)
    found = channels(scope)
    t0 = time.perf_counter()
    fusion = fuse(found)
    fusion = context(fusion)
    fusion = floor(fusion)
    fusion = prior(fusion)
    fusion = threshold(fusion)
    query.timer.add("fusion", t0)  # the trace's fusion_ms: from fuse to threshold
    shown = page(fusion)
    kept = budget(shown)
    return respond(kept)


# -- the stages, in the order a query passes them ------------------------------------------


def parse(asked: Asked) -> Query:
    """Check the request (E004 / E100), fill in config defaults, read the knobs."""
    kb = asked.kb
    req = asked.request.checked(kb.config)
    if req.mode == "hybrid" and kb.config.get("embedding.enabled", True) is False:
        # a lexical-only knowledge base: the default search is lexical; only an explicit
        # vector request is an error (E107)
        req = req._replace(mode="fts")
    assert req.top is not None and req.rrf_k is not None
    return Query(asked, req, Tuning.from_config(kb.config), Timer())


def filter_scope(query: Query) -> Scope:
    """Open the index (refreshing it when stale), build the filters, and place the page:
    from the cursor (E1xx when it is stale or for another search) or from the top."""
    from vouch.search import access

    kb, req = query.asked.kb, query.req
    assert req.top is not None
    index = access.open_index(
        kb,
        query.asked.warm,
        meanwhile=_embed_early(req),
        progress=query.asked.progress,
        refresh=req.refresh,
    )
    filters = access.filters(
        kinds=req.kinds or SEARCH_KINDS,
        tags=req.tags,
        types=req.types,
        statuses=req.statuses,
        exclude=() if req.statuses else HIDDEN_STATUSES,
        speakers=req.speakers,
        since=req.since,
        until=req.until,
    )
    pending = None
    revision = index.revision
    if req.include_pending:
        from vouch.search.pending import Pending

        pending = Pending(kb, filters, query.asked.warm)
        revision = f"{revision}+{pending.revision()}"
    shape = {
        "q": req.query,
        "mode": req.mode,
        "kinds": sorted(req.kinds),
        "tags": sorted(req.tags),
        "types": sorted(req.types),
        "statuses": sorted(req.statuses),
        **(
            {"speakers": sorted(req.speakers), "since": req.since, "until": req.until}
            if req.speakers or req.since or req.until
            else {}
        ),
        "threshold": req.threshold,
        "k": req.rrf_k,
        "w": req.weights,
        "tuning": query.tuning,
        "pending": req.include_pending,
    }
    fingerprint = cursors.fingerprint(shape)
    if req.cursor:
        position = cursors.decode(req.cursor, revision=revision, expected_fingerprint=fingerprint)
        offset, depth = position.offset, position.depth
    else:
        offset, depth = 0, max(CANDIDATES, CANDIDATE_FACTOR * req.top)
    return Scope(query, index, filters, pending, revision, fingerprint, offset, depth)


def channels(scope: Scope) -> Channels:
    """The lexical and/or vector channel at the candidate depth, filtered in the index;
    an open proposal's chunks merged into each."""
    req, tuning, timer = scope.query.req, scope.query.tuning, scope.query.timer
    index, filters, pending, depth = scope.search_index, scope.filters, scope.pending, scope.depth
    lexical: list[LexicalHit] | None = None
    if req.mode in ("hybrid", "fts"):
        t0 = time.perf_counter()
        lexical = index.lexical(req.query, depth, filters, within=bool(tuning.tag_idf))
        if pending is not None:
            texts = {c: i.text for c, i in index.chunks(h.chunk_id for h in lexical).items()}
            lexical = pending.merge_lexical(req.query, lexical, texts, depth)
        timer.add("lexical", t0)
    vector: list[tuple[int, float]] | None = None
    if req.mode in ("hybrid", "vector"):
        t0 = time.perf_counter()
        found = index.vector(req.query, depth, filters)
        if pending is not None:
            found = pending.merge_vector(
                index.query_vector(req.query), found, index.embed_texts, depth
            )
        # a cosine of 0 or less carries no signal: a query of unknown words (a zero
        # vector) must not "match" every chunk
        vector = [(cid, sim) for cid, sim in found if sim > 0 and sim >= tuning.min_similarity]
        timer.add("vector", t0)
    return Channels(scope, lexical, vector)


def fuse(found: Channels) -> Fusion:
    """One ranked list: the tuned default (normalised scores combined convexly, with
    weights that follow the query's lexical coverage; transcript turns by their own),
    or weighted RRF when weights or k are given, or one channel's own order."""
    query, index = found.scope.query, found.scope.search_index
    req, tuning, lexical, vector = query.req, query.tuning, found.lexical, found.vector
    assert req.rrf_k is not None
    weights, coverage, held = _weights(req, tuning, lexical, index)
    if req.weights is not None or req.mode != "hybrid":
        lists: dict[str, Sequence[int] | None] = {
            "fts": None if lexical is None else [h.chunk_id for h in lexical],
            "vector": None if vector is None else [cid for cid, _ in vector],
        }
        listed = rrf(lists, k=req.rrf_k, weights=weights)
        if vector is None:
            return Fusion(found, Listed(listed), weights, coverage, held, default=False)
        from vouch.search.ranked import Ranked

        return Fusion(found, Ranked.of(listed), weights, coverage, held, default=False)
    candidates = [h.chunk_id for h in lexical or ()] + [cid for cid, _ in vector or ()]
    links = index.turn_links(candidates, found.scope.filters) if candidates else None
    turn_weights = fusion_weights(tuning, coverage or 0.0, turns=True, held=held) if links else None
    ranked = ranking.fuse(
        {"fts": None if lexical is None else scored_lexical(lexical), "vector": vector},
        weights,
        links.turns if links else (),
        turn_weights,
    )
    return Fusion(found, ranked, weights, coverage, held, True, links, turn_weights)


def context(fusion: Fusion) -> Fusion:
    """Transcript turns scored with their exchange, the speaker the query names
    (`ranking.in_context`) and their session (`ranking.by_session`); only in the default
    ranking, only when turns were found."""
    if not fusion.default or not fusion.links:
        return fusion
    query = fusion.found.scope.query
    tuning = query.tuning
    ranked = ranking.in_context(
        _columns(fusion.ranked),
        fusion.links,
        query.req.query,
        tuning.turn_context,
        tuning.speaker_bonus,
    )
    ranked = ranking.by_session(ranked, fusion.links, tuning.session_share)
    return fusion._replace(ranked=ranked)


def floor(fusion: Fusion) -> Fusion:
    """Without the hits only the vector channel found below the similarity floor (all of
    them for a query that means nothing here); a lexical match is never dropped."""
    found = fusion.found
    if not found.vector:
        return fusion
    kb, req = found.scope.query.asked.kb, found.scope.query.req
    value = similarity_floor(kb.config)
    # a lexical match already shows the knowledge base holds a word of the query: only a
    # query nothing matched needs the check (a vocabulary look-up, maybe an FTS5 query)
    if not found.lexical and not found.scope.search_index.means_something(req.query):
        value = math.inf
    ranked = ranking.floored(_columns(fusion.ranked), found.vector, found.lexical, value)
    return fusion._replace(ranked=ranked)


def prior(fusion: Fusion) -> Fusion:
    """Reviewed knowledge first (`prior`): the tuned default only."""
    if not fusion.default:
        return fusion
    kb, index = fusion.found.scope.query.asked.kb, fusion.found.scope.search_index
    ranked = _columns(fusion.ranked)
    rates = priors.rates(index.labels_of(ranked.keys), priors.boosts(kb.config))
    return fusion._replace(ranked=ranked.raised("prior", rates))


def threshold(fusion: Fusion) -> Fusion:
    """Only the scores from `--threshold` up, judged on the score as shown (six
    decimals): a score copied from a result keeps it."""
    given = fusion.found.scope.query.req.threshold
    if given is None:
        return fusion
    return fusion._replace(ranked=fusion.ranked.at_least(given - hits.SHOWN_HALF_STEP))


def page(fusion: Fusion) -> Page:
    """The page's candidates as hits: chunk rows, snippets, citations, turn context; a
    file HEAD does not hold is marked `uncommitted`, a proposal's chunk `pending`."""
    scope, lexical = fusion.found.scope, fusion.found.lexical
    kb, req = scope.query.asked.kb, scope.query.req
    index, pending = scope.search_index, scope.pending
    assert req.top is not None
    end = scope.offset + req.top
    shown_page = fusion.ranked.fused(scope.offset, end)
    keys = [int(str(f.key)) for f in shown_page]
    snippets = {h.chunk_id: h.snippet for h in lexical or () if h.snippet}
    if lexical:
        matched = {h.chunk_id for h in lexical}
        shown = [k for k in keys if k > 0 and k in matched and k not in snippets]
        snippets.update(index.snippets(req.query, shown) if shown else {})
    rows: dict[int, Any] = index.chunks(k for k in keys if k > 0)
    backend = {"hybrid": "hybrid", "fts": index.lexical_backend, "vector": "vector"}[req.mode]
    results = []
    uncommitted = index.uncommitted(kb) if rows else frozenset()
    for f, key in zip(shown_page, keys, strict=True):
        row = rows.get(key) if key > 0 else pending.info(key) if pending else None
        if row is None:
            continue
        result = hits.result(f, row, snippets, req.query, backend)
        if key > 0 and row.path in uncommitted:
            # a file of the work tree that HEAD does not hold as it is (a hand edit, a
            # file dropped in): searchable, never presented as reviewed knowledge
            result["uncommitted"] = True
        if key < 0 and pending is not None:
            result["pending"] = True
            result["proposal_id"] = pending.proposal_of(key)
        results.append(result)
    if results:
        from vouch.search.citing import attach_citations

        if req.citations:  # (a search across bases cites only the hits it shows)
            attach_citations(kb, results, pending)
        turns = hits.turns(results)
        if turns:
            hits.attach_context(turns, index.neighbours(h["chunk_id"] for h in turns))
    return Page(fusion, results)


def budget(shown: Page) -> Kept:
    """The hits that fit `--max-tokens` (E100 when not even one does), and the cursor to
    the rest."""
    scope = shown.fusion.found.scope
    kept = apply_budget(shown.results, scope.query.req.max_tokens)
    next_offset = scope.offset + len(kept.results)
    next_cursor = None
    if next_offset < len(shown.fusion.ranked) and kept.results:
        next_cursor = cursors.encode(
            cursors.Cursor(scope.revision, scope.fingerprint, next_offset, scope.depth)
        )
    return Kept(shown, kept.results, kept.truncated, next_cursor)


def respond(kept: Kept) -> dict[str, Any]:
    """The response (search_response.v1), with the trace when asked for."""
    fusion = kept.page.fusion
    found = fusion.found
    scope = found.scope
    query = scope.query
    req = query.req
    response: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "query": req.query,
        "mode": req.mode,
        "results": kept.results,
        "total_matches": len(fusion.ranked),
        "returned": len(kept.results),
        "offset": scope.offset,
        "next_cursor": kept.next_cursor,
        "truncated": kept.truncated,
        "corpus_revision": scope.revision,
    }
    if req.trace:
        from vouch.search import tracing

        timer = query.timer
        timer.marks["total"] = (time.perf_counter() - query.asked.started) * 1000
        timing = {name: timer.ms(name) for name in tracing.TIMED}
        trace = tracing.trace(found.lexical, found.vector, fusion.ranked.fused(), timing)
        response["trace"] = trace
        trace["weights"] = fusion.weights
        if fusion.turn_weights is not None:
            trace["turn_weights"] = fusion.turn_weights
        trace["lexical_coverage"] = fusion.coverage
        trace["lexical_words_held"] = fusion.held
        wanted = tracing.wanted(trace)
        tracing.name(trace, _rows(scope.search_index, scope.pending, wanted) if wanted else {})
    return response


def log_search(done: Logged) -> None:
    """One line of the search log (`searches.log.jsonl`) per call, a failed one too."""
    if not done.request.log:
        return
    from vouch.search import log

    if done.response is None:
        exc = done.error
        error = (
            f"{exc.code}: {exc.message}"
            if isinstance(exc, VouchError)
            else f"E200: {type(exc).__name__}: {exc}"
        )
        query, count = str(done.request.query), 0
    else:
        error, query, count = None, done.response["query"], done.response["returned"]
    log.record(
        done.kb.dir,
        query=query,
        mode=done.request.mode,
        result_count=count,
        error=error,
        duration_ms=(time.perf_counter() - done.started) * 1000,
        transport=done.request.transport,
    )


# -- what the stages use -----------------------------------------------------------------


def _embed_early(req: SearchRequest) -> Callable[[Any], object] | None:
    """For a cold search: embed the query while git checks the index's freshness, so
    importing numpy and mapping the model (~50 ms) overlap git's work (~30 ms at 10k
    objects) on another core. Any failure is left to the vector search itself."""
    if req.mode == "fts":
        return None

    def embed(index: Index) -> None:
        with contextlib.suppress(VouchError):
            index.embed_query(req.query)

    return embed


def _weights(
    req: SearchRequest, tuning: Tuning, lexical: Sequence[Any] | None, index: SearchIndex
) -> tuple[dict[str, float], float | None, int]:
    """Channel weights for this query, and the lexical coverage they were based on (as a
    share and as a count of the query's content words held)."""
    if req.weights is not None:
        given = {name: float(req.weights.get(name, 1.0)) for name in ("fts", "vector")}
        return given, None, 0
    if req.mode != "hybrid":
        return {"fts": 1.0, "vector": 1.0}, None, 0  # one channel: RRF keeps its own order
    from vouch.search.weighting import COVERAGE_HITS, held_words

    top = [h.chunk_id for h in (lexical or ())[:COVERAGE_HITS]]
    texts = list(index.texts(top).values()) if top else []
    held, wanted = held_words(req.query, texts)
    covered = held / wanted if wanted else 1.0
    return fusion_weights(tuning, covered, held=held), covered, held


def _columns(ranked: Ranked | Listed) -> Ranked:
    """The ranked list as columns: the stages after fusion run only where the vector
    channel ran, and its list is always `Ranked`."""
    assert not isinstance(ranked, Listed)
    return ranked


def _rows(index: SearchIndex, pending: Any, keys: Iterable[int]) -> dict[int, Any]:
    """Chunk metadata by chunk id: the index's (positive ids) and an open proposal's
    (negative ids, `--include-pending`)."""
    keys = list(keys)
    out: dict[int, Any] = index.chunks(k for k in keys if k > 0)
    for key in keys:
        row = pending.info(key) if key < 0 and pending is not None else None
        if row is not None:
            out[key] = row
    return out
