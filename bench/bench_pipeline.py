#!/usr/bin/env python3
"""The search pipeline's walk and its warm latency (issue 35 item 4).

    python bench/bench_pipeline.py [--claims 10000] [--queries 200] [--rounds 3]

On a generated knowledge base (bench/generate.py, seed 0; a private copy under
bench/out/pipeline):
- the walk: one default hybrid `engine.search` in a warm process, followed with
  `sys.setprofile`; each time the innermost `vouch.search.*` frame on the stack changes
  module is a stop. Reported: stops, distinct modules, and returns (a stop in a module
  the walk had already left);
- warm in-process latency: `bench_search.warm_search_ms` over --queries hybrid queries
  (bench_search.queries, seed 0), --rounds times; p50 of each round and their median.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_search import queries, warm_search_ms
from common import percentile
from generate import ensure

from vouch.search import access
from vouch.search.engine import SearchRequest, search
from vouch.store.kb import KB

OUT = Path(__file__).resolve().parent / "out" / "pipeline"


def walk(kb: KB, warm: dict[Any, Any], query: str, prefix: str = "vouch.search") -> list[str]:
    """The modules (under `prefix`) one search passes through, a stop each time the
    innermost such frame's module changes."""
    stack: list[str | None] = []
    stops: list[str] = []

    def innermost() -> str | None:
        return next((m for m in reversed(stack) if m is not None), None)

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            name = frame.f_globals.get("__name__", "")
            stack.append(name if name.startswith(prefix) else None)
        elif event == "return" and stack:
            stack.pop()
        else:
            return
        now = innermost()
        if now is not None and (not stops or stops[-1] != now):
            stops.append(now)

    request = SearchRequest(query=query, log=False)
    sys.setprofile(profile)
    try:
        search(kb, request, warm=warm)
    finally:
        sys.setprofile(None)
    return stops


def summarise(stops: list[str]) -> dict[str, Any]:
    left: set[str] = set()
    returns = 0
    for before, now in zip(stops, stops[1:], strict=False):
        left.add(before)
        returns += now in left
    visits: dict[str, int] = {}
    for m in stops:
        visits[m] = visits.get(m, 0) + 1
    return {
        "stops": len(stops),
        "modules": len(visits),
        "returns": returns,
        "visits": dict(sorted(visits.items(), key=lambda kv: -kv[1])),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--claims", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    root = ensure(args.claims, out_dir=OUT)
    kb = KB.open(root)
    warm: dict[Any, Any] = {}
    index = access.open_index(kb, warm)
    qs = queries(index, args.queries)
    search(kb, SearchRequest(query=qs[0], log=False), warm=warm)
    search(kb, SearchRequest(query=qs[0], log=False), warm=warm)
    stops = walk(kb, warm, qs[1])
    p50s = [
        round(percentile(warm_search_ms(kb, warm, qs, "hybrid"), 50), 2)
        for _ in range(args.rounds)
    ]
    out = {
        "claims": args.claims,
        "queries": len(qs),
        "walk": summarise(stops),
        "walk_all_vouch": summarise(walk(kb, warm, qs[1], prefix="vouch."))["stops"],
        "path": stops,
        "warm_hybrid_p50_ms_rounds": p50s,
        "warm_hybrid_p50_ms": statistics.median(p50s),
    }
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
