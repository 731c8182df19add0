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

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from vouch.errors import UsageError

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from vouch.core.config import Config
    from vouch.search.ranked import Ranked

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


def rates(
    labels: tuple[Sequence[int], Sequence[tuple[str, str]]], table: Mapping[str, float]
) -> NDArray[np.float64]:
    """Each candidate's boost (`labels` as `apply` takes them; 0.0 for one labelled -1)."""
    import numpy as np

    codes, pairs = labels
    known = np.array([boost(table, *pair) for pair in pairs] + [0.0])
    code = np.asarray(codes, dtype=np.int64)
    return np.where(code >= 0, known[code], 0.0)


def apply(
    ranked: Ranked,
    labels: tuple[Sequence[int], Sequence[tuple[str, str]]],
    table: Mapping[str, float],
) -> Ranked:
    """`ranked` rescored by the prior and re-sorted (stable: equal scores keep their
    order). `labels` are each candidate's (kind, status) as a number into a list of
    them, -1 for one not to boost (a pending proposal, a chunk gone from the index)."""
    return ranked.raised("prior", rates(labels, table))
