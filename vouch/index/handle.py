"""What opens and maintains the index: validate, rebuild, refresh, verify, close.

Opening follows spec/search-index-lifecycle.md with DESIGN §5's self-healing: a
missing or corrupt index is rebuilt; another knowledge base's index at this path is
E003; a stale one is refreshed incrementally (or rebuilt when the configuration it was
built under changed) unless `index.auto_refresh: false`, which makes it E002.

Corrupt includes vector files that do not match their recorded checksums. Those are
verified on first use, not on every open (a lexical search must not pay for reading the
matrix); a caller that embeds its query while the index opens (`meanwhile`, as a cold
search does) has them verified then too, so a damaged matrix is rebuilt before any
result is read. The index lives where `location` says: `.vouch/index/`, or a per-user
cache when that cannot be written. Queries are `vouch.index.api.Index`'s.
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import Callable, Collection
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from vouch.errors import IndexCollision, IndexUnusable, LockTimeout, PermissionDenied
from vouch.index import fitting, forgetting, freshness, location, state, store, vectors
from vouch.index.lexical import BACKENDS, backend
from vouch.index.settings import Settings
from vouch.store.kb import KB

if TYPE_CHECKING:
    from vouch.core.progress import Progress
    from vouch.index.ingest import Report

# Above this many changed documents (and half the index) a rebuild is cheaper.
_REFRESH_LIMIT = 2000


class IndexHandle:
    """An open, validated index: opening, verifying, refreshing, rebuilding, closing.

    `vouch.index.api.Index` adds the queries on top of it."""

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
        self._last_query: tuple[tuple[str, str, str], Any] | None = None
        self._wants_vectors = False  # this load embedded a query or mapped the matrix
        self._damaged: str | None = None  # why the vector files failed verification
        self._forgetting: set[str] | None = None  # words of what a refresh found gone

    @property
    def directory(self) -> Path:
        return self.settings.index_dir

    @property
    def corpus_revision(self) -> str:
        return self.meta["corpus_revision"]

    # -- opening ---------------------------------------------------------------------------
    @classmethod
    def open(
        cls,
        kb: KB,
        *,
        ensure_fresh: bool = True,
        progress: Progress | None = None,
        meanwhile: Callable[[Any], object] | None = None,
    ) -> Self:
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
    def _open(
        cls,
        kb: KB,
        settings: Settings,
        ensure_fresh: bool,
        progress: Progress | None,
        meanwhile: Callable[[Any], object] | None,
    ) -> Self:
        try:
            index = cls._validated(kb, settings)
        except store.Corrupt as exc:
            if not ensure_fresh:
                raise IndexUnusable(
                    f"the search index is unusable: {exc}", hint="run `vouch index rebuild`"
                ) from exc
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
    def _validated(cls, kb: KB, settings: Settings) -> Self:
        directory = settings.index_dir
        conn = store.connect(directory / store.DB_NAME)
        try:
            meta = store.read_meta(conn)
            if meta["kb_path"] != settings.kb_path:
                raise IndexCollision(
                    f"the index at {directory} belongs to another knowledge base "
                    f"({meta['kb_path']})",
                    hint=f"delete {directory} (or run `vouch index rebuild --force`)",
                )
            store.quick_check(conn, meta)
            try:
                state.indexed_state(meta)
                state.Counts.from_meta(meta)
            except (ValueError, TypeError, AttributeError) as exc:
                raise store.Corrupt(f"index_meta holds an unreadable git state: {exc}") from exc
            try:
                vectors.check_sizes(directory, meta.vector_rows, meta.dims, meta.graph_size)
            except vectors.VectorFilesBroken as exc:
                raise store.Corrupt(str(exc)) from exc
            backend(meta["lexical"] if meta["lexical"] in BACKENDS else "fts5").check(directory)
        except BaseException:
            conn.close()
            raise
        return cls(kb, settings, conn, meta)

    @classmethod
    def _rebuilt(
        cls, kb: KB, settings: Settings, progress: Progress | None, force: bool = False
    ) -> Self:
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
        """The index file as it is now. The new one is opened and checked before the old
        connection is closed: a file that fails its checks (another knowledge base's, a
        half-written one) raises with this handle still whole, never with a closed
        connection a long-lived process would go on using."""
        fresh = type(self)._validated(self.kb, self.settings)
        with contextlib.suppress(sqlite3.Error):
            self.conn.close()
        self.conn, self.meta = fresh.conn, fresh.meta
        self._matrix = None
        self._graph = None
        self._damaged = None
        self._wordpiece_checked = False

    def ensure_fresh(
        self,
        progress: Progress | None = None,
        *,
        max_age: float = 0.0,
        meanwhile: Callable[[Any], object] | None = None,
        only: Collection[str] | None = None,
    ) -> Report | None:
        """Refresh (or rebuild) when the files or the configuration moved on.

        Returns what was done, or None when the index was already fresh. The check costs
        a few git calls (~45 ms at 10k objects, ~0.3 s at 100k: git's stat of every
        tracked file, `freshness.Probe`); a warm server answering many queries may pass
        `max_age` to skip checks made less than that many seconds after the last one,
        and `only` the `.vouch`-relative paths of every file that changed since the
        state the index records was found (a file watch: `freshness.start`). Vector files
        found damaged (here, or by an earlier query of this load) make it a
        rebuild.
        """
        if self._damaged is None and max_age and time.monotonic() - self._checked_at < max_age:
            if meanwhile is not None:
                meanwhile(self)
            return None
        probe = freshness.start(self.kb, state.indexed_state(self.meta), only)
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
                    hint="run `vouch index rebuild`, or set index.auto_refresh: true",
                )
        from vouch.index import build

        with state.index_lock(self.directory):
            report = None
            try:
                self._reload()  # another process may have refreshed it while we waited
                self._check_vectors()
                reason = self.settings.mismatch(self.meta)
                if (
                    self._damaged is None
                    and reason is None
                    and self.meta["source_hash"] == now.source_hash
                ):
                    return None
                if self._damaged is None and reason is None:
                    report = self._refresh(now)
            except store.Corrupt:
                report = None
            if report is None:
                self.conn.close()
                report = build.rebuild(self.kb, self.settings, progress)
            self._reload()
            if self._forgetting is not None:
                forgetting.scrub(self.kb, self.conn, self._forgetting)
                self._forgetting = None
        self.last_report = report
        self._checked_at = time.monotonic()
        return report

    def _keep_stamps(self, now: freshness.State) -> None:
        """Record directory stamps that became trustworthy since the index was written, so
        the next check skips those directories, and what git's index held (the next
        check takes the staged paths over while it stays as it is); skipped when another
        writer is busy."""
        kept = state.indexed_state(self.meta)
        if (now.stamps, now.index_stamp, now.staged) == (
            kept.stamps,
            kept.index_stamp,
            kept.staged,
        ):
            return
        try:
            with state.index_lock(self.directory, timeout=0):
                self.conn.execute("BEGIN IMMEDIATE")
                try:
                    if store.read_meta(self.conn)["source_hash"] == now.source_hash:
                        store.write_meta(
                            self.conn,
                            {
                                "stamps": now.stamps_json(),
                                "index_stamp": now.index_stamp,
                                "staged": now.staged_json(),
                            },
                        )
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
        counts = state.Counts.from_meta(self.meta)
        if len(changed) > _REFRESH_LIMIT and len(changed) > counts.documents // 2:
            return None
        lost = forgetting.forgotten(self.kb, self.conn, changed)
        if lost is not None:  # deleted or redacted: a new file, with none of its words
            self._forgetting = lost
            return None
        if fitting.refit_due(self.meta, counts.chunks + len(changed)):
            return None  # a full build fits the token weights to the corpus anew
        try:
            return refresh.refresh(self.kb, self.settings, self.conn, self.meta, now)
        except (freshness.HistoryGone, sqlite3.Error, OSError, vectors.VectorFilesBroken):
            return None  # the caller rebuilds: a damaged index is never an error here

    def close(self) -> None:
        self.conn.close()

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
        vectors.check_sizes(
            self.directory, self.meta.vector_rows, self.meta.dims, self.meta.graph_size
        )
        matrix, ids = vectors.open_matrix(self.directory, self.meta.vector_rows, self.meta.dims)
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


def rebuild_index(kb: KB, *, force: bool = False, progress: Progress | None = None) -> Report:
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
            IndexHandle._validated(kb, settings).close()
    index = IndexHandle._rebuilt(kb, settings, progress, force=True)
    report = index.last_report
    index.close()
    assert report is not None
    return report
