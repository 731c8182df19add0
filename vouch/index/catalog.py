"""Catalogue queries over an open index for search's listing commands (issue 5):
tag counts, per-object chunk counts and headings, and the status summary.

Kept beside the index because only `vouch/index/` touches SQLite; added by the search
work, read-only, and independent of how the index is built.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from vouch.index.api import Index
from vouch.index.store import DB_NAME, in_batches


def tag_counts(index: Index) -> list[dict[str, Any]]:
    """`[{"name", "count"}]`, most used first, then by name."""
    rows = index.conn.execute(
        "SELECT tag, COUNT(*) AS n FROM doc_tags GROUP BY tag ORDER BY n DESC, tag"
    ).fetchall()
    return [{"name": str(tag), "count": int(n)} for tag, n in rows]


def chunk_counts(index: Index, object_ids: Iterable[str]) -> dict[str, int]:
    wanted = list(dict.fromkeys(object_ids))
    out: dict[str, int] = {}
    for part, marks in in_batches(wanted):
        out.update(
            {
                str(oid): int(n)
                for oid, n in index.conn.execute(
                    f"SELECT object_id, n_chunks FROM docs WHERE object_id IN ({marks})", part
                )
            }
        )
    return out


def document(index: Index, object_id: str) -> dict[str, Any] | None:
    row = index.conn.execute(
        "SELECT doc_key, kind, object_id, path, title, type, status, format, locator, n_chunks "
        "FROM docs WHERE object_id = ? ORDER BY kind LIMIT 1",
        (object_id,),
    ).fetchone()
    if row is None:
        return None
    tags = [
        str(t)
        for (t,) in index.conn.execute(
            "SELECT tag FROM doc_tags WHERE doc_key = ? ORDER BY tag", (row[0],)
        )
    ]
    sections = [
        str(s)
        for (s,) in index.conn.execute(
            "SELECT section FROM chunks WHERE doc_key = ? ORDER BY chunk_index", (row[0],)
        )
    ]
    return {
        "kind": row[1],
        "id": row[2],
        "path": row[3],
        "title": row[4],
        "type": row[5],
        "status": row[6],
        "format": row[7],
        "locator": row[8],
        "chunk_count": row[9],
        "tags": tags,
        "sections": sections,
    }


def summary(index: Index) -> dict[str, Any]:
    """The index fields of `vouch status` (spec/search-output.md). The counts come from
    `index_meta`, which every build and refresh keeps current: no table scan (~0.1 s
    of GROUP BY at 100k documents)."""
    counts = index.counts()
    by_kind = {str(k): int(n) for k, n in sorted(counts["by_kind"].items()) if n}
    by_format = {str(k): int(n) for k, n in sorted(counts["by_format"].items()) if n}
    size = sum(p.stat().st_size for p in index.directory.glob(DB_NAME + "*") if p.is_file())
    return {
        "documents": by_kind,
        "formats": by_format,
        "total_chunks": int(counts["chunks"]),
        "db_size_bytes": size,
        "schema_version": index.meta.schema_version,
        "embedding_dim": index.meta.dims,
        "indexed_at": index.meta["indexed_at"],
        "corpus_revision": index.corpus_revision,
    }


def passing(index: Index, chunk_ids: Iterable[int], filters: Any) -> set[int]:
    """Which of `chunk_ids` pass `filters` (a `Filters`), in one indexed SQL lookup —
    cheaper than reading their full metadata when a vector search over-fetches."""
    wanted = list(dict.fromkeys(int(c) for c in chunk_ids))
    if not wanted:
        return set()
    where, params = filters.sql("c")
    marks = ",".join("?" * len(wanted))
    return {
        int(cid)
        for (cid,) in index.conn.execute(
            f"SELECT c.id FROM chunks c WHERE c.id IN ({marks}) AND {where}", [*wanted, *params]
        )
    }
