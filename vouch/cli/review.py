"""`vouch review`: the open proposals one at a time on a terminal, like `git add -p`.

Each proposal is shown as `vouch show` shows it (the cited lines, look-alikes, the
diff), then a person answers: approve (exactly the commit shown), reject with a reason,
skip, or quit. Every answer goes through the registry's kb.approve / kb.reject, so the
gate's rules hold here as everywhere.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from vouch.cli import cli
from vouch.cli.human_review import proposal as screen_text
from vouch.cli.oneline import screen as shown
from vouch.cli.options import Output, kb_command
from vouch.errors import UsageError, VouchError
from vouch.methods import registry as ops
from vouch.methods.context import CallContext

_HELP = """a - approve this proposal (exactly the commit shown)
r - reject it (you are asked for a reason)
s - skip it for now
q - quit; the proposals not answered stay open
? - this help"""


@cli.command("review")
@kb_command()
def review_cmd(ctx: CallContext, out: Output) -> None:
    """Walk the open proposals one at a time: approve, reject with a reason, skip or
    quit (like `git add -p`)."""
    if not _terminal():
        raise UsageError(
            "vouch review asks a person at a terminal, and standard input is not one",
            hint="script it with `vouch pending`, `vouch show ID` and "
            "`vouch approve ID --expect COMMIT` or `vouch reject ID --reason ...`",
        )
    rows = ops.invoke(ctx, "kb.list_pending", {"limit": 1_000_000})
    if not rows:
        click.echo("No open proposals.")
        return
    tally = {"approved": 0, "rejected": 0, "skipped": 0}
    for n, row in enumerate(rows, 1):
        answer = _one(ctx, row["proposal_id"], f"({n}/{len(rows)})")
        if answer == "quit":
            tally["skipped"] += len(rows) - n + 1
            break
        tally[answer] += 1
    click.echo(", ".join(f"{v} {k}" for k, v in tally.items()))


def _terminal() -> bool:
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (OSError, ValueError):  # closed, or replaced by something that is no file
        return False


def _one(ctx: CallContext, proposal_id: str, position: str) -> str:
    screen: dict[str, Any] = ops.invoke(ctx, "kb.read_proposal", {"id": proposal_id})
    click.echo(shown(screen_text(screen)))
    click.echo("")
    if screen.get("state") != "pending" or screen.get("problems"):
        click.echo(f"{position} {proposal_id} cannot be approved as it stands; skipped")
        return "skipped"
    while True:
        choice = click.prompt(
            f"{position} Approve {proposal_id} [a,r,s,q,?]", default="", show_default=False
        )
        choice = choice.strip().lower()[:1]
        try:
            if choice == "a":
                params = {"proposal_id": proposal_id, "expect": screen["commit"]}
                result = ops.invoke(ctx, "kb.approve", params)
                made = f"{result['object_kind']} {result['object_id']}"
                click.echo(f"approved {proposal_id} → {made}")
                return "approved"
            if choice == "r":
                reason = click.prompt("Reason for rejecting").strip()
                if not reason:
                    click.echo("a rejection needs a reason")
                    continue
                ops.invoke(
                    ctx,
                    "kb.reject",
                    {"proposal_id": proposal_id, "reason": reason, "expect": screen["commit"]},
                )
                click.echo(f"rejected {proposal_id}")
                return "rejected"
        except VouchError as exc:  # refused (e.g. your own proposal): say why, ask again
            click.echo(shown(f"error[{exc.code}]: {exc}"))
            continue
        if choice == "s":
            return "skipped"
        if choice == "q":
            return "quit"
        click.echo(_HELP)
