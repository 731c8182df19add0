"""Has anything under `.vouch/` changed since the last freshness check? (the warm process)

The full check asks git to stat every tracked file (~50 ms at 10k objects, ~0.3 s at
100k). A process that stays up can instead be told by the kernel: an inotify watch on
every directory of `.vouch/` (the derived index, the local locks and the search log
aside) queues an event the moment a file there is written, created, deleted, renamed or
has its mode changed, before the writing call returns. So when a request arrives and
nothing is queued, no file changed since the check before, and git's answer would be
the same; HEAD, the refs and git's index are compared by stat as before
(`vouch.search.access`). The caller drains the queue *before* it runs a check, so a
write made during the check is seen next time.

Anything the watch cannot vouch for says "changed": a queue overflow (once), and from
then on always a directory it could not watch (the kernel's watch limit), `.vouch/`
itself moved or deleted, and every platform without inotify (`Watch.open` returns
`Always`). Not seen, and so not
supported by a warm process: changes made through a hard link from outside `.vouch/`,
and network file systems, whose remote writers raise no local events.
"""

from __future__ import annotations

import os
from typing import Any

# not knowledge: derived, local or written by every search (`.vouch/.gitignore`)
_IGNORED_DIRS = frozenset({"index", "locks"})
_IGNORED_FILES = frozenset({"searches.log.jsonl"})


class Always:
    """No watch: every request runs the full check (what a cold command does)."""

    kind = "none (a full check per request)"

    def changed(self) -> bool:
        return True

    def close(self) -> None:
        return None


class Watch:
    """An inotify watch on every directory of one `.vouch/`."""

    kind = "inotify"

    def __init__(self, vouch_dir: str):
        from inotify_simple import INotify, flags

        self._flags = flags
        self._mask = (
            flags.MODIFY
            | flags.ATTRIB
            | flags.CLOSE_WRITE
            | flags.CREATE
            | flags.DELETE
            | flags.MOVED_FROM
            | flags.MOVED_TO
            | flags.DELETE_SELF
            | flags.MOVE_SELF
            | flags.DONT_FOLLOW
            | flags.ONLYDIR
        )
        self._inotify = INotify()
        self._top = vouch_dir
        self._dirs: dict[int, str] = {}
        self._broken = False
        self._absorbed = False
        try:
            self._watch_tree(vouch_dir, top=True)
        except BaseException:
            self._inotify.close()
            raise

    @classmethod
    def open(cls, vouch_dir: str) -> Watch | Always:
        """A watch on `vouch_dir`, or `Always` where the kernel offers none."""
        try:
            return cls(vouch_dir)
        except (ImportError, OSError):
            return Always()

    def _watch_tree(self, path: str, top: bool = False) -> None:
        try:
            wd = self._inotify.add_watch(path, self._mask)
        except OSError:  # the watch limit (ENOSPC), or gone meanwhile: cannot vouch
            self._broken = True
            return
        self._dirs[wd] = path
        try:
            entries = list(os.scandir(path))
        except OSError:
            self._broken = True
            return
        for entry in entries:
            if top and entry.name in _IGNORED_DIRS:
                continue
            if entry.is_dir(follow_symlinks=False):
                self._watch_tree(entry.path)

    def fileno(self) -> int:
        """Readable when events are queued (for `select`)."""
        return self._inotify.fileno()

    def changed(self) -> bool:
        """Whether anything changed since the last call (which empties the queue)."""
        seen = self._absorbed or self._read()
        self._absorbed = False
        return seen

    def absorb(self) -> bool:
        """Empty the queue now, remembering for `changed` whether it held a change."""
        seen = self._read()
        self._absorbed = self._absorbed or seen
        return seen

    def _read(self) -> bool:
        flags = self._flags
        seen = self._broken
        try:
            events: list[Any] = self._inotify.read(timeout=0)
        except OSError:
            return True
        for event in events:
            if event.mask & flags.Q_OVERFLOW:  # events were lost: the check sees them all
                seen = True
                continue
            path = self._dirs.get(event.wd)
            if path is None:
                continue  # a watch already removed (IN_IGNORED after a delete)
            if event.mask & flags.IGNORED:
                del self._dirs[event.wd]
                seen = True
                continue
            if event.mask & (flags.DELETE_SELF | flags.MOVE_SELF) and path == self._top:
                self._broken = seen = True
                continue
            if path == self._top and (event.name in _IGNORED_DIRS or event.name in _IGNORED_FILES):
                continue
            seen = True
            if event.mask & flags.ISDIR and event.mask & (flags.CREATE | flags.MOVED_TO):
                self._watch_tree(os.path.join(path, event.name))
        return seen

    def close(self) -> None:
        self._inotify.close()
