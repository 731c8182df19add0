"""Fusion: merge the channels' ranked lists into one scored list.

`ranked.convex` (the default hybrid ranking) adds normalised scores; `rrf` (Reciprocal
Rank Fusion, what an explicit `--rrf-k`, explicit weights or one channel ask for) adds
rank terms. This module stays free of numpy: a cold `--fts-only` search never loads it.

RRF: `score(d) = Σ_c w_c / (k + rank_c(d))` over the channels that found d (ranks from 1).
With equal weights of 1 this is the plain RRF of spec/hybrid-search.md: ranks 2 and 5
with k=60 give 1/62 + 1/65 = 0.0315. Each result keeps every channel's contribution
(`score_breakdown`): a channel that ran but did not find d contributes 0.0, a channel
that did not run contributes None (JSON null).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence

DEFAULT_K = 60


class Fused:
    """One ranked candidate as a response shows it: its key (a chunk id), score, each
    part of the score (`score_breakdown`) and its rank in each channel that found it.
    The default ranking keeps its candidates as columns (`ranked.Ranked`) and makes
    these for the page it shows."""

    __slots__ = ("breakdown", "key", "ranks", "score")

    def __init__(
        self,
        key: Hashable,
        score: float,
        breakdown: dict[str, float | None] | None = None,
        ranks: dict[str, int] | None = None,
    ):
        self.key = key
        self.score = score
        self.breakdown: dict[str, float | None] = {} if breakdown is None else breakdown
        self.ranks: dict[str, int] = {} if ranks is None else ranks


class Listed:
    """Candidates already ranked as objects, read as `ranked.Ranked` is read (a count,
    a page, a score threshold): one channel's own order needs no numpy, which a cold
    `--fts-only` search never loads (~80 ms)."""

    def __init__(self, fused: list[Fused]):
        self._fused = fused

    def __len__(self) -> int:
        return len(self._fused)

    def fused(self, start: int = 0, stop: int | None = None) -> list[Fused]:
        return self._fused[start:stop]

    def at_least(self, threshold: float) -> Listed:
        return Listed([f for f in self._fused if f.score >= threshold])


def rrf(
    channels: Mapping[str, Sequence[Hashable] | None],
    *,
    k: float = DEFAULT_K,
    weights: Mapping[str, float] | None = None,
) -> list[Fused]:
    """Fuse ranked lists. A channel mapped to None did not run.

    Ties are broken by the best rank in any channel, then by the order in which the key
    was first seen, so the output is deterministic for the same inputs — cursors rely
    on that.
    """
    if k < 0:
        raise ValueError("rrf k must be >= 0")
    weights = weights or {}
    scores: dict[Hashable, float] = {}
    ranks: dict[Hashable, dict[str, int]] = {}
    first_seen: dict[Hashable, int] = {}
    for name, ranked in channels.items():
        if ranked is None:
            continue
        weight = float(weights.get(name, 1.0))
        for rank, key in enumerate(ranked, 1):
            if name in ranks.setdefault(key, {}):
                continue  # a channel lists a key once; keep its best rank
            first_seen.setdefault(key, len(first_seen))
            ranks[key][name] = rank
            scores[key] = scores.get(key, 0.0) + weight / (k + rank)
    out = []
    for key, score in scores.items():
        breakdown: dict[str, float | None] = {}
        for name, ranked in channels.items():
            if ranked is None:
                breakdown[name] = None
            elif name in ranks[key]:
                breakdown[name] = float(weights.get(name, 1.0)) / (k + ranks[key][name])
            else:
                breakdown[name] = 0.0
        out.append(Fused(key, score, breakdown, dict(ranks[key])))
    out.sort(key=lambda f: (-f.score, min(f.ranks.values()), first_seen[f.key]))
    return out


NORMS = ("minmax", "zscore")
