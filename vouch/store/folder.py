"""Registering a folder (`vouch source add -r DIR`): which files below it become sources,
and why each of the others does not.

A recursive add is for documentation worth searching, not for whatever lies in a
checkout: by default it leaves out what git ignores (one `git check-ignore` for the
whole folder) and binary files (git's test: a NUL byte in the first 8000 bytes; PDFs are
kept, vouch reads their text), and it takes `--include` / `--exclude` globs. Symbolic
links are never followed, and hidden files and folders (a name that starts with a dot)
are left out. Every file left out is reported with its reason (a hidden folder once).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from vouch.core.progress import Progress, each
from vouch.store.kb import KB
from vouch.store.sources import Intake, confine, intake_for_path, readable, target_path, walk

BINARY_SNIFF = 8000  # bytes git looks at to call a file binary
HIDDEN = "hidden (name starts with a dot; add it by name)"


@dataclass(frozen=True)
class Skipped:
    path: str  # relative to the folder (bytes that are not UTF-8 shown as U+FFFD)
    reason: str  # "binary", "ignored by .gitignore", "excluded by --exclude '*.css'", ...


@dataclass
class Folder:
    items: list[Intake] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)  # each item's path, relative to the folder
    skipped: list[Skipped] = field(default_factory=list)  # symbolic links among them


def is_binary(content: bytes) -> bool:
    return b"\0" in content[:BINARY_SNIFF] and not content.startswith(b"%PDF-")


def matches(rel: str, pattern: str) -> bool:
    """gitignore-like: a pattern with a `/` matches the path from the folder (or a
    folder of it); one without matches any file or folder name on the way."""
    if "/" in pattern.strip("/"):
        pattern = pattern.strip("/")
        return fnmatch.fnmatchcase(rel, pattern) or fnmatch.fnmatchcase(rel, pattern + "/*")
    pattern = pattern.strip("/")
    return any(fnmatch.fnmatchcase(part, pattern) for part in PurePosixPath(rel).parts)


def intakes_under(
    kb: KB,
    directory: str,
    type: str | None = None,
    tags: Iterable[str] = (),
    *,
    allow_outside: bool = False,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    everything: bool = False,
    progress: Progress | None = None,
) -> Folder:
    """The files below `directory` as intakes, and every file left out with its reason.

    The folder itself must lie in the work tree unless `allow_outside`. `everything`
    keeps ignored and binary files (globs still apply).
    """
    root = target_path(kb, directory)
    _, root_rel = confine(kb, root, allow_outside=allow_outside)
    found = walk(root)
    out = Folder()
    for link in found.links:
        out.skipped.append(Skipped(readable(_below(link, root)), "symbolic link, never followed"))
    for dot in found.hidden:  # a folder is one entry: what it holds was never looked at
        shown = readable(_below(dot, root)) + ("/" if _is_folder(dot) else "")
        out.skipped.append(Skipped(shown, HIDDEN))
    chosen: list[tuple[Path, str]] = []
    for path in found.files:
        rel = path.relative_to(root).as_posix()
        excluded = next((p for p in exclude if matches(rel, p)), None)
        if excluded is not None:
            out.skipped.append(Skipped(readable(rel), f"excluded by --exclude {excluded!r}"))
        elif include and not any(matches(rel, p) for p in include):
            out.skipped.append(Skipped(readable(rel), "not matched by --include"))
        else:
            chosen.append((path, rel))
    ignored: dict[str, str] = {}
    if not everything and root_rel is not None and chosen:
        prefix = "" if root_rel == "." else root_rel + "/"
        ignored = kb.repo.ignored(prefix + rel for _, rel in chosen)
        ignored = {k[len(prefix) :]: v for k, v in ignored.items()}
    for path, rel in each(chosen, progress, "reading", every=50):
        if rel in ignored:
            out.skipped.append(Skipped(readable(rel), f"ignored by {readable(ignored[rel])}"))
            continue
        item = intake_for_path(kb, path, type, None, tags, confined=not allow_outside)
        if not everything and is_binary(item.content):
            out.skipped.append(Skipped(readable(rel), "binary"))
            continue
        out.items.append(item)
        out.paths.append(readable(rel))
    return out


def _is_folder(path: Path) -> bool:
    return path.is_dir() and not path.is_symlink()


def _below(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)
