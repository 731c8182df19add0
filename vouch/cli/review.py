"""`vouch review`: the open proposals one at a time on a terminal, like `git add -p`.

Each proposal is shown as `vouch show` shows it (the cited lines, look-alikes, the
diff), then a person answers: approve (exactly the commit shown), reject with a reason,
comment, skip, or quit — a whole word or its letter alone (`answers`); anything else
asks again, and the end of input quits without deciding. Every answer goes through
the registry's kb.approve / kb.reject, so the gate's rules hold here as everywhere.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from vouch.cli import cli
from vouch.cli.answers import answer_of
from vouch.cli.human_review import proposal as screen_text
from vouch.cli.oneline import screen as shown
from vouch.cli.options import Output, kb_command
from vouch.errors import UsageError, VouchError
from vouch.methods import registry as ops
from vouch.methods.context import CallContext

_HELP = """approve (a) - approve this proposal (exactly the commit shown)
reject (r)  - reject it (you are asked for a reason)
comment (c) - comment on it without deciding (you are asked for the text)
skip (s)    - skip it for now
quit (q)    - quit; the proposals not answered stay open
help (?)    - this help
Type the whole word or its letter alone; anything else decides nothing."""


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
        try:
            typed = click.prompt(
                f"{position} Approve {proposal_id} [a,r,c,s,q,?]", default="", show_default=False
            )
        except click.Abort:  # end of input (or Ctrl-C): nothing more is decided
            click.echo("")
            return "quit"
        choice = answer_of(typed)
        try:
            if choice == "approve":
                params = {"proposal_id": proposal_id, "expect": screen["commit"]}
                result = ops.invoke(ctx, "kb.approve", params)
                made = f"{result['object_kind']} {result['object_id']}"
                click.echo(f"approved {proposal_id} → {made}")
                return "approved"
            if choice == "reject":
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
            if choice == "comment":
                text = click.prompt("Comment").strip()
                if not text:
                    click.echo("a comment needs text")
                    continue
                ops.invoke(ctx, "kb.comment_proposal", {"proposal_id": proposal_id, "text": text})
                click.echo(f"commented on {proposal_id}")
                continue
        except click.Abort:  # end of input while asked for a reason or a comment
            click.echo("")
            return "quit"
        except VouchError as exc:  # refused (e.g. your own proposal): say why, ask again
            click.echo(shown(f"error[{exc.code}]: {exc}"))
            continue
        if choice == "skip":
            return "skipped"
        if choice == "quit":
            return "quit"
        if choice is None and typed.strip():
            click.echo(f"{typed.strip()!r} is not an answer here; nothing was decided")
        click.echo(_HELP)
