"""Cold `vouch --version`, `status` and `search` of two vouch source trees, on the same run.

    python bench/bench_cold_compare.py --before DIR --after DIR [--claims 10000] [--runs 15]

DIR is a checkout of vouch (e.g. `git worktree add /tmp/before <commit>`). Each run is a
fresh `python -m vouch` process with PYTHONPATH pointing at one tree, in its own copy of
the generated knowledge base (bench/generate.py), so each version builds and reads its
own index. Runs alternate between the two trees, so load on the machine hits both alike.
Each command is also shown over `--version` of the same tree (issue 14.6 sets its targets
that way: the floor every command pays), in wall time and in the Python process's own CPU
time (git's processes excluded). Results are appended to RESULTS.md.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import append_results, bench_env, conditions, load_average, summary, table
from generate import ensure

COMMANDS = {
    "--version": ["--version"],
    "status": ["status", "--json"],
    "search --fts-only": ["search", "deploy rollback billing", "--json", "--fts-only"],
    "search": ["search", "deploy rollback billing", "--json"],
}


# `python -m vouch ARGS`, then the process's own CPU time on stderr's last line: git's
# processes (the freshness check) run on the other core and are not counted, so the CPU
# figure is what vouch's Python costs — steadier than wall time on a shared machine
_VOUCH = (
    "import os, sys, time\n"
    "from vouch.launch import run\n"
    "sys.argv[0] = 'vouch'\n"
    "try:\n"
    "    code = run()\n"
    "finally:\n"
    "    sys.stderr.write(f'\\n{time.process_time()}\\n')\n"
    "raise SystemExit(code)\n"
)


def _run(tree: Path, kb: Path, args: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of one cold `vouch ARGS` of `tree` in `kb`."""
    env = bench_env({"PYTHONPATH": str(tree)})
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _VOUCH, *args],
        cwd=kb,
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    return time.perf_counter() - start, float(done.stderr.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, required=True)
    parser.add_argument("--after", type=Path, required=True)
    parser.add_argument("--claims", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--no-record", action="store_true")
    args = parser.parse_args(argv)
    load_before = load_average()
    source = ensure(args.claims)
    trees = {"before": args.before.resolve(), "after": args.after.resolve()}
    with tempfile.TemporaryDirectory() as scratch:
        kbs = {}
        for label in trees:
            kbs[label] = Path(scratch) / label
            shutil.copytree(source, kbs[label], symlinks=True)
            shutil.rmtree(kbs[label] / ".vouch" / "index", ignore_errors=True)
            # a copy has new inodes and mtimes: refresh git's stat cache once, or every
            # freshness check would re-hash every file (`git diff-index` never writes it)
            subprocess.run(
                ["git", "update-index", "-q", "--refresh"],
                cwd=kbs[label],
                check=False,
                stdout=subprocess.DEVNULL,
            )
            for args_ in COMMANDS.values():  # build the index, write .pyc files
                _run(trees[label], kbs[label], args_)
        samples: dict[tuple[str, str], list[float]] = {}
        cpu: dict[tuple[str, str], list[float]] = {}
        for _ in range(args.runs):
            for name, cmd in COMMANDS.items():
                for label in trees:
                    wall, used = _run(trees[label], kbs[label], cmd)
                    samples.setdefault((name, label), []).append(wall)
                    cpu.setdefault((name, label), []).append(used)
    rows = []
    floor = {label: summary(samples[("--version", label)])["p50_ms"] for label in trees}
    cpu_floor = {label: summary(cpu[("--version", label)])["p50_ms"] for label in trees}
    for name in COMMANDS:
        for label in trees:
            stats, used = summary(samples[(name, label)]), summary(cpu[(name, label)])
            over = cpu_over = ""
            if name != "--version":
                over = f"+{stats['p50_ms'] - floor[label]:.1f}"
                cpu_over = f"+{used['p50_ms'] - cpu_floor[label]:.1f}"
            rows.append(
                [
                    f"vouch {name}",
                    label,
                    stats["p50_ms"],
                    over,
                    stats["p95_ms"],
                    used["p50_ms"],
                    cpu_over,
                ]
            )
            print(
                f"vouch {name:<18} {label:<7} p50 {stats['p50_ms']:7.1f} ms {over:>8}  "
                f"p95 {stats['p95_ms']:7.1f} ms  CPU p50 {used['p50_ms']:7.1f} ms {cpu_over:>8}"
            )
    if not args.no_record:
        append_results(
            f"Cold status and search before/after, {args.claims} claims",
            f"`python bench/bench_cold_compare.py --before {args.before} --after {args.after} "
            f"--claims {args.claims} --runs {args.runs}`\n\n{conditions(load_before)}\n\n"
            + table(
                [
                    "command",
                    "tree",
                    "wall p50 ms",
                    "over --version",
                    "wall p95 ms",
                    "CPU p50 ms",
                    "over --version",
                ],
                rows,
            ),
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
