"""Cite in one step (issue 18, point 1): a source hit carries its line span and a ready
citation that propose-claim takes as is; claim and page hits carry their evidence and
confidence; sections are found in setext markdown, reStructuredText, AsciiDoc and man
pages, and `vouch show --section` takes the names search prints."""

from __future__ import annotations

import re
from pathlib import Path

import jsonschema
from gate_support import BOB, call, proposed
from search_support import SCHEMA

from vouch.core import headings
from vouch.store.kb import KB

RST = """\
=======
Client
=======

The client talks to the server.

Timeouts
--------

Every request waits at most thirty seconds for a reply
before the client gives up and raises ReadTimeout.

Retries
~~~~~~~

.. note::

   Idempotent requests are retried three times.

Pooling
-------

Connections are pooled per host.
"""

SETEXT = """\
Deploying
=========

Run the ship tool from main.

Rollback
--------

A rollback redeploys the previous build with ship back.
"""

ADOC = """\
= Cache guide

== Eviction

Entries are evicted after ten minutes of idleness.

----
== not a heading inside a listing block
----

=== Warmup

The cache warms from the snapshot file.
"""

MAN = """\
FROB(1)                     User Commands                    FROB(1)

NAME
       frob - frobnicate the widgets

SYNOPSIS
       frob [OPTION]... [WIDGET]...

DESCRIPTION
       Frob adjusts every widget gently.

EXIT STATUS
       Frob exits with status 7 when a widget resists.
"""


def test_sections_of_each_markup() -> None:
    names = lambda secs: [(s.heading, s.level) for s in secs if s.heading]  # noqa: E731
    assert names(headings.markdown(SETEXT)) == [("Deploying", 1), ("Rollback", 2)]
    assert names(headings.rst(RST)) == [
        ("Client", 1),
        ("Timeouts", 2),
        ("Retries", 3),
        ("Pooling", 2),
    ]
    assert names(headings.asciidoc(ADOC)) == [("Cache guide", 1), ("Eviction", 2), ("Warmup", 3)]
    assert [h for h, _ in names(headings.man(MAN))] == [
        "NAME",
        "SYNOPSIS",
        "DESCRIPTION",
        "EXIT STATUS",
    ]
    troff = '.TH FROB 1\n.SH NAME\nfrob\n.SH "SEE ALSO"\nx\n.SS Details\ny\n'
    assert names(headings.troff(troff)) == [("NAME", 1), ("SEE ALSO", 1), ("Details", 2)]
    # rst kept in .txt (Sphinx, Django) and rendered man pages are recognised by content
    assert headings.text_markup(RST) == "rst"
    assert headings.text_markup(MAN) == "man"
    assert headings.text_markup("just words\nand more words\n") is None
    # a thematic break, a list item or a fenced line over dashes is no heading
    md = "para one\n\n---\n\n- item\n---\n\n```\nfenced\n---\n```\n"
    assert names(headings.markdown(md)) == []


def _add(kb: KB, run_cli, files: dict[str, str]) -> dict[str, str]:
    docs = kb.root / "docs"
    docs.mkdir(exist_ok=True)
    for name, text in files.items():
        (docs / name).write_text(text)
    res = run_cli("source", "add", "docs", "-r", "--json", cwd=kb.root)
    assert res.code == 0, res.err
    listed = run_cli("list", "sources", "--json", cwd=kb.root).json()["items"]
    return {row["title"]: row["id"] for row in listed}


def _hit(run_cli, kb: KB, query: str, kind: str = "source") -> dict:
    res = run_cli("search", query, "--kind", kind, "--json", cwd=kb.root)
    assert res.code == 0, res.err
    jsonschema.validate(res.json(), SCHEMA)
    return res.json()["results"][0]


def test_a_source_hit_is_cited_as_is_and_its_section_shown(kb: KB, run_cli) -> None:
    ids = _add(
        kb, run_cli, {"client.rst": RST, "deploy.md": SETEXT, "cache.adoc": ADOC, "frob.1.txt": MAN}
    )
    hit = _hit(run_cli, kb, "thirty seconds ReadTimeout")
    sid = ids["client.rst"]
    assert hit["id"] == sid and hit["source"]["section"] == "Timeouts"
    start, end = hit["source"]["lines"]
    assert hit["cite"] == f"{sid}:L{start}-L{end}"
    lines = RST.split("\n")[start - 1 : end]
    assert any("thirty seconds" in line for line in lines)
    for query, title, section in (
        ("previous build ship back", "deploy.md", "Rollback"),
        ("evicted idleness", "cache.adoc", "Eviction"),
        ("widget resists status", "frob.1.txt", "EXIT STATUS"),
    ):
        found = _hit(run_cli, kb, query)
        assert (found["id"], found["source"]["section"]) == (ids[title], section)
        # the name search prints is the name `show --section` takes
        shown = run_cli("show", found["id"], "--section", section, cwd=kb.root)
        assert shown.code == 0, shown.err
        assert shown.out.splitlines()[0].endswith(section)
        body = [line for line in shown.out.splitlines()[1:] if line.strip()]
        assert body and not re.fullmatch(r"[=~-]+", body[0])  # no underline left over
    # the human line prints the span and a citation whose short id is taken back
    human = run_cli(
        "search", "thirty seconds ReadTimeout", "--kind", "source", "--format", "human", cwd=kb.root
    )
    cite = re.search(r"\b([0-9a-f]{12}):L(\d+)-L(\d+)\b", human.out)
    assert cite and sid.startswith(cite.group(1)), human.out
    # the citation goes into a proposal as is, JSON form and human form alike
    for given in (hit["cite"], cite.group(0)):
        made = run_cli(
            "propose-claim", "--text", f"Requests time out after 30 s ({given[-6:]})",
            "--source", given, "--json", cwd=kb.root,
        )  # fmt: skip
        assert made.code == 0, made.err
        assert made.json()["valid"] is True


def test_claim_and_page_hits_carry_evidence_and_confidence(kb: KB, run_cli) -> None:
    ids = _add(kb, run_cli, {"client.rst": RST})
    sid = ids["client.rst"]
    hit = _hit(run_cli, kb, "thirty seconds ReadTimeout")
    claim = proposed(
        kb,
        "kb.propose_claim",
        {"text": "Client requests time out after thirty seconds.", "evidence": [hit["cite"]],
         "confidence": 0.9},
    )  # fmt: skip
    call(kb, "kb.approve", {"proposal_id": claim["proposal_id"]}, actor=BOB)
    page = proposed(
        kb,
        "kb.propose_page",
        {"title": "Client timeouts", "body": "Timeouts\n========\n\nThirty seconds.\n",
         "claims": [claim["claim_id"]], "sources": [sid]},
    )  # fmt: skip
    call(kb, "kb.approve", {"proposal_id": page["proposal_id"]}, actor=BOB)
    found = _hit(run_cli, kb, "client requests time out thirty seconds", "claim")
    assert found["id"] == claim["claim_id"]
    [evidence] = found["evidence"]
    assert evidence.startswith("timeouts-") or re.fullmatch(r"[a-z0-9-]+-[0-9a-f]{8}", evidence)
    assert found["confidence"] == 0.9 and found["status"] == "working"
    assert found["cite"] is None
    page_hit = _hit(run_cli, kb, "client timeouts thirty seconds", "page")
    assert page_hit["evidence"] == [sid, claim["claim_id"]]
    assert page_hit["claims"] == [claim["claim_id"]]
    assert page_hit["source"]["section"] == "Timeouts"  # setext in a page body too
    human = run_cli(
        "search", "client requests time out", "--kind", "claim", "--format", "human", cwd=kb.root
    )
    assert f"evidence: {evidence}" in human.out and "(confidence 0.9)" in human.out


def test_a_pending_claim_hit_carries_its_evidence(kb: KB, run_cli) -> None:
    ids = _add(kb, run_cli, {"client.rst": RST})
    sid = ids["client.rst"]
    proposed(
        kb, "kb.propose_claim", {"text": "Connections are pooled per host.", "evidence": [sid]}
    )
    res = run_cli(
        "search", "pooled per host", "--kind", "claim", "--include-pending", "--json",
        cwd=kb.root,
    )  # fmt: skip
    [hit] = [r for r in res.json()["results"] if r.get("pending")]
    assert hit["evidence"] == [sid] and hit["confidence"] == 0.7


def test_a_pdf_or_unsectioned_hit_cites_what_it_can(kb: KB, run_cli, tmp_path: Path) -> None:
    ids = _add(kb, run_cli, {"notes.txt": "plain words about a lighthouse keeper\n"})
    hit = _hit(run_cli, kb, "lighthouse keeper")
    assert hit["source"]["lines"] == [1, 1] and hit["source"]["section"] == ""
    assert hit["cite"] == f"{ids['notes.txt']}:L1-L1"
