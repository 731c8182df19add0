"""The JSON outputs around search are a public contract (spec/search-output.md): each
schema is pinned here — fields may be added, never removed or renamed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema
import pytest
from conftest import git
from search_support import build
from servers_support import JsonlServer

STATUS = {
    "type": "object",
    "required": [
        "root",
        "counts",
        "pending",
        "last_audit_at",
        "documents",
        "total_chunks",
        "db_size_bytes",
        "model_name",
        "embedding_dim",
        "schema_version",
    ],
    "properties": {
        "documents": {"type": "object", "additionalProperties": {"type": "integer"}},
        "total_chunks": {"type": "integer"},
        "db_size_bytes": {"type": "integer"},
        "model_name": {"type": ["string", "null"]},
        "embedding_dim": {"type": "integer"},
        "schema_version": {"type": ["integer", "null"]},
    },
}
LIST = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["id", "title", "type", "tags", "chunk_count", "created_at"],
        "properties": {
            "id": {"type": "string"},
            "title": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "chunk_count": {"type": ["integer", "null"]},
            "created_at": {"type": ["string", "null"]},
        },
    },
}
TAGS = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["name", "count"],
        "properties": {"name": {"type": "string"}, "count": {"type": "integer", "minimum": 1}},
    },
}
INFO = {
    "type": "object",
    "required": [
        "kind",
        "id",
        "title",
        "type",
        "status",
        "tags",
        "path",
        "chunk_count",
        "sections",
        "headings",
    ],
}
STATS = {
    "type": "object",
    "required": ["searches", "errors", "distinct_queries", "top_queries", "zero_result_queries"],
}
SECTION = {
    "type": "object",
    "required": ["id", "section", "level", "start_line", "end_line", "text"],
}


@pytest.fixture
def built(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    return repo, build(repo)


def test_status_before_and_after_the_index_exists(built: Any, run_cli: Any) -> None:
    repo, _ = built
    before = run_cli("status", "--kb", str(repo), "--json").json()
    jsonschema.validate(before, STATUS)
    assert before["index_state"] == "missing" and before["total_chunks"] == 0
    assert not (repo / ".vouch" / "index" / "search.db").exists()  # status never builds
    assert before["model_name"] == "default" and before["embedding_dim"] == 256
    run_cli("search", "deploy", "--kb", str(repo))
    after = run_cli("status", "--kb", str(repo), "--json").json()
    jsonschema.validate(after, STATUS)
    assert after["documents"] == {"claim": 7, "entity": 1, "page": 1, "source": 3}
    assert after["total_chunks"] > 12 and after["db_size_bytes"] > 0
    assert after["schema_version"] >= 1
    assert run_cli("status", "--kb", str(repo)).code == 0


def test_list_tags_info_and_sections(built: Any, run_cli: Any) -> None:
    repo, made = built
    rows = run_cli("list", "claims", "--kb", str(repo), "--json").json()["items"]
    jsonschema.validate(rows, LIST)
    assert all(r["chunk_count"] is None for r in rows)  # no index yet: not built for a list
    run_cli("search", "deploy", "--kb", str(repo))
    rows = run_cli("list", "sources", "--kb", str(repo), "--json").json()["items"]
    jsonschema.validate(rows, LIST)
    assert all(r["chunk_count"] >= 1 for r in rows)

    tags = run_cli("tags", "--kb", str(repo), "--json").json()
    jsonschema.validate(tags, TAGS)
    by_name = {t["name"]: t["count"] for t in tags}
    assert by_name["ops"] == 3 + 5 and by_name["handbook"] == 1
    assert [t["count"] for t in tags] == sorted((t["count"] for t in tags), reverse=True)
    assert "ops" in run_cli("tags", "--kb", str(repo)).out

    info = run_cli("info", made["page"], "--kb", str(repo), "--json").json()
    jsonschema.validate(info, INFO)
    assert info["kind"] == "page" and info["chunk_count"] == 3
    assert [h["text"] for h in info["headings"]] == ["Deploying", "On call"]
    assert "§On call" in run_cli("info", made["page"], "--kb", str(repo)).out
    missing = run_cli("info", "nothing-12345678", "--kb", str(repo), "--json")
    assert missing.code == 1 and missing.json()["error"]["code"] == "E101"

    section = run_cli(
        "show", made["page"], "--section", "on CALL", "--kb", str(repo), "--json"
    ).json()
    jsonschema.validate(section, SECTION)
    assert section["section"] == "On call"
    assert "rotation changes every Monday" in section["text"]
    assert "Deploy with ship" not in section["text"]
    human = run_cli("show", made["page"], "--section", "Deploying", "--kb", str(repo))
    assert human.out.startswith("## Deploying") and "green CI run" in human.out
    nope = run_cli("show", made["page"], "--section", "Nope", "--kb", str(repo))
    assert nope.code == 1 and "Deploying; On call" in nope.err


def test_stats_schema_on_an_empty_log(built: Any, run_cli: Any) -> None:
    repo, _ = built
    data = run_cli("stats", "--kb", str(repo), "--json").json()
    jsonschema.validate(data, STATS)
    assert data["searches"] == 0 and data["top_queries"] == []


def test_kb_search_over_the_jsonl_transport(built: Any) -> None:
    repo, _ = built
    with JsonlServer(repo) as server:
        hits = server.call("kb.search", {"query": "rollback", "limit": 2})
        envelope = server.call("kb.search", {"query": "rollback", "limit": 2, "envelope": True})
        empty = server.call("kb.search", {"query": "   "})
    assert "result" in hits, hits
    assert len(hits["result"]) == 2
    assert {"kind", "id", "snippet", "score", "backend"} <= set(hits["result"][0])
    assert envelope["result"]["schema_version"] == "search_response.v1"
    assert "error" in empty and "E004" in str(empty["error"])
    log = (repo / ".vouch" / "searches.log.jsonl").read_text().splitlines()
    assert len(log) == 3 and '"transport": "jsonl"' in log[0]
