"""Retrieval quality on a golden set: MRR@10, recall@10 and nDCG@10 per search mode.

A golden file is JSON lines `{"query": str, "relevant": [id, ...]}` (optionally
`"group"`, e.g. `summary` or `paraphrase`, reported separately). Relevance is binary and
judged on object ids: the ranked chunk list is collapsed to distinct object ids first.
"""

from __future__ import annotations

import math
import os
import stat
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vouch.core import safeload
from vouch.core.progress import Progress, each
from vouch.errors import UsageError

CUTOFF = 10
MODES = ("fts", "vector", "hybrid")


@dataclass(frozen=True)
class GoldenQuery:
    query: str
    relevant: frozenset[str]
    group: str = "all"


GOLDEN_MAX = 64 << 20  # a golden file past this is not a query set


def load_golden(path: Path) -> list[GoldenQuery]:
    try:
        with path.open("rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                raise UsageError(f"golden file {path} is not a regular file")
            data = fh.read(GOLDEN_MAX + 1)
    except OSError as exc:
        raise UsageError(f"cannot read golden file {path}: {exc.strerror or exc}") from exc
    if len(data) > GOLDEN_MAX:
        raise UsageError(f"golden file {path} is larger than {GOLDEN_MAX} bytes")
    lines = data.decode("utf-8", "replace").splitlines()
    out: list[GoldenQuery] = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = safeload.json_value(line, f"{path} line {n}")
            query, relevant = row["query"], row["relevant"]
            if (
                not isinstance(query, str)
                or not query.strip()
                or not isinstance(relevant, list)
                or not relevant
                or not all(isinstance(r, str) for r in relevant)
            ):
                raise ValueError
        except (ValueError, KeyError, TypeError, safeload.Unreadable) as exc:
            raise UsageError(f'{path}:{n}: expected {{"query": str, "relevant": [ids]}}') from exc
        out.append(GoldenQuery(query, frozenset(relevant), str(row.get("group") or "all")))
    if not out:
        raise UsageError(f"{path} holds no queries")
    return out


def distinct(ids: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(ids))


def reciprocal_rank(ranked: Sequence[str], relevant: frozenset[str], k: int = CUTOFF) -> float:
    for rank, item in enumerate(ranked[:k], 1):
        if item in relevant:
            return 1.0 / rank
    return 0.0


def recall(ranked: Sequence[str], relevant: frozenset[str], k: int = CUTOFF) -> float:
    return len(set(ranked[:k]) & relevant) / len(relevant)


def ndcg(ranked: Sequence[str], relevant: frozenset[str], k: int = CUTOFF) -> float:
    dcg = sum(
        1.0 / math.log2(rank + 1) for rank, item in enumerate(ranked[:k], 1) if item in relevant
    )
    ideal = sum(1.0 / math.log2(rank + 1) for rank in range(1, min(len(relevant), k) + 1))
    return dcg / ideal


def evaluate(
    golden: Sequence[GoldenQuery],
    search: Callable[[str, str], Sequence[str]],
    modes: Sequence[str] = MODES,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """`search(query, mode)` returns ranked object ids. Means per mode and per group."""
    per_mode: dict[str, dict[str, dict[str, float]]] = {}
    counts: dict[str, int] = {}
    for q in golden:
        if q.group != "all":
            counts[q.group] = counts.get(q.group, 0) + 1
    for mode in modes:
        sums: dict[str, dict[str, float]] = {}
        for q in each(golden, progress, f"evaluating {mode}", every=10):
            ranked = distinct(search(q.query, mode))
            values = {
                "mrr@10": reciprocal_rank(ranked, q.relevant),
                "recall@10": recall(ranked, q.relevant),
                "ndcg@10": ndcg(ranked, q.relevant),
            }
            for group in ("all", q.group) if q.group != "all" else ("all",):
                bucket = sums.setdefault(group, {m: 0.0 for m in values})
                for metric, v in values.items():
                    bucket[metric] += v
        per_mode[mode] = {
            group: {
                m: round(v / (len(golden) if group == "all" else counts[group]), 4)
                for m, v in bucket.items()
            }
            for group, bucket in sums.items()
        }
    return {
        "queries": len(golden),
        "groups": {"all": len(golden), **counts},
        "cutoff": CUTOFF,
        "modes": per_mode,
    }


def table(report: dict[str, Any]) -> str:
    """The report as a plain text table: one row per group and mode."""
    lines = [f"{'group':<12} {'mode':<8} {'MRR@10':>8} {'R@10':>8} {'nDCG@10':>8}  queries"]
    groups = sorted(report["groups"], key=lambda g: (g != "all", g))
    for group in groups:
        for mode, by_group in report["modes"].items():
            row = by_group.get(group)
            if row is None:
                continue
            lines.append(
                f"{group:<12} {mode:<8} {row['mrr@10']:>8.4f} {row['recall@10']:>8.4f} "
                f"{row['ndcg@10']:>8.4f}  {report['groups'][group]}"
            )
    return "\n".join(lines)
