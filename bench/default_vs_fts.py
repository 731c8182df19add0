#!/usr/bin/env python3
"""Where the default ranks below fts-only, query by query (issue 35 item 2).

Runs on bench/tune_search.py's caches (bench/out/<name>-kb, -lists.json: run it first on
the same sets): per set, the queries by the default's fusion band (`ranking.fusion_weights`:
how much of the query's content words a best lexical hit holds), how many it loses or
wins against fts-only, and on the lost ones what pushed fts-only's relevant documents
out; then, per group and half, rankings the engine does not ship, measured on the same
candidates (as shipped: floor and prior applied). Nothing here changes the ranking.

    python bench/default_vs_fts.py [--own golden,eval,kb] [--public bench/out/public]

The public sets are the ones bench/public_sets.py wrote under `--public`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import evalsets as es

from vouch.search.weighting import content_stems


def _bands(c: Any) -> str:
    """The default's fusion band for a query (`ranking.fusion_weights`)."""
    from vouch.search.ranking import DEFAULTS as T

    coverage = c.coverage
    if coverage >= 1.0:
        return f"covered 1.0 (fts {T.fts_share_full})"
    if T.coverage_words and c.held >= T.coverage_words:
        return f"≥{T.coverage_words} words held (fts {T.fts_share_full})"
    if coverage >= T.coverage_cut:
        return f"covered ≥{T.coverage_cut} (fts {T.fts_share})"
    return f"covered <{T.coverage_cut} (fts {T.fts_share_uncovered})"


def per_query(specs: Sequence[str], own: Sequence[str] = ()) -> str:
    """Per set, the queries by the default's fusion band: how many, fts-only / default /
    vec-only nDCG@10, how many the default loses (by > 0.05) or wins; on the lost ones,
    the relevant documents fts-only had in its top 10 that the default pushed out, and
    what took their places (found by the vector channel alone, or by both). Then rankings
    the engine does not ship, measured on the same candidates (what item 2 might do).

    `own`: the project's sets too (golden, eval, kb; eval at 1000, 5000 and full size).
    Runs on bench/tune_search.py's caches (bench/out/<name>-kb, -lists.json)."""
    import tune_search as ts

    from vouch.search.ranking import DEFAULTS

    sets = ts.load_sets(own, [1000, 5000, None], specs)
    default = ts.engine_default(DEFAULTS)
    alternatives = {
        "mid 0.6": ts.engine_default(DEFAULTS._replace(fts_share=0.6)),
        "mid 0.8": ts.engine_default(DEFAULTS._replace(fts_share=0.8)),
        "0.8 always": ts.engine_default(DEFAULTS._replace(fts_share=0.8, fts_share_uncovered=0.8)),
        "fts top 3 kept": _keep_lexical(default, 3),
        "≥4 words 0.8": _by_words_matched(4, 0.8),
    }
    rankers = {"fts": ts.fts_only, "vec": ts.vec_only, "default": default, **alternatives}
    out = []
    for key, rows in sets.items():
        out.append(f"\n**{key}** ({len(rows)} queries)\n")
        out += _by_band(rows, default)
        out += _by_group(rows, rankers)
    return "\n".join(out) + "\n"


def _by_band(rows: Sequence[Any], default: Callable[[Any], list[str]]) -> list[str]:
    """Table lines: the queries by the default's fusion band, and on the ones it loses
    (by > 0.05 nDCG@10) fts-only's relevant documents it pushed out and what took their
    places (found by the vector channel alone, or by both)."""
    import tune_search as ts

    from vouch.search import eval as ev

    out = [
        "| band | queries | fts / default / vec nDCG@10 | default loses / wins "
        "| lost: fts's relevant pushed out | what took their places (vec-only / both) |",
        "|---|---|---|---|---|---|",
    ]
    by_band: dict[str, list[list[float]]] = {}
    for c in rows:
        f, d, v = ts.fts_only(c), default(c), ts.vec_only(c)
        scores = [ev.ndcg(x, c.query.relevant) for x in (f, d, v)]
        lexical = {c.objects[k] for k, _ in c.lexical if k in c.objects}
        pushed = [x for x in f if x in c.query.relevant and x not in d]
        came = [x for x in d if x not in f]
        lost = scores[1] < scores[0] - 0.05
        by_band.setdefault(_bands(c), []).append(
            [
                *scores,
                float(lost),
                float(scores[1] > scores[0] + 0.05),
                len(pushed) if lost else 0.0,
                sum(x not in lexical for x in came) if lost else 0.0,
                sum(x in lexical for x in came) if lost else 0.0,
            ]
        )
    for band, vals in sorted(by_band.items()):
        n = len(vals)
        col = [sum(v[i] for v in vals) for i in range(8)]
        out.append(
            f"| {band} | {n} | {col[0] / n:.3f} / {col[1] / n:.3f} / {col[2] / n:.3f} "
            f"| {col[3]:.0f} / {col[4]:.0f} | {col[5]:.0f} | {col[6]:.0f} / {col[7]:.0f} |"
        )
    return out


def _by_group(rows: Sequence[Any], rankers: dict[str, Callable[[Any], list[str]]]) -> list[str]:
    """Table lines: nDCG@10 of each ranking per group and half, and default − fts-only
    per query (mean ± standard error)."""
    from vouch.search import eval as ev

    scores: dict[tuple[str, str], list[list[float]]] = {}
    for c in rows:
        got = [ev.ndcg(rank(c), c.query.relevant) for rank in rankers.values()]
        scores.setdefault((c.query.group, c.query.half), []).append(got)
    modes = list(rankers)
    out = [
        "\n| group | half | n | " + " | ".join(modes) + " | default − fts ± se |",
        "|---|---|---|" + "---|" * (len(modes) + 1),
    ]
    for (group, half), vals in sorted(scores.items()):
        means = " | ".join(f"{sum(v[i] for v in vals) / len(vals):.3f}" for i in range(len(modes)))
        diff = _mean_se([v[modes.index("default")] - v[modes.index("fts")] for v in vals])
        out.append(f"| {group} | {half} | {len(vals)} | {means} | {diff} |")
    return out


def _mean_se(values: Sequence[float]) -> str:
    n = len(values)
    mean = sum(values) / n
    var = sum((v - mean) ** 2 for v in values) / (n - 1) if n > 1 else 0.0
    return f"{mean:+.3f} ± {(var / n) ** 0.5:.3f}"


def _by_words_matched(least: int, share: float) -> Callable[[Any], list[str]]:
    """The default before issue 35 (`coverage_words` 0), but BM25's share is `share`
    when a best lexical hit holds at least `least` of the query's content words without
    holding all (coverage counts a share, so a long query that matched many words looks
    as weak as a short paraphrase that matched one); floor and prior as shipped."""
    import tune_search as ts

    from vouch.search import prior
    from vouch.search.ranking import DEFAULTS, fuse, fusion_weights, ordered

    def ranked(c: Any) -> list[str]:
        weights = fusion_weights(DEFAULTS._replace(coverage_words=0), c.coverage)
        matched = round(c.coverage * len(content_stems(c.query.query)))
        if c.coverage < 1.0 and matched >= least:
            weights = {"fts": share, "vector": 1.0 - share}
        got = fuse({"fts": ordered(c.lexical), "vector": c.vector}, weights)
        got = got.without(list(ts._weak(c)))
        got = prior.apply(got, ts._labels(c, got.keys.tolist()), prior.DEFAULT_BOOSTS)
        return ts._objects(c, got.keys[: ts.TOP].tolist())

    return ranked


def _keep_lexical(rank: Callable[[Any], list[str]], k: int) -> Callable[[Any], list[str]]:
    """`rank`'s page with fts-only's first `k` documents kept at the top, in their order."""
    import tune_search as ts

    def ranked(c: Any) -> list[str]:
        top = ts.fts_only(c)[:k]
        return (top + [x for x in rank(c) if x not in top])[: ts.TOP]

    return ranked


def public_specs(where: Path) -> list[str]:
    """`NAME=QUERIES.jsonl:DOCS_DIR` for each set bench/public_sets.py wrote."""
    out = []
    for name in ("cisi", "cranfield"):
        asked = where / name / "queries.jsonl"
        if asked.is_file():
            out += [
                f"{name}={asked}:{where / name / 'docs'}",
                f"{name}-large={asked}:{where / f'{name}-large' / 'docs'}",
            ]
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--own", default="", help="the project's sets too: golden,eval,kb")
    parser.add_argument("--public", type=Path, default=es.OUT / "public")
    args = parser.parse_args(argv)
    specs = public_specs(args.public)
    own = [n for n in args.own.split(",") if n]
    if not specs and not own:
        print(f"no sets: nothing under {args.public} (run bench/public_sets.py) and no --own")
        return 0
    print(per_query(specs, own))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
