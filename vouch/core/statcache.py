"""Caches a long-lived process (a server answering `kb.status`) can trust: each cached
value is checked against the file-system stat of the directories it was computed from.

Counting 10k claims lists 256 shard directories and looks at every name (~10 ms), and
counting proposals runs `git for-each-ref` (~2 ms). A server answers `kb.status` many
times while little changes, so it keeps one count per shard, and the proposal count,
and trusts each while the stats it was computed from are unchanged: adding, removing or
renaming a file always changes its directory's mtime and ctime, and git adds or deletes
a loose ref by renaming or unlinking in its directory (and rewrites packed-refs by
rename).

File-system timestamps are coarse (one kernel tick), so two changes close together can
leave a directory's mtime where it was. As git does for its index ("racily clean"
entries), a value is cached only when everything it depends on last changed more than
`RACY_NS` ago; something that changed recently is simply computed again.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Generic, TypeVar

RACY_NS = 200_000_000  # 200 ms: many ticks of any kernel's coarse clock

Stamp = tuple[int, int, int, int] | None
T = TypeVar("T")


def _stamp(st: os.stat_result) -> tuple[int, int, int, int]:
    return (st.st_ino, st.st_mtime_ns, st.st_ctime_ns, st.st_size)


def _settled(stamps: Iterable[Stamp]) -> bool:
    now = time.time_ns()
    return all(s is None or now - max(s[1], s[2]) > RACY_NS for s in stamps)


class ShardCounts:
    """Objects per shard directory (`base/<hh>/`), reused while the shard is unchanged."""

    def __init__(self) -> None:
        self._cache: dict[str, tuple[Stamp, int]] = {}

    def count(self, base: Path, count_shard: Callable[[str], int]) -> int:
        """Objects under `base`; `count_shard(path)` counts one shard directory."""
        try:
            shards = list(os.scandir(base))
        except FileNotFoundError:
            return 0
        total = 0
        for shard in shards:
            if len(shard.name) != 2 or not shard.is_dir():
                continue
            # stat before listing: a change racing the listing moves the stamp, so the
            # next call counts again instead of trusting a stale number
            stamp = _stamp(shard.stat())
            cached = self._cache.get(shard.path)
            if cached is not None and cached[0] == stamp:
                total += cached[1]
                continue
            n = count_shard(shard.path)
            if _settled([stamp]):
                self._cache[shard.path] = (stamp, n)
            else:
                self._cache.pop(shard.path, None)
            total += n
        return total


class StampedValue(Generic[T]):
    """One value computed from files under `paths`, reused while none of them changed.

    A path that does not exist is part of the stamp too (None), so creating it counts
    as a change. With `paths=None` nothing is cached (the caller cannot name them).
    """

    def __init__(self, paths: list[Path] | None):
        self.paths = paths
        self._cached: tuple[tuple[Stamp, ...], T] | None = None

    def _stamps(self, paths: list[Path]) -> tuple[Stamp, ...]:
        out: list[Stamp] = []
        for path in paths:
            try:
                out.append(_stamp(os.stat(path)))
            except FileNotFoundError:
                out.append(None)
        return tuple(out)

    def get(self, compute: Callable[[], T]) -> T:
        if self.paths is None:
            return compute()
        stamps = self._stamps(self.paths)
        if self._cached is not None and self._cached[0] == stamps:
            return self._cached[1]
        value = compute()
        self._cached = (stamps, value) if _settled(stamps) else None
        return value
