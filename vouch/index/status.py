"""`vouch index status`: what state the index is in, without changing it."""

from __future__ import annotations

from typing import Any

from vouch.errors import IndexCollision
from vouch.index import freshness, store, vectors
from vouch.index.lexical.whoosh import DIRNAME as WHOOSH_DIR
from vouch.index.settings import Settings
from vouch.index.state import indexed_state, knowledge_changed
from vouch.kb import KB

_FILES = (store.DB_NAME, store.DB_NAME + "-wal", vectors.MATRIX, vectors.IDS, vectors.HNSW)


def _sizes(kb: KB) -> dict[str, int]:
    directory = store.index_dir(kb.dir)
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


def index_status(kb: KB) -> dict[str, Any]:
    """state: fresh | stale | missing | corrupt | collision, with counts, model, sizes."""
    from vouch.index.api import Index

    settings = Settings.of(kb)
    directory = store.index_dir(kb.dir)
    out: dict[str, Any] = {
        "path": str(directory),
        "state": "missing",
        "reason": None,
        "auto_refresh": settings.auto_refresh,
        "model": {"configured": settings.model.name if settings.model else None,
                  "id": settings.model_id, "dims": settings.dims},
        "lexical": settings.lexical,
        "tokenizer": settings.tokenizer,
        "sizes": _sizes(kb),
    }
    if not (directory / store.DB_NAME).is_file():
        out["reason"] = "no index has been built"
        return out
    try:
        index = Index._validated(kb, settings)
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
        out.update(
            counts=index.counts(),
            indexed_at=meta["indexed_at"],
            corpus_revision=meta["corpus_revision"],
            source_hash=meta["source_hash"],
            current_source_hash=now.source_hash,
            indexed_model=meta["embedding_model"],
            schema_version=meta.schema_version,
            hnsw_pending_rows=int(index.conn.execute(
                "SELECT COUNT(*) FROM vec_dirty").fetchone()[0]),
        )
    finally:
        index.close()
    return out

