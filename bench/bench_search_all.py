#!/usr/bin/env python3
"""`vouch search --all` over several knowledge bases (issue 38 item 3).

    python bench/bench_search_all.py [--bases 5] [--claims 10000] [--queries 100] [--cold-runs 15]

Generates (bench/generate.py, seeds 0..bases-1) and indexes `--bases` knowledge bases of
`--claims` claims each, registers them in a scratch registry (XDG_CONFIG_HOME in a
temporary folder: the user's own is never read or written), then times
- warm: `across.search_bases(["all"], ...)` in this process, as a server answers
  `kb.search` with `kbs: ["all"]`: every base's index held in the `warm` dict, each
  base's staleness check remembered while its git signature stays and
  `search.freshness_seconds` have not passed (one untimed warm-up query); hybrid and
  fts-only, top 10, log off;
  CPU time (this process and its git children) beside the wall time, the steadier
  figure on a busy machine;
- cold: `vouch search --all QUERY` as a new process (interpreter start, imports, the
  registry, every base's index opened and its freshness checked with git, the query,
  JSON out), p50 wall and CPU time over --cold-runs runs, beside `vouch --version` and
  a cold `vouch search` of one base (a search across bases is never forwarded to a warm
  process, so cold is what a command-line `--all` costs).
Read-only for the bases once indexed: a search across bases writes nothing in them.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_search import queries
from common import load_average, percentile, summary, time_cold_cpu, vouch_exe
from generate import ensure

from vouch.search import access
from vouch.search.across import search_bases
from vouch.search.engine import SearchRequest
from vouch.store import kb_registry
from vouch.store.kb import KB

OUT = Path(__file__).resolve().parent / "out" / "search-all"


def warm_ms(qs: list[str], mode: str, warm: dict[Any, Any]) -> tuple[list[float], list[float]]:
    """(wall ms, CPU ms of this process and the git processes it waited for) per query."""
    search_bases(["all"], SearchRequest(query=qs[0], mode=mode, log=False), warm=warm)
    walls, cpus = [], []
    for q in qs:
        c0 = time.process_time() + _children()
        t0 = time.perf_counter()
        search_bases(["all"], SearchRequest(query=q, mode=mode, log=False), warm=warm)
        walls.append((time.perf_counter() - t0) * 1000)
        cpus.append((time.process_time() + _children() - c0) * 1000)
    return walls, cpus


def _children() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def bench(bases: int, claims: int, n_queries: int, cold_runs: int) -> dict[str, Any]:
    roots = [ensure(claims, seed=seed, out_dir=OUT) for seed in range(bases)]
    chunks = 0
    for root in roots:  # indexed once, as a search in each would leave it
        index = access.open_index(KB.open(root), {})
        chunks += int(index.index.counts()["chunks"])
        index.index.close()
    config = Path(tempfile.mkdtemp(prefix="vouch-bench-registry-"))
    os.environ["XDG_CONFIG_HOME"] = str(config)
    for n, root in enumerate(roots):
        kb_registry.add(root, f"kb{n}")
    first = access.open_index(KB.open(roots[0]), {})
    qs = queries(first, n_queries)
    out: dict[str, Any] = {
        "bases": bases,
        "claims_each": claims,
        "chunks": chunks,
        "queries": len(qs),
        "load_before": load_average(),
    }
    warm: dict[Any, Any] = {}
    for mode in ("hybrid", "fts"):
        times, cpus = warm_ms(qs, mode, warm)
        out[f"warm_{mode}_p50_ms"] = round(percentile(times, 50), 1)
        out[f"warm_{mode}_p95_ms"] = round(percentile(times, 95), 1)
        out[f"warm_{mode}_cpu_p50_ms"] = round(percentile(cpus, 50), 1)
    answer = search_bases(["all"], SearchRequest(query=qs[0], log=False), warm=warm)
    out["states"] = sorted({b["state"] for b in answer["bases"]})
    exe = vouch_exe()
    env = {"XDG_CONFIG_HOME": str(config)}
    commands = {
        "version": [exe, "--version"],
        "one_base_hybrid": [exe, "search", qs[0], "--kb", str(roots[0])],
        "all_hybrid": [exe, "search", "--all", qs[0]],
        "all_fts": [exe, "search", "--all", qs[0], "--fts-only"],
    }
    for label, cmd in commands.items():
        walls, cpus = time_cold_cpu(cmd, cold_runs, env=env, cwd=config)
        out[f"cold_{label}_p50_ms"] = summary(walls)["p50_ms"]
        out[f"cold_{label}_p95_ms"] = summary(walls)["p95_ms"]
        out[f"cold_{label}_cpu_p50_ms"] = summary(cpus)["p50_ms"]
    out["load_after"] = load_average()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bases", type=int, default=5)
    parser.add_argument("--claims", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--cold-runs", type=int, default=15)
    args = parser.parse_args()
    result = bench(args.bases, args.claims, args.queries, args.cold_runs)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "results.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
