#!/usr/bin/env python3
"""The search pipeline's walk and its warm latency (issue 35 item 4).

    python bench/bench_pipeline.py [--claims 10000] [--queries 200] [--rounds 3]

On a generated knowledge base (bench/generate.py, seed 0; a private copy under
bench/out/pipeline):
- the walk: one default hybrid `engine.search` in a warm process, followed with
  `sys.setprofile`; each time the innermost `vouch.search.*` frame on the stack changes
  module is a stop (a generator, comprehension or lambda counts as the function that
  made it). Reported: stops, distinct modules, distinct transitions (module pairs), and
  returns (a stop in a module the walk had already left);
- warm in-process latency: `bench_search.warm_search_ms` over --queries hybrid queries
  (bench_search.queries, seed 0), --rounds times; p50 of each round and their median;
- with `--against OLD_ENGINE.py` (another version of vouch/search/engine.py, e.g. from
  `git show main:vouch/search/engine.py`): both engines over the same index, query by
  query in turn (old, new, new, old, ...), so a busy machine slows both alike.
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import json
import statistics
import sys
import time
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


ENGINE = "vouch.search.engine"


def walk(
    kb: KB, warm: dict[Any, Any], query: str, prefix: str = "vouch.search"
) -> list[tuple[str, str]]:
    """The modules (under `prefix`) one search passes through, a stop each time the
    innermost such frame's module changes; each with the engine function it was
    reached from (the innermost `vouch.search.engine` frame)."""
    stack: list[tuple[str | None, str | None]] = []
    stops: list[tuple[str, str]] = []

    def innermost(column: int) -> str | None:
        return next((f[column] for f in reversed(stack) if f[column] is not None), None)

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            name = frame.f_globals.get("__name__", "")
            # a generator, comprehension or lambda runs for the function that made it
            made = frame.f_code.co_name.startswith("<")
            stack.append(
                (
                    name if name.startswith(prefix) and not made else None,
                    frame.f_code.co_name if name == ENGINE and not made else None,
                )
            )
        elif event == "return" and stack:
            stack.pop()
        else:
            return
        now = innermost(0)
        if now is not None and (not stops or stops[-1][0] != now):
            stops.append((now, innermost(1) or ""))

    request = SearchRequest(query=query, log=False)
    sys.setprofile(profile)
    try:
        search(kb, request, warm=warm)
    finally:
        sys.setprofile(None)
    return stops


def by_function(stops: list[tuple[str, str]]) -> dict[str, list[str]]:
    """Each engine function (in the order first entered) with the other modules it
    reached, in the order first reached."""
    out: dict[str, list[str]] = {}
    for module, owner in stops:
        seen = out.setdefault(owner, [])
        short = module.rsplit(".", 1)[-1]
        if module != ENGINE and short not in seen:
            seen.append(short)
    return out


def summarise(walked: list[tuple[str, str]]) -> dict[str, Any]:
    stops = [module for module, _ in walked]
    left: set[str] = set()
    returns = 0
    for before, now in itertools.pairwise(stops):
        left.add(before)
        returns += now in left
    visits: dict[str, int] = {}
    for m in stops:
        visits[m] = visits.get(m, 0) + 1
    return {
        "stops": len(stops),
        "transitions": len(set(itertools.pairwise(stops))),
        "modules": len(visits),
        "returns": returns,
        "visits": dict(sorted(visits.items(), key=lambda kv: -kv[1])),
    }


def side_by_side(
    kb: KB, warm: dict[Any, Any], qs: list[str], against: Path, rounds: int
) -> dict[str, Any]:
    """Warm hybrid p50 of `against` (an engine module's file) and of this checkout's
    engine, the two alternating query by query."""
    spec = importlib.util.spec_from_file_location("vouch.search.engine_against", against)
    assert spec is not None and spec.loader is not None
    old = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = old
    spec.loader.exec_module(old)
    engines = {"old": old, "new": sys.modules["vouch.search.engine"]}
    times: dict[str, list[float]] = {"old": [], "new": []}
    for n in range(rounds):
        for i, q in enumerate(qs):
            pair = ("old", "new") if (i + n) % 2 == 0 else ("new", "old")
            for name in pair:
                engine = engines[name]
                request = engine.SearchRequest(query=q, log=False)
                t0 = time.perf_counter()
                engine.search(kb, request, warm=warm)
                times[name].append((time.perf_counter() - t0) * 1000)
    out: dict[str, Any] = {
        f"{name}_p50_ms": round(percentile(t, 50), 3) for name, t in times.items()
    }
    out["same_responses"] = all(
        answers(old, kb, warm, q, mode) == answers(engines["new"], kb, warm, q, mode)
        for q in qs
        for mode in ("hybrid", "fts", "vector")
    )
    return out


def answers(engine: Any, kb: KB, warm: dict[Any, Any], query: str, mode: str) -> list[str]:
    """A query's first two pages with their traces, timings aside, as JSON."""
    out = []
    cursor = None
    for _ in range(2):
        request = engine.SearchRequest(query=query, mode=mode, trace=True, cursor=cursor, log=False)
        response = engine.search(kb, request, warm=warm)
        response["trace"].pop("timing")
        out.append(json.dumps(response, sort_keys=True))
        cursor = response["next_cursor"]
        if cursor is None:
            break
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--claims", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--against", type=Path, help="another engine.py to time beside")
    args = parser.parse_args()
    root = ensure(args.claims, out_dir=OUT)
    kb = KB.open(root)
    warm: dict[Any, Any] = {}
    index = access.open_index(kb, warm)
    qs = queries(index, args.queries)
    search(kb, SearchRequest(query=qs[0], log=False), warm=warm)
    search(kb, SearchRequest(query=qs[0], log=False), warm=warm)
    walked = walk(kb, warm, qs[1])
    p50s = [
        round(percentile(warm_search_ms(kb, warm, qs, "hybrid"), 50), 2) for _ in range(args.rounds)
    ]
    out = {
        "claims": args.claims,
        "queries": len(qs),
        "walk": summarise(walked),
        "by_engine_function": by_function(walked),
        "walk_all_vouch": summarise(walk(kb, warm, qs[1], prefix="vouch."))["stops"],
        "path": [module for module, _ in walked],
        "warm_hybrid_p50_ms_rounds": p50s,
        "warm_hybrid_p50_ms": statistics.median(p50s),
    }
    if args.against:
        out["side_by_side"] = side_by_side(kb, warm, qs, args.against, args.rounds)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
