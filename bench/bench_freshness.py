#!/usr/bin/env python3
"""The index's freshness check of two vouch source trees, on the same knowledge bases.

    python bench/bench_freshness.py --before DIR --after DIR [--claims 10000 100000]
        [--rounds 4] [--checks 20] [--no-record]

DIR is a checkout of vouch (e.g. `git worktree add /tmp/before <commit>`). Each round
runs, for each tree in turn, a fresh process with PYTHONPATH pointing at it that opens
the index of the generated knowledge base (bench/generate.py, as bench_search.py uses
it), checks once, then times `--checks` more checks (`Index.ensure_fresh`: what a warm
server runs every `search.freshness_seconds`, and what a cold search waits for when git
is slower than its imports). Both trees read one index, so they must share its schema.
Results (p50 and minimum of each tree's checks) are appended to RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

from common import append_results, bench_env, conditions, load_average, table
from generate import ensure

OUT = Path(__file__).resolve().parent / "out" / "search"  # bench_search.py's bases

_CHECKS = """
import json, sys, time
from pathlib import Path
from vouch.index import Index
from vouch.store.kb import KB
index = Index.open(KB.open(Path(sys.argv[1])))
index.ensure_fresh()
times = []
for _ in range(int(sys.argv[2])):
    started = time.perf_counter()
    index.ensure_fresh()
    times.append((time.perf_counter() - started) * 1000)
index.close()
print(json.dumps(times))
"""


def _checks(tree: Path, root: Path, n: int) -> list[float]:
    done = subprocess.run(
        [sys.executable, "-c", _CHECKS, str(root), str(n)],
        cwd=root,  # not the caller's directory: `-c` puts it first on sys.path
        env=bench_env({"PYTHONPATH": str(tree)}),
        check=True,
        capture_output=True,
        text=True,
    )
    return [float(t) for t in json.loads(done.stdout)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, required=True)
    parser.add_argument("--after", type=Path, required=True)
    parser.add_argument("--claims", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--checks", type=int, default=20)
    parser.add_argument("--no-record", action="store_true")
    args = parser.parse_args(argv)
    load_before = load_average()
    trees = {"before": args.before.resolve(), "after": args.after.resolve()}
    rows = []
    for claims in args.claims:
        root = ensure(claims, out_dir=OUT)
        samples: dict[str, list[float]] = {label: [] for label in trees}
        for _ in range(args.rounds):
            for label, tree in trees.items():
                samples[label] += _checks(tree, root, args.checks)
        for label in trees:
            p50, low = statistics.median(samples[label]), min(samples[label])
            rows.append([f"{claims} claims", label, f"{p50:.1f}", f"{low:.1f}"])
            print(f"{claims:>7} claims  {label:<7} p50 {p50:7.1f} ms  min {low:7.1f} ms")
    if not args.no_record:
        append_results(
            "Freshness check before/after",
            f"`python bench/bench_freshness.py --before {args.before} --after {args.after} "
            f"--claims {' '.join(map(str, args.claims))} --rounds {args.rounds} "
            f"--checks {args.checks}`\n\n{conditions(load_before)}\n\n"
            + table(["knowledge base", "tree", "check p50 ms", "min ms"], rows),
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
