"""What every lexical backend shares: the chunk rows, the hits, the query tokenization and
the `Backend` interface (the package picks a backend by name)."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple, Protocol

from vouch.errors import EmptyQuery
from vouch.index.filters import Filters

BACKENDS = ("fts5", "whoosh")
_ASCII_WHITESPACE = " \t\n\r"


class LexicalHit(NamedTuple):  # a tuple: ~0.3 µs to make instead of ~1, ×200 a search
    chunk_id: int
    score: float  # higher is better (FTS5's bm25, negated)
    snippet: str


class ChunkRow(NamedTuple):
    """The fields a lexical backend indexes for one chunk."""

    chunk_id: int
    title: str
    section: str
    text: str
    kind: str
    type: str
    status: str
    format: str
    doc_key: str
    tags: tuple[str, ...]


_WORDS = re.compile(r"[^\W_]+")  # about what FTS5's unicode61 tokenizer keeps of a term


def query_terms(query: str) -> list[str]:
    """Split on ASCII whitespace only; E004 when nothing is left."""
    terms: list[str] = []
    current: list[str] = []
    for ch in query:
        if ch in _ASCII_WHITESPACE:
            if current:
                terms.append("".join(current))
                current = []
        else:
            current.append(ch)
    if current:
        terms.append("".join(current))
    if not terms:
        raise EmptyQuery("empty query", hint="give at least one word to search for")
    return terms


def fts5_query(query: str, match_any: bool = False, *, unique: bool = False) -> str:
    """Each term quoted as an FTS5 literal (`"` doubled); joined by space = AND.
    `unique`: each phrase once, for FTS5's snippet(), whose work grows with the square of
    the phrase matches: a query repeating one word fifty times against a text holding it
    a thousand times took minutes. Terms that FTS5 reads as the same words (`Word`,
    `word,`, `word,,`: case and punctuation aside) count as one."""
    terms = query_terms(query)
    if unique:
        first: dict[tuple[str, ...], str] = {}
        for t in terms:
            first.setdefault(tuple(_WORDS.findall(t.casefold())), t)
        terms = list(first.values())
    quoted = ['"' + t.replace('"', '""') + '"' for t in terms]
    return (" OR " if match_any else " ").join(quoted)


class Backend(Protocol):
    name: str

    def create(self, directory: Path) -> None:
        """Start an empty index in `directory` (a build directory)."""

    def add(self, directory: Path, rows: Sequence[ChunkRow]) -> None: ...

    def remove(self, directory: Path, chunk_ids: Sequence[int]) -> None: ...

    def check(self, directory: Path) -> None:
        """Raise store.Corrupt when the backend's files are unusable."""

    def query(
        self,
        conn: sqlite3.Connection,
        directory: Path,
        query: str,
        k: int,
        filters: Filters,
        match_any: bool = False,
    ) -> list[LexicalHit]:
        """The best `k` chunks, best first; a hit's snippet may be empty (`snippets`)."""

    def snippets(
        self, conn: sqlite3.Connection, directory: Path, query: str, chunk_ids: Sequence[int]
    ) -> dict[int, str]:
        """Marked snippets for these chunks, made after ranking for the rows shown."""
