"""Everyday commands: init, status, show, list, capabilities, call."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from vouch import ops
from vouch.callctx import CallContext
from vouch.cli import cli
from vouch.cli.options import Output, kb_command
from vouch.errors import NotFound, UsageError
from vouch.ids import check_id, is_source_id
from vouch.kinds import GATED, KINDS, kind_named


@cli.command("init")
@click.option("--path", "path", type=click.Path(file_okay=False, path_type=Path), default=".",
              help="Directory to create the knowledge base in (default: here).")
@kb_command()
def init_cmd(ctx: CallContext, out: Output, path: Path) -> None:
    """Create .vouch/ in a git work tree (running git init when needed) and commit it."""
    from vouch.initkb import init_kb

    result = init_kb(path, ctx.actor_override)

    def human(_: Any) -> str:
        if not result.created:
            return f"Already initialised: {result.root} (nothing changed)"
        prefix = "Initialised git and " if result.git_initialised else "Initialised "
        return f"{prefix}a vouch knowledge base in {result.root}"

    out.emit(result.to_json(), human)


def _status_human(data: dict[str, Any]) -> str:
    lines = [f"Knowledge base: {data['root']}"]
    lines += [f"  {name:<10} {count:>8}" for name, count in data["counts"].items()]
    lines.append(f"Pending proposals: {data['pending']}")
    lines.append(f"Last audit event: {data['last_audit_at'] or 'none'}")
    if data.get("index_state"):
        lines.append(f"Index: {data['index_state']}, {data.get('total_chunks', 0)} chunks")
    return "\n".join(lines)


@cli.command("status")
@kb_command()
def status_cmd(ctx: CallContext, out: Output) -> None:
    """Counts of knowledge, pending proposals and the last audit event."""
    out.emit(ops.invoke(ctx, "kb.status"), _status_human)


def find_object(ctx: CallContext, object_id: str) -> tuple[str, dict[str, Any]]:
    """Locate an id among the kinds: sources by sha256, the rest by file."""
    check_id(object_id)
    kb = ctx.kb
    candidates = ["source"] if is_source_id(object_id) else [*GATED, "evidence", "session"]
    for name in candidates:
        obj = kb.read(KINDS[name], object_id)
        if obj is not None:
            return name, obj
    raise NotFound(f"no object with id {object_id}", hint="`vouch list KIND` shows what exists")


def _show_human(data: dict[str, Any]) -> str:
    from vouch import yamlio

    body = data.pop("body", None) if data.get("kind") == "page" else None
    text = yamlio.dump_yaml(data).rstrip()
    return f"{text}\n\n{body}" if body else text


@cli.command("show")
@click.argument("object_id", metavar="ID")
@click.option("--section", "section", metavar="HEADING",
              help="Only this heading's section of a page or markdown source.")
@kb_command()
def show_cmd(ctx: CallContext, out: Output, object_id: str, section: str | None) -> None:
    """Show one object (claim, page, entity, relation, source, evidence, session)."""
    from vouch.ids import is_proposal_id

    if section is not None:  # issue 5: located through the index's headings table
        from vouch.search.catalog import section as find_section

        data = find_section(ctx, check_id(object_id), section)
        out.emit(data, lambda d: f"{'#' * d['level']} {d['section']}\n\n"
                 f"{d['text'].split(chr(10), 1)[-1].strip()}".rstrip())
        return

    if is_proposal_id(object_id):  # a proposal: metadata + the diff it would merge
        data = ops.invoke(ctx, "kb.read_proposal", {"id": object_id})
        out.emit(data, _show_proposal_human)
        return
    kind, obj = find_object(ctx, object_id)
    out.emit({"kind": kind, **obj}, _show_human)


def _show_proposal_human(data: dict[str, Any]) -> str:
    from vouch import yamlio

    meta = {k: v for k, v in data.items() if k not in ("diff", "object") and v}
    text = f"{yamlio.dump_yaml(meta).rstrip()}\n\n{data.get('diff') or ''}".rstrip()
    if data.get("state") == "pending" and not data.get("problems") and data.get("commit"):
        text += (f"\n\nTo approve exactly this: vouch approve {data['proposal_id']} "
                 f"--expect {str(data['commit'])[:12]}")
    return text


def _list_human(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "(none)"
    width = max(len(r["id"]) for r in rows)
    return "\n".join(f"{r['id']:<{width}}  {r.get('type') or '':<12} {r.get('title', '')}"
                     for r in rows)


def parse_filter(pairs: tuple[str, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise UsageError(f"--filter {pair!r} must look like key=value")
        if key in out:
            existing = out[key] if isinstance(out[key], list) else [out[key]]
            out[key] = [*existing, value]
        else:
            out[key] = value
    return out


@cli.command("list")
@click.argument("kind", metavar="KIND")
@click.option("--limit", type=click.IntRange(min=0), default=50, show_default=True)
@click.option("--offset", type=click.IntRange(min=0), default=0, show_default=True)
@click.option("--filter", "filters", multiple=True, metavar="KEY=VALUE",
              help="Keep objects whose field equals VALUE (list fields: contains). Repeatable.")
@kb_command()
def list_cmd(ctx: CallContext, out: Output, kind: str, limit: int, offset: int,
             filters: tuple[str, ...]) -> None:
    """List objects of a kind: claims, pages, entities, relations, sources."""
    k = kind_named(kind)
    method = f"kb.list_{k.plural}"
    if method not in ops.REGISTRY:
        raise UsageError(f"cannot list {k.plural}",
                         hint="claims, pages, entities, relations, sources")
    rows = ops.invoke(ctx, method, {"limit": limit, "offset": offset,
                                    "filter": parse_filter(filters) or None})
    from vouch.search.catalog import annotate_list  # issue 5: search-output.md fields

    annotate_list(ctx.kb, k, rows)
    out.emit(rows, _list_human)


@cli.command("capabilities")
@kb_command(default_format="json", writes_actor=False)
def capabilities_cmd(ctx: CallContext, out: Output) -> None:
    """What this vouch offers: every kb.* method with its parameters."""
    data = ops.invoke(ctx, "kb.capabilities")

    def human(d: dict[str, Any]) -> str:
        lines = [f"vouch {d['version']} — transports: {', '.join(d['transports'])}"]
        lines += [f"  {m['name']:<32} {m['scope']:<12} {m['summary']}" for m in d["methods"]]
        return "\n".join(lines)

    out.emit(data, human)


@cli.command("call")
@click.argument("method")
@click.argument("params", required=False, default="{}")
@kb_command(default_format="json")
def call_cmd(ctx: CallContext, out: Output, method: str, params: str) -> None:
    """Call any kb.* METHOD with PARAMS as a JSON object (or - to read stdin)."""
    if params == "-":
        params = sys.stdin.read()
    try:
        parsed = json.loads(params)
    except json.JSONDecodeError as exc:
        raise UsageError(f"PARAMS is not valid JSON: {exc.msg} at column {exc.colno}") from exc
    if not isinstance(parsed, dict):
        raise UsageError("PARAMS must be a JSON object")
    out.emit(ops.invoke(ctx, method, parsed))
