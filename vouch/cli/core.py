"""The commands that are not one registry method: init, show (any id), call (any method)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from vouch.cli import cli, human
from vouch.cli.options import Output, kb_command
from vouch.core import safeload
from vouch.core.ids import check_id, is_source_id
from vouch.errors import NotFound, Redacted, UsageError
from vouch.kinds import GATED, KINDS
from vouch.kinds import source as source_kind
from vouch.methods import registry as ops
from vouch.methods.context import CallContext


@cli.command("init")
@click.option(
    "--path",
    "path",
    type=click.Path(file_okay=False, path_type=Path),
    default=".",
    help="Directory to create the knowledge base in (default: here).",
)
@kb_command()
def init_cmd(ctx: CallContext, out: Output, path: Path) -> None:
    """Create .vouch/ in a git work tree (running git init when needed) and commit it."""
    from vouch.store.initkb import init_kb

    result = init_kb(path, ctx.actor_override)

    def describe(_: Any) -> str:
        finished = human.recovered(result.recovered.to_json()) if result.recovered else ""
        if not result.created:
            if finished:
                return f"Already initialised: {result.root}\n{finished}"
            return f"Already initialised: {result.root} (nothing changed)"
        prefix = "Initialised git and " if result.git_initialised else "Initialised "
        made = f"{prefix}a vouch knowledge base in {result.root}"
        return f"{made}\n{finished}" if finished else made

    out.emit(result.to_json(), describe)


def find_object(ctx: CallContext, object_id: str) -> tuple[str, dict[str, Any]]:
    """Locate an id among the kinds: sources by sha256, the rest by file, then in open
    proposals (a proposed claim, the evidence a proposal makes), marked `pending_in`."""
    from vouch.gate.pending import find_pending_object

    check_id(object_id)
    kb = ctx.kb
    candidates = ["source"] if is_source_id(object_id) else [*GATED, "evidence", "session"]
    for name in candidates:
        obj = kb.read(KINDS[name], object_id)
        if obj is not None:
            return name, obj
    pending = find_pending_object(kb, object_id, (*GATED, "evidence"))
    if pending is not None:
        kind, obj, proposal = pending
        return kind, {**obj, "pending_in": proposal.id}
    raise NotFound(f"no object with id {object_id}", hint="`vouch list KIND` shows what exists")


@cli.command("show")
@click.argument("object_id", metavar="ID")
@click.option(
    "--section",
    "section",
    metavar="HEADING",
    help="Only this heading's section of a page or markdown source.",
)
@click.option("--content", is_flag=True, help="A source's text (its content file).")
@click.option("--lines", "lines", metavar="A-B", help="With --content: only these lines (1-based).")
@click.option(
    "--turns",
    "turns",
    metavar="A-B",
    help="A transcript source's turns A to B (T12-T14 or 12-14; `all` for every turn).",
)
@kb_command()
def show_cmd(
    ctx: CallContext,
    out: Output,
    object_id: str,
    section: str | None,
    content: bool,
    lines: str | None,
    turns: str | None,
) -> None:
    """Show one object (claim, page, entity, relation, source, evidence, session) or a
    proposal as a reviewer sees it (`--format markdown`: as a pull-request description).
    Ids only an open proposal holds are found there. A source may be named by its path:
    `docs/a.rst` (its current version), `docs/a.rst:L5-L9` (those lines of it)."""
    from vouch.core.ids import is_proposal_id
    from vouch.store import source_names

    # a source by the prefix output prints, or by its path
    object_id, span = _source_span(source_names.resolve(ctx.kb, object_id))
    if span is not None and (lines is not None or turns is not None or section is not None):
        raise UsageError(
            f"{object_id[:12]}:{span} names its lines already; drop --lines/--turns/--section"
        )
    if span is not None and span.startswith("T"):
        turns = span
    elif span is not None:
        content, lines = True, span

    if lines is not None and not content:
        raise UsageError(
            "--lines goes with --content", hint="vouch show SOURCE --content --lines 10-20"
        )
    if turns is not None:
        _show_turns(ctx, out, object_id, turns)
        return
    if content:
        from vouch.history.citations import source_text
        from vouch.history.snapshot import Snapshot

        if not is_source_id(object_id):
            raise UsageError(
                f"--content shows a source's text; {object_id} is not a source id",
                hint="`vouch list sources` lists them",
            )
        found = source_text(Snapshot(ctx.kb), object_id, lines)
        out.emit(found, human.numbered if lines is not None else lambda d: d["text"])
        return

    if section is not None:  # issue 5: located through the index's headings table
        from vouch.core.headings import without_heading
        from vouch.search.catalog import section as find_section

        data = find_section(ctx, check_id(object_id), section)
        out.emit(
            data,
            lambda d: (
                f"{'#' * max(1, d['level'])} {d['section']}\n\n{without_heading(d['text'])}"
            ).rstrip(),
        )
        return

    if is_proposal_id(object_id):  # the review screen
        from vouch.cli.human_review import emit

        emit(out, ops.invoke(ctx, "kb.read_proposal", {"id": object_id}))
        return
    kind, obj = find_object(ctx, object_id)
    out.emit({"kind": kind, **obj}, human.read)


def _source_span(value: str) -> tuple[str, str | None]:
    """(`<source-id>`, `L5-L9`/`T12`) for a source pointer, else (value, None)."""
    from vouch.store.evidence import parse_pointer

    pointer = parse_pointer(value)
    if pointer is None:
        return value, None
    sid, span = pointer
    if span.startswith(("L", "T")):
        return sid, span
    raise UsageError(
        f"vouch show takes a source with a line or turn span; {span!r} is neither",
        hint=f"vouch show {sid[:12]} --section HEADING shows one section",
    )


def _show_turns(ctx: CallContext, out: Output, object_id: str, span: str) -> None:
    from vouch.store import turns as transcript_turns

    if not is_source_id(object_id):
        raise UsageError(
            f"--turns shows a transcript's turns; {object_id} is not a source id",
            hint="`vouch list sources` lists them",
        )
    meta = ctx.kb.read(KINDS["source"], object_id)
    if source_kind.is_redacted(meta):
        raise Redacted(f"source {object_id} was redacted by a decision: its turns are gone")
    data = ctx.kb.source_content(object_id) if meta is not None else None
    if meta is None or data is None:
        raise NotFound(f"no source {object_id}", hint="`vouch list sources` lists them")
    found = transcript_turns.show(meta, data, None if span == "all" else span)
    out.emit(found, human.turns)


@cli.command("call")
@click.argument("method")
@click.argument("params", required=False, default="{}")
@kb_command(default_format="json")
def call_cmd(ctx: CallContext, out: Output, method: str, params: str) -> None:
    """Call any kb.* METHOD with PARAMS as a JSON object (or - to read stdin)."""
    if params == "-":
        params = sys.stdin.read()
    try:
        parsed = safeload.json_value(params, "PARAMS")
    except safeload.Unreadable as exc:
        raise UsageError(f"PARAMS: {exc.detail}") from None
    if not isinstance(parsed, dict):
        raise UsageError("PARAMS must be a JSON object")
    out.emit(ops.invoke(ctx, method, parsed))
