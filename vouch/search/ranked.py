"""A search's ranked candidates as columns: one array per field, not one object each.

A hybrid search over transcripts ranks ~750 candidates through four steps (fusion, turn
context, the similarity floor, the prior) and shows ten. As objects — a `Fused` with its
dicts per candidate, per step — that cost ~4 ms of a warm search's ~13 at 100k turns;
as arrays it costs a few hundred microseconds, and `Fused` objects are made for the page
only (and for a trace). Each step does the float operations of its per-candidate
definition in the same order, so scores and ties come out bit for bit the same.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from vouch.search.fusion import NORMS, Fused

if TYPE_CHECKING:
    from numpy.typing import NDArray

    Floats = NDArray[np.float64]
    Ints = NDArray[np.int64]
    Flags = NDArray[np.bool_]


@dataclass(frozen=True)
class Part:
    """One named part of the candidates' `score_breakdown`: its values (None: a channel
    that did not run, shown as JSON null) and which candidates show it (None: all)."""

    values: Floats | None
    shown: Flags | None = None

    def take(self, rows: Ints) -> Part:
        return Part(
            None if self.values is None else self.values[rows],
            None if self.shown is None else self.shown[rows],
        )


@dataclass(frozen=True)
class Ranked:
    """Candidates best first: chunk ids (`keys`, negative for a pending proposal's),
    scores, the breakdown's parts in their order, and each channel's rank (0: not
    found there; channels in their order)."""

    keys: Ints
    score: Floats
    parts: Mapping[str, Part]
    ranks: Mapping[str, Ints]

    def __len__(self) -> int:
        return len(self.keys)

    @classmethod
    def of(cls, fused: Sequence[Fused]) -> Ranked:
        """Candidates already ranked as objects (rank fusion); their breakdowns name the
        same channels."""
        names = list(fused[0].breakdown) if fused else []
        channels = [name for name in names if any(name in f.ranks for f in fused)]
        parts = {}
        for name in names:
            given = [f.breakdown[name] for f in fused]
            values = None if given[0] is None else np.array(given, dtype=np.float64)
            parts[name] = Part(values)
        return cls(
            keys=np.array([int(str(f.key)) for f in fused], dtype=np.int64),
            score=np.array([f.score for f in fused], dtype=np.float64),
            parts=parts,
            ranks={c: np.array([f.ranks.get(c, 0) for f in fused], np.int64) for c in channels},
        )

    def take(self, rows: Ints) -> Ranked:
        """These candidates (row numbers), in this order."""
        return Ranked(
            self.keys[rows],
            self.score[rows],
            {name: part.take(rows) for name, part in self.parts.items()},
            {name: r[rows] for name, r in self.ranks.items()},
        )

    def extended(self, keys: Ints, score: Floats, parts: Mapping[str, Part]) -> Ranked:
        """These candidates and, after them, `keys` that no channel found: each earlier
        part shows 0.0 for them (None stays None), no channel ranks them; `parts` are
        new parts, given for every candidate, old and new."""
        n = len(keys)
        grown = {
            name: Part(
                None if p.values is None else np.concatenate([p.values, np.zeros(n)]),
                None if p.shown is None else np.concatenate([p.shown, np.ones(n, np.bool_)]),
            )
            for name, p in self.parts.items()
        }
        return Ranked(
            np.concatenate([self.keys, keys]),
            score,
            {**grown, **parts},
            {name: np.concatenate([r, np.zeros(n, np.int64)]) for name, r in self.ranks.items()},
        )

    def raised(self, name: str, rates: Floats) -> Ranked:
        """Each score raised by its rate (`score × (1 + rate)`), the added part shown as
        `name`, and re-sorted (stable: equal scores keep their order)."""
        extra = self.score * rates
        parts = {**self.parts, name: Part(extra)}
        return Ranked(self.keys, self.score + extra, parts, self.ranks).sorted()

    def sorted(self) -> Ranked:
        """Best score first; equal scores keep their order."""
        return self.take(np.argsort(-self.score, kind="stable"))

    def where(self, keep: Flags) -> Ranked:
        return self.take(np.flatnonzero(keep))

    def at_least(self, threshold: float) -> Ranked:
        return self.where(self.score >= threshold)

    def without(self, keys: Sequence[int]) -> Ranked:
        """These candidates but `keys`."""
        rows, found = self.rows_of(np.array(keys, dtype=np.int64))
        keep = np.ones(len(self), np.bool_)
        keep[rows[found]] = False
        return self.where(keep)

    @functools.cached_property
    def _order(self) -> Ints:
        return np.argsort(self.keys)

    def rows_of(self, keys: Ints) -> tuple[Ints, Flags]:
        """For each of `keys`, its row here and whether it is here at all."""
        if not len(self.keys):
            return np.zeros(len(keys), np.int64), np.zeros(len(keys), np.bool_)
        order = self._order
        at = np.minimum(np.searchsorted(self.keys, keys, sorter=order), len(order) - 1)
        rows = order[at]
        return rows, self.keys[rows] == keys

    def fused(self, start: int = 0, stop: int | None = None) -> list[Fused]:
        """Candidates `start` to `stop` as the response shows them."""
        rows = range(len(self))[start:stop]
        if len(rows) < len(self):  # a page: only its rows become Python values
            return self.take(np.arange(rows.start, rows.stop)).fused()
        keys, score = self.keys.tolist(), self.score.tolist()
        parts = [
            (
                name,
                None if part.values is None else part.values.tolist(),
                None if part.shown is None else part.shown.tolist(),
            )
            for name, part in self.parts.items()
        ]
        ranks = [(name, r.tolist()) for name, r in self.ranks.items()]
        out = []
        for row in rows:
            breakdown = {
                name: None if values is None else values[row]
                for name, values, shown in parts
                if shown is None or shown[row]
            }
            found = {name: r[row] for name, r in ranks if r[row]}
            out.append(Fused(keys[row], score[row], breakdown, found))
        return out


def _normalised(scores: Sequence[float], norm: str) -> Floats:
    """Scores on a common scale, 0.0 at the channel's lowest candidate: min-max divides
    by the range (so the best is 1.0), z-score by the standard deviation (the z-score
    shifted by the lowest one's). Scores that are all equal (one candidate) map to 1.0:
    the channel found them, as good as it finds anything. A shift by a constant changes
    no ranking, and keeps every contribution ≥ 0 with a miss at exactly 0.0."""
    values = np.array(scores, dtype=np.float64)
    if norm not in NORMS:
        raise ValueError(f"unknown score normalisation {norm!r}")
    if not len(values):
        return values
    lo = values.min()
    if norm == "minmax":
        spread = float(values.max() - lo)
    else:  # Python's sums, in list order (numpy sums pairwise: other last bits)
        nums = [float(v) for v in scores]
        mean = sum(nums) / len(nums)
        spread = (sum((v - mean) ** 2 for v in nums) / len(nums)) ** 0.5
    return (values - lo) / spread if spread > 0 else np.ones(len(values))


def _firsts(keys: Ints) -> Ints:
    """Where each key first stands in `keys`, in order."""
    ordered = np.sort(keys)
    if not (ordered[1:] == ordered[:-1]).any():  # each once: the common case
        return np.arange(len(keys))
    return np.sort(np.unique(keys, return_index=True)[1])


def convex(
    channels: Mapping[str, Sequence[tuple[int, float]] | None],
    *,
    weights: Mapping[str, float] | None = None,
    norm: str = "minmax",
    apart: tuple[Sequence[int] | Ints, Mapping[str, float]] | None = None,
) -> Ranked:
    """Fuse scored lists of chunk ids (best first) by a weighted sum of normalised scores.

    `score(d) = Σ_c w_c · norm_c(d)`: each channel's raw scores (BM25, cosine) are put on
    one scale over that channel's candidates, so a channel's contribution says how much
    better than its other candidates d is, not just its rank. A channel that did not
    find d contributes 0.0 (its floor), a channel that did not run None. A channel lists
    a key once (a repeat is ignored). Ties are broken as in `rrf`: best rank in any
    channel, then first seen. `apart` gives some keys weights of their own (transcript
    turns among documents): `(keys, weights)`.
    """
    weights = weights or {}
    lists: dict[str, tuple[Ints, Ints, Floats] | None] = {}
    for name, scored in channels.items():
        if scored is None:
            lists[name] = None
            continue
        keys = np.array([key for key, _ in scored], dtype=np.int64)
        values = [value for _, value in scored]
        firsts = _firsts(keys)
        if len(firsts) < len(keys):
            keys, values = keys[firsts], [values[i] for i in firsts.tolist()]
        lists[name] = (keys, firsts + 1, _normalised(values, norm))
    met = [found[0] for found in lists.values() if found is not None]
    every = np.concatenate(met) if met else np.zeros(0, np.int64)
    keys = every[_firsts(every)]  # every candidate once, first seen first
    order = np.argsort(keys)
    score = np.zeros(len(keys))
    best = np.full(len(keys), np.iinfo(np.int64).max)
    parts: dict[str, Part] = {}
    ranks: dict[str, Ints] = {}
    theirs = None if apart is None else np.isin(keys, np.asarray(apart[0], dtype=np.int64))
    for name, found in lists.items():
        if found is None:
            parts[name] = Part(None)
            continue
        own, rank, normed = found
        rows = order[np.searchsorted(keys, own, sorter=order)]
        mine = np.zeros(len(keys))
        mine[rows] = normed
        value = float(weights.get(name, 1.0)) * mine
        if apart is not None:
            value[theirs] = float(apart[1].get(name, 1.0)) * mine[theirs]
        parts[name] = Part(value)
        score = score + value
        ranks[name] = np.zeros(len(keys), np.int64)
        ranks[name][rows] = rank
        best[rows] = np.minimum(best[rows], rank)
    ranked = Ranked(keys, score, parts, ranks)
    return ranked.take(np.lexsort((np.arange(len(keys)), best, -score)))
