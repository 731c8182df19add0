"""Who is acting.

At the CLI: `--as`, then VOUCH_AGENT, then config.yaml `agent`, then git user.name — a
person at their own terminal. Over an agent transport (JSONL, MCP) only what the person
who started the server declared: VOUCH_AGENT, then config `agent`. Nothing a client
sends (a request parameter, an MCP client name) is ever an identity, and a server with
no declared agent never falls back to the git user: it only reads (DESIGN §4.1).
"""

from __future__ import annotations

import os

from vouch import git
from vouch.core import yamlio
from vouch.errors import GateRefused, UsageError
from vouch.store.kb import KB

AGENT_HINT = (
    "start the server with VOUCH_AGENT=<agent name> (e.g. `VOUCH_AGENT=claude-code "
    "vouch serve`), or set `agent: <name>` in .vouch/config.yaml"
)


def configured_actor(kb: KB, explicit: str | None = None) -> str | None:
    """The actor named by `--as`, VOUCH_AGENT or config `agent`; None when none is set."""
    for candidate in (explicit, os.environ.get("VOUCH_AGENT"), kb.config.get("agent")):
        if isinstance(candidate, str) and candidate.strip():
            if not yamlio.is_storable_text(candidate):
                raise UsageError(f"actor name {candidate!r} holds bytes that are not UTF-8")
            return candidate.strip()
    return None


def resolve_actor(kb: KB, explicit: str | None = None) -> str:
    return configured_actor(kb, explicit) or git.config_value(kb.root, "user.name") or "unknown"


def declared_agent(kb: KB, transport: str) -> str:
    """The agent a server acts as; refused (E104) when its starter declared none.

    GateRefused rather than UsageError: the request itself is fine and the agent cannot
    fix it by changing it; only the person who starts the server can.
    """
    actor = configured_actor(kb)
    if actor is None:
        raise GateRefused(
            f"this {transport} server has no declared agent, so it only reads: "
            "writes need to know who is writing",
            hint=AGENT_HINT,
        )
    return actor
