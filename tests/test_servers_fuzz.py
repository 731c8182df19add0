"""Fuzz one long-lived JSONL server: random bytes, random JSON, random params.

Properties: every line gets exactly one well-formed response (in order, echoing a usable
id); the process never dies; a request that failed left the repository unchanged.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from servers_support import JsonlServer, kb_state

from vouch.methods import registry as ops
from vouch.servers.errors import CODES
from vouch.store.kb import KB

# Methods whose parameters are filesystem paths to read or write are left out of the
# random-params strategy: random text must not make the test write outside its tmp dir.
_PATH_PARAMS = {"path", "out", "output", "dir", "directory", "file", "dest", "target"}
METHODS = sorted(
    m.name for m in ops.REGISTRY.values() if not _PATH_PARAMS & {p.name for p in m.params}
)
PARAM_NAMES = sorted({p.name for m in ops.REGISTRY.values() for p in m.params} - _PATH_PARAMS)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
ids = st.none() | st.integers() | st.text(max_size=10) | st.floats() | st.booleans()


@st.composite
def random_requests(draw: st.DrawFn) -> bytes:
    request: dict[str, Any] = {}
    if draw(st.booleans()):
        request["id"] = draw(ids)
    request["method"] = draw(st.sampled_from(METHODS) | st.text(max_size=12))
    if draw(st.integers(0, 4)):
        request["params"] = draw(
            st.dictionaries(
                st.sampled_from(PARAM_NAMES) | st.text(max_size=6), json_values, max_size=4
            )
        )
    else:
        request["params"] = draw(json_values)
    return json.dumps(request).encode()


def _one_line(data: bytes) -> bytes:
    data = data.replace(b"\n", b" ").replace(b"\r", b" ")
    return data if data.strip() else data + b"x"


lines = st.one_of(
    st.binary(max_size=120).map(_one_line),
    json_values.map(lambda v: json.dumps(v).encode()),
    random_requests(),
)


def _well_formed(response: dict[str, Any], sent: bytes) -> None:
    assert set(response) in ({"id", "ok", "result"}, {"id", "ok", "error"}), response
    assert isinstance(response["ok"], bool)
    if not response["ok"]:
        error = response["error"]
        assert error["code"] in CODES and isinstance(error["message"], str)
        assert isinstance(error["vouch_code"], str) and error["vouch_code"]
    try:
        request = json.loads(sent)
    except ValueError:
        return
    if isinstance(request, dict) and response["id"] is not None:
        assert response["id"] == request.get("id")


def test_fuzzed_lines_each_get_one_response_and_failures_change_nothing(
    kb_with_sources: KB,
) -> None:
    root = kb_with_sources.root
    server = JsonlServer(root, env={"VOUCH_AGENT": "fuzzer"})
    state = {"before": kb_state(root), "requests": 0, "failed": 0}

    @settings(
        max_examples=150, deadline=None, database=None, suppress_health_check=list(HealthCheck)
    )
    @given(line=lines)
    def check(line: bytes) -> None:
        server.send_raw(line + b"\n")
        response = server.response()
        _well_formed(response, line)
        assert server.proc.poll() is None, "the server died"
        state["requests"] += 1
        after = kb_state(root)
        if response["ok"]:
            state["before"] = after  # a successful write may change the repository
        else:
            state["failed"] += 1
            assert after == state["before"], f"failed request changed the repo: {line!r}"

    try:
        check()
        # the server is still serving, and says so
        assert server.call("kb.status")["ok"]
        assert server.no_more_output()
        assert server.close() == 0
    finally:
        server.__exit__()
    assert state["failed"] > state["requests"] // 2  # the fuzzing mostly hit error paths


def test_fuzzed_mcp_tool_calls_always_return_a_result(kb_with_sources: KB) -> None:
    """In-process over the MCP adapter: any arguments to any tool give a CallToolResult."""
    from vouch.servers import mcp as mcp_server
    from vouch.servers import server_context

    root = kb_with_sources.root
    ctx = server_context("mcp", kb_path=str(kb_with_sources.dir), tools="full")  # every tool
    tools = sorted(ops.REGISTRY[name].tool_name for name in METHODS)
    state = {"before": kb_state(root)}

    @settings(
        max_examples=100, deadline=None, database=None, suppress_health_check=list(HealthCheck)
    )
    @given(
        tool=st.sampled_from(tools),
        arguments=st.dictionaries(
            st.sampled_from(PARAM_NAMES) | st.text(max_size=6), json_values, max_size=4
        ),
    )
    def check(tool: str, arguments: dict[str, Any]) -> None:
        result = mcp_server.call(ctx, tool, arguments)
        assert result.content and result.content[0].type == "text"
        after = kb_state(root)
        if result.is_error:
            error = result.structured_content["error"]
            assert error["code"] in CODES and error["vouch_code"]
            assert after == state["before"], f"failed call changed the repo: {tool} {arguments}"
        else:
            json.loads(result.content[0].text)
            state["before"] = after

    check()
