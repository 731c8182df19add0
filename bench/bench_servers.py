"""Warm JSONL server latency: `kb.status` and `kb.search` round trips at N claims.

    python bench/bench_servers.py [--claims 10000] [--rounds 300] [--no-record]

Starts `vouch serve --transport jsonl` on the cached generated knowledge base
(bench/generate.py), then times request -> response round trips as the client sees them
(pipe, JSON both ways and the handler). Order: `kb.status` as found; the first
`kb.search` (index refresh or build, model load: reported, not in the percentiles);
warm `kb.search` over ten queries; `kb.status` again, now with a ready index (issue 5
added the index summary to it). Targets (issue 6): kb.status <= 5 ms and kb.search p50
<= 10 ms at 10k claims. Only the derived index is written; knowledge stays as generated.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from common import append_results, bench_env, conditions, load_average, summary, table
from generate import ensure

QUERIES = (
    "deploy staging cluster",
    "database migration rollback",
    "who owns the billing service",
    "release process",
    "incident postmortem",
    "api rate limits",
    "cache invalidation",
    "on-call rotation",
    "feature flags",
    "security review",
)
STATUS_TARGET_MS, SEARCH_TARGET_MS = 5.0, 10.0


class Server:
    def __init__(self, root: Path):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "vouch", "serve", "--transport", "jsonl", "--kb", str(root)],
            cwd=root,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=bench_env({"VOUCH_AGENT": "bench"}),
        )
        self.n = 0

    def call(self, method: str, params: dict[str, Any] | None = None) -> tuple[float, Any]:
        """(seconds, result) of one round trip."""
        assert self.proc.stdin and self.proc.stdout
        self.n += 1
        line = json.dumps({"id": self.n, "method": method, "params": params or {}}) + "\n"
        start = time.perf_counter()
        self.proc.stdin.write(line.encode())
        self.proc.stdin.flush()
        response = json.loads(self.proc.stdout.readline())
        elapsed = time.perf_counter() - start
        if not response["ok"]:
            raise SystemExit(f"{method} failed: {response['error']}")
        return elapsed, response["result"]

    def times(self, method: str, params: list[dict[str, Any]], rounds: int) -> list[float]:
        return [self.call(method, params[i % len(params)])[0] for i in range(rounds)]

    def close(self) -> None:
        assert self.proc.stdin
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def breakdown(root: Path, rounds: int) -> list[str]:
    """Where a warm request's time goes, measured in this process on one warm KB handle.

    Internals of other modules may move; a part that cannot be imported is skipped."""
    from vouch.store.kb import KB

    kb = KB.open(None, str(root))
    parts: dict[str, Any] = {"KB.status (counts, pending, last audit)": kb.status}
    try:
        from vouch.search.catalog import index_status

        parts["index summary in kb.status (search.catalog.index_status)"] = lambda: index_status(kb)
    except ImportError:
        pass
    try:
        from vouch.index import freshness

        parts[
            "full index freshness check, no previous state (index.freshness.current; "
            "a warm server's searches skip most of it)"
        ] = lambda: freshness.current(kb)
    except ImportError:
        pass
    out = []
    for label, fn in parts.items():
        fn()
        samples = []
        for _ in range(max(20, rounds // 10)):
            start = time.perf_counter()
            fn()
            samples.append(time.perf_counter() - start)
        out.append(f"in-process {label}: p50 {summary(samples)['p50_ms']} ms")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--claims", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument(
        "--out-dir",
        type=Path,
        default=None,
        help="where generated knowledge bases are cached (default bench/out)",
    )
    parser.add_argument("--no-record", action="store_true", help="do not append to RESULTS.md")
    args = parser.parse_args(argv)

    root = ensure(args.claims, out_dir=args.out_dir) if args.out_dir else ensure(args.claims)
    load_before = load_average()
    started = time.perf_counter()
    server = Server(root)
    _, status = server.call("kb.status")
    ready_ms = (time.perf_counter() - started) * 1000
    notes = [f"start + first kb.status: {ready_ms:.0f} ms"]
    rows: list[list[object]] = []
    results: dict[str, dict[str, float]] = {}

    def record(label: str, samples: list[float]) -> None:
        stats = summary(samples)
        results[label] = stats
        rows.append(
            [
                label,
                stats["runs"],
                stats["p50_ms"],
                stats["p95_ms"],
                stats["min_ms"],
                stats["max_ms"],
            ]
        )
        print(
            f"{label:<34} p50 {stats['p50_ms']:6.1f} ms  p95 {stats['p95_ms']:6.1f} ms"
            f"  min {stats['min_ms']:6.1f} ms",
            file=sys.stderr,
        )

    index_state = status.get("index_state", "n/a")
    record(f"kb.status (index {index_state})", server.times("kb.status", [{}], args.rounds))
    claims = server.call("kb.list_claims", {"limit": 20})[1]
    record(
        "kb.read_claim",
        server.times("kb.read_claim", [{"id": c["id"]} for c in claims], args.rounds),
    )
    methods = {m["name"] for m in server.call("kb.capabilities")[1]["methods"]}
    if "kb.search" in methods:
        first, _ = server.call("kb.search", {"query": "warm up the index", "limit": 10})
        notes.append(f"first kb.search (index refresh or build, model load): {first * 1000:.0f} ms")
        record(
            "kb.search (limit 10, 10 queries)",
            server.times("kb.search", [{"query": q, "limit": 10} for q in QUERIES], args.rounds),
        )
        state = server.call("kb.status")[1].get("index_state", "n/a")
        record(
            f"kb.status (index {state}, after search)", server.times("kb.status", [{}], args.rounds)
        )
    else:
        notes.append("kb.search is not registered: search not measured")
    server.close()
    notes += breakdown(root, args.rounds)

    verdicts = []
    for label, stats in results.items():
        target = (
            STATUS_TARGET_MS
            if label.startswith("kb.status")
            else SEARCH_TARGET_MS
            if label.startswith("kb.search")
            else None
        )
        if target is not None:
            ok = stats["p50_ms"] <= target
            verdicts.append(
                f"{label}: p50 {stats['p50_ms']} ms, target <= {target:.0f} ms "
                f"{'met' if ok else 'MISSED'}"
            )
    for line in notes + verdicts:
        print(line, file=sys.stderr)
    if not args.no_record:
        body = "\n\n".join(
            [
                conditions(load_before),
                f"Command: `python bench/bench_servers.py --claims {args.claims} "
                f"--rounds {args.rounds}` — one warm `vouch serve --transport jsonl` on the "
                f"generated {args.claims}-claim knowledge base; client-side round trips "
                "(pipe + JSON + handler).",
                table(["request", "n", "p50 ms", "p95 ms", "min ms", "max ms"], rows),
                "\n".join(f"- {line}" for line in notes + verdicts),
            ]
        )
        append_results(f"Warm JSONL server, {args.claims} claims (issue 6)", body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
