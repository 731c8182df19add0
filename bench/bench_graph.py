"""`vouch graph` on a 10k-claim knowledge base (issue 37 item 1).

    python bench/bench_graph.py [--claims 10000] [--rounds 10] [--no-record]

Measured on the generated knowledge base (read-only, so the shared one is used as is):
- `kb.graph` in-process on a warm CallContext (what a server pays): the whole branch
  (capped at 200 nodes: every object is read to find the best-connected clusters), and
  around one object to depth 2 — the most-named entity (a hub: its claims, their
  sources, pages and other entities) and one claim.
- `vouch graph` as a cold process, mermaid on stdout: the whole branch and around the
  same entity.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from common import (
    append_results,
    conditions,
    load_average,
    summary,
    table,
    time_cold_cpu,
    vouch_exe,
)
from generate import ensure

from vouch.kinds import claim
from vouch.methods import registry as ops
from vouch.methods.context import CallContext
from vouch.store.kb import KB


def _timed(fn: Callable[[], Any], rounds: int) -> tuple[list[float], list[float], Any]:
    """(wall seconds, CPU seconds of this process, the last result) of `rounds` calls."""
    fn()  # warm: the page cache, the long-lived cat-file
    walls, cpus, result = [], [], None
    for _ in range(rounds):
        start, cpu = time.perf_counter(), time.process_time()
        result = fn()
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
    return walls, cpus, result


def _hub(kb: KB) -> str:
    """The entity the most claims name."""
    named: Counter[str] = Counter()
    for obj in kb.iter_objects(claim.KIND):
        named.update(obj.get("entities") or [])
    return named.most_common(1)[0][0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claims", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--no-record", action="store_true")
    args = parser.parse_args()
    load_before = load_average()
    root = ensure(args.claims)
    kb = KB.open(root)
    hub = _hub(kb)
    one_claim = kb.ids(claim.KIND)[len(kb.ids(claim.KIND)) // 2]
    ctx = CallContext(kb_path=str(root))

    def graph(params: dict[str, Any]) -> Callable[[], Any]:
        return lambda: ops.invoke(ctx, "kb.graph", params)

    rows = []
    for label, params in (
        ("whole branch (max 200 nodes)", {}),
        ("around the busiest entity, depth 2", {"id": hub}),
        ("around one claim, depth 2", {"id": one_claim}),
    ):
        walls, cpus, result = _timed(graph(params), args.rounds)
        s, c = summary(walls), summary(cpus)
        left = sum(result["omitted"]["nodes"].values())
        rows.append(
            [
                f"`kb.graph` {label}",
                "in-process",
                s["p50_ms"],
                s["p95_ms"],
                c["p50_ms"],
                f"{len(result['nodes'])} nodes, {len(result['edges'])} edges, {left} left out",
            ]
        )
        print(rows[-1], file=sys.stderr)
    exe = vouch_exe()
    for label, argv in (
        ("whole branch", [exe, "graph", "--format", "mermaid"]),
        ("around the busiest entity", [exe, "graph", hub, "--format", "mermaid"]),
    ):
        walls, cpus = time_cold_cpu(argv, args.rounds, cwd=root)
        s, c = summary(walls), summary(cpus)
        rows.append(
            [f"`vouch graph` {label}", "cold process", s["p50_ms"], s["p95_ms"], c["p50_ms"], ""]
        )
        print(rows[-1], file=sys.stderr)
    body = "\n\n".join(
        [
            f"`python bench/bench_graph.py --claims {args.claims} --rounds {args.rounds}` — "
            + conditions(load_before),
            table(["what", "how", "p50 ms", "p95 ms", "CPU p50 ms", "drawn"], rows),
        ]
    )
    print(body)
    if not args.no_record:
        append_results(f"vouch graph at {args.claims} claims (issue 37 item 1)", body)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    raise SystemExit(main())
