"""Source intake: register bytes as a content-addressed source (not gated, audited)."""

from __future__ import annotations

import mimetypes
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vouch import writer
from vouch.errors import NotFound, UsageError
from vouch.kb import KB
from vouch.kinds import source
from vouch.lock import write_lock

_SKIP_DIRS = {".git", ".vouch", "__pycache__", "node_modules", ".venv"}


@dataclass(frozen=True)
class Intake:
    content: bytes
    type: str | None = None
    locator: str | None = None
    title: str | None = None
    media_type: str | None = None
    tags: tuple[str, ...] = ()


def register_many(kb: KB, items: Iterable[Intake], actor: str,
                  progress: Callable[[int], None] | None = None) -> list[dict[str, Any]]:
    """Register sources in one commit. Each result is `{id, deduplicated}`."""
    results: list[dict[str, Any]] = []
    files: dict[str, bytes] = {}
    new_ids: list[str] = []
    with write_lock(kb.dir, kb.config.number("lock.timeout_seconds", 30)):
        head = kb.repo.resolve("HEAD")
        for n, item in enumerate(items, 1):
            meta = source.new(
                item.content,
                type=item.type or "file",
                locator=item.locator or "-",
                title=item.title,
                media_type=item.media_type,
                tags=sorted(set(item.tags)) or None,
            )
            sid = meta["id"]
            meta_path = source.path_for(sid)
            # through the long-lived cat-file: no process per item of a recursive add
            committed = head is not None and kb.repo.store.info(
                f"{head}:{kb.rel(meta_path)}") is not None
            if committed or sid in new_ids:
                results.append({"id": sid, "deduplicated": True})
            else:
                existing = kb.read(source.KIND, sid)  # left by an interrupted run: reuse it
                files[meta_path] = source.dump(existing or meta).encode()
                files[source.content_path_for(sid)] = item.content
                new_ids.append(sid)
                results.append({"id": sid, "deduplicated": False})
            if progress:
                progress(n)
        if files:
            subject = (f"vouch: register source {new_ids[0][:12]}" if len(new_ids) == 1
                       else f"vouch: register {len(new_ids)} sources")
            writer.commit_direct(kb, files, subject=subject, event="source.register",
                                 actor=actor, object_ids=new_ids, check_dirty=False)
    return results


def register_source(kb: KB, actor: str, content: str | bytes, locator: str,
                    type: str = "file", title: str | None = None,
                    media_type: str | None = None, tags: list[str] | None = None) -> dict[str, Any]:
    payload = content.encode("utf-8") if isinstance(content, str) else content
    item = Intake(payload, type, locator, title, media_type or "text/plain", tuple(tags or ()))
    return register_many(kb, [item], actor)[0]


def intake_for_path(kb: KB, path: Path, type: str | None = None, title: str | None = None,
                    tags: Iterable[str] = ()) -> Intake:
    if path.exists() and not path.is_dir() and not path.is_file():
        # a FIFO, socket or device (/dev/zero) would block or never end
        raise UsageError(f"{path} is not a regular file", hint="register files or stdin (-)")
    try:
        content = path.read_bytes()
    except FileNotFoundError as exc:
        raise NotFound(f"no such file: {path}") from exc
    except IsADirectoryError as exc:
        raise UsageError(f"{path} is a directory", hint="pass --recursive to add a folder") from exc
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from exc
    resolved = path.resolve()
    try:
        locator = resolved.relative_to(kb.root).as_posix()
    except ValueError:
        locator = str(resolved)
    media_type = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    if type is None:
        type = "pdf" if media_type == "application/pdf" else "file"
    return Intake(content, type, _readable(locator), title or _readable(path.name), media_type,
                  tuple(tags))


def _readable(name: str) -> str:
    """A file name as text: bytes that are not UTF-8 become U+FFFD (YAML cannot hold them)."""
    return os.fsencode(name).decode("utf-8", "replace")


def files_under(directory: Path) -> list[Path]:
    """Regular files below `directory`, sorted, skipping VCS and hidden directories."""
    found: list[Path] = []
    for base, dirs, names in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith("."))
        found.extend(Path(base) / n for n in sorted(names)
                     if not n.startswith(".") and (Path(base) / n).is_file())
    return found


def resolve_path(raw: str) -> Path:
    path = Path(raw).expanduser()
    return path if path.is_absolute() else (Path.cwd() / path)


def register_source_from_path(kb: KB, actor: str, path: str, type: str | None = None,
                              title: str | None = None,
                              tags: list[str] | None = None) -> dict[str, Any]:
    target = resolve_path(path)
    if not target.exists() and not Path(path).is_absolute():
        target = kb.root / path  # repo-relative
    return register_many(kb, [intake_for_path(kb, target, type, title, tags or ())], actor)[0]
