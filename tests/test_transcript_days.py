"""A transcript turn carries the day it was said, in words, as its section (issue 35): a
question that names a day ("on 20 June 2023", "in June") finds the turns of that day,
though only the session's header holds the date. Cold (FTS5) and warm (postings) give
the same ranking."""

from __future__ import annotations

import json
from typing import Any

import pytest

from vouch.core import transcripts
from vouch.index import chunking
from vouch.index.filters import Filters
from vouch.search import access
from vouch.search.engine import SearchRequest, search
from vouch.search.request import HIDDEN_STATUSES, SEARCH_KINDS
from vouch.store import sources, supplied
from vouch.store.kb import KB

FILLER = ["Ann: we walked the dog by the river", "Bob: the river was cold and grey"]
CHAT = "\n".join(
    [
        "# Session 1 — 1:56 pm on 8 May, 2023",
        *FILLER,
        "# Session 2 — 20 June, 2023",
        *FILLER,
        "# Session 3",  # no date: no day
        *FILLER,
    ]
)


@pytest.mark.parametrize(
    ("time", "words"),
    [
        ("2023-05-08T13:56", "8 May 2023"),
        ("2023-12-31", "31 December 2023"),
        ("2024-02-29T00:00", "29 February 2024"),
        ("2023-02-30", ""),  # no such day
        ("09:15", ""),  # a clock time without its day
        ("yesterday", ""),
        ("", ""),
        (None, ""),
    ],
)
def test_a_day_in_words(time: str | None, words: str) -> None:
    assert transcripts.day_in_words(time) == words


def test_each_turn_s_section_is_its_day() -> None:
    pieces, problem = chunking.transcript_pieces(CHAT.encode())
    assert problem is None
    assert [p["section"] for p in pieces] == ["8 May 2023"] * 2 + ["20 June 2023"] * 2 + [""] * 2
    # a turn's own time (JSON Lines) gives its day, in UTC as written
    log = "\n".join(
        json.dumps({"speaker": who, "text": "hello there", "timestamp": when})
        for who, when in (("a", "2024-03-01T23:59:00Z"), ("b", "2024-03-02T00:01:00Z"))
    )
    jsonl, problem = chunking.transcript_pieces(log.encode())
    assert problem is None
    assert [p["section"] for p in jsonl] == ["1 March 2024", "2 March 2024"]
    # the day is not part of the turn's text, its context or its vector
    for p in pieces:
        assert "2023" not in str(p["text"]) + str(p["context"]) + " ".join(p["window"])  # type: ignore[arg-type]


def _without_timing(response: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [(r["cite"], r["score"], r["score_breakdown"]) for r in response["results"]]


@pytest.mark.parametrize("mode", ["fts", "hybrid"])
def test_a_question_naming_a_day_finds_that_day_cold_and_warm(kb: KB, mode: str) -> None:
    """The same words said in two dated sessions (and one undated), among another
    conversation's tagged transcript: the question naming 20 June ranks that session's
    turns first, searched by tag, and the second (warm) search of the revision ranks
    exactly as the first (cold) one."""
    sid = supplied.register_source(
        kb, "t", CHAT + "\n", "ours.txt", type="transcript", tags=["ours"]
    )["id"]
    other = CHAT.replace("20 June", "20 July").replace("8 May", "8 June")
    supplied.register_source(kb, "t", other + "\n", "theirs.txt", type="transcript", tags=["x"])
    warm: dict[str, Any] = {}
    request = SearchRequest(
        "Where did Ann walk the dog on 20 June 2023?", mode=mode, tags=("ours",), log=False
    )
    cold = search(kb, request, warm=warm)
    again = search(kb, request, warm=warm)
    assert _without_timing(cold) == _without_timing(again)
    first = cold["results"][0]
    assert first["cite"] == f"{sid}:T3"  # Ann in session 2, not the same words on 8 May
    assert first["source"]["section"] == "20 June 2023"
    assert first["source"]["time"] == "2023-06-20"
    assert all(r["id"] == sid for r in cold["results"])  # the tag holds
    # without the day, the two dated sessions tie (BM25 alone)
    searcher = access.open_index(kb, {})
    f = Filters.of(kinds=SEARCH_KINDS, exclude_statuses=HIDDEN_STATUSES, tags=("ours",))
    hits = searcher.lexical("Where did Ann walk the dog?", 10, f, within=True)
    rows = searcher.chunks([h.chunk_id for h in hits])
    score = {rows[h.chunk_id].turn: h.score for h in hits}
    assert score[1] == score[3]


def test_the_cli_search_shows_and_finds_the_day(kb: KB, run_cli) -> None:
    (kb.root / "chat.txt").write_text(CHAT + "\n")
    sid = sources.register_source_from_path(kb, "t", "chat.txt")["id"]
    found = run_cli("search", "river in June", "--mode", "fts", "--json", cwd=kb.root).json()
    hits = found["results"] if isinstance(found, dict) else found
    assert hits[0]["cite"] in (f"{sid}:T3", f"{sid}:T4")
    assert hits[0]["source"]["section"] == "20 June 2023"
