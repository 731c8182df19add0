"""The registered knowledge bases a search across them reads, each as it is found.

A base is read, never written: its index is opened as it is (`access.open_index` with
`refresh=False`), never built, refreshed or rebuilt — that is a search in its own
repository's business — no warm process is started for it, no search log is written
there. What stops it being searched is its state, reported beside the hits, never an
error of the whole search:

- `fresh`, `stale`: searched; stale when its files moved on since its index was made
  (a commit, a pull, an edit), `detail` says so and how to refresh it;
- `missing` (the path is gone: moved or deleted), `refused` (a link now in its path,
  `.vouch` or config.yaml a link or a file: never followed), `unreadable` (this user
  cannot read it, a config.yaml vouch refuses), `unindexed` (never searched there, so no
  index), `unusable` (an index vouch cannot use as it is: another clone's, damaged).

The staleness check is git's (`freshness.start`, ~45 ms at 10k objects); a process that
searches again (a server) repeats it only when the base's git/audit signature moved or
`search.freshness_seconds` passed, as for its own knowledge base.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from vouch.errors import VouchError
from vouch.store.kb_registry import Entry, hostile
from vouch.store.root import VOUCH_DIR

if TYPE_CHECKING:
    from vouch.search.access import SearchIndex
    from vouch.store.kb import KB

SEARCHED = ("found", "fresh", "stale")  # found: not yet opened (`look`), then fresh/stale
_CHECKED = "bases-checked"  # in `warm`: name → (path, signature, monotonic time, stale?)
RECHECK_SECONDS = 30.0
_FILES = "bases-files"  # in `warm`: .vouch path → (device, inode) of the index file opened


class Base(NamedTuple):
    name: str
    path: str
    state: str  # found → fresh | stale; missing | refused | unreadable | unindexed | unusable
    detail: str | None = None
    kb: KB | None = None  # for the searched ones

    @property
    def searched(self) -> bool:
        return self.state in SEARCHED

    def report(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "path": self.path, "state": self.state}
        if self.detail:
            out["detail"] = self.detail
        return out


def look(entry: Entry) -> Base:
    """What `entry` is now, opening nothing but its config (no index, no git)."""
    from vouch.store.kb import KB

    problem = hostile(Path(entry.path))
    if problem is not None:
        if not os.path.lexists(entry.path):
            state = "missing"
            problem += " (moved or deleted? `vouch kb remove` it, `vouch kb add` the new place)"
        else:
            state = "unreadable" if "cannot be read" in problem else "refused"
        return Base(entry.name, entry.path, state, problem)
    kb = KB(Path(entry.path) / VOUCH_DIR)
    try:
        kb.config  # noqa: B018 - read here: a config vouch refuses is this base's state
    except VouchError as exc:
        return Base(entry.name, entry.path, "unreadable", exc.message)
    if not _index_file(kb).is_file():
        return Base(
            entry.name,
            entry.path,
            "unindexed",
            f"no search index yet: run `vouch index rebuild` in {entry.path}",
            kb,
        )
    return Base(entry.name, entry.path, "found", None, kb)


def registered_opened(
    names: Sequence[str], warm: dict[Any, Any]
) -> list[tuple[Base, SearchIndex | None]]:
    """The registered bases named (or all), each looked at and opened (`opened_all`);
    UsageError when the registry holds none."""
    from vouch.errors import UsageError
    from vouch.store import kb_registry

    entries = kb_registry.named(list(names))
    if not entries:
        raise UsageError(
            f"no knowledge bases are registered ({kb_registry.registry_path()})",
            hint="a person adds one with `vouch kb add PATH`",
        )
    return list(opened_all([look(e) for e in entries], warm))


def opened_all(
    found: Sequence[Base], warm: dict[Any, Any]
) -> list[tuple[Base, SearchIndex | None]]:
    """Each base with its index opened as it is (never refreshed) and its state checked
    — fresh or stale; or unusable/unreadable (with why) and no index — their git
    checks run side by side (each starts its git processes, then each result is read:
    five bases cost about one)."""
    out: list[tuple[Base, SearchIndex | None]] = []
    waiting: list[tuple[int, Base, SearchIndex, Any, Any]] = []
    for base in found:
        if not base.searched or base.kb is None:
            out.append((base, None))
            continue
        try:
            index = _open(base.kb, warm)
            known, check = _stale_or_probe(base, base.kb, index, warm)
        except (VouchError, OSError) as exc:
            out.append((_failed(base, exc), None))
            continue
        if check is None:
            out.append(_judged(base, index, bool(known)))
        else:
            out.append((base, None))
            waiting.append((len(out) - 1, base, index, check, known))
    for place, base, index, check, remember in waiting:
        try:
            stale = _probed(base, index, check, remember, warm)
        except (VouchError, OSError) as exc:
            out[place] = (_failed(base, exc), None)
        else:
            out[place] = _judged(base, index, stale)
    return out


def _open(kb: KB, warm: dict[Any, Any]) -> SearchIndex:
    from vouch.search import access

    _drop_if_replaced(kb, warm)
    index = access.open_index(kb, warm, refresh=False, counted=False)
    files: dict[str, Any] = warm.setdefault(_FILES, {})
    if str(kb.dir) not in files:
        st = os.stat(_index_file(kb))
        files[str(kb.dir)] = (st.st_dev, st.st_ino)
    return index


def _failed(base: Base, exc: Exception) -> Base:
    if isinstance(exc, VouchError):
        return base._replace(state="unusable", detail=exc.message, kb=None)
    detail = f"cannot be read ({getattr(exc, 'strerror', None) or exc})"
    return base._replace(state="unreadable", detail=detail, kb=None)


def _judged(base: Base, index: SearchIndex, stale: bool) -> tuple[Base, SearchIndex]:
    if stale:
        detail = f"the index is older than the files: run `vouch index rebuild` in {base.path}"
        return base._replace(state="stale", detail=detail), index
    return base._replace(state="fresh"), index


def _drop_if_replaced(kb: KB, warm: dict[Any, Any]) -> None:
    """Forget an index this process holds for `kb` when that base's own searches have
    since refreshed it (its corpus revision moved) or rebuilt it (another file at its
    path): it is opened again as it is now, never refreshed from here."""
    import sqlite3

    key = ("search-index", str(kb.dir))
    found: SearchIndex | None = warm.get(key)
    if found is None:
        return
    files: dict[str, Any] = warm.setdefault(_FILES, {})
    try:
        st = os.stat(_index_file(kb))
        row = found.index.conn.execute(
            "SELECT value FROM index_meta WHERE key = 'corpus_revision'"
        ).fetchone()
        same = (st.st_dev, st.st_ino) == files.get(str(kb.dir), (st.st_dev, st.st_ino)) and (
            row is not None and str(row[0]) == found.revision
        )
    except (OSError, sqlite3.Error):
        same = False
    if not same:
        del warm[key]
        files.pop(str(kb.dir), None)
        with contextlib.suppress(sqlite3.Error):
            found.index.close()


def _index_file(kb: KB) -> Path:
    """Where `kb`'s index database is (`index.location`), found without making anything
    (no clone id, no folder)."""
    from vouch.index import location

    return location.locate(kb.dir, str(kb.dir.resolve())).path / location.DB_NAME


def _stale_or_probe(
    base: Base, kb: KB, index: SearchIndex, warm: dict[Any, Any]
) -> tuple[Any, Any]:
    """(stale, None) when `warm` remembers the answer — git's signature unchanged,
    RECHECK_SECONDS not passed — else (what to remember it by, the started git check)."""
    from vouch.index import freshness, state
    from vouch.search.access import FRESHNESS_SECONDS, _signature

    checked: dict[str, Any] = warm.setdefault(_CHECKED, {})
    signature = _signature(kb)
    now = time.monotonic()
    # what is reported, never what is served (nothing here refreshes): a long-lived
    # process asks git again when the base's HEAD, refs, git index or audit log moved,
    # and at least every RECHECK_SECONDS for work-tree edits (`freshness_seconds`, if
    # longer)
    ttl = max(
        RECHECK_SECONDS, kb.config.typed("search.freshness_seconds", FRESHNESS_SECONDS, float)
    )
    meta = index.index.meta
    remembered = checked.get(base.name)
    if (
        remembered is not None
        and signature is not None
        and remembered[:3] == (base.path, signature, id(meta))
        and now - remembered[3] <= ttl
    ):
        return bool(remembered[4]), None
    return (signature, now), freshness.start(kb, state.indexed_state(meta))


def _probed(
    base: Base, index: SearchIndex, probe: Any, remember: Any, warm: dict[Any, Any]
) -> bool:
    """Whether the index was made from other files than the base holds now (or under
    other settings), from its started git check; remembered in `warm`."""
    try:
        current = probe.result()
    except BaseException:
        probe.close()
        raise
    meta = index.index.meta
    mismatch = index.index.settings.mismatch(meta)
    stale = mismatch is not None or meta["source_hash"] != current.source_hash
    signature, now = remember
    warm.setdefault(_CHECKED, {})[base.name] = (base.path, signature, id(meta), now, stale)
    return bool(stale)
