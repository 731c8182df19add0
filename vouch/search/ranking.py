"""How the default hybrid ranking combines its channels, in the order the pipeline
(`vouch.search.engine`) runs them: the convex fusion weights that follow lexical coverage
and the fusion itself (stage `fuse`), transcript turns scored with their exchange
(`context`), and the similarity floor for hits only the vector channel found (`floor`).
Each works on values the pipeline read from the index (`Ranked` candidates, the
channels' lists) and reads nothing itself; the knobs are `Tuning` (vouch/search/tuning.py).

`bench/tune_search.py` replays them.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from vouch.errors import UsageError
from vouch.search.tuning import DEFAULTS as DEFAULTS  # re-exported: their home is tuning.py
from vouch.search.tuning import Tuning as Tuning

if TYPE_CHECKING:
    from vouch.core.config import Config
    from vouch.index.lexical import LexicalHit
    from vouch.index.turnmap import TurnLinks
    from vouch.search.ranked import Ints, Ranked

# A hit only the vector channel found is kept from this cosine up (bundled model; measured
# by bench/calibrate_floor.py): a query that means nothing here returns nothing. Set where
# about 5 % of random word strings pass on 10k claims (0.40 for the distilled-only model).
SIMILARITY_FLOOR = 0.36
FUSION_NORM = "zscore"  # how fusion.convex puts BM25 and cosine on one scale
K = TypeVar("K", bound=Hashable)


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
    """(chunk, BM25) in the lexical channel's order, made non-increasing (`ordered`):
    the all-words hits stay ahead of the any-word ones, and a pending chunk (negative id,
    no BM25 of its own) keeps the place `Pending.merge_lexical` gave it."""
    return ordered([(h.chunk_id, None if h.chunk_id < 0 else h.score) for h in lexical])


def ordered(scored: Sequence[tuple[K, float | None]]) -> list[tuple[K, float]]:
    """Scores made non-increasing down a ranked list, so that normalising them keeps the
    channel's own order: each is capped at the one before it, and a missing score (None)
    takes the one before it (the first real score when it heads the list)."""
    first = next((s for _, s in scored if s is not None), 0.0)
    out: list[tuple[K, float]] = []
    for key, score in scored:
        previous = out[-1][1] if out else first
        out.append((key, previous if score is None else min(score, previous)))
    return out


def floored(
    ranked: Ranked,
    vector: Sequence[tuple[int, float]],
    lexical: Sequence[LexicalHit] | None,
    floor: float,
) -> Ranked:
    """`ranked` without the hits only the vector channel found below the floor (all of
    them for a floor of infinity: a query that means nothing to the model or the
    knowledge base); a lexical match is never dropped. Applied after fusion, so the
    scores of what stays are those the fusion was tuned with."""
    matched = {h.chunk_id for h in lexical or ()}
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
