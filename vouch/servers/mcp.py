"""The MCP transport: every registered kb.* method as an MCP tool, over stdio.

Built on the official SDK's low-level `Server`, because the tool list and each tool's
input JSON Schema come from the registry (`Method.tool_name`, `Method.input_schema()`),
not from Python signatures. The tools listed are the registry filtered by the server's
tool set (`--tools`, `vouch.methods.toolsets`): an agent's by default, every method
with `--tools full`; a tool outside the set is unknown here.

Error semantics (MCP's own): an unknown tool is a protocol error (JSON-RPC -32602, as the
MCP spec shows for "Unknown tool"). Everything a tool call itself gets wrong — missing or
mistyped arguments, not found, refused by the review gate, internal failures — comes back
as a tool result with `isError: true`, so the model sees the message and can correct
itself. That result's text is `error[<vouch_code>]: message`, and its
`structuredContent` is `{"error": {code, message, vouch_code, ...}}` with the same codes as
the JSONL transport.

Results: the text content is the method's JSON result, also given as `structuredContent`:
the object itself, or `{"result": …}` around anything else (a search's hit array, a
listing, a read's null), since structured content is always an object.

Calls run one at a time on the event loop's thread: the warm index (SQLite connections
are bound to the thread that opened them) and the single-writer lock assume it, and a
stdio server has one client.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

from vouch import __version__
from vouch.methods import registry as ops
from vouch.methods import toolsets
from vouch.methods.context import CallContext
from vouch.servers import log_ready
from vouch.servers.errors import error_body

log = logging.getLogger("vouch.serve.mcp")

INSTRUCTIONS = (
    "vouch is this repository's reviewed knowledge base. Search it (kb_search) before "
    "answering questions about the project; cite claim ids and source titles. Add "
    "knowledge with kb_register_source and kb_propose_*: proposals wait for a person to "
    "approve them (`vouch approve ID` at the CLI); kb_approve and kb_reject are a person's "
    "unless they started this server with --allow-decisions. Never approve your own "
    "proposal. kb_capabilities says (`caller`) whether you may write and decide. See SKILL.md."
)


def tools(ctx: CallContext | None = None) -> list[types.Tool]:
    """The tools served to `ctx` (its tool set: `vouch.methods.toolsets`), or every one."""
    methods = ops.served(ctx) if ctx is not None else list(ops.REGISTRY.values())
    return [
        types.Tool(
            name=method.tool_name,
            description=f"{method.summary} ({method.name}; scope: {method.scope})",
            input_schema=method.input_schema(),
            annotations=types.ToolAnnotations(
                read_only_hint=method.scope == "read" and not method.writes,
                # proposals and intake only add files; decisions and lifecycle edits change
                # approved knowledge (MCP assumes destructive unless told otherwise)
                destructive_hint=method.scope in ("decide", "lifecycle"),
                open_world_hint=False,
            ),
        )
        for method in methods
    ]


def _method_for_tool(ctx: CallContext, name: str) -> ops.Method:
    for method in ops.REGISTRY.values():
        if method.tool_name == name:
            if ops.serves(ctx, method):
                return method
            raise MCPError(
                code=types.INVALID_PARAMS,
                message=f"Unknown tool: {name} (not served: {toolsets.FULL_HINT})",
                data={"code": "method_not_found", "vouch_code": ops.MethodNotFound.code},
            )
    raise MCPError(
        code=types.INVALID_PARAMS,
        message=f"Unknown tool: {name}",
        data={"code": "method_not_found", "vouch_code": ops.MethodNotFound.code},
    )


def _text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def call(ctx: CallContext, name: str, arguments: dict[str, Any] | None) -> types.CallToolResult:
    """Run one tool call; every failure but an unknown tool is an `isError` result."""
    method = _method_for_tool(ctx, name)
    try:
        result = ops.invoke(ctx, method.name, arguments or {})
        if method.name == "kb.approve" and isinstance(result, dict):
            from vouch.servers.warm_stop import after_forgetting

            after_forgetting(ctx.kb, result.get("approved") or [result])  # as jsonl
        text = _text(result)
    except (Exception, SystemExit) as exc:  # a failed call for the model; serving goes on
        body = error_body(exc)
        if body["code"] == "internal_error":
            log.error("%s failed", method.name, exc_info=exc)
        message = f"error[{body['vouch_code']}]: {body['message']}"
        if body.get("hint"):
            message += f" ({body['hint']})"
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=message)],
            structured_content={"error": body},
            is_error=True,
        )
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content=result if isinstance(result, dict) else {"result": result},
    )


def _client_name(rctx: ServerRequestContext[Any]) -> str:
    params = rctx.session.client_params
    return params.client_info.name if params and params.client_info else ""


def build_server(ctx: CallContext) -> Server[Any]:
    # The client names itself in `clientInfo`; that name is only logged, never an identity
    # (DESIGN §4.1): anyone can claim any name. The actor is what the starter declared.
    last_name: list[str] = []

    async def list_tools(
        rctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools(ctx))

    async def call_tool(
        rctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        name = _client_name(rctx)[:200]
        if last_name != [name]:  # once, and again only when it changes
            last_name[:] = [name]
            log.info("MCP client calls itself %r (logged only: not an identity)", name)
        return call(ctx, params.name, params.arguments)

    def input_schema(name: str) -> dict[str, Any] | None:
        try:
            return _method_for_tool(ctx, name).input_schema()
        except MCPError:
            return None

    return Server(
        "vouch",
        version=__version__,
        instructions=INSTRUCTIONS,
        get_tool_input_schema=input_schema,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def run_stdio(ctx: CallContext) -> int:
    server = build_server(ctx)
    log_ready(log, ctx, "MCP")

    async def main() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(main)
    return 0
