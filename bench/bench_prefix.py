"""What taking a source id by its prefix costs a cold command (issue 18, point 2).

    python bench/bench_prefix.py [--claims 100000] [--runs 25]

Alternates cold `vouch show <full source id> --json` with `vouch show <12-digit prefix>
--json` (what human output prints) on the generated knowledge base, so load on the
machine hits both alike; the difference of the medians is what prefix resolution adds
(listing one shard directory of `sources/`; in-process it is well under 0.1 ms). The
order alternates each round. Appended to RESULTS.md.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

from common import append_results, bench_env, conditions, load_average, summary, table
from generate import ensure


def _run(kb: Path, env: dict[str, str], object_id: str) -> float:
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "vouch", "show", object_id, "--json"],
        cwd=kb,
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return time.perf_counter() - start


def _in_process(root: Path, sid: str) -> float:
    """The resolution alone, first call in a fresh process (ms): what a cold command pays."""
    code = (
        "import time; from vouch.store.kb import KB; from vouch.store import prefixes; "
        f"kb = KB.open(); t = time.perf_counter(); prefixes.resolve(kb, {sid[:12]!r}); "
        "print((time.perf_counter() - t) * 1000)"
    )
    env = bench_env({"PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=root, env=env, check=True, capture_output=True
    )
    return float(out.stdout)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--claims", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=25)
    parser.add_argument("--no-record", action="store_true")
    args = parser.parse_args(argv)
    load_before = load_average()
    root = ensure(args.claims)
    shard = root / ".vouch" / "sources"
    first = sorted(os.listdir(shard))[0]
    sid = sorted(os.listdir(shard / first))[0]
    env = bench_env({"PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    forms = {"full id": sid, "12-digit prefix": sid[:12]}
    for value in forms.values():  # warm-up: page cache, .pyc files
        _run(root, env, value)
    samples: dict[str, list[float]] = {name: [] for name in forms}
    names = list(forms)
    for n in range(args.runs):
        # ABBA: neither form always runs second (a process right after another is slower)
        for name in names if n % 2 == 0 else names[::-1]:
            samples[name].append(_run(root, env, forms[name]))
    rows = []
    for name, walls in samples.items():
        stats = summary(walls)
        rows.append([f"vouch show <{name}>", stats["p50_ms"], stats["p95_ms"], stats["min_ms"]])
        print(f"{name:<16} p50 {stats['p50_ms']:7.1f} ms  min {stats['min_ms']:7.1f} ms")
    added = summary(samples["12-digit prefix"])["p50_ms"] - summary(samples["full id"])["p50_ms"]
    print(f"prefix resolution adds {added:+.1f} ms (p50)")
    inner = _in_process(root, sid)
    print(f"in-process: first resolve {inner:.3f} ms")
    if not args.no_record:
        append_results(
            f"Source-id prefixes on a cold command, {args.claims} claims (issue 18)",
            f"`python bench/bench_prefix.py --claims {args.claims} --runs {args.runs}`\n\n"
            f"{conditions(load_before)}\n\n"
            + table(["command", "p50 ms", "p95 ms", "min ms"], rows)
            + f"\n\nPrefix resolution adds {added:+.1f} ms at p50 (target: at most 2 ms); "
            f"in a fresh process the first `resolve` takes {inner:.3f} ms.",
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
