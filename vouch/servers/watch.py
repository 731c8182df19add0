"""What changed under `.vouch/` since the last freshness check? (long-lived processes)

The full check asks git to stat every tracked file (~50 ms at 10k objects, ~0.3 s at
100k). A process that stays up can instead be told by the kernel: an inotify watch on
every directory of `.vouch/` (the derived index, the local locks and the search log
aside) queues an event the moment a file there is written, created, deleted, renamed or
has its mode changed, before the writing call returns. So when a request arrives and
nothing is queued, no file changed since the check before, and git's answer would be
the same; when something is, the events name the files, and git need only look at
those (`freshness.start(only=...)`). HEAD, the refs and git's index are compared by
stat as before (`vouch.search.access`). The caller takes the changes *before* it runs
a check, so a write made during the check is seen next time.

Anything the watch cannot name says "changed, look at everything": a queue overflow, a
folder created, deleted or moved (the files in it are not named one by one), and from
then on always a directory it could not watch (the kernel's watch limit, or past
`watch_budget`: a quarter of the user's watches, at most 16,384 folders), `.vouch/`
itself moved or deleted, and every platform without inotify (`Watch.open` returns
`Always`). Not seen, and so not supported by a long-lived process: changes made through
a hard link from outside `.vouch/`, and network file systems, whose remote writers
raise no local events.
"""

from __future__ import annotations

import os
from typing import Any

# the most folders watched: a quarter of the user's inotify watches (shared with every
# other tool they run: an editor, a file sync), never more than this many; a knowledge
# base with more folders (a branch can commit thousands) is checked in full per request
MOST_WATCHES = 16_384
LIMIT_FILE = "/proc/sys/fs/inotify/max_user_watches"


def watch_budget() -> int:
    """How many folders one watch may hold here."""
    try:
        with open(LIMIT_FILE, "rb") as fh:
            limit = int(fh.read(32).strip() or b"0")
    except (OSError, ValueError):
        limit = 8192  # the kernel's old default
    return max(0, min(MOST_WATCHES, limit // 4))


# not knowledge: derived, local or written by every search (`.vouch/.gitignore`)
_IGNORED_DIRS = frozenset({"index", "locks"})
_IGNORED_FILES = frozenset({"searches.log.jsonl"})

Seen = tuple[bool, frozenset[str] | None]  # (changed?, `.vouch`-relative paths or None)


class Always:
    """No watch: every request runs the full check (what a cold command does)."""

    kind = "none (a full check per request)"

    def changes(self) -> Seen:
        return True, None

    def close(self) -> None:
        return None


class Watch:
    """An inotify watch on every directory of one `.vouch/` (one watch per folder: 11,793
    at 100k claims, against the kernel's `fs.inotify.max_user_watches`, 8,192 on older
    kernels; past it every check is a full one)."""

    @property
    def complete(self) -> bool:
        """Every folder is watched (else every check is a full one)."""
        return not self._broken

    @property
    def kind(self) -> str:
        if self._broken:
            return "inotify, incomplete (a full check per request)"
        return f"inotify ({len(self._dirs)} folders)"

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
        self._dirs: dict[int, str] = {}  # watch descriptor → `.vouch`-relative folder
        self._broken = False  # a folder went unwatched: everything, from now on
        self._changed = False
        self._paths: set[str] | None = set()  # named since the last `changes`; None: all
        self._budget = watch_budget()
        try:
            self._watch_tree(vouch_dir, "")
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

    def _watch_tree(self, path: str, rel: str) -> None:
        if len(self._dirs) >= self._budget:  # too many folders: a full check per request
            self._broken = True
            return
        try:
            wd = self._inotify.add_watch(path, self._mask)
        except OSError:  # the watch limit (ENOSPC), or gone meanwhile: cannot vouch
            self._broken = True
            return
        self._dirs[wd] = rel
        try:
            entries = list(os.scandir(path))
        except OSError:
            self._broken = True
            return
        for entry in entries:
            if not rel and entry.name in _IGNORED_DIRS:
                continue
            if entry.is_dir(follow_symlinks=False):
                self._watch_tree(entry.path, f"{rel}/{entry.name}" if rel else entry.name)

    def fileno(self) -> int:
        """Readable when events are queued (for `select`)."""
        return self._inotify.fileno()

    def changes(self) -> Seen:
        """What changed since the last call, which starts the next interval: whether
        anything did, and the `.vouch`-relative paths of the files that did (None when
        they cannot all be named)."""
        self.absorb()
        found: Seen = (
            self._changed or self._broken,
            None if self._broken or self._paths is None else frozenset(self._paths),
        )
        self._changed, self._paths = False, set()
        return found

    def absorb(self) -> bool:
        """Empty the kernel's queue now (remembered for `changes`); whether it held a
        change."""
        try:
            events: list[Any] = self._inotify.read(timeout=0)
        except OSError:
            self._broken = True
            return True
        seen = False
        for event in events:
            seen = self._take(event) or seen
        self._changed = self._changed or seen
        return seen

    def _take(self, event: Any) -> bool:
        """Record one event; whether it is a change to knowledge files."""
        flags = self._flags
        if event.mask & flags.Q_OVERFLOW:  # events were lost: look at everything once
            self._paths = None
            return True
        rel = self._dirs.get(event.wd)
        if rel is None:
            return False  # a watch already removed (IN_IGNORED after a delete)
        if event.mask & flags.IGNORED:  # the folder is gone, or moved
            del self._dirs[event.wd]
            self._paths = None
            return True
        if event.mask & (flags.DELETE_SELF | flags.MOVE_SELF):
            if not rel:
                self._broken = True  # `.vouch/` itself: nothing to vouch for any more
            self._paths = None
            return True
        if not rel and (event.name in _IGNORED_DIRS or event.name in _IGNORED_FILES):
            return False
        path = f"{rel}/{event.name}" if rel else event.name
        if event.mask & flags.ISDIR:
            if event.mask & (flags.CREATE | flags.MOVED_TO):
                self._watch_tree(os.path.join(self._top, path), path)
            self._paths = None  # a folder's files are not named one by one
            return True
        if self._paths is not None:
            self._paths.add(path)
        return True

    def close(self) -> None:
        self._inotify.close()
