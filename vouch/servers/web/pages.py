"""The pages other than a proposal's: the pending queue, search with the CLI's filters,
and an object's why and log. Each takes the registry's answer and returns
(title, page kind, body); `app` puts it in the frame."""

from __future__ import annotations

from typing import Any

from vouch.servers.web.layout import age
from vouch.servers.web.markup import Html, fill, join
from vouch.servers.web.parts import citation, object_link, proposal_link

Page = tuple[str, str, Html]


def queue(rows: list[dict[str, Any]]) -> Page:
    if not rows:
        return "Queue", "queue", Html("<h1>No open proposals</h1><p>Nothing waits for review.</p>")
    body = []
    for r in rows:
        pid = str(r["proposal_id"])
        comments = int(r.get("comments") or 0)
        note = " (revised since)" if r.get("revised_since_comment") else ""
        body.append(
            fill(
                '<tr data-nav data-href="/p/{}" tabindex="-1"><td class="title">{}</td>'
                '<td>{}</td><td>{}</td><td>{}</td><td class="comments">{}{}</td>'
                '<td class="wide"><code>{}</code></td></tr>',
                pid,
                proposal_link(pid, r.get("title") or r.get("object_id") or pid),
                r.get("kind"),
                r.get("proposer"),
                age(r.get("created_at")),
                comments,
                note,
                pid,
            )
        )
    table = fill(
        "<h1>{} open proposal{}</h1>"
        '<table class="queue"><thead><tr><th>proposal</th><th>kind</th><th>proposer</th>'
        '<th>age</th><th>comments</th><th class="wide">id</th></tr></thead>'
        "<tbody>{}</tbody></table>",
        len(rows),
        "" if len(rows) == 1 else "s",
        join(body),
    )
    return "Queue", "queue", table


SEARCH_KINDS = ("claim", "page", "entity", "relation", "source")


def search(form: dict[str, str], answer: dict[str, Any] | None, problem: str | None) -> Page:
    """The form (as filled) and the hits; `problem`: why the search was refused."""

    def field(name: str, label: str, size: int = 12) -> Html:
        return fill(
            '<label>{}<input type="text" name="{}" value="{}" size="{}"></label>',
            label,
            name,
            form.get(name, ""),
            size,
        )

    kinds = join(
        fill(
            '<option value="{}"{}>{}</option>',
            k,
            Html(" selected") if form.get("kind") == k else "",
            k,
        )
        for k in ("", *SEARCH_KINDS)
    )
    modes = join(
        fill(
            '<option value="{}"{}>{}</option>',
            m,
            Html(" selected") if form.get("mode", "hybrid") == m else "",
            m,
        )
        for m in ("hybrid", "fts", "vector")
    )
    pending = Html(" checked") if form.get("pending") else Html("")
    parts = [
        fill(
            '<h1>Search</h1><form method="get" action="/search" class="filters" role="search">'
            '<label>query<input id="q" type="search" name="q" value="{}" size="30"></label>'
            '<label>kind<select name="kind">{}</select></label>{}{}{}'
            '<label>mode<select name="mode">{}</select></label>{}'
            '<label><span><input type="checkbox" name="pending" value="1"{}> '
            "also pending</span></label>"
            "<details><summary>more filters</summary>{}</details>"
            "<button>Search</button></form>",
            form.get("q", ""),
            kinds,
            field("type", "type"),
            field("status", "status"),
            field("tag", "tags (comma)"),
            modes,
            field("top", "top", 4),
            pending,
            join(
                (
                    field("speaker", "speakers (comma)"),
                    field("since", "since (ISO date)"),
                    field("until", "until"),
                    field("threshold", "min score", 5),
                )
            ),
        )
    ]
    if problem:
        parts.append(fill('<p class="flash error">{}</p>', problem))
    if answer is not None:
        hits = answer.get("results") or []
        items = [
            fill(
                '<li data-nav data-href="/o/{}" tabindex="-1">{} <span class="muted">{} {}{}</span>'
                "<br>{}</li>",
                h.get("id"),
                object_link(h.get("id"), (h.get("source") or {}).get("title") or h.get("id")),
                h.get("kind"),
                f"{float(h.get('score') or 0):.3f}",
                fill(" [{}]", h["status"]) if h.get("status") else "",
                str(h.get("text") or "")[:300],
            )
            for h in hits
        ]
        parts.append(fill('<h2>{} result(s)</h2><ul class="plain">{}</ul>', len(hits), join(items)))
    return "Search", "search", join(parts)


def explain(
    why: dict[str, Any] | None,
    log: dict[str, Any] | None,
    oid: str,
    problem: str | None,
    graph: dict[str, Any] | None = None,
) -> Page:
    """An object's why (proposed, approved, evidence, changes), its neighbourhood (the
    graph one step around it, as linked lines: the page draws nothing it would have to
    fetch a library for) and its log."""
    parts = [fill("<h1>{}</h1>", (why or {}).get("title") or oid)]
    if problem:
        parts.append(fill('<p class="flash error">{}</p>', problem))
    if why:
        parts.append(
            fill(
                '<p class="muted">{} <code>{}</code>{}{}</p>',
                why.get("kind"),
                why.get("id"),
                fill(" · status {}", why["status"]) if why.get("status") else "",
                fill(" · confidence {}", why["confidence"])
                if why.get("confidence") is not None
                else "",
            )
        )
        proposed, approved = why.get("proposed") or {}, why.get("approved") or {}
        if proposed:
            parts.append(
                fill(
                    "<p>Proposed by {} on {} in {}{}</p>",
                    proposed.get("proposed_by") or proposed.get("proposer"),
                    proposed.get("date"),
                    proposal_link(proposed.get("proposal_id"))
                    if proposed.get("proposal_id")
                    else "?",
                    fill(" — {}", proposed["rationale"]) if proposed.get("rationale") else "",
                )
            )
        if approved:
            parts.append(
                fill(
                    "<p>Approved by {} on {} (<code>{}</code>){}</p>",
                    approved.get("approved_by") or approved.get("approver"),
                    approved.get("date"),
                    str(approved.get("commit") or "")[:12],
                    fill(" — {}", approved["reason"]) if approved.get("reason") else "",
                )
            )
        for key in ("supersedes", "superseded_by", "contradicts", "contradicted_by"):
            values = why.get(key)
            if values:
                ids = (
                    [v.get("id") if isinstance(v, dict) else v for v in values]
                    if isinstance(values, list)
                    else [values]
                )
                parts.append(
                    fill(
                        "<p>{}: {}</p>",
                        key.replace("_", " "),
                        join((object_link(i) for i in ids), ", "),
                    )
                )
        evidence = why.get("evidence") or []
        if evidence:
            parts.append(fill("<h2>Evidence ({})</h2>", len(evidence)))
            parts += [citation(n, c) for n, c in enumerate(evidence, 1)]
    if graph and graph.get("edges"):
        titles = {n["id"]: f"{n['kind']}: {n.get('title') or n['id']}" for n in graph["nodes"]}
        lines = [
            fill(
                '<li>{} <span class="muted">— {} →</span> {}</li>',
                object_link(e["from"], titles.get(e["from"])),
                " ".join(str(x) for x in (e.get("kind"), e.get("locator")) if x),
                object_link(e["to"], titles.get(e["to"])),
            )
            for e in graph["edges"]
        ]
        left = sum((graph.get("omitted") or {}).get("nodes", {}).values())
        more = fill('<p class="muted">{} more not shown</p>', left) if left else ""
        parts.append(fill('<h2>Graph</h2><ul class="plain">{}</ul>{}', join(lines), more))
    if log and log.get("commits"):
        items = [
            fill(
                '<li><code>{}</code> {} <span class="muted">{} · {}</span>{}</li>',
                str(c.get("commit") or "")[:12],
                c.get("subject"),
                c.get("date"),
                c.get("by") or c.get("author"),
                fill(" — {}", c["reason"]) if c.get("reason") else "",
            )
            for c in log["commits"]
        ]
        parts.append(fill('<h2>Log</h2><ul class="plain">{}</ul>', join(items)))
    return str((why or {}).get("title") or oid), "object", join(parts)


def refused(status: int, reason: str) -> Page:
    return "Refused", "error", fill("<h1>{}</h1><p>{}</p>", status, reason)
