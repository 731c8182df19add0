"""The derived search index: the only writer of `.vouch/index/`.

`Index.open(kb)` gives a fresh index (rebuilt when missing or corrupt, refreshed
incrementally from git when stale); `rebuild_index(kb)` and `index_status(kb)` serve
`vouch index rebuild|status`. See api.py for the query primitives.

Modules: store (SQLite schema, meta), lexical/ (fts5, whoosh), vectors (the matrix and its
exact search), graph (the optional hnswlib graph), chunking, freshness (git identity,
diffs), build (full rebuild aside + swap), refresh (incremental, from the git diff), ingest
(what build and refresh share: read, embed, insert, meta), state (lock, counts, indexed
identity: what opening needs without the writers), location (`.vouch/index/` or a per-user
cache), settings, status, capabilities, methods (registry handlers).

Names are resolved lazily, so importing one submodule (`vouch.index.chunking`) does not
load the rest for a cold command.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vouch.index.api import Index, VectorHit, rebuild_index
    from vouch.index.filters import Filters
    from vouch.index.lexical import LexicalHit
    from vouch.index.rows import ChunkInfo
    from vouch.index.status import index_status

_WHERE = {
    "ChunkInfo": "vouch.index.rows",
    "Index": "vouch.index.api",
    "VectorHit": "vouch.index.api",
    "rebuild_index": "vouch.index.api",
    "Filters": "vouch.index.filters",
    "LexicalHit": "vouch.index.lexical",
    "index_status": "vouch.index.status",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'vouch.index' has no attribute {name!r}")
    return getattr(import_module(module), name)


__all__ = [
    "ChunkInfo",
    "Filters",
    "Index",
    "LexicalHit",
    "VectorHit",
    "index_status",
    "rebuild_index",
]
