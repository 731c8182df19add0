"""The incremental refresh: bring a valid index from the git state it recorded to the
current one, re-reading, re-chunking and re-embedding only the objects whose files
changed, in one SQLite transaction. (The full build is `build.py`; what both share is
`ingest.py`.)
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from vouch.embed import model as embed
from vouch.index import chunking, fitting, freshness, graph, store, vectors
from vouch.index.chunking import Doc
from vouch.index.ingest import (
    Invalid,
    Report,
    embed_texts,
    insert_docs,
    meta_values,
    read_doc,
    recorded_invalid,
)
from vouch.index.lexical import backend, instances
from vouch.index.settings import Settings
from vouch.index.state import Counts, indexed_state
from vouch.store.kb import KB

# Replaying more rows than this onto vectors.hnsw at load time costs more than
# rewriting the file once during a refresh (when hnswlib is here to rewrite it).
HNSW_MAX_LAG = 2048


def refresh(
    kb: KB, settings: Settings, conn: sqlite3.Connection, meta: store.Meta, now: freshness.State
) -> Report:
    """Bring a valid index from its recorded state to `now`, re-indexing only the
    objects whose files changed. Raises freshness.HistoryGone when git no longer has the
    indexed tree (the caller rebuilds)."""
    started = time.perf_counter()
    live = settings.index_dir
    recorded = meta.checksums
    if recorded is None:
        raise vectors.VectorFilesBroken("index_meta records no checksums")
    # rows are rewritten in place below: files that are not what was recorded would
    # otherwise be carried forward under new checksums
    vectors.verify_files(live, meta.vector_rows, meta.dims, recorded)
    before = indexed_state(meta)
    report = Report("refresh")
    touched: dict[tuple[str, str], None] = {}
    for path in sorted(freshness.changed_paths(kb, before, now)):
        found = chunking.doc_for_path(path)
        if found:
            touched[found] = None
    keys = [chunking.doc_key(k, i) for k, i in touched]

    labels = _entity_labels(conn, [(k, i) for k, i in touched if k == "relation"])
    docs: list[Doc] = []
    for kind, oid in touched:
        doc = read_doc(kb, kind, oid, labels, report.invalid)
        if doc is not None:
            docs.append(doc)
    invalid = _still_invalid(kb, recorded_invalid(meta.values), touched) + report.invalid
    parts = [chunking.vector_parts(c) for d in docs for c in d.chunks]
    embedder = embed.embedder(settings.model) if settings.model else None
    matrix = embed_texts(embedder, parts, None, fitting.load(conn, meta) if embedder else None)
    lex = backend(settings.lexical)
    words = _wordpiece(live, embedder, recorded[vectors.WORDPIECE])

    conn.execute("BEGIN IMMEDIATE")
    try:
        old_chunks: list[int] = []
        freed: list[int] = []
        existed: set[str] = set()
        counts = Counts.from_meta(meta)
        for part, marks in store.in_batches(keys):
            for cid, row in conn.execute(
                f"SELECT id, vec_row FROM chunks WHERE doc_key IN ({marks})", part
            ):
                old_chunks.append(int(cid))
                if row is not None:
                    freed.append(int(row))
            for key, kind, fmt in conn.execute(
                f"SELECT doc_key, kind, format FROM docs WHERE doc_key IN ({marks})", part
            ):
                existed.add(str(key))
                counts.add(str(kind), str(fmt), -1)
            for table in ("chunks", "docs", "doc_tags", "headings"):
                conn.execute(f"DELETE FROM {table} WHERE doc_key IN ({marks})", part)
        conn.executemany(
            "INSERT OR IGNORE INTO vec_free(vec_row) VALUES (?)", [(r,) for r in freed]
        )
        rows_total = meta.vector_rows
        new_rows: list[int | None] = [None] * len(parts)
        if embedder and parts:
            reuse = [
                int(r)
                for (r,) in conn.execute(
                    "SELECT vec_row FROM vec_free ORDER BY vec_row LIMIT ?", (len(parts),)
                )
            ]
            grow = len(parts) - len(reuse)
            new_rows = [*reuse, *range(rows_total, rows_total + grow)]
            rows_total += grow
            conn.executemany("DELETE FROM vec_free WHERE vec_row = ?", [(r,) for r in reuse])
        first = int(conn.execute("SELECT COALESCE(MAX(id), 0) + 1 FROM chunks").fetchone()[0])
        lexical_rows = insert_docs(conn, docs, first, new_rows)
        if embedder and parts:
            vectors.write_rows(
                live,
                settings.dims,
                [int(r) for r in new_rows if r is not None],
                matrix,
                range(first, first + len(parts)),
            )
        still_free = sorted(set(freed) - {r for r in new_rows if r is not None})
        if still_free:
            vectors.clear_rows(live, settings.dims, still_free)
        changed_rows = sorted(set(freed) | {r for r in new_rows if r is not None})
        if meta.graph_size is not None:  # replayed onto the graph when it is loaded
            conn.executemany(
                "INSERT OR IGNORE INTO vec_dirty(vec_row) VALUES (?)",
                [(r,) for r in changed_rows],
            )
        written = int(meta.values.get(instances.PART_META, "0")) + 1
        instances.write_changes(conn, written, old_chunks, range(first, first + len(parts)))
        lex.remove(live, old_chunks)
        lex.add(live, lexical_rows)
        hnsw = (meta["vector_sha256"], meta.hnsw_size)
        lag = int(conn.execute("SELECT COUNT(*) FROM vec_dirty").fetchone()[0])
        if embedder and lag > max(HNSW_MAX_LAG, rows_total // 20) and graph.available():
            hnsw = _rewrite_graph(live, conn, settings.dims, rows_total, meta)
        for d in docs:
            counts.add(d.kind, d.format)
        counts.chunks += len(parts) - len(old_chunks)
        counts.vectors += (len(parts) if embedder else 0) - len(freed)
        checksums = {**vectors.matrix_checksums(live), vectors.WORDPIECE: words}
        fit = {k: meta.values[k] for k in store.FIT_META}
        values = meta_values(settings, now, rows_total, hnsw, counts, checksums, invalid, fit)
        store.write_meta(conn, {**values, instances.PART_META: written})
        conn.execute("COMMIT")
    except BaseException:
        # rows already rewritten no longer match the recorded checksums: the next
        # open that checks them rebuilds the index
        conn.execute("ROLLBACK")
        raise
    report.reindexed = len(docs)
    report.removed = len(existed - {d.key for d in docs})
    report.embedded = len(parts) if embedder else 0
    report.documents, report.chunks = counts.documents, counts.chunks
    report.seconds = time.perf_counter() - started
    return report


def _still_invalid(
    kb: KB, recorded: list[Invalid], touched: dict[tuple[str, str], None]
) -> list[Invalid]:
    """The files left out before that this refresh did not read again."""
    prefix = kb.rel(".") + "/"  # recorded paths are repository paths
    return [
        i for i in recorded if chunking.doc_for_path(i["path"].removeprefix(prefix)) not in touched
    ]


def _wordpiece(live: Path, embedder: embed.Embedder | None, recorded: str) -> str:
    """vectors.words as recorded, or written again: a query ignores a damaged or missing
    table (and tokenizes ~25 ms slower), so the next refresh repairs it."""
    if vectors.wordpiece_checksum(live) == recorded:
        return recorded
    return vectors.write_wordpiece(live, embedder.wordpiece_table() if embedder else None)


def _entity_labels(conn: sqlite3.Connection, relations: list[tuple[str, str]]) -> dict[str, str]:
    """Names of all entities, for relation chunks (`A uses B`); from the index itself so
    a refresh does not read every entity file."""
    if not relations:
        return {}
    return {
        str(oid): str(title)
        for oid, title in conn.execute("SELECT object_id, title FROM docs WHERE kind = 'entity'")
    }


def _rewrite_graph(
    live: Path, conn: sqlite3.Connection, dims: int, rows: int, meta: store.Meta
) -> tuple[str, int]:
    """Fold the replay list into a new vectors.hnsw (written aside, then renamed)."""
    vectors.check_sizes(live, rows, dims, meta.graph_size)
    matrix, idmap = vectors.open_matrix(live, rows, dims)
    dirty = [int(r) for (r,) in conn.execute("SELECT vec_row FROM vec_dirty")]
    loaded = graph.load(live, dims, meta["vector_sha256"], matrix, idmap, dirty)
    hnsw = graph.save(live, loaded)
    conn.execute("DELETE FROM vec_dirty")
    return hnsw
