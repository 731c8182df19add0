"""Cold `vouch status` and `vouch list claims` at 1k / 10k / 100k claims.

    python bench/bench_status.py [--sizes 1000,10000,100000] [--runs 15] [--no-record]

Each run is a fresh `vouch` process in the generated repository (bench/generate.py), as
a user or a git hook would run it. Baselines: `python -c pass` (interpreter start) and
`vouch --version` (interpreter + the CLI's imports, no knowledge base). Target (issue 2):
`vouch status` under 300 ms cold at 10k claims. Results are appended to RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

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

TARGET_MS = 300.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--no-record", action="store_true", help="do not append to RESULTS.md")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s]
    vouch = vouch_exe()

    rows: list[list[object]] = []
    results: dict[str, dict[str, float]] = {}

    def measure(label: str, size: str, cmd: list[str], **kw: object) -> dict[str, float]:
        walls, cpus = time_cold_cpu(cmd, args.runs, **kw)  # type: ignore[arg-type]
        stats, cpu = summary(walls), summary(cpus)
        results[f"{label} @ {size}"] = stats
        rows.append([label, size, stats["p50_ms"], stats["p95_ms"], stats["min_ms"], cpu["p50_ms"]])
        print(
            f"{label:<26} {size:>22}  p50 {stats['p50_ms']:7.1f} ms  "
            f"p95 {stats['p95_ms']:7.1f} ms  cpu p50 {cpu['p50_ms']:7.1f} ms",
            file=sys.stderr,
        )
        return stats

    load_before = load_average()
    measure("python -c pass", "-", [sys.executable, "-c", "pass"])
    measure("vouch --version", "-", [vouch, "--version"])
    for n in sizes:
        root = ensure(n)
        status = json.loads(
            subprocess.run(
                [vouch, "status", "--json"], cwd=root, capture_output=True, text=True, check=True
            ).stdout
        )
        if status["counts"]["claims"] != n:
            raise SystemExit(
                f"status says {status['counts']['claims']} claims at {root}, expected {n}"
            )
        # other benchmarks may have built a search index in the cached knowledge base;
        # status then also reads it, so say which state was measured
        label = f"{n // 1000}k" if n % 1000 == 0 else str(n)
        label += f" (index {status.get('index_state', 'n/a')})"
        measure("vouch status --json", label, [vouch, "status", "--json"], cwd=root)
        measure("vouch list claims --json", label, [vouch, "list", "claims", "--json"], cwd=root)

    at_10k = next(
        (v for k, v in results.items() if k.startswith("vouch status --json @ 10k")), None
    )
    verdict = ""
    if at_10k:
        ok = at_10k["p50_ms"] < TARGET_MS
        verdict = (
            f"Target `vouch status` < {TARGET_MS:.0f} ms cold at 10k: "
            f"{'met' if ok else 'MISSED'} (p50 {at_10k['p50_ms']} ms)."
        )
    print(verdict, file=sys.stderr)
    if not args.no_record:
        body = "\n\n".join(
            [
                conditions(load_before),
                f"Command: `python bench/bench_status.py --sizes {args.sizes} --runs {args.runs}` "
                f"({args.runs} timed cold runs each after one warm-up; `list claims` is its "
                "default first page of 50).",
                table(
                    [
                        "command",
                        "claims",
                        "wall p50 ms",
                        "wall p95 ms",
                        "wall min ms",
                        "CPU p50 ms",
                    ],
                    rows,
                ),
                verdict,
            ]
        )
        append_results("vouch status / list claims, cold (issue 2 item 10)", body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
