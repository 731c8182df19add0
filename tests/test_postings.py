"""A warm process answers from memory what a cold one asks SQLite, and must answer
alike: the lexical ranking from postings (`lexical.postings`: FTS5's bm25 to the last bit
— titles, sections, transcript turns with their neighbours' column, stems, hyphenated
phrases, repeated words, filters by kind and status), the snippets of the rows shown
(made on a scratch copy), and each turn's neighbours (`index.turnmap`)."""

from __future__ import annotations

import random

import numpy as np
from index_support import claim, commit, needs_hnswlib, write

from vouch.index.filters import Filters
from vouch.index.lexical import fts5_query
from vouch.index.turnmap import TurnLinks
from vouch.search import access
from vouch.search.request import HIDDEN_STATUSES, SEARCH_KINDS
from vouch.store import supplied
from vouch.store.kb import KB

_LINES = (
    "deploy deploying deployed rollback canary us-east-1 pool_size billing invoice",
    "invoices café Ärger postgres migration schema owner owns alert alerting pager",
    "incident review reviewed token tokens rotate monthly cache eviction latency",
    "v4/backup/accounts INC-5165 the a of",
)
WORDS = [word for line in _LINES for word in line.split()]


def _corpus(kb: KB) -> None:
    rng = random.Random(7)
    for n in range(90):
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 14)))
        status = rng.choice(["working", "stable", "contested", "superseded"])
        claim(kb, f"{text} {n}", status=status)
    for n in range(12):
        sections = "\n\n".join(
            f"## {rng.choice(WORDS)} {rng.choice(WORDS)}\n\n"
            + " ".join(rng.choice(WORDS) for _ in range(rng.randint(10, 40)))
            for _ in range(3)
        )
        write(kb, "page", title=f"{rng.choice(WORDS)} guide {n}", body=f"# Guide\n\n{sections}\n")
    commit(kb)
    turns = []
    for session in range(3):
        turns.append(f"# Session {session + 1} — 8 May, 2023")
        for _ in range(25):
            said = " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 9)))
            turns.append(f"{rng.choice(['Ann', 'Bob', 'Cy'])}: {said}")
    supplied.register_source(kb, "t", "\n".join(turns) + "\n", "chat.txt", type="transcript")


def _queries() -> list[str]:
    rng = random.Random(11)
    picked = [" ".join(rng.sample(WORDS, rng.randint(1, 4))) for _ in range(150)]
    return [
        *picked,
        "deploy deploy deploy",  # a word repeated: FTS5 scores each phrase
        "Deploying ROLLBACK",  # case and stems
        "us-east-1 pool_size",  # phrases of several tokens
        "east-1 us",
        "cafe arger",  # diacritics folded by unicode61
        "nowhere zzzqqq",  # words no row holds
        "deploy nowhere",
        "Ann rollback",
        '"deploy" canary',  # FTS5 syntax is literal text in both
        "C++ rollback",
        "50% latency",
        "NEAR( deploy",
        "deploy* -canary",
        "col:umn owner",
        "AND OR NOT deploy",
    ]


def test_warm_ranking_is_fts5s_own(kb: KB) -> None:
    _corpus(kb)
    searcher = access.open_index(kb, {})
    everything = Filters.of(kinds=SEARCH_KINDS, exclude_statuses=HIDDEN_STATUSES)
    narrowed = Filters.of(kinds=("claim",), statuses=("stable", "contested"))
    said = Filters.of(speakers=("ANN", "cy"), since="2023-05", until="2023-05-08")
    answered = 0
    for query in _queries():
        for f in (everything, narrowed, said):
            for k in (3, 10, 200):
                searcher.steady = (searcher.revision, 1)  # a cold process: FTS5 ranks
                fts5 = searcher.lexical(query, k, f)
                searcher.steady = (searcher.revision, 2)  # a warm one: postings in memory
                warm = searcher.lexical(query, k, f)
                assert warm == fts5, (query, f, k)
                text = access.lexical_query(query)
                answered += searcher.index.warm_lexical(text, k, f) is not None
    assert answered == len(_queries()) * 9  # every one of them answered from memory
    assert any(len(searcher.lexical(q, 200, everything)) > 50 for q in _queries())
    assert any(searcher.lexical(q, 10, said) for q in _queries())  # turns by Ann or Cy


def test_a_term_without_tokens_is_left_to_fts5(kb: KB) -> None:
    _corpus(kb)
    searcher = access.open_index(kb, {})
    f = Filters.of(kinds=SEARCH_KINDS)
    assert searcher.index.warm_lexical("deploy ---", 10, f) is None
    searcher.steady = (searcher.revision, 1)
    fts5 = searcher.lexical("deploy ---", 10, f)  # FTS5 skips the empty phrase
    searcher.steady = (searcher.revision, 2)
    assert fts5 and searcher.lexical("deploy ---", 10, f) == fts5


def test_a_new_revision_is_read_again(kb: KB) -> None:
    """What a warm process holds is read once per index revision, and only from the
    revision's second search on: an index that changes under every search is asked
    with SQL, never read whole each time."""
    _corpus(kb)
    warm: dict[str, object] = {}
    assert not access.open_index(kb, warm).warm  # a cold process
    searcher = access.open_index(kb, warm)
    assert searcher.warm
    f = Filters.of(kinds=SEARCH_KINDS)
    assert searcher.lexical("quokka", 10, f) == []
    claim(kb, "A quokka guards the deploy pipeline")
    commit(kb)
    searcher = access.open_index(kb, warm)
    assert not searcher.warm  # the first search of a new revision: SQL
    cold = searcher.lexical("quokka deploy", 10, f)
    held = searcher.index._postings
    assert held is None or held[0] != searcher.revision  # nothing read for it
    searcher = access.open_index(kb, warm)
    assert searcher.warm
    found = searcher.lexical("quokka deploy", 10, f)
    now = searcher.index._postings
    assert now is not None and now[0] == searcher.revision
    assert found == cold
    first = searcher.index.chunks([found[0].chunk_id])[found[0].chunk_id]
    assert first.text.startswith("A quokka")


def test_a_small_cache_drops_words_and_still_ranks_alike(kb: KB) -> None:
    _corpus(kb)
    searcher = access.open_index(kb, {})
    f = Filters.of(kinds=SEARCH_KINDS)
    searcher.steady = (searcher.revision, 2)
    searcher.lexical("deploy", 10, f)
    held = searcher.index._postings[1]  # type: ignore[index]
    held._instances.limit = held._phrases.limit = 50  # a few words at a time
    for query in _queries()[:40]:
        searcher.steady = (searcher.revision, 1)
        fts5 = searcher.lexical(query, 20, f)
        searcher.steady = (searcher.revision, 2)
        assert searcher.lexical(query, 20, f) == fts5, query
        assert held._instances.held <= 50 or len(held._instances._items) == 1


def test_snippets_from_a_scratch_copy_are_the_indexs_own(kb: KB) -> None:
    """`Fts5Backend.snippets` makes FTS5's snippet on a copy of the rows shown: the
    same text, marks and ellipses as snippet() over the whole index."""
    _corpus(kb)
    searcher = access.open_index(kb, {})
    index = searcher.index
    f = Filters.of(kinds=SEARCH_KINDS)
    compared = 0
    for query in _queries():
        shown = [h.chunk_id for h in searcher.lexical(query, 12, f)]
        if not shown:
            continue
        text = access.lexical_query(query)
        own = index.conn.execute(
            "SELECT rowid, snippet(chunks_fts, 2, '[MATCH]', '[/MATCH]', '...', 32) "
            f"FROM chunks_fts WHERE chunks_fts MATCH ? AND rowid IN ({','.join('?' * len(shown))})",
            [fts5_query(text, True, unique=True), *shown],
        ).fetchall()
        assert index.snippets(text, shown) == {int(c): str(s) for c, s in own}, query
        compared += len(own)
    assert compared > 300


def _said(links: TurnLinks) -> dict[int, str]:
    """Speaker by chunk id, of the turns and their neighbours in `links`."""
    chunks = sorted({*links.turns.tolist(), *links.target.tolist()})
    return {c: links.speakers.names[int(links.table[c])] for c in chunks}


def _sessions(links: TurnLinks) -> set[frozenset[int]]:
    """The turns and their neighbours in `links`, grouped by session (the numbers
    differ between the two ways; which chunks share one must not)."""
    chunks = sorted({*links.turns.tolist(), *links.target.tolist()})
    groups: dict[int, set[int]] = {}
    found = links.session_of(np.array(chunks, np.int64)).tolist()
    for c, group in zip(chunks, found, strict=True):
        assert group >= 0
        groups.setdefault(group, set()).add(c)
    return {frozenset(g) for g in groups.values()}


def test_turn_links_from_memory_are_sqls(kb: KB) -> None:
    """`TurnMap.links` (a warm process) against `Index.turn_links` (one SQL join): the
    same neighbours in the same order, the same speakers and sessions, any mix of ids
    and filters."""
    _corpus(kb)
    chat = "\n".join(
        ["# Session 1 — 9 May, 2023", "Dee: rollback", "Eve: canary", "# Session 2", "Dee: deploy"]
    )
    supplied.register_source(kb, "t", chat + "\n", "short.txt", type="transcript")
    index = access.open_index(kb, {}).index
    every = [int(c) for (c,) in index.conn.execute("SELECT id FROM chunks")]
    assert sum(1 for _ in index.conn.execute("SELECT 1 FROM chunks WHERE turn IS NOT NULL")) > 70
    rng = random.Random(3)
    most = 0  # sessions among the turns of one comparison
    for f in (
        Filters.of(kinds=SEARCH_KINDS),
        Filters.of(kinds=("claim",)),
        Filters.of(speakers=("dee", "Bob"), until="2023-05-08"),
        Filters.of(kinds=SEARCH_KINDS, exclude_statuses=HIDDEN_STATUSES),
        Filters(),
    ):
        for size in (1, 5, 40, len(every)):
            ids = [*rng.sample(every, size), -3, 10**6]  # a pending id, an unknown one
            sql = index.turn_links(ids, f)
            labels = index.labels()
            warm = index.turn_map().links(np.array(ids), labels.mask(f))
            for name in ("source", "target", "turns"):
                assert getattr(warm, name).tolist() == getattr(sql, name).tolist()
            assert _said(warm) == _said(sql)
            assert _sessions(warm) == _sessions(sql)
            most = max(most, len(_sessions(sql)))
            everyone = index.turn_map().links(ids, None if labels.everything(f) else labels.mask(f))
            assert everyone.target.tolist() == warm.target.tolist()
            index._turns = None  # no map held: SQL
            shown = index.neighbours(ids)
            index.turn_map()
            assert index.neighbours(ids) == shown
    assert most >= 4  # both transcripts' sessions


@needs_hnswlib
def test_a_filter_that_narrows_nothing_searches_as_no_filter(kb: KB) -> None:
    """A warm vector search under a filter every chunk passes asks the graph what no
    filter would (k, searched `access.WIDTH` × k wide): the same hits, the same order."""
    _corpus(kb)
    warm: dict[str, object] = {}
    access.open_index(kb, warm)
    searcher = access.open_index(kb, warm)
    assert searcher.index.load_graph()
    nothing = Filters.of(kinds=SEARCH_KINDS)
    some = Filters.of(kinds=SEARCH_KINDS, exclude_statuses=HIDDEN_STATUSES)
    assert searcher._narrows_nothing(nothing) and not searcher._narrows_nothing(some)
    for query in _queries()[:30]:
        wide = searcher.index.vector(searcher.query_vector(query), 10 * access.WIDTH)
        unfiltered = searcher.vector(query, 10, Filters())
        assert searcher.vector(query, 10, nothing) == unfiltered
        assert unfiltered == [(h.chunk_id, h.score) for h in wide][:10]


def test_a_reloaded_index_forgets_what_it_held(kb: KB) -> None:
    """An index reopened on its file (another process refreshed or rebuilt it) reads
    labels, postings and turns again: a rebuilt index numbers its chunks anew, under
    the same corpus revision."""
    _corpus(kb)
    warm: dict[str, object] = {}
    access.open_index(kb, warm)
    searcher = access.open_index(kb, warm)
    f = Filters.of(kinds=SEARCH_KINDS)
    before = searcher.lexical("deploy rollback", 10, f)
    searcher.turn_links([h.chunk_id for h in before], f)
    index = searcher.index
    assert index._postings and index._turns and index._labels
    index._reload()
    assert (index._postings, index._turns, index._labels) == (None, None, None)
    assert searcher.lexical("deploy rollback", 10, f) == before
    assert index._postings is not None


def test_vector_rows_under_a_filter_from_memory_are_sqls(kb: KB) -> None:
    """The filtered exact vector search's rows: from the labels' mask in a warm process,
    from SQL in a cold one — the same rows in the same order, for any filter."""
    _corpus(kb)
    index = access.open_index(kb, {}).index
    _, ids = index._vectors()
    for f in (
        Filters.of(kinds=("claim",)),
        Filters.of(kinds=SEARCH_KINDS, exclude_statuses=HIDDEN_STATUSES),
        Filters.of(speakers=("ann",), since="2023-05"),
        Filters.of(types=("transcript",)),
    ):
        index._labels = None
        sql = index._rows_passing(f, ids)
        index.labels()
        warm = index._rows_passing(f, ids)
        assert warm.tolist() == sql.tolist() and len(sql) > 0, f


def test_an_empty_table_ranks_nothing() -> None:
    """A fresh FTS5 table holds an empty averages record: nothing to rank, no error."""
    import sqlite3

    import numpy as np

    from vouch.index import store
    from vouch.index.lexical.fts5 import WEIGHTS
    from vouch.index.lexical.postings import Postings

    conn = sqlite3.connect(":memory:")
    store.create_schema(conn, "porter unicode61")
    assert Postings(conn, WEIGHTS).ranked("hello world", 10, np.zeros(1, dtype=np.bool_)) == []
