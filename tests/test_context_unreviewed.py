"""A first answer that is not empty (issue 36, item 4): `vouch context` / kb.context with
registered sources and nothing approved matching returns the best source passages,
marked unreviewed and kept out of the pack's items, each with a citation naming exactly
the lines it shows, and one line on making them reviewed knowledge. The ContextPack
keeps its shape: the new fields are added beside the old ones."""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import git
from gate_support import ALICE, BOB, call
from servers_support import kb_state

from vouch.servers import jsonl, server_context
from vouch.store.kb import KB

TIMEOUTS = "# Client timeouts\n\nEvery request waits at most thirty seconds for a reply.\n"
FILLER = [f"Section {n} describes the colour of bicycle shed number {n}." for n in range(1, 41)]
POOL = "\n".join([*FILLER[:20], "The connection pool keeps eight sockets per host.", *FILLER[20:]])
OLD_KEYS = {
    "task",
    "items",
    "total_chars",
    "truncated",
    "max_chars",
    "dropped_uncited",
    "corpus_revision",
}


@pytest.fixture
def docs(kb: KB, run_cli) -> KB:
    (kb.root / "docs").mkdir()
    (kb.root / "docs" / "timeouts.md").write_text(TIMEOUTS)
    (kb.root / "docs" / "pool.txt").write_text(POOL + "\n")
    git(kb.root, "add", "docs")
    git(kb.root, "commit", "-qm", "docs")
    assert run_cli("source", "add", "-r", "docs", cwd=kb.root).code == 0
    return kb


def _pack(kb: KB, task: str, **params: Any) -> dict[str, Any]:
    return call(kb, "kb.context", {"task": task, **params})


def _source_lines(kb: KB, passage: dict[str, Any]) -> str:
    text = kb.source_content(passage["id"]).decode()
    lines = passage["lines"]
    return "\n".join(text.split("\n")[lines[0] - 1 : lines[1]])


def test_nothing_approved_gives_the_best_passages_marked_unreviewed(docs: KB, run_cli) -> None:
    kb = docs
    before = kb_state(kb.root)
    pack = _pack(kb, "how long does a request wait for a reply")
    assert set(pack) >= OLD_KEYS and pack["items"] == [] and pack["total_chars"] == 0
    best = pack["unreviewed"][0]
    assert best["reviewed"] is False and best["kind"] == "source"
    assert best["cite_path"] == "docs/timeouts.md:L1-L3"
    assert best["text"] == _source_lines(kb, best) and "thirty seconds" in best["text"]
    assert sum(len(p["text"]) for p in pack["unreviewed"]) <= pack["max_chars"]
    step = pack["next_step"]
    assert "\n" not in step and "unreviewed" in step
    assert "--source docs/timeouts.md:L1-L3" in step and "vouch approve" in step
    assert kb_state(kb.root) == before  # a read

    # the passage's citation is taken as it is: the step it names works
    made = call(
        kb,
        "kb.propose_claim",
        {"text": "A request waits thirty seconds.", "evidence": [best["cite_path"]]},
        actor=ALICE,
    )
    assert made["valid"], made
    call(kb, "kb.read_proposal", {"id": made["proposal_id"]}, actor=BOB)
    call(kb, "kb.approve", {"proposal_id": made["proposal_id"]}, actor=BOB)
    answered = _pack(kb, "how long does a request wait for a reply")
    assert [i["id"] for i in answered["items"]] == [made["claim_id"]]
    assert answered["unreviewed"] == [] and answered["next_step"] is None


def test_a_passage_is_cut_to_whole_lines_around_the_best_one_and_cited_as_cut(
    docs: KB,
) -> None:
    kb = docs
    pack = _pack(kb, "connection pool sockets per host", max_chars=150)
    [pool] = [p for p in pack["unreviewed"] if p["locator"] == "docs/pool.txt"]
    assert "eight sockets per host" in pool["text"] and len(pool["text"]) <= 150
    assert pool["text"] == _source_lines(kb, pool)  # whole lines, exactly the cited ones
    assert isinstance(pool["lines"], list)  # [start, end], as a search hit says them
    start, end = pool["lines"]
    assert pool["cite"] == f"{pool['id']}:L{start}-L{end}"
    assert pool["cite_path"] == f"docs/pool.txt:L{start}-L{end}"
    assert start <= 21 <= end and end - start < 10
    assert sum(len(p["text"]) for p in pack["unreviewed"]) <= 150


def test_the_markdown_marks_the_passages_and_says_what_to_do(docs: KB, run_cli) -> None:
    res = run_cli("context", "how long does a request wait for a reply", cwd=docs.root)
    assert res.code == 0, res.err
    out = res.out
    assert "No approved knowledge in this repository's knowledge base matches" in out
    head = "## Unreviewed source passages (not reviewed knowledge)"
    assert head in out
    after = out.split(head)[1]
    assert "`docs/timeouts.md:L1-L3`" in after and "unreviewed)" in after
    assert "> Every request waits at most thirty seconds for a reply." in after
    assert "> # Client timeouts" in after  # quoted: its heading cannot break the pack
    [step] = [line for line in after.splitlines() if "propose" in line]
    assert "vouch approve" in step and "docs/timeouts.md:L1-L3" in step


def test_no_passage_for_a_task_nothing_matches_and_agents_get_the_same(docs: KB, run_cli) -> None:
    kb = docs
    config = kb.dir / "config.yaml"
    config.write_text(config.read_text().replace("  enabled: true", "  enabled: false", 1))
    git(kb.root, "commit", "-qam", "lexical only")
    empty = _pack(kb, "zyxwvut qqqq")
    assert empty["items"] == [] and empty["unreviewed"] == []
    assert "vouch source add -r" in empty["next_step"]  # still a next step: what to register
    out = run_cli("context", "zyxwvut qqqq", cwd=kb.root).out
    assert "Unreviewed" not in out and "vouch source add -r DIR" in out
    ctx = server_context("jsonl", kb_path=str(kb.root))
    line = {"id": 1, "method": "kb.context", "params": {"task": "thirty seconds reply"}}
    answer = jsonl.handle_line(ctx, json.dumps(line).encode())
    assert answer["ok"], answer
    assert answer["result"]["unreviewed"][0]["cite_path"] == "docs/timeouts.md:L1-L3"


def test_the_passages_share_the_pack_budget(docs: KB) -> None:
    """Two sources match; together they would not fit: the passages' text stays within
    max_chars, as the items' does."""
    wide = _pack(docs, "thirty seconds reply sockets per host", max_chars=4000)
    assert {p["locator"] for p in wide["unreviewed"]} == {"docs/timeouts.md", "docs/pool.txt"}
    tight = _pack(docs, "thirty seconds reply sockets per host", max_chars=100)
    assert tight["unreviewed"] and sum(len(p["text"]) for p in tight["unreviewed"]) <= 100
    assert all(p["text"] == _source_lines(docs, p) for p in tight["unreviewed"])
