"""Where a knowledge base's derived index lives.

- `.vouch/index/`, beside the knowledge, when this user can write there;
- otherwise (a read-only clone, a checkout owned by another user, a read-only mount) a
  per-user cache, `$XDG_CACHE_HOME/vouch/<key>/index` (`~/.cache` by default), where key
  is the first 16 hex digits of the sha256 of the resolved `.vouch` path, so two
  knowledge bases never share one (and if they ever did, `kb_path` in `index_meta` makes
  it E003, not a wrong answer);
- `VOUCH_INDEX_DIR`, when set, is the index directory itself (a scratch disk, a
  container volume).

`.vouch/index` (or `.vouch`) that is a symbolic link is never followed — a repository can
commit one pointing anywhere, and a rebuild replaces and removes files where it points —
so the index goes to the per-user cache instead; `VOUCH_INDEX_DIR` is the way to put it
elsewhere on purpose.

Deciding costs one `access(2)` call, which is honest about permission bits, ACLs and
read-only mounts. Where it is not (root on a squashed network share, a security
module), the first write fails: `state.index_lock` turns EACCES, EPERM and EROFS into
PermissionDenied, and the index opens again in the cache (`Settings.in_cache`).
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
from pathlib import Path
from typing import NamedTuple

ENV = "VOUCH_INDEX_DIR"
INDEX_DIR = "index"
DB_NAME = "search.db"  # the index database, named here so a cold status needs no sqlite
REPOSITORY, CACHE, ENVIRONMENT = "repository", "cache", "environment"
_DENIED = (errno.EACCES, errno.EPERM, errno.EROFS)


class Location(NamedTuple):
    """Where an index lives, and which of the three places that is."""

    path: Path
    kind: str  # REPOSITORY | CACHE | ENVIRONMENT


def locate(vouch_dir: Path, resolved: str) -> Location:
    """Where the index of the knowledge base at `vouch_dir` (resolved: `resolved`) lives."""
    forced = os.environ.get(ENV)
    if forced:
        return Location(Path(forced).expanduser().absolute(), ENVIRONMENT)
    local = vouch_dir / INDEX_DIR
    if os.path.islink(vouch_dir) or os.path.islink(local):
        # a link (committed by anyone) would lead every index write out of the
        # repository, where a rebuild also replaces and removes files: not followed
        return in_cache(resolved)
    # an existing index directory must be writable (SQLite creates its -wal and -shm
    # files beside the database even to read); a missing one must be creatable
    if _writable(local if local.is_dir() else vouch_dir):
        return Location(local, REPOSITORY)
    return in_cache(resolved)


def of(vouch_dir: Path) -> Location:
    """`locate` for a caller without `Settings` (one that must not resolve the model)."""
    return locate(vouch_dir, str(vouch_dir.resolve()))


def in_cache(resolved: str) -> Location:
    base = os.environ.get("XDG_CACHE_HOME", "")
    root = Path(base) if os.path.isabs(base) else Path.home() / ".cache"
    key = hashlib.sha256(resolved.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return Location(root / "vouch" / key / INDEX_DIR, CACHE)


def denied(exc: OSError) -> bool:
    """Whether a failed write means this user may not write there (not a full disk)."""
    return exc.errno in _DENIED


def _writable(directory: Path) -> bool:
    effective = os.access in os.supports_effective_ids
    return os.access(directory, os.W_OK | os.X_OK, effective_ids=effective)


def invalid_files(vouch_dir: Path) -> int:
    """How many files the index's last build or refresh left out (0 without an index),
    from one read of `index_meta`: `vouch status` shows it without opening the index
    (`vouch index status` names them)."""
    import sqlite3

    path = of(vouch_dir).path / DB_NAME
    if not path.is_file():
        return 0
    try:
        conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
        try:
            row = conn.execute("SELECT value FROM index_meta WHERE key = 'invalid'").fetchone()
        finally:
            conn.close()
        found = json.loads(row[0]) if row else []
    except (sqlite3.Error, ValueError):
        return 0  # an unusable index: `index_state` says so
    return len(found) if isinstance(found, list) else 0
