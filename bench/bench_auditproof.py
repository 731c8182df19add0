"""The audit history check (`vouch.gate.auditproof`) on a 10k-claim knowledge base.

    python bench/bench_auditproof.py [--claims 10000] [--approvals 200] [--keep]

Works on a private clone of the generated knowledge base (bench/out/auditproof-<n>),
then lands `--approvals` real decisions through vouch (a proposal branch and a decision
merge each, every one appending two audit events). Measured in-process, each the best
of 3:

- `auditproof.check` over HEAD's whole history (one `git log` over the audit paths, the
  committed log read once, the decision records and stamped objects read in one
  pipelined `cat-file`), before and after the approvals: the difference per decision
  commit is the cost a long history adds;
- the same check again, with the commits found sound remembered (`PROVEN`): what
  every later `audit --verify`, `doctor` and `lint --since` pays;
- `kb.audit_verify` as a whole (the chain, its anchors, the history), and
  `vouch.gate.anchor.make` (which runs the check before it writes the tag).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from generate import git, private_clone

from vouch.gate import anchor, auditproof
from vouch.methods import registry as ops
from vouch.methods.context import CallContext
from vouch.store.kb import KB


def best(fn: Callable[[], Any], rounds: int = 3, kb: KB | None = None) -> float:
    """The best of `rounds`; with `kb`, each round cold (the clone's memory of commits
    already found sound forgotten first)."""
    times = []
    for _ in range(rounds):
        if kb is not None:
            (kb.state_dir / auditproof.PROVEN).unlink(missing_ok=True)
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--claims", type=int, default=10_000)
    parser.add_argument("--approvals", type=int, default=200)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    root = private_clone(args.claims, "auditproof")
    try:
        kb = KB.open(root)
        head = git(root, "rev-parse", "HEAD").strip()
        before = best(lambda: auditproof.check(kb, head), kb=kb)
        alice = CallContext(kb_path=str(root), actor_override="alice")
        bob = CallContext(kb_path=str(root), actor_override="bob")
        sid = ops.invoke(alice, "kb.list_sources", {"limit": 1})[0]["id"]
        start = time.perf_counter()
        for n in range(args.approvals):
            made = ops.invoke(
                alice,
                "kb.propose_claim",
                {
                    "text": f"Audit bench claim {n}: queue {n % 13} drains nightly",
                    "evidence": [sid],
                },
            )
            ops.invoke(bob, "kb.approve", {"proposal_id": made["proposal_id"]})
        landing = time.perf_counter() - start
        head = git(root, "rev-parse", "HEAD").strip()
        findings, info = auditproof.check(kb, head)
        assert not findings, findings[:3]
        after = best(lambda: auditproof.check(kb, head), kb=kb)
        warm = best(lambda: auditproof.check(kb, head))
        verify = best(lambda: ops.invoke(bob, "kb.audit_verify", {}))
        start = time.perf_counter()
        anchor.make(kb, "bob")
        anchoring = time.perf_counter() - start
        per = (after - before) / max(args.approvals, 1)
        print(f"claims {args.claims}, decisions landed {args.approvals} in {landing:.1f} s")
        print(f"commits touching the audit log: {info['commits']}, events {info['events']}")
        print(f"check, generated KB (2 commits):        {before * 1000:8.1f} ms")
        print(f"check, + {args.approvals} decisions:               {after * 1000:8.1f} ms")
        print(f"  per decision commit:                  {per * 1000:8.2f} ms")
        print(f"  projected at 10k decision commits:    {(before + per * 10_000):8.1f} s")
        print(f"check again (commits remembered):       {warm * 1000:8.1f} ms")
        print(f"kb.audit_verify (chain + history):      {verify * 1000:8.1f} ms")
        print(f"vouch audit anchor (check + tag):       {anchoring * 1000:8.1f} ms")
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    raise SystemExit(main())
