"""How long bench/generate.py takes at 1k / 10k / 100k claims (budget: 100k < 2 min).

    python bench/bench_generate.py [--sizes 1000,10000,100000] [--no-record]

Each size is generated once into a temporary directory (the cached knowledge bases
under bench/out/ are left alone) as a subprocess, so wall and CPU time are the
generator's own; phase timings come from the marker the generator leaves.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from common import append_results, conditions, load_average, table, time_cold_cpu
from generate import counts_for, marker

HERE = Path(__file__).resolve().parent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--no-record", action="store_true")
    args = parser.parse_args(argv)
    rows = []
    load_before = load_average()
    for n in [int(s) for s in args.sizes.split(",") if s]:
        tmp = Path(tempfile.mkdtemp(prefix=f"vouch-gen-{n}-"))
        try:
            out = tmp / "kb"
            walls, cpus = time_cold_cpu(
                [sys.executable, str(HERE / "generate.py"), "--claims", str(n), "--out", str(out)],
                1,
                warmup=0,
            )
            info = marker(out) or {}
            phases = ", ".join(f"{k} {v:.1f}" for k, v in (info.get("timings") or {}).items())
            files = sum(1 for p in (out / ".vouch").rglob("*") if p.is_file())
            rows.append(
                [n, sum(counts_for(n).values()), files, f"{walls[0]:.1f}", f"{cpus[0]:.1f}", phases]
            )
            print(
                f"{n:>7} claims: {walls[0]:6.1f} s wall, {cpus[0]:6.1f} s CPU ({phases})",
                file=sys.stderr,
            )
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    if not args.no_record:
        append_results(
            "Benchmark KB generator (issue 2 item 10)",
            "\n\n".join(
                [
                    conditions(load_before),
                    f"Command: `python bench/bench_generate.py --sizes {args.sizes}` "
                    "(one run each of "
                    "`python bench/generate.py --claims N --out <tmp>`; CPU = user + system of the "
                    "generator and its git processes).",
                    table(["claims", "objects", "files", "wall s", "CPU s", "phases (s)"], rows),
                    "Budget: 100k claims in under 2 minutes.",
                ]
            ),
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
