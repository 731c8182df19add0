"""Redaction and deletion through a change proposal on a 10k-claim knowledge base (issue
38 item 1).

    python bench/bench_redact.py [--claims 10000] [--rounds 5] [--no-record]

On a private clone of the generated knowledge base (bench/out/redact-<n>), with its
search index built: for each round, one live claim is proposed for redaction
(`kb.redact`, an agent), shown and approved by a person (`kb.approve`, which lands the
edit and then rebuilds the index without the words and scrubs the search log: what a
user waits for); then the same for a deletion. Reported: p50/p95 of each step, and for
reference a full `kb.index_rebuild` (what the approval's index step costs).
"""

from __future__ import annotations

import argparse
import sys
import time

from common import append_results, conditions, load_average, summary, table
from generate import private_clone

from vouch.kinds import claim
from vouch.methods import registry as ops
from vouch.methods.context import CallContext
from vouch.store.kb import KB


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--claims", type=int, default=10000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--no-record", action="store_true")
    args = parser.parse_args(argv)
    before = load_average()
    root = private_clone(args.claims, "redact", user="Bench Reviewer")
    kb = KB.open(root)
    agent = CallContext(kb_path=str(root), agent="bench-agent")
    person = CallContext(kb_path=str(root))
    ops.invoke(person, "kb.search", {"query": "deploy"})  # the index, built
    live = [
        cid
        for cid in kb.ids(claim.KIND)[: args.rounds * 20]
        if (obj := kb.read(claim.KIND, cid)) and obj["status"] == "working"
    ]
    times: dict[str, list[float]] = {k: [] for k in ("propose", "show", "approve")}
    deletes: dict[str, list[float]] = {k: [] for k in ("propose", "show", "approve")}
    for n in range(args.rounds):
        for op, into in (("kb.redact", times), ("kb.delete", deletes)):
            cid = live.pop()
            started = time.perf_counter()
            made = ops.invoke(agent, op, {"id": cid, "reason": "bench"})
            if not made.get("proposal_id"):  # something rests on it: take another
                continue
            into["propose"].append(time.perf_counter() - started)
            started = time.perf_counter()
            ops.invoke(person, "kb.read_proposal", {"id": made["proposal_id"]})
            into["show"].append(time.perf_counter() - started)
            started = time.perf_counter()
            ops.invoke(person, "kb.approve", {"proposal_id": made["proposal_id"]})
            into["approve"].append(time.perf_counter() - started)
        print(f"round {n + 1}/{args.rounds}", file=sys.stderr)
    started = time.perf_counter()
    ops.invoke(person, "kb.index_rebuild", {})
    rebuild = time.perf_counter() - started
    rows = []
    for what, found in (("redact", times), ("delete", deletes)):
        for step in ("propose", "show", "approve"):
            if found[step]:
                s = summary(found[step])
                rows.append([what, step, s["runs"], s["p50_ms"], s["p95_ms"]])
    rows.append(["(reference)", "kb.index_rebuild", 1, round(rebuild * 1000, 1), ""])
    body = (
        f"{conditions(before)}\n\nCommand: `python bench/bench_redact.py --claims "
        f"{args.claims} --rounds {args.rounds}`. In process (a warm CallContext). "
        "`approve` includes the index rebuilt without the words and the search log scrubbed.\n\n"
        + table(["change", "step", "runs", "p50 ms", "p95 ms"], rows)
    )
    print(body)
    if not args.no_record:
        append_results(f"Redact and delete through a change proposal, {args.claims} claims", body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
