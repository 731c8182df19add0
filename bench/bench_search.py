#!/usr/bin/env python3
"""Search latency on generated knowledge bases (bench/generate.py, seed 0).

    python bench/bench_search.py [--claims 10000 100000] [--queries 200] [--cold-runs 15]

For each size: opens (and if needed builds) the index once, then times
- warm in-process `engine.search` (hybrid / fts / vector, top 10, log off), the way a
  server calls it: the index stays open in the `warm` dict; each call compares the cheap
  git/audit signature and runs the full freshness check (`git rev-parse` + `git status`)
  only when it changed or `search.freshness_seconds` passed — that full check is timed
  on its own (`freshness_check_p50_ms`);
- `vouch search QUERY` as a cold process (interpreter start, imports, index open, query,
  JSON out), p50 wall and CPU time over --cold-runs runs (bench/common.py: bytecode
  caching on), next to `vouch --version` as the floor of any command;
- the same cold commands answered by the knowledge base's warm process (`vouch warm
  start`; `via_warm_*`), and a hybrid one right after a knowledge file changed;
- "second search in a row" (`auto_*`, issue 35 item 5): with no warm process, a first
  hybrid search (which answers cold, then starts one: `vouch.autostart`), a wait until
  that process answers, then the next searches, hybrid and fts-only; `--version` timed
  in the same rounds, and each p50's ratio to it (`ratio_*`; the cold ones against the
  cold `--version`).
Targets (issue 5): warm p50 <= 10 ms at 10k chunks and <= 40 ms at 100k; cold <= 250 ms
at 10k. Read-only: the knowledge base is left as generated (the search log is removed).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import bench_env, percentile, summary, time_cold_cpu, vouch_exe
from generate import ensure

from vouch import autostart, forward
from vouch.search import access
from vouch.search.engine import SearchRequest, search
from vouch.store.kb import KB

OUT = Path(__file__).resolve().parent / "out" / "search"
PARAPHRASES = (
    "how do we undo a broken release",
    "who looks after money movement",
    "what happens when the queue backs up",
    "slow pages for customers",
    "where are secrets kept",
)


def queries(index: Any, n: int, seed: int = 0) -> list[str]:
    """Query text drawn from the corpus (2-4 words of a random chunk) plus paraphrases."""
    rng = random.Random(seed)
    total = int(index.index.counts()["chunks"])
    infos = index.chunks(rng.sample(range(1, total + 1), min(total, n)))
    out = []
    for info in infos.values():
        words = [w.strip(".,;:()`'\"") for w in info.text.split() if len(w) > 3]
        if len(words) >= 2:
            out.append(" ".join(rng.sample(words, min(len(words), rng.randint(2, 4)))))
    out += list(PARAPHRASES)
    rng.shuffle(out)
    return out[:n]


def warm_search_ms(kb: KB, warm: dict[Any, Any], qs: list[str], mode: str) -> list[float]:
    """Milliseconds of each query through `engine.search` in this warm process (after
    one untimed warm-up search)."""
    search(kb, SearchRequest(query=qs[0], mode=mode, log=False), warm=warm)
    times = []
    for q in qs:
        t0 = time.perf_counter()
        search(kb, SearchRequest(query=q, mode=mode, log=False), warm=warm)
        times.append((time.perf_counter() - t0) * 1000)
    return times


def pct(values: list[float], p: float) -> float:
    return percentile(values, p)


def bench(
    claims: int, n_queries: int, cold_runs: int, warm_process: bool, auto_rounds: int
) -> dict[str, Any]:
    # a private copy: other benchmarks rebuild the shared bench/out/kb-N indexes
    root = ensure(claims, out_dir=OUT)
    kb = KB.open(root)
    warm: dict[Any, Any] = {}
    started = time.perf_counter()
    index = access.open_index(kb, warm)
    opened = time.perf_counter() - started
    chunks = int(index.index.counts()["chunks"])
    qs = queries(index, n_queries)
    out: dict[str, Any] = {
        "claims": claims,
        "chunks": chunks,
        "open_s": round(opened, 2),
        "queries": len(qs),
    }
    for mode in ("hybrid", "fts", "vector"):
        times = warm_search_ms(kb, warm, qs, mode)
        out[f"warm_{mode}_p50_ms"] = round(pct(times, 50), 2)
        out[f"warm_{mode}_p95_ms"] = round(pct(times, 95), 2)
    fresh = []
    for _ in range(50):
        t0 = time.perf_counter()
        index.index.ensure_fresh()
        fresh.append((time.perf_counter() - t0) * 1000)
    out["freshness_check_p50_ms"] = round(pct(fresh, 50), 2)
    exe = vouch_exe()
    version = [exe, "--version"]
    fts = [exe, "search", qs[0], "--kb", str(root), "--fts-only"]
    hybrid = [exe, "search", qs[0], "--kb", str(root)]
    for label, cmd in (("version", version), ("fts", fts), ("hybrid", hybrid)):
        walls, cpus = time_cold_cpu(cmd, cold_runs)
        out[f"cold_{label}_p50_ms"] = summary(walls)["p50_ms"]
        out[f"cold_{label}_p95_ms"] = summary(walls)["p95_ms"]
        out[f"cold_{label}_cpu_p50_ms"] = summary(cpus)["p50_ms"]
        out[f"cold_{label}_cpu_p95_ms"] = summary(cpus)["p95_ms"]
    for label in ("fts", "hybrid"):
        out[f"ratio_cold_{label}"] = round(
            out[f"cold_{label}_p50_ms"] / out["cold_version_p50_ms"], 2
        )
    if auto_rounds:
        out.update(second_search_in_a_row(kb, auto_rounds, version, fts, hybrid))
    if warm_process:
        out.update(through_warm_process(exe, root, kb, cold_runs, version, fts, hybrid))
    (kb.dir / "searches.log.jsonl").unlink(missing_ok=True)
    return out


def through_warm_process(
    exe: str, root: Path, kb: KB, runs: int, *commands: list[str]
) -> dict[str, Any]:
    """The same cold commands with the knowledge base's warm process running (`vouch
    warm start`): each is still a new `vouch` process, answered by the warm one; and a
    hybrid search right after a knowledge file's mtime moved (the watch sees it, so
    the full freshness check runs in the search: an agent's write-then-search), and one
    a second after (the process checked meanwhile: a person's edit, then a query)."""
    env = bench_env()
    start = [exe, "warm", "start", "--kb", str(root), "--idle-seconds", "900"]
    subprocess.run(start, env=env, check=True, capture_output=True)
    out: dict[str, Any] = {}
    touched = next((kb.dir / "claims").rglob("*.yaml"))
    try:
        version, fts, hybrid = commands
        for label, cmd, before in (
            ("version", version, None),
            ("fts", fts, None),
            ("hybrid", hybrid, None),
            ("hybrid_after_edit", hybrid, lambda: os.utime(touched)),
            ("hybrid_1s_after_edit", hybrid, lambda: _touch_and_wait(touched, 1.0)),
        ):
            walls, cpus = time_cold_cpu(cmd, runs, before_each=before)
            out[f"via_warm_{label}_p50_ms"] = summary(walls)["p50_ms"]
            out[f"via_warm_{label}_p95_ms"] = summary(walls)["p95_ms"]
            out[f"via_warm_{label}_cpu_p50_ms"] = summary(cpus)["p50_ms"]
        shown = subprocess.run(
            [exe, "warm", "status", "--kb", str(root), "--json"],
            env=env,
            check=True,
            capture_output=True,
        )
        out["via_warm_answered"] = json.loads(shown.stdout)["requests"]
    finally:
        stop = [exe, "warm", "stop", "--kb", str(root)]
        subprocess.run(stop, env=env, check=False, capture_output=True)
    return out


# what keeps a search from starting a warm process, blanked for `second_search_in_a_row`
AUTO_ON = {name: "" for name in (forward.OFF, autostart.OFF, *autostart.CI_VARIABLES, "PRE_COMMIT")}
READY_SECONDS = 600.0  # a warm-up at 100k (index and model) takes a few seconds


def second_search_in_a_row(
    kb: KB, rounds: int, version: list[str], fts: list[str], hybrid: list[str]
) -> dict[str, Any]:
    """Each round: no warm process (stopped, its hold-off stamp removed); a hybrid
    search that may start none (VOUCH_NO_AUTO_WARM=1: the cold baseline, same moment),
    then one that does (it answers cold, then starts one), both timed; the wait until
    that process answers; then 3 hybrid, 3 fts-only and 3 `--version` runs,
    interleaved."""
    directory = forward.warm_dir(kb.state_dir, kb.dir)
    stop = [version[0], "warm", "stop", "--kb", str(kb.dir)]
    first: list[float] = []
    first_cpu: list[float] = []
    baseline: list[float] = []
    baseline_cpu: list[float] = []
    ready: list[float] = []
    walls: dict[str, list[float]] = {"version": [], "fts": [], "hybrid": []}
    cpus: dict[str, list[float]] = {"version": [], "fts": [], "hybrid": []}
    served_before = 0
    answered = 0
    try:
        for _ in range(rounds):
            subprocess.run(stop, env=bench_env(), check=False, capture_output=True)
            autostart.ended(directory)  # the stop's hold-off: a search may start one
            wall, cpu = time_cold_cpu(hybrid, 1, warmup=0)
            baseline += wall
            baseline_cpu += cpu
            wall, cpu = time_cold_cpu(hybrid, 1, env=AUTO_ON, warmup=0)
            first += wall
            first_cpu += cpu
            started = time.perf_counter()
            while True:
                found = forward.ask(directory, "status")
                if found is not None and found.get("status") == "ok":
                    break
                if time.perf_counter() - started > READY_SECONDS:
                    raise RuntimeError(f"no warm process started: see {directory}/warm.log")
                time.sleep(0.02)
            ready.append(time.perf_counter() - started)
            if not found.get("auto_started"):
                raise RuntimeError("the process answering was not started by the search")
            served_before = int(found["requests"])
            for _ in range(3):
                for label, cmd in (("hybrid", hybrid), ("fts", fts), ("version", version)):
                    wall, cpu = time_cold_cpu(cmd, 1, env=AUTO_ON, warmup=0)
                    walls[label] += wall
                    cpus[label] += cpu
            found = forward.ask(directory, "status") or {}
            answered += int(found.get("requests", 0)) - served_before
    finally:
        subprocess.run(stop, env=bench_env(), check=False, capture_output=True)
        autostart.ended(directory)
    out: dict[str, Any] = {
        "auto_no_start_hybrid_p50_ms": summary(baseline)["p50_ms"],
        "auto_no_start_hybrid_cpu_p50_ms": summary(baseline_cpu)["p50_ms"],
        "auto_first_hybrid_p50_ms": summary(first)["p50_ms"],
        "auto_first_hybrid_cpu_p50_ms": summary(first_cpu)["p50_ms"],
        "auto_ready_after_first_p50_s": round(percentile(ready, 50), 2),
    }
    for label in ("version", "fts", "hybrid"):
        out[f"auto_{label}_p50_ms"] = summary(walls[label])["p50_ms"]
        out[f"auto_{label}_p95_ms"] = summary(walls[label])["p95_ms"]
        out[f"auto_{label}_cpu_p50_ms"] = summary(cpus[label])["p50_ms"]
    for label in ("fts", "hybrid"):
        out[f"ratio_auto_{label}"] = round(
            out[f"auto_{label}_p50_ms"] / out["auto_version_p50_ms"], 2
        )
    out["auto_answered"] = f"{answered} of {6 * rounds}"  # searches the process answered
    return out


def _touch_and_wait(path: Path, seconds: float) -> None:
    os.utime(path)
    time.sleep(seconds)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--claims", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--cold-runs", type=int, default=15)
    parser.add_argument(
        "--no-warm-process",
        action="store_true",
        help="skip the cold commands answered by `vouch warm` (via_warm_*)",
    )
    parser.add_argument(
        "--auto-rounds",
        type=int,
        default=5,
        help="rounds of 'second search in a row' (auto_*; 0: skip)",
    )
    args = parser.parse_args()
    for claims in args.claims:
        result = bench(
            claims, args.queries, args.cold_runs, not args.no_warm_process, args.auto_rounds
        )
        print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
