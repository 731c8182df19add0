"""Trust over the agent transports (DESIGN §4.1): who may write, who may decide.

Agents read, register and propose as the agent the server's starter declared; a client's
self-chosen name is never an identity; approving and rejecting need a person unless the
server was started with --allow-decisions.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from mcp import Client
from servers_support import JsonlServer, kb_state
from test_servers_mcp import payload, run_client

from vouch.errors import GateRefused
from vouch.methods import registry as ops
from vouch.methods.context import CallContext
from vouch.servers import server_context
from vouch.store.kb import KB

NEEDS = (
    "kb.register_source",
    "kb.propose_claim",
    "kb.approve",
    "kb.reject",
    "kb.list_pending",
    "kb.read_proposal",
    "kb.search",
)
pytestmark = pytest.mark.skipif(
    not set(NEEDS) <= set(ops.REGISTRY), reason="the review gate and search are not registered"
)


def _audit(kb: KB) -> str:
    return (kb.dir / "audit.log.jsonl").read_text()


def _a_source(kb: KB) -> str:
    rows = ops.invoke(
        CallContext(kb_path=str(kb.root)),
        "kb.list_sources",
        {"filter": {"title": "deploy-runbook.md"}},
    )
    return str(rows[0]["id"])


def _refused(response: dict[str, Any], *words: str) -> str:
    assert response["ok"] is False and response["error"]["vouch_code"] == "E104", response
    text = response["error"]["message"] + " " + response["error"].get("hint", "")
    for word in words:
        assert word in text, text
    return text


# -- (a) one agent may not decide another agent's proposal unless a person allowed it ----
def test_jsonl_agent_decides_only_on_a_server_started_with_allow_decisions(
    kb_with_sources: KB,
) -> None:
    kb = kb_with_sources
    with JsonlServer(kb.root, env={"VOUCH_AGENT": "agent-a"}) as a:
        proposed = a.result(
            "kb.propose_claim",
            {"text": "Deploys need a green CI run.", "evidence": [_a_source(kb)]},
        )
        assert proposed["valid"] is True
        assert a.close() == 0
    proposal_id = proposed["proposal_id"]
    before, audit_before = kb_state(kb.root), _audit(kb)

    with JsonlServer(kb.root, env={"VOUCH_AGENT": "agent-b"}) as b:
        caller = b.result("kb.capabilities")["caller"]
        assert caller == {
            "transport": "jsonl",
            "agent": "agent-b",
            "may_write": True,
            "may_decide": False,
        }
        _refused(
            b.call("kb.approve", {"proposal_id": proposal_id}),
            "person",
            "vouch approve ID",
        )
        text = _refused(
            b.call("kb.reject", {"proposal_id": proposal_id, "reason": "no"}), "a person decides"
        )
        assert "--allow-decisions" not in text  # no hint suggests a way around a person
        # refused before the handler runs: an unknown proposal is not even looked up
        _refused(b.call("kb.approve", {"proposal_id": "no-such-proposal"}))
        assert b.result("kb.read_proposal", {"id": proposal_id})["state"] == "pending"
        assert b.close() == 0
    assert kb_state(kb.root) == before and _audit(kb) == audit_before

    with JsonlServer(kb.root, "--allow-decisions", env={"VOUCH_AGENT": "agent-b"}) as b:
        assert b.result("kb.capabilities")["caller"]["may_decide"] is True
        commit = b.result("kb.read_proposal", {"id": proposal_id})["commit"]
        approved = b.result(
            "kb.approve", {"proposal_id": proposal_id, "reason": "checked", "expect": commit}
        )
        assert approved["ok"] is True
        assert b.close() == 0
        assert "decisions=allowed" in b.stderr()
    decided = [json.loads(x) for x in _audit(kb).splitlines()][-1]
    assert decided["actor"] == "agent-b" and decided["data"]["proposer"] == "agent-a"


# -- (b) an MCP client's name is never an identity ---------------------------------------
def test_mcp_client_name_is_never_the_actor(kb_with_sources: KB) -> None:
    kb = kb_with_sources
    source_id = _a_source(kb)
    before, audit_before = kb_state(kb.root), _audit(kb)

    async def session(client: Client) -> dict[str, Any]:
        return {
            "caps": await client.call_tool("kb_capabilities", {}),
            "register": await client.call_tool(
                "kb_register_source", {"content": "c", "locator": "l"}
            ),
            "propose": await client.call_tool(
                "kb_propose_claim",
                {"text": "Alice says deploys are free.", "evidence": [source_id]},
            ),
            "status": await client.call_tool("kb_status", {}),
            "search": await client.call_tool("kb_search", {"query": "deploy"}),
        }

    out = run_client(kb, session, client_name="alice")
    assert payload(out["caps"])["caller"] == {
        "transport": "mcp",
        "agent": None,
        "may_write": False,
        "may_decide": False,
    }
    for refused in (out["register"], out["propose"]):
        assert refused.is_error and refused.structured_content["error"]["vouch_code"] == "E104"
        assert "VOUCH_AGENT" in refused.content[0].text
    assert not out["status"].is_error and not out["search"].is_error
    assert kb_state(kb.root) == before and _audit(kb) == audit_before
    assert "alice" not in _audit(kb)

    async def propose(client: Client) -> Any:
        result = await client.call_tool(
            "kb_propose_claim", {"text": "Deploys need a green CI run.", "evidence": [source_id]}
        )
        pending = await client.call_tool("kb_list_pending", {})
        return result, pending

    proposed, pending = run_client(kb, propose, client_name="alice", env={"VOUCH_AGENT": "bot"})
    assert not proposed.is_error, proposed.content[0].text
    [row] = payload(pending)
    assert row["proposer"] == "bot"
    assert "alice" not in _audit(kb) and "alice" not in json.dumps(payload(pending))


# -- (c) no declared agent: the server only reads ----------------------------------------
def test_jsonl_without_an_agent_reads_but_does_not_write(kb_with_sources: KB) -> None:
    kb = kb_with_sources
    before, audit_before = kb_state(kb.root), _audit(kb)
    with JsonlServer(kb.root) as server:
        text = _refused(
            server.call(
                "kb.propose_claim",
                {"text": "Deploys need a green CI run.", "evidence": [_a_source(kb)]},
            ),
            "VOUCH_AGENT",
            "agent:",
        )
        assert "Test Person" not in text
        _refused(server.call("kb.register_source", {"content": "x", "locator": "y"}))
        assert server.result("kb.status")["counts"]["sources"] == 3
        assert isinstance(server.result("kb.search", {"query": "deploy"}), list)
        assert server.result("kb.capabilities")["caller"]["may_write"] is False
        assert server.close() == 0
        assert "read-only" in server.stderr()
    assert kb_state(kb.root) == before and _audit(kb) == audit_before


def test_config_agent_is_a_declared_agent(kb: KB, monkeypatch: pytest.MonkeyPatch) -> None:
    config = kb.dir / "config.yaml"
    config.write_text(config.read_text() + "agent: config-bot\n")
    ctx = server_context("jsonl", kb_path=str(kb.dir))
    ops.invoke(ctx, "kb.register_source", {"content": "x", "locator": "y"})
    assert json.loads(_audit(kb).splitlines()[-1])["actor"] == "config-bot"
    monkeypatch.setenv("VOUCH_AGENT", "env-bot")  # the environment wins over the file
    assert ctx.actor() == "env-bot"


# -- the rule lives in one place, by scope ----------------------------------------------
def test_every_attributed_method_needs_an_agent_and_decide_needs_permission(
    kb: KB, monkeypatch: pytest.MonkeyPatch
) -> None:
    anonymous = server_context("mcp", kb_path=str(kb.dir))
    agent = server_context("jsonl", kb_path=str(kb.dir))
    allowed = server_context("jsonl", kb_path=str(kb.dir), allow_decisions=True)
    cli = CallContext(kb_path=str(kb.dir))
    for method in ops.REGISTRY.values():
        ops.authorize(cli, method)  # a person at the CLI may do everything
        if method.attributed:
            with pytest.raises(GateRefused):
                ops.authorize(anonymous, method)
        else:
            ops.authorize(anonymous, method)
    for name in ("kb.approve", "kb.reject"):
        with pytest.raises(GateRefused, match="person"):
            ops.authorize(agent, ops.REGISTRY[name])
    monkeypatch.setenv("VOUCH_AGENT", "bot")
    for method in ops.REGISTRY.values():
        if method.decides:  # and at the CLI, a declared agent never decides
            with pytest.raises(GateRefused):
                ops.authorize(agent, method)
            ops.authorize(allowed, method)
            with pytest.raises(GateRefused, match="declared agent 'bot'"):
                ops.authorize(cli, method)
        elif method.scope == "lifecycle":  # unless the committed config allows it
            with pytest.raises(GateRefused, match="reviewer's call"):
                ops.authorize(agent, method)
        else:
            ops.authorize(agent, method)
