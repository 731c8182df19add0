"""SQLite FTS5: the default lexical backend, ranked by bm25, filters in the same query."""

from __future__ import annotations

import contextlib
import re
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from vouch.index.filters import Filters
from vouch.index.lexical.base import ChunkRow, LexicalHit, fts5_query
from vouch.index.rows import by_id

# bm25 column weights: a hit in a title or heading says more than one in running text.
# The fourth column is a transcript turn's neighbouring turns (issue 19; empty for every
# other chunk): a hit there says the turn is part of the exchange, less than its own words.
CONTEXT_WEIGHT = 0.6  # LoCoMo conv 1-5, fts R@10: 0.15 69.3, 0.3 72.6, 0.6 72.5, 1.0 71.4
WEIGHTS = (2.0, 1.5, 1.0, CONTEXT_WEIGHT)
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
        """Ranked hits without snippets (`snippets` makes them for the rows shown): a
        search takes ~100 candidates per channel and shows ten."""
        where, params = filters.sql("c")
        w = ", ".join(str(x) for x in WEIGHTS)
        # (issue 5) Ordering by FTS5's own `rank` column, set to the weighted bm25 for
        # this query, lets FTS5 hand rows over in rank order.
        sql = (
            f"SELECT c.id, chunks_fts.rank "
            f"FROM chunks_fts JOIN chunks c ON c.id = chunks_fts.rowid "
            f"WHERE chunks_fts MATCH ? AND chunks_fts.rank MATCH 'bm25({w})' AND {where} "
            f"ORDER BY chunks_fts.rank LIMIT ?"
        )
        rows = conn.execute(sql, [fts5_query(query, match_any), *params, k]).fetchall()
        return [LexicalHit(int(cid), -float(rank), "") for cid, rank in rows]

    def snippets(
        self, conn: sqlite3.Connection, directory: Path, query: str, chunk_ids: Sequence[int]
    ) -> dict[int, str]:
        """FTS5's snippet of each chunk for any of the query's words (those it holds).

        Made on a scratch copy of just these rows (same columns, same tokenizer): a
        snippet depends on nothing but the row and the query, and FTS5 cannot look rows
        up by id inside a MATCH — on the index itself it walks every row holding any of
        the words (~2 ms for 10 snippets at 100k turns, against ~0.5)."""
        if not chunk_ids:
            return {}
        with shown(conn, chunk_ids) as table:
            found = table.execute(
                f"SELECT rowid, snippet(shown, {COLUMNS.index('text')}, '[MATCH]', '[/MATCH]', "
                f"'...', {SNIPPET_TOKENS}) FROM shown WHERE shown MATCH ?",
                [fts5_query(query, True, unique=True)],
            ).fetchall()
        return {int(cid): str(snip or "") for cid, snip in found}


COLUMNS = ("title", "section", "text", "context")  # of chunks_fts (index/store.py)
_OPTION = re.compile(r"tokenize\s*=\s*('(?:[^']|'')*'|\"(?:[^\"]|\"\")*\")", re.IGNORECASE)
_SCRATCH = threading.local()


def tokenize_option(conn: sqlite3.Connection) -> str:
    """chunks_fts's `tokenize=` argument as written (FTS5's default when none is)."""
    row = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'chunks_fts'").fetchone()
    found = _OPTION.search(str(row[0]) if row else "")
    return found.group(1) if found else "'unicode61'"


@contextlib.contextmanager
def scratch_session(option: str) -> Iterator[sqlite3.Connection]:
    """`scratch(option)` inside a transaction that is rolled back afterwards: what is
    inserted meanwhile is never deleted, no segment is written, the tables stay empty."""
    conn = scratch(option)
    conn.execute("BEGIN")
    try:
        yield conn
    finally:
        conn.execute("ROLLBACK")


@contextlib.contextmanager
def shown(conn: sqlite3.Connection, chunk_ids: Iterable[int]) -> Iterator[sqlite3.Connection]:
    """The scratch table `shown` holding these chunks of the index `conn` (its columns,
    its tokenizer, the same row ids), for the length of a `scratch_session`."""
    sql = f"SELECT id, {', '.join(COLUMNS)} FROM chunks WHERE id IN ({{marks}})"
    rows = list(by_id(conn, sql, chunk_ids))
    with scratch_session(tokenize_option(conn)) as table:
        table.executemany(
            f"INSERT INTO shown(rowid, {', '.join(COLUMNS)}) VALUES (?{', ?' * len(COLUMNS)})",
            rows,
        )
        yield table


def scratch(option: str) -> sqlite3.Connection:
    """This thread's in-memory FTS5 tables with the index's tokenizer: `shown`, with the
    index's columns and its `fts5vocab` `shown_instances`, and `words` (one column) with
    its `fts5vocab` `tokens`: what the tokenizer makes of a text, as FTS5 reads it."""
    held: dict[str, sqlite3.Connection] = _SCRATCH.__dict__.setdefault("by_option", {})
    conn = held.get(option)
    if conn is None:
        conn = sqlite3.connect(":memory:", isolation_level=None)
        conn.execute(
            f"CREATE VIRTUAL TABLE shown USING fts5({', '.join(COLUMNS)}, tokenize={option})"
        )
        conn.execute("CREATE VIRTUAL TABLE shown_instances USING fts5vocab(shown, instance)")
        conn.execute(f"CREATE VIRTUAL TABLE words USING fts5(x, tokenize={option})")
        conn.execute("CREATE VIRTUAL TABLE tokens USING fts5vocab(words, instance)")
        held[option] = conn
    return conn
