"""The knobs of the default hybrid ranking (`Tuning`), read from config.yaml
(`search.<name>`) when a search is parsed; the stages that rank (`vouch.search.ranking`)
use them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from vouch.errors import UsageError

if TYPE_CHECKING:
    from vouch.core.config import Config


class Tuning(NamedTuple):
    """Knobs of the default hybrid ranking; `search.<name>` in config.yaml overrides each.

    The default is a convex combination of normalised scores (fusion.convex): BM25 and
    cosine each z-scored over their own candidates (BM25 first made non-increasing in the
    lexical channel's all-words-first order), weighted `fts_share` and `1 - fts_share`.
    The share follows how much of the query's content words the best lexical hits hold
    (weighting.coverage): all of them, or at least `coverage_words` of them (a long
    question whose best hit holds most of its topic, issue 35) → `fts_share_full`; at
    least `coverage_cut` → `fts_share`; less (a paraphrase, where BM25 only matches
    incidental words) → `fts_share_uncovered`. Chosen with `bench/tune_search.py --grid`
    on the tuning halves of examples/eval and the kb set, as shipped (floor and prior
    included), with the bundled model (bench/RESULTS.md, issue 14): rank fusion (RRF)
    ranked below BM25 alone there at 7.6k documents.

    Transcript turns are fused by the same rule with their own shares (`turn_*`, the
    previous default), chosen on LoCoMo's conversations 1-5 (bench/bench_locomo.py): with
    the documents' shares turns lose 1.9 points of R@10 there (75.4 against 77.3). The
    query's coverage does not tell the two apart (LoCoMo's questions and the evaluation's
    paraphrases of synopses cover alike); the kind of chunk does.
    """

    fts_share_full: float = 0.8
    fts_share: float = 0.4
    fts_share_uncovered: float = 0.3
    coverage_cut: float = 0.3
    # a best lexical hit holding this many of the query's content words covers it (0: only
    # all of them do), for documents and transcript turns alike; chosen with `--grid
    # words` on the tuning halves of the sets above and of CISI and Cranfield (2, 3, ...
    # 8; bench/RESULTS.md, issue 35): without it the cosine reordered BM25's own
    # candidates for Cranfield's 10-word questions, below fts-only. LoCoMo's turns moved
    # by at most 0.4 points of R@k with it (bench/bench_locomo.py, before and after)
    coverage_words: int = 5
    # a vector candidate below this cosine is dropped (hybrid and vec-only); a floor
    # did not help on the golden set, so it is off by default
    min_similarity: float = 0.0
    # transcript turns (issue 19): a turn's fused score gains this share of its
    # neighbouring turns' (`in_context`), and a turn by the one speaker the query names
    # gains `speaker_bonus`; chosen on LoCoMo conversations 1-5 (bench/bench_locomo.py,
    # R@10 74.5 without either; turn_context 0.3/0.5/0.7/1.0: 75.7/76.7/76.5/76.1; then
    # speaker_bonus 0.05/0.1/0.2/0.3: 76.8/77.0/77.1/77.1 — the smaller of the tied two)
    turn_context: float = 0.5
    speaker_bonus: float = 0.6
    # a turn's score moves toward the best among the found turns of its own session,
    # (score + share × best) / (1 + share), after the context and speaker parts: the
    # turns of the session a question is about rise together (`by_session`). With
    # `speaker_bonus` (0.2 before) and `tag_idf`, chosen on LoCoMo conversations 1-5 in
    # one knowledge base (bench/locomo_levers.py, R@10: session 0.1/0.2/0.3/0.5
    # 77.8/78.4/78.1/78.0; speaker_bonus 0/0.3/0.4/0.6/0.8 with tag_idf
    # 76.5/77.1/77.2/77.5/77.4; bench/RESULTS.md, issue 35)
    session_share: float = 0.2
    turn_fts_share_full: float = 0.8
    turn_fts_share: float = 0.6
    turn_fts_share_uncovered: float = 0.4
    turn_coverage_cut: float = 0.3
    # 1: a search narrowed by tags counts BM25's N and n(p) among the rows it searches
    # (`lexical.collection`: a tag is a collection, a word common inside it says little
    # there); 0: the whole index's counts
    tag_idf: int = 1

    @classmethod
    def from_config(cls, config: Config) -> Tuning:
        values: dict[str, Any] = {}
        for name in cls._fields:
            raw = config.get(f"search.{name}", getattr(DEFAULTS, name))
            try:
                value = float(raw)
            except (TypeError, ValueError) as exc:
                raise UsageError(f"search.{name} in config.yaml must be a number") from exc
            if isinstance(getattr(DEFAULTS, name), int):
                if not value.is_integer() or value < 0:
                    raise UsageError(f"search.{name} in config.yaml must be a whole number ≥ 0")
                value = int(value)
            values[name] = value
        return cls(**values)


DEFAULTS = Tuning()
