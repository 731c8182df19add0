"""One contract, two lexical backends: fts5 (default) and whoosh."""

from __future__ import annotations

import itertools

import pytest
from index_support import claim, commit, ids_of, write

from vouch.errors import EmptyQuery
from vouch.index import Filters, Index
from vouch.index.lexical import fts5_query, query_terms
from vouch.store.kb import KB


@pytest.fixture(params=["fts5", "whoosh"])
def index(request: pytest.FixtureRequest, kb: KB):
    cfg = kb.dir / "config.yaml"
    cfg.write_text(cfg.read_text().replace("lexical: fts5", f"lexical: {request.param}"))
    claim(
        kb, "Configure authentication with OAuth tokens", tags=["security", "ops"], type="workflow"
    )
    claim(kb, "Authentication failures are logged", tags=["security"], type="fact")
    claim(kb, "The deploy pipeline runs on every merge", tags=["ops"], type="fact", status="stable")
    claim(kb, 'The "special" app uses C++ and 50% fewer AND-gates', type="fact")
    write(
        kb,
        "page",
        title="Runbook",
        tags=["ops"],
        body="# Runbook\n\n## Tokens\n\nRotate OAuth tokens monthly.\n",
    )
    commit(kb)
    opened = Index.open(KB(kb.dir))
    assert opened.meta["lexical"] == request.param
    yield opened
    opened.close()


def _ids(index: Index, query: str, **filters: object) -> list[str]:
    return ids_of(index, index.lexical(query, 10, Filters.of(**filters)))  # type: ignore[arg-type]


def test_all_words_must_match(index: Index) -> None:
    assert len(_ids(index, "authentication")) == 2
    assert [i[:9] for i in _ids(index, "configure authentication")] == ["configure"]
    assert _ids(index, "authentication kubernetes") == []


def test_any_word_mode(index: Index) -> None:
    assert len(ids_of(index, index.lexical("kubernetes authentication", match_any=True))) == 2


def test_stemming(index: Index) -> None:
    assert [i[:9] for i in _ids(index, "configuring")] == ["configure"]
    assert len(_ids(index, "runs")) == 1


def test_special_characters_are_literal(index: Index) -> None:
    for query in (
        '"special"',
        "C++",
        "50%",
        "AND-gates",
        "AND",
        "NEAR(",
        "app*",
        "-app",
        'unbalanced "quote',
        "col:umn",
    ):
        index.lexical(query)  # never a syntax error
    assert len(_ids(index, '"special" app')) == 1


def test_empty_query_is_e004(index: Index) -> None:
    for query in ("", "   ", "\t\n"):
        with pytest.raises(EmptyQuery) as err:
            index.lexical(query)
        assert err.value.code == "E004"


def test_snippets_mark_matches(index: Index) -> None:
    hits = index.lexical("failures")
    assert len(hits) == 1 and hits[0].score > 0
    # ranking makes no snippets (FTS5): the rows shown get theirs afterwards
    snippet = hits[0].snippet or index.snippets("failures", [hits[0].chunk_id])[hits[0].chunk_id]
    assert "[MATCH]" in snippet and "[/MATCH]" in snippet


def test_filters(index: Index) -> None:
    assert len(_ids(index, "tokens", kinds=["claim"])) == 1
    assert len(_ids(index, "tokens", kinds=["pages"])) == 1
    assert len(_ids(index, "tokens")) == 2
    assert len(_ids(index, "authentication", tags=["security"])) == 2
    assert len(_ids(index, "authentication", tags=["security", "ops"])) == 1  # AND
    assert _ids(index, "authentication", tags=["security", "nope"]) == []
    assert len(_ids(index, "authentication", types=["fact"])) == 1
    assert len(_ids(index, "merge", statuses=["stable"])) == 1
    assert _ids(index, "merge", exclude_statuses=["stable"]) == []


def test_ranking_prefers_more_matches(index: Index) -> None:
    hits = index.lexical("oauth tokens", match_any=True)
    assert len(hits) == 2
    assert all(a.score >= b.score for a, b in itertools.pairwise(hits))


def test_query_quoting_follows_the_spec() -> None:
    assert fts5_query("configure authentication") == '"configure" "authentication"'
    assert fts5_query('my "special" app') == '"my" """special""" "app"'
    assert query_terms("a\u00a0b c") == ["a\u00a0b", "c"]  # only ASCII whitespace splits


def test_incremental_refresh_keeps_the_backend_in_step(index: Index) -> None:
    kb = index.kb
    added = claim(kb, "Kubernetes schedules the batch jobs", tags=["ops"])
    commit(kb)
    assert index.ensure_fresh() is not None
    assert _ids(index, "kubernetes", tags=["ops"]) == [added["id"]]
    path = next((kb.dir / "claims").rglob(f"{added['id']}.yaml"))
    path.write_text(path.read_text().replace("batch jobs", "nightly exports"))
    index.ensure_fresh()
    assert _ids(index, "batch") == [] and _ids(index, "exports") == [added["id"]]
    path.unlink()
    index.ensure_fresh()
    assert _ids(index, "kubernetes") == []
