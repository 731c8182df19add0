"""Writing the derived index: a full build aside with an atomic swap, and incremental
refreshes from the git diff between the indexed state and now.

A full build writes a complete index into `index/.build-<random>/` and then moves its
files over the live ones; the live search.db is replaced last, with one rename, so a
reader sees the old index or the new one. An incremental refresh re-reads, re-chunks
and re-embeds only the objects whose files changed, in one SQLite transaction.
"""

from __future__ import annotations

import contextlib
import gc
import os
import shutil
import sqlite3
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vouch import embed, ids
from vouch.errors import CorruptFile
from vouch.index import chunking, fastyaml, freshness, store, vectors
from vouch.index.chunking import Doc
from vouch.index.lexical import ChunkRow, backend
from vouch.index.settings import Settings
from vouch.index.state import Counts, index_lock, indexed_state  # noqa: F401 - re-exported
from vouch.kb import KB
from vouch.kinds import KINDS
from vouch.kinds import source as source_kind

Progress = Callable[[str, int, int], None]  # (stage, done, total)
EMBED_BATCH = 16384  # texts per model2vec call (progress is reported between calls)
# Replaying more rows than this onto vectors.hnsw at load time costs more than
# rewriting the file once during a refresh.
HNSW_MAX_LAG = 2048


@dataclass
class Report:
    """What a build or refresh did; the counts let tests and `index status` check that a
    refresh touched only what changed."""

    mode: str  # "rebuild" | "refresh" | "none"
    documents: int = 0  # documents (objects) indexed in total
    chunks: int = 0
    reindexed: int = 0  # documents re-read and re-chunked by this run
    removed: int = 0  # documents dropped by this run
    embedded: int = 0  # chunks embedded by this run
    skipped: list[str] = field(default_factory=list)  # unreadable files, left out
    seconds: float = 0.0
    stages: dict[str, float] = field(default_factory=dict)  # seconds per stage

    def lap(self, stage: str, since: float) -> float:
        now = time.perf_counter()
        self.stages[stage] = round(self.stages.get(stage, 0.0) + now - since, 3)
        return now

    def to_json(self) -> dict[str, Any]:
        return {"mode": self.mode, "documents": self.documents, "chunks": self.chunks,
                "reindexed": self.reindexed, "removed": self.removed,
                "embedded": self.embedded, "skipped": self.skipped,
                "seconds": round(self.seconds, 3), "stages": self.stages}


# -- reading documents -------------------------------------------------------------------
def read_doc(kb: KB, kind: str, object_id: str, labels: dict[str, str]) -> Doc | None:
    """The doc for one object as its files are now; None when it is gone.

    A file that does not parse raises CorruptFile; callers leave it out and report it.
    """
    if kind == "source":
        meta = kb.read(source_kind.KIND, object_id)
        if meta is None:
            return None
        content = kb.source_content(object_id)
        return chunking.source_doc(meta, content, kb.rel(source_kind.path_for(object_id)))
    k = KINDS[kind]
    obj = kb.read(k, object_id)
    if obj is None:
        return None
    return chunking.object_doc(kind, obj, kb.rel(k.path_for(object_id)), labels)


# The string fields each small kind needs for its chunk. Files vouch wrote are read by
# fastyaml without full parsing and validation (0.3 ms a file, most of a rebuild);
# anything unusual goes through the validating reader.
_FAST_FIELDS = {"claim": ("id", "text"), "entity": ("id", "name"),
                "relation": ("id", "source", "relation", "target"),
                "page": ("id", "title", "body"), "source": ("id", "locator")}
_OPTIONAL_STR = ("type", "status", "description", "title", "media_type")
_OPTIONAL_LIST = ("tags", "aliases")


def _fast_doc(kb: KB, prefix: str, kind: str, oid: str,
              labels: dict[str, str]) -> Doc | None:
    """An object read through fastyaml; None when its file is anything but a plain,
    well-typed object in vouch's own layout (the caller then takes the validating
    path, which also reports broken files)."""
    rel = source_kind.path_for(oid) if kind == "source" else KINDS[kind].path_for(oid)
    try:
        with open(os.path.join(kb.dir, rel), encoding="utf-8") as fh:
            text = fh.read()
    except (OSError, UnicodeDecodeError):
        return None
    if kind == "page":
        split = fastyaml.split_page(text)
        data = None if split is None else {**split[0], "body": split[1]}
    else:
        data = fastyaml.parse(text)
    if not _plain_object(data, oid, _FAST_FIELDS[kind]):
        return None
    assert data is not None
    if kind == "source":
        if data.get("metadata") not in (None, {}):
            return None  # nested metadata: only the real parser reads it
        try:
            content: bytes | None = (kb.dir / source_kind.content_path_for(oid)).read_bytes()
        except FileNotFoundError:
            content = None
        return chunking.source_doc(data, content, f"{prefix}/{rel}")
    return chunking.object_doc(kind, data, f"{prefix}/{rel}", labels)


def _plain_object(data: dict[str, Any] | None, oid: str, required: tuple[str, ...]) -> bool:
    if not isinstance(data, dict) or data.get("id") != oid:
        return False
    if not all(isinstance(data.get(f), str) for f in required):
        return False
    if any(data.get(f) is not None and not isinstance(data[f], str) for f in _OPTIONAL_STR):
        return False
    for f in _OPTIONAL_LIST:
        value = data.get(f)
        if value is not None and not (isinstance(value, list)
                                      and all(isinstance(v, str) for v in value)):
            return False
    return True


def _all_docs(kb: KB, report: Report, progress: Progress | None) -> list[Doc]:
    wanted = [(kind, oid) for kind in ("entity", "claim", "relation", "page", "source")
              for oid in kb.ids(KINDS[kind])]
    prefix = kb.dir.relative_to(kb.root).as_posix()
    labels: dict[str, str] = {}
    docs: list[Doc] = []
    for n, (kind, oid) in enumerate(wanted, 1):
        try:
            doc = _fast_doc(kb, prefix, kind, oid, labels) if kind in _FAST_FIELDS else None
            if doc is None:
                doc = read_doc(kb, kind, oid, labels)
        except CorruptFile as exc:
            report.skipped.append(str(exc))
            doc = None
        if doc is not None:
            docs.append(doc)
            if kind == "entity":
                labels[oid] = doc.title
        if progress and (n % 500 == 0 or n == len(wanted)):
            progress("reading", n, len(wanted))
    return docs


# -- inserting ---------------------------------------------------------------------------
def _insert_docs(conn: sqlite3.Connection, docs: Sequence[Doc], first_id: int,
                 vec_rows: Sequence[int | None]) -> list[ChunkRow]:
    """Insert docs, chunks (ids from `first_id`), tags and headings; returns the rows the
    lexical backend indexes. `vec_rows[i]` is the vector row of the i-th chunk."""
    doc_rows: list[tuple[Any, ...]] = []
    chunk_rows: list[tuple[Any, ...]] = []
    tag_rows: list[tuple[str, str]] = []
    heading_rows: list[tuple[Any, ...]] = []
    lexical: list[ChunkRow] = []
    cid = first_id
    n = 0
    for d in docs:
        doc_rows.append((d.key, d.kind, d.object_id, d.path, d.title, d.type, d.status,
                         d.format, d.locator, len(d.chunks)))
        tag_rows.extend((d.key, t) for t in dict.fromkeys(d.tags))
        heading_rows.extend((d.key, d.object_id, d.path, h.text, h.level, h.start_line,
                             h.end_line) for h in d.headings)
        for c in d.chunks:
            chunk_rows.append((cid, d.key, d.kind, d.object_id, c.chunk_index, c.total_chunks,
                               c.title, c.section, c.text, d.type, d.status, d.format, d.path,
                               c.page, c.start_line, c.end_line, vec_rows[n]))
            lexical.append(ChunkRow(cid, c.title, c.section, c.text, d.kind, d.type,
                                    d.status, d.format, d.key, tuple(d.tags)))
            cid += 1
            n += 1
    conn.executemany("INSERT INTO docs VALUES (?,?,?,?,?,?,?,?,?,?)", doc_rows)
    conn.executemany("INSERT OR IGNORE INTO doc_tags(doc_key, tag) VALUES (?,?)", tag_rows)
    conn.executemany("INSERT INTO headings(doc_key, object_id, path, text, level, start_line, "
                     "end_line) VALUES (?,?,?,?,?,?,?)", heading_rows)
    conn.executemany("INSERT INTO chunks VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", chunk_rows)
    return lexical


def _embed(embedder: embed.Embedder | None, texts: list[str],
           progress: Progress | None) -> Any:
    import numpy as np

    dims = embedder.dims if embedder else 0
    if embedder is None or not texts:
        return np.zeros((len(texts) if embedder else 0, dims), dtype=np.float32)
    parts = []
    for start in range(0, len(texts), EMBED_BATCH):
        parts.append(embedder.encode(texts[start:start + EMBED_BATCH]))
        if progress:
            progress("embedding", min(start + EMBED_BATCH, len(texts)), len(texts))
    return np.concatenate(parts, axis=0)


def corpus_revision(source_hash: str, settings: Settings) -> str:
    """Changes whenever what a search can return changes (content or how it is indexed)."""
    return ids.sha256_hex(
        f"{source_hash}|{store.SCHEMA_VERSION}|{chunking.CHUNKER_VERSION}|"
        f"{settings.model_id}|{settings.lexical}".encode())[:16]


def _meta_values(kb: KB, settings: Settings, state: freshness.State, rows: int,
                 hnsw: tuple[str, int], counts: Counts) -> dict[str, object]:
    return {
        "counts": counts.to_json(),
        "schema_version": store.SCHEMA_VERSION,
        "tokenizer": settings.tokenizer,
        "source_hash": state.source_hash,
        "kb_path": settings.kb_path,
        "embedding_model": settings.model_id,
        "embedding_dims": settings.dims,
        "chunker_version": chunking.CHUNKER_VERSION,
        "vector_sha256": hnsw[0],
        "hnsw_size": hnsw[1],
        "vector_rows": rows,
        "indexed_at": ids.now_iso(),
        "corpus_revision": corpus_revision(state.source_hash, settings),
        "lexical": settings.lexical,
        "tree": state.tree,
        "dirty": state.dirty_json(),
        "stamps": state.stamps_json(),
    }


# -- full build --------------------------------------------------------------------------
def rebuild(kb: KB, settings: Settings, progress: Progress | None = None) -> Report:
    """Build a complete index aside and swap it in. The caller holds the index lock."""
    started = time.perf_counter()
    live = store.index_dir(kb.dir)
    live.mkdir(parents=True, exist_ok=True)
    for leftover in live.glob(".build-*"):  # from a build that died (we hold the lock)
        shutil.rmtree(leftover, ignore_errors=True)
    with _gc_paused():
        return _rebuild(kb, settings, live, started, progress)


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """A build allocates ~10 objects per chunk and frees none of them until the end; the
    cyclic collector would re-scan them all again and again (~15% of a large build)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _rebuild(kb: KB, settings: Settings, live: Path, started: float,
             progress: Progress | None) -> Report:
    import numpy as np

    report = Report("rebuild")
    state = freshness.current(kb)  # before reading: a change made meanwhile shows as stale
    t = report.lap("git", started)
    aside = Path(tempfile.mkdtemp(prefix=".build-", dir=live))
    try:
        docs = _all_docs(kb, report, progress)
        t = report.lap("read", t)
        texts = [c.text for d in docs for c in d.chunks]
        embedder = embed.embedder(settings.model) if settings.model else None
        matrix = _embed(embedder, texts, progress)
        t = report.lap("embed", t)
        if progress:
            progress("vectors", 0, 1)
        conn = store.connect(aside / store.DB_NAME, create=True)
        try:
            store.create_schema(conn, settings.tokenizer)
            conn.execute("BEGIN")
            vec_rows: list[int | None] = (list(range(len(texts))) if embedder
                                          else [None] * len(texts))
            lexical_rows = _insert_docs(conn, docs, 1, vec_rows)
            store.finish_schema(conn)
            t = report.lap("sqlite", t)
            chunk_ids = np.arange(1, len(texts) + 1, dtype=np.int64)
            if not embedder:
                chunk_ids = chunk_ids[:0]
            hnsw = vectors.write_all(aside, matrix, chunk_ids)
            vectors.write_wordpiece(aside, embedder.wordpiece_table() if embedder else None)
            t = report.lap("vectors", t)
            lex = backend(settings.lexical)
            lex.create(aside)
            lex.add(aside, lexical_rows)
            t = report.lap("lexical", t)
            counts = Counts(chunks=len(texts), vectors=len(chunk_ids))
            for d in docs:
                counts.add(d.kind, d.format)
            store.write_meta(conn, _meta_values(kb, settings, state, int(matrix.shape[0]),
                                                hnsw, counts))
            conn.execute("COMMIT")
            # Leave a self-contained file: no -wal beside it once it is moved into place.
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            conn.close()
        _swap(aside, live)
        report.lap("commit", t)
    finally:
        shutil.rmtree(aside, ignore_errors=True)
    report.documents = len(docs)
    report.chunks = report.embedded = len(texts)
    if not settings.model:
        report.embedded = 0
    report.reindexed = len(docs)
    report.seconds = time.perf_counter() - started
    if progress:
        progress("done", 1, 1)
    return report


def _swap(aside: Path, live: Path) -> None:
    """Move the built files over the live ones; search.db last, as the commit point.

    The old database's -wal/-shm go first: SQLite would otherwise replay the old log
    onto the new file.
    """
    from vouch.index.lexical.whoosh import DIRNAME

    old_whoosh = live / DIRNAME
    if old_whoosh.exists():
        shutil.rmtree(old_whoosh, ignore_errors=True)
    if (aside / DIRNAME).exists():
        os.replace(aside / DIRNAME, old_whoosh)
    for name in (vectors.MATRIX, vectors.IDS, vectors.HNSW):
        os.replace(aside / name, live / name)
    if (aside / vectors.WORDPIECE).exists():
        os.replace(aside / vectors.WORDPIECE, live / vectors.WORDPIECE)
    else:
        (live / vectors.WORDPIECE).unlink(missing_ok=True)
    for suffix in ("-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(live / (store.DB_NAME + suffix))
    os.replace(aside / store.DB_NAME, live / store.DB_NAME)


# -- incremental refresh -----------------------------------------------------------------
def refresh(kb: KB, settings: Settings, conn: sqlite3.Connection, meta: store.Meta,
            now: freshness.State) -> Report:
    """Bring a valid index from its recorded state to `now`, re-indexing only the
    objects whose files changed. Raises freshness.HistoryGone when git no longer has the
    indexed tree (the caller rebuilds)."""
    started = time.perf_counter()
    live = store.index_dir(kb.dir)
    before = indexed_state(meta)
    report = Report("refresh")
    touched: dict[tuple[str, str], None] = {}
    for path in sorted(freshness.changed_paths(kb, before, now)):
        found = chunking.doc_for_path(path)
        if found:
            touched[found] = None
    keys = [chunking.doc_key(k, i) for k, i in touched]

    labels = _entity_labels(conn, [(k, i) for k, i in touched if k == "relation"], kb)
    docs: list[Doc] = []
    for kind, oid in touched:
        try:
            doc = read_doc(kb, kind, oid, labels)
        except CorruptFile as exc:
            report.skipped.append(str(exc))
            doc = None
        if doc is not None:
            docs.append(doc)
    texts = [c.text for d in docs for c in d.chunks]
    embedder = embed.embedder(settings.model) if settings.model else None
    matrix = _embed(embedder, texts, None)
    lex = backend(settings.lexical)

    conn.execute("BEGIN IMMEDIATE")
    try:
        old_chunks: list[int] = []
        freed: list[int] = []
        existed: set[str] = set()
        counts = Counts.from_meta(meta)
        for start in range(0, len(keys), 500):
            part = keys[start:start + 500]
            marks = ",".join("?" * len(part))
            for cid, row in conn.execute(
                    f"SELECT id, vec_row FROM chunks WHERE doc_key IN ({marks})", part):
                old_chunks.append(int(cid))
                if row is not None:
                    freed.append(int(row))
            for key, kind, fmt in conn.execute(
                    f"SELECT doc_key, kind, format FROM docs WHERE doc_key IN ({marks})", part):
                existed.add(str(key))
                counts.add(str(kind), str(fmt), -1)
            for table in ("chunks", "docs", "doc_tags", "headings"):
                conn.execute(f"DELETE FROM {table} WHERE doc_key IN ({marks})", part)
        conn.executemany("INSERT OR IGNORE INTO vec_free(vec_row) VALUES (?)",
                         [(r,) for r in freed])
        rows_total = meta.vector_rows
        new_rows: list[int | None] = [None] * len(texts)
        if embedder and texts:
            reuse = [int(r) for (r,) in conn.execute(
                "SELECT vec_row FROM vec_free ORDER BY vec_row LIMIT ?", (len(texts),))]
            grow = len(texts) - len(reuse)
            new_rows = [*reuse, *range(rows_total, rows_total + grow)]
            rows_total += grow
            conn.executemany("DELETE FROM vec_free WHERE vec_row = ?", [(r,) for r in reuse])
        first = int(conn.execute("SELECT COALESCE(MAX(id), 0) + 1 FROM chunks").fetchone()[0])
        lexical_rows = _insert_docs(conn, docs, first, new_rows)
        if embedder and texts:
            vectors.write_rows(live, settings.dims, [int(r) for r in new_rows if r is not None],
                               matrix, range(first, first + len(texts)))
        still_free = sorted(set(freed) - {r for r in new_rows if r is not None})
        changed_rows = sorted(set(freed) | {r for r in new_rows if r is not None})
        conn.executemany("INSERT OR IGNORE INTO vec_dirty(vec_row) VALUES (?)",
                         [(r,) for r in changed_rows])
        lex.remove(live, old_chunks)
        lex.add(live, lexical_rows)
        hnsw = (meta["vector_sha256"], meta.hnsw_size)
        lag = int(conn.execute("SELECT COUNT(*) FROM vec_dirty").fetchone()[0])
        if embedder and lag > max(HNSW_MAX_LAG, rows_total // 20):
            hnsw = _rewrite_graph(live, conn, settings.dims, rows_total, meta)
        for d in docs:
            counts.add(d.kind, d.format)
        counts.chunks += len(texts) - len(old_chunks)
        counts.vectors += (len(texts) if embedder else 0) - len(freed)
        store.write_meta(conn, _meta_values(kb, settings, now, rows_total, hnsw, counts))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    if still_free:
        vectors.clear_rows(live, settings.dims, still_free)
    report.reindexed = len(docs)
    report.removed = len(existed - {d.key for d in docs})
    report.embedded = len(texts) if embedder else 0
    report.documents, report.chunks = counts.documents, counts.chunks
    report.seconds = time.perf_counter() - started
    return report


def _entity_labels(conn: sqlite3.Connection, relations: list[tuple[str, str]],
                   kb: KB) -> dict[str, str]:
    """Names of all entities, for relation chunks (`A uses B`); from the index itself so
    a refresh does not read every entity file."""
    if not relations:
        return {}
    return {str(oid): str(title) for oid, title in conn.execute(
        "SELECT object_id, title FROM docs WHERE kind = 'entity'")}


def _rewrite_graph(live: Path, conn: sqlite3.Connection, dims: int, rows: int,
                   meta: store.Meta) -> tuple[str, int]:
    """Fold the replay list into a new vectors.hnsw (written aside, then renamed)."""
    vectors.check_sizes(live, rows, dims, meta.hnsw_size)
    matrix, idmap = vectors.open_matrix(live, rows, dims)
    dirty = [int(r) for (r,) in conn.execute("SELECT vec_row FROM vec_dirty")]
    graph = vectors.load_graph(live, dims, meta["vector_sha256"], matrix, idmap, dirty)
    tmp = live / (vectors.HNSW + ".tmp")
    graph.save_index(str(tmp))
    os.replace(tmp, live / vectors.HNSW)
    conn.execute("DELETE FROM vec_dirty")
    path = live / vectors.HNSW
    return vectors.sha256_file(path), path.stat().st_size
