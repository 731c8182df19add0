"""Reviewed knowledge first: a prior by kind and status on the fused score.

A claim a person approved states what the team holds true, a source chunk is raw text
it rests on. When both answer a query the claim belongs above the chunks it cites, so
each fused score is multiplied by `1 + boost(kind, status)`; the added part is the
result's `score_breakdown.prior`. Sources, pending proposals (not reviewed) and
contested or stale knowledge get no boost. Scale-free, so it suits rank and score
fusion alike; `search.prior.<kind>` (or `<kind>.<status>`) in config.yaml overrides a
value. Chosen on the tuning half of the knowledge-base-shaped evaluation set
(bench/tune_search.py, bench/RESULTS.md).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from operator import attrgetter
from typing import TYPE_CHECKING

from vouch.errors import UsageError
from vouch.search.fusion import Fused

if TYPE_CHECKING:
    from vouch.core.config import Config

# kind -> boost, or kind.status -> boost (the more specific wins)
DEFAULT_BOOSTS: dict[str, float] = {
    "claim": 0.25,
    "claim.working": 0.2,
    "claim.stable": 0.3,
    "claim.contested": 0.0,
    "page": 0.15,
    "page.draft": 0.05,
    "page.stale": 0.0,
    "entity": 0.1,
    "relation": 0.1,
    "source": 0.0,
}


def boosts(config: Config) -> dict[str, float]:
    """The defaults with `search.prior` from config.yaml laid over them."""
    table = dict(DEFAULT_BOOSTS)
    given = config.get("search.prior", None)
    if given is None:
        return table
    if not isinstance(given, dict):
        raise UsageError("search.prior in config.yaml must map kinds to numbers")
    for kind, value in given.items():
        if not isinstance(value, dict):  # one number for the kind: its statuses follow
            table = {k: v for k, v in table.items() if not k.startswith(f"{kind}.")}
        entries = value.items() if isinstance(value, dict) else [("", value)]
        for status, number in entries:
            key = f"{kind}.{status}" if status else str(kind)
            try:
                table[key] = float(number)
            except (TypeError, ValueError) as exc:
                raise UsageError(f"search.prior.{key} in config.yaml must be a number") from exc
            if not 0.0 <= table[key] <= 10.0:
                raise UsageError(f"search.prior.{key} in config.yaml must be between 0 and 10")
    return table


def boost(table: Mapping[str, float], kind: str, status: str) -> float:
    return table.get(f"{kind}.{status}", table.get(kind, 0.0))


def apply(
    fused: Sequence[Fused],
    describe: Callable[[int], tuple[str, str] | None],
    table: Mapping[str, float],
) -> list[Fused]:
    """`fused` rescored by the prior (in place: a search's own candidates) and re-sorted
    (stable: equal scores keep their order). `describe(key)` gives a chunk's (kind,
    status), None for one not to boost (a pending proposal, a chunk gone from the
    index)."""
    by_label: dict[tuple[str, str], float] = {}
    for f in fused:  # rescored in place: each search's candidates are its own
        found = describe(f.key if type(f.key) is int else int(str(f.key)))
        extra = 0.0
        if found:
            rate = by_label.get(found)
            if rate is None:
                rate = by_label[found] = boost(table, *found)
            extra = f.score * rate
        f.breakdown["prior"] = extra
        f.score = f.score + extra
    out = list(fused)
    out.sort(key=attrgetter("score"), reverse=True)  # stable either way
    return out
