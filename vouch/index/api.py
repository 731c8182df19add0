"""The index as callers see it: open (refreshing or rebuilding as needed) and query.

    index = Index.open(kb)                        # fresh, or E002 / E003
    hits = index.lexical("install git", k=10, filters=Filters.of(kinds=["claim"]))
    hits = index.vector(index.embed_query("set up version control"), k=30)
    info = index.chunks([h.chunk_id for h in hits])   # id -> ChunkInfo

Opening follows spec/search-index-lifecycle.md with DESIGN §5's self-healing: a
missing or corrupt index is rebuilt; another knowledge base's index at this path is
E003; a stale one is refreshed incrementally (or rebuilt when the configuration it was
built under changed) unless `index.auto_refresh: false`, which makes it E002.

Corrupt includes vector files that do not match their recorded checksums. Those are
verified on first use, not on every open (a lexical search must not pay for reading the
matrix); a caller that embeds its query while the index opens (`meanwhile`, as a cold
search does) has them verified then too, so a damaged matrix is rebuilt before any
result is read. The index lives where `location` says: `.vouch/index/`, or a per-user
cache when that cannot be written.
"""

from __future__ import annotations

import contextlib
import functools
import sqlite3
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from vouch import embed
from vouch.errors import (
    EmbeddingDisabled,
    IndexCollision,
    IndexUnusable,
    LockTimeout,
    PermissionDenied,
)
from vouch.index import freshness, location, state, store, vectors
from vouch.index.filters import Filters
from vouch.index.lexical import BACKENDS, LexicalHit, backend
from vouch.index.settings import Settings
from vouch.kb import KB

if TYPE_CHECKING:
    import numpy as np

    from vouch.index.ingest import Progress, Report

F = TypeVar("F", bound=Callable[..., Any])
# Above this many changed documents (and half the index) a rebuild is cheaper.
_REFRESH_LIMIT = 2000


@dataclass(frozen=True)
class VectorHit:
    chunk_id: int
    score: float  # cosine similarity


@dataclass(frozen=True)
class ChunkInfo:
    chunk_id: int
    kind: str
    id: str  # the object (document) id
    title: str
    path: str  # repository-relative path of the object's file
    type: str
    status: str
    format: str  # note | markdown | text | code | pdf | binary
    section: str
    page: int | None
    chunk_index: int
    total_chunks: int
    start_line: int | None
    end_line: int | None
    tags: list[str]
    locator: str | None
    text: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _guarded(method: F) -> F:
    """A read that fails on a damaged index is E002 ("any read or parse failure ... is
    corruption"), never a traceback; the next open rebuilds the index."""

    @functools.wraps(method)
    def wrapper(self: Index, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except (sqlite3.Error, OSError, store.Corrupt, vectors.VectorFilesBroken) as exc:
            raise IndexUnusable(f"the search index could not be read: {exc}",
                                hint="run the command again or `vouch index rebuild`") from exc

    return cast(F, wrapper)


class Index:
    """An open, validated index. Not thread-safe for writes; share one per process."""

    def __init__(self, kb: KB, settings: Settings, conn: sqlite3.Connection, meta: store.Meta):
        self.kb = kb
        self.settings = settings
        self.conn = conn
        self.meta = meta
        self.last_report: Report | None = None
        self._matrix: tuple[Any, Any] | None = None
        self._graph: Any = None
        self._checked_at = float("-inf")
        self._wordpiece: Path | None = None
        self._wordpiece_checked = False
        self._last_query: tuple[tuple[str, str], Any] | None = None
        self._wants_vectors = False  # this load embedded a query or mapped the matrix
        self._damaged: str | None = None  # why the vector files failed verification

    @property
    def directory(self) -> Path:
        return self.settings.index_dir

    @property
    def corpus_revision(self) -> str:
        return self.meta["corpus_revision"]

    # -- opening ---------------------------------------------------------------------------
    @classmethod
    def open(cls, kb: KB, *, ensure_fresh: bool = True,
             progress: Progress | None = None,
             meanwhile: Callable[[Index], object] | None = None) -> Index:
        """The index, fresh unless `ensure_fresh` is false. `meanwhile(index)` is called
        once, while git checks freshness: work that does not depend on the knowledge
        files (loading the model, embedding a query) then costs no extra wall time."""
        settings = Settings.of(kb)
        try:
            return cls._open(kb, settings, ensure_fresh, progress, meanwhile)
        except PermissionDenied:
            if settings.where != location.REPOSITORY:
                raise
            # `.vouch/index/` looked writable but is not (see `location`)
            return cls._open(kb, settings.in_cache(), ensure_fresh, progress, meanwhile)

    @classmethod
    def _open(cls, kb: KB, settings: Settings, ensure_fresh: bool, progress: Progress | None,
              meanwhile: Callable[[Index], object] | None) -> Index:
        try:
            index = cls._validated(kb, settings)
        except store.Corrupt as exc:
            if not ensure_fresh:
                raise IndexUnusable(f"the search index is unusable: {exc}",
                                    hint="run `vouch index rebuild`") from exc
            index = cls._rebuilt(kb, settings, progress)
        try:
            if ensure_fresh:
                index.ensure_fresh(progress, meanwhile=meanwhile)
            elif meanwhile is not None:
                meanwhile(index)
        except BaseException:
            index.close()
            raise
        return index

    @classmethod
    def _validated(cls, kb: KB, settings: Settings) -> Index:
        directory = settings.index_dir
        conn = store.connect(directory / store.DB_NAME)
        try:
            meta = store.read_meta(conn)
            if meta["kb_path"] != settings.kb_path:
                raise IndexCollision(
                    f"the index at {directory} belongs to another knowledge base "
                    f"({meta['kb_path']})",
                    hint=f"delete {directory} (or run `vouch index rebuild --force`)")
            store.quick_check(conn)
            try:
                state.indexed_state(meta)
                state.Counts.from_meta(meta)
            except (ValueError, TypeError, AttributeError) as exc:
                raise store.Corrupt(f"index_meta holds an unreadable git state: {exc}") from exc
            try:
                vectors.check_sizes(directory, meta.vector_rows, meta.dims, meta.hnsw_size)
            except vectors.VectorFilesBroken as exc:
                raise store.Corrupt(str(exc)) from exc
            backend(meta["lexical"] if meta["lexical"] in BACKENDS else "fts5").check(directory)
        except BaseException:
            conn.close()
            raise
        return cls(kb, settings, conn, meta)

    @classmethod
    def _rebuilt(cls, kb: KB, settings: Settings, progress: Progress | None,
                 force: bool = False) -> Index:
        from vouch.index import build  # the build machinery loads only when it runs

        with state.index_lock(settings.index_dir):
            if not force:
                try:  # another process may have rebuilt it while we waited
                    return cls._validated(kb, settings)
                except store.Corrupt:
                    pass
            report = build.rebuild(kb, settings, progress)  # swaps over whatever is there
            index = cls._validated(kb, settings)
            index.last_report = report
            return index

    def _reload(self) -> None:
        self.conn.close()
        fresh = Index._validated(self.kb, self.settings)
        self.conn, self.meta = fresh.conn, fresh.meta
        self._matrix = None
        self._graph = None
        self._damaged = None
        self._wordpiece_checked = False

    def ensure_fresh(self, progress: Progress | None = None, *, max_age: float = 0.0,
                     meanwhile: Callable[[Index], object] | None = None
                     ) -> Report | None:
        """Refresh (or rebuild) when the files or the configuration moved on.

        Returns what was done, or None when the index was already fresh. The check costs
        a few git calls (~30 ms at 10k objects, most of it git's stat of every tracked
        file); a warm server answering many queries may pass `max_age` to skip checks
        made less than that many seconds after the last one. Vector files found damaged
        (here, or by an earlier query of this load) make it a rebuild.
        """
        if self._damaged is None and max_age and time.monotonic() - self._checked_at < max_age:
            if meanwhile is not None:
                meanwhile(self)
            return None
        probe = freshness.start(self.kb, state.indexed_state(self.meta))
        try:
            if meanwhile is not None:
                meanwhile(self)
            self._check_vectors()  # while git works, and before anything is read
        except BaseException:
            probe.close()
            raise
        now = probe.result()
        reason = self.settings.mismatch(self.meta)
        if self._damaged is None:
            if reason is None and self.meta["source_hash"] == now.source_hash:
                self._checked_at = time.monotonic()
                self._keep_stamps(now)
                return None
            if not self.settings.auto_refresh:
                if reason is None and not state.knowledge_changed(self.kb, self.meta, now):
                    self._checked_at = time.monotonic()  # config, audit log, a commit
                    return None
                why = reason or "knowledge files changed since it was built"
                raise IndexUnusable(
                    f"the search index is stale: {why}",
                    hint="run `vouch index rebuild`, or set index.auto_refresh: true")
        from vouch.index import build

        with state.index_lock(self.directory):
            report = None
            try:
                self._reload()  # another process may have refreshed it while we waited
                self._check_vectors()
                reason = self.settings.mismatch(self.meta)
                if self._damaged is None and reason is None \
                        and self.meta["source_hash"] == now.source_hash:
                    return None
                if self._damaged is None and reason is None:
                    report = self._refresh(now)
            except store.Corrupt:
                report = None
            if report is None:
                self.conn.close()
                report = build.rebuild(self.kb, self.settings, progress)
            self._reload()
        self.last_report = report
        self._checked_at = time.monotonic()
        return report

    def _keep_stamps(self, now: freshness.State) -> None:
        """Record directory stamps that became trustworthy since the index was written, so
        the next check skips those directories; skipped when another writer is busy."""
        if now.stamps_json() == self.meta.values.get("stamps"):
            return
        try:
            with state.index_lock(self.directory, timeout=0):
                self.conn.execute("BEGIN IMMEDIATE")
                try:
                    if store.read_meta(self.conn)["source_hash"] == now.source_hash:
                        store.write_meta(self.conn, {"stamps": now.stamps_json()})
                    self.conn.execute("COMMIT")
                except BaseException:
                    self.conn.execute("ROLLBACK")
                    raise
            self.meta = store.read_meta(self.conn)
        except (LockTimeout, PermissionDenied, sqlite3.Error):
            pass

    def _refresh(self, now: freshness.State) -> Report | None:
        from vouch.index import refresh

        before = state.indexed_state(self.meta)
        try:
            changed = freshness.changed_paths(self.kb, before, now)
        except freshness.HistoryGone:
            return None
        total = state.Counts.from_meta(self.meta).documents
        if len(changed) > _REFRESH_LIMIT and len(changed) > total // 2:
            return None
        try:
            return refresh.refresh(self.kb, self.settings, self.conn, self.meta, now)
        except (freshness.HistoryGone, sqlite3.Error, OSError, vectors.VectorFilesBroken):
            return None  # the caller rebuilds: a damaged index is never an error here

    def close(self) -> None:
        self.conn.close()

    # -- lexical ---------------------------------------------------------------------------
    @_guarded
    def lexical(self, query: str, k: int = 10, filters: Filters | None = None,
                match_any: bool = False) -> list[LexicalHit]:
        """Best chunks for a bag-of-words query (all words by default), best first.

        Raises EmptyQuery (E004) for a query with no words.
        """
        return backend(self.meta["lexical"]).query(
            self.conn, self.directory, query, k, filters or Filters(), match_any)

    # -- vectors ---------------------------------------------------------------------------
    def _require_vectors(self) -> embed.Embedder:
        if self.settings.model is None or self.meta.dims == 0:
            raise EmbeddingDisabled(
                "vector search is off: embedding.enabled is false in config.yaml",
                hint="use lexical search, or set embedding.enabled: true")
        return embed.embedder(self.settings.model)

    def embed_query(self, text: str) -> np.ndarray:
        """The query's vector; the last one is kept (a search may ask more than once,
        and a cold one asks first while git checks freshness)."""
        embedder = self._require_vectors()
        self._wants_vectors = True  # a vector search follows: see ensure_fresh
        key = (text, embedder.model_id)
        if self._last_query is None or self._last_query[0] != key:
            words = self._checked_wordpiece(embedder)
            self._last_query = (key, embedder.encode_query(text, words))
        return self._last_query[1]

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
                with contextlib.suppress(LockTimeout, PermissionDenied, OSError), \
                        state.index_lock(self.directory, timeout=0):
                    if vectors.write_wordpiece(
                            self.directory, embedder.wordpiece_table()) == recorded:
                        self._wordpiece = self.directory / vectors.WORDPIECE
        return self._wordpiece

    def _vectors(self) -> tuple[Any, Any]:
        """The memory-mapped matrix and ids, verified against their recorded checksums
        on first use in this load. A mismatch is looked at once more with index_meta as
        committed now (a refresh by another process since this load records new
        checksums); if it stands, it is remembered and the next ensure_fresh rebuilds."""
        self._wants_vectors = True
        if self._matrix is None:
            try:
                self._matrix = self._verified_vectors()
            except vectors.VectorFilesBroken as exc:
                latest = self._committed_meta()
                if latest is None or latest.checksums == self.meta.checksums:
                    self._damaged = str(exc)
                    raise
                self.meta = latest
                try:
                    self._matrix = self._verified_vectors()
                except vectors.VectorFilesBroken as again:
                    self._damaged = str(again)
                    raise
        return self._matrix

    def _verified_vectors(self) -> tuple[Any, Any]:
        vectors.check_sizes(self.directory, self.meta.vector_rows, self.meta.dims,
                            self.meta.hnsw_size)
        matrix, ids = vectors.open_matrix(self.directory, self.meta.vector_rows,
                                          self.meta.dims)
        recorded = self.meta.checksums
        if recorded is not None:  # None: an older index, rebuilt by ensure_fresh
            vectors.verify_matrix(matrix, ids, recorded)
        return matrix, ids

    def _committed_meta(self) -> store.Meta | None:
        try:
            return store.read_meta(self.conn)
        except store.Corrupt:
            return None

    def _check_vectors(self) -> None:
        """Verify the vector files now when this load is going to search them (a query
        was embedded), so damage is found while the index can still be rebuilt."""
        if self._wants_vectors and self._matrix is None and self.meta.dims:
            with contextlib.suppress(vectors.VectorFilesBroken, OSError, ValueError):
                self._vectors()

    @_guarded
    def load_graph(self) -> bool:
        """Load vectors.hnsw for repeated queries (a warm server). A file that fails its
        checksum is rebuilt from the matrix. Returns whether a graph is in use."""
        self._require_vectors()
        if self._graph is None:
            matrix, ids = self._vectors()
            dirty = [int(r) for (r,) in self.conn.execute("SELECT vec_row FROM vec_dirty")]
            try:
                self._graph = vectors.load_graph(self.directory, self.meta.dims,
                                                 self.meta["vector_sha256"], matrix, ids, dirty)
            except vectors.VectorFilesBroken:
                self._graph = self._regraph(matrix, ids)
        return self._graph is not None

    def _regraph(self, matrix: Any, ids: Any) -> Any:
        import numpy as np

        graph = vectors.new_graph(self.meta.dims, max(1, matrix.shape[0]))
        live = np.nonzero(np.asarray(ids) >= 0)[0]
        if live.size:
            graph.add_items(np.asarray(matrix[live]), live)
        with state.index_lock(self.directory):
            sha, size = vectors.save_graph(self.directory, graph)
            self.conn.execute("BEGIN IMMEDIATE")
            self.conn.execute("DELETE FROM vec_dirty")
            store.write_meta(self.conn, {"vector_sha256": sha, "hnsw_size": size})
            self.conn.execute("COMMIT")
            self.meta = store.read_meta(self.conn)
        graph.set_ef(vectors.HNSW_EF_SEARCH)
        return graph

    @_guarded
    def vector(self, query_vector: np.ndarray, k: int = 10,
               filters: Filters | None = None) -> list[VectorHit]:
        """Top-k chunks by cosine similarity. Exact over the memory-mapped matrix, or
        through hnswlib once `load_graph()` ran and no filter narrows the set."""
        import numpy as np

        self._require_vectors()
        matrix, ids = self._vectors()
        q = np.asarray(query_vector, dtype=np.float32).reshape(-1)
        if filters:
            where, params = filters.sql("c")
            rows = np.fromiter(
                (r for (r,) in self.conn.execute(
                    f"SELECT c.vec_row FROM chunks c WHERE c.vec_row IS NOT NULL AND {where}",
                    params)), dtype=np.int64)
            found = vectors.exact_top(matrix, ids, q, k, rows)
        elif self._graph is not None:
            found = (vectors.graph_top(self._graph, ids, q, k)
                     or vectors.exact_top(matrix, ids, q, k))
        else:
            found = vectors.exact_top(matrix, ids, q, k)
        return [VectorHit(cid, score) for cid, score in found]

    # -- metadata --------------------------------------------------------------------------
    @_guarded
    def chunks(self, chunk_ids: Iterable[int]) -> dict[int, ChunkInfo]:
        """Chunk metadata by id; ids no longer in the index are left out."""
        wanted = list(dict.fromkeys(int(c) for c in chunk_ids))
        out: dict[int, ChunkInfo] = {}
        for part, marks in store.in_batches(wanted):
            rows = self.conn.execute(
                "SELECT c.id, c.kind, c.object_id, c.title, c.path, c.type, c.status, "
                "c.format, c.section, c.page, c.chunk_index, c.total_chunks, c.start_line, "
                "c.end_line, c.doc_key, d.locator, c.text FROM chunks c "
                f"JOIN docs d ON d.doc_key = c.doc_key WHERE c.id IN ({marks})", part
            ).fetchall()
            keys = list({r[14] for r in rows})
            tags: dict[str, list[str]] = {}
            if keys:
                kmarks = ",".join("?" * len(keys))
                for key, tag in self.conn.execute(
                        f"SELECT doc_key, tag FROM doc_tags WHERE doc_key IN ({kmarks}) "
                        "ORDER BY tag", keys):
                    tags.setdefault(key, []).append(tag)
            for r in rows:
                out[int(r[0])] = ChunkInfo(
                    chunk_id=int(r[0]), kind=r[1], id=r[2], title=r[3], path=r[4], type=r[5],
                    status=r[6], format=r[7], section=r[8], page=r[9], chunk_index=r[10],
                    total_chunks=r[11], start_line=r[12], end_line=r[13],
                    tags=tags.get(r[14], []), locator=r[15], text=r[16])
        return out

    @_guarded
    def headings(self, object_id: str) -> list[dict[str, Any]]:
        """Headings of a page or markdown source, in document order."""
        rows = self.conn.execute(
            "SELECT text, level, start_line, end_line, path FROM headings WHERE object_id = ? "
            "ORDER BY start_line", (object_id,)).fetchall()
        return [{"text": t, "level": lv, "start_line": s, "end_line": e, "path": p}
                for t, lv, s, e, p in rows]

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
        return {"documents": c.documents, "by_kind": c.by_kind, "by_format": c.by_format,
                "chunks": c.chunks, "vectors": c.vectors}


def rebuild_index(kb: KB, *, force: bool = False,
                  progress: Progress | None = None) -> Report:
    """`vouch index rebuild`: always a full build. E003 for another KB's index unless
    `force`, which deletes it."""
    settings = Settings.of(kb)
    try:
        return _rebuild(kb, settings, force, progress)
    except PermissionDenied:
        if settings.where != location.REPOSITORY:
            raise
        return _rebuild(kb, settings.in_cache(), force, progress)


def _rebuild(kb: KB, settings: Settings, force: bool, progress: Progress | None) -> Report:
    if not force:
        with contextlib.suppress(store.Corrupt):
            Index._validated(kb, settings).close()
    index = Index._rebuilt(kb, settings, progress, force=True)
    report = index.last_report
    index.close()
    assert report is not None
    return report

