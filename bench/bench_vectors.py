#!/usr/bin/env python3
"""Exact vector search against the HNSW graph, warm (issue 16: is hnswlib worth a compiler?).

    python bench/bench_vectors.py --out /tmp/vouch-bench [--claims 10000 100000] [--queries 200]

For each size (a bench/generate.py knowledge base under --out, generated and indexed when
absent; never the shared bench/out/ ones, which other benchmarks rebuild):
- the kernel, on the index's memory-mapped matrix: `vectors.exact_top` against
  `graph.top` at k=10 and at k=800 (what a default search asks for: 200 candidates,
  over-fetched 4x for its status filter), p50/p95 over the embedded queries, after one
  untimed pass; the graph's build time (all cores) and its recall@10 against the exact
  top 10;
- end to end: warm hybrid `engine.search` (top 10) as a server runs it, with the graph,
  and again in a child process where hnswlib cannot be imported (exact only).
Prints one JSON line per size; RESULTS.md is written by hand.
"""

from __future__ import annotations

import os
import sys

# as `vouch` runs (vouch.cli.main): one BLAS thread; two spin against each other on a
# busy 2-core machine and make a matrix-vector product several times slower
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
if "--exact-only" in sys.argv:  # the child: hnswlib hidden, as without the `hnsw` extra
    sys.modules["hnswlib"] = None  # type: ignore[assignment]

import argparse
import json
import subprocess
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_search import pct, queries, warm_search_ms
from generate import ensure

from vouch.index import graph, vectors
from vouch.search import access
from vouch.store.kb import KB

WIDE = 200 * access.OVERFETCH  # a narrowing filter's: engine.CANDIDATES (200) x OVERFETCH


def _ms(fn: Any, items: list[Any]) -> list[float]:
    fn(items[0])  # untimed: page the matrix in
    out = []
    for item in items:
        t0 = time.perf_counter()
        fn(item)
        out.append((time.perf_counter() - t0) * 1000)
    return out


def _p(times: list[float]) -> str:
    return f"{pct(times, 50):.2f} / {pct(times, 95):.2f}"


def kernel(index: Any, qvecs: list[Any]) -> dict[str, Any]:
    matrix, ids = index._vectors()
    out: dict[str, Any] = {"rows": int(matrix.shape[0]), "dims": int(matrix.shape[1])}
    for k in (10, WIDE):
        out[f"exact_k{k}_ms"] = _p(_ms(lambda q, k=k: vectors.exact_top(matrix, ids, q, k), qvecs))
    if not graph.available():
        return out
    t0 = time.perf_counter()
    built = graph.build(matrix, ids)
    out["graph_build_s"] = round(time.perf_counter() - t0, 2)
    for k in (10, WIDE):
        out[f"graph_k{k}_ms"] = _p(_ms(lambda q, k=k: graph.top(built, ids, q, k), qvecs))
    found = 0
    for q in qvecs:
        exact = {c for c, _ in vectors.exact_top(matrix, ids, q, 10)}
        found += len(exact & {c for c, _ in graph.top(built, ids, q, 10) or []})
    out["graph_recall_at_10"] = round(found / (10 * len(qvecs)), 3)
    return out


def bench(claims: int, out_dir: Path, n_queries: int, exact_only: bool) -> dict[str, Any]:
    root = ensure(claims, out_dir=out_dir)
    kb = KB.open(root)
    warm: dict[Any, Any] = {}
    index = access.open_index(kb, warm)
    qs = queries(index, n_queries)
    out: dict[str, Any] = {"claims": claims, "graph": graph.available()}
    if not exact_only:
        out.update(kernel(index.index, [index.index.embed_query(q) for q in qs]))
    times = warm_search_ms(kb, warm, qs, "hybrid")
    out["warm_hybrid_ms"] = _p(times)
    (kb.dir / "searches.log.jsonl").unlink(missing_ok=True)
    index.index.close()
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--claims", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--exact-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    out_dir = args.out.resolve()
    for claims in args.claims:
        found = bench(claims, out_dir, args.queries, args.exact_only)
        if not args.exact_only:
            again = ["--claims", str(claims), "--out", str(out_dir), "--queries", str(args.queries)]
            child = subprocess.run(
                [sys.executable, __file__, "--exact-only", *again],
                capture_output=True,
                text=True,
                check=True,
            )
            found["warm_hybrid_exact_ms"] = json.loads(child.stdout)["warm_hybrid_ms"]
        print(json.dumps(found), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
