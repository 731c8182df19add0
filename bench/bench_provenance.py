"""Provenance and the review screen on a 10k-claim knowledge base (issue 15).

    python bench/bench_provenance.py [--claims 10000] [--commits 1000] [--rounds 30]
                                     [--no-record] [--keep]

Works on a private clone of the generated knowledge base (bench/out/provenance-<n>).
Builds branch `feature`, `--commits` commits ahead of `main`, written with git
fast-import as knowledge commits: 60% add a claim, 20% supersede one (the old claim
edited, the new one added), 10% archive one, 10% re-rate one's confidence, every 20th
also edits a page. Then, through vouch itself, a few claims proposed and approved (a
real proposal branch and decision merge each) and one proposal left pending with a span
citation.

Measured:
- `kb.why` in-process on a warm CallContext (the path a server pays): a claim approved
  through vouch, a claim superseded on the branch, an untouched claim. Target ≤ 100 ms.
- `vouch show PROPOSAL`: a cold process (the review screen: cited lines, look-alikes by
  hybrid search, the diff). Target ≤ 300 ms.
- `vouch diff main...feature` between branches `--commits` commits apart: a cold
  process and in-process. Target ≤ 2 s.
- for reference: `kb.log ID`, `kb.blame PAGE`, `kb.read_proposal` in-process.
"""

from __future__ import annotations

import argparse
import random
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from common import append_results, conditions, load_average, summary, table, time_cold, vouch_exe
from generate import git, private_clone

from vouch.kinds import claim, page, source
from vouch.methods import registry as ops
from vouch.methods.context import CallContext
from vouch.store.kb import KB

WHY_MS, SHOW_MS, DIFF_MS = 100.0, 300.0, 2000.0


def _blob(path: str, text: str) -> bytes:
    data = text.encode()
    return f"M 100644 inline {path}\ndata {len(data)}\n".encode() + data + b"\n"


def build_feature(root: Path, kb: KB, commits: int, seed: int = 0) -> dict[str, list[str]]:
    """`commits` knowledge commits on branch `feature` (one fast-import stream)."""
    rng = random.Random(seed)
    claims = kb.ids(claim.KIND)
    sources = kb.ids(source.KIND)
    pages = kb.ids(page.KIND)
    rng.shuffle(claims)
    live = iter(claims)
    done: dict[str, list[str]] = {"added": [], "superseded": [], "archived": [], "rated": []}
    prefix = kb.rel(".")
    base = git(root, "rev-parse", "main").strip()
    stream = bytearray()
    when = 1_751_000_000
    for n in range(commits):
        roll = n % 10
        files: list[bytes] = []
        if roll < 6 or roll == 8:
            new = claim.new(
                text=f"Bench fact {n}: service {rng.randint(0, 999)} retries {n % 7} times",
                evidence=[rng.choice(sources)],
                proposed_by="bench",
            )
            if roll == 8:  # a supersession
                old_id = next(live)
                old = kb.read(claim.KIND, old_id)
                assert old is not None
                old.update(status="superseded", superseded_by=new["id"])
                new["supersedes"] = [old_id]
                files.append(_blob(f"{prefix}/{claim.path_for(old_id)}", claim.dump(old)))
                done["superseded"].append(old_id)
            files.append(_blob(f"{prefix}/{claim.path_for(new['id'])}", claim.dump(new)))
            done["added"].append(new["id"])
            subject = f"vouch: add claim {new['id']}"
        else:
            cid = next(live)
            obj = kb.read(claim.KIND, cid)
            assert obj is not None
            if roll in (6, 7) and n % 20 != 7:
                obj["status"] = "archived"
                done["archived"].append(cid)
            else:
                obj["confidence"] = round(rng.uniform(0.1, 0.99), 2)
                done["rated"].append(cid)
            files.append(_blob(f"{prefix}/{claim.path_for(cid)}", claim.dump(obj)))
            subject = f"vouch: change claim {cid}"
        if n % 20 == 0 and pages:
            pid = pages[n % len(pages)]
            obj = kb.read(page.KIND, pid)
            assert obj is not None
            obj["body"] = f"{obj.get('body') or ''}\n\n## Note {n}\n\nadded on the branch\n"
            files.append(_blob(f"{prefix}/{page.path_for(pid)}", page.dump(obj)))
        message = f"{subject}\n\nVouch-Event: bench\nVouch-Actor: bench\n".encode()
        stream += b"commit refs/heads/feature\n"
        stream += f"committer bench <bench@example.invalid> {when + n} +0000\n".encode()
        stream += f"data {len(message)}\n".encode() + message
        if n == 0:
            stream += f"from {base}\n".encode()
        stream += b"".join(files)
    subprocess.run(["git", "fast-import", "--quiet"], cwd=root, input=bytes(stream), check=True)
    return done


def timed(fn: Callable[[], Any], rounds: int, warmup: int = 2) -> list[float]:
    samples = []
    for i in range(warmup + rounds):
        t0 = time.perf_counter()
        fn()
        if i >= warmup:
            samples.append(time.perf_counter() - t0)
    return samples


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--claims", type=int, default=10_000)
    parser.add_argument("--commits", type=int, default=1_000)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--no-record", action="store_true")
    parser.add_argument("--keep", action="store_true", help="leave the clone for a look")
    args = parser.parse_args(argv)
    load_before = load_average()
    root = private_clone(args.claims, "provenance", user="Bench Reviewer")
    exe = vouch_exe()
    proposer = CallContext(kb_path=str(root), actor_override="bench-proposer")
    reviewer = CallContext(kb_path=str(root), actor_override="bench-reviewer")
    kb = reviewer.kb
    t0 = time.perf_counter()
    done = build_feature(root, kb, args.commits)
    print(
        f"built feature: {args.commits} commits in {time.perf_counter() - t0:.1f}s", file=sys.stderr
    )
    git(root, "checkout", "-q", "feature")
    # a few real proposals and decisions on top of the branch, and one left pending
    sid = kb.ids(source.KIND)[0]
    approved = []
    for n in range(3):
        made = ops.invoke(
            proposer,
            "kb.propose_claim",
            {
                "text": f"Reviewed bench claim {n} about deploy windows",
                "evidence": [f"{sid}:L1-L2"],
                "rationale": "seen in the runbook",
            },
        )
        ops.invoke(reviewer, "kb.approve", {"proposal_id": made["proposal_id"]})
        approved.append(made["claim_id"])
    pending = ops.invoke(
        proposer,
        "kb.propose_claim",
        {
            "text": "Deploys need a green CI run before the window",
            "evidence": [f"{sid}:L1-L3"],
            "rationale": "a pending proposal to review",
        },
    )
    ahead = git(root, "rev-list", "--count", "main..feature").strip()
    subprocess.run([exe, "index", "rebuild"], cwd=root, check=True, capture_output=True)
    # the checkout above rewrote files in the same second as git's index: until the index
    # is written again (any `git status` does it) git re-reads those files to compare
    # them, and every cold command pays for that; a person's clone is refreshed
    git(root, "update-index", "-q", "--refresh")

    rows: list[list[object]] = []
    verdicts: list[str] = []

    def record(name: str, samples: list[float], target: float | None = None) -> None:
        s = summary(samples)
        rows.append([name, s["runs"], s["p50_ms"], s["p95_ms"], s["min_ms"], s["max_ms"]])
        if target is not None:
            ok = s["p50_ms"] <= target
            verdicts.append(
                f"{name}: p50 {s['p50_ms']} ms (target <= {target:g} ms) — "
                f"{'met' if ok else 'MISSED'}"
            )
            print(verdicts[-1], file=sys.stderr)

    def why(cid: str) -> Callable[[], Any]:
        return lambda: ops.invoke(reviewer, "kb.why", {"id": cid})

    record("kb.why (approved through vouch)", timed(why(approved[0]), args.rounds), WHY_MS)
    record(
        "kb.why (superseded on the branch)", timed(why(done["superseded"][0]), args.rounds), WHY_MS
    )
    changed = {c for items in done.values() for c in items}
    untouched = next(c for c in kb.ids(claim.KIND) if c not in changed)
    record("kb.why (untouched claim)", timed(why(untouched), args.rounds), WHY_MS)
    record(
        "kb.log ID (in-process)",
        timed(lambda: ops.invoke(reviewer, "kb.log", {"id": done["superseded"][0]}), args.rounds),
    )
    first_page = kb.ids(page.KIND)[0]
    record(
        "kb.blame PAGE (in-process)",
        timed(lambda: ops.invoke(reviewer, "kb.blame", {"id": first_page}), 10),
    )
    pid = pending["proposal_id"]
    record(
        "kb.read_proposal (in-process, warm)",
        timed(lambda: ops.invoke(reviewer, "kb.read_proposal", {"id": pid}), args.rounds),
    )
    record(
        "`vouch show PROPOSAL` (cold process)", time_cold([exe, "show", pid], 10, cwd=root), SHOW_MS
    )
    spec = "main...feature"
    record(
        f"kb.diff {spec} (in-process)",
        timed(lambda: ops.invoke(reviewer, "kb.diff", {"revisions": spec}), 5, warmup=1),
    )
    record(
        f"`vouch diff {spec}` (cold process)", time_cold([exe, "diff", spec], 5, cwd=root), DIFF_MS
    )
    found = ops.invoke(reviewer, "kb.diff", {"revisions": spec})["summary"]
    if not args.keep:
        shutil.rmtree(root)

    body = "\n\n".join(
        [
            conditions(load_before),
            f"Command: `python bench/bench_provenance.py --claims {args.claims} --commits "
            f"{args.commits} --rounds {args.rounds}` — a private clone of the generated "
            f"{args.claims}-claim knowledge base; branch `feature` {ahead} commits ahead of "
            f"`main` (diff summary: {found}); `kb.*` calls in-process on a warm "
            "CallContext; cold rows are fresh `vouch` processes with a current index.",
            table(["call", "n", "p50 ms", "p95 ms", "min ms", "max ms"], rows),
            "\n".join(f"- {v}" for v in verdicts),
        ]
    )
    print(body)
    if not args.no_record:
        append_results(f"Provenance and the review screen, {args.claims} claims (issue 15)", body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
