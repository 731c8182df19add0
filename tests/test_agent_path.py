"""The agent's path, end to end (issue 18, "done when"): over the CLI, over JSONL and over
the MCP SDK client an agent searches, cites from the hit, proposes two entities, a relation and a
page listing a new claim in one sitting; a reviewer comments at the CLI; the agent
revises; the reviewer approves them all together; search then finds each approved
object with its evidence."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from vouch.servers import jsonl, server_context
from vouch.store.kb import KB

Call = Callable[[str, dict[str, Any]], Awaitable[Any]]
AGENT = "helper-agent"


async def propose_in_one_sitting(call: Call) -> dict[str, Any]:
    [hit] = await call("kb.search", {"query": "freeze window deploys", "kinds": ["source"],
                                     "limit": 1})  # fmt: skip
    cite = hit["cite"]
    assert hit["source"]["lines"] and cite.endswith(
        f":L{hit['source']['lines'][0]}-L{hit['source']['lines'][1]}"
    )
    claim = await call("kb.propose_claim", {"text": "Deploys stop during a freeze window.",
                                            "evidence": [cite]})  # fmt: skip
    ship = await call("kb.propose_entity", {"name": "ship", "type": "tool"})
    billing = await call("kb.propose_entity", {"name": "billing service", "type": "system"})
    rel = await call(
        "kb.propose_relation",
        {"source": billing["entity_id"], "relation": "uses", "target": ship["entity_id"],
         "evidence": [hit["id"]]},
    )  # fmt: skip
    page = await call(
        "kb.propose_page",
        {"title": "Deploy freeze", "body": "Freeze\n======\n\nNo deploys.\n",
         "claims": [claim["claim_id"]], "entities": [ship["entity_id"]]},
    )  # fmt: skip
    for made in (claim, ship, billing, rel, page):
        assert made["valid"] is True and made["proposal_id"], made
    assert len(rel["waits_for"]) == 2 and len(page["waits_for"]) == 2
    return {"claim": claim, "ship": ship, "billing": billing, "rel": rel, "page": page}


async def revise_after_review(call: Call, made: dict[str, Any]) -> dict[str, Any]:
    claim = made["claim"]
    shown = await call("kb.read_proposal", {"id": claim["proposal_id"]})
    assert [c["author"] for c in shown["comments"]] == ["bob"]
    revised = await call(
        "kb.revise_proposal",
        {"proposal_id": claim["proposal_id"], "text": "Deploys stop during every freeze window.",
         "rationale": "per review"},
    )  # fmt: skip
    assert revised["valid"] and revised["revision"] == 2
    page = await call(
        "kb.revise_proposal",
        {"proposal_id": made["page"]["proposal_id"], "claims": [revised["claim_id"]]},
    )
    assert page["valid"] and page["changed"], page
    return {**made, "claim": {**claim, "claim_id": revised["claim_id"]}}


def as_bob(run_cli: Any, *args: str, cwd: Path) -> Any:
    """`vouch ARGS` run by bob, a person at the same machine as git knows him — not the
    agent the environment declares (who acts is a git identity, never `--as`)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("VOUCH_AGENT", raising=False)
        mp.setenv("GIT_COMMITTER_NAME", "bob")
        mp.setenv("GIT_COMMITTER_EMAIL", "bob@example.invalid")
        return run_cli(*args, cwd=cwd)


def review_and_approve(kb: KB, run_cli, made: dict[str, Any]) -> None:
    pids = [made[k]["proposal_id"] for k in ("page", "rel", "claim", "ship", "billing")]
    for pid in pids:  # a reviewer looks at each (pinning the revision shown)
        assert as_bob(run_cli, "show", pid, cwd=kb.root).code == 0
    res = as_bob(run_cli, "approve", *pids, "--json", cwd=kb.root)
    assert res.code == 0, res.err
    order = [r["proposal_id"] for r in res.json()]
    assert order.index(made["rel"]["proposal_id"]) > order.index(made["ship"]["proposal_id"])
    assert order.index(made["page"]["proposal_id"]) > order.index(made["claim"]["proposal_id"])


def found_with_evidence(kb: KB, run_cli, made: dict[str, Any]) -> None:
    for kind, query, key in (
        ("claim", "deploys stop during every freeze window", "claim"),
        ("relation", "billing service uses ship", "rel"),
        ("page", "deploy freeze no deploys", "page"),
    ):
        res = run_cli("search", query, "--kind", kind, "--json", cwd=kb.root)
        hits = [r for r in res.json()["results"] if r["id"] == made[key][f"{kind}_id"]]
        assert hits, (kind, res.json()["results"][:2])
        assert hits[0]["evidence"], hits[0]


def walk_with_a_comment(kb: KB, run_cli: Any, call: Call) -> None:
    """The whole path through `call`, with a reviewer's comment from the CLI between
    the agent's proposal and its revision."""
    made = anyio.run(propose_in_one_sitting, call)
    said = as_bob(run_cli, "comment", made["claim"]["proposal_id"], "say every window",
                  cwd=kb.root)  # fmt: skip
    assert said.code == 0, said.err
    made = anyio.run(revise_after_review, call, made)
    review_and_approve(kb, run_cli, made)
    found_with_evidence(kb, run_cli, made)


def _jsonl_caller(kb: KB) -> Call:
    ctx = server_context("jsonl", kb_path=str(kb.dir))
    counter = iter(range(1, 1000))

    async def call(method: str, params: dict[str, Any]) -> Any:
        line = json.dumps({"id": next(counter), "method": method, "params": params})
        response = jsonl.handle_line(ctx, line.encode())
        assert response["ok"], (method, response)
        return response["result"]

    return call


def test_the_agents_path_over_jsonl(
    kb_with_sources: KB, run_cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    kb = kb_with_sources
    monkeypatch.setenv("VOUCH_AGENT", AGENT)
    call = _jsonl_caller(kb)
    walk_with_a_comment(kb, run_cli, call)


def test_the_agents_path_over_the_mcp_sdk_client(kb_with_sources: KB, run_cli) -> None:
    kb = kb_with_sources
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "vouch", "serve", "--transport", "mcp", "--kb", str(kb.root)],
        cwd=str(kb.root),
        env={**os.environ, "VOUCH_AGENT": AGENT},
    )

    async def session() -> dict[str, Any]:
        info = types.Implementation(name="an-agent", version="1.0")
        async with Client(params, client_info=info) as client:

            async def call(method: str, arguments: dict[str, Any]) -> Any:
                result = await client.call_tool(method.replace(".", "_"), arguments)
                assert not result.is_error, (method, result)
                assert result.content and result.content[0].type == "text"
                return json.loads(result.content[0].text)

            made = await propose_in_one_sitting(call)
            # the reviewer comments at the CLI while the agent's session stays open
            await anyio.to_thread.run_sync(
                lambda: as_bob(
                    run_cli,
                    "comment",
                    made["claim"]["proposal_id"],
                    "say every window",
                    cwd=kb.root,
                )
            )
            return await revise_after_review(call, made)

    made = anyio.run(session)
    review_and_approve(kb, run_cli, made)
    found_with_evidence(kb, run_cli, made)


def test_the_agents_path_over_the_cli(
    kb_with_sources: KB, run_cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same path with every agent step a `vouch call METHOD JSON` command, as an
    agent with only a shell would take it."""
    kb = kb_with_sources
    monkeypatch.setenv("VOUCH_AGENT", AGENT)

    async def call(method: str, params: dict[str, Any]) -> Any:
        res = run_cli("call", method, json.dumps(params), "--json", cwd=kb.root)
        assert res.code == 0, (method, res.err)
        return res.json()

    walk_with_a_comment(kb, run_cli, call)
