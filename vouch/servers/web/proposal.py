"""A proposal's page: the object beside the text its citations point at (numbered, the
cited span marked), look-alikes among approved knowledge, the proposals it waits for,
the thread, and the forms that decide. Every form carries the commit this page shows:
the action refuses it if the branch moved since (`actions`)."""

from __future__ import annotations

from typing import Any

from vouch.servers.web.actions import Member
from vouch.servers.web.layout import age
from vouch.servers.web.markup import Html, fill, join
from vouch.servers.web.pages import Page
from vouch.servers.web.parts import (
    citation,
    comments_and_revisions,
    object_box,
    object_link,
    proposal_link,
)


def render(
    data: dict[str, Any],
    csrf: str,
    *,
    linked: list[Member],
) -> Page:
    """`data`: kb.read_proposal's answer; `linked`: each proposal it waits for, and
    itself (`actions.linked`); empty when it waits for none."""
    pid = str(data["proposal_id"])
    kind = str(data.get("kind") or "")
    obj = data.get("object")
    title = str(data.get("title") or data.get("object_id") or pid)
    parts = [_nav(pid), fill("<h1>{}</h1>", title)]
    parts.append(
        fill(
            '<p class="muted">{} {} · <strong>{}</strong> · proposed by {} {} ago onto {} · '
            "commit <code>{}</code> · {}</p>",
            kind,
            object_link(data.get("object_id"))
            if data.get("state") != "pending"
            else data.get("object_id"),
            data.get("state"),
            data.get("proposed_by") or data.get("proposer"),
            age(data.get("created_at")),
            str(data.get("base") or "?").removeprefix("refs/heads/"),
            str(data.get("commit") or "")[:12],
            pid,
        )
    )
    if data.get("rationale"):
        parts.append(fill("<p>Why: {}</p>", data["rationale"]))
    problems = data.get("problems") or []
    if problems:
        parts.append(
            fill(
                '<h2 class="problem">Approve would refuse it</h2><ul class="plain problem">{}</ul>',
                join(fill("<li>{}</li>", p) for p in problems),
            )
        )
    citations = data.get("citations") or []
    left = fill(
        "<h2>Proposed {}</h2>{}",
        kind,
        object_box(kind, obj) if obj else Html("<p>(unreadable)</p>"),
    )
    right = fill(
        "<h2>{}</h2>{}",
        f"Cited source ({len(citations)})" if citations else "Evidence: none cited",
        join(citation(n, c) for n, c in enumerate(citations, 1)),
    )
    parts.append(
        fill('<div class="side"><div>{}</div><div id="citations">{}</div></div>', left, right)
    )
    parts.append(_related(data, obj or {}))
    parts.append(comments_and_revisions(data.get("revisions") or [], data.get("comments") or []))
    if data.get("state") == "pending":
        parts.append(_decide(data, csrf, linked))
    if data.get("diff"):
        parts.append(
            fill(
                "<details><summary>The diff it merges</summary><pre>{}</pre></details>",
                data["diff"],
            )
        )
    return title, "proposal", join(parts)


def _nav(pid: str) -> Html:
    return fill(
        '<p class="muted"><a id="prev" href="/p/{}/prev">← previous (k)</a> · '
        '<a id="next" href="/p/{}/next">next (j) →</a></p>',
        pid,
        pid,
    )


def _related(data: dict[str, Any], obj: dict[str, Any]) -> Html:
    parts = []
    related = data.get("related") or []
    if related:
        items = [
            fill(
                '<li>{}{} <span class="muted">({} {})</span>: {}</li>',
                object_link(r.get("id")),
                fill(" [{}]", r["status"]) if r.get("status") else "",
                "words shared" if r.get("measure") == "words" else "similarity",
                f"{float(r.get('similarity') or 0.0):.2f}",
                str(r.get("text") or "")[:300],
            )
            for r in related
        ]
        parts.append(
            fill(
                "<h2>Already approved and similar (a duplicate? a contradiction?)</h2>"
                '<ul class="plain">{}</ul>',
                join(items),
            )
        )
    elif data.get("related_unavailable"):
        parts.append(
            fill(
                '<p class="muted">Similar knowledge not searched: {}</p>',
                data["related_unavailable"],
            )
        )
    else:
        parts.append(Html('<p class="muted">Nothing approved looks like it.</p>'))
    for key in ("contradicts", "supersedes"):
        if obj.get(key):
            parts.append(
                fill("<p>It {}: {}</p>", key, join((object_link(i) for i in obj[key]), ", "))
            )
    return join(parts)


def _decide(data: dict[str, Any], csrf: str, linked: list[Member]) -> Html:
    pid, commit = str(data["proposal_id"]), str(data.get("commit") or "")
    hidden = fill(
        '<input type="hidden" name="csrf" value="{}">'
        '<input type="hidden" name="commit" value="{}">',
        csrf,
        commit,
    )
    waits = [w for w in linked if w[0] != pid]
    blocked = bool(data.get("problems"))
    forms = []
    if waits:
        forms.append(_together(pid, csrf, linked))
    else:
        forms.append(
            fill(
                '<form method="post" action="/p/{}/approve" id="approve">{}'
                '<label>reason (optional) <input type="text" name="reason" size="20"></label> '
                '<button id="approve-focus"{}>Approve (a)</button></form>',
                pid,
                hidden,
                Html(" disabled") if blocked else "",
            )
        )
    forms.append(
        fill(
            '<form method="post" action="/p/{}/reject" id="reject">{}'
            '<label>reason <input id="reject-focus" type="text" name="reason" required '
            'size="20"></label> '
            "<button>Reject (r)</button></form>",
            pid,
            hidden,
        )
    )
    forms.append(
        fill(
            '<form method="post" action="/p/{}/comment" id="comment">{}'
            '<label for="comment-focus">comment (Ctrl+Enter sends)</label>'
            '<textarea id="comment-focus" name="text" required></textarea>'
            "<button>Comment (c)</button></form>",
            pid,
            hidden,
        )
    )
    return fill('<div class="decide">{}</div>', join(forms))


def _together(pid: str, csrf: str, linked: list[Member]) -> Html:
    """Approve this proposal with those it waits for, all or none: each must have been
    shown (its page opened) at the commit it is now."""
    unseen = [other for other, _, shown, _ in linked if not shown]
    items = [
        fill(
            "<li>{} <code>{}</code>{}</li>",
            proposal_link(other, title or other),
            commit[:12],
            "" if shown else Html(" — <strong>not reviewed yet: open it first</strong>"),
        )
        for other, commit, shown, title in linked
    ]
    pins = join(
        fill('<input type="hidden" name="pin" value="{}@{}">', other, commit)
        for other, commit, _, _ in linked
    )
    return fill(
        '<form method="post" action="/approve-together" id="approve">'
        '<input type="hidden" name="csrf" value="{}">{}'
        "<p>It waits for other open proposals: approve them together (all or none, "
        'dependencies first).</p><ul class="plain">{}</ul>'
        '<label>reason (optional) <input type="text" name="reason" size="20"></label> '
        '<button id="approve-focus"{}>Approve all {} together (a)</button></form>',
        csrf,
        pins,
        join(items),
        Html(" disabled") if unseen else "",
        len(linked),
    )
