"""The user's index and work tree, as vouch reads and patches them.

`WorkTree` is mixed into `Repo`: stage exactly the blobs a landing wrote (in-process for
the index variants `index_file` patches, else `git update-index`), tell which of a few
paths hold uncommitted work, and list changed, tracked and untracked paths.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from vouch.git.command import GitCommandFailed, run_bytes

if TYPE_CHECKING:
    from vouch.git import index_file as gitindex
    from vouch.git.objects import ObjectStore


class WorkTree:
    """What `Repo` provides that these methods use (declared for the type checker)."""

    root: Path
    _index_snapshot: gitindex.Index | None

    if TYPE_CHECKING:

        @property
        def store(self) -> ObjectStore: ...

        def git(
            self,
            *args: str,
            input: bytes | str | None = None,
            env: Mapping[str, str] | None = None,
            check: bool = True,
        ) -> str: ...

        def blob_id(self, data: bytes) -> str: ...

    def stage_entries(
        self, entries: Mapping[str, str | None], *, worktree_matches: bool = True
    ) -> None:
        """Make the user's index hold exactly these blobs at these paths (None removes).

        With `worktree_matches` (the work-tree file at each path holds exactly its blob)
        the index records the files' stat data, so git sees them clean without
        re-hashing; the indexes `index_file` understands are then patched in-process.
        Otherwise, or for any other index, `git update-index` records the blobs without
        stat data.
        """
        if self._stage_fast(entries, with_stat=worktree_matches):
            return
        lines = []
        for path, blob in entries.items():
            if blob is None:
                lines.append(f"0 {self.store.null_id}\t{path}")
            else:
                lines.append(f"100644 {blob}\t{path}")
        self.git("update-index", "--index-info", input="\n".join(lines) + "\n")

    def _stage_fast(self, entries: Mapping[str, str | None], *, with_stat: bool = True) -> bool:
        from vouch.git import index_file as gitindex

        stats: dict[str, tuple[str, os.stat_result | None] | None] = {}
        for path, blob in entries.items():
            if blob is None:
                stats[path] = None
                continue
            if not with_stat:  # no stat data: git compares the file's content
                stats[path] = (blob, None)
                continue
            try:
                st = os.lstat(self.root / path)
            except FileNotFoundError:
                return False
            if not stat.S_ISREG(st.st_mode):
                return False
            stats[path] = (blob, st)
        snapshot, self._index_snapshot = self._index_snapshot, None
        written, self._index_snapshot = gitindex.patch(
            self.store.index, stats, snapshot, self.store.algo
        )
        return written

    def index_dirty(
        self, paths: Iterable[str], committed: Mapping[str, str | None]
    ) -> list[str] | None:
        """Of `paths`, those whose index or work-tree state differs from `committed`
        (path -> blob in the branch tip, None when absent): staged, unstaged or untracked
        work. None when the index needs git itself to answer (see `index_file`)."""
        from vouch.git import index_file as gitindex

        index = self._index_snapshot  # the one vouch itself wrote last, when unchanged
        try:
            if index is None or index.stat_key != gitindex.stat_key(os.stat(self.store.index)):
                index = gitindex.read(self.store.index, self.store.algo)
        except FileNotFoundError:
            index = None
        if index is None:
            return None
        self._index_snapshot = index  # stage_entries may reuse it
        dirty = []
        try:
            for path, entry in index.entries(paths).items():
                tip = committed.get(path)
                if (entry.sha if entry else None) != tip:
                    dirty.append(path)  # staged change (or an untracked-but-added file)
                    continue
                try:
                    st = os.lstat(self.root / path)
                except FileNotFoundError:
                    if entry is not None:
                        dirty.append(path)  # deleted in the work tree
                    continue
                if entry is None:
                    dirty.append(path)  # an untracked file in the way
                elif not _stat_matches(entry, st) and self._file_blob(path) != entry.sha:
                    dirty.append(path)
        except gitindex.Unsupported:
            return None
        return dirty

    def index_blobs(self, paths: Iterable[str]) -> dict[str, str | None]:
        """The blob the index holds at each of `paths` (None: not in the index)."""
        from vouch.git import index_file as gitindex

        wanted = list(paths)
        index = gitindex.read(self.store.index, self.store.algo)
        if index is not None:
            try:
                return {p: (e.sha if e else None) for p, e in index.entries(wanted).items()}
            except gitindex.Unsupported:
                pass
        found: dict[str, str | None] = dict.fromkeys(wanted)
        if wanted:
            out = run_bytes(["ls-files", "-s", "-z", "--", *wanted], self.root)
            for row in out.split(b"\0"):
                info, _, name = row.partition(b"\t")
                if name and os.fsdecode(name) in found:
                    found[os.fsdecode(name)] = info.split()[1].decode()
        return found

    def _file_blob(self, path: str) -> str | None:
        try:
            data = (self.root / path).read_bytes()
        except OSError:
            return None
        return self.blob_id(data)

    def index_changes(self, rev: str, pathspec: str) -> list[str]:
        """Paths under `pathspec` where the index or work tree differs from `rev`."""
        out = self.git("diff-index", "--name-only", "-z", "--no-renames", rev, "--", pathspec)
        return [p for p in out.split("\0") if p]

    def tracked(self, pathspec: str) -> list[str]:
        """Paths in the index under `pathspec`."""
        return [p for p in self.git("ls-files", "-z", "--", pathspec).split("\0") if p]

    def attributes(self, pathspec: str, names: Iterable[str]) -> dict[str, dict[str, str]]:
        """For each tracked path under `pathspec`, the git attributes among `names` that
        are set there (value "set", "unset" or a string; unspecified ones left out), as
        the work tree's `.gitattributes` files and .git/info/attributes give them: two
        git processes for any number of paths."""
        paths = self.git("ls-files", "-z", "--", pathspec)
        if not paths.strip("\0"):
            return {}
        out = self.git("check-attr", "-z", "--stdin", *names, input=paths)
        found: dict[str, dict[str, str]] = {}
        parts = out.split("\0")
        for i in range(0, len(parts) - 2, 3):
            path, name, value = parts[i], parts[i + 1], parts[i + 2]
            if value != "unspecified":
                found.setdefault(path, {})[name] = value
        return found

    def checked_out_elsewhere(self) -> dict[str, str]:
        """`refs/heads/<name>` -> work tree path, for the branches other work trees of
        this repository (`git worktree add`) have checked out: one git process."""
        out = self.git("worktree", "list", "--porcelain")
        here = os.path.realpath(self.root)
        found: dict[str, str] = {}
        path = ""
        for line in out.splitlines():
            if line.startswith("worktree "):
                path = line[9:]
            elif line.startswith("branch ") and os.path.realpath(path) != here:
                found[line[7:]] = path
        return found

    def untracked(self, pathspecs: Iterable[str], *, literal: bool = False) -> list[str]:
        """Untracked, not ignored files under `pathspecs` (`literal`: exact paths)."""
        args = ["--literal-pathspecs"] if literal else []
        out = self.git(*args, "ls-files", "--others", "--exclude-standard", "-z", "--", *pathspecs)
        return [p for p in out.split("\0") if p]

    def ignored(self, paths: Iterable[str]) -> dict[str, str]:
        """Of `paths` (repository-relative), those git ignores, each with the file whose
        pattern ignores it (`.gitignore`, `docs/.gitignore`, `.git/info/exclude`); one
        `git check-ignore` for any number of paths. Tracked files are never ignored."""
        wanted = list(paths)
        if not wanted:
            return {}
        data = b"".join(os.fsencode(p) + b"\0" for p in wanted)
        try:
            out = run_bytes(["check-ignore", "-v", "-z", "--stdin"], self.root, input=data)
        except GitCommandFailed as exc:
            if exc.returncode == 1:  # none of them is ignored
                return {}
            raise
        fields = out.split(b"\0")
        found: dict[str, str] = {}
        for n in range(0, len(fields) - 3, 4):
            source, _line, pattern, path = fields[n : n + 4]
            if not pattern.startswith(b"!"):  # a negated pattern re-includes the path
                found[os.fsdecode(path)] = os.fsdecode(source)
        return found

    def worktree_changes(self, paths: Iterable[str]) -> list[str]:
        """Of `paths`, those with staged, unstaged or untracked changes in the work tree."""
        wanted = list(paths)
        if not wanted:
            return []
        out = run_bytes(
            [
                "status",
                "--porcelain=v1",
                "-z",
                "--no-renames",
                "--untracked-files=all",
                "--",
                *wanted,
            ],
            self.root,
        )
        return [e[3:].decode() for e in out.split(b"\0") if len(e) > 3]


def _stat_matches(entry: object, st: os.stat_result) -> bool:
    mtime = getattr(entry, "mtime", None)
    return (
        mtime == (int(st.st_mtime) & 0xFFFFFFFF, st.st_mtime_ns % 1_000_000_000)
        and getattr(entry, "size", None) == st.st_size & 0xFFFFFFFF
        and getattr(entry, "ino", None) == st.st_ino & 0xFFFFFFFF
    )
