"""The search engine's view of the derived index (`vouch.index.api`), kept in one place.

Adds what search needs on top of the index primitives: the index is kept warm in the
caller's `warm` dict (a server opens it once), vector queries over-fetch unfiltered and
filter the few candidates by their metadata before falling back to the exact filtered
scan (a status filter is on for every default search, and scanning every row id for it
costs more than the query), and the optional HNSW graph is loaded only from a process's
second search on (a cold CLI answers one query from the memory-mapped matrix).
"""

from __future__ import annotations

import contextlib
import os
import re
import sqlite3
import time
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from vouch.core.progress import Progress
from vouch.errors import IndexCollision, IndexUnusable, VouchError
from vouch.index.api import Index
from vouch.index.catalog import passing
from vouch.index.filters import Filters, ascii_fold
from vouch.index.lexical import LexicalHit
from vouch.index.rows import ChunkInfo
from vouch.index.turnmap import TurnLinks
from vouch.search.weighting import QUERY_STOPWORDS, STOPWORDS

if TYPE_CHECKING:
    from vouch.store.kb import KB

# The graph searches WIDTH × k wide for k neighbours: at 100k turns the exact top 200
# is found 0.952 at 400 wide (1.4 ms), 0.978 at 800 (2.6 ms), and the default search's
# top 10 are the same in 99.65 % of places (bench/RESULTS.md, issue 19); a filter that
# narrows nothing searches as no filter does. A narrowing filter asks for k × OVERFETCH
# and keeps the k that pass (the exact filtered search when fewer do). Below
# graph.EXACT_BELOW vectors every vector search is exact.
WIDTH = 2
OVERFETCH = 4
_LETTERS = re.compile(r"[^\W\d_]+")
FRESHNESS_SECONDS = 2.0
WATCH = "files-watch"  # in `warm`: what tells this process that `.vouch/` files changed


class Changes(Protocol):
    """What changed under `.vouch/` since the last call (`vouch.servers.watch`): whether
    anything did, and which files (`.vouch`-relative; None: look at everything)."""

    def changes(self) -> tuple[bool, frozenset[str] | None]: ...


def lexical_query(query: str) -> str:
    """The query without its stopwords, unless nothing else is left.

    With any-word matching, "the" or "how" match nearly every chunk, and BM25 must score
    every match: at 150k chunks such a query costs ~0.3 s instead of ~30 ms. Their IDF is
    near zero, so ranking barely changes (golden set: fts MRR@10 0.7068 vs 0.7055).
    """
    words = query.split()
    kept = [w for w in words if w.lower().strip(".,;:!?()[]\"'") not in QUERY_STOPWORDS]
    return " ".join(kept) if kept else query


def filters(
    *,
    kinds: Sequence[str],
    tags: Sequence[str],
    types: Sequence[str],
    statuses: Sequence[str],
    exclude: Sequence[str],
    speakers: Sequence[str] = (),
    since: str | None = None,
    until: str | None = None,
) -> Filters:
    return Filters.of(
        speakers=speakers,
        since=since,
        until=until,
        kinds=kinds,
        tags=tags,
        types=types,
        statuses=statuses or None,
        exclude_statuses=exclude or None,
    )


def passes(info: ChunkInfo, f: Filters) -> bool:
    """Whether a chunk outside the index (a pending one) passes `f`, as `Filters.sql`
    decides for the index's chunks."""
    return (
        (not f.kinds or info.kind in f.kinds)
        and (not f.types or info.type in f.types)
        and (not f.statuses or info.status in f.statuses)
        and (not f.formats or info.format in f.formats)
        and info.status not in f.exclude_statuses
        and (not f.speakers or ascii_fold(info.speaker or "") in f.speakers)
        and (not f.since or (info.time or "") >= f.since)
        and (not f.until or (info.time is not None and info.time <= f.until + "~"))
        and all(t in info.tags for t in f.tags)
    )


class SearchIndex:
    """An open index as search reads it, with what a warm process remembers of it."""

    __slots__ = ("checked", "config", "index", "searches", "steady")

    def __init__(self, index: Index, config: dict[str, Any]):
        self.index = index
        self.config = config  # the configuration it was opened under (`Settings.of`)
        self.searches = 0
        # (monotonic time, _signature) of the last freshness check
        self.checked: tuple[float, Any] = (0.0, None)
        self.steady: tuple[str, int] = ("", 0)  # (corpus revision, searches of it so far)

    @property
    def warm(self) -> bool:
        """Whether this process searched this revision of the index before: then what it
        reads once per revision (labels, postings, turn map: ~1 s at 100k turns) pays
        off; while the index changes under every search, each asks SQLite."""
        return self.steady[1] > 1

    @property
    def revision(self) -> str:
        return self.index.corpus_revision

    @property
    def lexical_backend(self) -> str:
        return str(self.index.meta["lexical"])

    def lexical(self, query: str, k: int, f: Filters, within: bool = False) -> list[LexicalHit]:
        """Chunks with every word first (RFC-0004's bag of words), then — when those are
        fewer than k — chunks with any of them (hybrid-search.md's "and/or"), each part
        in BM25 order. A long or paraphrased query still finds the chunks that share most
        of its words; a short keyword query is answered by the all-words pass alone,
        5-10x cheaper on common words at 150k chunks. Ranked this way the golden set
        scores higher too (fts MRR@10 0.7154 vs 0.7068 for any-word BM25 alone)."""
        text = lexical_query(query)
        within = within and bool(f.tags)
        if self.warm:  # the same ranking, from memory
            warm = self.index.warm_lexical(text, k, f, within)
            if warm is not None:
                return warm
        if within:
            return self.index.collection_lexical(text, k, f)
        hits = self.index.lexical(text, k, f, match_any=False)
        if len(hits) >= k or len(text.split()) < 2:
            return hits
        seen = {h.chunk_id for h in hits}
        more = self.index.lexical(text, k, f, match_any=True)
        return (hits + [h for h in more if h.chunk_id not in seen])[:k]

    def snippets(self, query: str, ids: Iterable[int]) -> dict[int, str]:
        """Snippets for the rows a page shows (ranking fetched none)."""
        return self.index.snippets(lexical_query(query), ids)

    def means_something(self, query: str) -> bool:
        """Whether a content word of the query is one the model knows whole or one the
        knowledge base holds (True when the model cannot tell). A query of neither —
        `zzzqqqxxx` — has a vector made of word pieces: noise that is close to
        everything, so it must find nothing."""
        words = [w for w in _LETTERS.findall(query.lower()) if w not in STOPWORDS]
        words = words or _LETTERS.findall(query.lower())
        known = self.index.whole_words(words)
        if known is None or any(known):
            return True
        return bool(words) and bool(self.index.lexical(" ".join(words), 1, match_any=True))

    def query_vector(self, query: str) -> Any:
        return self.index.embed_query(query)

    def embed_texts(self, texts: Sequence[str]) -> Any:
        return self.index.embed_texts(texts)

    def vector(self, query: str, k: int, f: Filters) -> list[tuple[int, float]]:
        qvec = self.query_vector(query)
        if self.searches > 1 and self.index.graph_pays():
            self.index.load_graph()  # unfiltered queries (and the over-fetch) use it
        if not f or self._narrows_nothing(f):
            return [(h.chunk_id, h.score) for h in self.index.vector(qvec, k, breadth=k * WIDTH)]
        wide = self.index.vector(qvec, k * OVERFETCH)
        ok = self._passing([h.chunk_id for h in wide], f)
        kept = [(h.chunk_id, h.score) for h in wide if h.chunk_id in ok]
        if len(kept) >= k or len(wide) < k * OVERFETCH:
            return kept[:k]
        return [(h.chunk_id, h.score) for h in self.index.vector(qvec, k, f)]

    def neighbours(self, chunk_ids: Iterable[int]) -> dict[int, list[ChunkInfo]]:
        return self.index.neighbours(chunk_ids)

    def chunks(self, ids: Iterable[int]) -> dict[int, ChunkInfo]:
        return self.index.chunks(ids)

    def texts(self, ids: Iterable[int]) -> dict[int, str]:
        return self.index.texts(ids)

    def uncommitted(self, kb: KB) -> frozenset[str]:
        """Repository paths of knowledge files whose work-tree bytes HEAD does not hold,
        as the index recorded them (its `dirty` state: no git command here); worked out
        once per index state, not per query."""
        from vouch.index.state import indexed_state

        prefix = kb.rel(".") + "/"

        def paths(meta: Any) -> frozenset[str]:
            try:
                return frozenset(prefix + rel for rel in indexed_state(meta).dirty)
            except (KeyError, ValueError):
                return frozenset()

        return self.index.meta.derived("uncommitted", paths)

    def turn_links(self, ids: Any, f: Filters) -> TurnLinks:
        """`Index.turn_links` of the chunk ids (an array), asked only when the index holds
        a transcript."""
        if not self.index.counts()["by_format"].get("transcript"):
            return TurnLinks.of({}, {})
        if self.warm:  # from memory
            labels = self.index.labels()
            passing = None if labels.everything(f) else labels.mask(f)
            return self.index.turn_map().links(ids, passing)
        return self.index.turn_links([int(c) for c in ids], f)

    def labels_of(self, ids: Any) -> tuple[Any, list[tuple[str, str]]]:
        """(kind, status) of each chunk id (an array) for the ranking prior: a number into
        the list returned with it, -1 for a pending proposal's chunk (negative id) or one
        gone from the index. The labels in memory in a warm process (SQL for an id they
        miss); one `kinds` look-up in a cold one."""
        import numpy as np

        if not self.warm:
            found = self.index.kinds(c for c in ids.tolist() if c > 0)
            pairs = list(dict.fromkeys(found.values()))
            number = {pair: n for n, pair in enumerate(pairs)}
            return np.array([number[found[c]] if c in found else -1 for c in ids.tolist()]), pairs
        labels = self.index.labels()
        codes = labels.codes_of(ids)
        pairs = list(labels.pairs)
        missed = ids[(codes < 0) & (ids > 0)].tolist()
        if missed:  # chunks the labels were read before
            found = self.index.kinds(missed)
            for n in np.flatnonzero((codes < 0) & (ids > 0)).tolist():
                pair = found.get(int(ids[n]))
                if pair is not None:
                    codes[n] = len(pairs)
                    pairs.append(pair)
        return codes, pairs

    def _narrows_nothing(self, f: Filters) -> bool:
        """A warm process's check that every chunk passes `f` — the default search's
        filter, in a knowledge base with nothing superseded, archived or redacted — so
        the vector channel searches as with no filter instead of over-fetching and
        filtering (`WIDTH`, `OVERFETCH`)."""
        return self.warm and self.index.labels().everything(f)

    def _passing(self, ids: list[int], f: Filters) -> set[int]:
        if not self.warm:
            return passing(self.index, ids, f)
        labels = self.index.labels()
        ok = labels.passing(ids, f)
        unknown = [c for c in ids if not labels.knows(c)]
        return ok | passing(self.index, unknown, f) if unknown else ok


def _signature(kb: KB) -> tuple[Any, ...] | None:
    """Cheap evidence that nothing vouch or git did changed the files: stats of HEAD, the
    refs, git's index and the audit log (every vouch write appends to it). None when the
    repository layout is unusual (worktrees, GIT_DIR): then every search checks. (Paths
    as strings: pathlib costs more than the stats, ~0.2 ms a search.)"""
    git_dir = os.path.join(kb.root, ".git")
    if not os.path.isdir(git_dir):
        return None
    out: list[Any] = []
    try:
        with open(os.path.join(git_dir, "HEAD"), "rb") as file:
            head = file.read()
        out.append(head)
        paths = [
            os.path.join(git_dir, "index"),
            os.path.join(git_dir, "packed-refs"),
            os.path.join(kb.dir, "audit.log.jsonl"),
        ]
        if head.startswith(b"ref: "):
            paths.append(os.path.join(git_dir, head[5:].strip().decode("utf-8", "replace")))
        for path in paths:
            try:
                st = os.stat(path)
                out.append((st.st_mtime_ns, st.st_size, st.st_ino))
            except FileNotFoundError:
                out.append(None)
    except OSError:
        return None
    return tuple(out)


def _keep_fresh(
    kb: KB,
    found: SearchIndex,
    watch: Changes | None,
    now: float,
    progress: Progress | None = None,
) -> None:
    """A held index brought up to date: checked in full, or only for the files the
    watch names, when git's signature or the watch says something moved. Raises
    sqlite3.Error when its connection was closed (a reload that failed half-way)."""
    found.index.conn.total_changes  # noqa: B018 - a closed connection raises here
    signature = _signature(kb)
    last_time, last_signature = found.checked
    paths: frozenset[str] | None = None
    if watch is not None:  # taken before the check: a write during it counts next time
        moved, paths = watch.changes()
    else:
        ttl = kb.config.typed("search.freshness_seconds", FRESHNESS_SECONDS, float)
        moved = now - last_time > ttl
    same = signature is not None and signature == last_signature
    if moved or not same:
        found.checked = (last_time, None)  # a check that fails is made again, in full
        found.index.ensure_fresh(progress, only=paths if same else None)
        found.checked = (now, signature)


def open_index(
    kb: KB,
    warm: dict[str, Any],
    *,
    meanwhile: Callable[[Index], object] | None = None,
    progress: Progress | None = None,
    refresh: bool = True,
    counted: bool = True,
) -> SearchIndex:
    """The knowledge base's index, fresh; reused from `warm` when this process has it.

    A warm process (a server) skips the full freshness check (two git processes, ~45 ms
    at 10k objects) while the git/audit signature is unchanged and the last check is
    younger than `search.freshness_seconds` (default 2): anything vouch or git does is
    seen at once, a hand edit of an uncommitted file within that many seconds. A process
    that keeps a file watch in `warm[WATCH]` (`vouch warm`, the servers) skips it while
    the signature is unchanged and the watch saw no change, and has git look only at the
    files the watch names when it did: nothing is missed, however soon.
    An index opened under another configuration than `kb`'s is opened anew. A cold
    open runs `meanwhile(index)` while git checks freshness (`Index.open`); `progress`
    hears of a build or rebuild. With `refresh` false the index is served as it is,
    never built, refreshed or rebuilt (another knowledge base's, `search.bases`);
    with `counted` false this open is not counted as a search (what `SearchIndex.warm`
    goes by), as when the search that follows opens it again.
    """
    key: Any = ("search-index", str(kb.dir))
    found: SearchIndex | None = warm.get(key)
    watch: Changes | None = warm.get(WATCH)
    now = time.monotonic()
    if found is not None and found.config != kb.config.data:
        del warm[key]  # config.yaml changed (a process that opens the KB per command)
        found.index.close()
        found = None
    if found is not None and refresh:
        try:
            _keep_fresh(kb, found, watch, now, progress)
        except (IndexUnusable, IndexCollision, sqlite3.Error, OSError):
            # what this process held went wrong under it (an index rebuilt or replaced
            # by a checkout, a reload that failed half-way): opened anew, as a cold
            # command would, which answers or fails as that command does
            del warm[key]
            with contextlib.suppress(sqlite3.Error):
                found.index.close()
            found = None
    if found is None:
        if watch is not None:
            watch.changes()  # the check below covers whatever it had queued
        found = SearchIndex(
            Index.open(kb, ensure_fresh=refresh, meanwhile=meanwhile, progress=progress),
            kb.config.data,
        )
        found.checked = (now, _signature(kb))
        warm[key] = found
    if not counted:
        return found
    found.searches += 1
    seen, count = found.steady
    found.steady = (found.revision, count + 1 if seen == found.revision else 1)
    return found


def forget_decided(kb: KB, warm: dict[str, Any], commit: str) -> None:
    """An approved redaction or deletion (`commit`) just landed: the index, when one was
    built, is brought up to date now — its rebuild without the words scrubs the search
    log and the lint cache too (`vouch.index.forgetting`); without one (or one that
    would not open) the log and the cache are scrubbed from the decision itself. Never an
    error: the next search does the same for the index."""
    from vouch.index import forgetting, location

    if (location.of(kb.dir).path / location.DB_NAME).is_file():
        with contextlib.suppress(VouchError, OSError, sqlite3.Error):
            open_index(kb, warm)
            return
    with contextlib.suppress(VouchError, OSError, sqlite3.Error):
        forgetting.scrub_decided(kb, commit)
