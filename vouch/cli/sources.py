"""`vouch source ...`: register sources (not gated; each registration is one commit)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from vouch import ops
from vouch.callctx import CallContext
from vouch.cli import cli
from vouch.cli.options import Output, kb_command, split_csv, stdin_bytes
from vouch.errors import UsageError
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
              "in one commit (symbolic links are skipped).")
@click.option("--allow-outside", is_flag=True, help="Read a file outside the repository "
              "(recorded by its absolute path). Agents can never do this.")
@kb_command()
def add_cmd(ctx: CallContext, out: Output, target: str, title: str | None, type_: str | None,
            tags: str | None, recursive: bool, allow_outside: bool) -> None:
    """Store FILE (or stdin, `-`) as a source and print its id.

    FILE must lie in the repository's work tree (not in .git/ or .vouch/) unless
    --allow-outside is given.
    """
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
        items, links = sources.intakes_under(kb, target, type_, tag_list,
                                             allow_outside=allow_outside)
        if links:
            out.info(f"skipped {len(links)} symbolic link(s), which a recursive add never "
                     "follows: " + ", ".join(str(p) for p in links[:5])
                     + (", ..." if len(links) > 5 else ""))
        if sys.stderr.isatty() and items:
            with click.progressbar(length=len(items), label="Registering", file=sys.stderr) as bar:
                last = [0]

                def advance(n: int) -> None:
                    bar.update(n - last[0])
                    last[0] = n

                results = sources.register_many(kb, items, ctx.actor(), progress=advance)
        else:
            results = sources.register_many(kb, items, ctx.actor())
    elif allow_outside:
        # a person's opt-in, so a direct library call: the registry method (what agents
        # reach) has no such parameter
        results = [sources.register_source_from_path(
            ctx.kb, ctx.actor(), target, type_, title, tag_list or None, allow_outside=True)]
    else:
        if Path(target).is_dir():
            raise UsageError(f"{target} is a directory", hint="pass --recursive to add a folder")
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
