"""Provenance for people: `vouch why`, `vouch log`, `vouch diff` (and its markdown, for
a pull-request comment), `vouch blame`."""

from __future__ import annotations

from typing import Any

import click

from vouch.cli.human_review import citation_head, comment_text, excerpt_lines
from vouch.cli.oneline import screen
from vouch.core.printable import md_code, md_text


def _short(sha: object) -> str:
    return str(sha or "")[:12]


def _link(item: dict[str, Any]) -> str:
    status = f" [{item['status']}]" if item.get("status") else ""
    return f"{item['id']}{status}" + (f": {item['title']}" if item.get("title") else "")


def why(d: dict[str, Any]) -> str:
    out = [f"{d['kind']} {d['id']}" + (f" [{d['status']}]" if d.get("status") else "")]
    out.append(f"  {d['title']}")
    out += _differs(d)
    proposed, approved, added = d.get("proposed"), d.get("approved"), d.get("added")
    if proposed:
        line = f"proposed by {proposed.get('proposed_by') or proposed.get('proposer')}"
        if proposed.get("date"):
            line += f" at {proposed['date']}"
        line += f" (proposal {proposed.get('proposal_id')}"
        line += f", session {proposed['session_id']})" if proposed.get("session_id") else ")"
        out.append(line)
        thread = _thread(d)
        if proposed.get("rationale") and not thread:
            out += ["  why: " + ln for ln in str(proposed["rationale"]).split("\n")]
        out += thread
    if approved:
        out.append(
            f"approved by {approved.get('approved_by') or approved['approver']} at "
            f"{approved['date']} "
            f"(merge {_short(approved['commit'])})"
        )
        if approved.get("reason"):
            out.append(f"  reason: {approved['reason']}")
    if not proposed and not approved and added:
        out.append(
            f"added by {added['actor']} at {added['date']} in {_short(added['commit'])} "
            f"({added['subject']}), without a vouch decision"
        )
    for change in d.get("changes") or []:
        reason = f" — {change['reason']}" if change.get("reason") else ""
        out.append(
            f"{change.get('event') or change['role']} by {change['actor']} at {change['date']} "
            f"({_short(change['commit'])}){reason}"
        )
    evidence = d.get("evidence") or []
    out.append(f"evidence ({len(evidence)}):" if evidence else "evidence: none")
    for e in evidence:
        out.append(f"  {citation_head(e)}")
        if e.get("quote"):
            out.append(f"    quote: {e['quote']!r}")
        if e.get("problem"):
            out.append(f"    ! {e['problem']}")
        out += ["    " + ln for ln in excerpt_lines(e)]
    for name in ("supersedes", "superseded_by", "contradicts", "entities", "claims"):
        for item in d.get(name) or []:
            out.append(f"{name.replace('_', ' ')}: {_link(item)}")
    for r in d.get("relations") or []:
        arrow = "->" if r["direction"] == "out" else "<-"
        out.append(f"relation {r['relation']} {arrow} {_link(r['other'])}")
    out.append(f"last confirmed: {d.get('last_confirmed_at') or 'never'}")
    return "\n".join(out)


def _differs(d: dict[str, Any]) -> list[str]:
    """What differs from the version shown: plain commits since vouch's last, and edits
    in the work tree — neither reviewed (`vouch.history.recorded`)."""
    out = []
    for c in d.get("edited_after_approval") or []:
        out.append(
            f"  ! edited after its decision outside vouch, not reviewed: {_short(c['commit'])} "
            f"by {c['author']} at {c['date']} ({c['subject']}); shown is what vouch recorded"
        )
    if d.get("committed_title"):
        out.append(f"  ! the committed file now says: {d['committed_title']}")
    if d.get("uncommitted"):
        out.append(
            "  ! the work-tree file holds uncommitted edits, not reviewed; shown is the "
            "committed version (`git diff` shows the edits)"
        )
    return out


def _thread(d: dict[str, Any]) -> list[str]:
    """The review thread of the proposal that landed, when there was more than its
    first revision: each revision, with why it was made, and the comments made on it."""
    revisions, comments = d.get("revisions") or [], d.get("comments") or []
    if len(revisions) < 2 and not comments:
        return []
    out = ["  thread:"]
    placed: set[str] = set()
    for r in revisions:
        out.append(
            f"    {r['created_at']}  revision {r['revision']} {_short(r['commit'])} "
            f"→ {r['object_id']}"
        )
        if r.get("rationale"):
            out += ["      why: " + ln for ln in str(r["rationale"]).split("\n")]
        for c in comments:
            if c["revision_commit"] == r["commit"]:
                placed.add(c["comment"])
                out.append(_comment(c))
    out += [_comment(c) for c in comments if c["comment"] not in placed]
    return out


def _comment(c: dict[str, Any]) -> str:
    text = comment_text(c).replace("\n", "\n      ")
    return f"    {c['created_at']}  comment by {c['author']}: {text}"


def log(d: dict[str, Any]) -> str:
    if not d["commits"]:
        return "(no commits)"
    out = []
    for c in d["commits"]:
        what = c.get("event") or c.get("decision") or c["role"]
        pid = f" {c['proposal_id']}" if c.get("proposal_id") else ""
        out.append(f"{_short(c['commit'])} {c['date']} {what}{pid} by {c.get('by') or c['actor']}")
        out.append(f"    {c['subject']}")
        for e in c.get("events") or []:
            ids = " ".join(map(str, e.get("object_ids") or []))[:80]
            out.append(f"    · {e['event']} by {e['actor']} {ids}")
    return "\n".join(out)


def blame(d: dict[str, Any]) -> str:
    out = [f"page {d['id']}: {d.get('title')}"]
    for s in d["sections"]:
        heading = ("#" * s["level"] + " " + s["heading"]) if s["heading"] else "(preamble)"
        if s.get("commit") is None:
            who = "(not committed)"
        elif s.get("proposal_id"):
            approved = f", approved by {s['approved_by']}" if s.get("approved_by") else ""
            who = f"proposal {s['proposal_id']} by {s.get('proposer')}{approved}"
        else:
            who = f"{s['role']} {_short(s['commit'])} by {s['author']}: {s['subject']}"
        out.append(f"L{s['start_line']}-L{s['end_line']}  {heading}\n    {who} ({s.get('date')})")
    return "\n".join(out)


# -- diff ----------------------------------------------------------------------------------
_CLAIM_TITLES = {
    "added": "added",
    "removed": "removed",
    "superseded": "superseded",
    "archived": "archived",
    "status_changed": "status changed",
    "confidence_changed": "confidence changed",
    "edited": "edited",
}


def _change_note(item: dict[str, Any]) -> str:
    notes = []
    fields = item.get("fields") or {}
    if "status" in fields:
        notes.append(f"status {fields['status']['from']} → {fields['status']['to']}")
    if "confidence" in fields:
        notes.append(f"confidence {fields['confidence']['from']} → {fields['confidence']['to']}")
    if item.get("superseded_by"):
        notes.append(f"by {item['superseded_by']}")
    others = [k for k in fields if k not in ("status", "confidence", "superseded_by")]
    if others and not notes:
        notes.append("changed " + ", ".join(others))
    for what, heads in (item.get("sections") or {}).items():
        notes.append(f"sections {what}: " + ", ".join(h or "(preamble)" for h in heads))
    return "; ".join(notes)


def _groups(d: dict[str, Any]) -> list[tuple[str, list[tuple[str, list[dict[str, Any]]]]]]:
    out = []
    for group in ("claims", "pages", "entities", "relations", "sources"):
        buckets = [(_CLAIM_TITLES.get(b, b), items) for b, items in d[group].items() if items]
        if buckets:
            out.append((group, buckets))
    return out


_ONE = {"claims": "claim", "pages": "page", "entities": "entity", "relations": "relation"}


def _counted(n: int, group: str) -> str:
    """`1 claim`, `2 claims`: a count of a diff's group (`claims`, `entities`, ...)."""
    return f"{n} {_ONE.get(group, group[:-1]) if n == 1 else group}"


def diff_human(d: dict[str, Any]) -> str:
    head = f"knowledge diff {_short(d['from'])}..{_short(d['to'])} ({d['range']})"
    out = [head]
    groups = _groups(d)
    drifted = _drift_lines(d)
    if not groups and not d["decisions"] and not d["evidence"]["added"] and not drifted:
        return head + "\n(no knowledge changed)"
    for group, buckets in groups:
        for title, items in buckets:
            out.append(f"{group} {title} ({len(items)}):")
            for item in items:
                note = _change_note(item)
                sign = {"added": "+", "removed": "-"}.get(title, "~")
                out.append(f"  {sign} {item['id']}: {item.get('title') or ''}")
                if note:
                    out.append(f"      {note}")
    if d["evidence"]["added"]:
        out.append(f"evidence added: {d['evidence']['added']}")
    if d["decisions"]:
        out.append(f"decisions ({len(d['decisions'])}):")
        out += [
            f"  {x['decision']} {x['proposal_id']} ({x['kind']} {x['object_id']}) "
            f"by {x['decided_by']}"
            for x in d["decisions"]
        ]
    if drifted:
        out.append(f"cited lines changed ({len(drifted)}):")
        out += [f"  ! {line}" for line in drifted]
    return "\n".join(out)


def _drift_lines(d: dict[str, Any], quote: Any = None) -> list[str]:
    """One line per citation the range's file changes moved, changed or deleted; the
    file's path and text through `quote` (markdown: `code`, so a path or a line a pull
    request wrote cannot add headings, comments, HTML or mentions to the comment)."""
    shown = quote or (lambda text: " ".join(str(text).split()))
    out = []
    for x in d.get("drifted") or ():
        cited = f"{x['locator']} of {shown(x['path'])}" if x["locator"] else shown(x["path"])
        what = {
            "moved": f"moved to {x['now']}",
            "deleted": "the file is gone",
        }.get(x["state"], "changed")
        if x["state"] == "changed" and x["locator"]:
            now = " ".join(str(x["now"] or "").split())
            what = f"now reads: {shown(now[:120])}" if now else "the lines are gone"
        out.append(f"`{x['claim_id']}` cites {cited}: {what}")
    return out


def diff_markdown(d: dict[str, Any]) -> str:
    """The diff as a pull-request comment."""
    out = [f"### Knowledge changes `{_short(d['from'])}..{_short(d['to'])}`", ""]
    groups = _groups(d)
    drifted = _drift_lines(d, md_code)
    if drifted:
        out += [
            f"#### Cited lines changed: {len(drifted)} citation(s) of approved claims",
            "",
            *(f"- {line}" for line in drifted[:200]),
            *([f"- … and {len(drifted) - 200} more"] if len(drifted) > 200 else []),
            "",
            "Register the files again (`vouch source add PATH`) and re-cite, revise or "
            "retire these claims.",
            "",
        ]
    if not groups and not d["decisions"]:
        return "\n".join([*out, "No knowledge changed."]) + "\n"
    counts = [f"{_counted(len(items), group)} {title}" for group, b in groups for title, items in b]
    out += ["**" + ", ".join(counts) + "**", ""]
    for group, buckets in groups:
        for title, items in buckets:
            out.append(f"#### {group.capitalize()} {title} ({len(items)})")
            out.append("")
            for item in items[:200]:
                note = _change_note(item)
                text = md_text(item.get("title") or "")
                out.append(f"- `{item['id']}` {text}" + (f" — {md_text(note)}" if note else ""))
            if len(items) > 200:
                out.append(f"- … and {len(items) - 200} more")
            out.append("")
    if d["decisions"]:
        out += [f"#### Decisions ({len(d['decisions'])})", ""]
        out += [
            f"- {x['decision']} `{x['proposal_id']}` ({x['kind']} `{x['object_id']}`) "
            f"by {x['decided_by']}, proposed by {x['proposer']}"
            for x in d["decisions"]
        ]
        out.append("")
    if (d.get("graph") or {}).get("nodes"):  # the knowledge it adds, as a picture
        from vouch.review.graph_render import mermaid_block

        out += ["#### What it adds, drawn", "", mermaid_block(d["graph"])]
    return "\n".join(out)


def diff(out: Any, d: dict[str, Any]) -> None:
    if out.json:
        out.emit(d)
    elif out.format == "markdown":
        click.echo(screen(diff_markdown(d)), nl=False)
    else:
        click.echo(screen(diff_human(d)))


def graph(out: Any, d: dict[str, Any]) -> None:
    """`vouch graph`: mermaid on a terminal (markdown: fenced, for a pull request), DOT
    with --format dot, the method's result as JSON in a pipe."""
    from vouch.review import graph_render

    if out.json:
        out.emit(d)
        return
    draw = {
        "dot": graph_render.dot,
        "markdown": graph_render.mermaid_block,
    }.get(out.format, graph_render.mermaid)
    click.echo(screen(draw(d)), nl=False)
    note = graph_render.left_out(d)
    if note is not None and out.format != "markdown":
        click.echo(note, err=True)


def impact(d: dict[str, Any]) -> str:
    """`vouch impact ID`: one line per object resting on it."""
    rows = d["referenced_by"]
    head = f"{d['kind']} {d['id']}: " + (
        ", ".join(f"{n} {k}" for k, n in sorted(d["counts"].items())) or "nothing rests on it"
    )
    lines = [head]
    for r in rows:
        via = f" through {r['through']}" if r.get("through") else ""
        status = f" [{r['status']}]" if r.get("status") else ""
        title = " ".join(str(r.get("title") or "").split())[:100]
        lines.append(f"  {r['kind']} {r['id']}{status} ({r['field']}{via}): {title}")
    if d["truncated"]:
        lines.append(f"  … {sum(d['counts'].values()) - len(rows)} more")
    return "\n".join(lines)
