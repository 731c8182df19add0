"""What each knowledge file of a bundle must be, checked as approve checks content
(`vouch.gate.verify`): parseable, valid for its kind's schema, holding the id its path
names, that id recomputed from its content; a source's bytes hash to its id and its
meta.yaml names them; a decision record is complete; every audit event hashes to itself
and names a previous event the bundle holds.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from typing import Any

from vouch.bundle.layout import is_audit_file
from vouch.core import fastyaml, ids, parallel, yamlio
from vouch.core.progress import Progress, step
from vouch.health.files import DECISION, catalog, parse
from vouch.kinds import KINDS, Kind
from vouch.kinds import source as source_kind
from vouch.store import audit

_BOUNDARY = re.compile(r"-{3,}\s*")  # python-frontmatter's frontmatter boundary line
Obj = dict[str, Any]
_DECISION_FIELDS = ("proposal_id", "decision", "kind", "object_id", "proposer", "decided_by")


def knowledge_problems(
    files: Mapping[str, bytes],
    progress: Progress | None = None,
    *,
    least: int = parallel.LEAST,
) -> list[str]:
    """Every knowledge file checked as approve checks content (`checked`); the problems."""
    return checked(files, progress, least=least)[0]


def checked(
    files: Mapping[str, bytes],
    progress: Progress | None = None,
    *,
    least: int = parallel.LEAST,
) -> tuple[list[str], dict[str, Obj]]:
    """Every knowledge file checked as approve checks content: parseable, the kind's
    schema, the id its path names recomputed from its content; sources hash to their
    ids; decision records complete; audit events hash to themselves. The per-file
    checks of a big bundle run on every core (`parallel.map_slices`, from `least`
    files); the problems come in file order either way. Also the object each sound
    object file and decision record holds (by path), so the import's integrity check
    does not parse them again (2.4 s of 23,500 files)."""
    global _FILES
    names = list(files)
    step(progress, "checking")
    _FILES = files
    try:
        per_file = parallel.map_slices(_problems_of, names, least=least)
    finally:
        _FILES = None
    problems: list[str] = []
    parsed: dict[str, Obj] = {}
    events: dict[str, str] = {}  # audit event hash -> prev_hash
    for rel, (found, obj) in zip(names, per_file, strict=True):
        if is_audit_file(rel):  # the chain needs every event: checked here, in order
            problems += _audit_problems(rel, files[rel], events)
        else:
            problems += found
            if obj is not None and not found:
                parsed[rel] = obj
    problems += [
        f"audit log: event {h[:12]}… names a previous event {p[:12]}… that is not in the bundle"
        for h, p in events.items()
        if p and p not in events
    ]
    return problems, parsed


_FILES: Mapping[str, bytes] | None = None  # the files `_problems_of` reads (see above)


def _problems_of(names: Sequence[str]) -> list[tuple[list[str], Obj | None]]:
    """Each file's own problems (audit files: none here), in the order given, with the
    object a record or object file holds."""
    files = _FILES
    assert files is not None
    out: list[tuple[list[str], Obj | None]] = []
    for rel in names:
        if is_audit_file(rel):
            out.append(([], None))
            continue
        data = files[rel]
        entry = catalog(rel)
        if entry is None or entry.kind is None or entry.id is None or entry.problem:
            why = entry.problem if entry is not None and entry.problem else "unknown path"
            out.append(([f"{rel}: not a knowledge file ({why})"], None))
        elif entry.kind == "source":
            out.append((_source_problems(rel, entry.id, entry.part, data, files), None))
        elif entry.kind == DECISION:
            out.append(_decision_problems(rel, entry.id, data))
        else:
            out.append(_object_problems(rel, entry.kind, entry.id, data))
    return out


def _disguise(kind: Kind | None, data: bytes) -> str | None:
    """What makes a parsed file read as other data than its text shows (`yamlio.disguise`:
    a key given twice, an anchor, a tag, a merge key), or None. Only files outside the
    plain subset `fastyaml` reads can hold one, so most files cost nothing here."""
    text = data.decode("utf-8")  # parsed already: it is UTF-8
    if kind is not None and kind.body_field is not None:
        if fastyaml.split_page(text) is not None:
            return None
        lines = text.split("\n")
        end = next((n for n, ln in enumerate(lines[1:], 1) if _BOUNDARY.fullmatch(ln)), 0)
        text = "\n".join(lines[1:end]) + "\n"
    elif fastyaml.parse(text) is not None:
        return None
    return yamlio.disguise(text)


def _object_problems(
    rel: str, kind_name: str, object_id: str, data: bytes
) -> tuple[list[str], Obj | None]:
    kind = KINDS[kind_name]
    parsed = parse(kind, data, rel)
    if parsed.data is None:
        return [f"{rel}: {parsed.problem}"], None
    disguised = _disguise(kind, data)
    if disguised:
        return [f"{rel}: holds {disguised}, which vouch never writes: it reads as other data"], None
    errors = kind.validate(parsed.data)
    if errors:
        return [f"{rel}: not a valid {kind_name}: " + "; ".join(errors)], None
    if parsed.data["id"] != object_id:
        return [f"{rel}: holds id {parsed.data['id']!r}, its path names {object_id}"], None
    try:
        made = kind.make_id(kind.normalize(parsed.data))
    except (TypeError, ValueError) as exc:
        made = f"(none: {exc})"
    if made != object_id:
        why = f"its content hashes to {made}, not {object_id} (edited after it was made?)"
        return [f"{rel}: {why}"], None
    return [], parsed.data


def _source_problems(
    rel: str, sid: str, part: str, data: bytes, files: Mapping[str, bytes]
) -> list[str]:
    folder = rel.rsplit("/", 1)[0]
    if part == "content":  # content, content.md, ...
        out = (
            []
            if hashlib.sha256(data).hexdigest() == sid
            else [f"{rel}: the source's bytes do not hash to its id {sid[:12]}…"]
        )
        if f"{folder}/meta.yaml" not in files:
            out.append(f"{rel}: source content without its meta.yaml")
        return out
    kind = KINDS["source"]
    parsed = parse(kind, data, rel)
    if parsed.data is None:
        return [f"{rel}: {parsed.problem}"]
    disguised = _disguise(kind, data)
    if disguised:
        return [f"{rel}: holds {disguised}, which vouch never writes: it reads as other data"]
    errors = kind.validate(parsed.data)
    if errors:
        return [f"{rel}: not a valid source: " + "; ".join(errors)]
    out = []
    if parsed.data["id"] != sid or parsed.data["hash"] != f"sha256:{sid}":
        out.append(
            f"{rel}: names id {parsed.data['id']!r} and hash {parsed.data['hash']!r}; "
            f"its directory names {sid}"
        )
    held = any(f"{folder}/{name}" in files for name in source_kind.CONTENT_NAMES)
    if source_kind.is_redacted(parsed.data):  # a tombstone carries no bytes, ever
        if held:
            out.append(f"{rel}: a redacted source's tombstone with content beside it")
    elif not held:
        out.append(f"{rel}: the source's content file is missing")
    return out


def _decision_problems(rel: str, pid: str, data: bytes) -> tuple[list[str], Obj | None]:
    parsed = parse(None, data, rel)
    if parsed.data is None:
        return [f"{rel}: {parsed.problem}"], None
    disguised = _disguise(None, data)
    if disguised:
        return [f"{rel}: holds {disguised}, which vouch never writes: it reads as other data"], None
    record = parsed.data
    missing = [f for f in _DECISION_FIELDS if not isinstance(record.get(f), str)]
    if missing:
        return [f"{rel}: not a decision record: missing {', '.join(missing)}"], None
    if record["proposal_id"] != pid:
        return [f"{rel}: proposal_id {record['proposal_id']!r} is not its file name"], None
    if record["decision"] not in ("approved", "rejected"):
        return [f"{rel}: decision {record['decision']!r} is not approved or rejected"], None
    return [], record


def _audit_problems(rel: str, data: bytes, events: dict[str, str]) -> list[str]:
    out = []
    if rel != audit.LOG_NAME and not rel.endswith(f"-{ids.sha256_hex(data)[:16]}.jsonl"):
        out.append(f"{rel}: closed audit segment was modified (its name no longer matches)")
    for lineno, line in enumerate(data.split(b"\n"), 1):
        if not line.strip():
            continue
        record = audit.parse_line(line)
        if record is None or record.get("hash") != audit.event_hash(record):
            out.append(f"{rel}:{lineno}: not an audit event whose hash matches its body")
            continue
        events[str(record["hash"])] = str(record.get("prev_hash") or "")
    return out
