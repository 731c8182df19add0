"""SQLite FTS5: the default lexical backend, ranked by bm25, filters in the same query."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

from vouch.index.filters import Filters
from vouch.index.lexical.base import ChunkRow, LexicalHit, fts5_query

# bm25 column weights: a hit in a title or heading says more than one in running text.
_WEIGHTS = (2.0, 1.5, 1.0)
SNIPPET_TOKENS = 32


class Fts5Backend:
    """The FTS5 table is part of search.db and follows `chunks` through triggers, so
    adding and removing are no-ops here."""

    name = "fts5"

    def create(self, directory: Path) -> None:
        return None

    def add(self, directory: Path, rows: Sequence[ChunkRow]) -> None:
        return None

    def remove(self, directory: Path, chunk_ids: Sequence[int]) -> None:
        return None

    def check(self, directory: Path) -> None:
        return None

    def query(
        self,
        conn: sqlite3.Connection,
        directory: Path,
        query: str,
        k: int,
        filters: Filters,
        match_any: bool = False,
    ) -> list[LexicalHit]:
        where, params = filters.sql("c")
        w = ", ".join(str(x) for x in _WEIGHTS)
        # (issue 5) Ordering by FTS5's own `rank` column, set to the weighted bm25 for
        # this query, lets FTS5 hand rows over in rank order: snippet() then runs only
        # for the rows returned, not for every match (half the time on common words).
        sql = (
            f"SELECT c.id, chunks_fts.rank, "
            f"snippet(chunks_fts, 2, '[MATCH]', '[/MATCH]', '...', {SNIPPET_TOKENS}) "
            f"FROM chunks_fts JOIN chunks c ON c.id = chunks_fts.rowid "
            f"WHERE chunks_fts MATCH ? AND chunks_fts.rank MATCH 'bm25({w})' AND {where} "
            f"ORDER BY chunks_fts.rank LIMIT ?"
        )
        rows = conn.execute(sql, [fts5_query(query, match_any), *params, k]).fetchall()
        return [LexicalHit(int(cid), -float(rank), str(snip or "")) for cid, rank, snip in rows]
