"""The index as callers see it: open (refreshing or rebuilding as needed) and query.

    index = Index.open(kb)                        # fresh, or E002 / E003
    hits = index.lexical("install git", k=10, filters=Filters.of(kinds=["claim"]))
    hits = index.vector(index.embed_query("set up version control"), k=30)
    info = index.chunks([h.chunk_id for h in hits])   # id -> ChunkInfo

Opening, verifying and maintaining it live in `vouch.index.handle`, the SQL that reads
chunk rows by id in `vouch.index.rows`; this module holds the queries: the lexical and
vector channels, and what a warm process keeps in memory (labels, postings, turn map).
"""

from __future__ import annotations

import contextlib
import functools
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar, cast

from vouch.embed import model as embed
from vouch.embed.fitted import Fit
from vouch.errors import (
    EmbeddingDisabled,
    IndexUnusable,
    LockTimeout,
    PermissionDenied,
)
from vouch.index import fitting, graph, rows, state, store, vectors
from vouch.index.filters import Filters
from vouch.index.handle import IndexHandle, rebuild_index
from vouch.index.labels import Labels
from vouch.index.lexical import LexicalHit, backend
from vouch.index.rows import ChunkInfo
from vouch.index.turnmap import AROUND, TurnLinks, TurnMap

if TYPE_CHECKING:
    import numpy as np

    from vouch.index.lexical.postings import Postings


F = TypeVar("F", bound=Callable[..., Any])


class VectorHit(NamedTuple):  # a tuple: ~0.3 µs to make instead of ~1, ×200-800 a search
    chunk_id: int
    score: float  # cosine similarity


def _guarded(method: F) -> F:
    """A read that fails on a damaged index is E002 ("any read or parse failure ... is
    corruption"), never a traceback; the next open rebuilds the index."""

    @functools.wraps(method)
    def wrapper(self: Index, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except (sqlite3.Error, OSError, store.Corrupt, vectors.VectorFilesBroken) as exc:
            raise IndexUnusable(
                f"the search index could not be read: {exc}",
                hint="run the command again or `vouch index rebuild`",
            ) from exc

    return cast(F, wrapper)


class Index(IndexHandle):
    """An open, validated index and its queries. Not thread-safe for writes; share one
    per process."""

    _labels: tuple[str, Labels] | None = None  # (corpus revision, labels): see `labels`
    _fit: tuple[str, Fit | None] | None = None  # (corpus revision, fit): see `embed_texts`
    _turns: tuple[str, TurnMap] | None = None  # (corpus revision, ...): `turn_map`
    _postings: tuple[str, Postings] | None = None  # (corpus revision, ...): `warm_lexical`

    def _reload(self) -> None:
        super()._reload()
        # what a warm process read of the old connection's file goes with it: a rebuilt
        # index numbers its chunks anew, even when its corpus revision is the same
        self._labels = self._fit = self._postings = self._turns = None

    # -- lexical ---------------------------------------------------------------------------
    @_guarded
    def lexical(
        self, query: str, k: int = 10, filters: Filters | None = None, match_any: bool = False
    ) -> list[LexicalHit]:
        """Best chunks for a bag-of-words query (all words by default), best first.

        Raises EmptyQuery (E004) for a query with no words.
        """
        return backend(self.meta["lexical"]).query(
            self.conn, self.directory, query, k, filters or Filters(), match_any
        )

    @_guarded
    def collection_lexical(self, query: str, k: int, filters: Filters) -> list[LexicalHit]:
        """The lexical channel of a search narrowed to a collection (tags): BM25's counts
        taken among the rows `filters` pass (`lexical.collection`), every-word hits first;
        the whole index's counts with a backend other than FTS5."""
        if self.meta["lexical"] != "fts5":
            return self.lexical(query, k, filters)
        from vouch.index.lexical import collection
        from vouch.index.lexical.fts5 import WEIGHTS

        weights = ", ".join(str(x) for x in WEIGHTS)
        return collection.ranked(self.conn, query, k, filters, weights)

    @_guarded
    def warm_lexical(
        self, query: str, k: int, filters: Filters, within: bool = False
    ) -> list[LexicalHit] | None:
        """For a process that searches again: the all-words hits, then (when fewer than
        k) the any-word ones, FTS5's ranking computed from postings held in memory
        (`lexical.postings`), filtered by the labels' mask; `within`: as
        `collection_lexical`. None when the backend is not FTS5 or the query needs FTS5
        itself."""
        if self.meta["lexical"] != "fts5":
            return None
        revision = self.corpus_revision
        if self._postings is None or self._postings[0] != revision:
            from vouch.index.lexical.fts5 import WEIGHTS
            from vouch.index.lexical.postings import Postings

            self._postings = (revision, Postings(self.conn, WEIGHTS))
        passing = self.labels().mask(filters)
        if within:
            return self._postings[1].within(query, k, passing)
        return self._postings[1].ranked(query, k, passing)

    @_guarded
    def snippets(self, query: str, chunk_ids: Iterable[int]) -> dict[int, str]:
        """Marked snippets (`[MATCH]word[/MATCH]`) of these chunks for the query's words;
        chunks without any are left out."""
        return backend(self.meta["lexical"]).snippets(
            self.conn, self.directory, query, list(chunk_ids)
        )

    # -- vectors ---------------------------------------------------------------------------
    def _require_vectors(self) -> embed.Embedder:
        if self.settings.model is None or self.meta.dims == 0:
            raise EmbeddingDisabled(
                "vector search is off: embedding.enabled is false in config.yaml",
                hint="use lexical search, or set embedding.enabled: true",
            )
        return embed.embedder(self.settings.model)

    @_guarded
    def embed_query(self, text: str) -> np.ndarray:
        """The query's vector; the last one is kept (a search may ask more than once,
        and a cold one asks first while git checks freshness)."""
        embedder = self._require_vectors()
        self._wants_vectors = True  # a vector search follows: see ensure_fresh
        # a refresh that turned into a full build (a new fit) weighs tokens anew
        key = (text, embedder.model_id, self.meta["corpus_revision"])
        if self._last_query is None or self._last_query[0] != key:
            words = self._checked_wordpiece(embedder)
            weigh = fitting.weigh(self.conn, self.meta)
            self._last_query = (key, embedder.encode_query(text, words, weigh))
        return self._last_query[1]

    @_guarded
    def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors of texts outside the index (pending proposals' chunks), weighted as
        the index's own."""
        embedder = self._require_vectors()
        revision = self.corpus_revision
        if self._fit is None or self._fit[0] != revision:  # a warm server: read once
            self._fit = (revision, fitting.load(self.conn, self.meta))
        fit = self._fit[1]
        if fit is None:
            return embedder.encode(texts)
        return embedder.encode_weighted([(t,) for t in texts], fit)

    @_guarded
    def plain_vectors(self, texts: Sequence[str]) -> np.ndarray:
        """Unweighted vectors of `texts`, without this index's fitted token weights: one
        text has one vector in every index of the model (`search.across`)."""
        return self._require_vectors().encode_plain(texts)

    def whole_words(self, words: Sequence[str]) -> list[bool] | None:
        """Which of `words` the embedding model knows whole (see `Embedder.whole_words`)."""
        embedder = self._require_vectors()
        return embedder.whole_words(words, self._checked_wordpiece(embedder))

    def _checked_wordpiece(self, embedder: embed.Embedder) -> Path | None:
        """The query tokenizer's table (vectors.words) if it is the one the build
        recorded. One that is missing or damaged is written again when no writer is
        busy; until then the query is tokenized by `tokenizers` (None)."""
        if not self._wordpiece_checked:
            self._wordpiece_checked = True
            recorded = (self.meta.checksums or {}).get(vectors.WORDPIECE)
            self._wordpiece = self.directory / vectors.WORDPIECE
            try:
                intact = recorded in (None, vectors.wordpiece_checksum(self.directory))
            except OSError:
                intact = False
            if not intact:
                self._wordpiece = None
                with (
                    contextlib.suppress(LockTimeout, PermissionDenied, OSError),
                    state.index_lock(self.directory, timeout=0),
                ):
                    if (
                        vectors.write_wordpiece(self.directory, embedder.wordpiece_table())
                        == recorded
                    ):
                        self._wordpiece = self.directory / vectors.WORDPIECE
        return self._wordpiece

    def graph_pays(self) -> bool:
        """Whether this index is big enough for a warm process to search the graph."""
        return graph.pays(self.meta.vector_rows)

    @_guarded
    def load_graph(self) -> bool:
        """Load the HNSW graph for repeated queries (a warm server) when hnswlib is
        installed. A graph that fails its checksum, or an index built without one, is
        given one from the matrix. Returns whether a graph is in use (False: every
        vector search stays exact)."""
        self._require_vectors()
        if self._graph is None and graph.available():
            matrix, ids = self._vectors()
            dirty = [int(r) for (r,) in self.conn.execute("SELECT vec_row FROM vec_dirty")]
            try:
                self._graph = graph.load(
                    self.directory, self.meta.dims, self.meta["vector_sha256"], matrix, ids, dirty
                )
            except vectors.VectorFilesBroken:
                self._graph = self._regraph(matrix, ids)
        return self._graph is not None

    def _regraph(self, matrix: Any, ids: Any) -> Any:
        built = graph.build(matrix, ids)
        with state.index_lock(self.directory):
            sha, size = graph.save(self.directory, built)
            self.conn.execute("BEGIN IMMEDIATE")
            self.conn.execute("DELETE FROM vec_dirty")
            store.write_meta(self.conn, {"vector_sha256": sha, "hnsw_size": size})
            self.conn.execute("COMMIT")
            self.meta = store.read_meta(self.conn)
        return built

    @_guarded
    def vector(
        self,
        query_vector: np.ndarray,
        k: int = 10,
        filters: Filters | None = None,
        breadth: int = 0,
    ) -> list[VectorHit]:
        """Top-k chunks by cosine similarity. Exact over the memory-mapped matrix, or
        through the graph once `load_graph()` loaded one and no filter narrows the set
        (searching `breadth` wide when that is more than k: `graph.top`)."""
        import numpy as np

        self._require_vectors()
        matrix, ids = self._vectors()
        q = np.asarray(query_vector, dtype=np.float32).reshape(-1)
        if filters:
            found = vectors.exact_top(matrix, ids, q, k, self._rows_passing(filters, ids))
        elif self._graph is not None:
            found = graph.top(self._graph, ids, q, k, breadth) or vectors.exact_top(
                matrix, ids, q, k
            )
        else:
            found = vectors.exact_top(matrix, ids, q, k)
        return [VectorHit(cid, score) for cid, score in found]

    def _rows_passing(self, filters: Filters, ids: np.ndarray) -> np.ndarray:
        """The vector rows whose chunks pass `filters`, by row: from the labels' mask
        when this process holds them (a warm server: a scan of the chunks' big rows
        takes ~0.1 s at 100k), else one SQL query."""
        import numpy as np

        if self._labels is not None and self._labels[0] == self.corpus_revision:
            mask = self._labels[1].mask(filters)
            inside = (ids >= 0) & (ids < len(mask))
            return np.flatnonzero(inside & mask[np.where(inside, ids, 0)])
        where, params = filters.sql("c")
        found = self.conn.execute(
            f"SELECT c.vec_row FROM chunks c WHERE c.vec_row IS NOT NULL AND {where} "
            "ORDER BY c.vec_row",
            params,
        )
        return np.fromiter((r for (r,) in found), dtype=np.int64)

    # -- metadata --------------------------------------------------------------------------
    @_guarded
    def kinds(self, chunk_ids: Iterable[int]) -> dict[int, tuple[str, str]]:
        """(kind, status) by chunk id: what the ranking prior needs of every candidate."""
        return rows.kinds(self.conn, chunk_ids)

    @_guarded
    def labels(self) -> Labels:
        """Every chunk's (kind, status) in memory for a warm process (`Labels`), read
        again once the index changed."""
        revision = self.corpus_revision
        if self._labels is None or self._labels[0] != revision:
            self._labels = (revision, Labels(self.conn))
        return self._labels[1]

    @_guarded
    def chunks(self, chunk_ids: Iterable[int]) -> dict[int, ChunkInfo]:
        """Chunk metadata by id; ids no longer in the index are left out."""
        return rows.chunks(self.conn, chunk_ids)

    @_guarded
    def texts(self, chunk_ids: Iterable[int]) -> dict[int, str]:
        """Chunk text by id (what `chunks` gives, just the text); ids no longer in the
        index are left out."""
        return rows.texts(self.conn, chunk_ids)

    @_guarded
    def neighbours(self, chunk_ids: Iterable[int], around: int = 1) -> dict[int, list[ChunkInfo]]:
        """For each turn chunk among `chunk_ids`: the turns of the same transcript session
        within `around` of it, in order, itself left out (one query for all)."""
        wanted = list(dict.fromkeys(int(c) for c in chunk_ids))
        warm = self._turns is not None and self._turns[0] == self.corpus_revision
        if warm and around == AROUND:  # a warm process holds them (`turn_map`)
            pairs = self.turn_map().around(wanted)
        else:
            pairs = rows.neighbour_pairs(self.conn, wanted, around)
        found = self.chunks(n for _, n in pairs)
        out: dict[int, list[ChunkInfo]] = {}
        for hit, near in pairs:
            if near in found:
                out.setdefault(int(hit), []).append(found[near])
        return out

    @_guarded
    def turn_links(self, chunk_ids: Iterable[int], filters: Filters | None = None) -> TurnLinks:
        """For the turn chunks among `chunk_ids`: the ids of the turns next to each in
        the same transcript session (±1) that pass `filters`, and the speaker of every
        turn named (one query; other chunks are left out)."""
        return rows.turn_links(self.conn, chunk_ids, filters)

    @_guarded
    def turn_map(self) -> TurnMap:
        """Every turn's neighbours and speaker in memory for a warm process (`TurnMap`),
        read again once the index changed."""
        revision = self.corpus_revision
        if self._turns is None or self._turns[0] != revision:
            self._turns = (revision, TurnMap(self.conn))
        return self._turns[1]

    @_guarded
    def headings(self, object_id: str) -> list[dict[str, Any]]:
        """Headings of a page or markdown source, in document order."""
        return rows.headings(self.conn, object_id)

    def find_section(self, object_id: str, heading: str) -> dict[str, Any] | None:
        """The heading of `object_id` whose text matches `heading` (case-insensitive)."""
        for h in self.headings(object_id):
            if h["text"].casefold() == heading.strip().casefold():
                return h
        return None

    @_guarded
    def counts(self) -> dict[str, Any]:
        """Documents by kind and by format, chunks and vectors — from `index_meta`, kept
        current by every build and refresh, so this costs no table scan."""
        c = state.Counts.from_meta(self.meta)
        return {
            "documents": c.documents,
            "by_kind": c.by_kind,
            "by_format": c.by_format,
            "chunks": c.chunks,
            "vectors": c.vectors,
        }


__all__ = ["ChunkInfo", "Index", "VectorHit", "rebuild_index"]
