"""Score fusion (issue 14): convex combination of normalised scores, and the held-out
evaluation corpus's own promises (paraphrases share no word, the split is by document)."""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path

import pytest

from vouch.search.fusion import Fused, convex, ordered
from vouch.search.ranking import DEFAULTS, fusion_weights, in_context

ROOT = Path(__file__).resolve().parents[1]
EVAL = ROOT / "examples" / "eval"


def test_convex_min_max_weights_and_breakdown() -> None:
    fused = convex(
        {"fts": [("a", 10.0), ("b", 6.0), ("c", 2.0)], "vector": [("c", 0.9), ("d", 0.5)]},
        weights={"fts": 0.6, "vector": 0.4},
    )
    by = {f.key: f for f in fused}
    assert by["a"].breakdown == {"fts": 0.6, "vector": 0.0}  # best BM25, not found by vectors
    assert by["c"].breakdown == {"fts": 0.0, "vector": 0.4}  # BM25's floor, best cosine
    assert by["b"].score == pytest.approx(0.6 * 0.5)
    assert by["c"].ranks == {"fts": 3, "vector": 1}
    assert [f.key for f in fused] == ["a", "c", "b", "d"]  # a ties c: a's best rank comes first


def test_convex_channel_not_run_is_none_and_ties_are_deterministic() -> None:
    fused = convex({"fts": [("x", 1.0), ("y", 1.0)], "vector": None})
    assert [f.key for f in fused] == ["x", "y"]
    assert all(f.breakdown["vector"] is None for f in fused)
    assert [f.score for f in fused] == [1.0, 1.0]  # equal scores map to 1.0


def test_convex_zscore_is_shifted_to_the_channel_floor() -> None:
    fused = {
        f.key: f
        for f in convex(
            {"fts": [("a", 3.0), ("b", 1.0)], "vector": [("b", 0.8)]},
            weights={"fts": 1.0, "vector": 1.0},
            norm="zscore",
        )
    }
    assert fused["a"].breakdown["fts"] == pytest.approx(2.0)  # (3 - 1) / sd 1
    assert fused["b"].breakdown["fts"] == 0.0  # the lowest candidate is the floor
    assert fused["a"].breakdown["vector"] == 0.0  # a miss
    assert fused["b"].breakdown["vector"] == 1.0  # the only candidate: as good as any
    with pytest.raises(ValueError):
        convex({"fts": [("a", 1.0)]}, norm="nope")


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


def _fused(*scores: tuple[int, float]) -> list[Fused]:
    return [
        Fused(k, s, {"fts": s, "vector": 0.0}, {"fts": r}) for r, (k, s) in enumerate(scores, 1)
    ]


def test_turns_rise_with_their_exchange_and_the_named_speaker() -> None:
    """A reply (turn 2) no channel ranked high rises with the question beside it (turn 1);
    a turn no channel found (3) joins with its neighbour's share alone; a turn of
    another session (9) is untouched. The one speaker the query names gains the bonus;
    naming both gains nobody anything. Without turn links nothing changes."""
    fused = _fused((1, 1.0), (9, 0.5), (2, 0.2))
    links = {1: [2], 2: [1, 3], 9: []}
    speakers = {1: "Ann Lee", 2: "Bob", 3: "Ann Lee", 9: "Bob"}
    out = in_context(fused, links, speakers, "what did ann lee adopt", 0.5, 0.0)
    score = {f.key: f.score for f in out}
    assert score == {1: 1.1, 2: 0.7, 9: 0.5, 3: 0.1}
    assert [f.key for f in out] == [1, 2, 9, 3]
    new = next(f for f in out if f.key == 3)
    assert new.breakdown == {"fts": 0.0, "vector": 0.0, "context": 0.1, "speaker": 0.0}
    assert new.ranks == {}
    named = {
        f.key: f.breakdown.get("speaker")
        for f in in_context(fused, links, speakers, "did Ann Lee call", 0.5, 0.2)
    }
    assert named[1] == named[3] == 0.2 and named[2] == 0.0 and named[9] is None
    both = in_context(fused, links, speakers, "did ann lee or bob call", 0.5, 0.2)
    assert all(not f.breakdown.get("speaker") for f in both)
    assert in_context(fused, {}, {}, "anything", 0.5, 0.2) is fused


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
