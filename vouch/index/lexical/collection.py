"""BM25 within a collection: a search narrowed to tags weighs its words by how rare they
are among the rows it searches, not in the whole index.

A tag names a collection — one conversation, one project, one team's notes — and a word
common inside it says little there however rare it is elsewhere. Ten conversations kept
in one knowledge base showed it (issue 35): each turn is indexed `Speaker: text` with
its neighbours, so a speaker's name is in nearly every turn of its conversation. Within
that conversation its IDF is FTS5's floor; across ten it is ≈ log 10 and outweighs the
words the question is about — one knowledge base ranked below a knowledge base per
conversation on every question naming a speaker. Counted within the tagged rows, the
lexical channel of one knowledge base is the per-conversation one, question for question
(bench/RESULTS.md).

The formula is FTS5's (`lexical.postings`), with N and n(p) counted among the rows the
filter passes; the row lengths and their average stay the index's. FTS5's `bm25()` takes
only the whole table's counts, so each phrase is asked on its own: its bm25 is
idf(p) · T(p, d) for the whole table's idf(p), which is known (N from FTS5's averages
record, n(p) a count), so T(p, d) · idf_within(p) is bm25 · (idf_within / idf). A warm
process computes the same from postings (`Postings.within`), with the same operations
on the same doubles: both give the same hits and scores to the last bit
(tests/test_collection_idf.py).

A query word the table does not hold at all (or that holds no token, as `---`) asks
nothing of the rows: it neither scores nor keeps a row out of the all-words part.
"""

from __future__ import annotations

import math
import sqlite3

from vouch.index.filters import Filters
from vouch.index.lexical.base import LexicalHit, fts5_query, query_terms

TABLE = "chunks_fts"


def idf(rows: int, hits: int) -> float:
    """FTS5's idf of a phrase held by `hits` of `rows` rows (`fts5Bm25Function`)."""
    value = math.log((rows - hits + 0.5) / (hits + 0.5))
    return value if value > 0.0 else 1e-6


def table_rows(conn: sqlite3.Connection) -> int:
    """N of FTS5's bm25: the first number of the table's averages record (0: no rows)."""
    record = conn.execute(f"SELECT block FROM {TABLE}_data WHERE id = 1").fetchone()
    totals = varints(bytes(record[0]) if record and record[0] else b"")
    return totals[0] if totals else 0


def varints(blob: bytes) -> list[int]:
    """SQLite's varints (FTS5's averages and size records): 7 bits a byte, big-endian,
    the ninth byte whole."""
    out: list[int] = []
    i = 0
    while i < len(blob):
        value = 0
        for n in range(9):
            byte = blob[i]
            i += 1
            if n == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if not byte & 0x80:
                break
        out.append(value)
    return out


def ranked(
    conn: sqlite3.Connection, query: str, k: int, filters: Filters, weights: str
) -> list[LexicalHit]:
    """The lexical channel for a search narrowed by `filters`: rows holding every word
    first, then — when those are fewer than k — rows holding any, each part best first
    (ties by row id), scored with the counts of the rows the filter passes. `weights`
    are bm25's column weights as FTS5 reads them (`2.0, 1.5, …`)."""
    where, params = filters.sql("c")
    everything = table_rows(conn)
    inside = int(conn.execute(f"SELECT count(*) FROM chunks c WHERE {where}", params).fetchone()[0])
    asked: dict[str, tuple[int, list[tuple[int, float]]]] = {}
    score: dict[int, float] = {}
    matched: dict[int, int] = {}
    counted = 0
    for term in query_terms(query):  # each a phrase, in order, as FTS5 adds them up
        found = asked.get(term)
        if found is None:
            phrase = fts5_query(term)
            sql = f"SELECT count(*) FROM {TABLE} WHERE {TABLE} MATCH ?"
            held = int(conn.execute(sql, [phrase]).fetchone()[0])
            rows = conn.execute(
                f"SELECT c.id, bm25({TABLE}, {weights}) FROM {TABLE} "
                f"JOIN chunks c ON c.id = {TABLE}.rowid WHERE {TABLE} MATCH ? AND {where}",
                [phrase, *params],
            ).fetchall()
            found = asked[term] = (held, rows)
        total, rows = found
        if not total:
            continue
        counted += 1
        ratio = idf(inside, len(rows)) / idf(everything, total)
        for cid, rank in rows:
            score[cid] = score.get(cid, 0.0) + (-rank) * ratio
            matched[cid] = matched.get(cid, 0) + 1
    every = sorted((c for c, n in matched.items() if n == counted), key=lambda c: (-score[c], c))
    best = every[:k]
    if len(best) < k:
        some = sorted((c for c, n in matched.items() if n < counted), key=lambda c: (-score[c], c))
        best += some[: k - len(best)]
    return [LexicalHit(int(c), score[c], "") for c in best]
