"""Context packs (issue 12.4): kb.context / `vouch context TASK`.

A small knowledge base about the example billing service, approved through the gate:
claims citing sources and evidence, two entities and a relation between them, a page
with sections. Statuses that only lifecycle methods set are set here by committing an
edited file with plain git, as a person could.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from built_once import built_once, copied
from conftest import _build_kb_with_sources, git
from gate_support import ALICE, BOB, a_source, call, proposed
from servers_support import JsonlServer, kb_state

from vouch.kinds import claim, page
from vouch.search.packing import sentence_prefix, word_prefix
from vouch.servers import jsonl, server_context
from vouch.store.kb import KB

LONG = (
    "Rollbacks use ship rollback with the release tag. They never need a review. "
    "Migrations stay backwards compatible for one release, so no migration is "
    "rolled back."
)
PAGE_BODY = """The billing service runbook, in short.

## Rolling back

Roll back with ship rollback billing. Rollbacks need no review.

## Freeze windows

No deploys on Fridays after 15:00 UTC. No deploys during the invoice run.
"""


def approved(kb: KB, method: str, params: dict[str, Any]) -> str:
    """Propose as alice, approve as bob; the new object's id."""
    result = proposed(kb, method, params, actor=ALICE)  # proposed, then shown to bob
    assert result["valid"] and result["proposal_id"], result
    call(kb, "kb.approve", {"proposal_id": result["proposal_id"]}, actor=BOB)
    return str(next(v for k, v in result.items() if k.endswith("_id") and k != "proposal_id"))


def _build(root: Path) -> dict[str, Any]:
    _build_kb_with_sources(root)
    kb = KB.open(root)
    src = a_source(kb)
    ev = call(
        kb, "kb.register_evidence", {"source_id": src, "locator": "L4", "quote": "green CI run"}
    )["id"]
    billing = approved(
        kb,
        "kb.propose_entity",
        {"name": "Billing service", "type": "system", "description": "the payments system"},
    )
    postgres = approved(kb, "kb.propose_entity", {"name": "Postgres", "type": "system"})
    ids = {
        "src": src,
        "ev": ev,
        "billing": billing,
        "postgres": postgres,
        "ci": approved(
            kb,
            "kb.propose_claim",
            {
                "text": "Every deploy of the billing service needs a green CI run.",
                "evidence": [ev],
                "type": "fact",
            },
        ),
        "rollback": approved(
            kb, "kb.propose_claim", {"text": LONG, "evidence": [src], "type": "workflow"}
        ),
        "invoices": approved(
            kb,
            "kb.propose_claim",
            {
                "text": "Invoices are generated nightly by the invoice run.",
                "evidence": [src],
                "entities": [billing],
            },
        ),
        "relation": approved(
            kb,
            "kb.propose_relation",
            {"source": billing, "relation": "depends_on", "target": postgres},
        ),
    }
    ids["page"] = approved(
        kb,
        "kb.propose_page",
        {
            "title": "Billing deploys",
            "body": PAGE_BODY,
            "type": "workflow",
            "claims": [ids["ci"]],
            "sources": [src],
        },
    )
    return ids


@pytest.fixture
def ctx_kb(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> dict[str, Any]:
    """The knowledge base `_build` makes, built once a session; each test gets a copy."""
    template, ids = built_once(tmp_path_factory, "context", _build)
    return {**ids, "kb": KB.open(copied(template, tmp_path / "repo"))}


def pack(kb: KB, task: str, **params: Any) -> dict[str, Any]:
    return call(kb, "kb.context", {"task": task, **params})


def by_id(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {item["id"]: item for item in result["items"]}


def commit_status(kb: KB, kind: Any, object_id: str, status: str) -> None:
    """What a person could do by hand: edit the status in the file, commit with git."""
    path = kb.dir / kind.path_for(object_id)
    text = path.read_text(encoding="utf-8")
    path.write_text(re.sub(r"(?m)^status: .*$", f"status: {status}", text), encoding="utf-8")
    git(kb.root, "commit", "-qam", f"{status} {object_id}")


def test_pack_holds_relevant_approved_knowledge_with_citations(ctx_kb: dict[str, Any]) -> None:
    kb = ctx_kb["kb"]
    result = pack(kb, "deploy the billing service with a green CI run")
    assert set(result) >= {"task", "items", "total_chars", "truncated"}
    items = by_id(result)
    ci = items[ctx_kb["ci"]]
    assert ci["kind"] == "claim" and ci["status"] == "working" and ci["score"] > 0
    assert ci["text"] == "Every deploy of the billing service needs a green CI run."
    assert set(ci) >= {"kind", "id", "title", "text", "status", "score", "citations"}
    [cite] = ci["citations"]
    assert cite["id"] == ctx_kb["ev"] and cite["kind"] == "evidence"
    assert cite["title"] == "deploy-runbook.md" and cite["locator"] == "L4"
    assert cite["source_id"] == ctx_kb["src"] and cite["quote"] == "green CI run"
    sections = [i for i in result["items"] if i["kind"] == "page"]
    assert sections and all(i["id"] == ctx_kb["page"] for i in sections)
    cited = {c["id"] for c in sections[0]["citations"]}
    assert cited == {ctx_kb["src"], ctx_kb["ci"]}
    scores = [i["score"] for i in result["items"]]
    assert scores == sorted(scores, reverse=True)
    assert result["total_chars"] == sum(len(i["text"]) for i in result["items"])
    assert not result["truncated"]


def test_page_sections_are_items_of_their_own(ctx_kb: dict[str, Any]) -> None:
    result = pack(ctx_kb["kb"], "freeze windows Fridays invoice run")
    freeze = [
        i for i in result["items"] if i["kind"] == "page" and i["section"] == "Freeze windows"
    ]
    assert freeze and freeze[0]["title"] == "Billing deploys"
    assert freeze[0]["text"].startswith("## Freeze windows\n\nNo deploys on Fridays")


def lexical_only(kb: KB) -> None:
    """In a knowledge base this small the vector channel finds everything; without it
    only what the words match is a hit, so neighbours arrive as neighbours."""
    config = kb.dir / "config.yaml"
    config.write_text(config.read_text().replace("  enabled: true", "  enabled: false", 1))
    git(kb.root, "commit", "-qam", "lexical only")


def test_the_neighbourhood_of_what_was_found_joins(ctx_kb: dict[str, Any]) -> None:
    lexical_only(ctx_kb["kb"])
    result = pack(ctx_kb["kb"], "when are invoices generated nightly")
    items = by_id(result)
    assert ctx_kb["invoices"] in items
    # the claim's entity, and the relation that touches that entity
    entity = items[ctx_kb["billing"]]
    assert entity["kind"] == "entity" and entity["via"] == ctx_kb["invoices"]
    assert "Billing service" in entity["text"] and entity["citations"] == []
    relation = items[ctx_kb["relation"]]
    assert relation["text"] == "Billing service depends on Postgres"
    assert items[ctx_kb["invoices"]]["score"] > entity["score"]


def test_the_budget_is_never_exceeded(ctx_kb: dict[str, Any]) -> None:
    task = "billing service deploys rollbacks invoices review"
    for max_chars in (1, 8, 30, 60, 100, 250, 1000, 4000):
        for min_items in (0, 1, 3):
            result = pack(ctx_kb["kb"], task, max_chars=max_chars, min_items=min_items)
            texts = [i["text"] for i in result["items"]]
            assert result["total_chars"] == sum(map(len, texts)) <= max_chars
            # never empty when knowledge is relevant and min_items asks for some
            assert len(texts) >= min(min_items, max_chars)
            assert all(texts)
            if max_chars <= 250:  # more than that is relevant
                assert result["truncated"]
            if any(i["partial"] for i in result["items"]):
                assert result["truncated"]
            for item in result["items"]:
                if item["partial"] and not item["text"].endswith("…"):
                    # cut after a whole sentence (or line), never inside one
                    assert item["text"][-1] in ".!?" or item["kind"] == "page"


def test_an_item_is_cut_after_whole_sentences_only(ctx_kb: dict[str, Any]) -> None:
    kb = ctx_kb["kb"]
    result = pack(kb, "rollbacks release tag review migrations", max_chars=90)
    cut = by_id(result)[ctx_kb["rollback"]]
    assert cut["partial"] and result["truncated"]
    assert cut["text"] == LONG[: LONG.index(" Migrations")]  # two whole sentences
    whole = by_id(pack(kb, "rollbacks release tag review migrations"))[ctx_kb["rollback"]]
    assert whole["text"] == LONG and not whole["partial"]


def test_min_items_fills_a_tiny_budget(ctx_kb: dict[str, Any]) -> None:
    kb = ctx_kb["kb"]
    lexical_only(kb)  # else the vector channel finds the entity "Postgres" (8 chars)
    task = "rollbacks release tag review migrations"
    assert pack(kb, task, max_chars=20)["items"] == []  # no first sentence fits
    result = pack(kb, task, max_chars=20, min_items=1)
    [item] = result["items"]
    assert item["partial"] and item["text"].endswith("…") and len(item["text"]) <= 20
    assert result["truncated"] and result["total_chars"] <= 20


def test_superseded_and_archived_knowledge_is_never_included(ctx_kb: dict[str, Any]) -> None:
    kb = ctx_kb["kb"]
    task = "deploy the billing service green CI run freeze windows"
    before = by_id(pack(kb, task, max_chars=100_000))
    assert ctx_kb["ci"] in before and ctx_kb["page"] in before
    commit_status(kb, claim, ctx_kb["ci"], "superseded")
    commit_status(kb, page, ctx_kb["page"], "archived")
    after = pack(kb, task, max_chars=100_000, min_items=50)
    assert ctx_kb["ci"] not in by_id(after) and ctx_kb["page"] not in by_id(after)
    commit_status(kb, claim, ctx_kb["rollback"], "archived")
    for item in pack(kb, "rollbacks release tag review", min_items=50)["items"]:
        assert item["id"] != ctx_kb["rollback"]
        assert item["status"] not in ("superseded", "archived", "redacted")


def test_an_uncited_item_is_dropped_when_citations_are_required(ctx_kb: dict[str, Any]) -> None:
    kb = ctx_kb["kb"]
    lexical_only(kb)
    task = "when are invoices generated nightly"
    loose = pack(kb, task)
    assert any(not i["citations"] for i in loose["items"])  # the entity and relation
    strict = pack(kb, task, require_citations=True)
    assert strict["items"] and all(i["citations"] for i in strict["items"])
    assert strict["dropped_uncited"] >= 2 and ctx_kb["billing"] not in by_id(strict)
    assert ctx_kb["invoices"] in by_id(strict)


def test_open_proposals_and_sources_are_not_knowledge(ctx_kb: dict[str, Any]) -> None:
    kb = ctx_kb["kb"]
    pending = proposed(
        kb, "kb.propose_claim", {"text": "Quokkas review every deploy", "evidence": [ctx_kb["src"]]}
    )
    assert pending["proposal_id"]
    result = pack(kb, "quokkas review every deploy", max_chars=100_000)
    assert pending["claim_id"] not in by_id(result)
    assert {i["kind"] for i in result["items"]} <= {"claim", "page", "entity", "relation"}


def test_no_filler_when_little_is_relevant(ctx_kb: dict[str, Any], run_cli) -> None:
    kb = ctx_kb["kb"]
    # a static embedding finds something "similar" to any text; only the closest stay
    res = run_cli("context", "zyxwvut qqqq", "--json", cwd=kb.root)
    assert res.code == 0 and len(res.json()["items"]) <= 3
    lexical_only(kb)
    res = run_cli("context", "zyxwvut qqqq", "--min-items", "3", "--json", cwd=kb.root)
    assert res.code == 0
    assert res.json()["items"] == [] and res.json()["total_chars"] == 0
    assert not res.json()["truncated"]
    res = run_cli("context", "zyxwvut qqqq", cwd=kb.root)
    assert "No approved knowledge" in res.out


def test_cli_prints_markdown_for_a_prompt(ctx_kb: dict[str, Any], run_cli) -> None:
    kb = ctx_kb["kb"]
    state = kb_state(kb.root)
    res = run_cli("context", "deploy the billing service with a green CI run", cwd=kb.root)
    assert res.code == 0, res.err
    out = res.out
    assert out.startswith("# Context: deploy the billing service with a green CI run\n")
    assert f"claim `{ctx_kb['ci']}` (fact, working)" in out
    assert "Every deploy of the billing service needs a green CI run." in out
    # cited by the source's path and lines, as search and why cite it (issue 36)
    assert re.search(r'Cites: `\S*/deploy-runbook\.md:L4` "green CI run" \(`green-ci-run-', out)
    assert "> ## Freeze windows" in out or "> ## Rolling back" in out  # sections quoted
    same = run_cli(
        "context",
        "deploy the billing service with a green CI run",
        "--format",
        "markdown",
        cwd=kb.root,
    )
    assert same.out == out
    as_json = run_cli(
        "context", "deploy billing", "--max-chars", "120", "--json", cwd=kb.root
    ).json()
    assert as_json["max_chars"] == 120 and as_json["total_chars"] <= 120
    assert kb_state(kb.root) == state  # a read


def test_bad_input_is_refused_clearly(ctx_kb: dict[str, Any], run_cli) -> None:
    kb = ctx_kb["kb"]
    res = run_cli("context", "   ", "--json", cwd=kb.root)
    assert res.code == 1 and json.loads(res.out)["error"]["code"] == "E004"
    res = run_cli("context", "deploy", "--max-chars", "0", cwd=kb.root)
    assert res.code == 1
    res = run_cli("context", cwd=kb.root)
    assert res.code == 1


def test_jsonl_and_capabilities(ctx_kb: dict[str, Any]) -> None:
    kb = ctx_kb["kb"]
    ctx = server_context("jsonl", kb_path=str(kb.dir))

    def line(params: Any) -> dict[str, Any]:
        return jsonl.handle_line(
            ctx, json.dumps({"id": 1, "method": "kb.context", "params": params}).encode()
        )

    ok = line({"task": "green CI run", "max_chars": 200})
    assert ok["ok"] and ok["result"]["total_chars"] <= 200 and ok["result"]["items"]
    assert line({})["error"]["code"] == "missing_param"
    assert line({"task": "x", "max_chars": 0})["error"]["code"] == "invalid_request"
    assert line({"task": "x", "max_chars": "many"})["error"]["code"] == "invalid_request"
    assert line({"task": ""})["error"]["vouch_code"] == "E004"
    caps = jsonl.handle_line(ctx, b'{"id": 2, "method": "kb.capabilities"}')["result"]
    described = {m["name"]: m for m in caps["methods"]}["kb.context"]
    assert described["scope"] == "read"
    assert set(described["params"]["properties"]) == {
        "task",
        "max_chars",
        "min_items",
        "require_citations",
        "kbs",
    }


def test_a_real_jsonl_server_reads_without_a_declared_agent(ctx_kb: dict[str, Any]) -> None:
    kb = ctx_kb["kb"]
    with JsonlServer(kb.root) as server:
        first = server.result("kb.context", {"task": "green CI run", "min_items": 1})
        again = server.result("kb.context", {"task": "green CI run", "min_items": 1})
    assert first["items"] and first["items"] == again["items"]


@pytest.mark.parametrize(
    ("text", "limit", "expected"),
    [
        ("One. Two. Three.", 100, "One. Two. Three."),
        ("One. Two. Three.", 10, "One. Two."),
        ("One. Two. Three.", 9, "One. Two."),
        ("One. Two. Three.", 8, "One."),
        ("One. Two. Three.", 3, ""),
        ("Is it? Yes! Done.", 12, "Is it? Yes!"),
        ('He said "go." Then left.', 14, 'He said "go."'),
        ("- first item\n- second item\n", 20, "- first item"),
        ("v1.2 is out. Next", 8, ""),
        ("Use v1.2 now", 5, ""),  # "v1." at the limit is no sentence end
    ],
)
def test_sentence_prefix(text: str, limit: int, expected: str) -> None:
    assert sentence_prefix(text, limit) == expected


def test_word_prefix() -> None:
    assert word_prefix("Rollbacks use ship rollback", 15) == "Rollbacks use…"
    assert word_prefix("short", 15) == "short"
    assert word_prefix("Supercalifragilistic", 6) == "Super…"
    assert len(word_prefix("anything at all", 1)) == 1


def test_sentence_prefix_of_a_page_section_keeps_whole_lines(tmp_path: Path) -> None:
    text = "## Rolling back\n\nRoll back with ship. Rollbacks need no review."
    assert sentence_prefix(text, 40) == "## Rolling back\n\nRoll back with ship."
    assert sentence_prefix(text, 20) == ""  # a heading alone says nothing
