"""Whoosh: the pure-Python lexical backend (`index.lexical: whoosh`).

About forty times slower to build than FTS5, but it needs nothing compiled. It keeps
its own directory, `index/whoosh/`; chunk ids are its unique key, and the filter fields
(kind, type, status, format, tags) are indexed so filters apply inside whoosh's search.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from vouch.index.filters import Filters
from vouch.index.lexical.base import ChunkRow, LexicalHit, query_terms
from vouch.index.store import Corrupt

DIRNAME = "whoosh"


def _schema() -> Any:
    from whoosh.analysis import StemmingAnalyzer
    from whoosh.fields import ID, KEYWORD, NUMERIC, TEXT, Schema

    analyzer = StemmingAnalyzer()
    return Schema(
        chunk_id=NUMERIC(int, bits=64, stored=True, unique=True, signed=True),
        key=ID(unique=True),
        title=TEXT(analyzer=analyzer, field_boost=2.0),
        section=TEXT(analyzer=analyzer, field_boost=1.5),
        text=TEXT(analyzer=analyzer, stored=True),
        kind=ID,
        type=ID,
        status=ID,
        format=ID,
        tags=KEYWORD(commas=True),
    )


class _Marker:
    """[MATCH]…[/MATCH] around hits, `...` between fragments: the FTS5 snippet shape."""

    between = "..."

    def format(self, fragments: Any, replace: bool = False) -> str:
        out = []
        for fragment in fragments:
            text = fragment.text
            pieces, pos = [], fragment.startchar
            for token in fragment.matches:
                if token.startchar < pos:
                    continue
                pieces.append(text[pos : token.startchar])
                pieces.append(f"[MATCH]{text[token.startchar : token.endchar]}[/MATCH]")
                pos = token.endchar
            pieces.append(text[pos : fragment.endchar])
            out.append("".join(pieces).strip())
        return self.between.join(out)

    def __call__(self, text: str, fragments: Any) -> str:
        return self.format(fragments)


class WhooshBackend:
    name = "whoosh"

    def _open(self, directory: Path) -> Any:
        from whoosh import index

        path = directory / DIRNAME
        try:
            return index.open_dir(str(path))
        except Exception as exc:  # whoosh raises assorted errors for damaged directories
            raise Corrupt(f"whoosh index is unusable: {exc}") from exc

    def create(self, directory: Path) -> None:
        from whoosh import index

        path = directory / DIRNAME
        path.mkdir(parents=True, exist_ok=True)
        index.create_in(str(path), _schema())

    def add(self, directory: Path, rows: Sequence[ChunkRow]) -> None:
        if not rows:
            return
        ix = self._open(directory)
        writer = ix.writer(limitmb=128)
        for r in rows:
            writer.update_document(
                chunk_id=r.chunk_id,
                key=str(r.chunk_id),
                title=r.title,
                section=r.section,
                text=r.text,
                kind=r.kind,
                type=r.type or "-",
                status=r.status or "-",
                format=r.format or "-",
                tags=",".join(r.tags),
            )
        writer.commit()

    def remove(self, directory: Path, chunk_ids: Sequence[int]) -> None:
        if not chunk_ids:
            return
        ix = self._open(directory)
        writer = ix.writer()
        for cid in chunk_ids:
            writer.delete_by_term("key", str(cid))
        writer.commit()

    def check(self, directory: Path) -> None:
        ix = self._open(directory)
        try:
            ix.doc_count()
        except Exception as exc:
            raise Corrupt(f"whoosh index is unusable: {exc}") from exc

    def query(
        self,
        conn: sqlite3.Connection,
        directory: Path,
        query: str,
        k: int,
        filters: Filters,
        match_any: bool = False,
    ) -> list[LexicalHit]:
        from whoosh import highlight
        from whoosh.query import And, Not, Or, Term

        terms = query_terms(query)
        ix = self._open(directory)
        analyzer = ix.schema["text"].analyzer
        groups = []
        for raw in terms:
            words = [t.text for t in analyzer(raw)]
            if not words:
                continue
            per_word = [Or([Term(f, w) for f in ("title", "section", "text")]) for w in words]
            groups.append(And(per_word) if len(per_word) > 1 else per_word[0])
        if not groups:
            return []
        q = Or(groups) if match_any else And(groups)
        wanted = []
        for field, values in (
            ("kind", filters.kinds),
            ("type", filters.types),
            ("status", filters.statuses),
            ("format", filters.formats),
        ):
            if values:
                wanted.append(Or([Term(field, v) for v in values]))
        wanted.extend(Term("tags", t) for t in filters.tags)
        if filters.exclude_statuses:
            wanted.append(Not(Or([Term("status", v) for v in filters.exclude_statuses])))
        flt = And(wanted) if wanted else None
        with ix.searcher() as searcher:
            results = searcher.search(q, limit=k, filter=flt, terms=True)
            results.fragmenter = highlight.ContextFragmenter(maxchars=200, surround=60)
            results.formatter = _Marker()
            out = []
            for hit in results:
                snippet = hit.highlights("text") or hit["text"][:200]
                out.append(LexicalHit(int(hit["chunk_id"]), float(hit.score), snippet))
        return out

    def snippets(
        self, conn: sqlite3.Connection, directory: Path, query: str, chunk_ids: Sequence[int]
    ) -> dict[int, str]:
        return {}  # `query` marked every hit already
