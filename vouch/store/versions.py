"""Source versions: the sources registered at one locator, and which one is current.

Registering changed content at a locator (`vouch source add FILE` after editing FILE)
makes the new source the current version and the older one `superseded_by` it; both
stay content-addressed and verifiable. `Versions` computes the metadata edits one
registration makes; `superseded_sources` maps every superseded version to its locator's
current one (lint lists claims still citing an old version).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from typing import Any

from vouch.core import fastyaml
from vouch.errors import CorruptFile
from vouch.kinds import Obj, source
from vouch.kinds import claim as claim_kind
from vouch.kinds import evidence as evidence_kind
from vouch.store.kb import KB

UNVERSIONED = source.UNVERSIONED  # locators that name no document (`stdin`)
_LOCATOR_LINE = re.compile(rb"^locator: ([^\n]*)\n(?![ \t])", re.M)
_NOT_PLAIN = frozenset("'\"&*!|>{}[]%@`#,?:-")


def versioned(locator: str) -> bool:
    return locator not in UNVERSIONED


class Versions:
    """The versions at the locators one registration touches, and the meta.yaml edits
    that leave exactly one current version at each.

    Registering content at a locator makes it the current version there: every other
    current version at that locator gets `superseded_by` it, and it records the newest
    of those in `supersedes`. Content already current changes nothing (adding the same
    bytes again is a no-op); an older version whose bytes come back (a revert) becomes
    current again. Bytes first registered under another locator keep that one.
    Committed metadata is edited in place (comments survive); versions are looked up
    in the commit the registration lands on, never only in the work tree.
    """

    def __init__(self, kb: KB, head: str | None, locators: Iterable[str]):
        self.kb = kb
        self.head = head
        self.locators = {loc for loc in locators if versioned(loc)}
        self._by_locator: dict[str, list[str]] | None = None
        self._new: dict[str, Obj] = {}  # sources this commit adds
        self._committed: dict[str, tuple[str, Obj]] = {}  # (text, meta) at head, as edited
        self._edited: set[str] = set()

    def add(self, meta: Obj) -> None:
        """A source this commit adds (not yet current anywhere: see make_current)."""
        sid = str(meta["id"])
        self._new[sid] = dict(meta)
        if meta["locator"] in self.locators:
            self._index().setdefault(str(meta["locator"]), []).append(sid)

    def make_current(self, sid: str, locator: str) -> list[str]:
        """Make `sid` the current version at `locator`; the versions it replaced."""
        meta = self._meta(sid) if locator in self.locators else None
        if meta is None or meta.get("locator") != locator:
            return []
        older = [
            m
            for m in (self._meta(o) for o in self._index().get(locator, []) if o != sid)
            if m is not None and m.get("locator") == locator and not m.get("superseded_by")
        ]
        if not older and not meta.get("superseded_by"):
            return []
        changes: dict[str, Any] = {"superseded_by": None}
        if older:
            changes["supersedes"] = max(older, key=lambda m: (str(m.get("created_at")), m["id"]))[
                "id"
            ]
        self._change(sid, changes)
        for m in older:
            self._change(str(m["id"]), {"superseded_by": sid})
        return sorted(str(m["id"]) for m in older)

    def files(self) -> dict[str, bytes]:
        """Every meta.yaml this commit writes: the new sources' and the edited ones."""
        out = {source.path_for(s): source.dump(m).encode() for s, m in self._new.items()}
        out.update({source.path_for(s): self._committed[s][0].encode() for s in self._edited})
        return out

    def _index(self) -> dict[str, list[str]]:
        if self._by_locator is None:
            self._by_locator = {}
            for sid, locator in _locators(self.kb, self.locators):
                self._by_locator.setdefault(locator, []).append(sid)
        return self._by_locator

    def _meta(self, sid: str) -> Obj | None:
        if sid in self._new:
            return self._new[sid]
        if sid not in self._committed:
            rel = self.kb.rel(source.path_for(sid))
            found = self.kb.repo.store.read(f"{self.head}:{rel}") if self.head else None
            if found is None or found[0] != "blob":
                return None
            text = found[1].decode("utf-8", "replace")
            self._committed[sid] = (text, source.load(text, where=rel))
        return self._committed[sid][1]

    def _change(self, sid: str, changes: dict[str, Any]) -> None:
        if sid in self._new:
            merged = {**self._new[sid], **changes}
            self._new[sid] = {k: v for k, v in merged.items() if v is not None}
            return
        text, _ = self._committed[sid]
        where = self.kb.rel(source.path_for(sid))
        text = source.KIND.edit(text, changes, where=where)
        self._committed[sid] = (text, source.load(text, where=where))
        self._edited.add(sid)


def _meta_files(kb: KB) -> Iterator[tuple[str, bytes]]:
    """(id, meta.yaml bytes) of every source in the work tree, unparsed."""
    try:
        shards = [
            e.path
            for e in os.scandir(kb.dir / source.KIND.directory)
            if len(e.name) == 2 and e.is_dir()
        ]
    except FileNotFoundError:
        return
    for shard in shards:
        with os.scandir(shard) as entries:
            names = [e.name for e in entries if len(e.name) == 64]
        for name in names:
            try:
                with open(os.path.join(shard, name, "meta.yaml"), "rb") as fh:
                    yield name, fh.read()
            except OSError:
                continue


def _locators(kb: KB, wanted: set[str]) -> Iterator[tuple[str, str]]:
    """(id, locator) of the sources in the work tree at the `wanted` locators. Each
    meta.yaml's `locator:` line is read without a YAML parse when it holds a plain value
    (what vouch writes); anything else is parsed."""
    if not wanted:
        return
    for sid, data in _meta_files(kb):
        locator = locator_in(data)
        if locator is not None and locator in wanted:
            yield sid, locator


def locator_in(data: bytes) -> str | None:
    """The `locator:` of a meta.yaml's bytes (None when it has none or cannot be read).
    A second mention of the word is parsed: YAML keeps the last of two keys, so a first
    plain line may be a decoy that every other reader ignores."""
    m = _LOCATOR_LINE.search(data) if data.count(b"locator") == 1 else None
    raw = m.group(1).decode("utf-8", "replace") if m else ""
    if (
        raw
        and raw[0] not in _NOT_PLAIN
        and raw == raw.strip()
        and " #" not in raw
        and ": " not in raw
    ):
        return raw
    try:
        value = fastyaml.load(data.decode("utf-8"), where="source metadata").get("locator")
    except (CorruptFile, UnicodeDecodeError):
        return None
    return value if isinstance(value, str) else None


def locators(kb: KB) -> Iterator[tuple[str, str]]:
    """(id, locator) of every source in the work tree (read as `_locators` reads them)."""
    for sid, data in _meta_files(kb):
        locator = locator_in(data)
        if locator is not None:
            yield sid, locator


def versions_at(kb: KB, locator: str) -> list[Obj]:
    metas = (kb.read(source.KIND, sid) for sid, _ in _locators(kb, {locator}))
    return [m for m in metas if m is not None and m.get("locator") == locator]


def superseded_sources(kb: KB) -> dict[str, str]:
    """Each superseded source version → the current version of its locator (following
    `superseded_by` to its end). Only metadata that names `superseded_by` is parsed."""
    chain: dict[str, str] = {}
    for sid, data in _meta_files(kb):
        if b"superseded_by:" in data:
            meta = kb.read(source.KIND, sid)
            if meta and meta.get("superseded_by"):
                chain[sid] = str(meta["superseded_by"])
    out: dict[str, str] = {}
    for sid in chain:
        current, seen = sid, {sid}
        while current in chain and chain[current] not in seen:
            current = chain[current]
            seen.add(current)
        out[sid] = current
    return out


# -- claims that cite a superseded version ------------------------------------------------
def superseded_citations(kb: KB, claims: Iterable[Obj] | None = None) -> list[dict[str, Any]]:
    """Live claims whose evidence cites a superseded source version, directly or through
    an evidence span: `{claim_id, source_id, current_id, evidence_id}` (evidence_id None
    for a direct citation), by claim id. They need review against the current version
    (`kb.lint` lists them). Free when no source was ever superseded; otherwise only
    claim files that name a superseded id are parsed — or pass `claims` already read."""
    superseded = superseded_sources(kb)
    if not superseded:
        return []
    spans: dict[str, str] = {}  # evidence id -> the superseded source it points into
    for ev in kb.iter_objects(evidence_kind.KIND):
        if ev.get("source_id") in superseded:
            spans[str(ev["id"])] = str(ev["source_id"])
    out: list[dict[str, Any]] = []
    for obj in _claims_naming(kb, [*superseded, *spans]) if claims is None else claims:
        if obj.get("status") in claim_kind.HIDDEN_STATUSES:  # retired claims
            continue
        for item in obj.get("evidence") or []:
            sid = item if item in superseded else spans.get(item)
            if sid is not None:
                out.append(
                    {
                        "claim_id": obj["id"],
                        "source_id": sid,
                        "current_id": superseded[sid],
                        "evidence_id": None if item == sid else item,
                    }
                )
    return sorted(
        out, key=lambda r: (str(r["claim_id"]), r["source_id"], str(r["evidence_id"] or ""))
    )


def _claims_naming(kb: KB, wanted: list[str]) -> Iterator[Obj]:
    """The claims in the work tree whose `evidence` may name one of `wanted`, found by
    a byte-level look at each file (never missing one; a false hit is only parsed for
    nothing); only those files are parsed (unreadable ones are left to lint)."""
    kind = claim_kind.KIND
    as_bytes = [w.encode() for w in wanted]
    tokens = set(as_bytes)
    base = kb.dir / kind.directory
    try:
        shards = sorted(e.path for e in os.scandir(base) if e.is_dir() and len(e.name) == 2)
    except FileNotFoundError:
        return
    for shard in shards:
        for name in sorted(os.listdir(shard)):
            if not name.endswith(kind.ext) or name.startswith("."):
                continue
            try:
                with open(os.path.join(shard, name), "rb") as fh:
                    data = fh.read()
                if not _may_name(data, tokens, as_bytes):
                    continue
                obj = kind.load(data.decode("utf-8"), where=f"{kind.directory}/{name}")
            except (OSError, UnicodeDecodeError, CorruptFile):
                continue
            if obj["id"] == name[: -len(kind.ext)]:
                yield obj


def _may_name(data: bytes, tokens: set[bytes], wanted: list[bytes]) -> bool:
    """Does a claim file's evidence list (vouch writes it as `  - <id>` lines, followed
    by `entities:`) hold one of `tokens`? Whitespace-split words of that key are compared
    as a set; flow lists and quoted items fall back to a substring search."""
    start = data.find(b"\nevidence:")
    if start < 0:
        part = data
    else:
        end = data.find(b"\nentities:", start)
        part = data[start:end] if end > 0 else data[start:]
    if b"[" in part or b"'" in part or b'"' in part:
        return any(w in part for w in wanted)
    return not tokens.isdisjoint(part.split())
