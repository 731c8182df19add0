"""Reciprocal Rank Fusion: merge ranked channel lists into one scored list.

`score(d) = Σ_c w_c / (k + rank_c(d))` over the channels that found d (ranks from 1).
With equal weights of 1 this is the plain RRF of spec/hybrid-search.md: ranks 2 and 5
with k=60 give 1/62 + 1/65 = 0.0315. Each result keeps every channel's contribution
(`score_breakdown`): a channel that ran but did not find d contributes 0.0, a channel
that did not run contributes None (JSON null).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field

DEFAULT_K = 60


@dataclass(frozen=True)
class Fused:
    key: Hashable
    score: float
    breakdown: dict[str, float | None] = field(default_factory=dict)
    ranks: dict[str, int] = field(default_factory=dict)


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
