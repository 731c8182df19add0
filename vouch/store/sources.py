"""Source intake: register bytes as a content-addressed source (not gated, audited).

Sources have versions (`Versions`): registering changed content at a locator records
it as the locator's current version and the old one as superseded by it, in the same
commit; `history` lists a locator's versions, newest first. A file's versions are read
from the file; text a caller supplies never becomes one (`supplied`).
"""

from __future__ import annotations

import contextlib
import errno
import mimetypes
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vouch.core import headings
from vouch.core.progress import Progress, each
from vouch.errors import (
    InvalidPath,
    NotFound,
    OutsideRepository,
    Redacted,
    SourceTooLarge,
    UsageError,
    from_os_error,
)
from vouch.kinds import source
from vouch.store import turns, writer
from vouch.store.kb import KB
from vouch.store.recovery import gate_lock
from vouch.store.versions import Versions, versions_at

_SKIP_DIRS = {".git", ".vouch", "__pycache__", "node_modules", ".venv"}


@dataclass(frozen=True)
class Intake:
    content: bytes
    type: str | None = None
    locator: str | None = None
    title: str | None = None
    media_type: str | None = None
    tags: tuple[str, ...] = ()
    document_title: str | None = None  # its first heading (`headings.document_title`)


def register_many(
    kb: KB, items: Iterable[Intake], actor: str, progress: Progress | None = None
) -> list[dict[str, Any]]:
    """Register sources in one commit. Each result is `{id, deduplicated, locator,
    title}`, plus `supersedes` (the versions it replaced) when it became the current
    version of its locator (see `Versions`)."""
    results: list[dict[str, Any]] = []
    files: dict[str, bytes] = {}
    new_ids: list[str] = []
    replaced: dict[str, list[str]] = {}
    items = list(items)
    limit = max_bytes(kb)
    for item in items:
        if len(item.content) > limit:  # stdin, kb.register_source: files stop earlier
            raise _too_large(Path(item.locator or "-"), limit, len(item.content))
    # every transcript is read before anything is written: one bad line, no commit
    metadata = [_metadata(item) for item in items]
    # the lock, then a landing a killed vouch left finished (`recovery`) — before HEAD is
    # read: a person's `git commit` may have taken that landing's staged files, and what
    # is committed is deduplicated here, never written (so never recovered) again
    with gate_lock(kb):
        head = kb.repo.resolve("HEAD")
        versions = Versions(kb, head, {i.locator or "-" for i in items})
        pairs = list(zip(items, metadata, strict=True))
        for item, extra in each(pairs, progress, "registering", every=50):
            meta = source.new(
                item.content,
                type=item.type or "file",
                locator=item.locator or "-",
                title=item.title,
                media_type=item.media_type,
                tags=sorted(set(item.tags)) or None,
                metadata=extra,
            )
            sid = meta["id"]
            meta_path = source.path_for(sid)
            # through the long-lived cat-file: no process per item of a recursive add
            committed = (
                head is not None and kb.repo.store.info(f"{head}:{kb.rel(meta_path)}") is not None
            )
            shown = {"locator": meta["locator"], "title": meta.get("title")}
            if item.document_title:
                shown["document_title"] = item.document_title
            if committed and source.redacted_in(lambda rel: kb.committed(head, rel), sid):
                raise Redacted(
                    f"{item.locator or 'the input'}: these bytes are source {sid[:12]}…, "
                    "which an approved decision redacted: vouch does not register them again",
                    hint="remove the words from the file (or register a version without "
                    "them); nothing was written",
                )
            if committed or sid in new_ids:
                results.append({"id": sid, "deduplicated": True, **shown})
            else:
                existing = kb.read(source.KIND, sid)  # left by an interrupted run: reuse it
                versions.add(existing or meta)
                media_type = (existing or meta).get("media_type")
                files[source.content_path_for(sid, media_type)] = item.content
                new_ids.append(sid)
                results.append({"id": sid, "deduplicated": False, **shown})
            older = versions.make_current(sid, meta["locator"])
            if older:
                results[-1]["supersedes"] = replaced[sid] = older
        files.update(versions.files())
        if files:
            current = [*new_ids, *(s for s in replaced if s not in new_ids)]
            subject = (
                f"vouch: register source {current[0][:12]}"
                if len(current) == 1
                else f"vouch: register {len(current)} sources"
            )
            retired = sorted({o for olds in replaced.values() for o in olds} - set(current))
            # every source whose files this commit touches is named by its event
            writer.commit_direct(
                kb,
                files,
                subject=subject,
                event="source.register",
                actor=actor,
                object_ids=[*current, *retired],
                data={"supersedes": replaced} if replaced else None,
                progress=progress,
            )
    return results


def _metadata(item: Intake) -> dict[str, Any] | None:
    """A source's `metadata`: the title its document gives itself, what a transcript
    holds; None when there is neither."""
    found = {"document_title": item.document_title} if item.document_title else {}
    return {**found, **(_transcript_metadata(item) or {})} or None


def _transcript_metadata(item: Intake) -> dict[str, Any] | None:
    """`{transcript: {...}}` for a transcript (E102 naming the line when it does not
    read as one), None for any other source."""
    if item.type != turns.TYPE:
        return None
    return {"transcript": turns.check(item.content, item.locator or "-")}


DEFAULT_MAX_BYTES = 50 * 1024 * 1024
_OUTSIDE_HINT = "copy it into the repository, or (CLI only) pass --allow-outside"
_FOLLOW_NOTHING = getattr(os, "O_NOFOLLOW", 0)
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


def max_bytes(kb: KB) -> int:
    """`sources.max_bytes` in config.yaml (default 50 MiB): larger sources are refused."""
    return int(kb.config.number("sources.max_bytes", DEFAULT_MAX_BYTES))


def check_path_text(raw: str) -> None:
    if "\0" in raw:
        raise InvalidPath(f"the path {raw!r} contains a NUL byte", hint="pass the file's real name")


def confine(kb: KB, path: Path, *, allow_outside: bool = False) -> tuple[Path, str | None]:
    """`path` resolved, and its repo-relative (posix) locator: None when it lies outside.

    Symlinks and `..` are resolved first, so a link or a climb that leads out is caught;
    outside the work tree is refused unless `allow_outside`. git's own directory (`.git`
    in any case, at any depth) and the knowledge base's files (`.vouch/`) are inside the
    tree but are never sources.
    """
    check_path_text(str(path))
    resolved = path.resolve()
    try:
        rel = resolved.relative_to(kb.root)
    except ValueError:
        if allow_outside:
            return resolved, None
        raise OutsideRepository(
            f"{path} is outside the repository {kb.root}", hint=_OUTSIDE_HINT
        ) from None
    for part in rel.parts:
        folded = part.casefold().rstrip(". ")  # NTFS ignores trailing dots and spaces
        if folded in (".git", "git~1"):
            raise OutsideRepository(
                f"{path} is inside git's own directory (.git)",
                hint="register files of the work tree",
            )
        if folded == ".vouch":
            raise OutsideRepository(
                f"{path} is one of the knowledge base's own files (.vouch/)",
                hint="cite knowledge by its id instead of registering it",
            )
    return resolved, rel.as_posix()


def intake_for_path(
    kb: KB,
    path: Path,
    type: str | None = None,
    title: str | None = None,
    tags: Iterable[str] = (),
    *,
    confined: bool = False,
) -> Intake:
    """Read one file as a source. `confined`: refuse anything outside the work tree.

    Library callers (tests, `vouch eval` corpora) may read outside; every path an agent or
    a CLI user names is confined unless a person passed --allow-outside. `.git/` and
    `.vouch/` are refused either way.
    """
    resolved, rel = confine(kb, path, allow_outside=not confined)
    content = _read_limited(kb, path, resolved, rel)
    media_type = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    if type is None:
        type = "pdf" if media_type == "application/pdf" else _sniffed(path, content)
    return Intake(
        content,
        type,
        readable(rel or str(resolved)),
        title or readable(path.name),
        media_type,
        tuple(tags),
        headings.document_title(content, path.suffix),
    )


_TRANSCRIPT_SUFFIXES = frozenset({"", ".txt", ".log", ".jsonl", ".ndjson", ".chat"})


def _sniffed(path: Path, content: bytes) -> str:
    """`transcript` for a text or JSON Lines file whose content reads as a conversation
    (`turns.detected`), else `file`. Only suffixes a chat log is saved under are read."""
    if path.suffix.lower() in _TRANSCRIPT_SUFFIXES and turns.detected(content) is not None:
        return turns.TYPE
    return "file"


def _read_limited(kb: KB, path: Path, resolved: Path, rel: str | None) -> bytes:
    """The bytes of a regular file of at most `sources.max_bytes`, checked before reading.

    With `rel` (a confined path) the file is opened from the work tree's root one
    component at a time without following links, so a link swapped in after `confine`
    looked cannot lead the read out of the repository.
    """
    limit = max_bytes(kb)
    with contextlib.suppress(OSError):  # a missing file is reported by the open below
        if _is_special(os.stat(resolved).st_mode):  # before opening: a device may react
            raise _not_regular(path)
    try:
        fd = _open_below(kb.root, rel) if rel is not None else os.open(resolved, _READ_FLAGS)
    except FileNotFoundError as exc:
        raise NotFound(f"no such file: {path}") from exc
    except OSError as exc:
        if rel is not None and exc.errno in (errno.ELOOP, errno.ENOTDIR):
            if Path(os.path.realpath(kb.root / rel)) != kb.root / rel:
                raise OutsideRepository(
                    f"{path}: a link appeared in its path while it was being read",
                    hint=_OUTSIDE_HINT,
                ) from exc
            raise NotFound(f"no such file: {path} (a part of it is not a directory)") from exc
        raise from_os_error(exc, path) or UsageError(f"cannot read {path}: {exc.strerror}") from exc
    try:  # before fdopen, which refuses a directory with an OSError of its own
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise UsageError(f"{path} is a directory", hint="pass --recursive to add a folder")
        if not stat.S_ISREG(st.st_mode):
            raise _not_regular(path)
        if st.st_size > limit:
            raise _too_large(path, limit, st.st_size)
    except BaseException:
        os.close(fd)
        raise
    with os.fdopen(fd, "rb") as fh:
        content = fh.read(limit + 1)  # files in /proc report size 0; a file may grow
    if len(content) > limit:
        raise _too_large(path, limit)
    return content


def _is_special(mode: int) -> bool:
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def _not_regular(path: Path) -> UsageError:
    # a FIFO, socket or device (/dev/zero) would block or never end
    return UsageError(f"{path} is not a regular file", hint="register files or stdin (-)")


def _open_below(root: Path, rel: str) -> int:
    *dirs, name = rel.split("/")
    if not hasattr(os, "O_DIRECTORY") or os.open not in os.supports_dir_fd:
        return os.open(root / rel, _READ_FLAGS | _FOLLOW_NOTHING)
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    try:
        for part in dirs:
            inner = os.open(part, os.O_RDONLY | os.O_DIRECTORY | _FOLLOW_NOTHING, dir_fd=fd)
            os.close(fd)
            fd = inner
        return os.open(name, _READ_FLAGS | _FOLLOW_NOTHING, dir_fd=fd)
    finally:
        os.close(fd)


def _too_large(path: Path, limit: int, size: int | None = None) -> SourceTooLarge:
    what = f"{size} bytes" if size is not None else "larger"
    return SourceTooLarge(
        f"{path} is {what}, over the limit for a source (sources.max_bytes: {limit} bytes)",
        hint="register a smaller extract, or raise sources.max_bytes in .vouch/config.yaml",
    )


def readable(name: str) -> str:
    """A file name as text: bytes that are not UTF-8 become U+FFFD (YAML cannot hold them)."""
    return os.fsencode(name).decode("utf-8", "replace")


@dataclass(frozen=True)
class Walk:
    files: list[Path]
    links: list[Path]  # symbolic links met on the way: never followed
    hidden: list[Path] = field(default_factory=list)  # dotfiles and dot-folders left out


def walk(directory: Path) -> Walk:
    """Regular files below `directory`, sorted, skipping VCS and hidden directories.

    A walk never follows a symbolic link, to a file or to a folder: a link may lead out
    of the repository, and a person who means its target can name it. Hidden files and
    folders (`.github/`, `.env`) are left out and listed (`hidden`), folders vouch never
    reads in (`.git`, `.venv`, `node_modules`, ...) left out in silence.
    """
    found: list[Path] = []
    links: list[Path] = []
    hidden: list[Path] = []
    for base, dirs, names in os.walk(directory):
        here = Path(base)
        hidden.extend(here / d for d in sorted(dirs) if d.startswith(".") and d not in _SKIP_DIRS)
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith("."))
        links.extend(here / d for d in dirs if (here / d).is_symlink())
        dirs[:] = [d for d in dirs if not (here / d).is_symlink()]
        for n in sorted(names):
            if n.startswith("."):
                hidden.append(here / n)
            elif (here / n).is_symlink():
                links.append(here / n)
            elif (here / n).is_file():
                found.append(here / n)
    return Walk(found, links, hidden)


def files_under(directory: Path) -> list[Path]:
    return walk(directory).files


def resolve_path(raw: str) -> Path:
    check_path_text(raw)
    path = Path(raw).expanduser()
    return path if path.is_absolute() else (Path.cwd() / path)


def target_path(kb: KB, path: str) -> Path:
    target = resolve_path(path)
    if not target.exists() and not Path(path).is_absolute():
        target = kb.root / path  # repo-relative
    return target


def register_source_from_path(
    kb: KB,
    actor: str,
    path: str,
    type: str | None = None,
    title: str | None = None,
    tags: list[str] | None = None,
    *,
    allow_outside: bool = False,
) -> dict[str, Any]:
    """Register one file. It must lie in the work tree unless `allow_outside`, which only
    the CLI passes (`vouch source add --allow-outside`): agents never read outside."""
    item = intake_for_path(
        kb, target_path(kb, path), type, title, tags or (), confined=not allow_outside
    )
    return register_many(kb, [item], actor)[0]


def history(kb: KB, locator: str) -> list[dict[str, Any]]:
    """The versions registered at `locator` (or at the path it names), newest first:
    the current version, then the superseded ones by capture time."""
    found = versions_at(kb, locator)
    if not found:
        as_path = _as_locator(kb, locator)
        found = versions_at(kb, as_path) if as_path not in (None, locator) else []
    if not found:
        raise NotFound(
            f"no source is registered at {locator!r}",
            hint="`vouch list sources` shows each source's locator",
        )
    found.sort(key=lambda m: (str(m.get("created_at")), m["id"]), reverse=True)
    found.sort(key=lambda m: bool(m.get("superseded_by")))
    keys = (
        "id",
        "locator",
        "title",
        "type",
        "byte_size",
        "media_type",
        "created_at",
        "supersedes",
        "superseded_by",
    )
    return [{"current": not m.get("superseded_by"), **{k: m.get(k) for k in keys}} for m in found]


def _as_locator(kb: KB, raw: str) -> str | None:
    """The locator `vouch source add` records for a path: repo-relative, else absolute."""
    if "\0" in raw:
        return None
    resolved = target_path(kb, raw).resolve()
    try:
        return resolved.relative_to(kb.root).as_posix()
    except ValueError:
        return str(resolved)
