"""The JSONL transport, in-process for the envelope rules and as a real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from servers_support import JsonlServer, kb_state

from vouch.kinds import BY_PLURAL
from vouch.methods import registry as ops
from vouch.servers import jsonl, server_context
from vouch.servers.errors import CODES
from vouch.store.kb import KB


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (b"not json", "not valid JSON"),
        (b"\xff\xfe{}", "not valid UTF-8"),
        (b"[1, 2]", "must be a JSON object"),
        (b'"kb.status"', "must be a JSON object"),
        (b'{"id": 1, "method": "kb.status", "params": {"x": NaN}}', "NaN"),
        (b'{"id": 1.5, "method": "kb.status"}', "id must be"),
        (b'{"id": {"a": 1}, "method": "kb.status"}', "id must be"),
        (b'{"id": true, "method": "kb.status"}', "id must be"),
        (b'{"id": "\\ud800", "method": "kb.status"}', "id must be valid Unicode"),
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
    ],
    ids=lambda v: v[:40] if isinstance(v, bytes) else None,
)
def test_malformed_lines_get_invalid_request_with_null_id(
    kb: KB, line: bytes, message: str
) -> None:
    ctx = server_context("jsonl", kb_path=str(kb.dir))
    response = jsonl.handle_line(ctx, line)
    assert response["id"] is None and response["ok"] is False
    assert response["error"]["code"] == "invalid_request"
    assert response["error"]["vouch_code"] == "E100"
    assert message in response["error"]["message"]
    jsonl.encode(response).decode("ascii")  # always encodable


@pytest.mark.parametrize(
    ("request_", "code"),
    [
        ({"id": 7}, "invalid_request"),
        ({"id": 7, "method": ""}, "invalid_request"),
        ({"id": 7, "method": 3}, "invalid_request"),
        ({"id": 7, "method": "kb.status", "params": [1]}, "invalid_request"),
        ({"id": 7, "method": "kb.status", "params": "x"}, "invalid_request"),
        (
            {
                "id": 7,
                "method": "kb.register_source",
                "params": {"content": "\ud800", "locator": "x"},
            },
            "invalid_request",
        ),
        ({"id": 7, "method": "kb.nope"}, "method_not_found"),
        ({"id": 7, "method": "kb_status"}, "method_not_found"),  # MCP's spelling is not JSONL's
        ({"id": 7, "method": "kb.read_claim"}, "missing_param"),
        ({"id": 7, "method": "kb.read_claim", "params": {"id": None}}, "missing_param"),
        ({"id": 7, "method": "kb.read_claim", "params": {"id": 5}}, "invalid_request"),
        ({"id": 7, "method": "kb.read_claim", "params": {"id": "../../etc"}}, "invalid_request"),
        ({"id": 7, "method": "kb.list_claims", "params": {"limit": -1}}, "invalid_request"),
        ({"id": 7, "method": "kb.status", "params": {"actor": "someone-else"}}, "invalid_request"),
        # review: a limit beyond SQLite's integers was an internal_error (OverflowError)
        (
            {"id": 7, "method": "kb.search", "params": {"query": "x", "limit": 10**30}},
            "invalid_request",
        ),
        (
            {"id": 7, "method": "kb.search", "params": {"query": "x", "statuses": ["bogus"]}},
            "invalid_request",
        ),
    ],
)
def test_bad_requests_keep_their_id_and_get_the_spec_code(
    kb: KB, request_: dict, code: str
) -> None:
    ctx = server_context("jsonl", kb_path=str(kb.dir))
    line = json.dumps(request_).encode()
    response = jsonl.handle_line(ctx, line)
    assert response == {"id": 7, "ok": False, "error": response["error"]}
    assert response["error"]["code"] == code
    assert set(response["error"]) >= {"code", "message", "vouch_code"}


def _explode(ctx: object) -> None:
    raise ZeroDivisionError("a bug")


def _exit(ctx: object) -> None:
    raise SystemExit(3)


def test_a_bug_in_a_handler_is_internal_error(kb: KB, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(
        ops.REGISTRY,
        "kb.explode",
        ops.Method("kb.explode", "read", "test only", f"{__name__}:_explode"),
    )
    monkeypatch.setitem(
        ops.REGISTRY, "kb.exit", ops.Method("kb.exit", "read", "test only", f"{__name__}:_exit")
    )
    ctx = server_context("jsonl", kb_path=str(kb.dir))
    response = jsonl.handle_line(ctx, b'{"id": 3, "method": "kb.explode"}')
    assert response["id"] == 3 and response["error"]["code"] == "internal_error"
    assert response["error"]["vouch_code"] == "E200"
    assert "ZeroDivisionError" in response["error"]["message"]
    assert (
        jsonl.handle_line(ctx, b'{"id": 4, "method": "kb.exit"}')["error"]["code"]
        == "internal_error"
    )  # a handler cannot end the server
    assert jsonl.handle_line(ctx, b'{"id": 5, "method": "kb.status"}')["ok"] is True


def test_system_failure_is_internal_error(kb: KB) -> None:
    ctx = server_context("jsonl", kb_path=str(kb.dir))
    (kb.dir / "config.yaml").write_text("agent: [unclosed\n")  # a broken file: E2xx system error
    ctx.kb.__dict__.pop("config", None)
    response = jsonl.handle_line(
        ctx,
        b'{"id": 1, "method": "kb.register_source", "params": {"content": "x", "locator": "y"}}',
    )
    assert response["ok"] is False and response["error"]["code"] == "internal_error"
    assert response["error"]["vouch_code"].startswith("E2")


def test_request_without_id_is_answered_with_null_id(kb: KB) -> None:
    ctx = server_context("jsonl", kb_path=str(kb.dir))
    response = jsonl.handle_line(ctx, b'{"method": "kb.status", "jsonrpc": "2.0"}')
    assert response["id"] is None and response["ok"] is True
    assert response["result"]["counts"]["claims"] == 0


def test_subprocess_session_basics(kb_with_sources: KB) -> None:
    root = kb_with_sources.root
    with JsonlServer(root) as server:
        caps = server.result("kb.capabilities")
        assert {"cli", "jsonl", "mcp"} <= set(caps["transports"])
        assert {m["name"] for m in caps["methods"]} == set(ops.REGISTRY)
        status = server.result("kb.status")
        assert status["counts"]["sources"] == 3 and status["root"] == str(kb_with_sources.dir)
        sources = server.result("kb.list_sources", {"limit": 2})
        assert len(sources) == 2

        # several requests in one write, blank lines between them, CRLF endings
        server.send_raw(
            b'{"id": "a", "method": "kb.status"}\r\n\n   \n'
            b'garbage\n{"id": "b", "method": "kb.nope"}\n'
        )
        first, second, third = server.response(), server.response(), server.response()
        assert first["id"] == "a" and first["ok"]
        assert second == {"id": None, "ok": False, "error": second["error"]}
        assert second["error"]["code"] == "invalid_request"
        assert third["id"] == "b" and third["error"]["code"] == "method_not_found"
        assert server.no_more_output()  # blank lines got no response

        # a request that is not answered yet when EOF arrives is still answered
        server.send_raw(b'{"id": "last", "method": "kb.status"}')
        assert server.close() == 0
        assert server.response()["id"] == "last"
        assert "JSONL server ready" in server.stderr()


def test_oversized_and_invalid_utf8_lines_do_not_stop_the_server(kb: KB) -> None:
    with JsonlServer(kb.root, "--max-line-bytes", "4096") as server:
        big = json.dumps(
            {
                "id": 1,
                "method": "kb.register_source",
                "params": {"content": "x" * 50_000, "locator": "big"},
            }
        ).encode()
        server.send_raw(big + b"\n")
        response = server.response()
        assert response["id"] is None and response["error"]["code"] == "invalid_request"
        assert "longer than 4096 bytes" in response["error"]["message"]
        server.send_raw(b'{"id": "\xc3\x28", "method": "kb.status"}\n')
        assert "UTF-8" in server.response()["error"]["message"]
        assert server.call("kb.status")["ok"]
        assert kb.count(BY_PLURAL["sources"]) == 0
        assert server.close() == 0


def test_identity_comes_from_the_server_environment(kb: KB) -> None:
    with JsonlServer(kb.root, env={"VOUCH_AGENT": "agent-7"}) as server:
        refused = server.call(
            "kb.register_source", {"content": "hi", "locator": "l", "actor": "alice"}
        )
        assert refused["error"]["code"] == "invalid_request"
        assert "unknown parameter" in refused["error"]["message"]
        server.result("kb.register_source", {"content": "hi", "locator": "l"})
        assert server.close() == 0
    last = (kb.dir / "audit.log.jsonl").read_text().splitlines()[-1]
    assert json.loads(last)["actor"] == "agent-7"


def test_missing_knowledge_base_fails_at_start(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "vouch", "serve", "--kb", str(tmp_path)],
        input=b'{"id": 1, "method": "kb.status"}\n',
        capture_output=True,
        cwd=tmp_path,
        timeout=60,
    )
    assert proc.returncode == 1
    assert proc.stdout == b""
    assert b"E001" in proc.stderr and b"Traceback" not in proc.stderr


_STRAY_OUTPUT = """
import sys
from vouch import git
from vouch.methods import registry as ops
from vouch.cli import main

def noisy(ctx):
    print("stray print from a handler")
    sys.stdout.flush()
    git.run(["--version"], ctx.kb.root)  # a child process inherits fd 0/1
    import subprocess
    subprocess.run(["cat"])  # would swallow requests if it could read our stdin
    subprocess.run(["echo", "child on fd 1"])
    return "done"

import builtins
builtins.noisy = noisy
ops.register(ops.Method("kb.noisy", "read", "test only", "builtins:noisy"))
raise SystemExit(main(["serve", "--transport", "jsonl"]))
"""


def test_stdout_carries_only_responses(kb: KB) -> None:
    requests = b'{"id": 1, "method": "kb.noisy"}\n{"id": 2, "method": "kb.status"}\n'
    proc = subprocess.run(
        [sys.executable, "-c", _STRAY_OUTPUT],
        input=requests,
        capture_output=True,
        cwd=kb.root,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert [json.loads(x)["id"] for x in lines] == [1, 2], proc.stdout
    assert json.loads(lines[0])["result"] == "done"
    assert b"stray print from a handler" in proc.stderr
    assert b"child on fd 1" in proc.stderr


# -- the scripted agent session (issue 6 "Done when") ------------------------------------
SESSION_METHODS = (
    "kb.register_source",
    "kb.propose_claim",
    "kb.list_pending",
    "kb.approve",
    "kb.search",
)


def _require(*names: str) -> None:
    missing = [n for n in names if n not in ops.REGISTRY]
    if missing:
        pytest.skip(f"not registered yet (other issues): {', '.join(missing)}")


def test_scripted_agent_session_across_two_servers(kb: KB) -> None:
    _require(*SESSION_METHODS)
    agent = JsonlServer(kb.root, env={"VOUCH_AGENT": "agent-a"})
    with agent:
        caps = agent.result("kb.capabilities")
        assert set(SESSION_METHODS) <= {m["name"] for m in caps["methods"]}
        source = agent.result(
            "kb.register_source",
            {
                "content": "# Deploys\n\nThe staging cluster deploys every night at 02:00 UTC.\n",
                "locator": "notes/deploys.md",
                "title": "Deploy notes",
            },
        )
        proposed = agent.result(
            "kb.propose_claim",
            {
                "text": "Staging deploys nightly at 02:00 UTC.",
                "evidence": [source["id"]],
                "type": "fact",
                "rationale": "from the deploy notes",
            },
        )
        assert proposed["valid"] is True and proposed["errors"] == []
        proposal_id, claim_id = proposed["proposal_id"], proposed["claim_id"]

        pending = agent.result("kb.list_pending")
        assert any(proposal_id in json.dumps(p) for p in pending)
        assert agent.result("kb.read_claim", {"id": claim_id}) is None  # not merged yet

        before = kb_state(kb.root)
        # decisions are a person's: this server was not started with --allow-decisions
        own = agent.call("kb.approve", {"proposal_id": proposal_id})
        assert own["ok"] is False and own["error"]["vouch_code"] == "E104", own
        assert "--allow-decisions" not in own["error"]["hint"]  # no way around a person
        spoof = agent.call("kb.approve", {"proposal_id": proposal_id, "approver": "alice"})
        assert spoof["ok"] is False and spoof["error"]["vouch_code"] == "E104", spoof
        assert kb_state(kb.root) == before

        # allowed to decide, an agent still cannot approve its own proposal, nor name
        # someone else as the approver without --trusted-host
        with JsonlServer(kb.root, "--allow-decisions", env={"VOUCH_AGENT": "agent-a"}) as same:
            own = same.call("kb.approve", {"proposal_id": proposal_id})
            assert own["ok"] is False and own["error"]["vouch_code"] == "E104", own
            spoof = same.call("kb.approve", {"proposal_id": proposal_id, "approver": "alice"})
            assert spoof["ok"] is False and "trusted" in spoof["error"]["message"], spoof
            assert same.close() == 0
        assert kb_state(kb.root) == before

        with JsonlServer(kb.root, "--allow-decisions", env={"VOUCH_AGENT": "alice"}) as reviewer:
            # a server does not pin what it shows: the decision names the commit read
            commit = reviewer.result("kb.read_proposal", {"id": proposal_id})["commit"]
            approved = reviewer.result(
                "kb.approve",
                {"proposal_id": proposal_id, "reason": "checked the notes", "expect": commit},
            )
            assert approved["ok"] is True and approved["object_id"] == claim_id
            assert reviewer.close() == 0

        claim = agent.result("kb.read_claim", {"id": claim_id})
        assert claim is not None and claim["text"].startswith("Staging deploys nightly")
        assert agent.result("kb.list_pending") == []
        hits = agent.result("kb.search", {"query": "when does staging deploy", "limit": 5})
        assert claim_id in [h["id"] for h in hits], hits
        assert agent.close() == 0


def test_trusted_host_may_name_the_approver(kb: KB) -> None:
    _require("kb.register_source", "kb.propose_claim", "kb.approve")
    with JsonlServer(kb.root, env={"VOUCH_AGENT": "agent-a"}) as agent:
        source = agent.result("kb.register_source", {"content": "fact source", "locator": "s"})
        proposed = agent.result(
            "kb.propose_claim",
            {"text": "A trusted host names approvers.", "evidence": [source["id"]]},
        )
        assert agent.close() == 0
    with JsonlServer(
        kb.root, "--trusted-host", "--allow-decisions", env={"VOUCH_AGENT": "host-bot"}
    ) as host:
        commit = host.result("kb.read_proposal", {"id": proposed["proposal_id"]})["commit"]
        approved = host.result(
            "kb.approve",
            {"proposal_id": proposed["proposal_id"], "approver": "alice", "expect": commit},
        )
        assert approved["ok"] is True
        assert host.close() == 0
    decided = json.dumps(
        [json.loads(x) for x in (kb.dir / "audit.log.jsonl").read_text().splitlines()][-1]
    )
    assert "alice" in decided


def test_every_error_code_is_one_of_the_spec_codes() -> None:
    assert set(CODES) == {"method_not_found", "missing_param", "invalid_request", "internal_error"}
