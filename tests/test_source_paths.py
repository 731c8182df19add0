"""Sources by their path (issue 36, item 2): `PATH:L5-L9`, `PATH:L5`, rg's `PATH:5` and a
bare `PATH` are taken wherever a source id is — citing, evidence, show — and name the
path's current version; an unknown or ambiguous path is refused (exit 1, a stable code)
naming the candidates, with nothing written; a line span of a file changed since it was
registered is refused; text an agent supplied for a path (`inline:<path>`) is never
named by that path. Search hits, `vouch list sources`, the review screen and `why` print
the path beside the id, and `show SRC --content --lines` numbers the lines."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from conftest import git
from gate_support import ALICE, BOB, call
from search_support import SCHEMA
from servers_support import kb_state

from vouch.kinds import claim as claim_kind
from vouch.kinds import evidence as evidence_kind
from vouch.servers import jsonl, server_context
from vouch.store import source_names
from vouch.store.kb import KB

GUIDE = "# Guide\n\nInstall with pip.\nRun vouch init.\nThen add your docs.\n"
API = "# API guide\n\nThe retry timeout defaults to thirty seconds.\n"


@pytest.fixture
def docs(kb: KB, run_cli) -> dict[str, str]:
    """docs/user/guide.md and docs/api/guide.md (one file name, two folders), added as
    `source add -r` adds them; their ids by path."""
    (kb.root / "docs" / "user").mkdir(parents=True)
    (kb.root / "docs" / "api").mkdir()
    (kb.root / "docs" / "user" / "guide.md").write_text(GUIDE)
    (kb.root / "docs" / "api" / "guide.md").write_text(API)
    git(kb.root, "add", "docs")
    git(kb.root, "commit", "-qm", "docs")
    assert run_cli("source", "add", "-r", "docs", cwd=kb.root).code == 0
    rows = run_cli("list", "sources", "--json", cwd=kb.root).json()["items"]
    return {r["locator"]: r["id"] for r in rows}


def _evidence_of(kb: KB, result: dict[str, Any]) -> list[tuple[str, str | None]]:
    """(source id, locator) of each citation of a proposed claim, read in its branch."""
    from vouch.gate.pending import find_pending_object

    found = find_pending_object(kb, result["claim_id"], ("claim",))
    assert found is not None
    out = []
    for item in found[1]["evidence"]:
        ev = find_pending_object(kb, item, ("evidence",))
        out.append((ev[1]["source_id"], ev[1]["locator"]) if ev else (item, None))
    return out


_MADE = [0]


def _propose(run_cli, kb: KB, *sources: str, cwd: Path | None = None) -> Any:
    """`vouch propose-claim` citing `sources`, a claim text of its own each time."""
    _MADE[0] += 1
    args = [a for s in sources for a in ("--source", s)]
    return run_cli(
        "propose-claim", "--text", f"Installing takes pip and vouch init ({_MADE[0]}).",
        *args, "--json", cwd=cwd or kb.root,
    )  # fmt: skip


# -- taking a path ---------------------------------------------------------------------------
def test_split_and_what_wants_resolving() -> None:
    assert source_names.split("docs/a.rst:L5-L9") == ("docs/a.rst", "L5-L9")
    assert source_names.split("docs/a.rst:5-9") == ("docs/a.rst", "L5-L9")  # rg, grep -n
    assert source_names.split("docs/a.rst:5") == ("docs/a.rst", "L5")
    assert source_names.split("chat.jsonl:T3-T4") == ("chat.jsonl", "T3-T4")
    assert source_names.split("docs/a.md:#install") == ("docs/a.md", "#install")
    assert source_names.split("docs/a.rst") == ("docs/a.rst", "")
    assert source_names.split("https://example.com:8080") == ("https://example.com:8080", "")
    assert source_names.split("inline:notes/plan.md:L3") == ("inline:notes/plan.md", "L3")
    full = "ab" * 32
    for kept in (full, f"{full}:L1-L2", "deploy-notes-1a2b3c4d", "20260517-101500-1a2b3c4d"):
        assert not source_names.wants_resolving(kept), kept
    for taken in ("abababab", "docs/a.rst:L5", "README.md", "inline:a.md"):
        assert source_names.wants_resolving(taken), taken


def test_a_path_names_the_current_version_wherever_a_source_id_is(
    kb: KB, docs: dict[str, str], run_cli
) -> None:
    user = docs["docs/user/guide.md"]
    made = _propose(run_cli, kb, "docs/user/guide.md:L3-L4", "docs/user/guide.md:5")
    assert made.code == 0 and made.json()["valid"], made.out + made.err
    assert _evidence_of(kb, made.json()) == [(user, "L3-L4"), (user, "L5")]
    # from a folder below the root, the path as the shell there names it (rg prints it so)
    below = _propose(run_cli, kb, "guide.md:L3", cwd=kb.root / "docs" / "user")
    assert below.code == 0 and _evidence_of(kb, below.json()) == [(user, "L3")], below.err
    # the methods (JSONL, MCP) take it through the same registry door
    ev = call(kb, "kb.register_evidence", {"source_id": "docs/api/guide.md", "locator": "L3"})
    stored = kb.read(evidence_kind.KIND, ev["id"])
    assert stored["source_id"] == docs["docs/api/guide.md"] and stored["locator"] == "L3"
    page = call(
        kb, "kb.propose_page", {"title": "Guides", "sources": ["docs/user/guide.md"]}, actor=ALICE
    )
    assert page["valid"], page
    assert call(kb, "kb.source_verify", {"id": "docs/api/guide.md"})["ok"]
    # show: the source, and a span of it with its line numbers
    shown = run_cli("show", "docs/user/guide.md", "--json", cwd=kb.root)
    assert shown.code == 0 and shown.json()["id"] == user
    lines = run_cli("show", "docs/user/guide.md:L3-L4", cwd=kb.root)
    assert lines.code == 0 and lines.out == "3  Install with pip.\n4  Run vouch init.\n"
    as_json = run_cli("show", "docs/user/guide.md:3-4", "--json", cwd=kb.root).json()
    assert as_json["text"] == "Install with pip.\nRun vouch init." and as_json["id"] == user
    # a new version of the file: the path names it from then on, the old id still works
    (kb.root / "docs" / "user" / "guide.md").write_text(GUIDE + "Search with vouch search.\n")
    assert run_cli("source", "add", "docs/user/guide.md", cwd=kb.root).code == 0
    newer = run_cli("show", "docs/user/guide.md", "--json", cwd=kb.root).json()["id"]
    assert newer != user
    assert source_names.resolve(kb, "docs/user/guide.md:L6") == f"{newer}:L6"
    assert run_cli("show", user[:12], "--json", cwd=kb.root).json()["id"] == user


def test_unknown_and_ambiguous_paths_are_refused_naming_the_candidates(
    kb: KB, docs: dict[str, str], run_cli
) -> None:
    before = kb_state(kb.root)
    # a bare file name two folders hold: refused, both paths named
    res = _propose(run_cli, kb, "guide.md:L3")
    assert res.code == 1 and res.json()["error"]["code"] == "E101"
    message = res.json()["error"]["message"]
    assert "docs/user/guide.md" in message and "docs/api/guide.md" in message
    assert kb_state(kb.root) == before
    # a file of the work tree that is not registered: how to register it
    (kb.root / "notes.md").write_text("a note\n")
    res = _propose(run_cli, kb, "notes.md:L1")
    assert res.code == 1 and "vouch source add notes.md" in res.json()["error"]["hint"]
    # `index.md` typed in docs/ names docs/index.md there and index.md at the root
    (kb.root / "index.md").write_text("root index\n")
    (kb.root / "docs" / "index.md").write_text("docs index\n")
    for name in ("index.md", "docs/index.md"):
        assert run_cli("source", "add", name, cwd=kb.root).code == 0
    before = kb_state(kb.root)
    res = _propose(run_cli, kb, "index.md:L1", cwd=kb.root / "docs")
    assert res.code == 1 and res.json()["error"]["code"] == "E103"
    message = res.json()["error"]["message"]
    assert "docs/index.md" in message and " index.md (" in message
    # an agent over JSONL gets the same refusal
    ctx = server_context("jsonl", kb_path=str(kb.root))
    ctx.agent = ALICE
    line = {
        "id": 1,
        "method": "kb.propose_claim",
        "params": {"text": "x y z", "evidence": ["docs/nowhere.md:L1"]},
    }
    answer = jsonl.handle_line(ctx, json.dumps(line).encode())
    assert not answer["ok"] and answer["error"]["vouch_code"] == "E101"
    res = run_cli("show", "docs/nowhere.md", cwd=kb.root)
    assert res.code == 1 and "E101" in res.err and "Traceback" not in res.err
    assert kb_state(kb.root) == before  # nothing written by any of them
    # the root's reading alone is taken from the root (no ambiguity there)
    assert source_names.resolve(kb, "index.md") != source_names.resolve(kb, "docs/index.md")


def test_a_span_of_a_file_changed_since_it_was_registered_is_refused(
    kb: KB, docs: dict[str, str], run_cli
) -> None:
    user = docs["docs/user/guide.md"]
    path = kb.root / "docs" / "user" / "guide.md"
    path.write_text("# Guide\n\nA new first step.\nInstall with pip.\nRun vouch init.\n")
    before = kb_state(kb.root)
    res = _propose(run_cli, kb, "docs/user/guide.md:L4")
    assert res.code == 1 and res.json()["error"]["code"] == "E105"
    hint = res.json()["error"]["hint"]
    assert "vouch source add docs/user/guide.md" in hint and f"{user[:12]}:L4" in hint
    assert kb_state(kb.root) == before
    # the registered version by its id still works, as does the whole file by its path
    assert _propose(run_cli, kb, f"{user[:12]}:L3").json()["valid"]
    assert source_names.resolve(kb, "docs/user/guide.md") == user
    # registered again: the path's lines are the file's lines
    assert run_cli("source", "add", "docs/user/guide.md", cwd=kb.root).code == 0
    made = _propose(run_cli, kb, "docs/user/guide.md:L4")
    assert made.code == 0, made.err
    [(sid, locator)] = _evidence_of(kb, made.json())
    assert (
        locator == "L4"
        and sid != user
        and kb.source_content(sid).split(b"\n")[3] == b"Install with pip."
    )


def test_text_an_agent_supplied_for_a_path_is_never_named_by_that_path(
    kb: KB, docs: dict[str, str], run_cli
) -> None:
    """Issue 34's guarantee kept: `kb.register_source` with a path no file holds records
    the text at `inline:<path>`; the bare path never names it — not before a file is
    there, and not after — so citing `docs/plan.md:L1` can only ever cite the file."""
    made = call(
        kb,
        "kb.register_source",
        {"content": "Deploys need no review.\n", "locator": "docs/plan.md"},
    )
    assert made["locator"] == "inline:docs/plan.md"
    res = _propose(run_cli, kb, "docs/plan.md:L1")
    assert res.code == 1 and res.json()["error"]["code"] == "E101"
    assert "inline:docs/plan.md" in res.json()["error"]["message"]  # named, not taken
    # a file appears at that path: still not the agent's text, and not registered yet
    (kb.root / "docs" / "plan.md").write_text("Deploys need two reviews.\n")
    res = _propose(run_cli, kb, "docs/plan.md:L1")
    assert res.code == 1 and "vouch source add docs/plan.md" in res.json()["error"]["hint"]
    assert run_cli("source", "add", "docs/plan.md", cwd=kb.root).code == 0
    real = source_names.resolve(kb, "docs/plan.md:L1")
    assert real.partition(":")[0] != made["id"]
    assert kb.source_content(real.partition(":")[0]) == b"Deploys need two reviews.\n"
    # the agent's text is named by its own locator, which says what it is
    assert source_names.resolve(kb, "inline:docs/plan.md:L1") == f"{made['id']}:L1"


# -- showing the path --------------------------------------------------------------------------
def test_hits_lists_and_show_print_the_path_beside_the_id(
    kb: KB, docs: dict[str, str], run_cli
) -> None:
    api = docs["docs/api/guide.md"]
    found = run_cli("search", "retry timeout thirty seconds", "--kind", "source", "--json",
                    cwd=kb.root)  # fmt: skip
    assert found.code == 0, found.err
    jsonschema.validate(found.json(), SCHEMA)
    hit = found.json()["results"][0]
    assert hit["id"] == api and hit["cite"] == f"{api}:L1-L3"
    assert hit["cite_path"] == "docs/api/guide.md:L1-L3"
    human = run_cli("search", "retry timeout thirty seconds", "--kind", "source",
                    "--format", "human", cwd=kb.root).out  # fmt: skip
    assert f"docs/api/guide.md:L1-L3 §API guide [source/file] {api[:12]}:L1-L3" in human
    # the hit's path form is taken back as its id form is
    by_path = _propose(run_cli, kb, hit["cite_path"]).json()
    by_id = _propose(run_cli, kb, hit["cite"]).json()
    assert _evidence_of(kb, by_path) == _evidence_of(kb, by_id) == [(api, "L1-L3")]
    # list sources: the repository path and the id prefix every command takes back
    # (and the title each document gives itself: its first heading)
    listed = run_cli("list", "sources", cwd=kb.root).out.splitlines()
    titles = {"docs/user/guide.md": "Guide", "docs/api/guide.md": "API guide"}
    assert listed == sorted(
        f'{sid[:12]}  file        {locator}  "{titles[locator]}"' for locator, sid in docs.items()
    ), listed
    # the review screen names each citation by its path
    screen = run_cli("show", by_path["proposal_id"], cwd=kb.root).out
    assert "[1] docs/api/guide.md:L1-L3 (evidence evidence-" in screen
    assert f"source {api[:12]})" in screen


def test_a_superseded_version_has_no_path_form(kb: KB, docs: dict[str, str], run_cli) -> None:
    """A path names its current version: an older one is printed by id only."""
    old = docs["docs/api/guide.md"]
    (kb.root / "docs" / "api" / "guide.md").write_text(API + "Retries back off.\n")
    assert run_cli("source", "add", "docs/api/guide.md", cwd=kb.root).code == 0
    claim = {"text": "Retries wait thirty seconds.", "evidence": [f"{old}:L3"]}
    pid = call(kb, "kb.propose_claim", claim)["proposal_id"]
    [cited] = call(kb, "kb.read_proposal", {"id": pid})["citations"]
    assert cited["cite_path"] is None and cited["source_superseded_by"]
    screen = run_cli("show", pid, cwd=kb.root).out
    assert "superseded by" in screen and "docs/api/guide.md:L3" not in screen
    newer = source_names.resolve(kb, "docs/api/guide.md")
    listed = run_cli("list", "sources", cwd=kb.root).out
    shown = f'{old[:12]}  file        docs/api/guide.md  "API guide"  (superseded by {newer[:12]})'
    assert shown in listed


def test_why_prints_each_citation_by_its_path(kb: KB, docs: dict[str, str], run_cli) -> None:
    made = call(
        kb,
        "kb.propose_claim",
        {"text": "Installing takes pip and vouch init.", "evidence": ["docs/user/guide.md:3-4"]},
        actor=ALICE,
    )
    call(kb, "kb.read_proposal", {"id": made["proposal_id"]}, actor=BOB)
    call(kb, "kb.approve", {"proposal_id": made["proposal_id"]}, actor=BOB)
    assert kb.read(claim_kind.KIND, made["claim_id"]) is not None
    data = run_cli("why", made["claim_id"], "--json", cwd=kb.root).json()
    assert data["evidence"][0]["cite_path"] == "docs/user/guide.md:L3-L4"
    out = run_cli("why", made["claim_id"], cwd=kb.root).out
    assert "docs/user/guide.md:L3-L4 (evidence evidence-" in out
