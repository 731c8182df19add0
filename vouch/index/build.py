"""The full build: a complete index written aside, then swapped in.

A full build writes a complete index into `index/.build-<random>/` and then moves its
files over the live ones; the live search.db is replaced last, with one rename, so a
reader sees the old index or the new one. (The incremental refresh is `refresh.py`; what
both share is `ingest.py`.)
"""

from __future__ import annotations

import contextlib
import gc
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from vouch.core.progress import Progress, each, step
from vouch.embed import model as embed
from vouch.index import chunking, fitting, freshness, graph, store, vectors
from vouch.index.chunking import Doc
from vouch.index.ingest import Report, embed_fitting, insert_docs, meta_values, read_doc
from vouch.index.lexical import backend, instances
from vouch.index.settings import Settings
from vouch.index.state import Counts
from vouch.kinds import KINDS
from vouch.store.kb import KB


# -- reading every object ----------------------------------------------------------------
def _all_docs(kb: KB, report: Report, progress: Progress | None) -> list[Doc]:
    """Every object through the kinds' one validating reader; invalid files are noted
    in the report and left out."""
    wanted = [
        (kind, oid)
        for kind in ("entity", "claim", "relation", "page", "source")
        for oid in kb.ids(KINDS[kind])
    ]
    labels: dict[str, str] = {}
    docs: list[Doc] = []
    for kind, oid in each(wanted, progress, "indexing: reading", every=500):
        doc = read_doc(kb, kind, oid, labels, report.invalid)
        if doc is not None:
            docs.append(doc)
            if kind == "entity":
                labels[oid] = doc.title
    return docs


# -- building aside and swapping ---------------------------------------------------------
def rebuild(kb: KB, settings: Settings, progress: Progress | None = None) -> Report:
    """Build a complete index aside and swap it in. The caller holds the index lock."""
    started = time.perf_counter()
    live = settings.index_dir
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


def _rebuild(
    kb: KB, settings: Settings, live: Path, started: float, progress: Progress | None
) -> Report:
    import numpy as np

    report = Report("rebuild")
    state = freshness.current(kb)  # before reading: a change made meanwhile shows as stale
    t = report.lap("git", started)
    aside = Path(tempfile.mkdtemp(prefix=".build-", dir=live))
    try:
        docs = _all_docs(kb, report, progress)
        t = report.lap("read", t)
        parts = [chunking.vector_parts(c) for d in docs for c in d.chunks]
        embedder = embed.embedder(settings.model) if settings.model else None
        matrix, fit = embed_fitting(embedder, parts, progress)
        t = report.lap("embed", t)
        step(progress, "indexing: writing")
        conn = store.connect(aside / store.DB_NAME, create=True)
        try:
            store.create_schema(conn, settings.tokenizer)
            conn.execute("BEGIN")
            vec_rows: list[int | None] = (
                list(range(len(parts))) if embedder else [None] * len(parts)
            )
            lexical_rows = insert_docs(conn, docs, 1, vec_rows)
            fitting.write(conn, fit)
            store.finish_schema(conn)
            instances.write_all(conn)
            t = report.lap("sqlite", t)
            chunk_ids = np.arange(1, len(parts) + 1, dtype=np.int64)
            if not embedder:
                chunk_ids = chunk_ids[:0]
            vectors.write_all(aside, matrix, chunk_ids)
            hnsw = graph.write(aside, matrix)
            checksums = vectors.matrix_checksums(aside)
            checksums[vectors.WORDPIECE] = vectors.write_wordpiece(
                aside, embedder.wordpiece_table() if embedder else None
            )
            t = report.lap("vectors", t)
            lex = backend(settings.lexical)
            lex.create(aside)
            lex.add(aside, lexical_rows)
            t = report.lap("lexical", t)
            counts = Counts(chunks=len(parts), vectors=len(chunk_ids))
            for d in docs:
                counts.add(d.kind, d.format)
            fittable = embedder is not None and embedder.fittable()
            store.write_meta(
                conn,
                meta_values(
                    settings,
                    state,
                    int(matrix.shape[0]),
                    hnsw,
                    counts,
                    checksums,
                    report.invalid,
                    fitting.meta_values(fit, len(parts), fittable),
                ),
            )
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
    report.chunks = report.embedded = len(parts)
    if not settings.model:
        report.embedded = 0
    report.reindexed = len(docs)
    report.seconds = time.perf_counter() - started
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
    for name in (vectors.MATRIX, vectors.IDS):
        os.replace(aside / name, live / name)
    for name in (vectors.HNSW, vectors.WORDPIECE):  # optional: none left from an older build
        if (aside / name).exists():
            os.replace(aside / name, live / name)
        else:
            (live / name).unlink(missing_ok=True)
    for suffix in ("-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(live / (store.DB_NAME + suffix))
    os.replace(aside / store.DB_NAME, live / store.DB_NAME)
