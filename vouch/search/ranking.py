"""How the default hybrid ranking combines its channels: the tuned knobs (`Tuning`,
`search.<name>` in config.yaml), the convex fusion weights that follow lexical coverage,
and the similarity floor for hits only the vector channel found.

`engine.search` runs the channels and calls these; `bench/tune_search.py` replays them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from vouch.errors import UsageError
from vouch.search.fusion import ordered

if TYPE_CHECKING:
    from vouch.core.config import Config
    from vouch.index.lexical import LexicalHit
    from vouch.index.turnmap import TurnLinks
    from vouch.search.access import SearchIndex
    from vouch.search.ranked import Ints, Ranked

# A hit only the vector channel found is kept from this cosine up (bundled model; measured
# by bench/calibrate_floor.py): a query that means nothing here returns nothing. Set where
# about 5 % of random word strings pass on 10k claims (0.40 for the distilled-only model).
SIMILARITY_FLOOR = 0.36
FUSION_NORM = "zscore"  # how fusion.convex puts BM25 and cosine on one scale


class Tuning(NamedTuple):
    """Knobs of the default hybrid ranking; `search.<name>` in config.yaml overrides each.

    The default is a convex combination of normalised scores (fusion.convex): BM25 and
    cosine each z-scored over their own candidates (BM25 first made non-increasing in the
    lexical channel's all-words-first order), weighted `fts_share` and `1 - fts_share`.
    The share follows how much of the query's content words the best lexical hits hold
    (weighting.coverage): all of them, or at least `coverage_words` of them (a long
    question whose best hit holds most of its topic, issue 35) → `fts_share_full`; at
    least `coverage_cut` → `fts_share`; less (a paraphrase, where BM25 only matches
    incidental words) → `fts_share_uncovered`. Chosen with `bench/tune_search.py --grid`
    on the tuning halves of examples/eval and the kb set, as shipped (floor and prior
    included), with the bundled model (bench/RESULTS.md, issue 14): rank fusion (RRF)
    ranked below BM25 alone there at 7.6k documents.

    Transcript turns are fused by the same rule with their own shares (`turn_*`, the
    previous default), chosen on LoCoMo's conversations 1-5 (bench/bench_locomo.py): with
    the documents' shares turns lose 1.9 points of R@10 there (75.4 against 77.3). The
    query's coverage does not tell the two apart (LoCoMo's questions and the evaluation's
    paraphrases of synopses cover alike); the kind of chunk does.
    """

    fts_share_full: float = 0.8
    fts_share: float = 0.4
    fts_share_uncovered: float = 0.3
    coverage_cut: float = 0.3
    # a best lexical hit holding this many of the query's content words covers it (0: only
    # all of them do), for documents and transcript turns alike; chosen with `--grid
    # words` on the tuning halves of the sets above and of CISI and Cranfield (2, 3, ...
    # 8; bench/RESULTS.md, issue 35): without it the cosine reordered BM25's own
    # candidates for Cranfield's 10-word questions, below fts-only. LoCoMo's turns moved
    # by at most 0.4 points of R@k with it (bench/bench_locomo.py, before and after)
    coverage_words: int = 5
    # a vector candidate below this cosine is dropped (hybrid and vec-only); a floor
    # did not help on the golden set, so it is off by default
    min_similarity: float = 0.0
    # transcript turns (issue 19): a turn's fused score gains this share of its
    # neighbouring turns' (`in_context`), and a turn by the one speaker the query names
    # gains `speaker_bonus`; chosen on LoCoMo conversations 1-5 (bench/bench_locomo.py,
    # R@10 74.5 without either; turn_context 0.3/0.5/0.7/1.0: 75.7/76.7/76.5/76.1; then
    # speaker_bonus 0.05/0.1/0.2/0.3: 76.8/77.0/77.1/77.1 — the smaller of the tied two)
    turn_context: float = 0.5
    speaker_bonus: float = 0.6
    # a turn's score moves toward the best among the found turns of its own session,
    # (score + share × best) / (1 + share), after the context and speaker parts: the
    # turns of the session a question is about rise together (`by_session`). With
    # `speaker_bonus` (0.2 before) and `tag_idf`, chosen on LoCoMo conversations 1-5 in
    # one knowledge base (bench/locomo_levers.py, R@10: session 0.1/0.2/0.3/0.5
    # 77.8/78.4/78.1/78.0; speaker_bonus 0/0.3/0.4/0.6/0.8 with tag_idf
    # 76.5/77.1/77.2/77.5/77.4; bench/RESULTS.md, issue 35)
    session_share: float = 0.2
    turn_fts_share_full: float = 0.8
    turn_fts_share: float = 0.6
    turn_fts_share_uncovered: float = 0.4
    turn_coverage_cut: float = 0.3
    # 1: a search narrowed by tags counts BM25's N and n(p) among the rows it searches
    # (`lexical.collection`: a tag is a collection, a word common inside it says little
    # there); 0: the whole index's counts
    tag_idf: int = 1

    @classmethod
    def from_config(cls, config: Config) -> Tuning:
        values: dict[str, Any] = {}
        for name in cls._fields:
            raw = config.get(f"search.{name}", getattr(DEFAULTS, name))
            try:
                value = float(raw)
            except (TypeError, ValueError) as exc:
                raise UsageError(f"search.{name} in config.yaml must be a number") from exc
            if isinstance(getattr(DEFAULTS, name), int):
                if not value.is_integer() or value < 0:
                    raise UsageError(f"search.{name} in config.yaml must be a whole number ≥ 0")
                value = int(value)
            values[name] = value
        return cls(**values)


DEFAULTS = Tuning()


def fusion_weights(
    tuning: Tuning, covered: float, turns: bool = False, held: int = 0
) -> dict[str, float]:
    """The convex weights of the default hybrid ranking for a query whose best lexical
    hit holds `covered` of its content words, `held` in number (weighting.held_words):
    for documents, or for transcript turns."""
    if turns:
        full, mid, low = (
            tuning.turn_fts_share_full,
            tuning.turn_fts_share,
            tuning.turn_fts_share_uncovered,
        )
        cut = tuning.turn_coverage_cut
    else:
        full, mid, low = tuning.fts_share_full, tuning.fts_share, tuning.fts_share_uncovered
        cut = tuning.coverage_cut
    words = tuning.coverage_words
    if covered >= 1.0 or (words > 0 and held >= words):
        share = full
    else:
        share = mid if covered >= cut else low
    return {"fts": share, "vector": 1.0 - share}


def fuse(
    channels: Mapping[str, Sequence[tuple[int, float]] | None],
    weights: Mapping[str, float],
    turns: Sequence[int] | Ints = (),
    turn_weights: Mapping[str, float] | None = None,
) -> Ranked:
    """The default fusion: normalised channel scores, combined convexly; the chunks in
    `turns` (transcript turns) with `turn_weights`."""
    from vouch.search.ranked import convex

    apart = (turns, turn_weights) if len(turns) and turn_weights is not None else None
    return convex(channels, weights=weights, norm=FUSION_NORM, apart=apart)


def scored_lexical(lexical: Sequence[LexicalHit]) -> list[tuple[int, float]]:
    """(chunk, BM25) in the lexical channel's order, made non-increasing (fusion.ordered):
    the all-words hits stay ahead of the any-word ones, and a pending chunk (negative id,
    no BM25 of its own) keeps the place `Pending.merge_lexical` gave it."""
    return ordered([(h.chunk_id, None if h.chunk_id < 0 else h.score) for h in lexical])


def floored(
    ranked: Ranked,
    vector: Sequence[tuple[int, float]],
    lexical: Sequence[LexicalHit] | None,
    index: SearchIndex,
    floor: float,
    query: str,
) -> Ranked:
    """`ranked` without the hits only the vector channel found below the floor, or all
    of them when the query means nothing to the model or the knowledge base; a lexical
    match is never dropped. Applied after fusion, so the scores of what stays are those
    the fusion was tuned with."""
    matched = {h.chunk_id for h in lexical or ()}
    # a lexical match already shows the knowledge base holds a word of the query: only a
    # query nothing matched needs the check (a vocabulary look-up, maybe an FTS5 query)
    if not matched and not index.means_something(query):
        floor = math.inf
    weak = [cid for cid, sim in vector if sim < floor and cid not in matched]
    return ranked.without(weak) if weak else ranked


def in_context(ranked: Ranked, links: TurnLinks, query: str, share: float, bonus: float) -> Ranked:
    """Transcript turns scored with their exchange (issue 19): each turn's fused score
    plus `share` times the fused scores of the turns beside it in its session, so the
    reply that answers a question rises with the question it answers. A turn no channel
    found, next to turns that were, joins the list with that part alone (in the order
    first reached). Then, when the query names exactly one of the speakers (every word
    of the name), that speaker's turns gain `bonus`. Both parts show in
    `score_breakdown` (`context`, `speaker`) of a turn they changed; `links` come from
    `Index.turn_links` and are empty without turns."""
    import numpy as np

    from vouch.search.ranked import Part

    if not links or (share <= 0 and bonus <= 0):
        return ranked
    rows, known = ranked.rows_of(links.source)
    parts = share * ranked.score[rows[known]]  # a source not ranked adds nothing
    # each neighbour's context: its parts summed in link order (bincount adds one by one)
    near, first, which = np.unique(links.target[known], return_index=True, return_inverse=True)
    added = np.bincount(which, weights=parts, minlength=len(near))
    favoured = _named(links, query)

    def said(keys: Any) -> Any:
        if favoured is None:
            return np.zeros(len(keys))
        return np.where(links.speaker_of(keys) == favoured, bonus, 0.0)

    at, found = ranked.rows_of(near)
    context = np.zeros(len(ranked))
    context[at[found]] = added[found]
    speaker = said(ranked.keys)
    changed = (context != 0) | (speaker != 0)
    score = np.where(changed, ranked.score + context + speaker, ranked.score)
    new = np.flatnonzero(~found)
    new = new[np.argsort(first[new], kind="stable")]  # first reached first
    keys, extra = near[new], added[new]
    bonus_new = said(keys)
    shown = np.concatenate([changed, np.ones(len(keys), np.bool_)])
    joined = ranked.extended(
        keys,
        np.concatenate([score, extra + bonus_new]),
        {
            "context": Part(np.concatenate([context, extra]), shown),
            "speaker": Part(np.concatenate([speaker, bonus_new]), shown),
        },
    )
    return joined.sorted()


def by_session(ranked: Ranked, links: TurnLinks, share: float) -> Ranked:
    """Each transcript turn's score moved toward the best score among the turns here of
    its own session: (score + share × best) / (1 + share). The turns of the session a
    question is about rise together, and none above the best of its session, so a
    document that outranked every turn still does. Among turns the order is that of
    score + share × best (the lever measured). Shown in `score_breakdown` (`session`, 0
    or more) of every turn; other chunks are left as they are. `ranked` comes from
    `in_context`."""
    import numpy as np

    from vouch.search.ranked import Part

    if not links or share <= 0:
        return ranked
    sessions = links.session_of(ranked.keys)
    turn = sessions >= 0
    if not turn.any():
        return ranked
    codes, which = np.unique(sessions[turn], return_inverse=True)
    best = np.full(len(codes), -np.inf)
    np.maximum.at(best, which, ranked.score[turn])
    moved = (ranked.score[turn] + share * best[which]) / (1.0 + share)
    added = np.zeros(len(ranked))
    added[turn] = moved - ranked.score[turn]
    score = ranked.score.copy()
    score[turn] = moved
    parts = {**ranked.parts, "session": Part(added, turn)}
    return type(ranked)(ranked.keys, score, parts, ranked.ranks).sorted()


def _named(links: TurnLinks, query: str) -> int | None:
    """The one speaker of these turns the query names (every word of the name; a number
    into `links.speakers`), None for none or more than one."""
    named = [code for code in links.speakers.named(query) if links.speaking(code)]
    return named[0] if len(named) == 1 else None


def similarity_floor(config: Config) -> float:
    value = config.typed("search.similarity_floor", SIMILARITY_FLOOR, float)
    if not math.isfinite(value):
        raise UsageError("search.similarity_floor in config.yaml must be a finite number")
    return value
