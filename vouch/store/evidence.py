"""Evidence: span pointers into a registered source, checked against its bytes.

An evidence object says "this source, lines 10-20 (or #section), quoting this". Making
one checks that the source exists, that a line span lies inside its content, and — when
a quote is given — that the quote really appears there (whitespace-insensitive), so a
claim's citation can be trusted to point at something. The span's sha256 is stored so a
later change to the source is detectable.

Evidence is not gated (like sources it only points at captured bytes): `kb.register_evidence`
is a direct audited commit, and a claim proposal may also create evidence inline from a
`<source-sha256>:<locator>` pointer in its evidence list.
"""

from __future__ import annotations

import re
from typing import Any

from vouch.core import ids
from vouch.errors import ValidationFailed
from vouch.kinds import evidence as evidence_kind
from vouch.kinds.base import Obj, collapse
from vouch.store import writer
from vouch.store.kb import KB
from vouch.store.recovery import gate_lock

POINTER = re.compile(r"^([0-9a-f]{64}):(\S.*)\Z")


def parse_pointer(item: str) -> tuple[str, str] | None:
    """`<source-sha256>:L10-L20` → (source id, locator); None for a plain id."""
    m = POINTER.match(item)
    return (m.group(1), m.group(2)) if m else None


def make(
    source_id: str, locator: str, quote: str | None, content: bytes | None
) -> tuple[Obj | None, list[str]]:
    """A new evidence object, or every reason it cannot be made."""
    errors = list(evidence_kind.locator_errors(locator))
    if not ids.is_source_id(source_id):
        errors.append(f"evidence source {source_id!r} is not a source id (sha256)")
    elif content is None:
        errors.append(
            f"source {source_id[:12]}… is not registered (or a decision redacted its bytes)"
        )
    span: str | None = None
    if content is not None and not errors:
        text = content.decode("utf-8", "replace")
        if evidence_kind.LINE_SPAN.match(locator):
            span = evidence_kind.span_text(text, locator)
            if span is None:
                lines = text.count("\n") + (0 if text.endswith("\n") else 1)
                errors.append(
                    f"locator {locator} lies outside source {source_id[:12]}… ({lines} lines)"
                )
        elif evidence_kind.TURN_SPAN.match(locator):
            span, problem = _turn_span(content, locator)
            if problem:
                errors.append(f"{problem} (source {source_id[:12]}…)")
        if quote and not errors:
            where = span if span is not None else text
            if collapse(quote) not in collapse(where):
                errors.append(
                    f"quote {quote[:60]!r} does not appear at {locator} of source {source_id[:12]}…"
                )
    if errors:
        return None, errors
    values: dict[str, Any] = {"source_id": source_id, "locator": locator, "quote": quote or None}
    if span is not None:
        values["hash"] = "sha256:" + ids.sha256_hex(span.encode())
    try:
        return evidence_kind.new(**values), []
    except ValidationFailed as exc:
        return None, exc.errors


def _turn_span(content: bytes, locator: str) -> tuple[str | None, str | None]:
    """The turns a `T12-T14` locator points at, as `Speaker: text` lines, or why not."""
    from vouch.core.transcripts import TranscriptError
    from vouch.store.turns import parse_content

    m = evidence_kind.TURN_SPAN.match(locator)
    assert m is not None
    start, end = int(m.group(1)), int(m.group(2) or m.group(1))
    try:
        found = parse_content(content)
    except TranscriptError as exc:
        return None, f"locator {locator} names turns, but the source is not a transcript ({exc})"
    if end > len(found.turns):
        return None, f"locator {locator} lies outside the transcript ({len(found.turns)} turns)"
    return "\n".join(t.said for t in found.span(start, end)), None


def register_evidence(
    kb: KB, actor: str, source_id: str, locator: str, quote: str | None = None
) -> dict[str, Any]:
    """Store an evidence pointer (a direct audited commit); idempotent by content."""
    obj, errors = make(
        source_id,
        locator,
        quote,
        kb.source_content(source_id) if ids.is_source_id(source_id) else None,
    )
    if obj is None:
        raise ValidationFailed(errors, what="evidence")
    rel = evidence_kind.path_for(obj["id"])
    with gate_lock(kb):  # a killed landing finished before HEAD is read (`sources`)
        if kb.repo.tree_entry("HEAD", kb.rel(rel)):  # None too before the first commit
            return {"id": obj["id"], "deduplicated": True}
        writer.commit_direct(
            kb,
            {rel: evidence_kind.dump(obj).encode()},
            subject=f"vouch: register evidence {obj['id']}",
            event="evidence.register",
            actor=actor,
            object_ids=[obj["id"]],
            data={"source_id": source_id, "locator": locator},
        )
    return {"id": obj["id"], "deduplicated": False}
