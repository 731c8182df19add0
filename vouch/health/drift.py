"""Approved claims whose cited lines no longer read as they did (issue 38 item 0).

A claim cites a span of a source version (`L3-L5` of the bytes registered for
`docs/deploy.md`). When the file is edited and committed without registering a new
version, the version stays current, `source verify` finds its bytes in the file's
history, and the claim goes on being served as approved — though the lines it rests on
may now say something else. So for every current version whose file in the work tree
holds other bytes, each span a live claim cites is looked up in the file as it is now:

- `moved`: the same lines, word for word, elsewhere in the file (the nearest place to
  where they were): the citation should follow them;
- `changed`: the lines are gone or different: named with what the file now holds there;
- `deleted`: the file is gone from the work tree.

A span still at its place is not drift, whatever else changed in the file. A claim
citing a whole source (its id, no span) drifts with any change to the file. Sources
without a file in this work tree (URLs, pasted text) and transcripts' turn spans are not
checked. Read-only: what to do about it is a person's decision (`vouch source add PATH`
registers the new version; the claim is then re-cited, revised or retired through a
proposal).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from typing import Any, NamedTuple

from vouch.core import ids
from vouch.errors import VouchError
from vouch.health.file_versions import (
    FileVersion,
    current_file_versions,
    work_tree_digest,
    work_tree_file,
)
from vouch.health.issues import Issue, warn
from vouch.kinds import claim as claim_kind
from vouch.kinds import evidence as evidence_kind
from vouch.kinds import source as source_kind
from vouch.store.kb import KB
from vouch.store.sources import max_bytes

SHOWN = 120  # characters of what the file now holds, in a message
BATCH = 2000  # paths asked of git's history at once
TOO_LARGE: list[str] = []  # the lines of a file too large to read (compared by identity)
# (work tree, HEAD) -> path -> whether HEAD's history held it: asked once per HEAD (a
# search marks its hits on every call; history does not change under a commit)
_COMMITTED: dict[tuple[str, str], dict[str, bool]] = {}
# (work tree, path, mtime, size, inode, mode) -> the file's sha256 (`_digest`)
_DIGESTS: dict[tuple[Any, ...], str | None] = {}
# (knowledge base, source id, meta.yaml's mtime, size, inode) -> its current file version
_VERSIONS: dict[tuple[Any, ...], FileVersion | None] = {}


class Drift(NamedTuple):
    claim_id: str
    source_id: str
    evidence_id: str | None  # None: the claim cites the whole source
    path: str  # the file, repository-relative
    locator: str  # the cited span (`L3-L5`), "" for the whole source
    state: str  # moved | changed | deleted
    now: str | None  # moved: the span where the lines are now; changed: what is there


def drifted(
    kb: KB, claims: Iterable[dict[str, Any]] | None = None, paths: Iterable[str] | None = None
) -> list[Drift]:
    """Every citation of a live claim (of `claims`, else the work tree's) whose source's
    file (among `paths`, else any) no longer holds the cited lines as registered, by
    claim, source and span."""
    only = None if paths is None else set(paths)
    current = [
        v
        for v in current_file_versions(kb, kb.ids(source_kind.KIND), with_links=True)
        if only is None or v.path in only
    ]
    versions = _changed_versions(kb, current)
    versions.update(_superseded(kb, {v.id: v for v in current}))
    if not versions:
        return []
    spans: dict[str, tuple[str, str]] = {}  # evidence id -> (source id, locator)
    for ev in kb.iter_objects(evidence_kind.KIND):
        sid, locator = str(ev.get("source_id") or ""), str(ev.get("locator") or "")
        if sid in versions and evidence_kind.LINE_SPAN.match(locator):
            spans[str(ev["id"])] = (sid, locator)
    return _citations(
        kb, kb.iter_objects(claim_kind.KIND) if claims is None else claims, versions, spans
    )


def of_claims(kb: KB, claims: Iterable[dict[str, Any]]) -> list[Drift]:
    """`drifted` for these claims only, reading only what they cite (a search marks its
    claim hits: `vouch.search.citing`)."""
    claims = [c for c in claims if c.get("status") not in claim_kind.HIDDEN_STATUSES]
    cited = {str(i) for c in claims for i in c.get("evidence") or []}
    spans: dict[str, tuple[str, str]] = {}
    for item in sorted(cited):
        if ids.is_source_id(item):
            continue
        try:
            ev = kb.read(evidence_kind.KIND, item)
        except (VouchError, ValueError):
            ev = None  # not evidence (or unreadable): lint's to report
        if ev is not None and evidence_kind.LINE_SPAN.match(str(ev.get("locator") or "")):
            spans[item] = (str(ev.get("source_id") or ""), str(ev["locator"]))
    sources = {i for i in cited if ids.is_source_id(i)} | {sid for sid, _ in spans.values()}
    versions = _changed_versions(kb, _current(kb, sorted(sources)))
    return _citations(kb, claims, versions, spans) if versions else []


def _current(kb: KB, source_ids: list[str]) -> list[FileVersion]:
    """`current_file_versions` of these sources, remembered by their meta.yaml's stat
    (a search asks for the same few on every call; a changed file is read again)."""
    out: list[FileVersion] = []
    missed: dict[str, tuple[Any, ...]] = {}
    for sid in source_ids:
        try:
            st = os.stat(kb.dir / source_kind.path_for(sid))
        except (OSError, ValueError):
            continue  # reported by `source verify`
        key = (str(kb.dir), sid, st.st_mtime_ns, st.st_size, st.st_ino)
        if key in _VERSIONS:
            found = _VERSIONS[key]
            if found is not None:
                out.append(found)
        else:
            missed[sid] = key
    if missed:
        if len(_VERSIONS) > 50_000:
            _VERSIONS.clear()
        read = {v.id: v for v in current_file_versions(kb, sorted(missed), with_links=True)}
        for sid, key in missed.items():
            _VERSIONS[key] = read.get(sid)
            if sid in read:
                out.append(read[sid])
    return out


def _superseded(kb: KB, current: dict[str, FileVersion]) -> dict[str, FileVersion]:
    """Each superseded version of a file among `current`, at that file's path: a claim
    citing it is compared with the file as it is now, so registering the new version
    (`vouch source add`) does not silence what changed under the claim."""
    from vouch.store.versions import superseded_sources

    found: dict[str, FileVersion] = {}
    for old, now in superseded_sources(kb).items():
        at = current.get(now)
        if at is not None:
            found[old] = FileVersion(old, at.locator, at.path)
    return found


def _digest(kb: KB, rel: str) -> str | None:
    """`work_tree_digest`, remembered by the file's stat (as git's index does): a search
    marking its hits on every call hashes a cited file once, not once per query."""
    try:
        st = os.stat(kb.root / rel)
    except (OSError, ValueError):
        return None
    key = (str(kb.root), rel, st.st_mtime_ns, st.st_size, st.st_ino, st.st_mode)
    if key not in _DIGESTS:
        if len(_DIGESTS) > 50_000:
            _DIGESTS.clear()
        _DIGESTS[key] = work_tree_digest(kb, rel)
    return _DIGESTS[key]


def _changed_versions(kb: KB, candidates: Iterable[FileVersion]) -> dict[str, FileVersion]:
    """Of these current file versions, those whose file the work tree holds with other
    bytes, or no longer holds though the history did."""
    versions: dict[str, FileVersion] = {}
    gone: list[FileVersion] = []
    for v in candidates:
        if os.path.islink(kb.root / v.path):  # a link out of the repository, or nowhere
            gone.append(v)
            continue
        digest = _digest(kb, v.path)
        if digest is None:
            gone.append(v)
        elif digest != v.id:
            versions[v.id] = v
    versions.update((v.id, v) for v in _once_committed(kb, gone))
    return versions


def _citations(
    kb: KB,
    claims: Iterable[dict[str, Any]],
    versions: dict[str, FileVersion],
    spans: dict[str, tuple[str, str]],
) -> list[Drift]:
    texts: dict[str, tuple[list[str] | None, list[str] | None]] = {}
    out: list[Drift] = []
    for obj in claims:
        if obj.get("status") in claim_kind.HIDDEN_STATUSES:
            continue
        for item in obj.get("evidence") or []:
            sid, locator = (item, "") if item in versions else spans.get(item, ("", ""))
            if sid not in versions:
                continue
            if sid not in texts:
                texts[sid] = (_lines(kb.source_content(sid)), _work_tree_lines(kb, versions[sid]))
            was, now = texts[sid]
            found = _compare(was, now, locator)
            if found is not None:
                state, where = found
                evidence = None if item == sid else str(item)
                path = versions[sid].path
                out.append(Drift(str(obj["id"]), sid, evidence, path, locator, state, where))
    return sorted(out, key=lambda d: (d.claim_id, d.source_id, d.locator))


def touched(kb: KB, base: str, head: str) -> list[Drift]:
    """`drifted` for the files the commits from `base` to `head` changed: the approved
    claims a pull request's changes touch (`lint --since`)."""
    from vouch.git.history import tree_diff

    changed = {c.path for c in tree_diff(kb.repo, base, head, [])}
    return drifted(kb, paths=changed) if changed else []


def _once_committed(kb: KB, gone: list[FileVersion]) -> Iterator[FileVersion]:
    """Of the versions whose file is not in the work tree, those at a path HEAD's
    history held: a deleted file. (Text registered at a path that never held a file —
    an agent's note about a file elsewhere — has nothing to drift from.)"""
    from vouch.git.history import path_blobs

    head = kb.repo.peek("HEAD") if gone else None
    if head is None:
        return
    known = _COMMITTED.setdefault((str(kb.root), head), {})
    asked = sorted({v.path for v in gone if v.path not in known})
    for start in range(0, len(asked), BATCH):
        part = asked[start : start + BATCH]
        held = path_blobs(kb.repo, head, part)
        known.update((path, bool(held.get(path))) for path in part)
    if len(_COMMITTED) > 8:  # a long-lived process: only recent HEADs
        for stale in list(_COMMITTED)[:-8]:
            del _COMMITTED[stale]
    yield from (v for v in gone if known.get(v.path) or os.path.islink(kb.root / v.path))


def issues(kb: KB, found: Iterable[Drift]) -> Iterator[Issue]:
    """Lint and doctor findings (`drifted-citation`, a warning) for `drifted`."""
    for d in found:
        cited = f"lines {d.locator[1:].replace('-L', '-')}" if d.locator else "the whole file"
        if d.state == "deleted":
            what = f"{d.path} is gone from the work tree"
        elif d.state == "moved":
            what = f"the cited lines of {d.path} moved to {d.now}"
        elif d.locator and d.now is not None:
            what = f"{d.path} now reads there: {_shown(d.now)}"
        else:
            what = f"{d.path} changed since it was registered"
        yield warn(
            "drifted-citation",
            f"cites {cited} of {d.path} (source {d.source_id[:12]}…); {what}. "
            f"Register the file again (`vouch source add {d.path}`) and re-cite, revise or "
            "retire the claim",
            id=d.claim_id,
            path=kb.rel(claim_kind.KIND.path_for(d.claim_id)),
        )


def _compare(
    was: list[str] | None, now: list[str] | None, locator: str
) -> tuple[str, str | None] | None:
    """(state, where) of one citation, None when it still holds."""
    if now is None:
        return "deleted", None
    if was is None:
        return None  # the registered bytes are unreadable: `source verify` says so
    if now is TOO_LARGE:  # larger than any source may be: not read, so not compared
        return "changed", None
    if not locator:  # the whole file: its bytes differ (why it was looked at)
        return None if now == was else ("changed", None)  # (line endings aside)
    m = evidence_kind.LINE_SPAN.match(locator)
    assert m is not None
    start, end = int(m.group(1)), int(m.group(2) or m.group(1))
    cited = was[start - 1 : end]
    if not cited or now[start - 1 : end] == cited:
        return None  # out of the registered text (lint's own finding), or unchanged
    first = cited[0]
    places = [
        n
        for n, line in enumerate(now[: len(now) - len(cited) + 1])
        if line == first and now[n : n + len(cited)] == cited
    ]
    if places:
        at = min(places, key=lambda n: (abs(n + 1 - start), n)) + 1
        span = f"L{at}" if len(cited) == 1 else f"L{at}-L{at + len(cited) - 1}"
        return "moved", span
    return "changed", "\n".join(now[start - 1 : end])


def _lines(data: bytes | None) -> list[str] | None:
    """The text's lines, a carriage return before each line break dropped: a clone that
    checks files out with CRLF (`core.autocrlf`) holds the same lines."""
    if data is None:
        return None
    return [line.removesuffix("\r") for line in data.decode("utf-8", errors="replace").split("\n")]


def _work_tree_lines(kb: KB, version: FileVersion) -> list[str] | None:
    """The file's lines as the work tree holds them now; None when it is gone (or is
    no longer a regular file); a file too large to be a source reads as empty."""
    if os.path.islink(kb.root / version.path):
        return None  # a link out of the repository, or nowhere: never followed
    found = work_tree_file(kb, version.path)
    if found is None:
        return None
    path, size = found
    if size > max_bytes(kb):
        return TOO_LARGE
    try:
        with open(path, "rb") as fh:
            return _lines(fh.read(max_bytes(kb) + 1))
    except OSError:
        return []


def _shown(text: str | None) -> str:
    from vouch.core.printable import escaped

    if not text:
        return "nothing (the file is shorter)"
    one = " ".join(text.split())
    return repr(escaped(one[:SHOWN] + ("…" if len(one) > SHOWN else "")))
