"""The local search log: every search appends one line; `vouch stats` reads them back.

`.vouch/searches.log.jsonl` is gitignored (local usage, not knowledge). A line is
`{query, mode, result_count, error, duration_ms, at}`. Logging never fails a search:
an unwritable log is skipped silently because the search itself succeeded.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from vouch.core import safeload
from vouch.core.ids import now_iso

LOG_NAME = "searches.log.jsonl"


def log_path(vouch_dir: Path) -> Path:
    return vouch_dir / LOG_NAME


def record(
    vouch_dir: Path,
    *,
    query: str,
    mode: str,
    result_count: int,
    error: str | None,
    duration_ms: float,
    transport: str = "cli",
) -> None:
    entry = {
        "query": query,
        "mode": mode,
        "result_count": result_count,
        "error": error,
        "duration_ms": round(duration_ms, 3),
        "at": now_iso(),
        "transport": transport,
    }
    line = (json.dumps(entry, ensure_ascii=False) + "\n").encode("utf-8")
    # a read-only checkout can still search; the log is a convenience, so it is not
    # fsync'ed (that can cost a cold search several ms on a real disk): one O_APPEND
    # write keeps every line whole, and a crash loses at most the last entries
    if os.path.islink(vouch_dir):
        return  # a committed link would lead the write out of the repository
    with contextlib.suppress(OSError):  # O_NOFOLLOW: nor through a linked log (ELOOP)
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(log_path(vouch_dir), flags, 0o644)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)


LINE_MAX = 1 << 20  # vouch writes lines of a few hundred bytes; a longer one is skipped


def read(vouch_dir: Path) -> Iterator[dict[str, Any]]:
    """Log entries, oldest first; unreadable lines (a crash mid-write, a hand edit) are
    skipped, and a line past `LINE_MAX` is skipped without being held whole (the log is
    local, but a branch can commit one)."""
    try:
        fh = open(log_path(vouch_dir), "rb")  # noqa: SIM115
    except FileNotFoundError:
        return
    with fh:
        while line := fh.readline(LINE_MAX + 1):
            if len(line) > LINE_MAX:
                while line and not line.endswith(b"\n"):
                    line = fh.readline(LINE_MAX + 1)
                continue
            try:
                entry = safeload.json_value(line.decode("utf-8", "replace"), "search log line")
            except safeload.Unreadable:
                continue
            if (
                isinstance(entry, dict)
                and isinstance(entry.get("query"), str)
                and isinstance(entry.get("result_count", 0), int | None)
            ):
                yield entry


def stats(vouch_dir: Path, *, top: int = 10) -> dict[str, Any]:
    """Most frequent queries and the queries that found nothing (the gaps in the KB)."""
    total = errors = 0
    frequent: Counter[str] = Counter()
    empty: Counter[str] = Counter()
    results: dict[str, list[int]] = {}
    durations: list[float] = []
    for entry in read(vouch_dir):
        total += 1
        query = " ".join(entry["query"].split()).lower()
        if entry.get("error"):
            errors += 1
            continue
        frequent[query] += 1
        count = int(entry.get("result_count") or 0)
        results.setdefault(query, []).append(count)
        if count == 0:
            empty[query] += 1
        if isinstance(entry.get("duration_ms"), int | float):
            durations.append(float(entry["duration_ms"]))
    durations.sort()
    return {
        "searches": total,
        "errors": errors,
        "distinct_queries": len(frequent),
        "median_ms": durations[len(durations) // 2] if durations else None,
        "top_queries": [
            {"query": q, "count": n, "avg_results": round(sum(results[q]) / len(results[q]), 2)}
            for q, n in frequent.most_common(top)
        ],
        "zero_result_queries": [{"query": q, "count": n} for q, n in empty.most_common(top)],
    }
