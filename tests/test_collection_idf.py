"""A search narrowed to tags weighs its words within the tagged rows (`lexical.collection`,
issue 35): a word in every row of a collection says nothing there, however rare it is
elsewhere. The cold path (FTS5, one phrase at a time) and the warm one (postings in
memory) give the same hits and scores to the last bit; turns of one session rise
together (`ranking.by_session`)."""

from __future__ import annotations

import random
from typing import Any

from index_support import claim, commit
from test_postings import WORDS  # the same filler vocabulary

from vouch.core.config import Config
from vouch.index.filters import Filters
from vouch.search import access
from vouch.search.engine import SearchRequest, search
from vouch.search.request import HIDDEN_STATUSES, SEARCH_KINDS
from vouch.store import supplied
from vouch.store.kb import KB


def _collections(kb: KB) -> None:
    """Collection `a`: every claim names alice, one a zebra; `b` (many more rows): no
    alice, a zebra in every other one."""
    rng = random.Random(5)
    for n in range(40):
        said = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 10)))
        claim(kb, f"alice {said} {n}", tags=["a"])
    for n in range(300):
        said = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 10)))
        zebra = "zebra " if n % 2 else ""
        claim(kb, f"{zebra}{said} {n}", tags=["b"], status=rng.choice(["working", "stable"]))
    claim(kb, "alice alice alice alice said so", tags=["a"])
    claim(kb, "the zebra crossing was repainted", tags=["a"])
    claim(kb, "zebra zebra stripes", tags=["b"])
    claim(kb, "alice saw a zebra on the long winding road past the old farm gate", tags=["c"])
    claim(kb, "a zebra", tags=["c"])
    for n in range(10):
        claim(kb, f"alice went home {n}", tags=["c"])
    commit(kb)


def _ids(searcher: access.SearchIndex, hits: list[Any]) -> list[str]:
    info = searcher.chunks([h.chunk_id for h in hits])
    return [info[h.chunk_id].text for h in hits]


def test_a_word_in_every_row_of_the_collection_weighs_nothing_there(kb: KB) -> None:
    _collections(kb)
    searcher = access.open_index(kb, {})
    f = Filters.of(kinds=SEARCH_KINDS, exclude_statuses=HIDDEN_STATUSES, tags=("a",))
    whole = _ids(searcher, searcher.lexical("alice zebra", 5, f))
    within = _ids(searcher, searcher.lexical("alice zebra", 5, f, within=True))
    # across the index alice is rare and zebra common: four alices outweigh one zebra
    assert whole[0] == "alice alice alice alice said so"
    # within `a` every row holds alice and one a zebra: that one comes first
    assert within[0] == "the zebra crossing was repainted"
    assert "zebra zebra stripes" not in whole + within  # tag b is not searched
    # without a tag there is no collection: the whole index's counts
    plain = Filters.of(kinds=SEARCH_KINDS, exclude_statuses=HIDDEN_STATUSES)
    assert searcher.lexical("alice zebra", 5, plain, within=True) == searcher.lexical(
        "alice zebra", 5, plain
    )


def test_the_setting_turns_it_off(kb: KB) -> None:
    _collections(kb)

    def first(tag_idf: int) -> str:
        merged = {**kb.config.data, "search": {**kb.config.get("search", {}), "tag_idf": tag_idf}}
        kb.__dict__["config"] = Config(merged)
        request = SearchRequest("alice zebra", mode="fts", top=3, tags=("a",), log=False)
        return str(search(kb, request, warm={})["results"][0]["text"])

    assert first(1) == "the zebra crossing was repainted"
    assert first(0) == "alice alice alice alice said so"


def _queries() -> list[str]:
    rng = random.Random(3)
    picked = [" ".join(rng.sample([*WORDS, "alice"], rng.randint(1, 4))) for _ in range(120)]
    return [
        *picked,
        "alice alice",  # a phrase twice: FTS5 scores each
        "alice zzzqqq",  # a word no row holds: left out, not a row-keeper
        "alice ---",  # a term of no token
        "us-east-1 pool_size",
        "cafe ALICE",
        '"alice" NEAR( -deploy',
    ]


def test_cold_and_warm_rank_alike_to_the_last_bit(kb: KB) -> None:
    _collections(kb)
    searcher = access.open_index(kb, {})
    filters = [
        Filters.of(kinds=SEARCH_KINDS, exclude_statuses=HIDDEN_STATUSES, tags=("a",)),
        Filters.of(kinds=SEARCH_KINDS, tags=("b",), statuses=("stable",)),
        Filters.of(kinds=SEARCH_KINDS, tags=("a", "b")),  # both: no row
        Filters.of(kinds=("page",), tags=("a",)),  # no row passes
    ]
    found = 0
    for query in _queries():
        for f in filters:
            for k in (2, 10, 300):
                searcher.steady = (searcher.revision, 1)  # cold: FTS5, phrase by phrase
                cold = searcher.lexical(query, k, f, within=True)
                searcher.steady = (searcher.revision, 2)  # warm: postings in memory
                warm = searcher.lexical(query, k, f, within=True)
                assert warm == cold, (query, f, k)
                found += len(cold)
    assert found > 1000
    f = filters[0]
    cold = searcher.index.collection_lexical("alice zzzqqq", 10, f)
    assert cold and all(h.score > 0 for h in cold)
    assert searcher.index.collection_lexical("zzzqqq", 10, f) == []


def test_a_word_nowhere_keeps_no_row_out(kb: KB) -> None:
    """The row holding every word the table holds comes first, though a shorter row
    holding one of them scores higher: a word no row holds changes nothing."""
    _collections(kb)
    searcher = access.open_index(kb, {})
    f = Filters.of(kinds=SEARCH_KINDS, tags=("c",))
    for warm in (1, 2):
        searcher.steady = (searcher.revision, warm)
        asked = searcher.lexical("alice zebra", 10, f, within=True)
        assert _ids(searcher, asked)[0].startswith("alice saw a zebra on the long")
        assert asked[0].score < asked[1].score  # "a zebra": one word, higher
        assert searcher.lexical("alice zebra zzzqqq", 10, f, within=True) == asked


def test_turns_of_one_session_rise_together(kb: KB) -> None:
    """The same turn, word for word, in two sessions among the same filler: alone they
    score alike; with a session share, the copy in the session whose best turn holds
    the rest of the question comes first, and the part shows in its breakdown. No turn
    rises above the best of its session (a document above them all stays above)."""
    filler = [f"Ann: filler line {n} about nothing" for n in range(4)]
    lines = ["# Session 1 — 8 May, 2023", "Bob: the garden needs rain", *filler]
    lines += ["Cy: we grew tomatoes", *filler]
    lines += ["# Session 2 — 9 May, 2023", *filler, "Cy: we grew tomatoes", *filler]
    supplied.register_source(kb, "t", "\n".join(lines) + "\n", "chat.txt", type="transcript")

    def copies(share: float) -> list[dict[str, Any]]:
        return [r for r in search_all(kb, share) if r["text"] == "Cy: we grew tomatoes"]

    alone = copies(0.0)
    assert len(alone) == 2 and alone[0]["score"] == alone[1]["score"]
    assert all("session" not in r["score_breakdown"] for r in alone)
    first, second = copies(0.2)
    assert first["source"]["session"] == 1 and second["source"]["session"] == 2
    assert first["score"] > second["score"]
    # the copy in session 2 is that session's best turn: it stays where it was
    assert first["score_breakdown"]["session"] > second["score_breakdown"]["session"] == 0
    assert second["score"] == alone[0]["score"]
    for r in (first, second):  # the parts add up to the score
        assert abs(sum(r["score_breakdown"].values()) - r["score"]) < 1e-5
    assert max(r["score"] for r in search_all(kb, 0.2)) == max(
        r["score"] for r in search_all(kb, 0.0)
    )


def search_all(kb: KB, share: float) -> list[dict[str, Any]]:
    merged = {**kb.config.data, "search": {**kb.config.get("search", {}), "session_share": share}}
    kb.__dict__["config"] = Config(merged)
    request = SearchRequest("garden rain tomatoes", top=20, log=False)
    return list(search(kb, request, warm={})["results"])
