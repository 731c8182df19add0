"""Pieces several pages show: a proposed or approved object, a citation's numbered
lines with the cited span marked, and links to proposals and objects."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from vouch.servers.web.markup import Html, fill, join

SHOWN = ("text", "title", "name", "description", "source", "relation", "target")
FACTS = ("type", "status", "confidence", "scope")
LISTS = ("tags", "entities", "aliases", "claims", "sources", "supersedes", "contradicts")


def proposal_link(pid: object, text: object = None) -> Html:
    return fill('<a href="/p/{}">{}</a>', quote(str(pid), safe=""), pid if text is None else text)


def object_link(oid: object, text: object = None) -> Html:
    return fill('<a href="/o/{}">{}</a>', quote(str(oid), safe=""), oid if text is None else text)


def object_box(kind: str, obj: dict[str, Any]) -> Html:
    rows = [fill("<p><strong>{}</strong>: {}</p>", k, obj[k]) for k in SHOWN if obj.get(k)]
    facts = [f"{k} {obj[k]}" for k in FACTS if obj.get(k) not in (None, "")]
    if facts:
        rows.append(fill('<p class="muted">{}</p>', " · ".join(facts)))
    for key in LISTS:
        values = obj.get(key)
        if values and isinstance(values, list):
            links = join((object_link(v) for v in values), ", ")
            rows.append(fill("<p>{}: {}</p>", key, links))
    if kind == "page" and obj.get("body"):
        rows.append(fill("<pre>{}</pre>", str(obj["body"]).rstrip()))
    return fill('<div class="obj">{}</div>', join(rows))


def citation(n: int, c: dict[str, Any]) -> Html:
    """One citation: where it points, its quote, and its lines, numbered, the cited
    ones marked; what was left out is named with the command that prints it."""
    where = c.get("cite_path") or f"{c.get('title') or c.get('source_id')} {c.get('locator') or ''}"
    kind = "evidence" if c.get("kind") == "evidence" else "source"
    head = fill(
        '<h3>[{}] {} <span class="muted">({} {})</span></h3>',
        n,
        where,
        kind,
        str(c.get("id") or "")[:24],
    )
    parts = [head]
    if c.get("quote"):
        parts.append(fill('<p class="muted">quote: “{}”</p>', c["quote"]))
    if c.get("problem"):
        parts.append(fill('<p class="problem">! {}</p>', c["problem"]))
    if c.get("source_superseded_by"):
        parts.append(
            fill(
                '<p class="muted">a source version superseded by {}</p>', c["source_superseded_by"]
            )
        )
    rows = []
    for r in c.get("excerpt") or []:
        cls = " cited" if r.get("cited") else ""
        rows.append(
            fill(
                '<span class="n{}" aria-hidden="true">{}</span><span class="t{}"{}>{}</span>',
                cls,
                r.get("n"),
                cls,
                Html(' data-cited="1"') if r.get("cited") else Html(""),
                r.get("text") or " ",
            )
        )
    if rows:
        parts.append(fill('<div class="lines">{}</div>', join(rows)))
    for h in c.get("hidden") or []:
        count = int(h["end"]) - int(h["start"]) + 1
        parts.append(
            fill(
                '<p class="muted">… {} more cited line(s) (L{}-L{}): <code>{}</code></p>',
                count,
                h["start"],
                h["end"],
                h.get("show") or "",
            )
        )
    return fill('<section class="cite">{}</section>', join(parts))


def comments_and_revisions(revisions: list[dict[str, Any]], comments: list[dict[str, Any]]) -> Html:
    """The thread: each revision, then the comments made while it was the tip."""
    items = []
    placed: set[str] = set()
    for rev in revisions:
        items.append(
            fill(
                "<li>revision {} <code>{}</code> {}{}</li>",
                rev.get("revision"),
                str(rev.get("commit") or "")[:12],
                rev.get("created_at") or "",
                fill(" — {}", rev["rationale"]) if rev.get("rationale") else "",
            )
        )
        for c in comments:
            if c.get("revision_commit") == rev.get("commit"):
                placed.add(str(c.get("comment")))
                items.append(_comment(c))
    items += [_comment(c) for c in comments if str(c.get("comment")) not in placed]
    if not items:
        return Html("")
    return fill('<h2>Thread</h2><ul class="plain">{}</ul>', join(items))


def _comment(c: dict[str, Any]) -> Html:
    cut = c.get("cut")
    more = (
        fill(" … {} more bytes: <code>{}</code>", cut["more_bytes"], cut["read_with"])
        if cut
        else ""
    )
    return fill(
        '<li class="comment"><strong>{}</strong> <span class="muted">{}</span><pre>{}{}</pre></li>',
        c.get("author") or "?",
        c.get("created_at") or "",
        c.get("text") or "",
        more,
    )
