"""The columnar ranking (`search.ranked`) against the ranking's per-candidate definition.

Each step below — convex fusion, turns in their context, the similarity floor, the prior —
is written here the plain way, one candidate at a time, as the ranking defines it (and as
the engine ran it before its candidates became columns). On random candidate lists with
ties, repeats, pending ids, unrun channels and named speakers, the columns must give the
same candidates, in the same order, with the same scores and breakdowns, to the last bit.
"""

from __future__ import annotations

import random
import re
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import pytest

from vouch.index.turnmap import TurnLinks
from vouch.search import prior
from vouch.search.fusion import Fused
from vouch.search.ranked import Ranked, convex
from vouch.search.ranking import in_context

_WORD = re.compile(r"\w+")


def _plain_convex(
    channels: Mapping[str, Sequence[tuple[int, float]] | None],
    weights: Mapping[str, float],
    norm: str,
) -> list[Fused]:
    normed_by: dict[str, dict[Hashable, float] | None] = {}
    ranks: dict[Hashable, dict[str, int]] = {}
    for name, scored in channels.items():
        if scored is None:
            normed_by[name] = None
            continue
        values: dict[Hashable, float] = {}
        for rank, (key, score) in enumerate(scored, 1):
            values.setdefault(key, float(score))
            ranks.setdefault(key, {}).setdefault(name, rank)
        nums = list(values.values())
        lo = min(nums, default=0.0)
        if norm == "minmax":
            spread = max(nums, default=0.0) - lo
        else:
            mean = sum(nums) / len(nums) if nums else 0.0
            spread = (sum((v - mean) ** 2 for v in nums) / len(nums)) ** 0.5 if nums else 0.0
        normed_by[name] = {k: (v - lo) / spread if spread > 0 else 1.0 for k, v in values.items()}
    rows = []
    for position, (key, found) in enumerate(ranks.items()):
        breakdown: dict[str, float | None] = {}
        score = 0.0
        for name, normed in normed_by.items():
            if normed is None:
                breakdown[name] = None
            else:
                value = float(weights.get(name, 1.0)) * normed.get(key, 0.0)
                breakdown[name] = value
                score += value
        rows.append((-score, min(found.values()), position, Fused(key, score, breakdown, found)))
    rows.sort(key=lambda row: row[:3])
    return [row[3] for row in rows]


def _plain_in_context(
    fused: list[Fused],
    links: Mapping[int, Sequence[int]],
    speakers: Mapping[int, str],
    query: str,
    share: float,
    bonus: float,
) -> list[Fused]:
    if not links or (share <= 0 and bonus <= 0):
        return fused
    base = {f.key: f for f in fused}
    added: dict[int, float] = {}
    for cid, near in links.items():
        found = base.get(cid)
        if found is not None:
            for other in near:
                added[other] = added.get(other, 0.0) + share * found.score
    words = set(_WORD.findall(query.casefold()))
    named = {n for n in set(speakers.values()) if n and set(_WORD.findall(n.casefold())) <= words}
    favoured = next(iter(named)) if len(named) == 1 else None
    missed = {name: None if v is None else 0.0 for name, v in fused[0].breakdown.items()}
    out = list(fused)
    for f in fused:
        context = added.get(int(str(f.key)), 0.0)
        said = bonus if favoured is not None and speakers.get(int(str(f.key))) == favoured else 0.0
        if context or said:
            f.breakdown["context"] = context
            f.breakdown["speaker"] = said
            f.score = f.score + context + said
    for cid, context in added.items():
        if cid not in base:
            said = bonus if favoured is not None and speakers.get(cid) == favoured else 0.0
            out.append(Fused(cid, context + said, {**missed, "context": context, "speaker": said}))
    out.sort(key=lambda f: f.score, reverse=True)
    return out


def _plain_prior(
    fused: list[Fused], labels: Mapping[int, tuple[str, str]], table: Mapping[str, float]
) -> list[Fused]:
    for f in fused:
        found = labels.get(int(str(f.key)))
        extra = f.score * prior.boost(table, *found) if found else 0.0
        f.breakdown["prior"] = extra
        f.score = f.score + extra
    return sorted(fused, key=lambda f: f.score, reverse=True)


def _shown(fused: Sequence[Fused]) -> list[tuple[Any, ...]]:
    return [(f.key, f.score, list(f.breakdown.items()), list(f.ranks.items())) for f in fused]


def _channel(rng: random.Random, ids: list[int], coarse: bool) -> list[tuple[int, float]]:
    """A channel's hits: some ids (a repeat now and then), scores with ties when coarse."""
    picked = rng.sample(ids, rng.randint(0, min(len(ids), 40)))
    if picked and rng.random() < 0.3:
        picked.insert(rng.randrange(len(picked)), rng.choice(picked))
    score = (lambda: float(rng.randint(0, 4))) if coarse else rng.random
    return [(cid, score()) for cid in picked]


def _links(
    rng: random.Random, keys: list[int], ids: list[int]
) -> tuple[dict[int, list[int]], dict[int, str]]:
    """Some of `keys` as turns, each with up to two neighbours among `ids`, and speakers
    (one with no words, one that is empty)."""
    names = ["Ann Lee", "Bob", "ann", "?", ""]
    near = {
        k: rng.sample(ids, rng.randint(0, 2)) for k in sorted(keys) if k > 0 and rng.random() < 0.6
    }
    near = {k: [n for n in v if n != k] for k, v in near.items()}
    speakers = {c: rng.choice(names) for c in {*near, *(n for v in near.values() for n in v)}}
    return near, speakers


@pytest.mark.parametrize("seed", range(300))
def test_columns_rank_as_the_definition_does(seed: int) -> None:
    rng = random.Random(seed)
    ids = [*range(1, 60), -1, -2, -3]  # negative: a pending proposal's chunks
    coarse = rng.random() < 0.5
    channels: dict[str, list[tuple[int, float]] | None] = {
        "fts": _channel(rng, ids, coarse),
        "vector": None if rng.random() < 0.2 else _channel(rng, ids, coarse),
    }
    if not channels["fts"] and not channels["vector"]:
        channels["fts"] = [(5, 1.0)]
    weights = {"fts": rng.choice([0.4, 0.6, 0.8, 1.0]), "vector": rng.choice([0.2, 0.4, 0.6])}
    norm = rng.choice(["minmax", "zscore"])
    ranked = convex(channels, weights=weights, norm=norm)
    plain = _plain_convex(channels, weights, norm)
    assert _shown(ranked.fused()) == _shown(plain)

    near, speakers = _links(rng, ranked.keys.tolist(), [i for i in ids if i > 0])
    query = rng.choice(["what did ann lee say", "bob and ann", "anything", "did bob call"])
    share, bonus = rng.choice([(0.5, 0.2), (0.5, 0.0), (0.0, 0.2), (0.0, 0.0)])
    ranked = in_context(ranked, TurnLinks.of(near, speakers), query, share, bonus)
    plain = _plain_in_context(plain, near, speakers, query, share, bonus)
    assert _shown(ranked.fused()) == _shown(plain)

    weak = [k for k in ranked.keys.tolist() if rng.random() < 0.1]
    ranked = ranked.without(weak)
    plain = [f for f in plain if f.key not in weak]
    assert _shown(ranked.fused()) == _shown(plain)

    pairs = [("claim", "stable"), ("source", "active"), ("page", "draft"), ("claim", "contested")]
    labels = {k: rng.choice(pairs) for k in ids if k > 0 and rng.random() < 0.8}
    codes = [pairs.index(labels[k]) if k in labels else -1 for k in ranked.keys.tolist()]
    ranked = prior.apply(ranked, (codes, pairs), prior.DEFAULT_BOOSTS)
    plain = _plain_prior(plain, labels, prior.DEFAULT_BOOSTS)
    assert _shown(ranked.fused()) == _shown(plain)
    start = rng.randrange(len(plain) + 1)
    assert _shown(ranked.fused(start, start + 7)) == _shown(plain[start : start + 7])


def test_rank_fusions_objects_as_columns() -> None:
    """`Ranked.of` keeps what rank fusion made: order, scores, breakdowns (a channel
    that did not run stays None), ranks."""
    from vouch.search.fusion import rrf

    fused = rrf({"fts": None, "vector": [4, 2, 9]}, k=60)
    assert _shown(Ranked.of(fused).fused()) == _shown(fused)
    both = rrf({"fts": [1, 2], "vector": [2, 3]}, k=60, weights={"vector": 2.0})
    assert _shown(Ranked.of(both).fused()) == _shown(both)
    assert len(Ranked.of([])) == 0 and Ranked.of([]).fused() == []
