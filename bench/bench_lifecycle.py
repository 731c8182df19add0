"""Lifecycle commands and source versions on a 10k-claim knowledge base (issue 12).

    python bench/bench_lifecycle.py [--claims 10000] [--rounds 30] [--no-record]

Works on a private clone of the generated knowledge base (bench/out/lifecycle-<n>), so
other benchmarks reading bench/out/kb-<n> are undisturbed.

- in-process, a warm CallContext (as the JSONL/MCP servers and a long-lived host run
  them): p50/p95 of each lifecycle method — kb.supersede, kb.contradict, kb.archive,
  kb.confirm, kb.cite, kb.promote — each one commit landed on the checked-out branch
  (work tree and index updated, audit event appended). Target: each ≤ 150 ms p50.
- a new source version: kb.register_source with changed content at an existing locator
  (scans the sources' locators, edits the old meta.yaml in the same commit).
- kb.source_history of one locator, and `versions.superseded_citations` (what kb.lint
  runs) with and without superseded sources.
- for reference, one cold `vouch confirm ID` process.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from collections.abc import Callable
from typing import Any

from common import (
    append_results,
    conditions,
    load_average,
    summary,
    table,
    time_cold,
    vouch_exe,
)
from generate import private_clone

from vouch.kinds import claim, source
from vouch.methods import registry as ops
from vouch.methods.context import CallContext
from vouch.store import versions
from vouch.store.kb import KB

TARGET_MS = 150.0


class Pool:
    """Live claims to act on, each used once, so every call changes something."""

    def __init__(self, kb: KB):
        self.live: list[str] = []
        self.sources = kb.ids(source.KIND)
        for cid in kb.ids(claim.KIND):
            obj = kb.read(claim.KIND, cid)
            if (
                obj
                and obj["status"] in ("working", "actionable")
                and not obj["contradicts"]
                and not obj["supersedes"]
                and obj.get("proposed_by") != "bench-reviewer"
            ):
                self.live.append(cid)

    def take(self) -> str:
        return self.live.pop()


def timed(fn: Callable[[], Any], rounds: int, warmup: int = 2) -> list[float]:
    samples = []
    for i in range(warmup + rounds):
        t0 = time.perf_counter()
        result = fn()
        elapsed = time.perf_counter() - t0
        if isinstance(result, dict) and result.get("changed") is False:
            raise RuntimeError(f"a benchmark call changed nothing: {result}")
        if i >= warmup:
            samples.append(elapsed)
    return samples


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--claims", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--no-record", action="store_true")
    args = parser.parse_args(argv)
    load_before = load_average()
    root = private_clone(args.claims, "lifecycle", user="Bench Reviewer")
    ctx = CallContext(kb_path=str(root), actor_override="bench-reviewer")
    kb = ctx.kb
    pool = Pool(kb)
    rounds = args.rounds
    print(f"{len(pool.live)} live claims to act on", file=sys.stderr)

    def call(method: str, params: dict[str, Any]) -> Any:
        return ops.invoke(ctx, method, params)

    counter = iter(range(1_000_000))
    source_ids = iter(pool.sources)
    cases: list[tuple[str, Callable[[], Any]]] = [
        ("kb.confirm", lambda: call("kb.confirm", {"id": pool.take()})),
        ("kb.archive", lambda: call("kb.archive", {"id": pool.take(), "reason": "bench"})),
        (
            "kb.supersede",
            lambda: call("kb.supersede", {"old_id": pool.take(), "new_id": pool.take()}),
        ),
        (
            "kb.contradict",
            lambda: call("kb.contradict", {"a_id": pool.take(), "b_id": pool.take()}),
        ),
        ("kb.cite", lambda: call("kb.cite", {"id": pool.take(), "evidence": next(source_ids)})),
        ("kb.promote", lambda: call("kb.promote", {"id": pool.take()})),
    ]
    rows: list[list[object]] = []
    verdicts: list[str] = []
    for name, fn in cases:
        s = summary(timed(fn, rounds))
        rows.append([name, s["runs"], s["p50_ms"], s["p95_ms"], s["min_ms"], s["max_ms"]])
        ok = s["p50_ms"] <= TARGET_MS
        verdicts.append(
            f"{name}: p50 {s['p50_ms']} ms (target <= {TARGET_MS:g} ms) — "
            f"{'met' if ok else 'MISSED'}"
        )
        print(verdicts[-1], file=sys.stderr)

    # source versions: changed content at the locator of an existing source
    locators = [
        str(m["locator"])
        for m in (kb.read(source.KIND, sid) for sid in pool.sources[-(rounds + 5) :])
        if m
    ]
    loc_iter = iter(locators)

    def new_version() -> Any:
        result = call(
            "kb.register_source",
            {
                "content": f"rewritten {next(counter)} at {time.time_ns()}\n",
                "locator": next(loc_iter),
            },
        )
        if not result.get("supersedes"):
            raise RuntimeError(f"no version recorded: {result}")
        return result

    s = summary(timed(new_version, rounds))
    rows.append(
        [
            "kb.register_source (new version of a locator)",
            s["runs"],
            s["p50_ms"],
            s["p95_ms"],
            s["min_ms"],
            s["max_ms"],
        ]
    )
    s = summary(timed(lambda: call("kb.source_history", {"locator": locators[0]}), rounds))
    rows.append(
        ["kb.source_history", s["runs"], s["p50_ms"], s["p95_ms"], s["min_ms"], s["max_ms"]]
    )
    s = summary(timed(lambda: versions.superseded_citations(kb), 5, warmup=1))
    rows.append(
        [
            f"superseded_citations ({rounds + 2} superseded sources)",
            s["runs"],
            s["p50_ms"],
            s["p95_ms"],
            s["min_ms"],
            s["max_ms"],
        ]
    )

    target = pool.take()
    cold = summary(time_cold([vouch_exe(), "confirm", target], 5, cwd=root))
    rows.append(
        [
            "`vouch confirm ID` (cold process)",
            cold["runs"],
            cold["p50_ms"],
            cold["p95_ms"],
            cold["min_ms"],
            cold["max_ms"],
        ]
    )
    shutil.rmtree(root)

    body = "\n\n".join(
        [
            conditions(load_before),
            f"Command: `python bench/bench_lifecycle.py --claims {args.claims} --rounds "
            f"{rounds}` — a private clone of the generated {args.claims}-claim knowledge base "
            "(1,000 sources); each call in-process on a warm CallContext, each one commit "
            "landed on `main` (work tree and index updated, audit event appended), each on a "
            "claim not touched before.",
            table(["call", "n", "p50 ms", "p95 ms", "min ms", "max ms"], rows),
            "\n".join(f"- {v}" for v in verdicts),
        ]
    )
    print(body)
    if not args.no_record:
        append_results(
            f"Lifecycle commands and source versions, {args.claims} claims (issue 12)", body
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
