"""What a full lint learnt about each file, kept by content between runs.

Reading every knowledge file is cheap; parsing, validating and re-deriving its id is
not (~0.25 ms a file: seconds at 10k claims). What a file's bytes hold never changes,
so `examine`'s answer is kept under the path and a digest of the bytes, in one
`marshal` file inside git's directory (derived, private to the clone, never
committed): the next lint re-examines only files whose bytes changed. The file names
the code it was made by (a digest of the modules that decide the answer); any change
there starts it afresh. It is only an accelerator: unreadable, unwritable or stale, it
is ignored.
"""

from __future__ import annotations

import contextlib
import hashlib
import marshal
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from vouch.store.kb import KB

_VERSION = b"vouch-lint-cache-1"
# the modules whose code decides what `examine` answers
_MODULES = (
    "vouch.core.fastyaml",
    "vouch.core.yamlio",
    "vouch.core.safeload",
    "vouch.core.ids",
    "vouch.kinds.base",
    "vouch.kinds.claim",
    "vouch.kinds.page",
    "vouch.kinds.entity",
    "vouch.kinds.relation",
    "vouch.kinds.evidence",
    "vouch.kinds.source",
    "vouch.kinds.session",
    "vouch.health.files",
    "vouch.health.rules",
)


def _code_digest() -> bytes:
    import importlib

    digest = hashlib.blake2b(_VERSION, digest_size=16)
    for name in _MODULES:
        path = getattr(importlib.import_module(name), "__file__", None)
        with contextlib.suppress(OSError, TypeError):
            digest.update(Path(str(path)).read_bytes())
    return digest.digest()


class LoadCache:
    """(path, digest of bytes) -> what `rules.examine` said of them."""

    def __init__(self, kb: KB):
        key = hashlib.blake2b(
            str(kb.dir).encode("utf-8", "surrogateescape"), digest_size=8
        ).hexdigest()
        self.path = kb.repo.common_dir / "vouch" / f"lint-{key}.cache"
        self.code = _code_digest()
        self.old: dict[tuple[str, bytes], Any] = {}
        self.new: dict[tuple[str, bytes], Any] = {}
        self.misses = 0
        try:
            stamp, entries = marshal.loads(self.path.read_bytes())
            if stamp == self.code and isinstance(entries, dict):
                self.old = entries
        except (OSError, ValueError, EOFError, TypeError):
            pass

    @staticmethod
    def _key(rel: str, raw: bytes) -> tuple[str, bytes]:
        return rel, hashlib.blake2b(raw, digest_size=16).digest()

    def get(self, rel: str, raw: bytes) -> Any:
        key = self._key(rel, raw)
        found = self.old.get(key)
        if found is not None:
            self.new[key] = found
        return found

    def put(self, rel: str, raw: bytes, value: Any) -> None:
        self.misses += 1
        if value[0] == "ok":  # field names interned: marshal then writes each name once
            value = ("ok", {sys.intern(k): v for k, v in value[1].items()}, *value[2:])
        self.new[self._key(rel, raw)] = value

    def save(self) -> None:
        """Keep what this run saw (files gone since are dropped); atomic, best effort."""
        if not self.misses and len(self.new) == len(self.old):
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".lint-", dir=self.path.parent)
            with os.fdopen(fd, "wb") as fh:
                marshal.dump((self.code, self.new), fh)
            os.replace(tmp, self.path)
        except (OSError, ValueError):
            with contextlib.suppress(OSError, UnboundLocalError):
                os.unlink(tmp)
