"""Score fusion (issue 14): convex combination of normalised scores, and the held-out
evaluation corpus's own promises (paraphrases share no word, the split is by document)."""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from vouch.index.turnmap import TurnLinks
from vouch.search.ranked import Part, Ranked, convex
from vouch.search.ranking import DEFAULTS, fusion_weights, in_context, ordered

ROOT = Path(__file__).resolve().parents[1]
EVAL = ROOT / "examples" / "eval"


A, B, C, D = 11, 12, 13, 14


def test_convex_min_max_weights_and_breakdown() -> None:
    ranked = convex(
        {"fts": [(A, 10.0), (B, 6.0), (C, 2.0)], "vector": [(C, 0.9), (D, 0.5)]},
        weights={"fts": 0.6, "vector": 0.4},
    )
    fused = ranked.fused()
    by = {f.key: f for f in fused}
    assert by[A].breakdown == {"fts": 0.6, "vector": 0.0}  # best BM25, not found by vectors
    assert by[C].breakdown == {"fts": 0.0, "vector": 0.4}  # BM25's floor, best cosine
    assert by[B].score == pytest.approx(0.6 * 0.5)
    assert by[C].ranks == {"fts": 3, "vector": 1}
    assert [f.key for f in fused] == [A, C, B, D]  # A ties C: A's best rank comes first
    assert len(ranked) == 4 and [f.key for f in ranked.fused(1, 3)] == [C, B]


def test_convex_channel_not_run_is_none_and_ties_are_deterministic() -> None:
    fused = convex({"fts": [(8, 1.0), (7, 1.0)], "vector": None}).fused()
    assert [f.key for f in fused] == [8, 7]
    assert all(f.breakdown["vector"] is None for f in fused)
    assert [f.score for f in fused] == [1.0, 1.0]  # equal scores map to 1.0


def test_convex_a_repeated_key_keeps_its_first_place() -> None:
    fused = convex({"fts": [(1, 3.0), (2, 2.0), (1, 9.0), (3, 1.0)]}).fused()
    assert [(f.key, f.ranks["fts"], f.score) for f in fused] == [
        (1, 1, 1.0),
        (2, 2, 0.5),
        (3, 4, 0.0),
    ]


def test_convex_zscore_is_shifted_to_the_channel_floor() -> None:
    fused = {
        f.key: f
        for f in convex(
            {"fts": [(A, 3.0), (B, 1.0)], "vector": [(B, 0.8)]},
            weights={"fts": 1.0, "vector": 1.0},
            norm="zscore",
        ).fused()
    }
    assert fused[A].breakdown["fts"] == pytest.approx(2.0)  # (3 - 1) / sd 1
    assert fused[B].breakdown["fts"] == 0.0  # the lowest candidate is the floor
    assert fused[A].breakdown["vector"] == 0.0  # a miss
    assert fused[B].breakdown["vector"] == 1.0  # the only candidate: as good as any
    with pytest.raises(ValueError):
        convex({"fts": [(A, 1.0)]}, norm="nope")


def test_ordered_keeps_the_channel_order() -> None:
    # all-words hits first (6, 4), then any-word hits whose BM25 may be larger (5)
    assert ordered([(1, 6.0), (2, 4.0), (3, 5.0), (-1, None), (4, 1.0)]) == [
        (1, 6.0),
        (2, 4.0),
        (3, 4.0),
        (-1, 4.0),
        (4, 1.0),
    ]
    assert ordered([(-1, None), (2, 3.0)]) == [(-1, 3.0), (2, 3.0)]


def test_fusion_weights_follow_lexical_coverage() -> None:
    covered = fusion_weights(DEFAULTS, 1.0)
    paraphrase = fusion_weights(DEFAULTS, 0.0)
    assert covered["fts"] + covered["vector"] == pytest.approx(1.0)
    assert paraphrase["vector"] >= covered["vector"]
    tuning = DEFAULTS._replace(turn_fts_share=0.9, turn_coverage_cut=0.2, fts_share_uncovered=0.1)
    assert fusion_weights(tuning, 0.25, turns=True) == {"fts": 0.9, "vector": pytest.approx(0.1)}
    assert fusion_weights(tuning, 0.25) == {"fts": 0.1, "vector": 0.9}
    # issue 35: enough content words held count as covered, for documents and turns
    n = DEFAULTS.coverage_words
    assert fusion_weights(DEFAULTS, 0.5, held=n)["fts"] == DEFAULTS.fts_share_full
    assert fusion_weights(DEFAULTS, 0.5, held=n - 1)["fts"] == DEFAULTS.fts_share
    assert fusion_weights(DEFAULTS, 0.5, turns=True, held=n)["fts"] == DEFAULTS.turn_fts_share_full
    off = DEFAULTS._replace(coverage_words=0)
    assert fusion_weights(off, 0.5, held=99)["fts"] == DEFAULTS.fts_share


def test_convex_weighs_the_keys_set_apart_with_their_own_weights() -> None:
    channels = {"fts": [(A, 10.0), (B, 6.0), (C, 2.0)], "vector": [(C, 0.9), (B, 0.7), (D, 0.5)]}
    plain = {f.key: f for f in convex(channels, weights={"fts": 0.5, "vector": 0.5}).fused()}
    apart = convex(
        channels, weights={"fts": 0.5, "vector": 0.5}, apart=([B, D], {"fts": 1.0, "vector": 0.0})
    ).fused()
    by = {f.key: f for f in apart}
    assert by[B].breakdown == {"fts": 2 * plain[B].breakdown["fts"], "vector": 0.0}
    assert by[D].breakdown == {"fts": 0.0, "vector": 0.0}
    assert by[A].breakdown == plain[A].breakdown and by[C].breakdown == plain[C].breakdown
    scores = [f.score for f in apart]
    assert scores == sorted(scores, reverse=True)  # re-sorted by the new scores


def _ranked(*scores: tuple[int, float]) -> Ranked:
    """Candidates as the lexical channel alone would rank them, with these scores."""
    ranked = convex({"fts": [(k, 1.0) for k, _ in scores], "vector": []})
    score = np.array([s for _, s in scores])
    return Ranked(
        ranked.keys, score, {"fts": Part(score), "vector": Part(0.0 * score)}, ranked.ranks
    )


def test_turns_rise_with_their_exchange_and_the_named_speaker() -> None:
    """A reply (turn 2) no channel ranked high rises with the question beside it (turn 1);
    a turn no channel found (3) joins with its neighbour's share alone; a turn of
    another session (9) is untouched. The one speaker the query names gains the bonus;
    naming both gains nobody anything. Without turn links nothing changes."""
    ranked = _ranked((1, 1.0), (9, 0.5), (2, 0.2))
    links = TurnLinks.of(
        {1: [2], 2: [1, 3], 9: []}, {1: "Ann Lee", 2: "Bob", 3: "Ann Lee", 9: "Bob"}
    )
    out = in_context(ranked, links, "what did ann lee adopt", 0.5, 0.0).fused()
    score = {f.key: f.score for f in out}
    assert score == {1: 1.1, 2: 0.7, 9: 0.5, 3: 0.1}
    assert [f.key for f in out] == [1, 2, 9, 3]
    new = next(f for f in out if f.key == 3)
    assert new.breakdown == {"fts": 0.0, "vector": 0.0, "context": 0.1, "speaker": 0.0}
    assert new.ranks == {}
    assert "context" not in out[2].breakdown  # 9: nothing changed
    named = {
        f.key: f.breakdown.get("speaker")
        for f in in_context(ranked, links, "did Ann Lee call", 0.5, 0.2).fused()
    }
    assert named[1] == named[3] == 0.2 and named[2] == 0.0 and named[9] is None
    both = in_context(ranked, links, "did ann lee or bob call", 0.5, 0.2).fused()
    assert all(not f.breakdown.get("speaker") for f in both)
    assert in_context(ranked, TurnLinks.of({}, {}), "anything", 0.5, 0.2) is ranked


def test_eval_corpus_paraphrases_share_no_word_and_split_by_document() -> None:
    from search_support import build_golden

    content_words = build_golden().content_words  # the check build_eval_corpus.py applies
    with gzip.open(EVAL / "corpus.jsonl.gz", "rt", encoding="utf-8") as fh:
        docs = [json.loads(line) for line in fh]
    assert len(docs) >= 5000
    assert all(d["license"] for d in docs)
    by_hash = {
        hashlib.sha256(f"# {d['title']}\n\n{d['text']}\n".encode()).hexdigest(): d for d in docs
    }
    queries = [json.loads(line) for line in (EVAL / "queries.jsonl").read_text().splitlines()]
    groups = {q["group"] for q in queries}
    assert {"synopsis", "paraphrase-synopsis", "gloss", "paraphrase-gloss"} <= groups
    for q in queries:
        doc = by_hash[q["relevant"][0]]
        assert q["half"] == doc["half"]
        if q["group"].startswith("paraphrase"):
            shared = content_words(q["query"]) & content_words(f"{doc['title']} {doc['text']}")  # type: ignore[operator]
            assert not shared, (q["query"], shared)
    assert {q["half"] for q in queries} == {"tune", "heldout"}
