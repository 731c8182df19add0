"""Text a caller supplies is never a file's version (`kb.register_source`).

A file's locator is its path in the repository, as `vouch source add` records it, and
its versions are read from that file in the work tree (`source add`,
`kb.register_source_from_path`), never taken from a caller: an agent that could send
invented text with `README.md` as its locator would make it README.md's current
version, shown under the file's name and marking the real bytes superseded.

So `place` decides where the caller's text is recorded:

- a locator that names a file of the work tree (after `..` and links, as `source add`
  resolves it) with exactly these bytes is that file: the text is registered as the file
  itself, at its own locator;
- one that names a file holding other bytes is refused (E104), with a hint naming the
  two ways that work: register the file, or give the text a locator of its own;
- a path that names no file of the work tree (deleted, never written, outside the
  repository, inside `.git/` or `.vouch/`) becomes `inline:<locator>`: the `inline:`
  scheme is the caller's text, which no file's locator can be, so it never supersedes a
  file's version (and later versions of the same text there version it, as before);
- a locator with a scheme (`https://…`, `slack:C1/p42`, `inline:…`) is kept: a page or
  a message is something only a caller can capture. `file:` names a path and is
  treated as one. `stdin`, `-` and the empty locator name no document and are kept.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Any

from vouch.errors import GateRefused, VouchError
from vouch.store import sources
from vouch.store.kb import KB
from vouch.store.versions import versioned

INLINE = "inline:"
# a URI scheme of two characters or more (`C:` is a drive, so a path)
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]+:")
_FILE_SCHEME = re.compile(r"file:(//)?", re.IGNORECASE)


def place(kb: KB, item: sources.Intake) -> sources.Intake:
    """The intake to register for `item` (content and locator from a caller): the file
    it names, the same text at a locator of its own, or itself; GateRefused when it names
    a file of the work tree whose bytes differ."""
    locator = item.locator or ""
    named = named_path(kb, locator)
    size = _file_size(named[0]) if named is not None else None
    if named is not None and size is not None:
        resolved, rel = named
        if size == len(item.content):
            as_file = sources.intake_for_path(
                kb, resolved, item.type, item.title, item.tags, confined=True
            )
            if as_file.content == item.content:
                return as_file
        raise _other_bytes(locator, rel)
    if is_path(locator):
        return sources.Intake(
            item.content, item.type, INLINE + locator, item.title, item.media_type, item.tags
        )
    return item


def is_path(locator: str) -> bool:
    """Whether a locator is a path (`docs/a.md`, `/abs/a.md`, `file:a.md`), what a
    file's locator is, rather than a URL or a message id (or `stdin`: no document)."""
    return versioned(locator) and (
        _FILE_SCHEME.match(locator) is not None or _SCHEME.match(locator) is None
    )


def named_path(kb: KB, locator: str) -> tuple[Path, str] | None:
    """(path, repo-relative locator) of the place in the work tree that `locator` names,
    read as `source add` reads a path (repo-relative or absolute, `file:` dropped, `..`
    and links resolved), whether or not a file is there; None when it names no place a
    file source can have (`stdin`, outside the repository, `.git/`, `.vouch/`)."""
    if not versioned(locator):
        return None
    file_scheme = _FILE_SCHEME.match(locator)
    text = locator[file_scheme.end() :] if file_scheme else locator
    if not text or "\0" in text:
        return None
    candidate = Path(text) if os.path.isabs(text) else kb.root / text
    try:
        resolved, rel = sources.confine(kb, candidate)
    except (VouchError, OSError, RuntimeError, ValueError):
        return None  # refused by the confinement: never a file source's place
    return (resolved, rel) if rel is not None else None


def _file_size(path: Path) -> int | None:
    """The size of the file at `path`; None when there is none (or a folder)."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return None if stat.S_ISDIR(st.st_mode) else st.st_size


def _other_bytes(locator: str, rel: str) -> GateRefused:
    return GateRefused(
        f"{locator!r} names the file {rel} in the work tree, which holds other bytes: "
        "a file's versions are read from the file, never supplied with it",
        hint=f"register the file itself (kb.register_source_from_path with path {rel!r}; "
        f"CLI: vouch source add {rel}), or give your text a locator of its own, "
        f"e.g. {INLINE}{rel}",
    )


def register_source(
    kb: KB,
    actor: str,
    content: str | bytes,
    locator: str,
    type: str = "file",
    title: str | None = None,
    media_type: str | None = None,
    tags: list[str] | None = None,
) -> dict[str, Any]:
    """Register text a caller supplies. It is never a new version of a file: it is
    recorded where `place` says (the file itself when the bytes are the file's,
    else a locator of its own) or refused when it names a file holding other bytes."""
    payload = content.encode("utf-8") if isinstance(content, str) else content
    item = sources.Intake(
        payload, type, locator, title, media_type or "text/plain", tuple(tags or ())
    )
    return sources.register_many(kb, [place(kb, item)], actor)[0]
