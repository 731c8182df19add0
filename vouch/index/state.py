"""The small pieces of index state every open needs: the writer lock, the document
counts and the git identity recorded in `index_meta`.

They live apart from `build` and `refresh` so that opening an index to query it (a cold
`vouch search`) does not import the writing machinery (chunking, the YAML readers, ~10 ms).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path

from vouch.core.lock import file_lock
from vouch.errors import PermissionDenied, SystemFailure
from vouch.index import freshness, location, store
from vouch.store.kb import KB


@contextlib.contextmanager
def index_lock(directory: Path, timeout: float = 120.0) -> Iterator[None]:
    """One index writer per clone; readers never wait (SQLite WAL).

    PermissionDenied (E204) when this user may not write `directory` (`Index.open` then
    moves the index to the per-user cache, see `location`)."""
    held = contextlib.ExitStack()
    try:
        directory.mkdir(parents=True, exist_ok=True)
        held.enter_context(
            file_lock(
                directory / ".lock",
                timeout,
                f"another process is writing {directory}",
                "wait for it to finish",
                delay=0.05,
                max_delay=0.05,
            )
        )
    except (FileExistsError, NotADirectoryError) as exc:
        raise SystemFailure(
            f"{directory} is not a directory", hint="remove it: the index is rebuilt there"
        ) from exc
    except OSError as exc:
        if not location.denied(exc):
            raise
        raise PermissionDenied(
            f"cannot write the search index at {directory} ({exc.strerror})",
            hint=f"make it writable, or set {location.ENV} to a directory you can write",
        ) from exc
    with held:
        yield


def indexed_state(meta: store.Meta) -> freshness.State:
    """The git identity the index was built from (validated when the index was opened;
    parsed once per `meta`: its stamps name every shard directory)."""
    return meta.derived("state", _parsed_state)


def _parsed_state(meta: store.Meta) -> freshness.State:
    values = meta.values
    return freshness.State.from_meta(
        meta["tree"],
        meta["dirty"],
        values.get("stamps"),
        values.get("index_stamp"),
        values.get("staged"),
    )


def knowledge_changed(kb: KB, meta: store.Meta, now: freshness.State) -> bool:
    """Whether indexed objects changed since the index's recorded state (which stays as
    it was when `index.auto_refresh: false` keeps the index from refreshing itself); a
    recorded tree git no longer has counts as changed."""
    try:
        return freshness.knowledge_changed(kb, indexed_state(meta), now)
    except freshness.HistoryGone:
        return True


class Counts:
    """What the index holds, kept in `index_meta` so status costs no table scan."""

    __slots__ = ("by_format", "by_kind", "chunks", "vectors")

    def __init__(
        self,
        by_kind: dict[str, int] | None = None,
        by_format: dict[str, int] | None = None,
        chunks: int = 0,
        vectors: int = 0,
    ):
        self.by_kind = {} if by_kind is None else by_kind
        self.by_format = {} if by_format is None else by_format
        self.chunks = chunks
        self.vectors = vectors

    def add(self, kind: str, fmt: str, n: int = 1) -> None:
        self.by_kind[kind] = self.by_kind.get(kind, 0) + n
        self.by_format[fmt] = self.by_format.get(fmt, 0) + n

    def to_json(self) -> str:
        return json.dumps(
            {
                "by_kind": {k: v for k, v in sorted(self.by_kind.items()) if v},
                "by_format": {k: v for k, v in sorted(self.by_format.items()) if v},
                "chunks": self.chunks,
                "vectors": self.vectors,
            },
            separators=(",", ":"),
        )

    @classmethod
    def from_meta(cls, meta: store.Meta) -> Counts:
        raw = json.loads(meta.values.get("counts") or "{}")
        return cls(
            dict(raw.get("by_kind", {})),
            dict(raw.get("by_format", {})),
            int(raw.get("chunks", 0)),
            int(raw.get("vectors", 0)),
        )

    @property
    def documents(self) -> int:
        return sum(self.by_kind.values())
