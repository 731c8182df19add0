"""The kb.* methods of schema migrations (issue 38 item 4): declarations and handlers.
The work lives in `vouch.migrate`; applying is a person's decision, like approving."""

from __future__ import annotations

from typing import Any

from vouch.methods.context import CallContext
from vouch.methods.shape import Cli, Method

_HERE = "vouch.methods.migrate_methods:"
_HUMAN = "vouch.cli.human_migrate:"


def migrate_plan(ctx: CallContext) -> dict[str, Any]:
    from vouch.migrate.plan import plan

    return plan(ctx.kb)


def migrate_apply(ctx: CallContext) -> dict[str, Any]:
    from vouch.migrate.apply import apply

    return apply(ctx.kb, ctx.actor())


METHODS: tuple[Method, ...] = (
    Method(
        "kb.migrate_plan",
        "maintenance",
        "What upgrading the committed knowledge to this vouch's schema version would "
        "change, step by step and file by file ({version, target, current, steps}); "
        "writes nothing.",
        f"{_HERE}migrate_plan",
        cli=Cli(verb=("migrate", "plan"), human=f"{_HUMAN}plan"),
    ),
    Method(
        "kb.migrate_apply",
        "maintenance",
        "Upgrade the committed knowledge to this vouch's schema version in one audited "
        "commit (`git revert` it to roll back); refused with uncommitted changes in "
        ".vouch/ or open proposals it would break (a person's decision).",
        f"{_HERE}migrate_apply",
        writes=True,
        cli=Cli(verb=("migrate", "apply"), human=f"{_HUMAN}applied"),
        decision=True,
    ),
)
