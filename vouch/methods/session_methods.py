"""The kb.* methods for sessions and crystallize (issue 12): declarations and handlers.

A session is opened and closed by direct audited commits (`vouch.sessions`); the
proposals made in it are read back from git and crystallized into a proposed page
(`vouch.gate.crystallize`). Handlers import the core when called, so declaring these
costs a cold CLI nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vouch.methods.shape import Cli, Method, Param

if TYPE_CHECKING:
    from vouch.methods.context import CallContext

_HUMAN = "vouch.cli.human_session:"
_SESSION_ID = Param(
    "session_id", {"type": "string"}, required=True, description="the id kb.session_start returned"
)


def session_start(
    ctx: CallContext, task: str | None = None, note: str | None = None
) -> dict[str, Any]:
    from vouch.store import sessions

    return sessions.start(ctx.kb, ctx.actor(), task, note)


def session_end(ctx: CallContext, session_id: str, transcript: str | None = None) -> dict[str, Any]:
    from vouch.gate.crystallize import end_session

    return end_session(ctx.kb, ctx.actor(), session_id, transcript)


def crystallize(ctx: CallContext, session_id: str, no_page: bool = False) -> dict[str, Any]:
    from vouch.gate.crystallize import crystallize as crystallize_session

    return crystallize_session(ctx.kb, ctx.identity(), session_id, no_page=no_page)


METHODS: tuple[Method, ...] = (
    Method(
        "kb.session_start",
        "session",
        "Open a work session; pass its id as session_id to the proposals made in it.",
        "vouch.methods.session_methods:session_start",
        (
            Param("task", {"type": "string"}, description="what the session works on"),
            Param("note", {"type": "string"}),
        ),
        writes=True,
        cli=Cli(verb=("session", "start"), human=f"{_HUMAN}started"),
    ),
    Method(
        "kb.session_end",
        "session",
        "Close a session; counts (and records) the proposals made in it.",
        "vouch.methods.session_methods:session_end",
        (
            _SESSION_ID,
            Param(
                "transcript",
                {"type": "string"},
                ids=True,
                description="the session's transcript: a source registered with type "
                "transcript, whose turns its proposals cite (SOURCE:T12)",
            ),
        ),
        writes=True,
        cli=Cli(verb=("session", "end"), args=("session_id",), human=f"{_HUMAN}ended"),
    ),
    Method(
        "kb.crystallize",
        "session",
        "Propose a session-summary page linking the session's proposals and claims, "
        "flagging the promotable claims for review (never approves).",
        "vouch.methods.session_methods:crystallize",
        (
            _SESSION_ID,
            Param(
                "no_page",
                {"type": "boolean"},
                default=False,
                description="only report the proposals and promotable claims",
            ),
        ),
        writes=True,
        cli=Cli(args=("session_id",), human=f"{_HUMAN}crystallized"),
    ),
)
