"""The kb.* lifecycle methods (supersede, contradict, archive, confirm, cite, promote) and
source versions (source_history): issue 12. The rules live in `vouch.lifecycle`.

Who may: `lifecycle` methods run for a person at the CLI, and for an agent (JSONL, MCP)
only when the committed configuration says `review.agent_lifecycle: true`
(`ops.authorize`). `kb.promote` is a reviewer's decision (scope `decide`), allowed to
agents only on a server started with `--allow-decisions`.
"""

from __future__ import annotations

from typing import Any

from vouch.methods.context import CallContext
from vouch.methods.shape import Cli, Method, Param

_HUMAN = "vouch.cli.human_lifecycle:"
_HERE = "vouch.methods.lifecycle_methods:"
_REASON = Param(
    "reason", {"type": "string"}, description="why; recorded in the audit event and the commit"
)


def _claim(name: str, description: str = "an approved claim id") -> Param:
    return Param(name, {"type": "string"}, required=True, description=description, ids=True)


def supersede(
    ctx: CallContext, old_id: str, new_id: str, reason: str | None = None
) -> dict[str, Any]:
    from vouch.gate import lifecycle

    return lifecycle.supersede(ctx.kb, ctx.actor(), old_id, new_id, reason)


def contradict(ctx: CallContext, a_id: str, b_id: str, reason: str | None = None) -> dict[str, Any]:
    from vouch.gate import lifecycle

    return lifecycle.contradict(ctx.kb, ctx.actor(), a_id, b_id, reason)


def archive(ctx: CallContext, id: str, reason: str | None = None) -> dict[str, Any]:
    from vouch.gate import lifecycle

    return lifecycle.archive(ctx.kb, ctx.actor(), id, reason)


def confirm(ctx: CallContext, id: str) -> dict[str, Any]:
    from vouch.gate import lifecycle

    return lifecycle.confirm(ctx.kb, ctx.actor(), id)


def cite(ctx: CallContext, id: str, evidence: str) -> dict[str, Any]:
    from vouch.gate import lifecycle

    return lifecycle.cite(ctx.kb, ctx.actor(), id, evidence)


def promote(
    ctx: CallContext, id: str, status: str | None = None, reason: str | None = None
) -> dict[str, Any]:
    from vouch.gate import lifecycle

    return lifecycle.promote(ctx.kb, ctx.actor(), id, status, reason)


def source_history(ctx: CallContext, locator: str) -> list[dict[str, Any]]:
    from vouch.store import sources

    return sources.history(ctx.kb, locator)


METHODS: tuple[Method, ...] = (
    Method(
        "kb.supersede",
        "lifecycle",
        "Mark an approved claim superseded by another (old → new; cycles refused).",
        f"{_HERE}supersede",
        (
            _claim("old_id", "the claim being replaced"),
            _claim("new_id", "the approved claim that replaces it"),
            _REASON,
        ),
        writes=True,
        cli=Cli(args=("old_id", "new_id"), human=f"{_HUMAN}changed"),
    ),
    Method(
        "kb.contradict",
        "lifecycle",
        "Record that two approved claims disagree (symmetric; both become contested "
        "unless stable).",
        f"{_HERE}contradict",
        (_claim("a_id"), _claim("b_id"), _REASON),
        writes=True,
        cli=Cli(args=("a_id", "b_id"), human=f"{_HUMAN}changed"),
    ),
    Method(
        "kb.archive",
        "lifecycle",
        "Archive an approved claim or page (search hides it).",
        f"{_HERE}archive",
        (_claim("id", "an approved claim or page id"), _REASON),
        writes=True,
        cli=Cli(args=("id",), human=f"{_HUMAN}changed"),
    ),
    Method(
        "kb.confirm",
        "lifecycle",
        "Record that an approved claim was checked again (last_confirmed_at = now).",
        f"{_HERE}confirm",
        (_claim("id"),),
        writes=True,
        cli=Cli(args=("id",), human=f"{_HUMAN}changed"),
    ),
    Method(
        "kb.cite",
        "lifecycle",
        "Add a citation to an approved claim (a source id, evidence id or "
        "<source-id>:L10-L20 pointer).",
        f"{_HERE}cite",
        (
            _claim("id"),
            Param(
                "evidence",
                {"type": "string"},
                required=True,
                description="a source id, an evidence id, or <source-id>:L10-L20 (a source "
                "may be named by its path: docs/a.md:L10-L20)",
                ids=True,
            ),
        ),
        writes=True,
        cli=Cli(args=("id", "evidence"), human=f"{_HUMAN}changed"),
    ),
    Method(
        "kb.promote",
        "decide",
        "A reviewer's step up: working → actionable → stable (one rung by default).",
        f"{_HERE}promote",
        (
            _claim("id"),
            Param(
                "status",
                {"type": "string", "enum": ["actionable", "stable"]},
                description="the status to reach (default: the next rung)",
            ),
            _REASON,
        ),
        writes=True,
        cli=Cli(args=("id",), human=f"{_HUMAN}changed"),
    ),
    Method(
        "kb.source_history",
        "read",
        "The versions of the source at a locator (path, URL), newest first.",
        f"{_HERE}source_history",
        (
            Param(
                "locator",
                {"type": "string"},
                required=True,
                description="the locator `source add` recorded, or a path to one",
            ),
        ),
        cli=Cli(verb=("source", "history"), args=("locator",), human=f"{_HUMAN}history"),
    ),
)
