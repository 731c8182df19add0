#!/usr/bin/env python3
"""Choose the hybrid defaults on the golden set: channel weights, the lexical-coverage
gate (vouch/search/weighting.py), vector candidate depth, vector similarity floor.

Builds the golden corpus as a knowledge base once (cached under bench/out/golden-kb),
collects each query's lexical and vector candidate lists once at the deepest depth
tried, then replays fusion for every setting in pure Python (the same `fusion.rrf` the
engine uses) and prints MRR@10 / nDCG@10 per query group, fts-only and vec-only first.

    python bench/tune_search.py [--golden examples/golden/golden.jsonl]
"""

from __future__ import annotations

import argparse
import itertools
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from vouch.search import access
from vouch.search import eval as ev
from vouch.search.engine import DEFAULTS, HIDDEN_STATUSES, SEARCH_KINDS
from vouch.search.evalrun import build_corpus_kb
from vouch.search.fusion import rrf
from vouch.search.weighting import COVERAGE_HITS, coverage
from vouch.store.kb import KB

TOP = 10
MAX_DEPTH = 3 * TOP * 2


def corpus_kb(corpus: Path, out: Path) -> KB:
    marker = out / ".built"
    if marker.is_file() and marker.read_text() == str(sorted(p.name for p in corpus.iterdir())):
        return KB.open(out / "kb")
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    kb = build_corpus_kb(corpus, out / "kb")
    marker.write_text(str(sorted(p.name for p in corpus.iterdir())))
    return kb


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--golden", type=Path, default=Path("examples/golden/golden.jsonl"))
    parser.add_argument("--corpus", type=Path, default=Path("examples/golden/docs"))
    args = parser.parse_args()
    golden = ev.load_golden(args.golden)
    kb = corpus_kb(args.corpus, Path("bench/out/golden-kb"))
    index = access.open_index(kb, {})
    f = access.filters(kinds=SEARCH_KINDS, tags=(), types=(), statuses=(), exclude=HIDDEN_STATUSES)
    lists = []
    for q in golden:
        lex = [h.chunk_id for h in index.lexical(q.query, MAX_DEPTH, f)]
        vec = index.vector(q.query, MAX_DEPTH, f)
        lists.append((lex, vec))
    ids = index.chunks({c for lex, vec in lists for c in [*lex, *(v for v, _ in vec)]})
    obj = {c: info.id for c, info in ids.items()}
    covs = [
        coverage(q.query, [ids[c].text for c in lex[:COVERAGE_HITS]])
        for q, (lex, _) in zip(golden, lists, strict=True)
    ]

    def score(
        fts_w: float,
        vec_w: float,
        depth: int,
        vdepth: int,
        floor: float,
        mode: str,
        k: float = 60,
        gate: tuple[float, float] | None = None,
    ) -> dict[str, dict[str, float]]:
        ranked_per_q = []
        for (lex, vec), cov in zip(lists, covs, strict=True):
            if gate is not None and gate[0] < 0:
                vec_w = gate[1] * (1 - cov)
            elif gate is not None:
                vec_w = gate[1] if cov < gate[0] else gate[2]
            channels = {
                "fts": lex[:depth] if mode != "vector" else None,
                "vector": [c for c, s in vec[:vdepth] if s >= floor] if mode != "fts" else None,
            }
            fused = rrf(channels, k=k, weights={"fts": fts_w, "vector": vec_w})
            ranked_per_q.append([obj[int(str(x.key))] for x in fused[:TOP]])
        it = iter(ranked_per_q)
        report = ev.evaluate(golden, lambda q, m: next(it), modes=(mode,))
        return report["modes"][mode]

    def line(label: str, r: dict[str, dict[str, float]]) -> str:
        cells = "  ".join(
            f"{g}: {r[g]['mrr@10']:.4f}/{r[g]['ndcg@10']:.4f}"
            for g in ("all", "summary", "synopsis", "paraphrase")
            if g in r
        )
        return f"{label:<44} {cells}"

    def label(cut: float, vec_w: float, lo: float, vfac: int, floor: float) -> str:
        gate = "no gate" if cut > 1 else f"cov<{cut}"
        return f"{gate} vec_w={vec_w}/{lo} depth={vfac}x floor={floor}"

    base = 3 * TOP
    fts = score(1, 1, base, base, 0.0, "fts")
    print(line("fts-only", fts))
    print(line("vec-only", score(1, 1, base, base, 0.0, "vector")))
    print(line("hybrid equal weights (spec)", score(1, 1, base, base, 0.0, "hybrid")))
    print(
        line(
            "hybrid defaults (engine.DEFAULTS)",
            score(
                1,
                DEFAULTS.vector_weight,
                base,
                base,
                DEFAULTS.min_similarity,
                "hybrid",
                gate=(
                    DEFAULTS.coverage_cut,
                    DEFAULTS.vector_weight,
                    DEFAULTS.vector_weight_covered,
                ),
            ),
        )
    )
    rows = []
    settings = itertools.product(
        (1.01, 0.3, 0.5, 0.7), (0.5, 1.0, 2.0, 3.0), (0.0, 0.05), (1, 3), (0.0, 0.3)
    )
    for cut, vec_w, lo, vfac, floor in settings:
        if cut > 1 and lo:  # no gate: the plain weighted RRF
            continue
        r = score(1.0, vec_w, base, vfac * TOP, floor, "hybrid", gate=(cut, vec_w, lo))
        rows.append(((cut, vec_w, lo, vfac, floor), r))
    ok = [
        (p, r)
        for p, r in rows
        if r["all"]["mrr@10"] >= fts["all"]["mrr@10"]
        and r["all"]["ndcg@10"] >= fts["all"]["ndcg@10"]
        and r["paraphrase"]["mrr@10"] > fts["paraphrase"]["mrr@10"]
    ]
    ok.sort(key=lambda pr: -(pr[1]["all"]["ndcg@10"] + pr[1]["paraphrase"]["ndcg@10"]))
    print(f"\n{len(ok)} of {len(rows)} settings beat fts-only overall and on paraphrases:")
    for (cut, vec_w, lo, vfac, floor), r in ok[:12]:
        print(line(label(cut, vec_w, lo, vfac, floor), r))
    print("\nall settings by overall nDCG:")
    rows.sort(key=lambda pr: -pr[1]["all"]["ndcg@10"])
    for (cut, vec_w, lo, vfac, floor), r in rows[:10]:
        print(line(label(cut, vec_w, lo, vfac, floor), r))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
