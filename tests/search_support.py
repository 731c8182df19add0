"""A small, real knowledge base for search tests: the three example sources plus claims,
a page and an entity written as files and committed with git (files are the truth)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
from conftest import git, script

from vouch.kinds import KINDS
from vouch.methods.demo import example_files
from vouch.store import sources
from vouch.store.initkb import init_kb
from vouch.store.kb import KB

SCHEMA_PATH = Path(__file__).parents[1] / "vouch" / "schemas" / "search_response.schema.json"
SCHEMA = json.loads(SCHEMA_PATH.read_text())

CLAIMS: list[dict[str, Any]] = [
    {
        "text": "Billing deploys happen from the main branch only, with the ship tool.",
        "type": "workflow",
        "tags": ["ops", "billing"],
    },
    {
        "text": "Rollbacks of the billing service never need a database migration rollback.",
        "type": "fact",
        "tags": ["ops", "billing", "production"],
    },
    {
        "text": "No deploys on Fridays after 15:00 UTC.",
        "type": "decision",
        "tags": ["ops", "production"],
    },
    {
        "text": "The payments gateway retried the same event three times in March.",
        "type": "observation",
        "tags": ["incident"],
    },
    {
        "text": "Invoices used to be rendered eagerly at deploy time.",
        "type": "fact",
        "status": "archived",
        "tags": ["billing"],
    },
    {
        "text": "The old deploy script lived in the ops repository.",
        "type": "fact",
        "status": "superseded",
        "tags": ["ops"],
    },
    {
        "text": "Customer card numbers appeared in a deploy log.",
        "type": "warning",
        "status": "redacted",
        "tags": ["ops"],
    },
]

PAGE_BODY = """Intro text about how the billing team works.

## Deploying

Deploy with ship from main; every deploy needs a green CI run.

## On call

The billing on-call rotation changes every Monday at 09:00.
"""


def write_object(kb: KB, kind: str, obj: dict[str, Any]) -> str:
    k = KINDS[kind]
    path = kb.path_of(k, obj["id"])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(k.dump(obj), encoding="utf-8")
    return str(obj["id"])


def build(repo: Path) -> dict[str, Any]:
    """Populate `repo` (a git work tree); returns the ids by name."""
    init_kb(repo)
    kb = KB.open(repo)
    items = [sources.intake_for_path(kb, p, tags=("ops",)) for p in example_files()]
    source_ids = [r["id"] for r in sources.register_many(kb, items, "Test Person")]
    made: dict[str, Any] = {"sources": source_ids, "claims": []}
    for spec in CLAIMS:
        obj = KINDS["claim"].new(evidence=[source_ids[0]], **spec)
        made["claims"].append(write_object(kb, "claim", obj))
    page = KINDS["page"].new(
        title="Billing team handbook", body=PAGE_BODY, type="workflow", tags=["billing", "handbook"]
    )
    made["page"] = write_object(kb, "page", page)
    entity = KINDS["entity"].new(
        name="ship", type="tool", description="The deploy tool used by the billing team."
    )
    made["entity"] = write_object(kb, "entity", entity)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "test knowledge")
    return made


def validate(response: dict[str, Any]) -> None:
    jsonschema.validate(response, SCHEMA)


def build_golden() -> Any:
    """scripts/build_golden.py as a module (its content-word check, shared by the golden
    set and the evaluation corpus)."""
    return script("build_golden")
