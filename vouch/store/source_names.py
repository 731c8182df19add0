"""What a person or an agent types for a source: its id, a unique prefix of it, or its
path — `docs/guide.rst:L5-L9`, a place in a file as grep, rg and editors print one.

`resolve` turns each into what every method takes (`<source-id>` or `<source-id>:L5-L9`):

- a full id (or `<id>:L10-L20`) is kept; a unique prefix is resolved by `prefixes`,
  unless a file is registered at that path too (a file named `090ff1a8aa86`): then it
  is refused as ambiguous (InvalidId) naming both, and `./090ff1a8aa86` names the file;
  a prefix no source id starts with is read as a path;
- a path names the *current version* registered at that path: `PATH`, `PATH:L5`,
  `PATH:L5-L9` (rg's `PATH:5` and `PATH:5-9` too), `PATH:T12` (a transcript's turns)
  or `PATH:#anchor`. It is read as `vouch source add` reads a path — from the current
  directory, else from the work tree's root; `..` and links resolved — and looked up
  among the sources' locators. A path registered nowhere is refused (NotFound) naming
  the sources of the same file name; one that names two sources (`index.rst` typed in
  `docs/` with both `docs/index.rst` and `index.rst` registered, or a locator holding
  two current versions) is refused (InvalidId) naming both;
- a path never names text a caller supplied: `kb.register_source` records such text at
  `inline:<path>` (`supplied`), which is named by that whole locator
  (`inline:notes/plan.md:L3`), so nobody passes their text off as a file of the work
  tree by giving it the file's name;
- lines and turns are counted in the registered version. When the work tree's file no
  longer holds those bytes, a span typed from it (what an editor shows) may point at
  other text, so it is refused (Conflict) with the two ways that work: register the
  file again, or cite the registered version by its id.

Values that are ids of other objects are kept for the method to judge; so is a word that
names no registered source and no file (`bogus`), so that a method's own error says
what is wrong with it.

`source.shown` goes the other way: the path form of a citation, printed beside its id.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from pathlib import Path

from vouch.core import ids
from vouch.errors import Conflict, InvalidId, NotFound, SourceTooLarge, VouchError
from vouch.kinds import Obj, source
from vouch.store import prefixes, sources, supplied
from vouch.store.kb import KB
from vouch.store.versions import locators

# a span after the path: L5, L5-L9, T12, T12-T14, #anchor, or rg's bare 5 and 5-9
_SPAN = re.compile(r":(L\d+(?:-L\d+)?|T\d+(?:-T\d+)?|#[\w.-]+|\d+(?:-\d+)?)\Z")
_BARE = re.compile(r"(\d+)(?:-(\d+))?\Z")
_COUNTED = re.compile(r"[LT]\d")  # spans that count lines or turns of the bytes
_SHOWN = 5  # candidates named in an error


def split(value: str) -> tuple[str, str]:
    """(path, locator or ""): `docs/a.rst:5-9` → ("docs/a.rst", "L5-L9"). A bare line
    number after a URL (`https://host:8080`) is its port, never a span."""
    m = _SPAN.search(value)
    if m is None or m.start() == 0:
        return value, ""
    head, span = value[: m.start()], m.group(1)
    bare = _BARE.fullmatch(span)
    if bare:
        if not supplied.is_path(head):
            return value, ""
        span = f"L{bare.group(1)}" + (f"-L{bare.group(2)}" if bare.group(2) else "")
    return head, span


def wants_resolving(value: object) -> bool:
    """Is `value` a short source id or a path rather than an id (no file is read)?"""
    if not isinstance(value, str) or not value.strip():
        return False
    return prefixes.wants_resolving(value) or _not_an_id(value)


def _not_an_id(value: str) -> bool:
    head = value.partition(":")[0]
    return not (
        ids.is_source_id(head)
        or ids.is_object_id(value)
        or ids.is_proposal_id(value)
        or "\0" in value
    )


def resolve(kb: KB, value: str, known: list[tuple[str, str]] | None = None) -> str:
    """The source id (with its `:locator`) `value` names; ids and other words unchanged.

    NotFound for a path no current source is registered at (naming those of the same
    file name), InvalidId for one naming two sources, Conflict for a line or turn span
    of a file changed since it was registered. `known`: the sources' (id, locator)
    pairs already read (`resolver`), else they are read here.
    """
    if prefixes.wants_resolving(value):
        by_id = _by_prefix(kb, value, known)
        if by_id is not None:
            return by_id
    elif not _not_an_id(value):
        return value
    path, span = split(value)
    wanted = _locators_of(kb, path)
    found, similar = _lookup(kb, known if known is not None else locators(kb), wanted, path)
    if not found:
        if not _looks_like_a_path(kb, path, span, wanted):
            return value
        raise _unknown(kb, path, similar)
    if len(found) > 1:
        listed = ", ".join(f"{m['locator']} ({str(m['id'])[:12]})" for m in found[:_SHOWN])
        raise InvalidId(
            f"{path} names more than one source: {listed}",
            hint="give the path from the work tree's root, or the source id",
        )
    meta = found[0]
    sid = str(meta["id"])
    if span and _COUNTED.match(span):
        _check_unchanged(kb, meta, span)
    return f"{sid}:{span}" if span else sid


def resolver(kb: KB) -> Callable[[str], str]:
    """`resolve` for the values of one call: the sources' locators are read once, by the
    first path among them (an evidence list may name several)."""
    known: list[tuple[str, str]] = []
    read = [False]

    def one(value: str) -> str:
        if not read[0] and _not_an_id(value) and not prefixes.wants_resolving(value):
            known.extend(locators(kb))
            read[0] = True
        return resolve(kb, value, known if read[0] else None)

    return one


def _by_prefix(kb: KB, value: str, known: list[tuple[str, str]] | None) -> str | None:
    """The source id a short id names; None when it is rather the path of a registered
    file (no source id starts with it). InvalidId when it names both, or several ids."""
    try:
        by_id: str | None = prefixes.resolve(kb, value)
    except NotFound:
        by_id = None
    path, span = split(value)
    registered: list[Obj] = []
    if any(os.path.lexists(p) for p in (Path.cwd() / path, kb.root / path)):  # cheap first
        wanted = _locators_of(kb, path)
        pairs = known if known is not None else locators(kb)
        registered = _lookup(kb, pairs, wanted, path)[0]
    if by_id is None:
        if registered:
            return None
        return prefixes.resolve(kb, value)  # NotFound, as before
    sid = by_id.partition(":")[0]
    if not registered or any(m["id"] == sid for m in registered):
        return by_id
    file = ", ".join(f"{m['locator']} (source {str(m['id'])[:12]})" for m in registered)
    at = f":{span}" if span else ""
    raise InvalidId(
        f"{value} names both the file {file} and the source whose id starts with "
        f"{path.lower()} ({sid[:12]})",
        hint=f"for the file write ./{path}{at}; for the other source give its whole id ({sid}{at})",
    )


# -- looking a path up --------------------------------------------------------------------
def _locators_of(kb: KB, path: str) -> list[str]:
    """The locators `path` may name: itself when it has a scheme (`inline:`, `https:`);
    else as `source add` records a path, read from the current directory and from the
    work tree's root."""
    if not supplied.is_path(path):
        return [path]
    text = re.sub(r"^file:(//)?", "", path, flags=re.IGNORECASE)
    if not text or "\0" in text:
        return []
    raw = Path(text).expanduser()
    bases = [raw] if raw.is_absolute() else [Path.cwd() / raw, kb.root / raw]
    out: list[str] = []
    for candidate in bases:
        locator = _locator_for(kb, candidate)
        if locator is not None and locator not in out:
            out.append(locator)
    return out


def _locator_for(kb: KB, path: Path) -> str | None:
    """The locator `vouch source add` records for `path`: repo-relative, else absolute."""
    try:
        resolved = path.resolve()
    except (OSError, RuntimeError, ValueError):
        return None
    try:
        return sources.readable(resolved.relative_to(kb.root).as_posix())
    except ValueError:
        return sources.readable(str(resolved))


def _lookup(
    kb: KB, known: Iterable[tuple[str, str]], wanted: list[str], path: str
) -> tuple[list[Obj], list[Obj]]:
    """(current sources at the `wanted` locators, current sources whose locator has the
    same file name) in one pass over the sources' (id, locator) pairs."""
    name = path.rstrip("/").rsplit("/", 1)[-1]
    exact: list[tuple[str, str]] = []
    similar: list[tuple[str, str]] = []
    for sid, locator in known:
        if locator in wanted:
            exact.append((sid, locator))
        elif name and locator.rsplit("/", 1)[-1] == name:
            similar.append((sid, locator))
    return _current(kb, exact), _current(kb, similar)


def _current(kb: KB, pairs: list[tuple[str, str]]) -> list[Obj]:
    out = []
    for sid, locator in sorted(pairs, key=lambda p: (p[1], p[0])):
        meta = kb.read(source.KIND, sid)
        if meta is not None and meta.get("locator") == locator and not meta.get("superseded_by"):
            out.append(meta)
    return out


def _looks_like_a_path(kb: KB, path: str, span: str, wanted: list[str]) -> bool:
    """A value meant as a path of the work tree (refused when unknown) rather than a bad
    id (left to the method, as is `../../etc/passwd`: outside, nothing is registered by
    a path): it has a span, a folder, a dot or a scheme, or a file is there."""
    if not supplied.is_path(path):
        return True
    if not any(w and not os.path.isabs(w) for w in wanted):
        return False
    if span or "/" in path or "." in path:
        return True
    return any(os.path.exists(p) for p in (Path.cwd() / path, kb.root / path))


def _unknown(kb: KB, path: str, similar: list[Obj]) -> NotFound:
    named = [str(m["locator"]) for m in similar[:_SHOWN]]
    more = f" (and {len(similar) - _SHOWN} more)" if len(similar) > _SHOWN else ""
    message = f"no source is registered at {path}"
    if named:
        message += "; sources with that file name: " + ", ".join(named) + more
    on_disk = supplied.is_path(path) and any(
        os.path.isfile(p) for p in (Path.cwd() / path, kb.root / path)
    )
    hint = (
        f"register it first (vouch source add {path}; kb.register_source_from_path), then cite it"
        if on_disk
        else "`vouch list sources` shows each source's path"
    )
    return NotFound(message, hint=hint)


def _check_unchanged(kb: KB, meta: Obj, span: str) -> None:
    """Conflict when the work tree's file at this source's path holds other bytes than
    the registered version: the span was likely read there, and would point elsewhere."""
    locator = str(meta["locator"])
    named = supplied.named_path(kb, locator) if supplied.is_path(locator) else None
    if named is None:
        return  # no file of the work tree (a URL, inline text, outside the repository)
    path, rel = named
    if not os.path.isfile(path):
        return  # deleted: the registered version is all there is
    if _same_bytes(kb, path, meta):
        return
    sid = str(meta["id"])[:12]
    raise Conflict(
        f"{rel} has changed since it was registered: {span} would count the lines of the "
        f"registered version {sid}, not of the file as it is now",
        hint=f"register it again (vouch source add {rel}; kb.register_source_from_path) "
        f"and cite the new lines, or cite the registered version by its id: {sid}:{span}",
    )


def _same_bytes(kb: KB, path: Path, meta: Obj) -> bool:
    try:
        if os.stat(path).st_size != meta.get("byte_size"):
            return False
        content = sources.intake_for_path(kb, path, confined=True).content
    except SourceTooLarge:
        return False
    except (VouchError, OSError):
        return True  # unreadable: nothing to compare, the registered version stands
    return ids.sha256_hex(content) == meta.get("id")
