"""`vouch source ...`: register sources (not gated; each registration is one commit)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from vouch import ops
from vouch.callctx import CallContext
from vouch.cli import cli
from vouch.cli.options import Output, kb_command, split_csv, stdin_bytes
from vouch.kinds import source as source_kind


@cli.group("source")
def source_group() -> None:
    """Register and inspect sources."""


@source_group.command("add")
@click.argument("target", metavar="FILE|-")
@click.option("--title", help="Title (default: the file name).")
@click.option("--type", "type_", type=click.Choice(source_kind.TYPES), help="Source type.")
@click.option("--tags", help="Comma-separated tags.")
@click.option("--recursive", "-r", is_flag=True, help="Add every file below a directory, "
              "in one commit.")
@kb_command()
def add_cmd(ctx: CallContext, out: Output, target: str, title: str | None, type_: str | None,
            tags: str | None, recursive: bool) -> None:
    """Store FILE (or stdin, `-`) as a source and print its id."""
    from vouch import sources

    tag_list = split_csv(tags)
    if target == "-":
        result = sources.register_many(
            ctx.kb,
            [sources.Intake(stdin_bytes(), type_ or "file", "stdin", title, "text/plain",
                            tuple(tag_list))],
            ctx.actor(),
        )[0]
        results = [result]
    elif recursive and Path(target).is_dir():
        kb = ctx.kb
        paths = sources.files_under(Path(target))
        items = [sources.intake_for_path(kb, p, type_, None, tag_list) for p in paths]
        if sys.stderr.isatty() and items:
            with click.progressbar(length=len(items), label="Registering", file=sys.stderr) as bar:
                last = [0]

                def advance(n: int) -> None:
                    bar.update(n - last[0])
                    last[0] = n

                results = sources.register_many(kb, items, ctx.actor(), progress=advance)
        else:
            results = sources.register_many(kb, items, ctx.actor())
    else:
        results = [ops.invoke(ctx, "kb.register_source_from_path", {
            "path": target, "type": type_, "title": title, "tags": tag_list or None,
        })]
    if out.json:
        out.emit(results if len(results) != 1 or recursive else results[0])
    else:
        for r in results:
            click.echo(r["id"])
        dups = sum(1 for r in results if r["deduplicated"])
        if dups:
            out.info(f"{dups} already registered (deduplicated)")
