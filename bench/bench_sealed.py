"""The hand-edit check at 10k claims (issue 34, finding 10).

    python bench/bench_sealed.py [--claims 10000] [--rounds 5] [--no-record]

Two states of the generated knowledge base:
- as generated: decision records without seals (what a knowledge base approved before
  seals holds), so every object takes the history fallback (`git log` over its path);
- sealed: a private clone (`bench/out/sealed-<n>`, deleted afterwards) whose decision
  records name their object's blob, as `vouch approve` writes them now.

Measured: `vouch.health.sealed.full` in-process (the part lint and doctor add, on a
warm load of every file), a cold `vouch lint` beside it for scale, and a cold
`vouch lint --staged` with a hand edit of one approved claim staged (what the
pre-commit hook pays to refuse it) and with the edit put back (what it pays to let a
restore through).
"""

from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from common import append_results, bench_env, conditions, load_average, table
from generate import ensure, git, private_clone

from vouch.core import yamlio
from vouch.gate import seals
from vouch.health import lint, sealed
from vouch.kinds import KINDS
from vouch.store.kb import KB


def seal_all(root: Path) -> None:
    """Give every decision record the seal `vouch approve` now writes; one commit."""
    kb = KB.open(root)
    listing = kb.repo.tree_blobs("HEAD", [kb.rel(".")])
    for path in sorted((kb.dir / "decided").rglob("*.yaml")):
        text = path.read_text(encoding="utf-8")
        record = yamlio.load_yaml(text)
        rel = KINDS[record["kind"]].path_for(record["object_id"])
        blob = listing[kb.rel(rel)]
        path.write_text(text + yamlio.dump_yaml({seals.FIELD: {rel: blob}}), encoding="utf-8")
    git(root, "add", "-A", ".vouch")
    git(root, "commit", "-q", "--no-verify", "-m", "bench: seal every decision record")


def in_process(root: Path, rounds: int) -> tuple[float, float, int]:
    kb = KB.open(root)
    k, _ = lint.everything(kb, stale_days=0)
    records = [o for (kind, _), o in k.objects.items() if kind == "decision" and o]
    times = []
    found: list[object] = []
    for _ in range(rounds):
        start = time.perf_counter()
        found = sealed.full(k, records)
        times.append(time.perf_counter() - start)
    return min(times) * 1000, statistics.median(times) * 1000, len(found)


def cold(root: Path, *args: str, rounds: int, code: int = 0) -> str:
    """Median wall and CPU seconds of a fresh `vouch ARGS` that must exit `code`."""
    cmd = [sys.executable, "-m", "vouch", *args]
    walls: list[float] = []
    cpus: list[float] = []
    for n in range(rounds + 1):  # one untimed warm-up
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        proc = subprocess.run(cmd, cwd=root, env=bench_env(), capture_output=True, check=False)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if proc.returncode != code:
            raise RuntimeError(f"{' '.join(args)} exited {proc.returncode}: {proc.stderr[-500:]!r}")
        if n:
            walls.append(wall)
            cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return f"{statistics.median(walls):.2f} s wall, {statistics.median(cpus):.2f} s CPU"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--claims", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--no-record", action="store_true")
    opts = parser.parse_args()
    load_before = load_average()
    legacy = ensure(opts.claims)
    clone = private_clone(opts.claims, "sealed")
    try:
        seal_all(clone)
        rows = []
        for name, root in (("before seals (history fallback)", legacy), ("sealed", clone)):
            best, median, issues = in_process(root, opts.rounds)
            assert issues == 0, f"{name}: {issues} issues"
            lint_all = cold(root, "lint", "--json", "--stale-days", "0", rounds=3)
            rows.append([name, f"{best:.0f} ms", f"{median:.0f} ms", lint_all])
        claim = sorted((clone / ".vouch" / "claims").rglob("*.yaml"))[0]
        original = claim.read_text(encoding="utf-8")
        claim.write_text(yamlio.edit_yaml(original, {"confidence": 1.0}), encoding="utf-8")
        git(clone, "add", str(claim))
        refuse = cold(clone, "lint", "--staged", rounds=opts.rounds, code=1)
        claim.write_text(original, encoding="utf-8")
        git(clone, "add", str(claim))
        restore = cold(clone, "lint", "--staged", rounds=opts.rounds)
    finally:
        shutil.rmtree(clone, ignore_errors=True)
    body = (
        table(["knowledge base", "sealed.full min", "median", "cold `vouch lint` (median)"], rows)
        + "\n\nThe pre-commit hook (`vouch lint --staged`, cold, median) on the sealed base: "
        f"a hand edit of one approved claim staged (refused): {refuse}; the same file put "
        f"back (nothing staged against HEAD): {restore}.\n\n" + conditions(load_before)
    )
    print(body)
    if not opts.no_record:
        append_results(f"Hand-edit check at {opts.claims} claims (bench_sealed.py)", body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
