"""One search across the user's registered knowledge bases (`vouch search --all`,
`kb.search` with `kbs`): each hit names its base (`kb`), every base's state is reported
(`bases`), and the ranking is merged on one scale.

How the ranking is made comparable. Each base answers the query as a local search
does (its filters, floor and prior; `engine.search` on its index as it is, never
refreshed, no search log written there), `depth` hits deep. A base's own scores cannot
be compared with another's: BM25 weighs words by one index's statistics, the embedding
is weighted by each index's fitted token weights, and the fusion normalises each
base's candidates by their own spread — the best hit of any base, however weak, would
look like the best of all. So every pooled candidate is scored again, the same way for
all of them (`rescore`):

- lexical: FTS5's BM25 on shared collection statistics (`index.lexical.shared`: the
  bases' rows, tokens and document frequencies added up), on the candidate's own
  indexed columns — the same text gets the same score in any base;
- vector: the cosine of the query and the candidate's text under one model (the first
  searched base's), unweighted, so no base's fit favours its own chunks;
- the two fused as a local search fuses them (z-scores over the pooled candidates,
  weights that follow the query's lexical coverage), then the prior by kind and status.

A base with many weak hits therefore cannot crowd out a base with one strong one, and
one document held by two bases scores the same in both (tests/test_search_all.py).
Cursors, open proposals and traces are one base's; across bases they are refused.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from vouch.errors import EmptyQuery, UsageError, VouchError
from vouch.search import hits
from vouch.search.budget import apply_budget
from vouch.search.engine import CANDIDATE_FACTOR, SCHEMA_VERSION, search
from vouch.search.request import SearchRequest

if TYPE_CHECKING:
    from vouch.search.access import SearchIndex
    from vouch.search.bases import Base
    from vouch.search.ranked import Ranked

MIN_DEPTH = 30  # each base's hits pooled: 3 × top, at least this many
VECTORS_KEPT = 50_000  # pooled texts' vectors a long-lived process remembers (~100 MB)
_VECTORS = "across-vectors"  # in `warm`


class Pooled(NamedTuple):
    """One base's hit in the pool, with what it is scored on again."""

    base: int  # its base's place among the searched ones
    hit: dict[str, Any]
    doc: tuple[str, str, str, str]  # title, section, text, context (index columns)


def search_bases(
    names: Sequence[str],
    request: SearchRequest,
    *,
    warm: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The search response over the knowledge bases `names` name (`["all"]`: every
    registered one), with `kb` on each hit and `bases` beside them."""
    from vouch.search import bases as places
    from vouch.search import query as queries

    if request.cursor or request.include_pending or request.trace:
        raise UsageError(
            "--cursor, --include-pending and --trace search one knowledge base",
            hint="leave them out with --all/--kbs, or run the search in that knowledge base",
        )
    request = request._replace(query=queries.normalize(request.query))  # E004 before all
    warm = warm if warm is not None else {}
    found: list[Base] = []
    indexes: list[SearchIndex] = []
    answers: list[dict[str, Any]] = []
    for base, index in places.registered_opened(names, warm):
        if index is not None and base.kb is not None:
            try:
                answer = search(base.kb, _per_base(request, base.kb), warm=warm)
            except (EmptyQuery, UsageError):
                raise  # the query itself is wrong: wrong in every base
            except VouchError as exc:
                base, index = base._replace(state="unusable", detail=exc.message), None
            else:
                indexes.append(index)
                answers.append(answer)
        found.append(base)
    searched = [b for b in found if b.searched]
    top = _top(request, searched[0].kb) if searched else request.top or 10
    pool = _pool(indexes, answers)
    ranked = rescore(request.query, request.mode, pool, indexes, warm)
    if request.threshold is not None:
        ranked = ranked.at_least(request.threshold - hits.SHOWN_HALF_STEP)
    shown = _present(searched, pool, ranked, top)
    results = []
    for fused in shown:
        item = pool[int(str(fused.key))]
        hit = dict(item.hit)
        hit["kb"] = searched[item.base].name
        hit["score"] = round(fused.score, hits.SHOWN_DECIMALS)
        hit["score_breakdown"] = _breakdown(fused.breakdown)
        results.append(hit)
    _cite(searched, [pool[int(str(f.key))].base for f in shown], results)
    kept = apply_budget(results, request.max_tokens)
    return {
        "schema_version": SCHEMA_VERSION,
        "query": request.query,
        "mode": answers[0]["mode"] if answers else request.mode,
        "results": kept.results,
        "total_matches": len(ranked),
        "returned": len(kept.results),
        "offset": 0,
        "next_cursor": None,
        "truncated": kept.truncated,
        "corpus_revision": revision_of(searched, answers),
        "kbs": [b.name for b in searched],
        "bases": [b.report() for b in found],
    }


def _present(searched: Sequence[Base], pool: Sequence[Pooled], ranked: Any, top: int) -> list[Any]:
    """The first `top` of `ranked` whose object its base still holds as indexed: a stale
    base's index (never refreshed from here) may name an object a decision since deleted
    or redacted there (a `git pull` brought the decision, nothing rebuilt the index), and
    such a hit is not served — its words are gone from that base's files."""
    out: list[Any] = []
    start = 0
    while len(out) < top and start < len(ranked):
        for fused in ranked.fused(start, start + top):
            item = pool[int(str(fused.key))]
            base = searched[item.base]
            if base.state != "stale" or _held(base, item.hit):
                out.append(fused)
        start += top
    return out[:top]


def _held(base: Base, hit: dict[str, Any]) -> bool:
    """Whether the base's work tree still holds the hit's object, not redacted."""
    from vouch.kinds import KINDS
    from vouch.kinds.base import redacted

    kind = KINDS.get(str(hit.get("kind")))
    if kind is None or base.kb is None:
        return True
    try:
        obj = base.kb.read(kind, str(hit.get("id")))
    except (VouchError, ValueError):
        return False
    if obj is None:
        return False
    return not redacted(kind, obj)


def rescore(
    query: str,
    mode: str,
    pool: Sequence[Pooled],
    indexes: Sequence[SearchIndex],
    warm: dict[Any, Any] | None = None,
) -> Ranked:
    """The pooled candidates on one scale (module docstring): keys are places in
    `pool`."""
    import numpy as np

    from vouch.search import prior as priors
    from vouch.search.ranked import Ranked, convex
    from vouch.search.ranking import FUSION_NORM, fusion_weights, ordered
    from vouch.search.tuning import Tuning

    if not pool:
        return Ranked(np.zeros(0, np.int64), np.zeros(0), {}, {})
    kb = indexes[0].index.kb
    tuning = Tuning.from_config(kb.config)
    lexical = _lexical(query, pool, indexes) if mode in ("hybrid", "fts") else None
    warm = warm if warm is not None else {}
    vector = _vector(query, pool, indexes, warm) if mode in ("hybrid", "vector") else None
    if mode == "hybrid":
        from vouch.search.weighting import COVERAGE_HITS, held_words

        best = [pool[k].doc[2] for k, _ in (lexical or [])[:COVERAGE_HITS]]
        held, wanted = held_words(query, best)
        covered = held / wanted if wanted else 1.0
        weights = fusion_weights(tuning, covered, held=held)
    else:
        weights = {"fts": 1.0, "vector": 1.0}
    ranked = convex(
        {"fts": None if lexical is None else ordered(lexical), "vector": vector},
        weights=weights,
        norm=FUSION_NORM,
    )
    pairs = sorted({(p.hit["kind"], p.hit["status"]) for p in pool})
    number = {pair: n for n, pair in enumerate(pairs)}
    codes = [number[(pool[k].hit["kind"], pool[k].hit["status"])] for k in ranked.keys.tolist()]
    return ranked.raised("prior", priors.rates((codes, pairs), priors.boosts(kb.config)))


def _lexical(
    query: str, pool: Sequence[Pooled], indexes: Sequence[SearchIndex]
) -> list[tuple[int, float]]:
    """(place, BM25 on the shared statistics) of the candidates holding a word of the
    query: those holding every word first, as the lexical channel ranks them."""
    from vouch.index.lexical import shared
    from vouch.index.lexical.fts5 import tokenize_option
    from vouch.search.access import lexical_query

    text = lexical_query(query)
    terms = shared.terms_of(text)
    fts5 = [i for i in indexes if i.lexical_backend == "fts5"]
    stats = shared.pooled(
        shared.counts(i.index.conn, terms, fts5=i.lexical_backend == "fts5") for i in indexes
    )
    tokenizer = tokenize_option(fts5[0].index.conn) if fts5 else "'unicode61'"
    scores, whole = shared.scores([p.doc for p in pool], text, stats, tokenizer)
    found = [(k, s, w) for k, (s, w) in enumerate(zip(scores, whole, strict=True)) if s > 0]
    found.sort(key=lambda x: (not x[2], -x[1], x[0]))
    return [(k, s) for k, s, _ in found]


def _vector(
    query: str, pool: Sequence[Pooled], indexes: Sequence[SearchIndex], warm: dict[Any, Any]
) -> list[tuple[int, float]] | None:
    """(place, cosine) under the first searched base's model, unweighted, best first;
    None when no base has embeddings."""
    import numpy as np

    reference = next((i for i in indexes if i.index.settings.model and i.index.meta.dims), None)
    if reference is None:
        return None
    matrix = _plain_vectors(reference, [p.doc[2] for p in pool], warm)
    asked = _plain_vectors(reference, [query], warm)[0]
    norms = np.linalg.norm(matrix, axis=1) * (np.linalg.norm(asked) or 1.0)
    cosine = (matrix @ asked) / np.where(norms > 0, norms, 1.0)
    found = [(k, float(c)) for k, c in enumerate(cosine.tolist()) if c > 0]
    found.sort(key=lambda x: (-x[1], x[0]))
    return found


def _cite(searched: Sequence[Base], places: Sequence[int], results: list[dict[str, Any]]) -> None:
    """Each shown hit's evidence, confidence and drift, read from its own base (the
    pooled ones that are not shown are never read)."""
    from vouch.search.citing import attach_citations

    for n, base in enumerate(searched):
        mine = [hit for hit, place in zip(results, places, strict=True) if place == n]
        if mine and base.kb is not None:
            attach_citations(base.kb, mine, None)


def _plain_vectors(reference: SearchIndex, texts: list[str], warm: dict[Any, Any]) -> Any:
    """`Index.plain_vectors` of `texts`, remembered in `warm` by model and text (a
    server meets the same chunks query after query), at most `VECTORS_KEPT`."""
    import numpy as np

    kept: OrderedDict[tuple[str, str], Any] = warm.setdefault(_VECTORS, OrderedDict())
    model = reference.index.settings.model_id
    missing = list(dict.fromkeys(t for t in texts if (model, t) not in kept))
    if missing:
        for text, vector in zip(missing, reference.index.plain_vectors(missing), strict=True):
            kept[(model, text)] = np.asarray(vector, dtype=np.float64)
    rows = []
    for text in texts:
        kept.move_to_end((model, text))
        rows.append(kept[(model, text)])
    while len(kept) > VECTORS_KEPT:
        kept.popitem(last=False)
    return np.stack(rows)


def _per_base(request: SearchRequest, kb: Any) -> SearchRequest:
    """What each base is asked: its best `depth` hits, as they are, nothing written."""
    top = _top(request, kb)
    depth = max(MIN_DEPTH, CANDIDATE_FACTOR * top)
    return request._replace(
        top=min(depth, 10_000),
        threshold=None,
        max_tokens=None,
        log=False,
        refresh=False,
        citations=False,
    )


def _top(request: SearchRequest, kb: Any) -> int:
    return (
        request.top if request.top is not None else kb.config.typed("search.default_top", 10, int)
    )


def _pool(indexes: Sequence[SearchIndex], answers: Sequence[dict[str, Any]]) -> list[Pooled]:
    from vouch.index.lexical import shared

    pool: list[Pooled] = []
    for n, (index, answer) in enumerate(zip(indexes, answers, strict=True)):
        got = answer["results"]
        docs = shared.columns(index.index.conn, [h["chunk_id"] for h in got])
        for hit in got:
            doc = docs.get(hit["chunk_id"])
            if doc is not None:
                pool.append(Pooled(n, hit, doc))
    return pool


def _breakdown(parts: dict[str, float | None]) -> dict[str, float | None]:
    out: dict[str, float | None] = {"fts": None, "vector": None, "prior": None}
    out.update((k, None if v is None else round(v, hits.SHOWN_DECIMALS)) for k, v in parts.items())
    return out


def revision_of(searched: Sequence[Base], answers: Sequence[dict[str, Any]]) -> str:
    """One revision for the bases searched: changes when any of theirs does."""
    joined = "|".join(
        f"{b.name}={a.get('corpus_revision')}" for b, a in zip(searched, answers, strict=True)
    )
    return hashlib.sha256(joined.encode("utf-8", "surrogateescape")).hexdigest()[:16]
