"""Lint, doctor and source verification at 10k claims, cold processes.

    python bench/bench_maintenance.py [--claims 10000] [--runs 7] [--no-record]

Works on a private clone of the generated knowledge base (bench/out/maint-<n>), so the
shared one is never written to. Every run is a fresh `vouch` process, as a user, a git
hook or CI pays it. The generated knowledge base was imported in one plain commit, so
lint rightly reports each object as entering without a decision (11k errors, exit 1):
the runs measure the full check plus reporting that many issues.

- `vouch lint` (every file): with its per-file cache empty (the first run after a
  change of vouch, or a fresh clone) and warm (the usual case). Target <= 3 s.
- `vouch doctor` (lint, 1,000 sources re-hashed, index status with a built index,
  audit chain, config). Target <= 3 s.
- `vouch lint --staged`, the pre-commit hook, on a commit that stages no knowledge (most
  commits of a code repository), on one that touches 10 claim files (edited by hand),
  and on one that touches 10 (8 edits, 2 deletions: what referred to the deleted claims
  is searched with `git grep`). Target <= 500 ms.
- `vouch lint --since BASE` over 10 approved proposals (CI on a pull request).
- `vouch source verify` (1,000 sources).
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from common import (
    append_results,
    bench_env,
    conditions,
    load_average,
    run_vouch,
    summary,
    table,
    vouch_exe,
)
from generate import git, private_clone

LINT_TARGET_MS = 3000.0
HOOK_TARGET_MS = 500.0


def time_runs(
    cmd: Sequence[str],
    runs: int,
    cwd: Path,
    *,
    ok: tuple[int, ...] = (0, 1),
    before: Callable[[], None] | None = None,
) -> tuple[list[float], list[float]]:
    """(wall, CPU) seconds of `runs` fresh processes after one untimed warm-up; a check
    that reports findings exits 1, which is a result here, not a failure."""
    env = bench_env()
    walls: list[float] = []
    cpus: list[float] = []
    for n in range(runs + 1):
        if before is not None:
            before()
        used = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        proc = subprocess.run(
            list(cmd),
            cwd=cwd,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            check=False,
        )
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if proc.returncode not in ok:
            raise RuntimeError(
                f"{' '.join(cmd)} exited {proc.returncode}: "
                f"{proc.stderr.decode(errors='replace')[-800:]}"
            )
        if n:
            walls.append(wall)
            cpus.append(after.ru_utime + after.ru_stime - used.ru_utime - used.ru_stime)
    return walls, cpus


def stage_hand_edits(root: Path, edits: int, deletions: int) -> None:
    """Edit `edits` claim files by hand (a tag added: the id still matches the content)
    and delete `deletions` more, all staged."""
    git(root, "reset", "-q", "--hard")
    claims = git(root, "ls-files", ".vouch/claims").split()
    for rel in claims[:edits]:
        path = root / rel
        text = path.read_text()
        path.write_text(
            text.replace("tags:\n", "tags:\n  - hand-edited\n", 1)
            if "tags:\n" in text
            else text.replace("tags: []", "tags: [hand]")
        )
    for rel in claims[edits : edits + deletions]:
        (root / rel).unlink()
    git(root, "add", "-A", ".vouch")


def approve_ten(root: Path, vouch: str) -> str:
    """Ten claims proposed by an agent and approved by a person; the commit before."""
    base = git(root, "rev-parse", "HEAD").strip()
    source = git(root, "ls-files", ".vouch/sources").split()[0].split("/")[3]
    env = bench_env()
    for i in range(10):
        pid = subprocess.run(
            [
                vouch,
                "propose-claim",
                "--text",
                f"Benchmark claim {i}",
                "--source",
                source,
                "--as",
                "bench-agent",
            ],
            cwd=root,
            env=env,
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        subprocess.run(
            [vouch, "approve", pid, "--as", "Bench Person"],
            cwd=root,
            env=env,
            check=True,
            capture_output=True,
        )
    return base


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--claims", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--no-record", action="store_true", help="do not append to RESULTS.md")
    args = parser.parse_args(argv)
    vouch = vouch_exe()
    root = private_clone(args.claims, "maint")
    caches = root / ".git" / "vouch"

    def drop_cache() -> None:
        shutil.rmtree(caches, ignore_errors=True)

    rows: list[list[object]] = []
    notes: list[str] = []

    def measure(label: str, cmd: list[str], target: float | None = None, **kw: object) -> None:
        walls, cpus = time_runs(cmd, args.runs, root, **kw)  # type: ignore[arg-type]
        wall, cpu = summary(walls), summary(cpus)
        verdict = "" if target is None else ("met" if wall["p50_ms"] <= target else "MISSED")
        rows.append(
            [
                label,
                wall["p50_ms"],
                wall["p95_ms"],
                wall["min_ms"],
                cpu["p50_ms"],
                f"{target:.0f} {verdict}" if target else "-",
            ]
        )
        print(
            f"{label:<52} p50 {wall['p50_ms']:8.1f} ms  p95 {wall['p95_ms']:8.1f}  "
            f"cpu {cpu['p50_ms']:8.1f}",
            file=sys.stderr,
        )

    print("building the index of the clone (doctor reads its state)...", file=sys.stderr)
    run_vouch([vouch, "index", "rebuild"], root, check=True)
    load_before = load_average()
    measure("`vouch --version` (interpreter + CLI)", [vouch, "--version"])
    measure(
        "`vouch lint`, per-file cache empty",
        [vouch, "lint", "--json"],
        LINT_TARGET_MS,
        before=drop_cache,
    )
    measure("`vouch lint`, cache warm", [vouch, "lint", "--json"], LINT_TARGET_MS)
    measure("`vouch doctor` (index built, cache warm)", [vouch, "doctor", "--json"], LINT_TARGET_MS)
    measure("`vouch source verify` (all sources)", [vouch, "source", "verify", "--json"])
    measure(
        "`vouch lint --staged`: no knowledge staged", [vouch, "lint", "--staged"], HOOK_TARGET_MS
    )
    stage_hand_edits(root, 10, 0)
    measure("`vouch lint --staged`: 10 claims edited", [vouch, "lint", "--staged"], HOOK_TARGET_MS)
    stage_hand_edits(root, 8, 2)
    measure(
        "`vouch lint --staged`: 8 edited + 2 deleted", [vouch, "lint", "--staged"], HOOK_TARGET_MS
    )
    git(root, "reset", "-q", "--hard")
    base = approve_ten(root, vouch)
    measure("`vouch lint --since BASE`: 10 decisions", [vouch, "lint", "--since", base])
    status = json.loads(run_vouch([vouch, "status", "--json"], root, check=True).stdout)
    notes.append(f"Knowledge base (`vouch status`): {json.dumps(status['counts'])}.")
    body = "\n\n".join(
        [
            conditions(load_before),
            f"Command: `python bench/bench_maintenance.py --claims {args.claims} --runs "
            f"{args.runs}` — a private clone of bench/generate.py's knowledge base; each run a "
            "fresh process (wall and CPU of the process and the git processes it waited for).",
            table(["command", "p50 ms", "p95 ms", "min ms", "CPU p50 ms", "target ms"], rows),
            *notes,
        ]
    )
    if not args.no_record:
        append_results(f"Lint, doctor and source verify, {args.claims} claims (issue 13)", body)
    print(body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
