"""`vouch hooks install`: the plain git pre-commit hook, for clones without the
pre-commit framework (which uses `.pre-commit-hooks.yaml` instead)."""

from __future__ import annotations

from typing import Any

import click

from vouch.cli import cli
from vouch.cli.options import Output, kb_command
from vouch.methods.context import CallContext


@cli.group("hooks")
def hooks_group() -> None:
    """Git hooks that run vouch's checks."""


@hooks_group.command("install")
@click.option(
    "--force",
    is_flag=True,
    help="Move a pre-commit hook vouch did not write to pre-commit.legacy (it "
    "keeps running, before vouch's check) instead of refusing.",
)
@kb_command(writes_actor=False)
def install_cmd(ctx: CallContext, out: Output, force: bool) -> None:
    """Install .git/hooks/pre-commit: `vouch lint --staged` before every commit that
    stages knowledge files."""
    from vouch.health.hooks import install

    result = install(ctx.kb, force=force)

    def describe(r: dict[str, Any]) -> str:
        lines = [
            f"{'Updated' if r['updated'] else 'Installed'} {r['path']}: "
            "`vouch lint --staged` runs before each commit that stages knowledge files"
        ]
        if r["legacy"]:
            lines.append(f"The previous hook moved to {r['legacy']} and still runs first.")
        return "\n".join(lines)

    out.emit(result, describe)
