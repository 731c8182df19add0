"""The small things a newcomer meets in the first hour (issue 36, finding 9): a mistyped
command names the close ones, an entity may be a library, a recursive add counts the
hidden files it leaves out, a document's own title is read, entities, relations and
pages carry a session and a rationale, `pending` flags proposals with comments, `stats`
counts only people's searches, an open range prints no `None` in the help. (A proposer's
own rejection, a withdrawal: tests/test_withdraw.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import git
from gate_support import a_source, call, proposed

from vouch.core import headings
from vouch.errors import VouchError
from vouch.kinds import entity
from vouch.search import log
from vouch.store.kb import KB


@pytest.mark.parametrize(
    ("argv", "meant"),
    [
        (("serch", "deploys"), "Did you mean one of 'search', 'serve'?"),
        (("list", "claimz"), "Did you mean 'claims'?"),
        (("session", "strat"), "Did you mean 'start'?"),
        (("propose", "--text", "x"), "'propose-claim', 'propose-entity', 'propose-page'"),
    ],
)
def test_a_mistyped_command_names_the_ones_meant(
    kb: KB, run_cli, argv: tuple[str, ...], meant: str
) -> None:
    res = run_cli(*argv, cwd=kb.root)
    assert res.code == 1 and "E100" in res.err and "No such command" in res.err
    assert meant in res.err, res.err
    as_json = run_cli(*argv, "--json", cwd=kb.root)
    assert as_json.code == 1 and meant in as_json.json()["error"]["message"]


def test_a_command_nothing_like_any_is_only_unknown(kb: KB, run_cli) -> None:
    res = run_cli("qqqqqq", cwd=kb.root)
    assert res.code == 1 and "No such command 'qqqqqq'." in res.err
    assert "Did you mean" not in res.err
    assert run_cli("search", "--help").code == 0  # a real command still runs


def test_an_entity_may_be_a_library(kb: KB, run_cli) -> None:
    assert "library" in entity.TYPES
    res = run_cli("propose-entity", "--name", "requests", "--type", "library", "--json",
                  cwd=kb.root)  # fmt: skip
    assert res.code == 0, res.err
    assert res.json()["valid"] is True and res.json()["proposal_id"]
    helped = run_cli("propose-entity", "--help")
    assert "library" in helped.out


def test_a_recursive_add_counts_the_hidden_files_it_leaves_out(kb: KB, run_cli) -> None:
    docs = kb.root / "docs"
    (docs / ".github" / "workflows").mkdir(parents=True)
    (docs / ".github" / "workflows" / "ci.md").write_text("# CI\n")
    (docs / "guide").mkdir()
    (docs / "guide" / ".draft.md").write_text("# Draft\n")
    (docs / "guide" / "intro.md").write_text("# Intro\n\nWelcome.\n")
    (docs / ".env").write_text("TOKEN=x\n")
    res = run_cli("source", "add", "-r", "docs", "--json", cwd=kb.root)
    assert res.code == 0, res.err
    report = res.json()
    assert [i["path"] for i in report["items"]] == ["guide/intro.md"]
    hidden = sorted(s["path"] for s in report["skipped"] if s["reason"].startswith("hidden"))
    assert hidden == [".env", ".github/", "guide/.draft.md"]  # a folder once, not its files
    assert "hidden (name starts with a dot; add it by name) 3" in res.err
    assert "skipped 3" in res.err
    # named, a dotfile is added like any file
    assert run_cli("source", "add", "docs/guide/.draft.md", cwd=kb.root).code == 0


DOCUMENTS = {
    "quickstart.rst": ("Quickstart\n==========\n\nInstall it.\n", "Quickstart"),
    "overview.rst": (
        ".. _top:\n\n==========\nOverview\n==========\n\nText.\n\nUsage\n-----\n\nRun.\n",
        "Overview",
    ),
    "guide.md": ("# The guide\n\nText.\n\n## Setup\n\nMore.\n", "The guide"),
    "notes.md": ("## Only a section\n\nText.\n", None),
    "manual.adoc": ("= The manual\n\nText.\n", "The manual"),
    "install.txt": ("Installing\n----------\n\nUse pip.\n", "Installing"),  # Sphinx's .txt
    "plain.txt": ("Just some words.\n", None),
}


@pytest.mark.parametrize("name", sorted(DOCUMENTS))
def test_a_documents_own_title_is_read(name: str) -> None:
    text, title = DOCUMENTS[name]
    assert headings.document_title(text.encode(), Path(name).suffix) == title


def test_registered_documents_show_their_own_title(kb: KB, run_cli) -> None:
    docs = kb.root / "docs"
    docs.mkdir()
    for name, (text, _) in DOCUMENTS.items():
        (docs / name).write_text(text)
    added = run_cli("source", "add", "-r", "docs", cwd=kb.root)
    assert added.code == 0, added.err
    assert 'docs/quickstart.rst  "Quickstart"' in added.out
    listed = run_cli("list", "sources", cwd=kb.root).out
    assert 'docs/overview.rst  "Overview"' in listed
    assert 'docs/manual.adoc  "The manual"' in listed
    assert "docs/plain.txt\n" in listed and "docs/notes.md\n" in listed
    rows = {r["locator"]: r for r in run_cli("list", "sources", "--json").json()["items"]}
    quick = rows["docs/quickstart.rst"]
    # the source keeps the name it was registered by; its document's title is beside it
    assert quick["title"] == "quickstart.rst"
    assert quick["metadata"] == {"document_title": "Quickstart"}
    assert rows["docs/plain.txt"]["metadata"] == {}
    titled = run_cli("source", "add", "docs/guide.md", "--title", "Team guide", cwd=kb.root)
    assert titled.code == 0 and '"Team guide"' in titled.out


def _session(kb: KB) -> str:
    return str(call(kb, "kb.session_start", {"task": "map the deps"})["session_id"])


def test_entities_relations_and_pages_carry_a_session_and_a_rationale(kb_with_sources: KB) -> None:
    kb = kb_with_sources
    sid = _session(kb)
    why = {"session_id": sid, "rationale": "named in the runbook"}
    a = proposed(kb, "kb.propose_entity", {"name": "requests", "type": "library", **why})
    b = proposed(kb, "kb.propose_entity", {"name": "urllib3", "type": "library", **why})
    rel = proposed(
        kb,
        "kb.propose_relation",
        {"source": a["entity_id"], "relation": "depends_on", "target": b["entity_id"],
         "evidence": [a_source(kb)], **why},
    )  # fmt: skip
    page = proposed(kb, "kb.propose_page", {"title": "Dependencies", "body": "x", **why})
    made = [a, b, rel, page]
    assert all(m["valid"] and m["proposal_id"] for m in made), made
    for m in made:
        message = git(kb.root, "log", "-1", "--format=%B", f"vouch/proposal/{m['proposal_id']}")
        assert f"Vouch-Session: {sid}" in message and "named in the runbook" in message
    listed = call(kb, "kb.list_pending", {"filter": {"session_id": sid}})
    assert sorted(p["proposal_id"] for p in listed) == sorted(m["proposal_id"] for m in made)
    assert {p["rationale"] for p in listed} == {"named in the runbook"}
    ended = call(kb, "kb.session_end", {"session_id": sid})
    assert ended["proposals"] == 4
    # an ended or malformed session is refused, as for a claim, and nothing is proposed
    before = git(kb.root, "for-each-ref")
    for bad in (sid, "no-such-session"):
        with pytest.raises(VouchError):
            call(kb, "kb.propose_entity", {"name": "idna", "type": "library", "session_id": bad})
    assert git(kb.root, "for-each-ref") == before


def test_entity_and_relation_commands_take_session_and_rationale(kb: KB, run_cli) -> None:
    sid = _session(kb)
    res = run_cli("propose-entity", "--name", "numpy", "--type", "library", "--session", sid,
                  "--rationale", "the array library", "--json", cwd=kb.root)  # fmt: skip
    assert res.code == 0, res.err
    pid = res.json()["proposal_id"]
    shown = run_cli("pending", "--json", cwd=kb.root).json()
    assert [(p["session_id"], p["rationale"]) for p in shown if p["proposal_id"] == pid] == [
        (sid, "the array library")
    ]
    helped = run_cli("propose-relation", "--help").out
    assert "--session" in helped and "--rationale" in helped


def test_pending_flags_proposals_with_comments(kb_with_sources: KB, run_cli) -> None:
    kb = kb_with_sources
    quiet = proposed(kb, "kb.propose_claim", {"text": "Nobody asked.", "evidence": [a_source(kb)]})
    asked = proposed(kb, "kb.propose_claim", {"text": "Asked twice.", "evidence": [a_source(kb)]})
    pid = asked["proposal_id"]
    rows = {r["proposal_id"]: r for r in call(kb, "kb.list_pending")}
    assert rows[pid]["comments"] == 0 and rows[pid]["revised_since_comment"] is False
    assert run_cli("comment", pid, "which line says so?", cwd=kb.root).code == 0
    assert run_cli("comment", pid, "and cite it", cwd=kb.root).code == 0
    rows = {r["proposal_id"]: r for r in call(kb, "kb.list_pending")}
    assert (rows[pid]["comments"], rows[pid]["revised_since_comment"]) == (2, False)
    assert rows[quiet["proposal_id"]]["comments"] == 0
    human = run_cli("pending", cwd=kb.root).out
    assert [line for line in human.splitlines() if "[" in line] == [
        line for line in human.splitlines() if line.startswith(pid)
    ]
    assert "Asked twice.  [2 comments]" in human
    revised = call(kb, "kb.revise_proposal", {"proposal_id": pid, "text": "Asked twice, cited."})
    assert revised["valid"], revised
    rows = {r["proposal_id"]: r for r in call(kb, "kb.list_pending")}
    assert (rows[pid]["comments"], rows[pid]["revised_since_comment"]) == (2, True)
    assert "[2 comments, revised since]" in run_cli("pending", cwd=kb.root).out


def test_stats_counts_people_not_the_review_screens_own_search(
    kb_with_sources: KB, run_cli
) -> None:
    kb = kb_with_sources
    made = proposed(
        kb, "kb.propose_claim", {"text": "Deploys need a green CI run.", "evidence": [a_source(kb)]}
    )
    assert run_cli("show", made["proposal_id"], cwd=kb.root).code == 0  # looks for look-alikes
    assert list(log.read(kb.dir)) == []
    assert run_cli("search", "green CI", cwd=kb.root).code == 0
    stats = run_cli("stats", "--json", cwd=kb.root).json()
    assert stats["searches"] == 1 and stats["top_queries"][0]["query"] == "green ci"


def test_an_open_range_prints_no_bound_in_the_help(run_cli) -> None:
    for command in ("propose-relation", "propose-claim", "revise"):
        helped = run_cli(command, "--help").out
        assert "None" not in helped, helped
        assert "--confidence FLOAT" in helped
