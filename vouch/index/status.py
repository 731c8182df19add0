"""`vouch index status`: what state the index is in, without changing it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from vouch.errors import IndexCollision, LockTimeout, PermissionDenied
from vouch.index import fitting, freshness, graph, state, store, vectors
from vouch.index.ingest import recorded_invalid
from vouch.index.lexical.whoosh import DIRNAME as WHOOSH_DIR
from vouch.index.settings import Settings
from vouch.index.state import indexed_state, knowledge_changed
from vouch.store.kb import KB

if TYPE_CHECKING:
    from vouch.index.api import Index

_FILES = (
    store.DB_NAME,
    store.DB_NAME + "-wal",
    vectors.MATRIX,
    vectors.IDS,
    vectors.HNSW,
    vectors.WORDPIECE,
)
# How long a damaged-looking index waits for a writer: a refresh rewrites matrix rows in
# place a moment before it commits their new checksums.
_WRITER_WAIT = 10.0


def _sizes(directory: Path) -> dict[str, int]:
    sizes: dict[str, int] = {}
    for name in _FILES:
        path = directory / name
        if path.is_file():
            sizes[name] = path.stat().st_size
    whoosh = directory / WHOOSH_DIR
    if whoosh.is_dir():
        sizes["whoosh"] = sum(p.stat().st_size for p in whoosh.iterdir() if p.is_file())
    sizes["total"] = sum(sizes.values())
    return sizes


def damage(index: Index) -> str | None:
    """Which derived file does not match its recorded checksum, and how (None: all do).

    Reads every file whole (~25 ms at 10k claims, most of it vectors.hnsw's sha256), as
    a search does only for the files it uses. The graph is checked only where hnswlib
    is installed: elsewhere nothing reads it, so nothing would ever repair it."""
    directory, meta = index.directory, index.meta
    recorded = meta.checksums
    if recorded is None:
        return None  # an older index: stale by its schema_version
    try:
        vectors.verify_files(directory, meta.vector_rows, meta.dims, recorded)
        if vectors.wordpiece_checksum(directory) != recorded[vectors.WORDPIECE]:
            return f"{vectors.WORDPIECE} does not match its recorded checksum"
        if graph.available():
            return graph.damage(directory, meta["vector_sha256"])
    except vectors.VectorFilesBroken as exc:
        return str(exc)
    except OSError as exc:
        return f"a vector file is unreadable: {exc}"
    return None


def _open_checked(kb: KB, settings: Settings) -> Index:
    """The index, validated and its files verified; Corrupt naming the first bad file."""
    from vouch.index.api import Index

    index = Index._validated(kb, settings)
    found = damage(index)
    if found is None:
        return index
    index.close()
    try:  # a writer may be between rewriting rows and committing their checksums
        with state.index_lock(settings.index_dir, timeout=_WRITER_WAIT):
            index = Index._validated(kb, settings)
            found = damage(index)
    except (LockTimeout, PermissionDenied):
        raise store.Corrupt(found) from None
    if found is None:
        return index
    index.close()
    raise store.Corrupt(found)


def vector_search(dims: int, has_graph: bool, rows: int) -> dict[str, Any]:
    """Which vector search this environment runs over this index of `rows` vectors:
    `vector_search` exact | graph | off, and `graph` {installed: hnswlib imports, built:
    the index has one}. The graph serves warm processes only (a server's second search
    on) over indexes of graph.EXACT_BELOW vectors or more; a cold command always searches
    the matrix exactly."""
    installed = graph.available()
    mode = "off" if not dims else "graph" if installed and graph.pays(rows) else "exact"
    return {"vector_search": mode, "graph": {"installed": installed, "built": has_graph}}


def index_status(kb: KB) -> dict[str, Any]:
    """state: fresh | stale | missing | corrupt | collision, with where the index lives
    (location: repository | cache | environment), counts, model and sizes, and the
    knowledge files its last build or refresh left out (`invalid`: path and reason;
    `invalid_files`: how many), and which vector search runs (`vector_search`)."""
    settings = Settings.of(kb)
    directory = settings.index_dir
    out: dict[str, Any] = {
        "path": str(directory),
        "location": settings.where,
        "state": "missing",
        "reason": None,
        "auto_refresh": settings.auto_refresh,
        "model": {
            "configured": settings.model.name if settings.model else None,
            "id": settings.model_id,
            "dims": settings.dims,
        },
        "lexical": settings.lexical,
        "tokenizer": settings.tokenizer,
        "sizes": _sizes(directory),
        **vector_search(settings.dims, False, 0),
        "invalid": [],
        "invalid_files": 0,
    }
    if not (directory / store.DB_NAME).is_file():
        out["reason"] = "no index has been built"
        return out
    try:
        index = _open_checked(kb, settings)
    except store.Corrupt as exc:
        out.update(state="corrupt", reason=str(exc))
        return out
    except IndexCollision as exc:
        out.update(state="collision", reason=exc.message)
        return out
    try:
        meta = index.meta
        now = freshness.current(kb, indexed_state(meta))
        mismatch = settings.mismatch(meta)
        if mismatch:
            out.update(state="stale", reason=mismatch)
        elif meta["source_hash"] != now.source_hash and knowledge_changed(kb, meta, now):
            out.update(state="stale", reason="knowledge files changed since it was built")
        else:
            out["state"] = "fresh"
        invalid = recorded_invalid(meta.values)
        out.update(
            counts=index.counts(),
            invalid=invalid,
            invalid_files=len(invalid),
            indexed_at=meta["indexed_at"],
            corpus_revision=meta["corpus_revision"],
            source_hash=meta["source_hash"],
            current_source_hash=now.source_hash,
            indexed_model=meta["embedding_model"],
            schema_version=meta.schema_version,
            vector_weights=fitting.describe(meta) if settings.dims else None,
            hnsw_pending_rows=int(
                index.conn.execute("SELECT COUNT(*) FROM vec_dirty").fetchone()[0]
            ),
        )
        out.update(vector_search(settings.dims, meta.graph_size is not None, meta.vector_rows))
    finally:
        index.close()
    return out
