"""The review screen's "Already approved and similar" lists only what is genuinely alike
(issue 36, the first hour: it listed every approved claim, each at the same 0.016 — a
timeout claim "similar" to a proxy claim). Built on a real knowledge base of approved
claims about an HTTP library, in both directions: a reworded duplicate (and a
contradiction) stays, unrelated claims drop out — with vectors, and lexical-only."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from built_once import built_once, copied
from conftest import _build_kb, git
from gate_support import BOB, call, proposed

from vouch.store.kb import KB

DOC = """# HTTP client notes

Requests do not time out unless a timeout is set explicitly.
You can send requests through a proxy by passing the proxies argument.
A Session persists cookies across all requests made from it.
Install the library with python -m pip install requests.
Requests verifies SSL certificates for HTTPS by default.
"""
APPROVED = {
    "timeout": ("If no timeout is specified explicitly, requests do not time out.", 3),
    "proxy": ("Requests can send traffic through an HTTP proxy with the proxies argument.", 4),
    "session": ("A Session persists cookies across all requests made from the Session.", 5),
    "install": ("To install Requests, run python -m pip install requests.", 6),
}


def _build_library(root: Path) -> dict[str, Any]:
    _build_kb(root)
    kb = KB.open(root)
    (kb.root / "notes.md").write_text(DOC)
    source = str(call(kb, "kb.register_source_from_path", {"path": "notes.md"})["id"])
    ids = {}
    for name, (text, line) in APPROVED.items():
        made = proposed(kb, "kb.propose_claim", {"text": text, "evidence": [f"{source}:L{line}"]})
        call(kb, "kb.approve", {"proposal_id": made["proposal_id"]}, actor=BOB)
        ids[name] = made["claim_id"]
    return {"source": source, "ids": ids}


@pytest.fixture
def library(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> dict[str, Any]:
    """Four approved claims, each citing its line of the notes (built once a session,
    `built_once`; each test gets a copy)."""
    template, made = built_once(tmp_path_factory, "review-alike", _build_library)
    return {"kb": KB.open(copied(template, tmp_path / "repo")), **made}


def screen(library: dict[str, Any], text: str, line: int = 3) -> dict[str, Any]:
    kb = library["kb"]
    evidence = [f"{library['source']}:L{line}"]
    made = proposed(kb, "kb.propose_claim", {"text": text, "evidence": evidence})
    return dict(call(kb, "kb.read_proposal", {"id": made["proposal_id"]}))


def alike(data: dict[str, Any], ids: dict[str, str]) -> list[str]:
    names = {v: k for k, v in ids.items()}
    return [names[r["id"]] for r in data.get("related") or []]


def test_a_reworded_duplicate_is_named_and_nothing_else(library: dict[str, Any]) -> None:
    data = screen(library, "A request without a timeout may wait forever.")
    assert alike(data, library["ids"]) == ["timeout"]
    (only,) = data["related"]
    assert only["measure"] == "cosine" and 0.5 <= only["similarity"] <= 1.0


def test_a_contradiction_is_named(library: dict[str, Any]) -> None:
    data = screen(library, "If a timeout is specified explicitly, requests do time out.")
    assert alike(data, library["ids"]) == ["timeout"]
    assert data["related"][0]["similarity"] > 0.8


def test_an_unrelated_claim_has_no_look_alikes(library: dict[str, Any]) -> None:
    data = screen(library, "Requests verifies SSL certificates for HTTPS requests by default.", 7)
    assert alike(data, library["ids"]) == []
    assert "related_unavailable" not in data


def test_the_screen_shows_the_similarity(library: dict[str, Any], run_cli) -> None:
    data = screen(library, "Sessions keep cookies between the requests made with them.", 5)
    assert alike(data, library["ids"]) == ["session"]
    kb, pid = library["kb"], data["proposal_id"]
    figure = f"{data['related'][0]['similarity']:.2f}"
    text = run_cli("show", pid, cwd=kb.root).out
    head = "Already approved and similar (a duplicate? a contradiction?):"
    block = text.split(head, 1)[1].strip().split("\n\n", 1)[0].splitlines()
    assert len(block) == 1 and f"(similarity {figure})" in block[0], block
    assert library["ids"]["session"] in block[0]
    markdown = run_cli("show", pid, "--format", "markdown", cwd=kb.root).out
    section = markdown.split("### Already approved and similar", 1)[1].split("###", 1)[0]
    assert section.count("\n- ") == 1 and f"(similarity {figure})" in section


def test_lexical_only_knowledge_bases_compare_words(library: dict[str, Any]) -> None:
    kb = library["kb"]
    config = kb.dir / "config.yaml"
    config.write_text(config.read_text().replace("  enabled: true", "  enabled: false", 1))
    git(kb.root, "commit", "-qam", "lexical only")
    library = {**library, "kb": KB.open(kb.root)}
    data = screen(library, "Requests do not time out unless a timeout is specified.")
    assert alike(data, library["ids"]) == ["timeout"]
    assert data["related"][0]["measure"] == "words"
    data = screen(library, "Requests verifies SSL certificates for HTTPS requests by default.", 7)
    assert alike(data, library["ids"]) == []
