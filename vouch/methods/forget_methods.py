"""kb.forget: plan, and with a typed confirmation perform, the purge of an object's bytes
from history (`vouch.forget`). Performing is a person's decision at the CLI only: it
rewrites the history every clone shares, so no agent transport performs it, even one
started with --allow-decisions; any transport may read the plan."""

from __future__ import annotations

from typing import Any

from vouch.errors import GateRefused, UsageError
from vouch.methods.context import CallContext
from vouch.methods.shape import Cli, Method, Param, string_list


def forget(
    ctx: CallContext,
    id: str,
    purge_history: bool = False,
    also: list[str] | None = None,
    token: list[str] | None = None,
    confirm: str | None = None,
) -> dict[str, Any]:
    from vouch.forget import plan, run

    if not purge_history:
        raise UsageError(
            "forget rewrites history: say so with --purge-history",
            hint="to remove an object from approved knowledge without rewriting history, "
            "propose its deletion or redaction (`vouch delete ID --reason ...`)",
        )
    ids = [id, *(also or [])]
    if confirm is None:
        return {"mode": "plan", **plan.make(ctx.kb, ids, token or []).to_json(ctx.kb)}
    if ctx.transport != "cli":
        raise GateRefused(
            f"kb.forget: purging history is a person's decision at the CLI, never over "
            f"{ctx.transport} (not even with --allow-decisions)",
            hint=f"tell the user: `vouch forget {' '.join(ids)} --purge-history` shows the "
            "plan, and they confirm it themselves",
        )
    from vouch.methods.deciding import require_decider

    require_decider(ctx, "kb.forget")
    return {"mode": "purged", **run.perform(ctx.kb, ids, token or [], confirm, ctx.actor())}


METHODS: tuple[Method, ...] = (
    Method(
        "kb.forget",
        "maintenance",
        "Plan the purge of an object's bytes from every commit, ref and reflog of this "
        "clone (what holds them, which remotes and clones keep them, what would run); "
        "with confirm (a person at the CLI) rewrite history with git's own tools, expire "
        "reflogs, prune, clear the index and search log, and audit it without content.",
        "vouch.methods.forget_methods:forget",
        (
            Param(
                "id",
                {"type": "string"},
                required=True,
                description="the object or source id",
                ids=True,
            ),
            Param(
                "purge_history",
                {"type": "boolean"},
                default=False,
                description="required: this rewrites history",
            ),
            Param(
                "also", string_list(), description="more ids forgotten in the same purge", ids=True
            ),
            Param(
                "token",
                string_list(),
                description="a literal string to find in every other blob and message "
                "(a secret pasted into a transcript); messages are scrubbed, a file that "
                "is not a forgotten object's stops the purge",
            ),
            Param(
                "confirm",
                {"type": "string"},
                description="the ids the plan names (comma-separated): performs the purge",
            ),
        ),
        writes=True,
        cli=Cli(verb=("forget",), args=("id",), human="vouch.cli.human_forget:forget"),
    ),
)
