"""Lexical search backends behind one interface: `fts5` (default) and `whoosh`.

Both index the same chunks (title, section, text) and answer the same bag-of-words AND
query (spec search-index-lifecycle "Query tokenization"), with snippets marked
`[MATCH]…[/MATCH]`. The FTS5 table lives in search.db and follows the chunks table by
triggers; whoosh keeps its own directory beside it and is told about changes.
"""

from __future__ import annotations

from vouch.errors import UsageError
from vouch.index.lexical.base import (
    BACKENDS,
    Backend,
    ChunkRow,
    LexicalHit,
    fts5_query,
    query_terms,
)

__all__ = ["BACKENDS", "Backend", "ChunkRow", "LexicalHit", "backend", "fts5_query", "query_terms"]


def backend(name: str) -> Backend:
    if name == "fts5":
        from vouch.index.lexical.fts5 import Fts5Backend

        return Fts5Backend()
    if name == "whoosh":
        from vouch.index.lexical.whoosh import WhooshBackend

        return WhooshBackend()
    raise UsageError(
        f"unknown lexical backend {name!r} (index.lexical)", hint="one of: " + ", ".join(BACKENDS)
    )
