"""What a person reads in the first hour (issue 36, the README walk's frictions 4, 13, 15
and 16), on a real knowledge base: a repository whose `docs/` tree is registered with
`vouch source add docs --recursive` and one approved claim citing it by path.

- search on a terminal marks each hit nobody reviewed (a source's raw text, an open
  proposal) at the start of its line; approved knowledge carries no such mark;
- context cites by repository path (`docs/user/quickstart.md:L3-L4`), as search and why
  do, in markdown and JSON;
- doctor says what a stale index means and what to do;
- diff's markdown summary counts in the singular for one; the human `--trace` prints each
  channel's list, with names, not only timings.
"""

from __future__ import annotations

from typing import Any

import pytest
from conftest import git
from gate_support import BOB, call, proposed

from vouch.store.kb import KB

QUICKSTART = """\
Quickstart
==========

A Session keeps cookies across requests: every request made from the session
sends the cookies the server set earlier.

Timeouts
--------

Without a timeout a request can wait forever.
"""
INDEX = """\
Features
========

- Sessions with cookie persistence
- Keep-alive and connection pooling
"""
CLAIM = "A Session keeps the cookies the server set across its requests."


def _approve(kb: KB, text: str, cite: str) -> str:
    made = proposed(kb, "kb.propose_claim", {"text": text, "evidence": [cite]})
    assert made.get("proposal_id"), made
    decided = call(kb, "kb.approve", {"proposal_id": made["proposal_id"]}, actor=BOB)
    return str(decided["object_id"])


@pytest.fixture
def docs_kb(kb: KB, run_cli) -> dict[str, Any]:
    (kb.root / "docs" / "user").mkdir(parents=True)
    (kb.root / "docs" / "user" / "quickstart.md").write_text(QUICKSTART)
    (kb.root / "docs" / "index.md").write_text(INDEX)
    git(kb.root, "add", "docs")
    git(kb.root, "commit", "-qm", "docs")
    added = run_cli("source", "add", "docs", "--recursive", cwd=kb.root)
    assert added.code == 0, added.err
    claim = _approve(kb, CLAIM, "docs/user/quickstart.md:L4-L5")
    return {"kb": kb, "claim": claim}


def _hit_lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if line[:1].isdigit() and ". [" in line]


def test_search_on_a_terminal_marks_what_nobody_reviewed(docs_kb: dict[str, Any], run_cli) -> None:
    kb, claim = docs_kb["kb"], docs_kb["claim"]
    pending = proposed(
        kb,
        "kb.propose_claim",
        {"text": "Sessions keep cookies forever.", "evidence": ["docs/index.md:L4"]},
    )
    res = run_cli("search", "does a session keep cookies", "--include-pending", cwd=kb.root)
    assert res.code == 0, res.err
    lines = _hit_lines(res.out)  # a terminal: the human format
    approved = [line for line in lines if claim in line]
    sources = [line for line in lines if "[source/" in line]
    proposals = [line for line in lines if f"(pending {pending['proposal_id']})" in line]
    assert approved and sources and proposals, res.out
    assert "unreviewed" not in approved[0]
    for line in sources:
        assert line.split("] ", 1)[1].startswith("[unreviewed source] docs/"), line
    assert proposals[0].split("] ", 1)[1].startswith("[unreviewed proposal] "), proposals[0]
    # a pipe gets JSON, unchanged: the marks are the human format's
    piped = run_cli("search", "does a session keep cookies", cwd=kb.root, terminal=False)
    assert "unreviewed" not in piped.out


def test_context_cites_by_repository_path(docs_kb: dict[str, Any], run_cli) -> None:
    kb, claim = docs_kb["kb"], docs_kb["claim"]
    task = "does a session keep cookies across requests"
    out = run_cli("context", task, cwd=kb.root).out
    assert f"claim `{claim}`" in out, out
    assert "Cites: `docs/user/quickstart.md:L4-L5` (`evidence-" in out, out
    assert "quickstart.md L4-L5" not in out  # the file's bare name and lines, as before
    pack = run_cli("context", task, "--json", cwd=kb.root).json()
    [item] = [i for i in pack["items"] if i["id"] == claim]
    [cited] = item["citations"]
    assert cited["cite_path"] == "docs/user/quickstart.md:L4-L5"
    assert cited["locator"] == "L4-L5"  # the evidence's own span, as it was
    # what context cites is what propose takes back
    again = proposed(
        kb,
        "kb.propose_claim",
        {"text": "Cookies persist in a Session.", "evidence": [cited["cite_path"]]},
    )
    assert again.get("proposal_id"), again


def test_doctor_says_what_a_stale_index_means(docs_kb: dict[str, Any], run_cli) -> None:
    kb = docs_kb["kb"]
    assert run_cli("search", "cookies", "--json", cwd=kb.root).code == 0  # builds it
    _approve(kb, "Without a timeout a request can wait forever.", "docs/user/quickstart.md:L10")
    report = run_cli("doctor", "--json", cwd=kb.root).json()
    index = report["checks"]["index"]
    assert index["state"] == "stale" and report["ok"], index
    assert index["next"] == "the next search refreshes it; `vouch index rebuild` does it now"
    human = run_cli("doctor", cwd=kb.root).out
    [row] = [line for line in human.splitlines() if line.strip().startswith("index")]
    assert "stale" in row and "the next search refreshes it" in row, row
    assert "`vouch index rebuild` does it now" in row
    # and it does: the next search refreshes it, and doctor says nothing more
    assert run_cli("search", "timeout", "--json", cwd=kb.root).code == 0
    index = run_cli("doctor", "--json", cwd=kb.root).json()["checks"]["index"]
    assert index["state"] == "fresh" and "next" not in index


def test_diff_markdown_counts_one_in_the_singular(docs_kb: dict[str, Any], run_cli) -> None:
    kb = docs_kb["kb"]
    res = run_cli("diff", "HEAD~1...HEAD", "--format", "markdown", cwd=kb.root)
    assert res.code == 0, res.err
    assert "**1 claim added**" in res.out, res.out
    assert "1 claims" not in res.out
    _approve(kb, "Without a timeout a request can wait forever.", "docs/user/quickstart.md:L10")
    two = run_cli("diff", "HEAD~3...HEAD", "--format", "markdown", cwd=kb.root).out
    assert "**2 claims added, 2 sources added**" in two, two


def test_the_human_trace_prints_each_channels_list(docs_kb: dict[str, Any], run_cli) -> None:
    kb, claim = docs_kb["kb"], docs_kb["claim"]
    query = ["search", "does a session keep cookies", "--trace"]
    data = run_cli(*query, "--json", cwd=kb.root).json()
    trace = data["trace"]
    named = {e.get("id") for key in ("lexical", "vector", "rrf_inputs") for e in trace[key]}
    assert claim in named
    cites = {e.get("cite") for e in trace["lexical"]}
    assert any(str(c).startswith("docs/user/quickstart.md:L") for c in cites), trace["lexical"]
    out = run_cli(*query, "--format", "human", cwd=kb.root).out
    for title in ("Trace lexical (BM25):", "Trace vector (cosine):", "Trace fused:"):
        assert any(line.startswith(title) for line in out.splitlines()), out
    first = trace["lexical"][0]
    assert f"   1. {first.get('cite') or first['id']} bm25 {first['bm25']:.3f}" in out, out
    assert any(claim in line and "fts #" in line for line in out.splitlines()), out
    assert "Timing: lexical" in out
    lexical_only = run_cli(*query, "--fts-only", "--format", "human", cwd=kb.root).out
    assert "Trace lexical (BM25):" in lexical_only
    assert "Trace vector" not in lexical_only  # the channel did not run
