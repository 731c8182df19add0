"""The text a citation points at: the located lines of a source, with a little context.

A reviewer judges a claim by what its evidence says, so each citation is resolved to
its source's title and locator, its quote, and the lines themselves: a line span
(`L10-L20`) as given, a quote found in the span or the whole source (whitespace
ignored, as evidence checks it), a `#section` anchor as that heading's section, a
source cited whole by its first lines.

Nothing cited is hidden silently: a span longer than MAX_CITED lines shows its first
lines (and the lines holding its quote), and each part left out is named in `hidden`
with the command that prints it (`vouch show SOURCE --content --lines A-B`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from vouch.core import ids
from vouch.errors import Redacted, UsageError
from vouch.history.snapshot import Snapshot
from vouch.kinds import evidence as evidence_kind
from vouch.kinds import source as source_kind
from vouch.kinds.page import sections
from vouch.kinds.source import path_of

CONTEXT = 2  # lines shown before and after the cited ones
MAX_CITED = 40  # cited lines shown at most; the rest are counted
WHOLE_SOURCE = 5  # lines shown of a source cited without a locator (the rest: a marker)


def cite(
    snap: Snapshot,
    item: str,
    *,
    context: int = CONTEXT,
    made: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """One citation (an evidence or a source id) resolved to what it points at; `made`:
    evidence a pending change would create, not in the snapshot yet."""
    out: dict[str, Any] = {"id": item}
    if ids.is_source_id(item):
        out.update(kind="source", source_id=item, locator=None, quote=None)
    else:
        ev = (made or {}).get(item) or snap.object("evidence", item)
        if ev is None:
            return {**out, "kind": "evidence", "problem": "no such evidence"}
        out.update(
            kind="evidence",
            source_id=ev["source_id"],
            locator=ev.get("locator"),
            quote=ev.get("quote"),
        )
    sid = str(out["source_id"])
    meta = snap.object("source", sid)
    if meta is None:
        return {**out, "problem": "its source is not registered"}
    out.update(
        title=meta.get("title") or meta.get("locator"),
        source_locator=meta.get("locator"),
        media_type=meta.get("media_type"),
        cite_path=path_of(meta, out.get("locator")),
    )
    if meta.get("superseded_by"):
        out["source_superseded_by"] = meta["superseded_by"]
    if source_kind.is_redacted(meta):  # a tombstone: the citation resolves, to nothing
        return {**out, "redacted": True, "problem": "its source was redacted by a decision"}
    content = snap.source_content(sid)
    if content is None:
        return {**out, "problem": "its source's content is missing"}
    text = content.decode("utf-8", "replace")
    found = locate(text, out.get("locator"), out.get("quote"))
    if isinstance(found, str):
        return {**out, "problem": found}
    start, end = found
    lines = text.split("\n")
    if not out.get("locator") and not out.get("quote"):  # the whole source is cited
        end, most = len(lines) - (1 if text.endswith("\n") else 0), WHOLE_SOURCE
        return {**out, **excerpt(lines, 1, max(1, end), context, most=most, source_id=sid)}
    quoted = find_quote(lines, str(out["quote"]), found) if out.get("quote") else None
    return {**out, **excerpt(lines, start, end, context, keep=quoted, source_id=sid)}


def locate(text: str, locator: object, quote: object) -> tuple[int, int] | str:
    """The 1-based lines (start, end) a citation points at, or why they cannot be found."""
    lines = text.split("\n")
    span = (1, min(len(lines), WHOLE_SOURCE))
    loc = str(locator or "")
    m = evidence_kind.LINE_SPAN.match(loc)
    if m:
        span = (int(m.group(1)), int(m.group(2) or m.group(1)))
        if span[1] > len(lines):
            return f"{loc} lies outside the source ({len(lines)} lines)"
    elif turn := evidence_kind.TURN_SPAN.match(loc):
        turns = _turn_lines(text, int(turn.group(1)), int(turn.group(2) or turn.group(1)))
        if isinstance(turns, str):
            return turns
        span = turns
        m = turn  # a quote is looked for within the turns, as evidence checks it
    elif evidence_kind.ANCHOR.match(loc):
        anchored = _anchor(text, loc[1:])
        if anchored is None and not quote:
            return f"no section {loc} in the source"
        span = anchored or span
    if quote:
        found = find_quote(lines, str(quote), span if m else (1, len(lines)))
        if found is None:
            return f"the quote does not appear at {loc or 'the source'}"
        if not m:
            span = found
    return span


def _turn_lines(text: str, first: int, last: int) -> tuple[int, int] | str:
    """The source lines of turns `first`..`last` of a transcript (the exact exchange)."""
    from vouch.core import transcripts

    try:
        turns = transcripts.parse_content(text.encode("utf-8")).turns
    except transcripts.TranscriptError as exc:
        return f"T{first} cites a turn, but the source does not read as a transcript: {exc}"
    if not 1 <= first <= last <= len(turns):
        return f"T{first}-T{last} lies outside the transcript ({len(turns)} turns)"
    return turns[first - 1].line, turns[last - 1].end_line


def find_quote(lines: list[str], quote: str, within: tuple[int, int]) -> tuple[int, int] | None:
    """The lines holding `quote` inside `within`, whitespace ignored."""
    words = quote.split()
    if not words:
        return None
    start, end = within
    region = "\n".join(lines[start - 1 : end])
    m = re.search(r"\s+".join(re.escape(w) for w in words), region)
    if m is None:
        return None
    first = start + region.count("\n", 0, m.start())
    return first, start + region.count("\n", 0, m.end())


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces dashed."""
    kept = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return kept.replace(" ", "-")


def _anchor(text: str, anchor: str) -> tuple[int, int] | None:
    for sec in sections(text):
        if sec.heading and (_slug(sec.heading) == anchor.lower() or sec.heading == anchor):
            return sec.start_line, max(sec.start_line, sec.end_line - 1)
    return None


def excerpt(
    lines: list[str],
    start: int,
    end: int,
    context: int = CONTEXT,
    *,
    keep: tuple[int, int] | None = None,
    source_id: str | None = None,
    most: int = MAX_CITED,
) -> dict[str, Any]:
    """Lines start..end (1-based) with `context` lines around them, numbered. Of a span
    over `most` lines, the first `most` and the lines `keep` names (where its quote is)
    are shown; the rest are counted (`omitted`) and each part left out is listed in
    `hidden` with the command that prints it."""
    shown = set(range(start, min(end, start + most - 1) + 1))
    if keep is not None:
        shown.update(range(max(start, keep[0]), min(end, keep[1]) + 1))
    visible = set(shown)
    for n in shown:
        visible.update(range(max(1, n - context), min(len(lines), n + context) + 1))
    visible -= set(range(start, end + 1)) - shown
    rows = [{"n": n, "text": lines[n - 1], "cited": start <= n <= end} for n in sorted(visible)]
    out: dict[str, Any] = {"lines": {"start": start, "end": end}, "excerpt": rows}
    hidden = _runs(sorted(set(range(start, end + 1)) - shown))
    if hidden:
        out["omitted"] = sum(b - a + 1 for a, b in hidden)
        out["hidden"] = [
            {"start": a, "end": b, "show": _show_command(source_id, a, b)} for a, b in hidden
        ]
    return out


def _runs(numbers: list[int]) -> list[tuple[int, int]]:
    """[3, 4, 5, 9] → [(3, 5), (9, 9)]."""
    out: list[tuple[int, int]] = []
    for n in numbers:
        if out and out[-1][1] == n - 1:
            out[-1] = (out[-1][0], n)
        else:
            out.append((n, n))
    return out


def _show_command(source_id: str | None, start: int, end: int) -> str | None:
    if source_id is None:
        return None
    return f"vouch show {source_id[:12]} --content --lines {start}-{end}"


def parse_lines(spec: str) -> tuple[int, int]:
    """`A-B`, `A` or `LA-LB` as (start, end), 1-based and inclusive."""
    m = re.fullmatch(r"L?(\d+)(?:-L?(\d+))?", spec.strip())
    if not m:
        raise UsageError(f"--lines {spec!r} must look like 10-20 (or L10-L20)")
    start, end = int(m.group(1)), int(m.group(2) or m.group(1))
    if start < 1 or end < start:
        raise UsageError(f"--lines {spec!r}: need 1 <= start <= end")
    return start, end


def source_text(snap: Snapshot, source_id: str, lines: str | None = None) -> dict[str, Any]:
    """A source's text (`vouch show SOURCE --content [--lines A-B]`)."""
    from vouch.errors import NotFound

    meta = snap.object("source", source_id)
    if source_kind.is_redacted(meta):
        raise Redacted(
            f"source {source_id} was redacted by a decision: its bytes are gone",
            hint="`vouch show " + source_id[:12] + "` shows what is left (its tombstone)",
        )
    content = snap.source_content(source_id) if meta is not None else None
    if meta is None or content is None:
        raise NotFound(f"no source {source_id}", hint="`vouch list sources` lists them")
    text = content.decode("utf-8", "replace")
    all_lines = text.split("\n")
    if text.endswith("\n"):
        all_lines.pop()
    start, end = parse_lines(lines) if lines else (1, len(all_lines))
    if lines and end > len(all_lines):
        raise UsageError(
            f"--lines {lines}: the source has {len(all_lines)} lines",
            hint=f"ask for lines within 1-{len(all_lines)}",
        )
    return {
        "id": source_id,
        "title": meta.get("title") or meta.get("locator"),
        "media_type": meta.get("media_type"),
        "lines": {"start": start, "end": end, "total": len(all_lines)},
        "text": "\n".join(all_lines[start - 1 : end]),
    }
