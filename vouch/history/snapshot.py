"""Knowledge as one commit holds it (or the work tree): files read by `.vouch/` path."""

from __future__ import annotations

import contextlib

from vouch.core import ids
from vouch.errors import CorruptFile
from vouch.kinds import KINDS, Obj, source
from vouch.store.kb import KB


class Snapshot:
    """Reads `.vouch/`-relative files at `commit`, or from the work tree when None."""

    def __init__(self, kb: KB, commit: str | None = None):
        self.kb = kb
        self.commit = commit

    def read(self, rel: str) -> bytes | None:
        if self.commit is None:
            try:
                return (self.kb.dir / rel).read_bytes()
            except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
                return None
        return self.kb.committed(self.commit, rel)

    def object(self, kind: str, object_id: str) -> Obj | None:
        """The object, or None when absent or unreadable (history shows what it can)."""
        found = KINDS[kind]
        if kind == "source":
            if not ids.is_source_id(object_id):
                return None
            rel = source.path_for(object_id)
        elif ids.is_object_id(object_id):
            rel = found.path_for(object_id)
        else:
            return None
        data = self.read(rel)
        if data is None:
            return None
        with contextlib.suppress(CorruptFile, UnicodeDecodeError):
            return found.load(data.decode("utf-8"), where=rel)
        return None

    def source_content(self, source_id: str) -> bytes | None:
        if self.commit is None:
            return self.kb.source_content(source_id)
        return source.read_content(self.read, source_id)
