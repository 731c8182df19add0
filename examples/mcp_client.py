#!/usr/bin/env python3
"""An MCP client, the official `mcp` SDK, against `vouch serve --transport mcp`: what an
agent host (Claude Code, an IDE) does. It lists the tools (an agent's set: search, read,
register, propose; `--tools full` serves every method), searches and proposes.

The server, not the client, decides who acts: VOUCH_AGENT in the server's environment.
The name the client gives itself is only a name.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError

from _helpers import REVIEWER, Scratch, check, run, say


def data(result: mcp_types.CallToolResult) -> Any:
    """A vouch tool answers with its JSON result as text."""
    check(not result.is_error, f"tool error: {result.content}")
    first = result.content[0]
    check(isinstance(first, mcp_types.TextContent), f"not text: {first}")
    assert isinstance(first, mcp_types.TextContent)
    return json.loads(first.text)


async def agent(s: Scratch, kb: Path) -> str:
    """The agent's side: returns the id of the proposal it made."""
    server = StdioServerParameters(
        command=sys.executable,  # `vouch serve ...` when vouch is on PATH
        args=["-m", "vouch", "serve", "--transport", "mcp"],
        cwd=str(kb),
        env={**s.env, "VOUCH_AGENT": "mcp-agent"},
    )
    me = mcp_types.Implementation(name="example-host", version="1.0")
    async with Client(server, client_info=me) as client:
        tools = {t.name for t in (await client.list_tools()).tools}
        check({"kb_search", "kb_propose_claim"} <= tools, f"tools: {tools}")
        check("kb_approve" not in tools, "an agent's tool set holds kb_approve")
        say(f"list_tools → {len(tools)} tools, an agent's set (kb_search, kb_propose_claim, …)")

        query = {"query": "where are invoices stored", "limit": 3}
        hits = data(await client.call_tool("kb_search", query))
        top = hits[0]
        check("PostgreSQL" in top["text"], f"top hit: {top['text'][:200]}")
        say(f"kb_search '{query['query']}' → {top['source']['title']} §{top['source']['section']}")

        made = data(
            await client.call_tool(
                "kb_propose_claim",
                {
                    "text": "The billing service stores invoices in PostgreSQL 15.",
                    "evidence": [top["cite"]],
                    "type": "fact",
                },
            )
        )
        say(f"kb_propose_claim → proposal {made['proposal_id']}")

        try:
            await client.call_tool("kb_approve", {"proposal_id": made["proposal_id"]})
        except MCPError as exc:
            check("not served" in exc.message, exc.message)
        else:
            check(False, "the agent approved its own proposal")
        say("kb_approve → not served: deciding is a person's (`vouch approve` at the CLI)")
        return str(made["proposal_id"])


def main(s: Scratch) -> None:
    kb = s.knowledge_base("billing", "architecture-notes.md")
    s.vouch("source", "add", "docs/architecture-notes.md", cwd=kb)
    say("vouch init; vouch source add docs/architecture-notes.md")
    say("VOUCH_AGENT=mcp-agent vouch serve --transport mcp, started by the SDK's stdio client")

    pid = anyio.run(agent, s, kb)

    pending = s.vouch_json("pending", cwd=kb)
    check(
        [(p["proposal_id"], p["proposer"]) for p in pending] == [(pid, "mcp-agent")], f"{pending}"
    )
    s.review(pid, cwd=kb)
    s.as_reviewer("approve", pid, cwd=kb)
    hits = s.vouch_json("search", "invoices PostgreSQL", "--kind", "claim", cwd=kb)["results"]
    check(hits and "PostgreSQL 15" in hits[0]["text"], f"claim search: {hits}")
    say(f"vouch approve {pid}, as {REVIEWER}; vouch search --kind claim finds the claim")


if __name__ == "__main__":
    run(main)
