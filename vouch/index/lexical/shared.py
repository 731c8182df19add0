"""BM25 on shared collection statistics: scores of chunks from several indexes that can
be compared, for a search across knowledge bases (`vouch.search.across`).

Each index's own bm25 weighs a word by how rare it is in that index and a row's length
by that index's average: the same chunk scores differently in two knowledge bases, and
a small one's best match outranks a large one's better match. Here the candidates of
every base are scored again with the statistics of all of them together — N the sum of
the indexes' rows, n(p) the sum of the rows holding phrase p, the average row length
the sum of their tokens over N — and each candidate's own words (the index's columns
and column weights, tokenized by one FTS5 tokenizer in a scratch table). The formula is
FTS5's (`lexical.postings`): the same text gets the same score whichever base holds it.

Only FTS5 indexes have the counts: a whoosh index adds its rows to N and nothing to
n(p) (its candidates are still scored, against the others' statistics).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from vouch.index.lexical import collection
from vouch.index.lexical.base import fts5_query, query_terms
from vouch.index.lexical.fts5 import COLUMNS, WEIGHTS, scratch_session
from vouch.index.lexical.postings import K1, B
from vouch.index.rows import by_id

TABLE = "chunks_fts"
Doc = tuple[str, str, str, str]  # title, section, text, context: chunks_fts's columns


class Counts(NamedTuple):
    """An index's part of the shared statistics (or the sum of several)."""

    rows: int
    tokens: int
    held: dict[str, int]  # query phrase → rows holding it


def counts(conn: sqlite3.Connection, terms: Sequence[str], fts5: bool = True) -> Counts:
    """`conn`'s rows, tokens and rows holding each of `terms` (FTS5's own counts)."""
    if not fts5:
        rows = int(conn.execute("SELECT count(*) FROM chunks").fetchone()[0])
        return Counts(rows, 0, {})
    record = conn.execute(f"SELECT block FROM {TABLE}_data WHERE id = 1").fetchone()
    totals = collection.varints(bytes(record[0]) if record and record[0] else b"")
    held: dict[str, int] = {}
    for term in dict.fromkeys(terms):
        sql = f"SELECT count(*) FROM {TABLE} WHERE {TABLE} MATCH ?"
        held[term] = int(conn.execute(sql, [fts5_query(term)]).fetchone()[0])
    return Counts(totals[0] if totals else 0, sum(totals[1:]), held)


def pooled(parts: Iterable[Counts]) -> Counts:
    rows = tokens = 0
    held: dict[str, int] = {}
    for part in parts:
        rows, tokens = rows + part.rows, tokens + part.tokens
        for term, n in part.held.items():
            held[term] = held.get(term, 0) + n
    return Counts(rows, tokens, held)


def columns(conn: sqlite3.Connection, chunk_ids: Iterable[int]) -> dict[int, Doc]:
    """The indexed columns of these chunks (what FTS5 scored them on)."""
    sql = f"SELECT id, {', '.join(COLUMNS)} FROM chunks WHERE id IN ({{marks}})"
    return {
        int(r[0]): (str(r[1]), str(r[2]), str(r[3]), str(r[4] or ""))
        for r in by_id(conn, sql, chunk_ids)
    }


def terms_of(query: str) -> list[str]:
    return query_terms(query)


def scores(
    docs: Sequence[Doc], query: str, stats: Counts, tokenizer: str
) -> tuple[list[float], list[bool]]:
    """Each doc's BM25 for `query` on `stats` (0.0: it holds no phrase), and whether it
    holds every phrase that counts (what the lexical channel ranks first)."""
    if not docs:
        return [], []
    terms = list(dict.fromkeys(query_terms(query)))
    weight = dict(zip(COLUMNS, WEIGHTS, strict=True))
    with scratch_session(tokenizer) as conn:
        conn.executemany(
            f"INSERT INTO shown(rowid, {', '.join(COLUMNS)}) VALUES (?, ?, ?, ?, ?)",
            [(n + 1, *doc) for n, doc in enumerate(docs)],
        )
        conn.executemany(
            "INSERT INTO words(rowid, x) VALUES (?, ?)", [(n + 1, t) for n, t in enumerate(terms)]
        )
        tokens: dict[int, list[tuple[int, str]]] = {}
        for doc, term, offset in conn.execute("SELECT doc, term, offset FROM tokens"):
            tokens.setdefault(int(doc), []).append((int(offset), str(term)))
        phrases = [[t for _, t in sorted(tokens.get(n + 1, []))] for n in range(len(terms))]
        wanted = sorted({t for p in phrases for t in p})
        at: dict[str, dict[tuple[int, str], set[int]]] = {}
        if wanted:
            marks = ", ".join("?" * len(wanted))
            sql = f"SELECT term, doc, col, offset FROM shown_instances WHERE term IN ({marks})"
            for term, doc, col, offset in conn.execute(sql, wanted):
                at.setdefault(str(term), {}).setdefault((int(doc), str(col)), set()).add(
                    int(offset)
                )
        length = dict.fromkeys(range(1, len(docs) + 1), 0)
        for doc, n in conn.execute("SELECT doc, count(*) FROM shown_instances GROUP BY doc"):
            length[int(doc)] = int(n)
    avgdl = stats.tokens / stats.rows if stats.rows and stats.tokens else 1.0
    out = [0.0] * len(docs)
    matched = [0] * len(docs)
    counted = 0
    for term, phrase in zip(terms, phrases, strict=True):
        if not phrase:
            continue  # a term of no token (`---`) asks nothing, as in FTS5
        counted += 1
        idf = collection.idf(max(stats.rows, 1), stats.held.get(term, 0))
        for doc, f in _frequencies(phrase, at, weight).items():
            norm = K1 * ((1 - B) + B * length[doc] / avgdl)
            out[doc - 1] += idf * (f * (K1 + 1)) / (f + norm)
            matched[doc - 1] += 1
    return out, [counted > 0 and m == counted for m in matched]


def _frequencies(
    phrase: list[str], at: dict[str, dict[tuple[int, str], set[int]]], weight: dict[str, float]
) -> dict[int, float]:
    """Each doc's weighted count of `phrase` (its tokens at consecutive places in one
    column), as FTS5 adds a phrase's hits up column by column."""
    first = at.get(phrase[0], {})
    out: dict[int, float] = {}
    for (doc, col), offsets in first.items():
        rest = [at.get(t, {}).get((doc, col), set()) for t in phrase[1:]]
        hits = sum(1 for o in offsets if all(o + i + 1 in r for i, r in enumerate(rest)))
        if hits:
            out[doc] = out.get(doc, 0.0) + weight.get(col, 1.0) * hits
    return out
