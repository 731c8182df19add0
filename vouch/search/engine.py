"""The one search function: hybrid retrieval over the derived index, as a response dict.

`search(kb, request)` serves `vouch search`, `kb.search` on every transport (the hit
array is `response["results"]`) and `vouch eval`. Steps: check the query → open the
index (refreshing it when stale) → run the lexical and/or vector channel at the
candidate depth, with every filter applied inside the index → fuse (normalised scores,
combined convexly; weighted RRF when weights or k are given) →
threshold → page (cursor) → token budget → response. Every call is logged.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from vouch.core.progress import Progress
from vouch.errors import UsageError, VouchError
from vouch.search import cursor as cursors
from vouch.search import hits, prior
from vouch.search import query as queries
from vouch.search.budget import apply_budget
from vouch.search.fusion import DEFAULT_K, Listed, rrf
from vouch.search.ranking import (
    Tuning,
    floored,
    fuse,
    fusion_weights,
    in_context,
    scored_lexical,
    similarity_floor,
)

if TYPE_CHECKING:
    from vouch.core.config import Config
    from vouch.index.api import Index
    from vouch.index.lexical import LexicalHit
    from vouch.search.access import SearchIndex
    from vouch.search.ranked import Ranked
    from vouch.store.kb import KB

SCHEMA_VERSION = "search_response.v1"
MODES = ("hybrid", "fts", "vector")
SEARCH_KINDS = ("claim", "page", "entity", "relation", "source")
# Shown only when --status asks for them (spec: approved, current knowledge by default).
HIDDEN_STATUSES = ("superseded", "archived", "redacted")

# The ranking's knobs and their tuned defaults: vouch/search/ranking.py.
CANDIDATE_FACTOR = 3  # each channel retrieves 3 × top candidates (spec/hybrid-search.md),
CANDIDATES = 200  # and never fewer than this (the fusion was tuned at 200): the ranked
# list, its pages and total_matches do not depend on --top (a cursor walk equals one
# call) up to top 66
MAX_TOP = 10_000  # results per page; more pages come through the cursor


class SearchRequest(NamedTuple):
    """One search as a caller asks for it; `checked` validates it and fills defaults."""

    query: str
    mode: str = "hybrid"
    top: int | None = None  # None: search.default_top
    kinds: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    types: tuple[str, ...] = ()
    statuses: tuple[str, ...] = ()
    speakers: tuple[str, ...] = ()  # transcript turns by these speakers (issue 19)
    since: str | None = None  # ... from this ISO date or time on
    until: str | None = None  # ... up to and including this one
    threshold: float | None = None
    rrf_k: float | None = None  # None: search.rrf_k
    cursor: str | None = None
    max_tokens: int | None = None
    trace: bool = False
    include_pending: bool = False
    weights: Mapping[str, float] | None = None  # None: tuned defaults; {} equal weights
    log: bool = True
    transport: str = "cli"

    def checked(self, config: Config) -> SearchRequest:
        """Validated, with config defaults filled in; raise E004 / E100 on bad input."""
        text = queries.normalize(self.query)
        if self.mode not in MODES:
            raise UsageError(f"unknown search mode {self.mode!r}", hint="hybrid, fts or vector")
        top = self.top if self.top is not None else config.typed("search.default_top", 10, int)
        if not 1 <= top <= MAX_TOP:
            raise UsageError(
                f"--top must be between 1 and {MAX_TOP}",
                hint="page through more results with --cursor",
            )
        k = self.rrf_k if self.rrf_k is not None else config.typed("search.rrf_k", DEFAULT_K, float)
        if k < 0:
            raise UsageError("--rrf-k must be >= 0")
        if self.max_tokens is not None and self.max_tokens < 1:
            raise UsageError("--max-tokens must be at least 1")
        for kind in self.kinds:
            if kind not in SEARCH_KINDS:
                raise UsageError(
                    f"cannot search kind {kind!r}", hint="kinds: " + ", ".join(SEARCH_KINDS)
                )
        for flag, values, enum in (
            ("--status", self.statuses, "STATUSES"),
            ("--type", self.types, "TYPES"),
        ):
            for value in values:  # the kinds' modules load only when a filter is given
                if value not in (known := _known(enum)):
                    raise UsageError(
                        f"unknown {flag[2:]} {value!r}", hint=f"{flag}: " + ", ".join(known)
                    )
        from vouch.search.turns import check_time

        check_time("--since", self.since)
        check_time("--until", self.until)
        for flag, number in (("--threshold", self.threshold), ("--rrf-k", k)):
            if number is not None and not math.isfinite(number):
                raise UsageError(f"{flag} must be a finite number")
        return self._replace(query=text, top=top, rrf_k=k)


def _uncommitted(kb: KB, index: SearchIndex) -> frozenset[str]:
    """Repository paths of knowledge files whose work-tree bytes HEAD does not hold, as
    the index recorded them (its `dirty` state: no git command here); worked out once
    per index state, not per query."""
    from vouch.index.state import indexed_state

    prefix = kb.rel(".") + "/"

    def paths(meta: Any) -> frozenset[str]:
        try:
            return frozenset(prefix + rel for rel in indexed_state(meta).dirty)
        except (KeyError, ValueError):
            return frozenset()

    return index.index.meta.derived("uncommitted", paths)


def _known(enum: str) -> tuple[str, ...]:
    """Every value of the kinds' `STATUSES` or `TYPES` enum, in the kinds' order."""
    import importlib

    values: dict[str, None] = {}
    for kind in SEARCH_KINDS:
        module = importlib.import_module(f"vouch.kinds.{kind}")
        values.update(dict.fromkeys(getattr(module, enum, ())))
    return tuple(values)


class _Timer:
    """Milliseconds spent per stage of one search (the trace's `timings`)."""

    __slots__ = ("marks",)

    def __init__(self) -> None:
        self.marks: dict[str, float] = {}

    def add(self, name: str, started: float) -> None:
        self.marks[name] = self.marks.get(name, 0.0) + (time.perf_counter() - started) * 1000

    def ms(self, name: str) -> int:
        return round(self.marks.get(name, 0.0))


def search(
    kb: KB,
    request: SearchRequest,
    *,
    warm: dict[str, Any] | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Run one search and log it (also when it fails). `progress` hears of an index
    build (the first search of a fresh clone)."""
    from vouch.search import log

    started = time.perf_counter()
    try:
        response = _search(kb, request, warm if warm is not None else {}, started, progress)
    except Exception as exc:  # logged (also an unexpected failure), then re-raised
        if request.log:
            error = (
                f"{exc.code}: {exc.message}"
                if isinstance(exc, VouchError)
                else f"E200: {type(exc).__name__}: {exc}"
            )
            log.record(
                kb.dir,
                query=str(request.query),
                mode=request.mode,
                result_count=0,
                error=error,
                duration_ms=(time.perf_counter() - started) * 1000,
                transport=request.transport,
            )
        raise
    if request.log:
        log.record(
            kb.dir,
            query=response["query"],
            mode=request.mode,
            result_count=response["returned"],
            error=None,
            duration_ms=(time.perf_counter() - started) * 1000,
            transport=request.transport,
        )
    return response


def _search(
    kb: KB,
    request: SearchRequest,
    warm: dict[str, Any],
    started: float,
    progress: Progress | None,
) -> dict[str, Any]:
    from vouch.search import access

    req = request.checked(kb.config)
    if req.mode == "hybrid" and kb.config.get("embedding.enabled", True) is False:
        # a lexical-only knowledge base: the default search is lexical; only an explicit
        # vector request is an error (E107)
        req = req._replace(mode="fts")
    assert req.top is not None and req.rrf_k is not None
    tuning = Tuning.from_config(kb.config)
    index = access.open_index(kb, warm, meanwhile=_embed_early(req), progress=progress)
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

        pending = Pending(kb, filters, warm)
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
        "tuning": tuning,
        "pending": req.include_pending,
    }
    fingerprint = cursors.fingerprint(shape)
    if req.cursor:
        position = cursors.decode(req.cursor, revision=revision, expected_fingerprint=fingerprint)
        offset, depth = position.offset, position.depth
    else:
        offset, depth = 0, max(CANDIDATES, CANDIDATE_FACTOR * req.top)
    timer = _Timer()

    lexical: list[LexicalHit] | None = None
    if req.mode in ("hybrid", "fts"):
        t0 = time.perf_counter()
        lexical = index.lexical(req.query, depth, filters)
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

    t0 = time.perf_counter()
    weights, coverage, held = _weights(req, tuning, lexical, index)
    ranked: Ranked | Listed  # columns; objects for one lexical channel (no numpy)
    turn_weights: dict[str, float] | None = None  # transcript turns' own, when any were found
    if req.weights is not None or req.mode != "hybrid":
        # explicit weights or --rrf-k: textbook (weighted) RRF; one channel: its own order
        channels: dict[str, Sequence[int] | None] = {
            "fts": None if lexical is None else [h.chunk_id for h in lexical],
            "vector": None if vector is None else [cid for cid, _ in vector],
        }
        fused = rrf(channels, k=req.rrf_k, weights=weights)
        if vector is None:
            ranked = Listed(fused)
        else:
            from vouch.search.ranked import Ranked

            ranked = Ranked.of(fused)
            if vector:
                ranked = floored(
                    ranked, vector, lexical, index, similarity_floor(kb.config), req.query
                )
    else:
        candidates = [h.chunk_id for h in lexical or ()] + [cid for cid, _ in vector or ()]
        links = index.turn_links(candidates, filters) if candidates else None
        turn_weights = (
            fusion_weights(tuning, coverage or 0.0, turns=True, held=held) if links else None
        )
        ranked = fuse(
            {
                "fts": None if lexical is None else scored_lexical(lexical),
                "vector": vector,
            },
            weights,
            links.turns if links else (),
            turn_weights,
        )
        if links:
            ranked = in_context(ranked, links, req.query, tuning.turn_context, tuning.speaker_bonus)
        if vector:
            ranked = floored(ranked, vector, lexical, index, similarity_floor(kb.config), req.query)
        # the tuned default: reviewed first
        ranked = prior.apply(ranked, index.labels_of(ranked.keys), prior.boosts(kb.config))
    if req.threshold is not None:
        # judged on the score as shown (six decimals): a score copied from a result keeps it
        ranked = ranked.at_least(req.threshold - hits.SHOWN_HALF_STEP)
    timer.add("fusion", t0)

    end = offset + req.top
    page = ranked.fused(offset, end)
    keys = [int(str(f.key)) for f in page]
    snippets = {h.chunk_id: h.snippet for h in lexical or () if h.snippet}
    if lexical:
        matched = {h.chunk_id for h in lexical}
        shown = [k for k in keys if k > 0 and k in matched and k not in snippets]
        snippets.update(index.snippets(req.query, shown) if shown else {})
    rows: dict[int, Any] = index.chunks(k for k in keys if k > 0)
    backend = {"hybrid": "hybrid", "fts": index.lexical_backend, "vector": "vector"}[req.mode]
    results = []
    uncommitted = _uncommitted(kb, index) if rows else frozenset()
    for f, key in zip(page, keys, strict=True):
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
        from vouch.search.turns import attach_context

        attach_citations(kb, results, pending)
        attach_context(index, results)
    budgeted = apply_budget(results, req.max_tokens)
    next_offset = offset + len(budgeted.results)
    next_cursor = None
    if next_offset < len(ranked) and budgeted.results:
        next_cursor = cursors.encode(cursors.Cursor(revision, fingerprint, next_offset, depth))
    response: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "query": req.query,
        "mode": req.mode,
        "results": budgeted.results,
        "total_matches": len(ranked),
        "returned": len(budgeted.results),
        "offset": offset,
        "next_cursor": next_cursor,
        "truncated": budgeted.truncated,
        "corpus_revision": revision,
    }
    if req.trace:
        timer.marks["total"] = (time.perf_counter() - started) * 1000
        timing = {name: timer.ms(name) for name in hits.TIMED}
        response["trace"] = hits.trace(lexical, vector, ranked.fused(), timing)
        response["trace"]["weights"] = weights
        if turn_weights is not None:
            response["trace"]["turn_weights"] = turn_weights
        response["trace"]["lexical_coverage"] = coverage
        response["trace"]["lexical_words_held"] = held
        from vouch.search import tracing

        tracing.name(response["trace"], lambda keys: _rows(index, pending, keys))
    return response


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
