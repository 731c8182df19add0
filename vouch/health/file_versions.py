"""File versions the repository does not vouch for (`kb.source_verify`, `kb.doctor`).

A file's versions are read from the file (`vouch.store.supplied`), but a knowledge base
may already hold one that was not: text an agent registered at the file's locator
before that rule, or a source committed by hand. So the current version at each file's
locator is compared with the bytes the repository knows for that path: the file in the
work tree, and every version of it committed in HEAD's history. A version that matches
none of them is reported (`unverified-version`) when the path is, or was, a file there,
or when the version claims to replace an earlier one: its bytes may never have been the
file's, so nothing should be trusted to it. (A file registered from an uncommitted
edit and changed again before it was committed is reported too: the repository cannot
tell it from an invention.) `vouch source add PATH` records the file's bytes as its
current version, which mends either case.

`lint --since BASE` (CI) checks the versions the range added or edited against HEAD's
history alone (`unverified_in_range`): a path the history holds, with bytes none of its
commits had. (A file that was never committed is not compared there: CI has nothing to
compare it with.)

Locators with a scheme (URLs, messages, `inline:`) and paths outside the repository
name nothing this clone can compare, and are not checked.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vouch.errors import CorruptFile
from vouch.git.history import Change, path_blobs
from vouch.health import files
from vouch.health.issues import Issue, error
from vouch.kinds import source as source_kind
from vouch.store.kb import KB
from vouch.store.sources import max_bytes
from vouch.store.supplied import is_path, named_path
from vouch.store.versions import locator_in

_BLOCK = 1 << 20


@dataclass(frozen=True)
class FileVersion:
    id: str
    locator: str
    path: str  # the repo-relative path the locator names


def unverified_versions(kb: KB, source_ids: Iterable[str]) -> list[dict[str, Any]]:
    """Issues `{id, kind, detail, path}` (as `verify.check_source` reports) for the
    current file versions among `source_ids` that the repository does not vouch for."""
    suspects: list[tuple[FileVersion, bool]] = []
    for version in current_file_versions(kb, source_ids):
        digest = work_tree_digest(kb, version.path)
        if digest != version.id:
            suspects.append((version, digest is not None))
    if not suspects:
        return []
    head = kb.repo.resolve("HEAD")
    history = path_blobs(kb.repo, head, {v.path for v, _ in suspects}) if head else {}
    out: list[dict[str, Any]] = []
    for version, present in suspects:
        committed = history.get(version.path) or set()
        content = kb.source_content(version.id)
        if content is not None and kb.repo.blob_id(content) in committed:
            continue  # the bytes the file had in a commit
        if not (present or committed or _replaces(kb, version.id)):
            continue  # a path that never held a file here: nothing to compare with
        out.append(_issue(kb, version, _against(version, present, bool(committed))))
    return out


def unverified_in_range(kb: KB, head: str, changes: Iterable[Change]) -> list[Issue]:
    """Lint issues for the current file versions whose meta.yaml `changes` add or edit,
    as `head` holds them, at a path `head`'s history holds with other bytes only."""
    start = kb.rel(".") + "/"
    versions: list[FileVersion] = []
    for change in changes:
        entry = files.catalog(change.path[len(start) :]) if change.path.startswith(start) else None
        if change.new is None or entry is None or entry.kind != source_kind.KIND.name:
            continue
        if entry.part != "meta" or entry.id is None:
            continue
        meta = files.parse(source_kind.KIND, kb.repo.read_blob(change.new), change.path).data
        if not meta or meta.get("superseded_by"):
            continue  # unreadable metadata is lint's own finding
        locator = str(meta.get("locator") or "")
        named = named_path(kb, locator) if is_path(locator) else None
        if named is not None:
            versions.append(FileVersion(entry.id, locator, named[1]))
    if not versions:
        return []
    history = path_blobs(kb.repo, head, {v.path for v in versions})
    out: list[Issue] = []
    for version in versions:
        committed = history.get(version.path) or set()
        content = source_kind.read_content(lambda p: kb.committed(head, p), version.id)
        if committed and (content is None or kb.repo.blob_id(content) not in committed):
            against = f"none of the committed versions of {version.path} has these bytes"
            found = _issue(kb, version, against)
            out.append(error(found["kind"], found["detail"], id=found["id"], path=found["path"]))
    return out


def current_file_versions(
    kb: KB, source_ids: Iterable[str], with_links: bool = False
) -> list[FileVersion]:
    """The current versions among `source_ids` whose locator names a place in the work
    tree; `with_links`: also those whose path is now a link out of the repository (or
    nowhere), at the path the locator spells (`linked_away`). A meta.yaml is parsed only
    when a byte-level look cannot tell: what vouch writes for a current version (one
    plain `locator:` line, no `superseded_by:`, see `locator_in`) never needs it."""
    found: list[FileVersion] = []
    for sid in source_ids:
        try:
            data = (kb.dir / source_kind.path_for(sid)).read_bytes()
        except (OSError, ValueError):
            continue  # reported by verify.check_source
        if b"redacted_at" in data and source_kind.is_redacted(_parsed(kb, sid)):
            continue  # a tombstone: no bytes to hold a file to (`vouch redact`)
        locator = locator_in(data) if b"superseded_by" not in data else None
        if locator is None:
            meta = _parsed(kb, sid)
            if meta is None or meta.get("superseded_by"):
                continue
            locator = str(meta.get("locator") or "")
        named = named_path(kb, locator)
        away = linked_away(kb, locator) if named is None and with_links else None
        if away is not None:
            found.append(FileVersion(sid, locator, away))
            continue
        if named is None or not (is_path(locator) or _is_file(named[0])):
            continue
        found.append(FileVersion(sid, locator, named[1]))
    return found


def linked_away(kb: KB, locator: str) -> str | None:
    """The repository path a file's locator spells (`docs/a.md`, `file:docs/a.md`) when
    a link there leads out of the repository (or nowhere): the file is gone from it, as
    `health.drift` reports; None otherwise (the link is never followed here)."""
    if not is_path(locator):
        return None
    rel = locator.removeprefix("file:")
    parts = [p for p in rel.split("/") if p not in ("", ".")]
    if not parts or rel.startswith("/") or ".." in parts or parts[0] in (".git", ".vouch"):
        return None
    where = "/".join(parts)
    return where if os.path.islink(kb.root / where) else None


def _replaces(kb: KB, sid: str) -> bool:
    """Whether a version records `supersedes`: it claims to be a newer version."""
    meta = _parsed(kb, sid)
    return bool(meta and meta.get("supersedes"))


def _parsed(kb: KB, sid: str) -> dict[str, Any] | None:
    try:
        return kb.read(source_kind.KIND, sid)
    except (CorruptFile, ValueError):
        return None  # reported by verify.check_source


def _is_file(path: os.PathLike[str]) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def work_tree_file(kb: KB, rel: str) -> tuple[Path, int] | None:
    """The work tree's regular file at `rel` and its size; None when there is none
    (links are not followed past the repository: `named_path` resolved them)."""
    path = kb.root / rel
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (path, st.st_size) if stat.S_ISREG(st.st_mode) else None


def work_tree_digest(kb: KB, rel: str) -> str | None:
    """The sha256 of the work tree's regular file at `rel` (links are not followed past
    the repository: `named_path` resolved them); None when there is none; "" when it
    cannot be read or is larger than any source may be."""
    found = work_tree_file(kb, rel)
    if found is None:
        return None
    path, size = found
    if size > max_bytes(kb):
        return ""
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            while block := fh.read(_BLOCK):
                digest.update(block)
    except OSError:
        return ""
    return digest.hexdigest()


def _against(version: FileVersion, present: bool, committed: bool) -> str:
    if present:
        against = f"the file {version.path} in the work tree holds other bytes"
    else:
        against = f"{version.path} is not in the work tree"
    return against + (
        ", and none of its committed versions has these bytes"
        if committed
        else ", and it was never committed"
    )


def _issue(kb: KB, version: FileVersion, against: str) -> dict[str, Any]:
    where = kb.rel(source_kind.path_for(version.id))
    return {
        "id": version.id,
        "kind": "unverified-version",
        "detail": f"the current version at {version.locator!r} is not the file's: {against}; "
        f"its bytes may never have been the file's, so do not trust it ({_mend(version)})",
        "path": where,
    }


def _mend(version: FileVersion) -> str:
    add = f"`vouch source add {version.path}` records the file's bytes as its current version"
    if version.locator == version.path:
        return add
    return (
        f"{add}; {version.locator!r} is another spelling of {version.path}, which vouch never "
        "records, so this version stays current there until its folder is removed"
    )
