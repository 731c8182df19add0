"""The MCP transport, driven by the official SDK's own stdio client."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError

from vouch.methods import registry as ops
from vouch.servers import mcp as mcp_server
from vouch.servers import server_context
from vouch.store.kb import KB


def run_client(
    kb: KB,
    session: Callable[[Client], Awaitable[Any]],
    *,
    client_name: str,
    env: dict[str, str] | None = None,
    args: tuple[str, ...] = (),
    mode: str = "auto",
) -> Any:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "vouch", "serve", "--transport", "mcp", "--kb", str(kb.root), *args],
        cwd=str(kb.root),
        env={**os.environ, **(env or {})},
    )

    async def main() -> Any:
        info = types.Implementation(name=client_name, version="1.0")
        async with Client(params, client_info=info, mode=mode) as client:
            return await session(client)

    return anyio.run(main)


def payload(result: types.CallToolResult) -> Any:
    assert result.content and result.content[0].type == "text"
    return json.loads(result.content[0].text)


def test_tools_are_generated_from_the_registry(kb: KB) -> None:
    ctx = server_context("mcp", kb_path=str(kb.dir))
    tools = {t.name: t for t in mcp_server.tools()}
    assert set(tools) == {m.tool_name for m in ops.REGISTRY.values()}
    for method in ops.REGISTRY.values():
        assert tools[method.tool_name].input_schema == method.input_schema()
    status, register = tools["kb_status"].annotations, tools["kb_register_source"].annotations
    assert status is not None and status.read_only_hint is True
    assert register is not None and register.read_only_hint is False
    result = mcp_server.call(ctx, "kb_read_claim", {"id": 3})
    assert result.is_error and result.structured_content["error"]["code"] == "invalid_request"
    with pytest.raises(MCPError) as exc:
        mcp_server.call(ctx, "kb.status", {})  # JSONL's spelling is not a tool name
    assert exc.value.code == types.INVALID_PARAMS


def test_sdk_client_session(kb_with_sources: KB) -> None:
    kb = kb_with_sources
    have_gate = {"kb.propose_claim", "kb.search"} <= set(ops.REGISTRY)

    async def session(client: Client) -> dict[str, Any]:
        out: dict[str, Any] = {}
        listed = await client.list_tools()
        out["tools"] = {t.name: t.input_schema for t in listed.tools}
        out["status"] = await client.call_tool("kb_status", {})
        out["missing"] = await client.call_tool("kb_read_claim", {})
        out["spoof"] = await client.call_tool(
            "kb_register_source", {"content": "x", "locator": "y", "actor": "alice"}
        )
        out["registered"] = await client.call_tool(
            "kb_register_source",
            {
                "content": "Release trains leave every second Tuesday.\n",
                "locator": "notes/rel",
                "title": "Release notes",
            },
        )
        try:
            await client.call_tool("kb_no_such_tool", {})
        except MCPError as exc:
            out["unknown"] = exc
        if have_gate:
            sid = payload(out["registered"])["id"]
            out["proposed"] = await client.call_tool(
                "kb_propose_claim",
                {"text": "Release trains leave every second Tuesday.", "evidence": [sid]},
            )
            out["search"] = await client.call_tool("kb_search", {"query": "release train"})
        out["status_after"] = await client.call_tool("kb_status", {})
        return out

    out = run_client(
        kb,
        session,
        client_name="test-agent",
        env={"VOUCH_AGENT": "mcp-bot"},
        args=("--tools", "full"),
    )

    assert set(out["tools"]) == {m.tool_name for m in ops.REGISTRY.values()}
    assert out["tools"]["kb_read_claim"]["required"] == ["id"]

    status = out["status"]
    assert not status.is_error and payload(status)["counts"]["sources"] == 3
    assert status.structured_content == payload(status)

    missing = out["missing"]
    assert missing.is_error
    assert missing.structured_content["error"]["code"] == "missing_param"
    assert missing.content[0].text.startswith("error[E100]:")

    assert out["spoof"].is_error and "unknown parameter" in out["spoof"].content[0].text
    assert not out["registered"].is_error
    assert out["unknown"].code == types.INVALID_PARAMS
    assert "kb_no_such_tool" in out["unknown"].message

    # the actor is the declared agent, never the name the client gave itself
    events = [json.loads(x) for x in (kb.dir / "audit.log.jsonl").read_text().splitlines()]
    registered = [e for e in events if e["event"] == "source.register"]
    assert registered[-1]["actor"] == "mcp-bot"
    assert "test-agent" not in json.dumps(events)

    if not have_gate:
        pytest.skip(
            "kb.propose_claim / kb.search not registered yet (other issues); "
            "status, errors and intake over MCP passed"
        )
    proposed = payload(out["proposed"])
    assert not out["proposed"].is_error and proposed["valid"] is True
    assert payload(out["status_after"])["pending"] == 1
    assert isinstance(payload(out["search"]), list)
    # structured content is an object: a hit array comes wrapped
    assert out["search"].structured_content == {"result": payload(out["search"])}


def test_vouch_agent_wins_over_client_name(kb: KB) -> None:
    async def session(client: Client) -> Any:
        return await client.call_tool("kb_register_source", {"content": "c", "locator": "l"})

    result = run_client(kb, session, client_name="claimed-name", env={"VOUCH_AGENT": "env-bot"})
    assert not result.is_error
    last = json.loads((kb.dir / "audit.log.jsonl").read_text().splitlines()[-1])
    assert last["actor"] == "env-bot"


def test_legacy_handshake_client_name_is_not_the_actor(kb: KB) -> None:
    async def session(client: Client) -> Any:
        first = await client.call_tool("kb_register_source", {"content": "a", "locator": "l"})
        return first, client.protocol_version

    result, version = run_client(
        kb, session, client_name="legacy-agent", mode="legacy", env={"VOUCH_AGENT": "env-bot"}
    )
    assert not result.is_error and version < "2026"
    last = json.loads((kb.dir / "audit.log.jsonl").read_text().splitlines()[-1])
    assert last["actor"] == "env-bot"
