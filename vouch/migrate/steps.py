"""The migration steps: one small function per schema version, N → N+1.

A step reads the committed `.vouch/` files (`Files`, with the changes of the steps
before it) and returns the files to change (`.vouch/`-relative path → new bytes, None to
delete). It writes nothing itself: `vouch.migrate.apply` lands every step's changes, and
the new `schema_version`, as one commit. A step must be idempotent — run on its own
output it changes nothing — and may touch only the folders it declares (`touches`), so
that a pending proposal outside them is known to be unaffected.

Version 1 is the format every landed vouch wrote (a source's bytes in a bare `content`
or a `content.<ext>`: readers accept both), so no step ships yet; the tests register one
of their own (`registered`) to prove plan, apply, crash safety and `git revert`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass

from vouch.errors import SchemaTooNew
from vouch.store import schema
from vouch.store.kb import KB

Changes = dict[str, bytes | None]


class Files:
    """The `.vouch/` files committed in `commit`, with the changes laid over them so far."""

    def __init__(self, kb: KB, commit: str | None) -> None:
        self.kb = kb
        self.commit = commit
        self._over: Changes = {}
        self._listed: dict[str, list[str]] = {}

    def paths(self, folder: str) -> list[str]:
        """Every file under `folder` (`.vouch/`-relative), sorted, as the changes leave it."""
        found = self._listed.get(folder)
        if found is None:
            found = []
            if self.commit is not None:
                cut = len(self.kb.rel(".")) + 1
                blobs = self.kb.repo.tree_blobs(self.commit, [self.kb.rel(folder) + "/"])
                found = [p[cut:] for p in blobs]
            self._listed[folder] = found
        inside = folder.rstrip("/") + "/"
        now = set(found) | {p for p, b in self._over.items() if b is not None}
        return sorted(p for p in now if p.startswith(inside) and self._over.get(p, b"") is not None)

    def read(self, path: str) -> bytes | None:
        if path in self._over:
            return self._over[path]
        if self.commit is None:
            return None
        blob = self.kb.repo.blob_at(self.commit, self.kb.rel(path))
        return self.kb.repo.read_blob(blob) if blob else None

    def lay(self, changes: Mapping[str, bytes | None]) -> None:
        self._over.update(changes)

    def laid(self) -> Changes:
        """Every change laid so far."""
        return dict(self._over)


@dataclass(frozen=True)
class Step:
    source: int  # the version it upgrades, to source + 1
    name: str  # a short slug, recorded in the audit event
    summary: str  # what it changes, for `vouch migrate plan`
    touches: tuple[str, ...]  # `.vouch/`-relative folders whose files it may change
    change: Callable[[Files], Changes]


STEPS: dict[int, Step] = {}


def register(step: Step) -> Step:
    if step.source in STEPS:
        raise AssertionError(f"two migration steps from version {step.source}")
    STEPS[step.source] = step
    return step


@contextmanager
def registered(step: Step) -> Iterator[Step]:
    """A step from the current version, made current while the block runs (tests: a
    synthetic step proves the machinery before a real one exists)."""
    if step.source != schema.current():
        raise AssertionError(f"a new step upgrades version {schema.current()}")
    register(step)
    schema.set_current(step.source + 1)
    try:
        yield step
    finally:
        STEPS.pop(step.source, None)
        schema.set_current(step.source)


def chain(start: int, end: int) -> list[Step]:
    """The steps from version `start` to `end`, in order."""
    if start > end:
        raise SchemaTooNew(
            f"this knowledge base is in schema version {start}, and this vouch knows "
            f"versions up to {end}",
            hint="upgrade vouch (e.g. `pip install -U vouch`); nothing to migrate here",
        )
    missing = [v for v in range(start, end) if v not in STEPS]
    if missing:  # a release that raised CURRENT without its step: never shipped
        raise AssertionError(f"no migration step from version {missing[0]}")
    return [STEPS[v] for v in range(start, end)]
