"""Which kb.* methods a server serves: every one (`full`), or an agent's (`agent`).

An agent host lists every tool it is given in the model's context, so the default for an
agent is the set its work needs: find and read knowledge (status, search, context, one
object, its own proposals), register what it cites, propose, revise and comment, and group its
work in sessions — the registry's intake, propose and session scopes, and the reads
declared `agent_read`. Deciding (scope `decide`) joins them when the person who starts
the server allows it (`--allow-decisions`); lifecycle edits, listings, history and
maintenance need `--tools full`. The set is the registry filtered: a method declared
tomorrow in one of these scopes is served to agents without a second list to keep.

The set is what a server lists and what it answers: a call to a method outside it is
refused like an unknown method, saying how to get the full set.
"""

from __future__ import annotations

from vouch.methods.shape import Method

TOOLSETS = ("agent", "full")
AGENT_SCOPES = ("intake", "propose", "session")
FULL_HINT = "this server serves the agent tool set; the person who starts it may pass --tools full"


def serves(method: Method, toolset: str, *, allow_decisions: bool = False) -> bool:
    if toolset == "full":
        return True
    if method.scope in AGENT_SCOPES or method.agent_read:
        return True
    return allow_decisions and method.scope == "decide"


def default_for(transport: str) -> str:
    """MCP is how agent hosts connect: the agent's set. JSONL (scripts) and the CLI: all."""
    return "agent" if transport == "mcp" else "full"
