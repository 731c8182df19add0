"""SKILL.md that is tested (issue 18, point 7): its JSONL requests and commands run
against a real knowledge base; every closed set it lists is the enum `kb.capabilities`
states; every error code it names exists; it documents what an agent needs on the path
from a hit to an approved proposal. Capabilities and MCP tools state closed sets as JSON
Schema enums; no refusal suggests a way around review."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
from gate_support import a_source, call

from vouch import errors
from vouch.methods import registry as ops
from vouch.servers import jsonl, server_context
from vouch.servers import mcp as mcp_server
from vouch.store.kb import KB

SKILL = Path(__file__).parent.parent / "SKILL.md"
TEXT = SKILL.read_text(encoding="utf-8")


def _enum(method: str, param: str) -> list[str]:
    schema = ops.get(method).input_schema()["properties"][param]
    return list(schema.get("enum") or schema["items"]["enum"])


CLOSED_SETS = {
    "Claim types": ("kb.propose_claim", "type"),
    "Page types": ("kb.propose_page", "type"),
    "Entity types": ("kb.propose_entity", "type"),
    "Relation types": ("kb.propose_relation", "relation"),
    "Scopes": ("kb.propose_claim", "scope"),
}


@pytest.mark.parametrize("label", sorted(CLOSED_SETS))
def test_every_closed_set_listed_is_the_capabilities_enum(label: str, kb: KB) -> None:
    listed = re.search(rf"^- {label}: (.+)$", TEXT, re.MULTILINE)
    assert listed, f"SKILL.md does not list {label}"
    method, param = CLOSED_SETS[label]
    caps = ops.capabilities(server_context("jsonl", kb_path=str(kb.dir)))
    described = next(m for m in caps["methods"] if m["name"] == method)
    assert [v.strip() for v in listed.group(1).split(",")] == described["params"]["properties"][
        param
    ]["enum"]
    statuses = re.search(r"^- Claim statuses: (.+)$", TEXT, re.MULTILINE)
    assert statuses and {v.strip() for v in statuses.group(1).split(",")} <= set(
        _enum("kb.search", "statuses")
    )


def test_closed_sets_are_enums_on_every_surface(kb: KB) -> None:
    tools = {t.name: t.input_schema for t in mcp_server.tools()}
    for method, param in CLOSED_SETS.values():
        schema = tools[ops.get(method).tool_name]["properties"][param]
        assert schema["enum"] and "one of" not in schema.get("description", "")
    # still checked by the gate, so that an invalid proposal lists every problem at once
    res = call(kb, "kb.propose_entity", {"name": "", "type": "planet", "dry_run": True})
    assert res["valid"] is False and len(res["errors"]) >= 2


def test_every_error_code_named_exists() -> None:
    known = {
        getattr(cls, "code", None)
        for cls in vars(errors).values()
        if isinstance(cls, type) and issubclass(cls, errors.VouchError)
    }
    named = set(re.findall(r"`(E\d{3})`", TEXT))
    assert named and named <= known, sorted(named - known)


def test_it_documents_the_agents_path() -> None:
    for needle in (
        '"valid": false',
        "SOURCE_ID:L120-L134",
        "`cite`",
        "waits for",
        "vouch approve P1 P2 P3",
        "kb.revise_proposal",
        "kb.comment_proposal",
        "vouch install-agent",
        "unique prefix",
    ):
        assert needle in TEXT, needle


def _placeholders(kb: KB) -> dict[str, str]:
    sid = a_source(kb)
    proposal = call(kb, "kb.propose_claim", {"text": "Freeze windows stop deploys.",
                                             "evidence": [sid]})  # fmt: skip
    return {
        "SOURCE_ID": sid,
        "PROPOSAL_ID": proposal["proposal_id"],
        "ID": proposal["claim_id"],
        "SESSION_ID": call(kb, "kb.session_start", {"task": "skill"})["session_id"],
        "QUERY": "deploy freeze",
        "TASK": "change the deploy freeze",
        "FILE": "README.md",
        "NAME": "Freeze windows",
        "T": "A title",
    }


def test_every_jsonl_request_in_skill_md_is_answered(kb_with_sources: KB) -> None:
    ctx = server_context("jsonl", kb_path=str(kb_with_sources.dir))
    requests = re.findall(r"^→ (\{.*\})$", TEXT, re.MULTILINE)
    assert requests
    for line in requests:
        response = jsonl.handle_line(ctx, line.encode())
        assert response["ok"], (line, response)
        assert json.loads(line)["id"] == response["id"]


def test_every_command_in_skill_md_runs(kb_with_sources: KB, run_cli) -> None:
    """Each `vouch ...` span, placeholders filled from a real knowledge base, is parsed
    and run: it may be refused (exit 1: the gate, a missing object) but never fails to
    parse, crashes or reports a system failure."""
    kb = kb_with_sources
    values = _placeholders(kb)
    spans = sorted(set(re.findall(r"`(vouch [^`]+)`", TEXT)))
    assert len(spans) > 20
    ran = 0
    for span in spans:
        if "|" in span or "…" in span.replace('"…"', "") or "[" in span or "<" in span:
            continue  # a synopsis (alternatives, optional parts), not a command line
        line = span.replace('"…"', '"some text"').replace("'<json params>'", "'{}'")
        words = [values.get(w, w) for w in shlex.split(line)[1:]]
        words = [re.sub(r"SOURCE_ID", values["SOURCE_ID"], w) for w in words]
        if words[:1] in (["serve"], ["install-agent"]):
            continue  # a server (runs until EOF) / writes the host's files: tested apart
        res = run_cli(*words, "--as", "bob", cwd=kb.root)
        assert res.code in (0, 1), (span, res.err)
        assert "No such option" not in res.err and "unexpected extra" not in res.err, span
        assert "Traceback" not in res.err
        ran += 1
    assert ran > 15
