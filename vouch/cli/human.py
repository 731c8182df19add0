"""How method results look to people (`--format human`); the registry names them.

Each function takes a method's result and returns text; `proposed` (an `emit`) prints
itself, because a proposal's id goes alone to stdout and its story to stderr.
"""

from __future__ import annotations

import json
from typing import Any

import click

from vouch.cli.oneline import escaped
from vouch.core import yamlio
from vouch.core.ids import is_source_id


def _n(count: int, word: str) -> str:
    """`1 event`, `3 events`."""
    return f"{count} {word}{'' if count == 1 else 's'}"


def capabilities(d: dict[str, Any]) -> str:
    lines = [f"vouch {d['version']} — transports: {', '.join(d['transports'])}"]
    lines += [f"  {m['name']:<32} {m['scope']:<12} {m['summary']}" for m in d["methods"]]
    return "\n".join(lines)


def status(data: dict[str, Any]) -> str:
    lines = [f"Knowledge base: {data['root']}"]
    lines += [f"  {name:<10} {count:>8}" for name, count in data["counts"].items()]
    lines.append(f"Pending proposals: {data['pending']}")
    lines.append(f"Last audit event: {data['last_audit_at'] or 'none'}")
    if data.get("index_state"):
        lines.append(f"Index: {data['index_state']}, {data.get('total_chunks', 0)} chunks")
    if data.get("invalid_files"):
        lines.append(f"Invalid knowledge files (not indexed): {data['invalid_files']}")
    if data.get("self_approval"):
        lines.append(f"Self-approval: {data['self_approval']}")
    return "\n".join(lines)


def read(data: dict[str, Any] | None) -> str:
    if data is None:
        return "(none)"
    data = dict(data)
    body = data.pop("body", None)
    text = yamlio.dump_yaml(data).rstrip()
    return f"{text}\n\n{body}" if body else text


def listing(result: dict[str, Any] | list[dict[str, Any]]) -> str:
    """One line an object; when the page is not all of them, a note on stderr says how
    many there are and how to see the rest (stdout stays one object a line)."""
    rows = result["items"] if isinstance(result, dict) else result
    if isinstance(result, dict) and result.get("next_offset") is not None:
        first = int(result["offset"]) + 1
        click.echo(
            f"{first}-{first + len(rows) - 1} of {result['total']} — "
            f"--offset {result['next_offset']} for the next page, --limit 0 for all",
            err=True,
        )
    if not rows:
        return "(none)"
    if all(is_source_id(str(r.get("id"))) for r in rows):
        return "\n".join(_source_line(r) for r in rows)
    width = max(len(r["id"]) for r in rows)
    # kinds with a lifecycle (claims, pages) show where each one is in it
    status = any("status" in r for r in rows)
    return "\n".join(
        f"{r['id']:<{width}}  {r.get('type') or '':<12} "
        + (f"{r.get('status') or '':<11} " if status else "")
        + str(r.get("title", ""))
        for r in rows
    )


def _source_line(row: dict[str, Any]) -> str:
    """`4cff02906f56  file        docs/user/quickstart.rst`: a source by the id prefix
    every command takes back and the path it was registered from (its title after it
    when that is more than the file's name; a replaced version says by which)."""
    locator = str(row.get("locator") or "-")
    parts = [f"{str(row['id'])[:12]}  {row.get('type') or '':<10}  {escaped(locator)}"]
    title = _own_title(row, locator, (row.get("metadata") or {}).get("document_title"))
    if title:
        parts.append(json.dumps(title, ensure_ascii=False))
    if row.get("superseded_by"):
        parts.append(f"(superseded by {str(row['superseded_by'])[:12]})")
    return "  ".join(parts)


def _own_title(row: dict[str, Any], locator: str, in_document: Any) -> str | None:
    """A source's title when it is more than its file's name (given with --title), else
    the title its document gives itself (its first heading), else None."""
    title = row.get("title")
    if title and title not in (locator, locator.rsplit("/", 1)[-1]):
        return str(title)
    return str(in_document) if isinstance(in_document, str) and in_document else None


def registered(result: dict[str, Any]) -> str:
    """`5891b5b522d5  docs/runbook.md  "Runbook"  (already present)`: a source added, by
    its id (first, for `cut -d' ' -f1`; any 8+ digits of it are taken back), where it
    came from and its title when it has one of its own."""
    locator = str(result.get("locator") or "-")
    parts = [str(result["id"])[:12], escaped(locator)]
    title = _own_title(result, locator, result.get("document_title"))
    if title:
        parts.append(json.dumps(title, ensure_ascii=False))
    if result.get("deduplicated"):
        parts.append("(already present)")
    if result.get("supersedes"):
        older = ", ".join(str(o)[:12] for o in result["supersedes"])
        parts.append(f"(new version of {older})")
    return "  ".join(parts)


def identifier(result: dict[str, Any]) -> str:
    return str(result["id"])


def tags(rows: list[dict[str, Any]]) -> str:
    return "\n".join(f"{r['count']:>6}  {r['name']}" for r in rows) or "(no tags)"


def info(d: dict[str, Any]) -> str:
    lines = [
        f"{d['kind']} {d['id']}",
        f"  title:   {d['title']}",
        f"  type:    {d['type'] or '-'}",
        f"  status:  {d['status'] or '-'}",
        f"  tags:    {', '.join(d['tags']) or '-'}",
        f"  path:    {escaped(str(d['path']))}",
        f"  chunks:  {d['chunk_count']}",
    ]
    lines += [
        f"  §{h['text']} (level {h['level']}, lines {h['start_line']}-{h['end_line'] - 1})"
        for h in d.get("headings") or ()
    ]
    return "\n".join(lines)


def proposed(out: Any, result: dict[str, Any]) -> None:
    """The proposal id alone on stdout; what else happened on stderr. Invalid → E102."""
    from vouch.gate.propose import require_valid

    kind = next(k.removesuffix("_id") for k in result if k.endswith("_id") and k != "proposal_id")
    require_valid(result, kind)
    object_id = result.get(f"{kind}_id")
    if out.json:
        out.emit(result)
    elif result.get("duplicate") == "durable":
        out.info(f"{kind} {object_id} is already approved; nothing proposed")
    elif result.get("duplicate") == "pending":
        out.info(f"{kind} {object_id} is already pending in this proposal")
        click.echo(result["proposal_id"])
    elif result.get("duplicate") == "rejected":
        r = result["rejected"]
        why = f": {r['reason']}" if r.get("reason") else ""
        out.info(
            f"warning: this {kind} was rejected in {r['proposal_id']} by "
            f"{r.get('rejected_by') or 'a reviewer'}{why}; nothing proposed "
            "(change it, or pass --again to propose it as it is)"
        )
    elif result.get("proposal_id") is None:
        out.info(f"valid: {kind} {object_id} (dry run, nothing written)")
    else:
        click.echo(result["proposal_id"])
    waits = result.get("waits_for") or []
    if waits and not out.json:
        pids = sorted({w["proposal_id"] for w in waits})
        out.info(f"waits for {', '.join(pids)}: approve them together, dependencies first")


def pending(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "No open proposals."
    lines = [f"{'PROPOSAL':<26}{'KIND':<10}{'PROPOSER':<18}TITLE"]
    for r in rows:
        origin = "" if r["ref"].startswith("refs/heads/") else "  (remote)"
        lines.append(
            f"{r['proposal_id']:<26}{r['kind']:<10}{r['proposer'][:17]:<18}"
            f"{r['title'][:70]}{origin}{_commented(r)}"
        )
    return "\n".join(lines)


def _commented(row: dict[str, Any]) -> str:
    """`  [2 comments]`: a reviewer asked for something (`vouch show ID` has the thread)."""
    count = row.get("comments") or 0
    if not count:
        return ""
    since = ", revised since" if row.get("revised_since_comment") else ""
    return f"  [{count} comment{'s' if count != 1 else ''}{since}]"


def approved(result: dict[str, Any]) -> str:
    return f"approved {result['proposal_id']} → {result['object_kind']} {result['object_id']}"


def commented(result: dict[str, Any]) -> str:
    return f"commented on {result['proposal_id']} (revision {str(result['revision'])[:12]})"


def rejected(result: dict[str, Any]) -> str:
    verb = "withdrew your own proposal" if result.get("withdrawn") else "rejected"
    text = f"{verb} {result['proposal_id']}"
    if result.get("waited_on_by"):
        text += (
            f"\nnote: {', '.join(result['waited_on_by'])} wait(s) for it and cannot be "
            "approved as proposed"
        )
    return text


def audit(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "(no events)"
    return "\n".join(
        f"{r.get('created_at', '?'):<21} {r.get('event', '?'):<20} {str(r.get('actor'))[:20]:<21}"
        f"{' '.join(map(str, r.get('object_ids') or []))[:80]}"
        for r in rows
    )


def verified(report: dict[str, Any]) -> str:
    head = (
        f"audit log OK: {_n(report['events'], 'event')} in {_n(report['files'], 'file')}"
        if report["ok"]
        else f"audit log BROKEN: {len(report['issues'])} problem(s)"
    )
    lines = [head] + [
        f"  {i['file'] or 'history'}:{i['line'] or '-'}: {i['detail']}" for i in report["issues"]
    ]
    lines += [f"  warning: {w['detail']}" for w in report.get("warnings") or []]
    return "\n".join(lines)


def anchored(data: dict[str, Any]) -> str:
    signed = "signed " if data["signed"] else ""
    return (
        f"Anchored {data['events']} audit events at {data['commit'][:12]} in {signed}tag "
        f"{data['tag'].removeprefix('refs/tags/')}\npublish it: {data['publish']}"
    )


def rebuilt(data: dict[str, Any]) -> str:
    lines = [
        f"Indexed {_n(data['documents'], 'document')}, {_n(data['chunks'], 'chunk')} "
        f"({data['embedded']} embedded) in {data['seconds']:.2f}s"
    ]
    lines += [f"  skipped: {s}" for s in data.get("skipped", [])]
    return "\n".join(lines)


_VECTOR_SEARCH = {
    "exact": "exact search over the matrix (pip install 'vouch-git[hnsw]' adds a graph for "
    "warm servers)",
    "graph": "HNSW graph in warm processes (hnswlib), exact in a one-off command",
    "off": "off (embedding disabled)",
}


def index_status(data: dict[str, Any]) -> str:
    lines = [
        f"Index: {data['state']}" + (f" ({data['reason']})" if data.get("reason") else ""),
        f"  path:      {data['path']}" + (f" ({data['location']})" if data.get("location") else ""),
    ]
    counts = data.get("counts")
    if counts:
        kinds = ", ".join(f"{n} {k}" for k, n in counts["by_kind"].items())
        lines.append(f"  documents: {counts['documents']} ({kinds or 'none'})")
        lines.append(f"  chunks:    {counts['chunks']} ({counts['vectors']} with vectors)")
    model = data["model"]
    lines.append(
        f"  model:     {model['configured'] or 'disabled (lexical only)'}"
        + (f" [{model['id']}, {model['dims']} dims]" if model["configured"] else "")
    )
    lines.append(f"  lexical:   {data['lexical']} ({data['tokenizer']})")
    lines.append(f"  vectors:   {_VECTOR_SEARCH[data.get('vector_search', 'exact')]}")
    weights = data.get("vector_weights")
    if weights:
        lines.append(
            f"  weights:   fitted to {weights['texts']} texts of this knowledge base"
            if weights["fitted"]
            else f"  weights:   the model's own ({weights['why_not']})"
        )
    if data.get("indexed_at"):
        lines.append(f"  built:     {data['indexed_at']}  revision {data['corpus_revision']}")
    size = data["sizes"].get("total", 0)
    lines.append(f"  size:      {size / 1e6:.2f} MB")
    return "\n".join(lines)


def numbered(data: dict[str, Any]) -> str:
    """`vouch show SOURCE --content --lines 5-9`: each line after its number."""
    start = int(data["lines"]["start"])
    rows = str(data["text"]).split("\n")
    width = len(str(start + len(rows) - 1))
    return "\n".join(f"{n:>{width}}  {text}".rstrip() for n, text in enumerate(rows, start))


def turns(data: dict[str, Any]) -> str:
    """`vouch show SOURCE --turns 10-14`: one block per turn, its locator, time and
    speaker first, a blank line between sessions."""
    out: list[str] = []
    session = None
    for t in data.get("items") or []:
        if session is not None and t["session"] != session:
            out.append("")
        session = t["session"]
        when = f" {t['time']}" if t.get("time") else ""
        text = str(t["text"]).replace("\n", "\n    ")
        out.append(f"{escaped(str(t['locator']))}{when} {t['speaker']}: {text}")
    span = data["turns"]
    out.append(f"(turns {span['start']}-{span['end']} of {span['total']})")
    return "\n".join(out)


def recovered(r: dict[str, Any]) -> str:
    """What a command did with a write a killed vouch process left unfinished
    (`vouch.store.recovery.Recovered`), in one line."""
    decision = {"approved": "approval", "rejected": "rejection"}.get(r.get("decision") or "")
    proposals = ", ".join(r.get("proposals") or ())
    what = f"{decision} of proposal {proposals}" if decision and proposals else "write"
    subject = escaped(r["subject"]) if r.get("subject") else "a vouch write"
    branch = escaped(r["branch"].removeprefix("refs/heads/"))
    if r["outcome"] == "finished":
        return f"Finished an interrupted {what} on {branch} ({subject})"
    if r["outcome"] == "undone":
        return (
            f"Undid an interrupted {what} ({subject}): {branch} moved without it, so "
            "what it had written was put back; run the command again"
        )
    return (
        f"Dropped an interrupted {what} ({subject}): {branch} moved (or is gone) "
        "and another branch is checked out; run the command again"
    )
