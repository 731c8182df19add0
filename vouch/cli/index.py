"""`vouch index rebuild|status`: the derived search index."""

from __future__ import annotations

import sys
from typing import Any

import click

from vouch import ops
from vouch.callctx import CallContext
from vouch.cli import cli
from vouch.cli.options import Output, kb_command


@cli.group("index")
def index_group() -> None:
    """The derived search index under .vouch/index/ (a cache; safe to delete)."""


def _rebuild_human(data: dict[str, Any]) -> str:
    lines = [f"Indexed {data['documents']} documents, {data['chunks']} chunks "
             f"({data['embedded']} embedded) in {data['seconds']:.2f}s"]
    lines += [f"  skipped: {s}" for s in data.get("skipped", [])]
    return "\n".join(lines)


@index_group.command("rebuild")
@click.option("--force", is_flag=True,
              help="Replace an index that belongs to another knowledge base (E003).")
@kb_command(writes_actor=False)
def rebuild_cmd(ctx: CallContext, out: Output, force: bool) -> None:
    """Rebuild the whole index aside and swap it in atomically."""
    if not sys.stderr.isatty():
        out.emit(ops.invoke(ctx, "kb.index_rebuild", {"force": force}), _rebuild_human)
        return
    from vouch.index.api import rebuild_index

    bars: dict[str, Any] = {}

    def progress(stage: str, done: int, total: int) -> None:
        for name in [n for n in bars if n != stage]:  # a new stage ends the previous bar
            bars.pop(name).render_finish()
        if stage in ("done", "vectors"):
            if stage == "vectors":
                click.echo("Writing vectors, graph and full-text index...", err=True)
            return
        bar = bars.get(stage)
        if bar is None:
            bar = bars[stage] = click.progressbar(length=total, label=stage.capitalize(),
                                                  file=sys.stderr)
        bar.update(done - bar.pos)

    report = rebuild_index(ctx.kb, force=force, progress=progress)
    out.emit({"ok": True, "indexed": report.documents, **report.to_json()}, _rebuild_human)


def _status_human(data: dict[str, Any]) -> str:
    lines = [f"Index: {data['state']}" + (f" ({data['reason']})" if data.get("reason") else ""),
             f"  path:      {data['path']}"]
    counts = data.get("counts")
    if counts:
        kinds = ", ".join(f"{n} {k}" for k, n in counts["by_kind"].items())
        lines.append(f"  documents: {counts['documents']} ({kinds or 'none'})")
        lines.append(f"  chunks:    {counts['chunks']} ({counts['vectors']} with vectors)")
    model = data["model"]
    lines.append(f"  model:     {model['configured'] or 'disabled (lexical only)'}"
                 + (f" [{model['id']}, {model['dims']} dims]" if model["configured"] else ""))
    lines.append(f"  lexical:   {data['lexical']} ({data['tokenizer']})")
    if data.get("indexed_at"):
        lines.append(f"  built:     {data['indexed_at']}  revision {data['corpus_revision']}")
    size = data["sizes"].get("total", 0)
    lines.append(f"  size:      {size / 1e6:.2f} MB")
    return "\n".join(lines)


@index_group.command("status")
@kb_command(writes_actor=False)
def status_cmd(ctx: CallContext, out: Output) -> None:
    """fresh / stale / missing / corrupt, with counts, model and sizes. Changes nothing."""
    from vouch.index.methods import index_status

    out.emit(index_status(ctx), _status_human)
