"""`vouch serch` → "No such command 'serch'. Did you mean 'search'?".

Commands are built lazily (`vouch.cli._LazyGroup`, `vouch.cli.build.VerbGroup`), so
click knows only the ones built so far when it reports an unknown one; the groups ask
here first, with every name they could build.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

import click

MAX_SUGGESTIONS = 4


def suggestions(name: str, commands: Sequence[str]) -> list[str]:
    """The commands `name` was probably meant to be: those it begins (`propose` →
    propose-claim, ...), else the closest spellings."""
    started = [c for c in commands if c.startswith(name)] if len(name) >= 3 else []
    if started:
        return started[:MAX_SUGGESTIONS]
    return difflib.get_close_matches(name, commands, n=MAX_SUGGESTIONS, cutoff=0.6)


def check(group: click.Group, ctx: click.Context, args: list[str]) -> None:
    """A usage error naming the commands an unknown `args[0]` resembles; nothing when
    it is a command (or an option, or there is nothing close)."""
    if not args or ctx.resilient_parsing or args[0].startswith("-"):
        return
    name = args[0]
    if group.get_command(ctx, name) is not None:
        return
    close = suggestions(name, group.list_commands(ctx))
    if close:
        said = repr(close[0]) if len(close) == 1 else "one of " + ", ".join(map(repr, close))
        raise click.UsageError(f"No such command {name!r}. Did you mean {said}?", ctx)
