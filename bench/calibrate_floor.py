#!/usr/bin/env python3
"""Calibrate the similarity floor for vector-only hits (issue 14.4).

A hit that only the vector channel found is kept when its cosine reaches the floor; a
hit with a lexical match is never dropped. The floor must sit above what a query that
means nothing reaches, and below what a paraphrase reaches on the document it is about.
Measured with the bundled model on two knowledge bases:

- nonsense: 400 strings of 1-4 random letters-only words (`zzzqqqxxx`-like) and 400
  strings of 2-5 words drawn at random from the model's own whole-word vocabulary
  ("purple elephant quantum banjo"), seeded; for each, the best cosine in the base;
- meaning: each golden query's cosine on the best chunk of its relevant document, for the
  queries whose relevant document the vector channel ranks in its top 10 (what a floor
  could wrongly drop), paraphrase group apart.

    python bench/calibrate_floor.py [--claims 10000] [--no-record]
"""

from __future__ import annotations

import argparse
import random
import string
import sys
from pathlib import Path

import numpy as np
from common import append_results, conditions, load_average
from generate import ensure

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evalsets import corpus_kb

from vouch.embed import model as embed
from vouch.search import access
from vouch.search import eval as ev
from vouch.search.ranking import SIMILARITY_FLOOR
from vouch.search.request import HIDDEN_STATUSES, SEARCH_KINDS
from vouch.store.kb import KB

SEED = 14
N = 400


def nonsense(vocab: list[str]) -> dict[str, list[str]]:
    rng = random.Random(SEED)
    letters = [
        " ".join(
            "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(4, 10)))
            for _ in range(rng.randint(1, 4))
        )
        for _ in range(N)
    ]
    words = [" ".join(rng.sample(vocab, rng.randint(2, 5))) for _ in range(N)]
    return {"random letters": letters, "random words": words}


def best_cosines(kb: KB, queries: list[str]) -> np.ndarray:
    index = access.open_index(kb, {})
    f = access.filters(kinds=SEARCH_KINDS, tags=(), types=(), statuses=(), exclude=HIDDEN_STATUSES)
    out = []
    for q in queries:
        hits = index.vector(q, 1, f)
        out.append(hits[0][1] if hits else 0.0)
    return np.array(out)


def gated(kb: KB, queries: list[str]) -> np.ndarray:
    """Whether each query passes `means_something` (a content word the model knows whole
    or the knowledge base holds): the engine drops every vector-only hit of one that
    does not."""
    index = access.open_index(kb, {})
    return np.array([index.means_something(q) for q in queries])


def relevant_cosines(kb: KB, golden: list[ev.GoldenQuery]) -> dict[str, list[float]]:
    index = access.open_index(kb, {})
    f = access.filters(kinds=SEARCH_KINDS, tags=(), types=(), statuses=(), exclude=HIDDEN_STATUSES)
    found: dict[str, list[float]] = {}
    for q in golden:
        hits = index.vector(q.query, 10, f)
        info = index.chunks(c for c, _ in hits)
        sims = [s for c, s in hits if c in info and info[c].id in q.relevant]
        if sims:
            found.setdefault(q.group, []).append(max(sims))
    return found


def pct(values: np.ndarray | list[float], p: float) -> float:
    return float(np.percentile(np.asarray(values), p)) if len(values) else float("nan")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--claims", type=int, default=10000)
    parser.add_argument("--no-record", action="store_true")
    args = parser.parse_args()
    before = load_average()
    vocab_file = Path(embed.__file__).resolve().parents[1] / "models" / "default" / "tokenizer.json"
    import json

    vocab = [
        w
        for w in json.loads(vocab_file.read_text())["model"]["vocab"]
        if w.isalpha() and w.isascii() and len(w) >= 4
    ]
    sets = nonsense(vocab)
    golden = ev.load_golden(Path("examples/golden/golden.jsonl"))
    golden_kb = corpus_kb("golden", Path("examples/golden/docs"))
    big = KB.open(ensure(args.claims))
    lines = [
        "| knowledge base | queries | n | best cosine p50 | p95 | p99 | max "
        "| above the floor | means something | vec-only finds anything |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, kb in (("golden (341 documents)", golden_kb), (f"{args.claims} claims", big)):
        for label, queries in sets.items():
            sims = best_cosines(kb, queries)
            meant = gated(kb, queries)
            above = sims >= SIMILARITY_FLOOR
            lines.append(
                f"| {name} | nonsense: {label} | {len(sims)} | {pct(sims, 50):.3f} | "
                f"{pct(sims, 95):.3f} | {pct(sims, 99):.3f} | {sims.max():.3f} | "
                f"{above.mean():.1%} | {meant.mean():.1%} | {(above & meant).mean():.1%} |"
            )
    for group, sims in sorted(relevant_cosines(golden_kb, golden).items()):
        arr = np.array(sims)
        above = float((arr >= SIMILARITY_FLOOR).mean())
        lines.append(
            f"| golden (341 documents) | meaning: {group}, relevant doc in vector top 10 | "
            f"{len(arr)} | {pct(arr, 50):.3f} | p5 {pct(arr, 5):.3f} | p1 {pct(arr, 1):.3f} | "
            f"min {arr.min():.3f} | {above:.1%} | | |"
        )
    table = "\n".join(lines)
    print(table)
    if not args.no_record:
        append_results(
            "Similarity floor for vector-only hits (issue 14)",
            f"{conditions(before)}\n\nCommand: `python bench/calibrate_floor.py --claims "
            f"{args.claims}` — the best "
            f"cosine a query reaches with the bundled model; the floor is "
            f"{SIMILARITY_FLOOR} (`search.similarity_floor`), applied to hits only the "
            f"vector channel found; a query that does not mean something (no content word "
            f"the model knows whole or the knowledge base holds) keeps no vector-only hit."
            f"\n\n{table}",
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
