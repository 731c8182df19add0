"""The derived search index: the only writer of `.vouch/index/`.

`Index.open(kb)` gives a fresh index (rebuilt when missing or corrupt, refreshed
incrementally from git when stale); `rebuild_index(kb)` and `index_status(kb)` serve
`vouch index rebuild|status`. See api.py for the query primitives.
"""

from __future__ import annotations

from vouch.index.api import ChunkInfo, Index, VectorHit, open_index, rebuild_index
from vouch.index.filters import Filters
from vouch.index.lexical import LexicalHit
from vouch.index.status import index_status

__all__ = ["ChunkInfo", "Filters", "Index", "LexicalHit", "VectorHit", "index_status",
           "open_index", "rebuild_index"]
