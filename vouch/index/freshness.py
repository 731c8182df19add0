"""The git identity of `.vouch/` content, and what changed between two identities.

The index never asks who changed the files (an approval, a pull, a checkout of another
branch, a hand edit): it records the identity it was built from — the tree id of
`.vouch` in HEAD plus the blob ids of uncommitted changes — and compares. Git already
knows which files differ between two trees without reading them, so a refresh after
one approval costs one `diff-tree`, not a scan of 100k files.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Collection, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NamedTuple

from vouch.errors import GitFailure

if TYPE_CHECKING:
    from vouch.store.kb import KB

# A directory modified this recently may change again within its timestamp's
# granularity without its mtime moving: its stamp is not trusted (git's "racy" rule).
RACY_SECONDS = 2.0
_SKIP_DIRS = frozenset(("index", "locks"))  # derived and local state, gitignored
# beyond this many changed paths git compares every tracked file (one command line)
SCOPE_LIMIT = 2000


_EMPTY: Mapping[str, Any] = MappingProxyType({})  # a default no state can change


class State(NamedTuple):
    """`.vouch` content: HEAD's tree for it plus work-tree changes (path → blob, or None
    when the file is deleted). Paths are relative to `.vouch/`.

    `stamps` (directory → mtime_ns, 0 = not trusted) is not part of the identity: it lets
    the next check skip looking for new untracked files in directories that did not
    change, which is most of the cost of `git status` on a large knowledge base.
    Nor are `index_stamp` and `staged`: git's index file as it was (`_index_stamp`, ""
    when not trusted) and the paths where it differed from `tree` then (repository-
    relative). While the file and the tree stay the same, so do those paths, and the
    next check asks git only about the work tree (see `Probe`).
    """

    tree: str
    dirty: Mapping[str, str | None] = _EMPTY
    stamps: Mapping[str, int] = _EMPTY
    index_stamp: str = ""
    staged: tuple[str, ...] = ()

    @property
    def source_hash(self) -> str:
        lines = [self.tree] + [f"{p} {b or '-'}" for p, b in sorted(self.dirty.items())]
        return hashlib.sha256("\n".join(lines).encode()).hexdigest()

    def dirty_json(self) -> str:
        return json.dumps(dict(self.dirty), sort_keys=True, separators=(",", ":"))

    def stamps_json(self) -> str:
        return json.dumps(dict(self.stamps), sort_keys=True, separators=(",", ":"))

    def staged_json(self) -> str:
        return json.dumps(list(self.staged), separators=(",", ":"))

    @classmethod
    def from_meta(
        cls,
        tree: str,
        dirty: str,
        stamps: str | None = None,
        index_stamp: str | None = None,
        staged: str | None = None,
    ) -> State:
        parsed = json.loads(dirty)
        if not isinstance(parsed, dict):
            raise ValueError("dirty must be a JSON object")
        marks: dict[str, int] = {}
        if stamps:
            raw = json.loads(stamps)
            if isinstance(raw, dict):
                marks = {str(k): int(v) for k, v in raw.items()}
        paths = json.loads(staged) if staged else []
        if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
            paths, index_stamp = [], None  # not what we wrote: not trusted
        return cls(
            tree,
            {str(k): (str(v) if v else None) for k, v in parsed.items()},
            marks,
            str(index_stamp or ""),
            tuple(paths),
        )


def _prefix(kb: KB) -> str:
    return kb.dir.relative_to(kb.root).as_posix() + "/"


def _stamps(vouch_dir: Path) -> dict[str, int]:
    """mtime of `.vouch`, its top-level directories and their subdirectories (shards)."""
    horizon = time.time_ns() - int(RACY_SECONDS * 1e9)
    out: dict[str, int] = {}

    def mark(rel: str, mtime: int) -> None:
        out[rel] = mtime if mtime < horizon else 0

    mark("", os.stat(vouch_dir).st_mtime_ns)
    for top in os.scandir(vouch_dir):
        if top.name in _SKIP_DIRS or not top.is_dir(follow_symlinks=False):
            continue
        mark(top.name, top.stat().st_mtime_ns)
        for sub in os.scandir(top.path):
            if sub.is_dir(follow_symlinks=False):
                mark(f"{top.name}/{sub.name}", sub.stat().st_mtime_ns)
    return out


def _files_in(vouch_dir: Path, rel: str) -> list[str]:
    """Files directly in a top-level directory (or `.vouch` itself), or anywhere below a
    shard directory; `.vouch`-relative."""
    base = vouch_dir / rel if rel else vouch_dir
    depth = rel.count("/") + 1 if rel else 0
    found: list[str] = []
    if depth < 2:
        for entry in os.scandir(base):
            if entry.is_file(follow_symlinks=False) or entry.is_symlink():
                found.append(f"{rel}/{entry.name}" if rel else entry.name)
        return found
    for root, dirs, files in os.walk(base):
        inner = Path(root).relative_to(vouch_dir).as_posix()
        found.extend(f"{inner}/{name}" for name in files)
        dirs.sort()
    return found


def current(kb: KB, previous: State | None = None) -> State:
    """The identity of `.vouch/` content right now (`start(...).result()`)."""
    return start(kb, previous).result()


def start(kb: KB, previous: State | None = None, only: Collection[str] | None = None) -> Probe:
    """Begin finding the identity of `.vouch/` content; `Probe.result()` finishes it.

    Tracked changes come from one `git diff-index HEAD` (git's stat cache answers for
    unchanged files; ~30 ms at 10k objects, mostly stat-ing every tracked file), started
    here with `rev-parse` beside it, so the caller can do unrelated work meanwhile.
    Untracked files are listed by git in full when there is no `previous` state; with
    one, only directories whose mtime moved since are listed, plus the untracked files
    `previous` already knew about. `only`, from a file watch: every `.vouch`-relative
    path that changed since `previous` was found; git then compares just those (and
    what `previous` found dirty) with its index, not every tracked file.
    """
    return Probe(kb, previous, only)


def _commands(top: str) -> tuple[list[str], list[str]]:
    """The git commands every check of `top` (`.vouch` as a repository path) runs: HEAD's
    tree for it, and the tracked files whose work-tree copy differs from git's index."""
    return (
        ["rev-parse", "-q", "--verify", f"HEAD:{top}"],
        ["diff-files", "-z", "--", top],
    )


def _staged_command(top: str) -> list[str]:
    """The files under `top` whose copy in git's index differs from HEAD: the half of
    `git diff-index HEAD` that walks HEAD's trees (~40 ms at 10k objects, ~0.3 s at
    100k), run only when the index file or HEAD's tree moved since the last check."""
    return ["diff-index", "--cached", "--name-only", "-z", "--no-renames", "HEAD", "--", top]


# git's own variables that move the index or the repository away from `<root>/.git`
_RELOCATING = ("GIT_DIR", "GIT_INDEX_FILE", "GIT_WORK_TREE", "GIT_COMMON_DIR")


def _index_stamp(root: Path) -> str:
    """The identity of `<root>/.git/index` (inode, size, mtime, ctime), or "" when it is
    not to be trusted: a repository laid out any other way, or a file written within
    RACY_SECONDS (a rewrite within its timestamp's granularity could keep the stamp;
    git writes the index through a new file, so the inode moves as well)."""
    if any(os.environ.get(name) for name in _RELOCATING):
        return ""
    git_dir = root / ".git"
    try:
        if not git_dir.is_dir():
            return ""
        st = os.stat(git_dir / "index")
    except OSError:
        return ""
    if time.time_ns() - st.st_mtime_ns < RACY_SECONDS * 1e9:
        return ""
    return f"{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}"


def prestart(root: Path, top: str) -> None:
    """Start a check's git commands ahead of the `Probe` that will read them: a cold
    read-only command does this before its imports (`vouch.cli.early`), so git works
    on the other core meanwhile. Processes no `Probe` takes over are stopped at exit."""
    from vouch.git import command

    for args in _commands(top):
        command.prestart(args, root)


class Probe:
    """A freshness check under way: its git processes run until `result()` reads them.

    What differs from HEAD is what differs between HEAD and git's index (staged) plus
    what differs between the index and the work tree (`git diff-files`, a stat of every
    tracked file). The staged half is taken over from `previous` when git's index file
    and HEAD's tree are both as they were then (`_index_stamp`), which saves git a walk
    over HEAD's trees on most checks; any write of the index (an add, a commit, a
    checkout, an approval) or a move of HEAD makes it ask git again.
    """

    def __init__(self, kb: KB, previous: State | None, only: Collection[str] | None = None) -> None:
        self.kb = kb
        self.previous = previous
        self.prefix = _prefix(kb)
        top = self.prefix[:-1]
        self.stamps = _stamps(kb.dir)  # before looking: a change made meanwhile moves a stamp
        self.index_stamp = _index_stamp(kb.root)  # before git reads the index, likewise
        self._reuse = bool(
            self.index_stamp and previous is not None and previous.index_stamp == self.index_stamp
        )
        tree, files = _commands(top)
        scope = self._scope(only)
        if scope is not None:
            files = ["--literal-pathspecs", "diff-files", "-z", "--", *scope]
        started = []
        try:
            self._tree = kb.repo.start(*tree)
            started.append(self._tree)
            self._files = kb.repo.start(*files)
            started.append(self._files)
            # unless the last check's staged paths may still hold, git walks HEAD's trees
            # on another core meanwhile
            self._staged = None if self._reuse else kb.repo.start(*_staged_command(top))
        except BaseException:
            for process in started:
                process.close()
            raise

    def _scope(self, only: Collection[str] | None) -> list[str] | None:
        """The paths `git diff-files` must look at, when not every tracked file: those
        that changed since `previous`, and those dirty then. Only while git's index is
        the one `previous` saw (a file nobody touched compares with an unchanged index
        as it did then)."""
        if only is None or self.previous is None or not self._reuse:
            return None
        paths = {self.prefix + p for p in (*only, *self.previous.dirty)}
        if not paths or len(paths) > SCOPE_LIMIT:
            return None
        return sorted(paths)

    def close(self) -> None:
        """Abandon the check (the caller failed meanwhile)."""
        for process in (self._tree, self._files, self._staged):
            if process is not None:
                process.close()

    def result(self) -> State:
        repo, prefix = self.kb.repo, self.prefix
        try:
            tree = self._tree.output(check=False).strip()
            unstaged = _index_blobs(self._files.output())
            staged = self._staged_paths(tree)
        except BaseException:
            self.close()  # a git that failed leaves none of the others running
            raise
        changed = {p for p in (*staged, *unstaged) if p.startswith(prefix)}
        changed |= _untracked(self.kb, prefix, self.stamps, self.previous)
        present = sorted(p for p in changed if (self.kb.root / p).is_file())
        blobs = _hash_without_writing(self.kb, present)
        # `git diff-files` compares stat data: a file touched, or a clone copied with
        # `cp`, is listed with the bytes git's index holds. Not a change (search would
        # call approved knowledge an uncommitted edit): only what differs is dirty.
        same = {p for p, blob in unstaged.items() if blob and blobs.get(p) == blob}
        changed -= same - set(staged)
        dirty = {p[len(prefix) :]: blobs.get(p) for p in changed}
        kept = tuple(sorted(p for p in staged if p.startswith(prefix)))
        return State(tree or repo.empty_tree, dirty, self.stamps, self.index_stamp, kept)

    def _staged_paths(self, tree: str) -> list[str]:
        previous = self.previous
        if self._reuse and previous is not None and tree and tree == previous.tree:
            return list(previous.staged)
        repo, top = self.kb.repo, self.prefix[:-1]
        staged = self._staged or repo.start(*_staged_command(top))
        out = staged.output(check=False)
        if staged.returncode == 0:
            return [p for p in out.split("\0") if p]
        # no HEAD yet, or a real failure: with a HEAD, say what went wrong; without,
        # everything in the index is new
        has_head = bool(tree) or repo.resolve("HEAD") is not None
        return repo.index_changes("HEAD", top) if has_head else repo.tracked(top)


def _untracked(kb: KB, prefix: str, stamps: dict[str, int], previous: State | None) -> set[str]:
    repo = kb.repo
    if previous is None or not previous.stamps:
        return {p for p in repo.untracked([prefix[:-1]]) if p.startswith(prefix)}
    moved = [d for d, m in stamps.items() if m == 0 or previous.stamps.get(d) != m]
    candidates: set[str] = set(previous.dirty)  # untracked before: still there? changed?
    for rel in moved:
        try:
            candidates.update(_files_in(kb.dir, rel))
        except FileNotFoundError:
            continue
    if not candidates:
        return set()
    found: set[str] = set()
    paths = [prefix + c for c in sorted(candidates)]
    for start in range(0, len(paths), 2000):
        # --others over exact paths: git prints those that exist, are untracked and are
        # not ignored, with its own ignore rules
        found.update(
            p
            for p in repo.untracked(paths[start : start + 2000], literal=True)
            if p.startswith(prefix)
        )
    return found


def _index_blobs(raw: str) -> dict[str, str]:
    """Path -> the blob git's index holds for it ("" when none: an unmerged entry), from
    `git diff-files -z`'s raw output (`:mode mode index-blob work-blob status NUL path
    NUL`, each path once)."""
    out: dict[str, str] = {}
    fields = raw.split("\0")
    for meta, path in zip(fields[0::2], fields[1::2], strict=False):
        if not path:
            continue
        parts = meta.split(" ")
        blob = parts[2] if len(parts) > 4 and meta.startswith(":") else ""
        out[path] = "" if blob.strip("0") == "" else blob
    return out


def _hash_without_writing(kb: KB, paths: list[str]) -> dict[str, str]:
    if not paths:
        return {}
    return dict(zip(paths, kb.repo.hash_files(paths, write=False), strict=True))


def knowledge_changed(kb: KB, before: State, after: State) -> bool:
    """Whether any indexed object's file differs between two identities. They can differ
    while the knowledge does not: config.yaml, the audit log or decision records changed,
    or a work-tree change was committed as it was. Raises HistoryGone like
    `changed_paths`."""
    from vouch.index.chunking import doc_for_path

    paths = {p for p in changed_paths(kb, before, after) if doc_for_path(p)}
    if not paths:
        return False
    old, new = _blobs(kb, before, paths), _blobs(kb, after, paths)
    return any(old.get(p) != new.get(p) for p in paths)


def _blobs(kb: KB, state: State, paths: set[str]) -> dict[str, str | None]:
    """`.vouch`-relative path → blob id in `state` (None: absent) for `paths`."""
    out: dict[str, str | None] = {p: state.dirty[p] for p in paths if p in state.dirty}
    rest = sorted(paths - set(out))
    if rest and state.tree != kb.repo.empty_tree:
        try:  # a long list: read the whole tree instead of passing every path
            listing = kb.repo.tree_blobs(state.tree, rest if len(rest) <= 1000 else ())
        except GitFailure as exc:
            raise HistoryGone(str(exc)) from exc
        wanted = set(rest)
        out.update((path, blob) for path, blob in listing.items() if path in wanted)
    return out


class HistoryGone(Exception):
    """The indexed tree is no longer in the object store (gc'd, or another clone)."""


def changed_paths(kb: KB, before: State, after: State) -> set[str]:
    """`.vouch`-relative paths whose content may differ between the two states."""
    paths = set(before.dirty) | set(after.dirty)
    if before.tree != after.tree:
        try:
            paths.update(kb.repo.changed_names(before.tree, after.tree))
        except GitFailure as exc:
            raise HistoryGone(str(exc)) from exc
    return paths
