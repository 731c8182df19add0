"""The review gate: propose, approve and pending at 1k / 10k / 100k approved claims.

    python bench/bench_gate.py [--sizes 1000,10000,100000] [--rounds 40] [--no-record]

Each size works on a private clone of the generated knowledge base (bench/generate.py),
under bench/out/gate-<n>, so other benchmarks reading bench/out/kb-<n> are undisturbed.

- propose + approve, in-process (a warm CallContext, as the JSONL/MCP servers run them):
  p50/p95 of `kb.propose_claim` and of `kb.approve` (a merge commit into the checked-out
  branch, work tree and index updated). Targets: sum p50 <= 60 ms at 10k, <= 150 ms at 100k.
- `vouch pending --json` as a cold process with 1,000 open proposals. Target <= 300 ms.
- audit append cost against the log length: propose + approve p50 after the committed log
  has been grown to 1k / 10k / 100k events (the first append closes it into a segment),
  next to what hashing the whole log into one blob would cost per commit without segments.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import time
from pathlib import Path

from common import (
    HERE,
    append_results,
    machine,
    summary,
    table,
    time_cold,
    today,
    vouch_exe,
)
from generate import git, private_clone

from vouch.kinds import source
from vouch.methods import registry as ops
from vouch.methods.context import CallContext
from vouch.store import audit
from vouch.store.kb import KB

TARGETS_MS = {10_000: 60.0, 100_000: 150.0}
PENDING_TARGET_MS = 300.0


def label(n: int) -> str:
    return f"{n // 1000}k" if n % 1000 == 0 else str(n)


class Gate:
    """An agent proposing and a reviewer approving, each a warm CallContext."""

    def __init__(self, root: Path):
        # the agent is a declared agent (its own principal); the reviewer is the git user
        # who runs it, and pins each proposal's commit as `vouch show` would
        self.agent = CallContext(kb_path=str(root), agent="bench-agent")
        self.reviewer = CallContext(kb_path=str(root))
        kb = KB.open(root)
        self.repo = kb.repo
        self.source = kb.ids(source.KIND)[0]
        self.n = 0

    def propose(self) -> str:
        self.n += 1
        result = ops.invoke(
            self.agent,
            "kb.propose_claim",
            {
                "text": f"Benchmark claim number {self.n} at {time.time_ns()}",
                "evidence": [self.source],
                "tags": ["bench"],
            },
        )
        assert result["valid"] and result["proposal_id"], result
        return str(result["proposal_id"])

    def pin(self, pid: str) -> str:
        commit = self.repo.resolve(f"refs/heads/vouch/proposal/{pid}")
        assert commit, pid
        return commit

    def approve(self, pid: str, expect: str) -> None:
        params = {"proposal_id": pid, "expect": expect}
        assert ops.invoke(self.reviewer, "kb.approve", params)["ok"]

    def rounds(self, count: int, warmup: int = 3) -> tuple[list[float], list[float]]:
        proposes: list[float] = []
        approves: list[float] = []
        for i in range(warmup + count):
            t0 = time.perf_counter()
            pid = self.propose()
            t1 = time.perf_counter()
            expect = self.pin(pid)  # the reviewer's look, not part of the approval
            t2 = time.perf_counter()
            self.approve(pid, expect)
            t3 = time.perf_counter()
            if i >= warmup:
                proposes.append(t1 - t0)
                approves.append(t3 - t2)
        return proposes, approves


def grow_log(root: Path, events: int) -> None:
    """Commit an audit log of `events` chained events (as years of use would leave)."""
    log = root / ".vouch" / audit.LOG_NAME
    last = audit.last_event(root / ".vouch")
    prev = str(last["hash"]) if last else ""
    with open(log, "a", encoding="utf-8") as fh:
        for i in range(events):
            record = audit.make_event("bench.filler", "bench", [f"object-{i:08d}"], {"n": i}, prev)
            fh.write(audit.to_line(record))
            prev = record["hash"]
    git(root, "add", ".vouch/audit.log.jsonl")
    git(root, "commit", "-qm", f"bench: grow the audit log by {events} events")


def whole_log_blob_ms(root: Path) -> float:
    """What one commit would pay to store the whole log as one blob (no segments)."""
    data = b"".join(p.read_bytes() for p in audit.log_files(root / ".vouch"))
    repo = KB.open(root).repo
    start = time.perf_counter()
    for i in range(3):
        repo.write_blob(data + f"{time.time_ns()}-{i}\n".encode())
    return (time.perf_counter() - start) / 3 * 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--pending", type=int, default=1000, help="open proposals for pending")
    parser.add_argument("--log-events", default="1000,10000,100000")
    parser.add_argument("--no-record", action="store_true")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s]

    gate_rows: list[list[object]] = []
    verdicts: list[str] = []
    for n in sizes:
        root = private_clone(n, "gate")
        gate = Gate(root)
        proposes, approves = gate.rounds(args.rounds)
        p, a = summary(proposes), summary(approves)
        both = summary([x + y for x, y in zip(proposes, approves, strict=True)])
        gate_rows.append(
            [
                label(n),
                p["p50_ms"],
                p["p95_ms"],
                a["p50_ms"],
                a["p95_ms"],
                both["p50_ms"],
                both["p95_ms"],
            ]
        )
        print(
            f"{label(n):>5}: propose p50 {p['p50_ms']} ms, approve p50 {a['p50_ms']} ms, "
            f"both p50 {both['p50_ms']} ms",
            file=sys.stderr,
        )
        if n in TARGETS_MS:
            ok = both["p50_ms"] <= TARGETS_MS[n]
            verdicts.append(
                f"propose + approve p50 at {label(n)}: {both['p50_ms']} ms "
                f"(target <= {TARGETS_MS[n]:g} ms) — {'met' if ok else 'MISSED'}"
            )
        if n != 10_000:
            shutil.rmtree(root)

    # pending with 1,000 open proposals, on the 10k clone (or the largest one measured)
    n = 10_000 if 10_000 in sizes else sizes[-1]
    root = HERE / "out" / f"gate-{n}"
    if not root.exists():
        root = private_clone(n, "gate")
    gate = Gate(root)
    start = time.perf_counter()
    for _ in range(args.pending):
        gate.propose()
    made_s = time.perf_counter() - start
    print(f"made {args.pending} proposals in {made_s:.1f} s", file=sys.stderr)
    vouch = vouch_exe()
    cold = summary(time_cold([vouch, "pending", "--json"], 15, cwd=root))
    cold_all = summary(time_cold([vouch, "pending", "--json", "--limit", "1000"], 15, cwd=root))
    warm_samples = []
    for _ in range(15):
        t0 = time.perf_counter()
        ops.invoke(gate.reviewer, "kb.list_pending", {"limit": 1000})
        warm_samples.append(time.perf_counter() - t0)
    warm = summary(warm_samples)
    pending_rows = [
        ["vouch pending --json (cold)", cold["p50_ms"], cold["p95_ms"]],
        ["vouch pending --json --limit 1000 (cold)", cold_all["p50_ms"], cold_all["p95_ms"]],
        ["kb.list_pending limit 1000 (in-process)", warm["p50_ms"], warm["p95_ms"]],
    ]
    ok = cold_all["p50_ms"] <= PENDING_TARGET_MS
    verdicts.append(
        f"`vouch pending` with {args.pending} open proposals: "
        f"{cold_all['p50_ms']} ms cold p50 listing all (target <= "
        f"{PENDING_TARGET_MS:g} ms) — {'met' if ok else 'MISSED'}"
    )
    shutil.rmtree(root)

    # audit append cost against log length (on a fresh 1k clone)
    audit_rows: list[list[object]] = []
    small = min(sizes)
    root = private_clone(small, "gate")
    grown = 0
    for events in [int(e) for e in args.log_events.split(",") if e]:
        grow_log(root, events - grown)
        grown = events
        whole = whole_log_blob_ms(root)
        gate = Gate(root)
        gate.rounds(1, warmup=0)  # the first append closes the big log into a segment
        proposes, approves = gate.rounds(15, warmup=1)
        both = summary([x + y for x, y in zip(proposes, approves, strict=True)])
        size_mb = sum(p.stat().st_size for p in audit.log_files(root / ".vouch")) / 1e6
        active_kb = (root / ".vouch" / audit.LOG_NAME).stat().st_size / 1e3
        audit_rows.append(
            [events, f"{size_mb:.1f} MB", f"{active_kb:.0f} KB", both["p50_ms"], round(whole, 1)]
        )
        print(
            f"log {events} events: propose+approve p50 {both['p50_ms']} ms; whole-log "
            f"blob would cost {whole:.1f} ms",
            file=sys.stderr,
        )
    shutil.rmtree(root)
    flat = statistics.pstdev([float(r[3]) for r in audit_rows]) if len(audit_rows) > 1 else 0

    body = "\n\n".join(
        [
            f"{today()}, {machine()}.",
            f"Command: `python bench/bench_gate.py --sizes {args.sizes} --rounds {args.rounds}`",
            "propose + approve in-process (ms; a private clone of bench/generate.py's KB; approve "
            "= merge commit into the checked-out branch + work tree/index update):",
            table(
                [
                    "claims",
                    "propose p50",
                    "propose p95",
                    "approve p50",
                    "approve p95",
                    "both p50",
                    "both p95",
                ],
                gate_rows,
            ),
            f"pending with {args.pending} open proposals on the {label(n)} KB (ms):",
            table(["command", "p50", "p95"], pending_rows),
            f"audit append cost vs log length (on the {label(small)} KB; the first gate commit "
            "after growth closes the log into a segment; 'one blob' = what storing the whole log "
            f"as one blob per commit would cost instead). Spread of propose+approve p50: "
            f"{flat:.1f} ms:",
            table(
                [
                    "events in log",
                    "log size",
                    "active log",
                    "propose+approve p50 ms",
                    "one-blob cost ms",
                ],
                audit_rows,
            ),
            "\n".join(f"- {v}" for v in verdicts),
        ]
    )
    print(body)
    if not args.no_record:
        append_results("Review gate (issue 3)", body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
