"""Knowledge files in one state — the work tree, the user's index, or a commit — and
what each file is.

A `View` lists the files under `.vouch/` (`.vouch/`-relative path -> blob id, or None in
the work tree) and reads them. `catalog` names what a path holds (a claim, a source's
meta.yaml, a decision record, ...) or why it is not a knowledge file; `parse` turns the
bytes into an object or the reason they are not one, so a broken file becomes an issue
with its path, never an exception.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from vouch.core import fastyaml, ids
from vouch.errors import CorruptFile
from vouch.kinds import KINDS, Kind, source
from vouch.store.kb import DECIDED_DIR, KB

# directories that hold knowledge (and decisions), with the kind each holds
OBJECT_DIRS = {kind.directory: kind for kind in KINDS.values()}
TOP_DIRS = (*OBJECT_DIRS, DECIDED_DIR)
DECISION = "decision"  # the pseudo-kind of decided/<hh>/<proposal-id>.yaml


@dataclass(frozen=True)
class Entry:
    """What one path holds: a kind and an id, or a problem (a stray or misplaced file)."""

    rel: str  # relative to .vouch/
    kind: str | None  # kind name, DECISION, or None when the file is not a knowledge file
    id: str | None
    part: str = ""  # sources: "meta" or "content"
    problem: str | None = None


def catalog(rel: str) -> Entry | None:
    """The entry for a `.vouch/`-relative path under a knowledge directory; None for a
    path lint ignores (elsewhere, or a dot file such as a writer's temp file)."""
    parts = rel.split("/")
    top = parts[0]
    if top not in TOP_DIRS or parts[-1].startswith("."):
        return None
    if top == "sources":
        if len(parts) == 4 and (parts[3] == "meta.yaml" or source.is_content_name(parts[3])):
            sid = parts[2]
            part = "meta" if parts[3] == "meta.yaml" else "content"
            if not ids.is_source_id(sid):
                return Entry(rel, None, None, part, f"{sid!r} is not a source id (a sha256)")
            if parts[1] != ids.shard(sid):
                return Entry(
                    rel,
                    "source",
                    sid,
                    part,
                    f"misplaced: source {sid[:12]}… belongs in sources/{ids.shard(sid)}/",
                )
            return Entry(rel, "source", sid, part)
        return Entry(rel, None, None, "", "not a source file (meta.yaml or content[.ext])")
    kind_name = DECISION if top == DECIDED_DIR else OBJECT_DIRS[top].name
    ext = ".yaml" if kind_name == DECISION else OBJECT_DIRS[top].ext
    valid = ids.is_proposal_id if kind_name == DECISION else ids.is_object_id
    name = parts[-1]
    if len(parts) != 3 or not name.endswith(ext) or not valid(name[: -len(ext)]):
        return Entry(rel, None, None, "", f"not a {kind_name} file: expected {top}/<hh>/<id>{ext}")
    object_id = name[: -len(ext)]
    if parts[1] != ids.shard(object_id):
        return Entry(
            rel,
            kind_name,
            object_id,
            "",
            f"misplaced: {object_id} belongs in {top}/{ids.shard(object_id)}/, "
            "where vouch never looks for it here",
        )
    return Entry(rel, kind_name, object_id)


class View:
    """The knowledge files of one state of the repository."""

    name = "work tree"

    def __init__(self, kb: KB, listing: dict[str, str | None]):
        self.kb = kb
        self.listing = listing  # .vouch/-relative path -> blob (None: read the file)
        self.prefix = prefix(kb)
        self._base = f"{kb.dir}{os.sep}"
        self._present: dict[str, set[str]] | None = None

    def entries(self) -> Iterator[Entry]:
        for rel in sorted(self.listing):
            entry = catalog(rel)
            if entry is not None:
                yield entry

    def read(self, rel: str) -> bytes | None:
        if rel not in self.listing:
            return None
        blob = self.listing[rel]
        if blob is not None:
            return self.kb.repo.read_blob(blob)
        return read_file(self._base + rel)

    def has(self, kind: str, object_id: str) -> bool:
        """Whether an object of `kind` exists here (at the path its id dictates)."""
        if self._present is None:
            self._present = _present(self.listing)
        return object_id in self._present.get(kind, ())

    def repo_path(self, rel: str) -> str:
        return self.prefix + rel


def prefix(kb: KB) -> str:
    """The repository path of `.vouch/`, with its slash (`.vouch/`)."""
    return kb.rel(".") + "/"


def _present(listing: dict[str, str | None]) -> dict[str, set[str]]:
    """kind -> the ids whose files are where their id puts them (by name alone)."""
    present: dict[str, set[str]] = {kind.name: set() for kind in KINDS.values()}
    for rel in listing:
        top, _, rest = rel.partition("/")
        kind = OBJECT_DIRS.get(top)
        if kind is None:
            continue
        shard, _, name = rest.partition("/")
        if kind.name == "source":
            sid, _, leaf = name.partition("/")
            if leaf == "meta.yaml" and shard == sid[:2]:
                present["source"].add(sid)
        elif name.endswith(kind.ext) and "/" not in name:
            oid = name[: -len(kind.ext)]
            if oid[-8:-6] == shard:
                present[kind.name].add(oid)
    return present


def read_file(path: str) -> bytes | None:
    """A file's bytes (None when it is gone): os-level, ~4x cheaper than pathlib for the
    thousands of small files a full lint reads."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None
    try:
        chunks = []
        while block := os.read(fd, 1 << 16):
            chunks.append(block)
        return b"".join(chunks)
    finally:
        os.close(fd)


def work_tree(kb: KB) -> View:
    """Every file under the knowledge directories of `.vouch/` in the work tree."""
    listing: dict[str, str | None] = {}
    for top in TOP_DIRS:
        _walk(kb.dir / top, top, listing)
    return View(kb, listing)


def _walk(directory: os.PathLike[str] | str, rel: str, into: dict[str, str | None]) -> None:
    try:
        entries = list(os.scandir(directory))
    except (FileNotFoundError, NotADirectoryError):
        return
    for entry in entries:
        path = f"{rel}/{entry.name}"
        if entry.is_dir(follow_symlinks=False):
            _walk(entry.path, path, into)
        else:
            into[path] = None


class GitView(View):
    """Files as git holds them: the user's index, or the tree of a commit."""

    def __init__(self, kb: KB, blobs: dict[str, str], name: str):
        start = prefix(kb)
        listing: dict[str, str | None] = {
            p[len(start) :]: b for p, b in blobs.items() if p.startswith(start)
        }
        super().__init__(kb, listing)
        self.name = name


def staged(kb: KB) -> GitView:
    from vouch.git.history import index_blobs

    return GitView(kb, index_blobs(kb.repo, [kb.rel(".")]), "index")


def at_commit(kb: KB, commit: str) -> GitView:
    return GitView(kb, kb.repo.tree_blobs(commit, [kb.rel(".")]), f"commit {commit[:12]}")


# -- parsing -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Parsed:
    """A file's object (raw mapping, not yet validated) or why it is not one."""

    data: dict[str, Any] | None
    problem: str | None = None  # unparseable: not UTF-8, not YAML, not a mapping


def parse(kind: Kind | None, raw: bytes | None, where: str) -> Parsed:
    """The mapping in a knowledge file (a page's frontmatter plus its body)."""
    if raw is None:
        return Parsed(None, "the file is missing")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Parsed(None, f"not UTF-8 text ({exc.reason} at byte {exc.start})")
    try:
        if kind is not None and kind.body_field is not None:
            meta, body = fastyaml.load_page(text, where=where)
            return Parsed({**meta, kind.body_field: body})
        return Parsed(fastyaml.load(text, where=where))
    except CorruptFile as exc:
        return Parsed(None, " ".join(exc.message.split()))
    except (ValueError, TypeError, RecursionError) as exc:
        return Parsed(None, " ".join(f"cannot parse {where}: {exc}".split()))
