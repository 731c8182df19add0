"""The knowledge base on disk: finding it, reading its objects, counting them.

`KB` is the handle every operation receives. It reads files only; writing goes through
`writer` (direct commits) or `gate` (proposals).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from vouch import git
from vouch.core import ids
from vouch.core.config import Config
from vouch.core.statcache import ShardCounts, StampedValue
from vouch.errors import CorruptFile, NoKnowledgeBase
from vouch.kinds import Kind, Obj, source
from vouch.store import audit
from vouch.store.root import VOUCH_DIR as VOUCH_DIR
from vouch.store.root import find_root as find_root

PROPOSAL_PREFIX = "refs/heads/vouch/proposal/"
DECIDED_DIR = "decided"
STATUS_KINDS = ("claims", "pages", "sources", "entities", "relations", "evidence")


@dataclass
class KB:
    dir: Path  # the .vouch directory

    @classmethod
    def open(cls, start: Path | None = None, explicit: str | None = None) -> KB:
        return cls(find_root(start, explicit))

    @cached_property
    def root(self) -> Path:
        """The top of the git work tree that holds `.vouch/` (usually its parent)."""
        top = git.toplevel(self.dir.parent)
        if top is None:
            raise NoKnowledgeBase(
                f"{self.dir} is not inside a git work tree", hint="run `git init` in its parent"
            )
        return top.resolve()

    @cached_property
    def config(self) -> Config:
        return Config.load(self.dir)

    @cached_property
    def repo(self) -> git.Repo:
        return git.Repo(self.root)

    @cached_property
    def state_dir(self) -> Path:
        """Where this clone keeps vouch's local state (locks, journals, owner files,
        sockets, logs): `vouch/` in the repository's common git directory, where no
        commit, merge or checkout can put a file (DESIGN §4.1). Not created here."""
        return self.repo.common_dir / "vouch"

    def rel(self, inner: str) -> str:
        """A `.vouch/`-relative path as a repository path (what git sees)."""
        return (self.dir / inner).relative_to(self.root).as_posix()

    # -- reading objects ------------------------------------------------------------
    def committed(self, commit: str | None, inner: str) -> bytes | None:
        """The bytes of a `.vouch/`-relative file as `commit` holds it; None when it holds
        no such file (or there is no commit)."""
        if commit is None:
            return None
        found = self.repo.store.read(f"{commit}:{self.rel(inner)}")
        return found[1] if found and found[0] == "blob" else None

    def path_of(self, kind: Kind, object_id: str) -> Path:
        return self.dir / path_for(kind, object_id)

    def read(self, kind: Kind, object_id: str) -> Obj | None:
        """The object, or None when no such file exists; CorruptFile, naming the file and
        every problem, when it is not a valid object of `kind` with that id (`Kind.load`,
        the one validating reader)."""
        inner = path_for(kind, object_id)
        path = os.path.join(self.dir, inner)  # strings: a 100k-object build reads here
        try:
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as exc:
            raise CorruptFile(f"cannot read {path}: {exc}") from exc
        where = f"{self.dir.name}/{inner}"
        obj = kind.load(text, where=where)
        if obj["id"] != object_id:  # its path names another object: which one is it?
            raise CorruptFile(
                f"{where} is not a valid {kind.name}: it holds id "
                f"{obj['id']!r}, its path names {object_id!r}"
            )
        return obj

    def ids(self, kind: Kind) -> list[str]:
        """Every id of a kind, sorted; found by listing directories, not reading files."""
        base = self.dir / kind.directory
        found: list[str] = []
        try:
            shards = list(os.scandir(base))
        except FileNotFoundError:
            return []
        cut = len(kind.ext)
        for shard_entry in shards:
            if not shard_entry.is_dir() or len(shard_entry.name) != 2:
                continue
            if kind.name == "source":
                with os.scandir(shard_entry.path) as entries:
                    found.extend(e.name for e in entries if is_object_entry(kind, e))
            else:  # by name alone, as `is_object_entry` decides for files (no call each)
                found.extend(
                    name[:-cut]
                    for name in os.listdir(shard_entry.path)
                    if name.endswith(kind.ext) and name[0] != "."
                )
        found.sort()
        return found

    @cached_property
    def _shard_counts(self) -> ShardCounts:
        return ShardCounts()

    def count(self, kind: Kind) -> int:
        """How many objects of a kind; cheap when repeated on a long-lived KB (servers)."""
        return self._shard_counts.count(self.dir / kind.directory, _shard_counter(kind))

    def iter_objects(self, kind: Kind) -> Iterator[Obj]:
        """Every valid object of a kind, sorted by id. An invalid file (a hand edit, a bad
        merge) is left out with a warning naming it: `vouch lint` reports it in full."""
        for object_id in self.ids(kind):
            obj = self._listable(kind, object_id)
            if obj is not None:
                yield obj

    def _listable(self, kind: Kind, object_id: str) -> Obj | None:
        try:
            return self.read(kind, object_id)
        except CorruptFile as exc:
            import logging  # only when a file is broken: a cold command never pays for it

            logging.getLogger("vouch").warning("not listed: %s (run `vouch lint`)", exc.message)
            return None

    def list(
        self,
        kind: Kind,
        *,
        limit: int | None = 50,
        offset: int = 0,
        filter: Mapping[str, Any] | None = None,
    ) -> list[Obj]:
        """Objects sorted by id. Without a filter only the requested page is read."""
        all_ids = self.ids(kind)
        if not filter:
            page = all_ids[offset : None if limit is None else offset + limit]
            return [o for o in (self._listable(kind, i) for i in page) if o is not None]
        out: list[Obj] = []
        skipped = 0
        for obj in self.iter_objects(kind):
            if not matches(obj, filter):
                continue
            if skipped < offset:
                skipped += 1
                continue
            out.append(obj)
            if limit is not None and len(out) >= limit:
                break
        return out

    def source_content(self, source_id: str) -> bytes | None:
        """A source's bytes from the work tree (`content.<ext>`, or a bare `content`)."""
        path = self.source_content_path(source_id)
        try:
            return path.read_bytes() if path is not None else None
        except FileNotFoundError:
            return None

    def source_content_path(self, source_id: str) -> Path | None:
        """The work-tree file holding a source's bytes, whatever its extension."""
        folder = self.dir / source.directory_for(source_id)
        try:
            names = [n for n in os.listdir(folder) if source.is_content_name(n)]
        except (FileNotFoundError, NotADirectoryError):
            return None
        # two names would be a hand edit: the bare legacy name sorts first, lint says more
        return folder / sorted(names)[0] if names else None

    # -- status ----------------------------------------------------------------------
    @cached_property
    def _pending(self) -> StampedValue[int]:
        """The proposal count, reused while git's ref storage for proposals is unchanged
        (files-backend layout; a reftable repository is simply asked every time)."""
        common = self.repo.common_dir
        if (common / "reftable").exists():
            return StampedValue(None)
        # every decision, whether made here or pulled in, also changes the audit log
        return StampedValue(
            [
                common / "packed-refs",
                common / PROPOSAL_PREFIX.rstrip("/"),
                self.dir / audit.LOG_NAME,
            ]
        )

    def pending_count(self) -> int:
        """Local proposal branches not yet decided on this branch. A branch can outlive
        its decision when the decision arrived by `git pull`; it is not pending."""

        def count() -> int:
            refs = self.repo.for_each_ref(PROPOSAL_PREFIX, ["refname"])
            pids = (row[0][len(PROPOSAL_PREFIX) :] for row in refs)
            return sum(1 for pid in pids if not (self.dir / decided_path(pid)).is_file())

        return self._pending.get(count)

    def status(self) -> dict[str, Any]:
        from vouch.kinds import BY_PLURAL

        last = audit.last_event(self.dir)
        return {
            "root": str(self.dir),
            "counts": {name: self.count(BY_PLURAL[name]) for name in STATUS_KINDS},
            "pending": self.pending_count(),
            "last_audit_at": last.get("created_at") if last else None,
        }


def decided_path(proposal_id: str) -> str:
    """`decided/<hh>/<id>.yaml` relative to `.vouch/`, sharded like every object file."""
    return f"{DECIDED_DIR}/{ids.shard(proposal_id)}/{proposal_id}.yaml"


def is_object_entry(kind: Kind, entry: os.DirEntry[str]) -> bool:
    """Whether a directory entry inside a shard is an object of `kind` (not a temp file)."""
    if kind.name == "source":
        return entry.is_dir() and len(entry.name) == 64
    return entry.name.endswith(kind.ext) and not entry.name.startswith(".")


def _shard_counter(kind: Kind) -> Callable[[str], int]:
    """Counts the objects of `kind` in one shard directory, as `is_object_entry` decides,
    by name alone where it can: `os.listdir` and no call per entry, ~4x cheaper than a
    DirEntry and a predicate call per object (`vouch status` at 100k objects)."""
    if kind.name == "source":

        def sources(path: str) -> int:
            with os.scandir(path) as entries:
                return sum(1 for e in entries if len(e.name) == 64 and e.is_dir())

        return sources
    ext = kind.ext

    def files(path: str) -> int:
        return sum(1 for name in os.listdir(path) if name.endswith(ext) and name[0] != ".")

    return files


def path_for(kind: Kind, object_id: str) -> str:
    """Path of an object's main file relative to `.vouch/` (meta.yaml for sources)."""
    return source.path_for(object_id) if kind.name == "source" else kind.path_for(object_id)


def matches(obj: Mapping[str, Any], filter: Mapping[str, Any]) -> bool:
    """Field equality; for list fields, every wanted value must be present (AND)."""
    for key, wanted in filter.items():
        have = obj.get(key)
        if isinstance(have, list):
            want = wanted if isinstance(wanted, list) else [wanted]
            if not all(w in have for w in want):
                return False
        elif isinstance(wanted, list):
            if have not in wanted:
                return False
        elif have != wanted:
            return False
    return True
