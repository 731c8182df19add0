"""What every kb.* handler receives: the knowledge base, who is acting, and warm state."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vouch.core.progress import Progress
from vouch.store.kb import KB

if TYPE_CHECKING:
    from vouch.gate.identity import Identity


@dataclass
class CallContext:
    kb_path: str | None = None  # --kb / VOUCH_KB; None walks up from `start`
    start: Path | None = None
    actor_override: str | None = None  # --as on the CLI: a label, never an identity
    agent: str | None = None  # a library caller's declared agent (else VOUCH_AGENT/config)
    trusted: bool = True  # may `approver` override the actor? (servers: --trusted-host)
    transport: str = "cli"
    allow_decisions: bool = False  # servers: --allow-decisions (at the CLI: no declared agent)
    tools: str = "full"  # the methods served: "full", or "agent" (`vouch.methods.toolsets`)
    warm: dict[str, Any] = field(default_factory=dict)  # long-lived caches (index, model)
    progress: Progress | None = None  # the CLI's bar on a terminal; never over a server
    _kb: KB | None = None

    @property
    def kb(self) -> KB:
        if self._kb is None:
            self._kb = KB.open(self.start, self.kb_path)
        return self._kb

    @property
    def may_decide(self) -> bool:
        """May this caller decide (approve, reject, promote, anchor, import)? At the CLI
        the person, unless VOUCH_AGENT says an agent is acting; over a
        transport only when the server's starter allowed it (DESIGN §4.1)."""
        if self.transport == "cli":
            return self.cli_agent() is None
        return self.allow_decisions

    def cli_agent(self) -> str | None:
        """The agent VOUCH_AGENT declares, or None (config `agent` is for servers). (A
        library caller's own `agent` is not counted: it runs in-process, trusted like the
        person running it.)"""
        from vouch.methods.actor import configured_actor

        return configured_actor(self.kb)

    def actor(self) -> str:
        """Who is acting (the identity's name); over a transport only a declared agent
        (else GateRefused)."""
        return self.identity().name

    def identity(self) -> Identity:
        """The acting principal: a git identity, or a declared agent run by one; `--as`
        rides along as a label (DESIGN §4.1)."""
        from vouch.methods.actor import configured_actor, declared_agent, identity

        if self.transport == "cli":
            return identity(self.kb, configured_actor(self.kb, self.agent), self.actor_override)
        agent = configured_actor(self.kb, self.agent, server=True) or declared_agent(
            self.kb, self.transport
        )
        return identity(self.kb, agent)
