"""`kb.source_verify`: every source's bytes still hash to its id.

A source id is the sha256 of the captured bytes (`sources/<aa>/<sha256>/content`), so
verification re-hashes each content file and compares it with the id its directory
names and the `hash` / `byte_size` its meta.yaml records. A missing content file, a
missing or invalid meta.yaml, or bytes that no longer match are issues
(`{id, kind, detail, path}`); so is a file's current version that is not the file's
(`file_versions`); `ok` is false when there is any.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from vouch.core import ids
from vouch.errors import InvalidId, NotFound
from vouch.health.file_versions import unverified_versions
from vouch.health.files import parse, prefix
from vouch.kinds import source as source_kind
from vouch.store.kb import KB

_BLOCK = 1 << 20


def _sha256(path: Path) -> tuple[str, int]:
    digest = hashlib.sha256()
    size = 0
    with open(path, "rb") as fh:
        while block := fh.read(_BLOCK):
            digest.update(block)
            size += len(block)
    return digest.hexdigest(), size


def _source_dirs(kb: KB) -> list[tuple[str, Path]]:
    """(name, directory) of every directory at sources/<aa>/<name>/."""
    base = kb.dir / source_kind.KIND.directory
    found: list[tuple[str, Path]] = []
    try:
        shards = sorted(os.scandir(base), key=lambda e: e.name)
    except FileNotFoundError:
        return []
    for shard in shards:
        if not shard.is_dir(follow_symlinks=False):
            continue
        with os.scandir(shard.path) as entries:
            found += sorted(
                (e.name, Path(e.path))
                for e in entries
                if e.is_dir(follow_symlinks=False) and not e.name.startswith(".")
            )
    return found


def verify_sources(kb: KB, source_id: str | None = None) -> dict[str, Any]:
    if source_id is not None:
        if not ids.is_source_id(source_id):
            raise InvalidId(
                f"{source_id!r} is not a source id",
                hint="source ids are the sha256 of their bytes (64 hex digits)",
            )
        directory = kb.dir / source_kind.directory_for(source_id)
        if not directory.is_dir():
            raise NotFound(f"no source {source_id}", hint="`vouch list sources` lists them")
        targets = [(source_id, directory)]
    else:
        targets = _source_dirs(kb)
    issues: list[dict[str, Any]] = []
    for name, directory in targets:
        issues += check_source(kb, name, directory)
    issues += unverified_versions(kb, [n for n, _ in targets if ids.is_source_id(n)])
    return {"ok": not issues, "checked": len(targets), "issues": issues}


def check_source(kb: KB, name: str, directory: Path) -> list[dict[str, Any]]:
    """The problems of one source directory."""
    where = prefix(kb) + directory.relative_to(kb.dir).as_posix()
    out: list[dict[str, Any]] = []

    def problem(kind: str, detail: str, path: str = where) -> None:
        out.append({"id": name, "kind": kind, "detail": detail, "path": path})

    if not ids.is_source_id(name):
        problem("misplaced", f"{name!r} is not a source id (a sha256); vouch never reads it")
        return out
    if directory.parent.name != ids.shard(name):
        problem("misplaced", f"belongs in sources/{ids.shard(name)}/, where vouch looks for it")
    names = sorted(n for n in os.listdir(directory) if source_kind.is_content_name(n))
    content = directory / (names[0] if names else source_kind.CONTENT)
    digest, size = None, None
    try:
        raw: bytes | None = (directory / "meta.yaml").read_bytes()
    except FileNotFoundError:
        raw = None
    redacted = source_kind.is_tombstone(raw)
    try:
        if not redacted:
            digest, size = _sha256(content)
        elif names:  # redacted by a decision: no bytes, and none may come back
            problem(
                "redacted-content",
                "the source was redacted, yet a content file is back: delete it "
                "(`git rm`) and commit; `git log -- <path>` shows who added it",
                f"{where}/{content.name}",
            )
    except FileNotFoundError:
        problem("missing-content", "the content file is missing", f"{where}/{content.name}")
    except OSError as exc:
        problem("unreadable", f"cannot read the content: {exc}", f"{where}/{content.name}")
    if digest is not None and digest != name:
        problem(
            "hash-mismatch",
            f"the content hashes to {digest}, not to its id: the bytes "
            "changed after they were registered",
            f"{where}/{content.name}",
        )
    if raw is None:
        problem("missing-meta", "meta.yaml is missing", f"{where}/meta.yaml")
        return out
    parsed = parse(source_kind.KIND, raw, f"{where}/meta.yaml")
    if parsed.data is None:
        problem("invalid-meta", str(parsed.problem), f"{where}/meta.yaml")
        return out
    meta = parsed.data
    errors = source_kind.KIND.validate(meta)
    if errors:
        problem("invalid-meta", "; ".join(errors), f"{where}/meta.yaml")
        return out
    if meta["id"] != name or meta["hash"] != f"sha256:{name}":
        problem(
            "meta-mismatch",
            f"meta.yaml records id {meta['id']!r} and hash {meta['hash']!r}",
            f"{where}/meta.yaml",
        )
    if size is not None and meta["byte_size"] != size:
        problem(
            "meta-mismatch",
            f"meta.yaml records {meta['byte_size']} bytes; the content has {size}",
            f"{where}/meta.yaml",
        )
    return out
