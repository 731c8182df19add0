"""Who is acting: `--as`, then VOUCH_AGENT, then config.yaml `agent`, then git user.name."""

from __future__ import annotations

import os

from vouch import git, yamlio
from vouch.errors import UsageError
from vouch.kb import KB


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
