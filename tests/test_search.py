"""`vouch search` and `kb.search` end to end: a real git repo, SQLite FTS5, the bundled
model, the CLI in-process. One knowledge base per module (read-only tests), fresh ones
for tests that change the knowledge."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import git, hermetic
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from search_support import build, validate, write_object

from vouch.errors import EmptyQuery, VouchError
from vouch.kinds import KINDS
from vouch.methods import registry as ops
from vouch.methods.context import CallContext
from vouch.search import log as search_log
from vouch.search.engine import SearchRequest, search
from vouch.store.kb import KB


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, Any]]]:
    with hermetic(tmp_path_factory, "search") as repo:
        made = build(repo)
        yield repo, made


@pytest.fixture
def srch(corpus: tuple[Path, dict[str, Any]], run_cli: Any) -> Any:
    repo, _ = corpus

    def _run(*args: str) -> Any:
        return run_cli("search", *args, "--kb", str(repo), terminal=False)

    return _run


def ok(result: Any) -> dict[str, Any]:
    assert result.code == 0, result.err
    data = result.json()
    validate(data)
    return data


# -- the contract ------------------------------------------------------------------------
def test_hybrid_json_matches_the_schema_and_finds_the_runbook(srch: Any) -> None:
    data = ok(srch("rollback billing"))
    assert data["schema_version"] == "search_response.v1"
    assert data["query"] == "rollback billing" and data["mode"] == "hybrid"
    assert data["returned"] == len(data["results"]) <= 10
    assert data["total_matches"] >= data["returned"]
    top = data["results"][0]
    assert "rollback" in top["text"].lower()
    assert "[MATCH]" in top["snippet"] and "[/MATCH]" in top["snippet"]
    assert set(top["score_breakdown"]) == {"fts", "vector", "prior"}
    assert top["backend"] == "hybrid"
    assert set(top["source"]) >= {
        "document_id",
        "title",
        "path",
        "type",
        "page",
        "section",
        "chunk_index",
        "total_chunks",
        "tags",
    }
    scores = [r["score"] for r in data["results"]]
    assert scores == sorted(scores, reverse=True)


def test_fts_only_and_vec_only_breakdowns(srch: Any) -> None:
    fts = ok(srch("deploy", "--fts-only"))
    assert fts["mode"] == "fts" and fts["results"]
    for r in fts["results"]:
        assert r["score_breakdown"]["vector"] is None and r["score_breakdown"]["fts"] > 0
        assert r["score_breakdown"]["prior"] is None  # rank fusion applies no prior
        assert r["backend"] == "fts5"
    vec = ok(srch("deploy", "--vec-only"))
    for r in vec["results"]:
        assert r["score_breakdown"]["fts"] is None and r["score_breakdown"]["vector"] > 0
        assert set(r["score_breakdown"]) == {"fts", "vector", "prior"}
        assert r["backend"] == "vector"


def test_rrf_k_fuses_with_equal_weights_as_in_the_spec(srch: Any) -> None:
    """With --rrf-k every score is Σ 1/(k + rank) over the channels that found the chunk."""
    data = ok(srch("deploy rollback", "--rrf-k", "60", "--trace", "--top", "20"))
    ranks = {i["chunk_id"]: i["ranks"] for i in data["trace"]["rrf_inputs"]}
    assert data["trace"]["weights"] == {"fts": 1.0, "vector": 1.0}
    both = 0
    for r in data["results"]:
        expected = sum(1 / (60 + rank) for rank in ranks[r["chunk_id"]].values())
        assert r["score"] == pytest.approx(expected, abs=1e-6)
        both += len(ranks[r["chunk_id"]]) == 2
    assert both, "some chunk is found by both channels"
    k0 = ok(srch("deploy rollback", "--rrf-k", "0", "--fts-only"))
    assert k0["results"][0]["score"] == pytest.approx(1.0)


def test_trace_has_channel_lists_and_timings(srch: Any) -> None:
    data = ok(srch("on call rotation", "--trace"))
    trace = data["trace"]
    assert trace["lexical"] and trace["vector"] and trace["rrf_inputs"]
    assert set(trace["timing"]) == {"lexical_ms", "vector_ms", "fusion_ms", "total_ms"}
    assert trace["lexical"][0]["rank"] == 1 and "bm25" in trace["lexical"][0]
    assert "cosine" in trace["vector"][0]
    assert "trace" not in ok(srch("on call rotation"))


def test_human_format(srch: Any) -> None:
    result = srch("on call rotation", "--format", "human", "--top", "1")
    assert result.code == 0
    lines = result.out.splitlines()
    assert lines[0].startswith('Search: "on call rotation" (')
    assert lines[0].endswith("showing top 1)")
    assert lines[1].startswith("1. [")  # convex scores (times the prior)
    assert "Billing team handbook §On call [page/workflow] [billing, handbook]" in result.out


def test_json_is_the_default_in_a_pipe_and_json_flag_is_an_alias(srch: Any) -> None:
    plain = srch("deploy", "--fts-only")
    alias = srch("deploy", "--fts-only", "--json")
    assert json.loads(plain.out)["results"] == json.loads(alias.out)["results"]


# -- filters -----------------------------------------------------------------------------
def test_kind_filter(srch: Any) -> None:
    data = ok(srch("deploy", "--kind", "claim"))
    assert data["results"] and {r["kind"] for r in data["results"]} == {"claim"}
    both = ok(srch("deploy", "--kind", "page,entity"))
    assert {r["kind"] for r in both["results"]} <= {"page", "entity"}
    bad = srch("deploy", "--kind", "evidence")
    assert bad.code == 1 and "E100" in bad.err


def test_tags_are_anded(srch: Any) -> None:
    one = ok(srch("deploy", "--tags", "production", "--top", "50"))
    assert one["results"] and all("production" in r["source"]["tags"] for r in one["results"])
    two = ok(srch("deploy", "--tags", "ops,billing", "--top", "50"))
    assert two["results"]
    for r in two["results"]:
        assert {"ops", "billing"} <= set(r["source"]["tags"])
    assert ok(srch("deploy", "--tags", "ops,nosuchtag"))["results"] == []


def test_type_filter(srch: Any) -> None:
    data = ok(srch("deploy", "--type", "decision,workflow", "--top", "50"))
    assert data["results"]
    assert {r["source"]["type"] for r in data["results"]} <= {"decision", "workflow"}


def test_hidden_statuses_show_only_when_asked(srch: Any) -> None:
    default = ok(srch("deploy invoices script card", "--top", "50", "--kind", "claim"))
    statuses = {r["status"] for r in default["results"]}
    assert statuses and not statuses & {"archived", "superseded", "redacted"}
    archived = ok(srch("invoices rendered", "--status", "archived"))
    assert archived["results"] and {r["status"] for r in archived["results"]} == {"archived"}
    several = ok(srch("deploy", "--status", "superseded,redacted", "--top", "50"))
    assert {r["status"] for r in several["results"]} == {"superseded", "redacted"}


def test_top_threshold_and_default_top(srch: Any, corpus: Any) -> None:
    assert ok(srch("billing", "--top", "3"))["returned"] == 3
    everything = ok(srch("billing", "--top", "50"))
    cut = everything["results"][2]["score"]
    above = ok(srch("billing", "--top", "50", "--threshold", str(cut)))
    assert above["results"] and all(r["score"] >= cut for r in above["results"])
    # a score copied from a result keeps that result (scores are shown to six decimals)
    for hit in everything["results"][:5]:
        kept = ok(srch("billing", "--top", "50", "--threshold", str(hit["score"])))
        assert hit["chunk_id"] in [r["chunk_id"] for r in kept["results"]], hit["score"]
    assert ok(srch("billing", "--threshold", "5"))["results"] == []
    assert ok(srch("billing"))["returned"] == 10  # search.default_top


def test_a_query_of_unknown_words_matches_nothing(srch: Any) -> None:
    # review: a query the model has no tokens for embeds as a zero vector, whose cosine
    # 0.0 with every chunk passed the similarity floor: all chunks came back as matches
    for mode in (["--vec-only"], []):
        data = ok(srch("ⱥⱦ", *mode))
        assert data["results"] == [] and data["total_matches"] == 0


def test_no_results_is_exit_zero(srch: Any) -> None:
    data = ok(srch("zzqxv", "--fts-only"))
    assert data["results"] == [] and data["total_matches"] == 0 and data["next_cursor"] is None


# -- cursors and budgets -----------------------------------------------------------------
@pytest.mark.parametrize("mode", [[], ["--fts-only"], ["--vec-only"]])
def test_cursor_pages_through_everything_without_gaps_or_duplicates(
    srch: Any, mode: list[str]
) -> None:
    first = ok(srch("billing deploy", "--top", "3", "--trace", *mode))
    expected = [i["chunk_id"] for i in first["trace"]["rrf_inputs"]]
    assert len(expected) == first["total_matches"] > 3
    seen = [r["chunk_id"] for r in first["results"]]
    cursor = first["next_cursor"]
    pages = 1
    while cursor:
        page = ok(srch("billing deploy", "--top", "3", "--trace", *mode, "--cursor", cursor))
        assert page["offset"] == len(seen)
        seen += [r["chunk_id"] for r in page["results"]]
        cursor = page["next_cursor"]
        pages += 1
    assert seen == expected
    assert len(set(seen)) == len(seen)
    assert pages == -(-len(expected) // 3)


def test_cursor_of_another_query_or_garbage_is_e100(srch: Any) -> None:
    cursor = ok(srch("billing", "--top", "2"))["next_cursor"]
    other = srch("deploy", "--top", "2", "--cursor", cursor)
    assert other.code == 1 and "E100" in other.err
    garbage = srch("billing", "--top", "2", "--cursor", "not-a-cursor")
    assert garbage.code == 1 and "E100" in garbage.err


def test_max_tokens_truncates_and_the_cursor_continues(srch: Any) -> None:
    full = ok(srch("billing deploy", "--top", "5"))
    small = ok(srch("billing deploy", "--top", "5", "--max-tokens", "300"))
    assert small["truncated"] is True
    assert 1 <= small["returned"] < 5
    assert small["results"][0]["chunk_id"] == full["results"][0]["chunk_id"]
    after = ok(
        srch(
            "billing deploy", "--top", "5", "--max-tokens", "300", "--cursor", small["next_cursor"]
        )
    )
    assert after["offset"] == small["returned"]
    assert after["results"][0]["chunk_id"] == full["results"][small["returned"]]["chunk_id"]
    assert ok(srch("billing deploy", "--top", "5", "--max-tokens", "100000"))["truncated"] is False
    assert all(r["text"].rstrip("…") for r in small["results"] + after["results"])
    tiny = srch("billing deploy", "--max-tokens", "20", "--json")
    assert tiny.code == 1 and tiny.json()["error"]["code"] == "E100"


# -- bad input ---------------------------------------------------------------------------
@pytest.mark.parametrize("query", ["", "   ", "\t\n", "\x00", "\x1b\x00 "])
def test_empty_query_is_e004(srch: Any, query: str) -> None:
    result = srch(query, "--json")
    assert result.code == 1
    assert result.json()["error"]["code"] == "E004"


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["q", "--bogus"],
        ["q", "--top", "0"],
        ["q", "--top"],
        ["q", "--fts-only", "--vec-only"],
        ["q", "--rrf-k", "-1"],
        ["q", "--max-tokens", "0"],
        ["q", "--threshold", "x"],
    ],
)
def test_usage_errors_are_e100(srch: Any, args: list[str]) -> None:
    result = srch(*args, "--json")
    assert result.code == 1
    assert result.json()["error"]["code"] == "E100"
    assert "Traceback" not in result.err


@pytest.mark.parametrize(
    "args",
    [
        ["--status", "bogus"],
        ["--status", "stable,archivd"],
        ["--type", "nope"],
        ["--threshold", "nan"],
        ["--rrf-k", "inf"],
        ["--top", "10001"],
        ["--top", "99999999999999999999999"],
    ],
)
def test_bad_filter_values_are_e100_not_silently_empty(srch: Any, args: list[str]) -> None:
    # review: an unknown --status/--type matched nothing and exited 0, a NaN threshold
    # or infinite k silently dropped every result, a huge --top crashed SQLite (E200)
    result = srch("deploy", *args, "--json")
    assert result.code == 1
    assert result.json()["error"]["code"] == "E100"
    assert "Traceback" not in result.err
    assert (
        srch(
            "deploy", "--status", "stable,archived,active", "--type", "pdf,observation", "--json"
        ).code
        == 0
    )


ADVERSARIAL = [
    '"',
    '""',
    "'",
    "(",
    ")",
    "*",
    "-",
    "-x",
    "NEAR",
    "a NEAR b",
    "AND",
    "OR NOT",
    "x:y",
    "title:deploy",
    "^",
    "{a}",
    "[b]",
    "NEAR(a b, 2)",
    "deploy*",
    '"un closed',
    "a AND OR b",
    "ü日本語 ✓",
    "a\x00b",
    "\x07bell",
    "\u00a0",
    "🙂" * 50,
    "x" * 5000,
    "deploy " * 400,
    "-deploy +rollback",
    "column:text",
    "%",
    "_",
    "\\",
]


@pytest.mark.parametrize("query", ADVERSARIAL)
def test_adversarial_queries_never_break_fts(corpus: Any, run_cli: Any, query: str) -> None:
    # `--` so that a query starting with "-" is the argument, as a shell user would write it
    result = run_cli("search", "--fts-only", "--kb", str(corpus[0]), "--", query, terminal=False)
    assert result.code == 0, result.err
    validate(result.json())


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.text(min_size=1, max_size=200))
def test_any_text_is_a_valid_query(corpus: Any, text: str) -> None:
    repo, _ = corpus
    kb = KB.open(repo)
    try:
        response = search(kb, SearchRequest(query=text, log=False), warm=_WARM)
    except EmptyQuery:
        printable = "".join(c for c in text if ord(c) >= 0x20 and ord(c) != 0x7F)
        assert not printable.strip(" ")
        return
    validate(response)


_WARM: dict[Any, Any] = {}


# -- kb.search on the registry and transports --------------------------------------------
def test_kb_search_hits_and_envelope(corpus: Any) -> None:
    repo, _ = corpus
    ctx = CallContext(kb_path=str(repo))
    hits = ops.invoke(ctx, "kb.search", {"query": "deploy", "limit": 3, "kinds": ["claims"]})
    assert isinstance(hits, list) and 2 <= len(hits) <= 3
    for hit in hits:
        assert {"kind", "id", "snippet", "score", "backend"} <= set(hit)
        assert hit["kind"] == "claim"
    envelope = ops.invoke(
        ctx,
        "kb.search",
        {"query": "deploy", "limit": 3, "envelope": True, "mode": "fts", "trace": True},
    )
    validate(envelope)
    assert envelope["results"][0]["backend"] == "fts5" and "trace" in envelope
    with pytest.raises(EmptyQuery):
        ops.invoke(ctx, "kb.search", {"query": " "})


def test_every_search_is_logged_and_stats_reads_the_log(tmp_path: Path, run_cli: Any) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q")
    build(repo)
    kb = KB.open(repo)
    assert run_cli("search", "deploy", "--kb", str(repo), terminal=False).code == 0
    assert run_cli("search", "deploy", "--kb", str(repo), "--fts-only", terminal=False).code == 0
    assert run_cli("search", "zzqxv", "--kb", str(repo), "--fts-only", terminal=False).code == 0
    assert run_cli("search", "  ", "--kb", str(repo), terminal=False).code == 1
    ops.invoke(
        CallContext(kb_path=str(repo), transport="jsonl"),
        "kb.search",
        {"query": "zzqxv", "mode": "fts"},
    )
    entries = list(search_log.read(kb.dir))
    assert [e["query"] for e in entries] == ["deploy", "deploy", "zzqxv", "  ", "zzqxv"]
    assert [e["mode"] for e in entries] == ["hybrid", "fts", "fts", "hybrid", "fts"]
    assert entries[3]["error"].startswith("E004") and entries[0]["error"] is None
    assert entries[2]["result_count"] == 0 and entries[0]["result_count"] > 0
    assert entries[4]["transport"] == "jsonl"
    assert all(isinstance(e["duration_ms"], float) and e["at"].endswith("Z") for e in entries)
    assert "searches.log.jsonl" in (kb.dir / ".gitignore").read_text()
    assert git(repo, "status", "--porcelain") == ""  # gitignored: nothing to commit
    stats = run_cli("stats", "--kb", str(repo), "--json").json()
    counts = [e["result_count"] for e in entries[:2]]
    assert stats["top_queries"][0] == {
        "query": "deploy",
        "count": 2,
        "avg_results": sum(counts) / 2,
    }
    assert stats["zero_result_queries"] == [{"query": "zzqxv", "count": 2}]
    human = run_cli("stats", "--kb", str(repo))
    assert "Found nothing" in human.out and "zzqxv" in human.out


def test_nonsense_finds_nothing_and_stats_counts_it(tmp_path: Path, run_cli: Any) -> None:
    """A query with no lexical match that means nothing to the model returns nothing in
    every mode (its vector, made of word pieces, is close to everything), and `stats`
    lists it as a zero-result query."""
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q")
    build(repo)
    for query in ("zzzqqqxxx", "qwxzj vbnmq", "purple elephant quantum banjo"):
        for mode in ([], ["--vec-only"]):
            data = ok(run_cli("search", query, "--kb", str(repo), *mode, terminal=False))
            assert data["results"] == [] and data["total_matches"] == 0, (query, mode)
    stats = run_cli("stats", "--kb", str(repo), "--json").json()
    assert {"query": "zzzqqqxxx", "count": 2} in stats["zero_result_queries"]
    assert ok(
        run_cli("search", "on call rotation", "--kb", str(repo), "--vec-only", terminal=False)
    )["results"]


def test_the_floor_never_drops_a_lexical_match(tmp_path: Path, run_cli: Any) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q")
    build(repo)
    kb = KB.open(repo)

    def ids(query: str, *mode: str) -> dict[int, float]:
        found = ok(
            run_cli("search", query, "--kb", str(repo), "--top", "30", *mode, terminal=False)
        )
        return {r["chunk_id"]: r["score_breakdown"]["fts"] for r in found["results"]}

    keyword, paraphrase = "deploy billing", "who is on call this week"
    lexical = set(ids(keyword, "--fts-only"))
    matched = set(ids(paraphrase, "--fts-only"))
    assert lexical and matched and set(ids(paraphrase)) - matched  # and vector-only hits
    config = kb.dir / "config.yaml"
    config.write_text(
        config.read_text().replace("search:\n", "search:\n  similarity_floor: 0.99\n")
    )
    assert set(ids(keyword)) == lexical  # every word match stays
    assert set(ids(paraphrase)) == matched  # the vector-only ones are gone


# a long question: twelve content words, each its own 5-letter stem, none a stopword
_LONG = "glacier turbine harvest lantern orchard copper violin meadow falcon pepper canyon saddle"


def test_a_best_hit_holding_enough_of_a_long_query_gets_the_full_lexical_share(
    kb: KB,
) -> None:
    """Issue 35: coverage is a share, so a twelve-word question whose best hit holds five
    of its words looked as uncovered as a paraphrase matching one incidental word, and the
    cosine reordered BM25's own candidates. A best hit holding `coverage_words` of the
    query's content words gets `fts_share_full`; one word fewer stays in the middle band
    (its coverage is still above `coverage_cut`); `coverage_words: 0` turns the rule off,
    and a count that is not a whole number is E100."""
    from vouch.search.ranking import DEFAULTS
    from vouch.store import sources

    words = _LONG.split()
    n = DEFAULTS.coverage_words
    assert 2 <= n < len(words) and (n - 1) / len(words) >= DEFAULTS.coverage_cut
    (kb.root / "notes.md").write_text(f"# Field notes\n\nWe saw the {' '.join(words[:n])}.\n")
    sources.register_source_from_path(kb, "t", "notes.md")

    def traced(query: str) -> dict[str, Any]:
        found = search(KB.open(kb.root), SearchRequest(query, log=False, trace=True))
        assert found["results"], query  # the note is the best lexical hit
        return found["trace"]

    held = traced(_LONG)
    assert held["lexical_words_held"] == n and held["lexical_coverage"] < 1.0
    assert held["weights"]["fts"] == DEFAULTS.fts_share_full
    fewer = traced(_LONG.replace(words[n - 1], "thimble"))  # the note holds n - 1 of 12
    assert fewer["lexical_words_held"] == n - 1
    assert fewer["weights"]["fts"] == DEFAULTS.fts_share
    assert DEFAULTS.fts_share < DEFAULTS.fts_share_full

    config = kb.dir / "config.yaml"
    text = config.read_text()
    config.write_text(text.replace("search:\n", "search:\n  coverage_words: 0\n"))
    assert traced(_LONG)["weights"]["fts"] == DEFAULTS.fts_share  # off: the share decides
    config.write_text(text.replace("search:\n", "search:\n  coverage_words: 4.5\n"))
    with pytest.raises(VouchError) as err:
        traced(_LONG)
    assert err.value.code == "E100" and "search.coverage_words" in err.value.message


@pytest.mark.parametrize(
    "good,bad", [("default_top: 10", "default_top: abc"), ("rrf_k: 60", "rrf_k: [1]")]
)
def test_a_bad_number_in_config_is_e100(tmp_path: Path, run_cli: Any, good: str, bad: str) -> None:
    # review: `search.default_top: abc` in config.yaml was an internal error (E200)
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q")
    build(repo)
    cfg = repo / ".vouch" / "config.yaml"
    assert good in cfg.read_text()
    cfg.write_text(cfg.read_text().replace(good, bad))
    result = run_cli("search", "deploy", "--kb", str(repo), terminal=False)
    assert result.code == 1 and result.json()["error"]["code"] == "E100"
    assert f"search.{good.split(':')[0]}" in result.json()["error"]["message"]


def test_a_bad_freshness_setting_is_e100_in_a_warm_process(tmp_path: Path) -> None:
    # review: `search.freshness_seconds: abc` made a warm server's second search E200
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q")
    build(repo)
    cfg = repo / ".vouch" / "config.yaml"
    cfg.write_text(cfg.read_text().replace("rrf_k: 60", "rrf_k: 60\n  freshness_seconds: abc"))
    ctx = CallContext(kb_path=str(repo), transport="jsonl")
    assert ops.invoke(ctx, "kb.search", {"query": "deploy"})
    with pytest.raises(VouchError) as err:
        ops.invoke(ctx, "kb.search", {"query": "deploy"})
    assert err.value.code == "E100" and "search.freshness_seconds" in err.value.message


def test_an_unexpected_failure_is_logged_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # review: only VouchErrors reached the search log; a crash (E200) left no trace
    from vouch.search import engine

    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q")
    build(repo)
    kb = KB.open(repo)

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("fusion exploded")

    monkeypatch.setattr(engine, "_weights", broken)
    with pytest.raises(RuntimeError):
        search(kb, SearchRequest(query="deploy"))
    (entry,) = list(search_log.read(kb.dir))
    assert entry["query"] == "deploy" and entry["result_count"] == 0
    assert entry["error"].startswith("E200: RuntimeError")


def test_stale_cursor_after_the_knowledge_changed(tmp_path: Path, run_cli: Any) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q")
    made = build(repo)
    first = run_cli("search", "deploy", "--kb", str(repo), "--top", "2", terminal=False).json()
    kb = KB.open(repo)
    write_object(
        kb,
        "claim",
        KINDS["claim"].new(text="Deploys need two reviewers now.", evidence=[made["sources"][0]]),
    )
    again = run_cli(
        "search",
        "deploy",
        "--kb",
        str(repo),
        "--top",
        "2",
        "--cursor",
        first["next_cursor"],
        "--json",
        terminal=False,
    )
    assert again.code == 1
    assert again.json()["error"]["code"] == "stale_cursor"
    fresh = run_cli("search", "deploy", "--kb", str(repo), "--top", "2", terminal=False).json()
    assert fresh["corpus_revision"] != first["corpus_revision"]


def test_include_pending(tmp_path: Path, run_cli: Any) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q")
    made = build(repo)
    ctx = CallContext(kb_path=str(repo), agent="agent")
    proposed = ops.invoke(
        ctx,
        "kb.propose_claim",
        {
            "text": "Quarterly invoices are generated by a cron job at midnight.",
            "evidence": [made["sources"][0]],
            "tags": ["billing"],
        },
    )
    query = ["search", "quarterly invoices cron", "--kb", str(repo), "--top", "50"]
    without = run_cli(*query, terminal=False).json()
    assert proposed["claim_id"] not in {r["id"] for r in without["results"]}
    for mode in ([], ["--fts-only"], ["--vec-only"]):
        data = run_cli(*query, "--include-pending", *mode, terminal=False).json()
        validate(data)
        hit = next(r for r in data["results"] if r["id"] == proposed["claim_id"])
        assert hit["pending"] is True and hit["proposal_id"] == proposed["proposal_id"]
        assert hit["chunk_id"] < 0
    human = run_cli(*query, "--include-pending", "--format", "human", terminal=False)
    assert f"(pending {proposed['proposal_id']})" in human.out
    tagged = run_cli(*query, "--include-pending", "--tags", "ops", terminal=False).json()
    assert proposed["claim_id"] not in {r["id"] for r in tagged["results"]}


def test_a_cursor_walk_equals_one_call_with_ties_and_pending(tmp_path: Path, run_cli: Any) -> None:
    """Following next_cursor page by page yields exactly the ids, in the order, of one
    call whose --top covers them all, and total_matches does not depend on --top."""
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q")
    made = build(repo)
    kb = KB.open(repo)
    twin = "Invoice exports run nightly and retry failed invoice uploads twice."
    for source in made["sources"][:3]:  # the same text three times: tied scores
        write_object(kb, "claim", KINDS["claim"].new(text=twin, evidence=[source]))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "ties")
    ctx = CallContext(kb_path=str(repo), agent="agent")
    for n in (1, 2):  # pending, tied with each other
        claim = {"text": f"{twin} ({n})", "evidence": [made["sources"][0]]}
        done = ops.invoke(ctx, "kb.propose_claim", claim)
        assert done["valid"], done
    for mode in ([], ["--fts-only"], ["--vec-only"]):
        query = ["search", "invoice uploads retry", "--kb", str(repo), "--include-pending"]
        whole = ok(run_cli(*query, *mode, "--top", "33", terminal=False))
        assert 4 < whole["total_matches"] <= 33 and whole["next_cursor"] is None
        walked, pages = [], 0
        page = ok(run_cli(*query, *mode, "--top", "2", terminal=False))
        assert page["total_matches"] == whole["total_matches"]
        while True:
            walked += [r["chunk_id"] for r in page["results"]]
            pages += 1
            if not page["next_cursor"]:
                break
            page = ok(
                run_cli(
                    *query, *mode, "--top", "2", "--cursor", page["next_cursor"], terminal=False
                )
            )
        assert walked == [r["chunk_id"] for r in whole["results"]], mode
        assert sum(1 for c in walked if c < 0) == 2 and pages == -(-len(walked) // 2)


def test_a_warm_process_sees_every_write_at_once(tmp_path: Path) -> None:
    """A server keeps the index open and skips the git freshness check while nothing
    changed; a commit (or anything that moves HEAD, the index or the audit log) is seen
    by the very next search, and a hand edit once `search.freshness_seconds` passed."""
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q")
    made = build(repo)
    kb = KB.open(repo)
    warm: dict[Any, Any] = {}

    def ids(query: str) -> set[str]:
        request = SearchRequest(query=query, mode="fts", top=50, log=False)
        return {r["id"] for r in search(kb, request, warm=warm)["results"]}

    assert not ids("zebra")
    claim = KINDS["claim"].new(
        text="A zebra crossing sits outside the office.", evidence=[made["sources"][0]]
    )
    write_object(kb, "claim", claim)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "zebra")
    assert claim["id"] in ids("zebra")  # committed: HEAD moved, seen at once

    other = KINDS["claim"].new(text="A quagga is an extinct zebra.", evidence=[made["sources"][0]])
    write_object(kb, "claim", other)  # uncommitted hand edit: HEAD, index, audit unchanged
    key = next(k for k in warm if k[0] == "search-index")
    warm[key].checked = (warm[key].checked[0] - 60, warm[key].checked[1])  # time passes
    assert other["id"] in ids("quagga")


def test_stale_index_with_auto_refresh_off_is_e002_and_logged(tmp_path: Path, run_cli: Any) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q")
    made = build(repo)
    assert (
        run_cli("search", "deploy", "--kb", str(repo), terminal=False).code == 0
    )  # builds the index
    config = repo / ".vouch" / "config.yaml"
    config.write_text(config.read_text().replace("auto_refresh: true", "auto_refresh: false"))
    kb = KB.open(repo)
    write_object(
        kb,
        "claim",
        KINDS["claim"].new(text="A new fact about deploys.", evidence=[made["sources"][0]]),
    )
    result = run_cli("search", "deploy", "--kb", str(repo), "--json", terminal=False)
    assert result.code == 1
    assert result.json()["error"]["code"] == "E002"
    last = list(search_log.read(kb.dir))[-1]
    assert last["error"].startswith("E002") and last["result_count"] == 0


def test_type_filter_matches_a_relations_type(kb_with_sources, run_cli) -> None:
    from gate_support import BOB, call, proposed

    kb = kb_with_sources
    ids = []
    for name in ("Billing service", "Postgres"):
        res = proposed(kb, "kb.propose_entity", {"name": name, "type": "system"})
        call(kb, "kb.approve", {"proposal_id": res["proposal_id"]}, actor=BOB)
        ids.append(res["entity_id"])
    res = proposed(
        kb, "kb.propose_relation", {"source": ids[0], "relation": "depends_on", "target": ids[1]}
    )
    call(kb, "kb.approve", {"proposal_id": res["proposal_id"]}, actor=BOB)
    out = run_cli(
        "search",
        "billing postgres",
        "--kind",
        "relation",
        "--type",
        "depends_on",
        cwd=kb.root,
        terminal=False,
    )
    assert out.code == 0, out.err
    assert [r["id"] for r in out.json()["results"]] == [res["relation_id"]]


def test_reviewed_knowledge_ranks_above_the_source_it_cites(tmp_path: Path, run_cli: Any) -> None:
    """The prior by kind and status: an approved claim that answers the query ranks above
    the source chunk it cites (both match its words), shown as score_breakdown.prior; a
    source and a pending proposal get none; config.yaml can turn it off."""
    from vouch.store import sources
    from vouch.store.initkb import init_kb

    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q")
    init_kb(repo)
    kb = KB.open(repo)
    doc = repo / "notes.md"
    doc.write_text(
        "# Release notes\n\nTo keep files out of a release tarball, give them the "
        "export-ignore attribute in .gitattributes: git archive output leaves them out. "
        "Archives are made for every tag.\n"
    )
    (source,) = [
        r["id"] for r in sources.register_many(kb, [sources.intake_for_path(kb, doc)], "T")
    ]
    text = "Files with the export-ignore attribute are left out of git archive output."
    claim_id = write_object(kb, "claim", KINDS["claim"].new(text=text, evidence=[source]))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "knowledge")
    ops.invoke(
        CallContext(kb_path=str(repo), agent="agent"),
        "kb.propose_claim",
        {"text": "Git archive leaves out export-ignore files, always.", "evidence": [source]},
    )
    query = ["search", "export-ignore git archive output", "--kb", str(repo), "--include-pending"]
    results = ok(run_cli(*query, terminal=False))["results"]
    ranks = {r["kind"] + (":pending" if r.get("pending") else ""): n for n, r in enumerate(results)}
    assert ranks["claim"] < ranks["source"]
    by_kind = {r["kind"] + (":pending" if r.get("pending") else ""): r for r in results}
    assert by_kind["claim"]["id"] == claim_id and by_kind["claim"]["score_breakdown"]["prior"] > 0
    assert by_kind["source"]["score_breakdown"]["prior"] == 0
    assert by_kind["claim:pending"]["score_breakdown"]["prior"] == 0
    config = kb.dir / "config.yaml"
    config.write_text(config.read_text().replace("search:\n", "search:\n  prior:\n    claim: 0\n"))
    off = ok(run_cli(*query, terminal=False))["results"]
    assert all(r["score_breakdown"]["prior"] == 0 for r in off)
    doctor = run_cli("doctor", "--kb", str(repo), "--json").json()
    assert not [i for i in doctor["issues"] if i.get("kind") == "config-unknown"]
