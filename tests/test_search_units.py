"""The pure parts of search: fusion, cursors, budgets, query handling, snippets, eval."""

from __future__ import annotations

import base64
import itertools
import json
import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vouch.errors import EmptyQuery, StaleCursor, UsageError
from vouch.search import cursor as cursors
from vouch.search import eval as ev
from vouch.search import log as search_log
from vouch.search import query as queries
from vouch.search.budget import apply_budget, estimate_tokens
from vouch.search.fusion import rrf
from vouch.search.human import render
from vouch.search.snippet import make_snippet


# -- fusion ------------------------------------------------------------------------------
def test_rrf_reproduces_the_spec_example() -> None:
    """A chunk ranked #2 by FTS5 and #5 by vectors scores 1/62 + 1/65 = 0.0315."""
    fts = ["a", "doc", "b", "c"]
    vec = ["d", "e", "f", "g", "doc"]
    fused = {f.key: f for f in rrf({"fts": fts, "vector": vec}, k=60)}
    doc = fused["doc"]
    assert round(doc.score, 4) == 0.0315
    assert round(doc.breakdown["fts"], 4) == 0.0161
    assert round(doc.breakdown["vector"], 4) == 0.0154
    assert doc.ranks == {"fts": 2, "vector": 5}
    # higher than a chunk found by one channel only, even at rank 1
    assert all(doc.score > f.score for k, f in fused.items() if k != "doc")


def test_rrf_breakdown_null_for_a_channel_not_run_zero_for_a_miss() -> None:
    only_fts = rrf({"fts": ["x", "y"], "vector": None})
    assert [f.key for f in only_fts] == ["x", "y"]
    assert only_fts[0].breakdown == {"fts": pytest.approx(1 / 61), "vector": None}
    both = {f.key: f for f in rrf({"fts": ["x"], "vector": ["z"]})}
    assert both["z"].breakdown == {"fts": 0.0, "vector": pytest.approx(1 / 61)}


def test_rrf_weights_and_k() -> None:
    fused = {
        f.key: f
        for f in rrf({"fts": ["a"], "vector": ["a"]}, k=0, weights={"fts": 2.0, "vector": 0.5})
    }
    assert fused["a"].score == pytest.approx(2.5)
    with pytest.raises(ValueError):
        rrf({"fts": ["a"]}, k=-1)


@given(st.lists(st.integers(0, 30), max_size=20), st.lists(st.integers(0, 30), max_size=20))
def test_rrf_is_deterministic_and_sorted(a: list[int], b: list[int]) -> None:
    one = rrf({"fts": a, "vector": b})
    two = rrf({"fts": list(a), "vector": list(b)})
    assert [f.key for f in one] == [f.key for f in two]
    assert all(x.score >= y.score for x, y in itertools.pairwise(one))
    assert {f.key for f in one} == set(a) | set(b)


# -- cursors -----------------------------------------------------------------------------
def test_cursor_round_trip_and_binding() -> None:
    fp = cursors.fingerprint({"q": "deploy", "mode": "hybrid"})
    token = cursors.encode(cursors.Cursor("rev1", fp, 10, 30))
    assert token.isascii() and "=" not in token
    back = cursors.decode(token, revision="rev1", expected_fingerprint=fp)
    assert (back.offset, back.depth) == (10, 30)
    with pytest.raises(StaleCursor) as stale:
        cursors.decode(token, revision="rev2", expected_fingerprint=fp)
    assert stale.value.code == "stale_cursor"
    with pytest.raises(cursors.InvalidCursor):
        cursors.decode(token, revision="rev1", expected_fingerprint="other")


_FORGED = base64.urlsafe_b64encode(
    b'{"v":1,"r":"r","f":"f","o":1,"d":1000000000000000000000000000000}'
).decode()


@pytest.mark.parametrize("token", ["", "!!!", "eyJ2IjoxfQ", "bm90IGpzb24", "e30", _FORGED])
def test_garbage_cursors_are_usage_errors(token: str) -> None:
    # review: a forged depth beyond SQLite's integers crashed the search (E200)
    with pytest.raises(cursors.InvalidCursor) as err:
        cursors.decode(token, revision="r", expected_fingerprint="f")
    assert err.value.code == "E100" and err.value.exit_code == 1


# -- budgets -----------------------------------------------------------------------------
def _results(n: int, size: int = 400) -> list[dict[str, object]]:
    return [{"chunk_id": i, "text": f"{i} " + "x" * size, "snippet": "s"} for i in range(n)]


def test_budget_keeps_whole_results_then_shortens_one() -> None:
    results = _results(5)
    each = estimate_tokens(results[0])
    out = apply_budget(results, each * 2 + 20)
    assert out.truncated
    assert len(out.results) == 3
    assert out.results[:2] == results[:2]
    assert out.results[2]["text"].endswith("…") and len(out.results[2]["text"]) < 100
    assert out.tokens <= each * 2 + 20


def test_budget_untouched_when_it_fits_and_too_small_is_refused() -> None:
    results = _results(2)
    assert apply_budget(results, 10_000).truncated is False
    assert apply_budget(results, None).results == results
    with pytest.raises(UsageError) as err:
        apply_budget(results, 1)
    assert err.value.code == "E100" and "--max-tokens" in err.value.message


def test_a_result_that_would_be_only_an_ellipsis_is_dropped() -> None:
    results = _results(3)
    each = estimate_tokens(results[0])
    out = apply_budget(results, each + 12)  # room for the first, not for text of the next
    assert out.truncated and out.results == results[:1]


@given(st.lists(st.text(max_size=300), min_size=1, max_size=8), st.integers(1, 400))
def test_budget_never_exceeds_and_never_returns_an_empty_text(
    texts: list[str], budget: int
) -> None:
    results = [{"chunk_id": i, "text": t} for i, t in enumerate(texts)]
    try:
        out = apply_budget(results, budget)
    except UsageError:  # not even the first result fits with some of its text
        return
    assert out.results
    assert sum(estimate_tokens(r) for r in out.results) <= budget
    assert [r["chunk_id"] for r in out.results] == list(range(len(out.results)))
    for kept, given_ in zip(out.results, results, strict=False):
        text, full = str(kept["text"]), str(given_["text"]).rstrip()
        assert text.rstrip("…") or not full
        assert kept == given_ or len(text.rstrip("…")) >= min(len(full), 40)


# -- queries -----------------------------------------------------------------------------
@pytest.mark.parametrize("text", ["", " ", "\t\n  \r", None])
def test_empty_queries_are_e004(text: object) -> None:
    with pytest.raises(EmptyQuery) as err:
        queries.normalize(text)
    assert err.value.code == "E004" and err.value.exit_code == 1


def test_long_queries_are_cut() -> None:
    assert len(queries.normalize("q" * 10_000)) == queries.MAX_QUERY_CHARS


# -- snippets ----------------------------------------------------------------------------
def test_snippet_marks_query_words_by_prefix() -> None:
    text = "First add the repository. Then run the installation of git from source."
    snip = make_snippet(text, "install git")
    assert "[MATCH]installation[/MATCH]" in snip and "[MATCH]git[/MATCH]" in snip
    assert make_snippet("", "x") == ""
    long = " ".join(f"w{i}" for i in range(200)) + " needle"
    assert make_snippet(long, "needle").startswith("...")


# -- eval metrics ------------------------------------------------------------------------
def test_metrics() -> None:
    rel = frozenset({"b"})
    assert ev.reciprocal_rank(["a", "b"], rel) == 0.5
    assert ev.recall(["a", "b"], frozenset({"b", "c"})) == 0.5
    assert ev.ndcg(["b"], rel) == 1.0
    assert ev.ndcg(["a", "b"], rel) == pytest.approx(1 / math.log2(3))
    assert ev.reciprocal_rank(["a"] * 10 + ["b"], rel) == 0.0  # beyond @10
    assert ev.distinct(["a", "a", "b"]) == ["a", "b"]


def test_evaluate_groups_and_table(tmp_path: Path) -> None:
    golden = tmp_path / "g.jsonl"
    golden.write_text(
        json.dumps({"query": "q1", "relevant": ["a"], "group": "summary"})
        + "\n\n"
        + json.dumps({"query": "q2", "relevant": ["b"], "group": "paraphrase"})
        + "\n"
    )
    gq = ev.load_golden(golden)
    report = ev.evaluate(
        gq, lambda q, mode: ["a", "b"] if mode == "fts" else ["b"], modes=("fts", "vector")
    )
    assert report["groups"] == {"all": 2, "summary": 1, "paraphrase": 1}
    assert report["modes"]["fts"]["summary"]["mrr@10"] == 1.0
    assert report["modes"]["fts"]["paraphrase"]["mrr@10"] == 0.5
    assert report["modes"]["vector"]["all"]["mrr@10"] == 0.5
    assert "paraphrase" in ev.table(report)


@pytest.mark.parametrize("line", ['{"query": ""}', "not json", '{"query": "q", "relevant": []}'])
def test_bad_golden_lines(tmp_path: Path, line: str) -> None:
    path = tmp_path / "g.jsonl"
    path.write_text(line + "\n")
    with pytest.raises(Exception) as err:
        ev.load_golden(path)
    assert getattr(err.value, "code", None) == "E100"


# -- log and stats -----------------------------------------------------------------------
def test_log_and_stats(tmp_path: Path) -> None:
    for q, n in (("deploy", 3), ("Deploy ", 2), ("rollback plan", 0), ("rollback plan", 0)):
        search_log.record(
            tmp_path, query=q, mode="hybrid", result_count=n, error=None, duration_ms=1.5
        )
    search_log.record(
        tmp_path, query="x", mode="fts", result_count=0, error="E002: gone", duration_ms=0.1
    )
    (tmp_path / search_log.LOG_NAME).open("a").write("{broken\n")
    # review: a hand-edited line with a non-integer count made `vouch stats` crash (E200)
    (tmp_path / search_log.LOG_NAME).open("a").write(
        '{"query": "q", "result_count": "a"}\n{"query": 5}\n[1]\n{"query": "q", '
        '"result_count": 1.5}\n'
    )
    entries = list(search_log.read(tmp_path))
    assert len(entries) == 5
    assert set(entries[0]) >= {"query", "mode", "result_count", "error", "duration_ms", "at"}
    data = search_log.stats(tmp_path)
    assert data["searches"] == 5 and data["errors"] == 1
    assert data["top_queries"][0] == {"query": "deploy", "count": 2, "avg_results": 2.5}
    assert data["zero_result_queries"] == [{"query": "rollback plan", "count": 2}]


def test_human_format_follows_the_spec() -> None:
    response = {
        "query": "install git",
        "total_matches": 47,
        "returned": 1,
        "offset": 0,
        "next_cursor": None,
        "truncated": False,
        "results": [
            {
                "score": 0.031,
                "id": "git-admin-12345678",
                "kind": "source",
                "status": "",
                "text": "To install the latest version of git",
                "snippet": "To [MATCH]install[/MATCH] the latest",
                "source": {
                    "title": "Git Admin Guide",
                    "page": 12,
                    "section": "",
                    "type": "pdf",
                    "tags": ["git", "admin"],
                },
            }
        ],
    }
    lines = render(response).splitlines()
    assert lines[0] == 'Search: "install git" (47 matches, showing top 1)'
    assert lines[1].startswith(
        "1. [0.031] [unreviewed source] Git Admin Guide (p.12) [source/pdf] [git, admin]"
    )
    assert lines[2] == "To install the latest"


def test_the_prior_table_from_config() -> None:
    from vouch.core.config import Config
    from vouch.search import prior
    from vouch.search.fusion import Fused
    from vouch.search.ranked import Ranked

    def table(text: str) -> dict[str, float]:
        return prior.boosts(Config.from_text(text, "config.yaml"))

    assert table("search: {}\n") == prior.DEFAULT_BOOSTS
    custom = table("search:\n  prior:\n    claim: 0.5\n    page: {draft: 0.2}\n")
    assert prior.boost(custom, "claim", "stable") == 0.5  # the kind's number wins
    assert prior.boost(custom, "page", "draft") == 0.2
    assert prior.boost(custom, "source", "") == 0.0
    for bad in ("search:\n  prior: 3\n", "search:\n  prior:\n    claim: lots\n"):
        with pytest.raises(UsageError):
            table(bad)
    ranked = Ranked.of(
        [Fused(1, 0.5, {"fts": 0.5}), Fused(2, 0.45, {"fts": 0.45}), Fused(-1, 0.4, {"fts": 0.0})]
    )
    labels = ([0, 1, -1], [("source", "active"), ("claim", "stable")])
    out = prior.apply(ranked, labels, prior.DEFAULT_BOOSTS).fused()
    assert [f.key for f in out] == [2, 1, -1]
    assert out[2].breakdown == {"fts": 0.0, "prior": 0.0}
    assert out[0].breakdown["prior"] == pytest.approx(0.45 * 0.3) and out[1].breakdown["prior"] == 0
