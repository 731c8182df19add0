"""Benchmark the derived index: full rebuild, incremental refresh, size on disk.

    python bench/bench_index.py --sizes 1000 10000 [100000] [--approvals 5]

For each size it uses the cached knowledge base from bench/generate.py and measures:
- `rebuild`: `vouch index rebuild` in-process (the model is loaded before timing, as in
  a warm process; its load time is reported separately), wall and CPU seconds (CPU of
  all threads: on a shared machine, wall time above CPU time is waiting for a core);
- `noop open`: `Index.open` on a fresh index (the freshness check every command pays);
- `refresh after one approval`: a new claim file committed on the checked-out branch
  (what `vouch approve` leaves), then `Index.open` — freshness check, diff, re-chunk,
  re-embed and the SQLite transaction — median over `--approvals` runs;
- the index size on disk per file.
The knowledge base is restored to its generated state afterwards.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

_HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(_HERE))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from generate import ensure, restore  # noqa: E402

from vouch.embed import model as embed  # noqa: E402
from vouch.index import Index, index_status, rebuild_index  # noqa: E402
from vouch.kinds import KINDS  # noqa: E402
from vouch.store.kb import KB, path_for  # noqa: E402


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "gc.auto=0", *args], cwd=root, check=True, capture_output=True)


def approve_one(kb: KB, n: int) -> None:
    """What an approval leaves behind: one new claim file, committed."""
    k = KINDS["claim"]
    obj = k.new(
        text=f"Benchmark approval number {n} adds a fresh observation",
        evidence=["a" * 64],
        tags=["bench"],
    )
    path = kb.dir / path_for(k, obj["id"])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(k.dump(obj), encoding="utf-8")
    _git(kb.root, "add", str(path))
    _git(kb.root, "commit", "-qm", f"approve {n}")


def bench(size: int, approvals: int, rebuild: bool = True) -> dict[str, object]:
    root = ensure(size)
    kb = KB.open(root)
    out: dict[str, object] = {"claims": size}
    try:
        started = time.perf_counter()
        ref = embed.resolve(kb.config, kb.root)
        assert ref is not None
        embed.embedder(ref).encode(["warm up"] * 100)  # > the few-text path: loads model2vec
        out["model_load_s"] = round(time.perf_counter() - started, 3)

        if rebuild:
            started, cpu = time.perf_counter(), time.process_time()
            report = rebuild_index(kb, force=True)
            out["rebuild_s"] = round(time.perf_counter() - started, 2)
            out["rebuild_cpu_s"] = round(time.process_time() - cpu, 2)  # all threads
            out["rebuild_stages_s"] = report.stages
            out["documents"] = report.documents
            out["chunks"] = report.chunks
        Index.open(kb).close()  # fresh (a refresh when an earlier run left it behind)

        opens = []
        for _ in range(5):
            started = time.perf_counter()
            Index.open(kb).close()
            opens.append(time.perf_counter() - started)
        out["noop_open_ms"] = round(statistics.median(opens) * 1000, 1)

        refreshes, inner = [], []
        for n in range(approvals):
            approve_one(kb, n)
            started = time.perf_counter()
            index = Index.open(kb)
            refreshes.append(time.perf_counter() - started)
            assert index.last_report is not None and index.last_report.mode == "refresh"
            assert index.last_report.reindexed == 1
            inner.append(index.last_report.seconds)
            index.close()
        out["refresh_after_approval_ms"] = round(statistics.median(refreshes) * 1000, 1)
        out["refresh_inner_ms"] = round(statistics.median(inner) * 1000, 1)
        status = index_status(kb)
        out["sizes_mb"] = {k: round(v / 1e6, 2) for k, v in status["sizes"].items()}
    finally:
        restore(root)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--approvals", type=int, default=5)
    parser.add_argument(
        "--no-rebuild",
        action="store_true",
        help="measure opens and refreshes on the existing index only",
    )
    args = parser.parse_args()
    for size in args.sizes:
        print(json.dumps(bench(size, args.approvals, not args.no_rebuild)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
