"""The review screen for people: `vouch show PROPOSAL` (human) and as a pull-request
description (`--format markdown`)."""

from __future__ import annotations

import json
import re
from typing import Any

from vouch.cli.oneline import escaped

_SKIP = {
    "diff",
    "object",
    "citations",
    "related",
    "related_unavailable",
    "problems",
    "revisions",
    "comments",
    "waits_for",
}
_SHOWN = ("text", "title", "name", "description", "source", "relation", "target")


def _object_lines(kind: str, obj: dict[str, Any]) -> list[str]:
    lines = []
    for key in _SHOWN:
        if obj.get(key):
            lines.append(f"  {key}: {obj[key]}")
    facts = [
        f"{k} {obj[k]}"
        for k in ("type", "status", "confidence", "scope")
        if obj.get(k) not in (None, "")
    ]
    if facts:
        lines.append("  " + " · ".join(str(f) for f in facts))
    for key in ("tags", "entities", "aliases", "claims", "supersedes"):
        value = obj.get(key)
        if value:  # a list, or one id (a source's `supersedes`)
            shown = ", ".join(map(str, value)) if isinstance(value, list) else str(value)
            lines.append(f"  {key}: {shown}")
    if kind == "page" and obj.get("body"):
        lines += ["", *("  " + ln for ln in str(obj["body"]).rstrip().split("\n"))]
    return lines


def citation_head(c: dict[str, Any]) -> str:
    """`docs/runbook.md:L7-L8 (evidence evidence-1a2b…, source 5891b5b522d5)`: where a
    citation points, by its source's path when it has one (what `--source` takes), on
    one line: a file's name may hold a line break (`oneline.escaped`)."""
    kind = "evidence" if c.get("kind") == "evidence" else "source"
    sid = str(c.get("source_id") or "")[:12]
    ids = f"{kind} {str(c['id'])[:24]}" + (f", source {sid}" if kind == "evidence" else "")
    if c.get("cite_path"):
        return escaped(f"{_titled(c, str(c['cite_path']))} ({ids})")
    where = c.get("title") or sid
    locator = c.get("locator") or "(whole source)"
    older = c.get("source_superseded_by")
    if older:
        ids += f"; a version superseded by {str(older)[:12]}"
    return escaped(f"{where} {locator} ({ids})")


def _titled(c: dict[str, Any], by_path: str) -> str:
    """The path form, after the source's title when that is more than the file's name."""
    title, locator = str(c.get("title") or ""), str(c.get("source_locator") or "")
    if not title or title in (locator, locator.rsplit("/", 1)[-1]):
        return by_path
    return f"{json.dumps(title, ensure_ascii=False)} {by_path}"


def excerpt_lines(c: dict[str, Any]) -> list[str]:
    """The numbered lines of a citation (`>` marks the cited ones); where cited lines
    were left out, a line saying how many and the command that prints them."""
    rows = c.get("excerpt") or []
    hidden = c.get("hidden") or []
    width = len(str(max([r["n"] for r in rows] + [h["end"] for h in hidden], default=1)))
    marks = [(int(h["start"]), 0, _hidden_line(h, width)) for h in hidden]
    texts = [
        (int(r["n"]), 1, f"{r['n']:>{width}} {'>' if r['cited'] else ' '} {r['text']}")
        for r in rows
    ]
    return [line for _, _, line in sorted(marks + texts)]


def _hidden_line(h: dict[str, Any], width: int) -> str:
    count = int(h["end"]) - int(h["start"]) + 1
    where = f"L{h['start']}-L{h['end']}" if count > 1 else f"L{h['start']}"
    rest = f": {h['show']}" if h.get("show") else ""
    return f"{'':>{width}} … {count} more cited line{'s' if count > 1 else ''} ({where}){rest}"


def proposal(data: dict[str, Any]) -> str:
    """The review screen as text."""
    if data.get("object") is None or data.get("citations") is None:
        return _plain(data)
    kind, obj = str(data.get("kind")), data["object"]
    out = [
        f"proposal {data['proposal_id']} ({data.get('state')}): {kind} {data.get('object_id')}",
        f"  proposed by {data.get('proposed_by') or data.get('proposer')} at "
        f"{data.get('created_at')}"
        + (f" in session {data['session_id']}" if data.get("session_id") else "")
        + f", onto {str(data.get('base') or '?').removeprefix('refs/heads/')}",
    ]
    if data.get("rationale"):
        out += ["  why: " + ln for ln in str(data["rationale"]).split("\n")]
    if data.get("change") and data.get("object_kind"):
        out += _change_lines(data)
        kind = str(data["object_kind"])
        out += ["", f"The {kind} as approved now:", *_object_lines(kind, obj)]
    else:
        out += ["", kind.capitalize() + ":", *_object_lines(kind, obj)]
    citations = data.get("citations") or []
    if data.get("object_kind") != "source":  # a source is cited; it cites nothing
        out += ["", f"Evidence ({len(citations)}):" if citations else "Evidence: none cited"]
    for n, c in enumerate(citations, 1):
        out.append(f"  [{n}] {citation_head(c)}")
        if c.get("quote"):
            out.append(f"      quote: {c['quote']!r}")
        if c.get("problem"):
            out.append(f"      ! {c['problem']}")
        out += ["      " + ln for ln in excerpt_lines(c)]
    related = data.get("related")
    if related:
        out += ["", "Already approved and similar (a duplicate? a contradiction?):"]
        for r in related:
            status = f" [{r['status']}]" if r.get("status") else ""
            out.append(f"  {r['id']}{status} ({_alike(r)}): {_one_line(r.get('text'))}")
    elif data.get("related_unavailable"):
        out += ["", f"Similar knowledge not searched: {data['related_unavailable']}"]
    if data.get("problems"):
        out += ["", "Approve would refuse it:", *("  ! " + p for p in data["problems"])]
    out += _thread_and_waits(data)
    if data.get("diff"):
        out += ["", str(data["diff"]).rstrip()]
    return "\n".join(out + _approve_line(data))


def _change_lines(data: dict[str, Any]) -> list[str]:
    """What a change proposal asks, what approve would write, and what rests on it."""
    change = data["change"]
    ask = f"{change['op']} {data.get('object_kind')} {change['target']}"
    if change.get("evidence"):
        ask += f", citing {change['evidence']}"
    if change.get("drop"):
        ask += f" in place of {', '.join(change['drop'])}"
    out = ["", "Asks to:", "  " + escaped(ask)]
    new = data.get("new_citation")
    if new:
        out += ["", "The new citation:", f"  {citation_head(new)}"]
        if new.get("problem"):
            out.append(f"      ! {new['problem']}")
        out += ["      " + ln for ln in excerpt_lines(new)]
    touches = data.get("touches") or []
    if touches:
        out += ["", "Approve would write:"]
        out += [escaped(f"  {t['kind']} {t['id']}: {t['what']}") for t in touches]
    others = data.get("other_versions") or []
    if others:
        out += ["", "Other versions of the same file keep their bytes (redact each too):"]
        out += [escaped(f"  vouch redact {v['id']}  ({v.get('created_at') or ''})") for v in others]
    rests = (data.get("impact") or {}).get("referenced_by") or []
    if rests:
        out += ["", "Rests on it:"]
        out += [
            escaped(f"  {r['kind']} {r['id']} ({r['field']}): {r.get('title') or ''}")
            for r in rests
        ]
    return out


def _alike(related: dict[str, Any]) -> str:
    """`similarity 0.72` (cosine of the two texts' vectors), or `0.50 of words shared`."""
    figure = float(related.get("similarity") or 0.0)
    if related.get("measure") == "words":
        return f"{figure:.2f} of words shared"
    return f"similarity {figure:.2f}"


def _plain(data: dict[str, Any]) -> str:
    """A decided or unreadable proposal: its metadata, thread and diff."""
    from vouch.core import yamlio

    meta = {k: v for k, v in data.items() if k not in _SKIP and v}
    refused = ["", "Approve would refuse it:", *("  ! " + p for p in data.get("problems") or [])]
    lines = [yamlio.dump_yaml(meta).rstrip(), *_thread_and_waits(data)]
    text = "\n".join(lines + (refused if data.get("problems") else []))
    return f"{text}\n\n{data.get('diff') or ''}".rstrip() + "\n".join(_approve_line(data))


def _approve_line(data: dict[str, Any]) -> list[str]:
    """How to approve exactly the commit shown: a pending proposal, or one git merged
    (the decision recorded afterwards); nothing when approve would refuse it."""
    state, commit = data.get("state"), data.get("commit")
    if data.get("problems") or not commit:
        return []
    if state == "pending":
        return [
            "",
            f"To approve exactly this: vouch approve {data['proposal_id']} --expect {commit}",
        ]
    if state == "merged-without-decision":
        return [
            "",
            "Merged with git, not decided: to record the approval of exactly this: "
            f"vouch approve {data['proposal_id']} --expect {commit}",
        ]
    return []


def _thread_and_waits(data: dict[str, Any]) -> list[str]:
    """The revisions in order, each followed by the comments made while it was the tip,
    and the open proposals this one waits for (linked proposals land together)."""
    out: list[str] = []
    lines = _thread(data.get("revisions") or [], data.get("comments") or [])
    if len(lines) > 1:
        out += ["", "Thread:", *lines]
    waits = data.get("waits_for") or []
    if waits:
        pids = sorted({w["proposal_id"] for w in waits})
        out += [
            "",
            f"Waits for {', '.join(pids)}; approve them together: vouch approve "
            + " ".join([*pids, data["proposal_id"]]),
        ]
    return out


def comment_text(c: dict[str, Any]) -> str:
    """A comment's text as read (its first 16 KiB), and when it was cut short, how many
    bytes were left out and the command that prints them."""
    cut = c.get("cut")
    if not cut:
        return str(c["text"])
    return f"{c['text']}\n… {cut['more_bytes']} more bytes of this comment: {cut['read_with']}"


def _thread(revisions: list[dict[str, Any]], comments: list[dict[str, Any]]) -> list[str]:
    lines: list[str] = []
    placed: set[str] = set()
    for r in revisions:
        lines.append(
            f"  {r['created_at']}  revision {r['revision']} {r['commit'][:12]} → {r['object_id']}"
        )
        for c in comments:
            if c["revision_commit"] == r["commit"]:
                placed.add(c["comment"])
                lines.append(f"  {c['created_at']}  comment by {c['author']}: {comment_text(c)}")
    lines += [
        f"  {c['created_at']}  comment by {c['author']}: {comment_text(c)}"
        for c in comments
        if c["comment"] not in placed
    ]
    return lines


def _one_line(text: object, width: int = 100) -> str:
    flat = " ".join(str(text or "").split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def fence(text: str, info: str = "") -> str:
    """`text` in a code fence longer than any backtick run inside it."""
    runs = [len(m) for m in re.findall(r"`{3,}", text)]
    ticks = "`" * max(3, max(runs, default=0) + 1)
    return f"{ticks}{info}\n{text}\n{ticks}"


def _quote(text: object) -> str:
    return "\n".join("> " + ln for ln in str(text).split("\n"))


def markdown(data: dict[str, Any]) -> str:
    """The review screen as a pull-request description."""
    kind, obj = str(data.get("kind") or "proposal"), data.get("object") or {}
    title = data.get("title") or data.get("object_id") or ""
    out = [f"## vouch proposal `{data['proposal_id']}`: {kind} — {_one_line(title, 120)}", ""]
    rows = [
        ("State", data.get("state")),
        ("Object", f"`{data.get('object_id')}`" if data.get("object_id") else None),
        ("Proposer", data.get("proposed_by") or data.get("proposer")),
        ("Proposed at", data.get("created_at")),
        ("Session", data.get("session_id")),
        ("Base", str(data.get("base") or "").removeprefix("refs/heads/") or None),
        ("Commit", f"`{data['commit']}`" if data.get("commit") else None),
    ]
    out += ["| | |", "|---|---|"]
    out += [f"| {k} | {str(v).replace('|', chr(92) + '|')} |" for k, v in rows if v]
    if data.get("rationale"):
        out += ["", "### Why", "", str(data["rationale"])]
    if obj:
        out += ["", f"### The {kind}", ""]
        main = obj.get("text") or obj.get("name") or obj.get("title")
        if main:
            out.append(_quote(main))
        facts = [f"{k}: {obj[k]}" for k in ("type", "confidence", "scope") if obj.get(k)]
        if facts:
            out += ["", " · ".join(facts)]
        if kind == "page" and obj.get("body"):
            out += ["", fence(str(obj["body"]).rstrip(), "markdown")]
    citations = data.get("citations")
    if citations is not None:
        out += ["", f"### Evidence ({len(citations)})"]
        for n, c in enumerate(citations, 1):
            if c.get("cite_path"):
                out += ["", f"**{n}. `{escaped(str(c['cite_path']))}`** ({c['id']})"]
            else:
                title = escaped(str(c.get("title") or str(c.get("source_id") or "")[:12]))
                where = escaped(str(c.get("locator") or "whole source"))
                out += ["", f"**{n}. {title}** `{where}` ({c['id']})"]
            if c.get("quote"):
                out += ["", _quote(c["quote"])]
            if c.get("problem"):
                out += ["", f"⚠️ {c['problem']}"]
            if c.get("excerpt"):
                out += ["", fence("\n".join(excerpt_lines(c)), "text")]
    if data.get("related"):
        out += ["", "### Already approved and similar", ""]
        out += [
            f"- `{r['id']}`{' (' + r['status'] + ')' if r.get('status') else ''} "
            f"({_alike(r)}): {_one_line(r.get('text'))}"
            for r in data["related"]
        ]
    if data.get("problems"):
        out += ["", "### Approve would refuse it", ""] + [f"- {p}" for p in data["problems"]]
    thread = _thread_and_waits(data)
    if thread:
        out += ["", "### Thread", "", fence("\n".join(thread).strip("\n"), "text")]
    if data.get("diff"):
        out += [
            "",
            "<details><summary>Files</summary>",
            "",
            fence(str(data["diff"]).rstrip(), "diff"),
            "",
            "</details>",
        ]
    if data.get("state") == "pending" and data.get("commit"):
        out += [
            "",
            f"Approve exactly this: `vouch approve {data['proposal_id']} "
            f"--expect {data['commit']}`",
        ]
    return "\n".join(out) + "\n"


def emit(out: Any, data: dict[str, Any]) -> None:
    """JSON, the review screen, or (`--format markdown`) a pull-request description."""
    import click

    from vouch.cli.oneline import screen

    if out.json:
        out.emit(data)
    elif out.format == "markdown":
        click.echo(screen(markdown(data)), nl=False)
    else:
        click.echo(screen(proposal(data)))
