"""FTS5's own BM25 ranking, computed from FTS5's own postings, for a warm process.

FTS5 scores every row a query matches, one row at a time (~2 µs each: the row's
positions, its size record). An any-word query over 100k transcript turns matches ~20k
of them, and ranking them costs 25-50 ms. A process that searches again (a server)
reads each query word's postings once — FTS5's own instances of the tokenizer's terms,
positions included, kept beside FTS5 as arrays (`instances`) — holds them, and scores
all matching rows at once with numpy: the same formula, the same operations in the same
order, so the hits and their scores are FTS5's to the last bit (tests/test_postings.py
compares both on a real index). Both passes of the lexical channel
(`SearchIndex.lexical`: all words first, then any word) come from one scoring.

What FTS5 computes (fts5_aux.c, `fts5Bm25Function`), per phrase p of the query:
    idf(p) = log((N - n(p) + 0.5) / (n(p) + 0.5)), 1e-6 when that is <= 0
    f(p, d) = the column weights of p's instances in row d, added in row order
    score(d) = Σ_p idf(p) · f·(k1 + 1) / (f + k1·(1 - b + b·|d| / avgdl))
with N and the token totals from FTS5's averages record, |d| from its size record.

Anything this cannot reproduce exactly — a quoted term the tokenizer turns into no
token at all — answers None, and the caller asks FTS5.
"""

from __future__ import annotations

import sqlite3
from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Generic, TypeVar

import numpy as np

from vouch.index.lexical import collection, instances
from vouch.index.lexical.base import LexicalHit, query_terms
from vouch.index.lexical.fts5 import scratch_session, tokenize_option

if TYPE_CHECKING:
    from numpy.typing import NDArray

K1 = 1.2  # FTS5's bm25 constants
B = 0.75
TABLE = "chunks_fts"
_DOC, _COL = instances.ROW, instances.COLUMN  # row << 32 | column << 28 | offset
CACHE_INSTANCES = 8_000_000  # postings kept (8 bytes each: 64 MB), least recent dropped
_NONE = np.zeros(0, dtype=np.int64)
_NOTHING = np.zeros(0, dtype=np.float64)
K = TypeVar("K")
V = TypeVar("V")


class Postings:
    """One index revision's row sizes and column weights, and a cache of the postings
    of the words searched so far."""

    def __init__(self, conn: sqlite3.Connection, weights: Sequence[float]):
        self.conn = conn
        columns = [str(r[1]) for r in conn.execute(f"PRAGMA table_info({TABLE})")]
        self.weights = np.array([float(w) for w in weights][: len(columns)], dtype=np.float64)
        if len(self.weights) < len(columns):  # bm25: a column without a weight weighs 1
            self.weights = np.concatenate([self.weights, np.ones(len(columns) - len(self.weights))])
        record = conn.execute(f"SELECT block FROM {TABLE}_data WHERE id = 1").fetchone()
        totals = collection.varints(
            record[0] if record and record[0] else b""
        )  # empty: no rows yet
        self.rows = totals[0] if totals else 0
        avgdl = sum(totals[1:]) / self.rows if self.rows else 1.0
        ids, lengths = _row_lengths(conn, len(columns))
        self.size = int(ids.max(initial=0)) + 1
        length = np.zeros(self.size, dtype=np.float64)
        length[ids] = lengths
        # the denominator's part that depends on the row, as FTS5 evaluates it
        self.norm = K1 * ((1 - B) + (B * length) / avgdl)
        self._deleted = instances.gone(conn, self.size)
        self._tokenizer = _Tokenizer(tokenize_option(conn))
        self._instances: _Lru[str, NDArray[np.int64]] = _Lru(CACHE_INSTANCES)
        self._phrases: _Lru[tuple[str, ...], tuple[NDArray[np.int64], NDArray[np.float64]]]
        self._phrases = _Lru(CACHE_INSTANCES // 2)

    def ranked(self, query: str, k: int, passing: NDArray[np.bool_]) -> list[LexicalHit] | None:
        """The lexical channel's hits for `query`: rows holding every word first, then
        — when those are fewer than k and the query has two words or more — rows holding
        any, each part in BM25 order (ties by row id), rows not `passing` left out. None
        when the query needs FTS5 itself."""
        phrases = self._tokenizer.tokens(query_terms(query))
        if any(not tokens for tokens in phrases):
            return None
        score = np.zeros(self.size, dtype=np.float64)
        matched = np.zeros(self.size, dtype=np.int32)
        for tokens in phrases:  # phrase by phrase, as FTS5 adds them up
            docs, freq = self._phrase(tuple(tokens))
            idf = collection.idf(self.rows, len(docs))
            score[docs] += idf * ((freq * (K1 + 1.0)) / (freq + self.norm[docs]))
            matched[docs] += 1
        found = np.flatnonzero(matched[: len(passing)] > 0)
        found = found[passing[found]]
        every = matched[found] == len(phrases)
        best = _best(found[every], score, k)
        if len(best) < k:
            best = np.concatenate([best, _best(found[~every], score, k - len(best))])
        pairs = zip(best.tolist(), score[best].tolist(), strict=True)
        return [LexicalHit(c, s, "") for c, s in pairs]

    def within(self, query: str, k: int, passing: NDArray[np.bool_]) -> list[LexicalHit]:
        """`ranked` with BM25's N and n(p) counted among the rows `passing` (a search
        narrowed to a collection, `lexical.collection`): each phrase's part as FTS5
        computes it alone, times idf within / idf in the table, as `collection.ranked`
        does with FTS5's own numbers. A phrase the table does not hold (or with no token)
        is left out of the query."""
        phrases = self._tokenizer.tokens(query_terms(query))
        inside = int(passing[: self.size].sum())
        score = np.zeros(self.size, dtype=np.float64)
        matched = np.zeros(self.size, dtype=np.int32)
        counted = 0
        for tokens in phrases:
            docs, freq = self._phrase(tuple(tokens)) if tokens else (_NONE, _NOTHING)
            if not len(docs):
                continue
            counted += 1
            table = collection.idf(self.rows, len(docs))
            held = int(passing[docs[docs < len(passing)]].sum())
            ratio = collection.idf(inside, held) / table
            score[docs] += (table * ((freq * (K1 + 1.0)) / (freq + self.norm[docs]))) * ratio
            matched[docs] += 1
        found = np.flatnonzero(matched[: len(passing)] > 0)
        found = found[passing[found]]
        every = matched[found] == counted
        best = _best(found[every], score, k)
        if len(best) < k:
            best = np.concatenate([best, _best(found[~every], score, k - len(best))])
        pairs = zip(best.tolist(), score[best].tolist(), strict=True)
        return [LexicalHit(c, s, "") for c, s in pairs]

    def _phrase(self, tokens: tuple[str, ...]) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """The rows holding the phrase, and its weighted frequency in each."""
        found = self._phrases.get(tokens)
        if found is None:
            found = self._frequencies(tokens)
            self._phrases.put(tokens, found, 2 * len(found[0]))  # two arrays of 8 bytes
        return found

    def _frequencies(
        self, tokens: tuple[str, ...]
    ) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        first = self._postings(tokens[0])
        keep = None
        for shift, token in enumerate(tokens[1:], 1):  # the next token right after
            follows = _within(first, self._postings(token) - shift)
            keep = follows if keep is None else keep & follows
        at = first if keep is None else first[keep]
        docs = at >> _DOC
        if not len(at):
            return docs, np.zeros(0, dtype=np.float64)
        # sorted: a row's instances are next to each other
        starts = np.flatnonzero(np.concatenate(([True], docs[1:] != docs[:-1])))
        rows = docs[starts]
        counts = np.diff(np.append(starts, len(docs)))
        # FTS5 adds one column weight per instance, in the row's order; so does bincount,
        # one by one in the array's order (bit-exact sums)
        which = np.repeat(np.arange(len(rows)), counts)
        freq = np.bincount(which, weights=self.weights[(at >> _COL) & 0xF])
        return rows, freq.astype(np.float64, copy=False)  # float64 already (the stubs say int)

    def _postings(self, token: str) -> NDArray[np.int64]:
        """Every instance of `token` in the table, sorted (row, column, offset)."""
        held = self._instances.get(token)
        if held is not None:
            return held
        held = instances.read(self.conn, token, self._deleted)
        self._instances.put(token, held, len(held))
        return held


def _within(values: NDArray[np.int64], pool: NDArray[np.int64]) -> NDArray[np.bool_]:
    """Which of `values` are in `pool` (sorted): `np.isin` without sorting both again."""
    if not len(pool):
        return np.zeros(len(values), dtype=np.bool_)
    at = np.minimum(np.searchsorted(pool, values), len(pool) - 1)
    return pool[at] == values


def _best(rows: NDArray[np.int64], score: NDArray[np.float64], n: int) -> NDArray[np.int64]:
    """The first n of `rows` by score, best first, ties by row id: sorting only the
    rows scored at least the n-th best (~200 of ~20,000)."""
    if n <= 0:
        return rows[:0]
    mine = score[rows]
    if len(rows) > n:
        cut = np.partition(mine, len(rows) - n)[len(rows) - n]
        rows, mine = rows[mine >= cut], mine[mine >= cut]
    return rows[np.lexsort((rows, -mine))[:n]]


class _Lru(Generic[K, V]):
    """Values by key, the least recently used dropped while their sizes add up to more
    than `limit` (the last one put always stays)."""

    def __init__(self, limit: int):
        self.limit = limit
        self.held = 0
        self._items: OrderedDict[K, tuple[V, int]] = OrderedDict()

    def get(self, key: K) -> V | None:
        found = self._items.get(key)
        if found is None:
            return None
        self._items.move_to_end(key)
        return found[0]

    def put(self, key: K, value: V, size: int) -> None:
        self._items[key] = (value, size)
        self.held += size
        while self.held > self.limit and len(self._items) > 1:
            _, (_, dropped) = self._items.popitem(last=False)
            self.held -= dropped


class _Tokenizer:
    """Quoted query terms' tokens, as FTS5 reads each phrase: the index's tokenizer on a
    scratch table (`fts5.scratch`), the new terms of a query in one pass."""

    def __init__(self, option: str):
        self.option = option
        self.known: dict[str, list[str]] = {}

    def tokens(self, terms: Sequence[str]) -> list[list[str]]:
        new = [t for t in dict.fromkeys(terms) if t not in self.known]
        if new:
            if len(self.known) + len(new) > 4096:
                self.known.clear()
                new = list(dict.fromkeys(terms))
            found: dict[int, list[str]] = {n: [] for n in range(len(new))}
            with scratch_session(self.option) as conn:
                conn.executemany("INSERT INTO words(rowid, x) VALUES (?, ?)", list(enumerate(new)))
                for n, token in conn.execute("SELECT doc, term FROM tokens ORDER BY doc, offset"):
                    found[int(n)].append(str(token))
            self.known.update((term, found[n]) for n, term in enumerate(new))
        return [self.known[t] for t in terms]


def _row_lengths(
    conn: sqlite3.Connection, columns: int
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Each row's id and size in tokens, all columns together (FTS5's size records:
    a varint per column), decoded with numpy: ~0.3 s in Python at 100k rows."""
    rows = conn.execute(f"SELECT id, sz FROM {TABLE}_docsize").fetchall()
    ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    data = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.uint8)
    ends = np.flatnonzero(data < 0x80)  # a varint's last byte has the high bit clear
    if len(ends) != len(rows) * columns or (len(data) and data[-1] >= 0x80):
        return ids, np.array([sum(collection.varints(r[1])) for r in rows], dtype=np.int64)
    starts = np.concatenate([[0], ends[:-1] + 1])
    width = ends - starts + 1
    values = np.zeros(len(ends), dtype=np.int64)
    for n in range(int(width.max(initial=0))):  # varints of up to 8 bytes
        longer = width > n
        values[longer] = (values[longer] << 7) | (data[starts[longer] + n] & 0x7F)
    return ids, values.reshape(len(rows), columns).sum(axis=1)
