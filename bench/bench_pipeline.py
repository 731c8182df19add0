#!/usr/bin/env python3
"""The search pipeline's walk and its warm latency (issue 35 item 4).

    python bench/bench_pipeline.py [--claims 10000] [--queries 200] [--rounds 3]
        [--against OTHER_CHECKOUT] [--tree CHECKOUT]

On a generated knowledge base (bench/generate.py, seed 0; a private copy under
bench/out/pipeline):
- the walk: one default hybrid `engine.search` in a warm process, followed with
  `sys.setprofile`; each time the innermost `vouch.search.*` frame on the stack changes
  module is a stop (a generator, comprehension or lambda counts as the function that
  made it). Reported: stops, distinct modules, distinct transitions (module pairs),
  returns (a stop in a module the walk had already left), and the calls between
  modules (`called_from`: each module with the modules that called into it;
  `reached_from_several`: those called from more than one — a reader meets them in
  more than one place); the modules each stage reaches (`by_stage`) and those reached
  in stages that are not consecutive (`left_and_back`: a reader leaves them and comes
  back);
- warm in-process latency: `bench_search.warm_search_ms` over --queries hybrid queries
  (bench_search.queries, seed 0), --rounds times; p50 of each round and their median;
- with `--against OTHER_CHECKOUT` (the root of another checkout of vouch, e.g.
  `git archive c730d92 | tar -x -C /tmp/base`): this checkout and that one, each in a
  warm worker process of its own over the same index, asked query by query in turn
  (old, new, new, old, ...) so a busy machine slows both alike: p50 of each, and whether
  every response is the same (two pages with the trace, timings aside): each query in
  hybrid, fts and vector mode, the first OPTIONED and three meaningless ones under each
  of OPTIONS, and the BAD requests (the same error code and message);
- `--tree CHECKOUT` runs all of this with `vouch` imported from CHECKOUT (the walk of
  another version, with this file's measures).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
# the checkout `vouch` is imported from: `--tree`, else this file's own
sys.path.insert(
    0,
    str(
        Path(sys.argv[sys.argv.index("--tree") + 1]).resolve()
        if "--tree" in sys.argv[:-1]
        else Path(__file__).resolve().parents[1]
    ),
)

from common import percentile
from generate import ensure

import vouch
from vouch.search import access
from vouch.search.engine import SearchRequest, search
from vouch.store.kb import KB

OUT = Path(__file__).resolve().parent / "out" / "pipeline"
TREE = Path(vouch.__file__).resolve().parents[1]


ENGINE = "vouch.search.engine"


def walk(
    kb: KB, warm: dict[Any, Any], query: str, prefix: str = "vouch.search"
) -> tuple[list[tuple[str, str]], set[tuple[str, str]]]:
    """The modules (under `prefix`) one search passes through, a stop each time the
    innermost such frame's module changes; each with the stage it was reached in (the
    outermost `vouch.search.engine` function below `search` and `_search`). And the calls between
    modules: (caller, callee) for each call that made another module innermost."""
    stack: list[tuple[str | None, str | None]] = []
    stops: list[tuple[str, str]] = []
    calls: set[tuple[str, str]] = set()

    def innermost(column: int) -> str | None:
        return next((f[column] for f in reversed(stack) if f[column] is not None), None)

    def stage() -> str:
        """The stage running: the outermost engine function under `search`/`_search`."""
        names = [f[1] for f in stack if f[1] is not None]
        return next((n for n in names if n not in ("search", "_search")), "search")

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            caller = innermost(0)
            name = frame.f_globals.get("__name__", "")
            # a generator, comprehension or lambda runs for the function that made it
            made = frame.f_code.co_name.startswith("<")
            stack.append(
                (
                    name if name.startswith(prefix) and not made else None,
                    frame.f_code.co_name if name == ENGINE and not made else None,
                )
            )
            callee = innermost(0)
            if caller is not None and callee is not None and caller != callee:
                calls.add((caller, callee))
        elif event == "return" and stack:
            stack.pop()
        else:
            return
        now = innermost(0)
        if now is not None and (not stops or stops[-1][0] != now):
            stops.append((now, stage()))

    request = SearchRequest(query=query, log=False)
    sys.setprofile(profile)
    try:
        search(kb, request, warm=warm)
    finally:
        sys.setprofile(None)
    return stops, calls


def by_function(stops: list[tuple[str, str]]) -> dict[str, list[str]]:
    """Each stage (in the order first entered) with the other modules it reached, in the
    order first reached."""
    out: dict[str, list[str]] = {}
    for module, owner in stops:
        seen = out.setdefault(owner, [])
        short = module.rsplit(".", 1)[-1]
        if module != ENGINE and short not in seen:
            seen.append(short)
    return out


def left_and_back(stages: dict[str, list[str]]) -> dict[str, list[str]]:
    """The modules a reader leaves and comes back to: each reached in stages that are not
    one run of consecutive stages, with those stages."""
    order = list(stages)
    where: dict[str, list[str]] = {}
    for name in order:
        for module in stages[name]:
            where.setdefault(module, []).append(name)
    return {
        module: names
        for module, names in where.items()
        if order.index(names[-1]) - order.index(names[0]) + 1 > len(names)
    }


def summarise(walked: list[tuple[str, str]], calls: set[tuple[str, str]]) -> dict[str, Any]:
    stops = [module for module, _ in walked]
    left: set[str] = set()
    returns = 0
    for before, now in itertools.pairwise(stops):
        left.add(before)
        returns += now in left
    visits: dict[str, int] = {}
    for m in stops:
        visits[m] = visits.get(m, 0) + 1
    short = {m: m.rsplit(".", 1)[-1] for m in visits}
    callers: dict[str, list[str]] = {}
    for caller, callee in sorted(calls):
        callers.setdefault(short.get(callee, callee), []).append(short.get(caller, caller))
    return {
        "stops": len(stops),
        "transitions": len(set(itertools.pairwise(stops))),
        "modules": len(visits),
        "returns": returns,
        "visits": dict(sorted(visits.items(), key=lambda kv: -kv[1])),
        "called_from": callers,
        "reached_from_several": {m: c for m, c in callers.items() if len(c) > 1},
    }


# Option sets the side-by-side compares besides the three modes (the first OPTIONED
# queries each), and requests that must fail alike.
OPTIONS: list[dict[str, Any]] = [
    {"weights": {"fts": 2.0, "vector": 0.5}},
    {"weights": {}},
    {"rrf_k": 10},
    {"threshold": 0.5},
    {"max_tokens": 600},
    {"top": 3, "kinds": ["claim", "page"]},
    {"statuses": ["superseded", "working"]},
    {"since": "2023-05", "until": "2024-01-01T10:30"},
    {"include_pending": True},
    {"mode": "vector", "threshold": 0.2},
    {"mode": "fts", "top": 25, "max_tokens": 2000},
]
OPTIONED = 60
MEANINGLESS = ["zzzqqqxxx", "qwzx vbnm plorf", "the of and"]  # the floor's no-match path
BAD: list[dict[str, Any]] = [
    {"query": "   "},
    {"query": "deploy", "mode": "semantic"},
    {"query": "deploy", "top": 0},
    {"query": "deploy", "rrf_k": -1},
    {"query": "deploy", "max_tokens": 0},
    {"query": "deploy", "kinds": ["nothing"]},
    {"query": "deploy", "statuses": ["lost"]},
    {"query": "deploy", "since": "May 2023"},
    {"query": "deploy", "cursor": "not-a-cursor"},
    {"query": "deploy", "max_tokens": 1},
]


def answers(kb: KB, warm: dict[Any, Any], options: dict[str, Any]) -> list[str]:
    """A query's first two pages with their traces, timings aside, as JSON (or the
    error it raised: code and message)."""
    from vouch.errors import VouchError

    out = []
    cursor = None
    asked = {k: tuple(v) if isinstance(v, list) else v for k, v in options.items()}
    for _ in range(2):
        request = SearchRequest(**{"cursor": cursor, **asked}, trace=True, log=False)
        try:
            response = search(kb, request, warm=warm)
        except VouchError as exc:
            out.append(json.dumps({"error": exc.code, "message": exc.message}))
            break
        response["trace"].pop("timing")
        out.append(json.dumps(response, sort_keys=True))
        cursor = response["next_cursor"]
        if cursor is None:
            break
    return out


def worker(root: Path) -> None:
    """Answer the driver's requests, one JSON line each, in this warm process:
    {"time": query} → milliseconds of a default hybrid search (log off),
    {"answers": {request's fields}} → `answers`."""
    kb = KB.open(root)
    warm: dict[Any, Any] = {}
    for line in sys.stdin:
        asked = json.loads(line)
        if "time" in asked:
            request = SearchRequest(query=asked["time"], log=False)
            t0 = time.perf_counter()
            search(kb, request, warm=warm)
            reply: Any = (time.perf_counter() - t0) * 1000
        else:
            reply = answers(kb, warm, asked["answers"])
        print(json.dumps(reply), flush=True)


class Worker:
    """A `--worker` process importing vouch from `tree`."""

    def __init__(self, tree: Path, root: Path):
        env = {**os.environ, "PYTHONPATH": str(tree)}
        command = [sys.executable, __file__, "--tree", str(tree), "--worker", str(root)]
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
        )

    def ask(self, request: dict[str, Any]) -> Any:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        return json.loads(self.process.stdout.readline())

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait()


def side_by_side(root: Path, qs: list[str], against: Path, rounds: int) -> dict[str, Any]:
    """Warm hybrid p50 of the checkout `against` and of this one, each in a worker
    process, the two alternating query by query; and whether they answer alike."""
    workers = {"old": Worker(against, root), "new": Worker(TREE, root)}
    try:
        for w in workers.values():  # warm-up: the index opened, the first search paid
            w.ask({"time": qs[0]})
            w.ask({"time": qs[0]})
        times: dict[str, list[float]] = {"old": [], "new": []}
        for n in range(rounds):
            for i, q in enumerate(qs):
                for name in ("old", "new") if (i + n) % 2 == 0 else ("new", "old"):
                    times[name].append(workers[name].ask({"time": q}))
        out: dict[str, Any] = {
            f"{name}_p50_ms": round(percentile(t, 50), 3) for name, t in times.items()
        }
        asked = [{"query": q, "mode": mode} for q in qs for mode in ("hybrid", "fts", "vector")]
        asked += [{"query": q, **o} for q in qs[:OPTIONED] + MEANINGLESS for o in OPTIONS]
        asked += [{"query": q, "mode": mode} for q in MEANINGLESS for mode in ("hybrid", "vector")]
        asked += BAD
        different = [
            a
            for a in asked
            if workers["old"].ask({"answers": a}) != workers["new"].ask({"answers": a})
        ]
        out["compared"] = len(asked)
        out["different"] = different
        out["same_responses"] = not different
    finally:
        for w in workers.values():
            w.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--claims", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--against", type=Path, help="another checkout to time beside")
    parser.add_argument("--tree", type=Path, help="the checkout to import vouch from")
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker)
        return
    # imported here: it puts its own checkout first on sys.path (vouch is loaded by now)
    from bench_search import queries, warm_search_ms

    root = ensure(args.claims, out_dir=OUT)
    kb = KB.open(root)
    warm: dict[Any, Any] = {}
    index = access.open_index(kb, warm)
    qs = queries(index, args.queries)
    search(kb, SearchRequest(query=qs[0], log=False), warm=warm)
    search(kb, SearchRequest(query=qs[0], log=False), warm=warm)
    walked, calls = walk(kb, warm, qs[1])
    p50s = [
        round(percentile(warm_search_ms(kb, warm, qs, "hybrid"), 50), 2) for _ in range(args.rounds)
    ]
    out = {
        "claims": args.claims,
        "queries": len(qs),
        "tree": str(TREE),
        "walk": summarise(walked, calls),
        "by_stage": by_function(walked),
        "left_and_back": left_and_back(by_function(walked)),
        "walk_all_vouch": summarise(*walk(kb, warm, qs[1], prefix="vouch."))["stops"],
        "path": [module for module, _ in walked],
        "warm_hybrid_p50_ms_rounds": p50s,
        "warm_hybrid_p50_ms": statistics.median(p50s),
    }
    if args.against:
        out["side_by_side"] = side_by_side(root, qs, args.against.resolve(), args.rounds)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
