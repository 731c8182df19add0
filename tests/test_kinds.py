"""Every kind's validation, byte-stable round trips and comment preservation."""

from __future__ import annotations

import pytest

from vouch.errors import CorruptFile, ValidationFailed
from vouch.kinds import KINDS, claim, entity, evidence, page, relation, session, source

SRC = "a" * 64


def samples() -> dict[str, dict]:
    return {
        "claim": claim.new(
            text="Billing deploys need one review",
            evidence=[SRC],
            tags=["deploy"],
            confidence=0.9,
            type="fact",
        ),
        "entity": entity.new(name="Billing service", type="system", aliases=["billing"]),
        "relation": relation.new(
            source="billing-service-1234abcd", relation="depends_on", target="postgres-abcdef12"
        ),
        "page": page.new(title="Deploying", body="# Deploying\n\nUse `ship`.\n\n## Rollback\n\nx"),
        "evidence": evidence.new(source_id=SRC, locator="L1-L3", quote="three lines"),
        "session": session.new(task="triage the incident", actor="agent-1"),
        "source": source.new(b"bytes", locator="notes.txt", title="Notes", tags=["x"]),
    }


@pytest.mark.parametrize("name", sorted(KINDS))
def test_round_trip_is_byte_stable(name: str) -> None:
    kind = KINDS[name]
    obj = samples()[name]
    text = kind.dump(obj)
    loaded = kind.load(text)
    assert loaded == obj
    assert kind.dump(loaded) == text


@pytest.mark.parametrize("name", ["claim", "entity", "relation", "source"])
def test_comments_survive_an_edit(name: str) -> None:
    kind = KINDS[name]
    text = "# a person wrote this\n" + kind.dump(samples()[name])
    lines = text.splitlines()
    lines[2] = lines[2] + "  # keep me"
    text = "\n".join(lines) + "\n"
    edited = kind.edit(text, {"tags": ["added"]})
    assert "# a person wrote this" in edited and "# keep me" in edited
    assert kind.load(edited)["tags"] == ["added"]


def test_page_comments_and_body_survive_an_edit() -> None:
    text = page.dump(samples()["page"]).replace("type: concept", "type: concept  # why")
    edited = page.KIND.edit(text, {"status": "stale"})
    assert "# why" in edited
    assert page.load(edited)["body"] == samples()["page"]["body"].strip()
    assert page.load(edited)["status"] == "stale"


@pytest.mark.parametrize(
    ("name", "changes", "needle"),
    [
        ("claim", {"type": "rumour"}, "type 'rumour' is not one of"),
        ("claim", {"text": "  "}, "text must not be empty"),
        ("claim", {"confidence": 1.5}, "confidence 1.5 is out of range"),
        ("claim", {"confidence": "high"}, "confidence must be a number"),
        ("claim", {"status": "maybe"}, "status 'maybe' is not one of"),
        ("claim", {"evidence": ["../x"]}, "is not a vouch id"),
        ("claim", {"scope": "world"}, "scope 'world' is not one of"),
        ("entity", {"type": "planet"}, "type 'planet' is not one of"),
        ("entity", {"name": ""}, "name must not be empty"),
        ("entity", {"aliases": [""]}, "aliases must not hold an empty item"),
        ("claim", {"tags": ["ok", " "]}, "tags must not hold an empty item"),
        ("relation", {"relation": "likes"}, "relation 'likes' is not one of"),
        ("relation", {"target": "nope"}, "target 'nope' is not a vouch id"),
        ("page", {"type": "essay"}, "type 'essay' is not one of"),
        ("page", {"status": "live"}, "status 'live' is not one of"),
        ("source", {"type": "tweet"}, "type 'tweet' is not one of"),
        ("source", {"byte_size": -1}, "byte_size -1 is out of range"),
        ("evidence", {"source_id": None}, "source_id is required"),
        ("session", {"status": "paused"}, "status 'paused' is not one of"),
        ("claim", {"colour": "red"}, "unknown field 'colour'"),
    ],
)
def test_validation_errors_name_the_problem(name: str, changes: dict, needle: str) -> None:
    kind = KINDS[name]
    obj = {**samples()[name], **changes}
    obj = {k: v for k, v in obj.items() if v is not None}
    errors = kind.validate(obj)
    assert any(needle in e for e in errors), errors
    with pytest.raises(ValidationFailed):
        kind.dump(obj)
    with pytest.raises(CorruptFile):
        kind.load(
            kind.dump(samples()[name]).replace("id:", "colour: red\nid:", 1)
            if name != "page"
            else "---\ncolour: red\n---\n"
        )


def test_validation_lists_every_problem() -> None:
    obj = {**samples()["claim"], "type": "x", "confidence": 7, "status": "y"}
    assert len(claim.KIND.validate(obj)) == 3


def test_page_chunks_follow_headings() -> None:
    chunks = page.chunks(samples()["page"])
    assert [c.section for c in chunks] == ["Deploying", "Rollback"]
    assert [(c.chunk_index, c.total_chunks) for c in chunks] == [(0, 2), (1, 2)]
    fenced = page.new(title="t", body="# A\n```\n# not a heading\n```\n# B\n")
    assert [c.section for c in page.chunks(fenced)] == ["A", "B"]


def test_unparseable_yaml_is_corrupt() -> None:
    with pytest.raises(CorruptFile):
        claim.load("text: [unclosed\n")
    with pytest.raises(CorruptFile):
        page.load("no frontmatter here")


@pytest.mark.parametrize(
    "word",
    [
        "yes",
        "no",
        "on",
        "off",
        "y",
        "n",
        "true",
        "null",
        "~",
        "0o17",
        "1_000",
        "12:30",
        "3.0",
        "2026-01-01",
        ".inf",
        "",
    ],
)
def test_strings_that_yaml_1_1_would_retype_round_trip(word: str) -> None:
    obj = claim.new(
        text=f"the answer is {word}",
        evidence=[SRC],
        tags=[word or "x"],
        proposed_by=word or "someone",
    )
    text = claim.dump(obj)
    assert claim.load(text) == obj
    edited = claim.KIND.edit(text, {"approved_by": word or "someone"})
    assert claim.load(edited)["approved_by"] == (word or "someone")
